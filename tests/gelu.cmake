# bias_act_backward's sixteen-column CPU shape (fused.cl, bias_act_backward_v16: GELU's derivative
# sixteen lanes at a time) under Oclgrind: no access out of bounds (the op suite's small cases
# include a 64-column one, which takes that shape on up to two compute units).
if(CLG_OCLGRIND)
  add_test(NAME test_ops_oclgrind_cpu_bias_act_backward
    COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op bias_act_backward)
  set_tests_properties(test_ops_oclgrind_cpu_bias_act_backward PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=cpu;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endif()
