# gemm_bias_act (the linear layer's forward in one op): the own CPU GEMM's fused store
# (gemm_dot_bias_act) under Oclgrind (out-of-bounds and uninitialised reads), small cases; the
# op-suite cases on every device run in test_ops itself.
if(CLG_OCLGRIND)
  clg_env_test(test_ops_oclgrind_gemm_bias_act 900 "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=cpu;CLGRAD_GEMM=own;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op gemm_bias_act)
endif()
