# FFT ops (backend/opencl/cl_ops_fft.c): numpy's values, round trips, the clFFT / own-kernel path
# decisions, plan caching and errors on every device (tests/test_fft.c); the op suite's FFT cases
# with every transform forced onto the own kernels (CLGRAD_FFT=own), and the complex ones onto
# clFFT's planar layout (CLGRAD_FFT=planar).
clg_test(test_fft)
target_include_directories(test_fft PRIVATE ${CMAKE_SOURCE_DIR}/backend/opencl)
clg_env_test(test_ops_fft_own 600 "${CLG_TEST_ENV}" test_ops --op fft_c2c,fft_r2c,fft_c2r --with FFT=own)
# complex-to-complex on clFFT's planar layout (the fallback where its interleaved kernels fail)
clg_env_test(test_ops_fft_c2c_planar 600 "CLGRAD_SELFTEST=0;CLGRAD_FFT=planar;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  test_ops --op fft_c2c)
