# GELU's CPU-shaped kernels in fused.cl under Oclgrind (no access out of bounds): bias_act_backward's
# sixteen columns a work-item (bias_act_backward_v16; the op suite's small cases include a 64-column
# one, which takes that shape on up to two compute units) and gelu's sixteen elements a work-item
# with the tail one by one (gelu_v16).
if(CLG_OCLGRIND)
  foreach(op bias_act_backward gelu)
    add_test(NAME test_ops_oclgrind_cpu_${op}
      COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op ${op})
    set_tests_properties(test_ops_oclgrind_cpu_${op} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
      ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=cpu;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  endforeach()
endif()
