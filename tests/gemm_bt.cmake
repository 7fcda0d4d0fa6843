# A @ B^T on the own CPU GEMM both ways (backend/opencl/cl_gemm.c, clg_cl_gemm_op_for_bt): from 256
# rows of C B^T is packed and gemm_op (gemm_op_bias_act for the linear layer) runs, below that
# gemm_dot (gemm_dot_bias_act); the default run of the op suite sees each at its own sizes, these
# force each on every case: gemm_op on PoCL and under Oclgrind (small cases), gemm_dot on PoCL.
foreach(way op dot)
  add_test(NAME test_ops_gemm_bt_${way} COMMAND test_ops --op gemm,gemm_bias_act)
  set_tests_properties(test_ops_gemm_bt_${way} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT
    "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=cpu;CLGRAD_GEMM=own;CLGRAD_GEMM_BT=${way};CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endforeach()
if(CLG_OCLGRIND)
  add_test(NAME test_ops_oclgrind_gemm_bt_op
    COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op gemm,gemm_bias_act)
  set_tests_properties(test_ops_oclgrind_gemm_bt_op PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=cpu;CLGRAD_GEMM=own;CLGRAD_GEMM_BT=op;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endif()
