# ONE_HOT (class-index targets of the losses, the max/min backward; kernels_cl/index.cl) in both
# shapes of family "row" on every device: the default (CPU devices: a work-item per row) is in
# test_ops; here the other, a work-item per element, and both under Oclgrind (small cases: races,
# out-of-bounds and uninitialised reads).
set(CLG_LOSS_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
clg_env_test(test_ops_one_hot_gpu_shape 300 "${CLG_LOSS_ENV};CLGRAD_KERNEL_SHAPE=row=gpu"
  test_ops --op one_hot)
if(CLG_OCLGRIND)
 clg_env_test(test_ops_oclgrind_one_hot 600 "${CLG_LOSS_ENV}"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op one_hot
    --with KERNEL_SHAPE=row=cpu --with KERNEL_SHAPE=row=gpu)
endif()
