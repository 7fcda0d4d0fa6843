# Mixed precision: clg_cast, autocast gradients against float32, train --precision mixed against
# fp32 and a mixed checkpoint resumed in fp32, on the reference and every device (tests/test_mixed.c);
# the same from the command line on Fashion-MNIST (tests/test_train_mixed.sh).
clg_test(test_mixed)
add_test(NAME test_train_mixed COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_train_mixed.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_train_mixed PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
# the 16-bit GEMM both ways (backend/opencl/cl_gemm.c, half_staged): gemm_half.cl's kernels, and
# widened to float32 for the float32 kernels
foreach(mode kernel staged)
  add_test(NAME test_ops_gemm_half_${mode} COMMAND test_ops --op gemm)
  set_tests_properties(test_ops_gemm_half_${mode} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_GEMM_HALF=${mode};CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endforeach()
