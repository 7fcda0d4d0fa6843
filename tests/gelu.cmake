# GELU stored by the own GEMM's epilogue beside u (gemm_bias_gelu, kernels_cl/gemm.cl) and
# bias_act_backward's sixteen-column CPU shape (fused.cl) under Oclgrind: no access out of bounds
# (the op suite's small cases include edge tiles and a 64-column case).
if(CLG_OCLGRIND)
  foreach(op gemm_bias_gelu bias_act_backward)
    add_test(NAME test_ops_oclgrind_cpu_${op}
      COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op ${op})
    set_tests_properties(test_ops_oclgrind_cpu_${op} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
      ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=cpu;CLGRAD_GEMM=own;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  endforeach()
endif()
