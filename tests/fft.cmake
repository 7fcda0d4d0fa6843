# FFT ops (backend/opencl/cl_ops_fft.c): numpy's values, round trips, the clFFT / own-kernel path
# decisions, plan caching and errors on every device (tests/test_fft.c); the op suite's FFT cases
# and gradient checks with every transform forced onto the own kernels (CLGRAD_FFT=own).
clg_test(test_fft)
target_include_directories(test_fft PRIVATE ${CMAKE_SOURCE_DIR}/backend/opencl)
foreach(op fft_c2c fft_r2c fft_c2r)
  add_test(NAME test_ops_${op}_own COMMAND test_ops --op ${op})
  set_tests_properties(test_ops_${op}_own PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_FFT=own;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endforeach()
