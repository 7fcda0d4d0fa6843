# conv2d -> relu -> max_pool2d as one node (clg_conv2d_relu_max_pool2d, issue 12's CNN): its
# gradient checks under both kernel shapes on every device, and under Oclgrind (small shapes);
# the 2x2 pooling kernels on channel-major planes (the conv's GEMM layout) are in the op suite's
# max_pool2d cases (tests/ops_cases_conv.c, "channel-major"), run here under Oclgrind too.
set(CLG_CNNFAST_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
set(CLG_CNNFAST_CASES conv_relu_pool conv_relu_pool_odd conv_relu_pool_overlap)
# each in one process over both shapes (--with, tests/test_ops.c)
list(JOIN CLG_CNNFAST_CASES "," CLG_CNNFAST_LIST)
clg_env_test(test_cnnfast_grad 600 "${CLG_TEST_ENV}"
  test_grad --case ${CLG_CNNFAST_LIST} --with KERNEL_SHAPE=cpu --with KERNEL_SHAPE=gpu)
if(CLG_OCLGRIND)
 clg_env_test(test_cnnfast_oclgrind_grad 600 "${CLG_CNNFAST_ENV}"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_grad> --case ${CLG_CNNFAST_LIST}
    --with KERNEL_SHAPE=cpu --with KERNEL_SHAPE=gpu)
 clg_env_test(test_cnnfast_oclgrind_pool 600 "${CLG_CNNFAST_ENV}"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op max_pool2d,max_pool2d_backward
    --with KERNEL_SHAPE=cpu --with KERNEL_SHAPE=gpu)
endif()
