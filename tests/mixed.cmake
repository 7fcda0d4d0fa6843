# Mixed precision: clg_cast, autocast gradients against float32, train --precision mixed against
# fp32 and a mixed checkpoint resumed in fp32, on the reference and every device (tests/test_mixed.c);
# the same from the command line on Fashion-MNIST (tests/test_train_mixed.sh).
clg_test(test_mixed)
clg_env_test(test_train_mixed 900 "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_train_mixed.sh $<TARGET_FILE:clgrad_cli>)
# the 16-bit GEMM both ways (backend/opencl/cl_gemm.c, half_staged): gemm_half.cl's kernels, and
# widened to float32 for the float32 kernels
clg_env_test(test_ops_gemm_half 600 "${CLG_TEST_ENV}"
  test_ops --op gemm --with GEMM_HALF=kernel --with GEMM_HALF=staged)
# gemm_half.cl's kernels under Oclgrind (memory errors, races), whatever the default path
if(CLG_OCLGRIND)
  clg_env_test(test_ops_oclgrind_gemm_half_kernel 900 "CLGRAD_SELFTEST=0;CLGRAD_GEMM_HALF=kernel;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op gemm)
endif()
