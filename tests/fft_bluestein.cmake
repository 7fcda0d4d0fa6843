# Bluestein's chirp-z path (backend/opencl/cl_ops_fft.c): the op suite's FFT cases with every
# transform forced onto it (CLGRAD_FFT=bluestein), lengths clFFT does included; the default path
# already takes it for the long prime lengths (67, 257, 1031, 4099) of tests/ops_cases_fft.c.
foreach(op fft_c2c fft_r2c fft_c2r)
  add_test(NAME test_ops_${op}_bluestein COMMAND test_ops --op ${op})
  set_tests_properties(test_ops_${op}_bluestein PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_FFT=bluestein;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endforeach()
