# A @ B^T on the own CPU GEMM both ways (backend/opencl/cl_gemm.c, clg_cl_gemm_op_for_bt): from 256
# rows of C B^T is packed and gemm_op (gemm_op_bias_act for the linear layer) runs, below that
# gemm_dot (gemm_dot_bias_act); the default run of the op suite sees each at its own sizes, these
# force each on every case: gemm_op on PoCL and under Oclgrind (small cases), gemm_dot on PoCL.
# The third run gives gemm_op work-groups of 8 along q (CLGRAD_GEMM_WG, what `clgrad tune` picks on
# Mesa's llvmpipe): the range rounded up to whole groups, the work-items past Q idle.
clg_env_test(test_ops_gemm_bt 600 "${CLG_TEST_ENV}" test_ops --op gemm,gemm_bias_act
  --with "KERNEL_SHAPE=cpu GEMM=own GEMM_BT=op" --with "KERNEL_SHAPE=cpu GEMM=own GEMM_BT=dot"
  --with "KERNEL_SHAPE=cpu GEMM=own GEMM_BT=op GEMM_WG=8")
if(CLG_OCLGRIND)
  clg_env_test(test_ops_oclgrind_gemm_bt_op 900 "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=cpu;CLGRAD_GEMM=own;CLGRAD_GEMM_BT=op;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op gemm,gemm_bias_act)
endif()
