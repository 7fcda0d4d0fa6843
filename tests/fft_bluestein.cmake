# Bluestein's chirp-z path (backend/opencl/cl_ops_fft.c): the op suite's FFT cases with every
# transform forced onto it (CLGRAD_FFT=bluestein), lengths clFFT does included; the default path
# already takes it for the long prime lengths (67, 257, 1031, 4099) of tests/ops_cases_fft.c.
clg_env_test(test_ops_fft_bluestein 600 "${CLG_TEST_ENV}"
  test_ops --op fft_c2c,fft_r2c,fft_c2r --with FFT=bluestein)
# on Oclgrind (small shapes): the chirp kernels' memory accesses checked
if(CLG_OCLGRIND)
 clg_env_test(test_ops_oclgrind_fft_bluestein 900 "${CLG_TEST_ENV}"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small
    --op fft_c2c,fft_r2c,fft_c2r --with FFT=bluestein)
endif()
# The suite must be able to fail: a chirp one sample off (w_(n-2) where w_(n-1) belongs) in
# Bluestein's kernel is caught at the default path's long prime lengths.
set(CLG_FFT_MUTANT_DIR ${CMAKE_BINARY_DIR}/mutant_fft_kernels)
file(COPY ${CLG_REAL_KERNELS} DESTINATION ${CLG_FFT_MUTANT_DIR})
file(READ ${CMAKE_SOURCE_DIR}/kernels_cl/fft.cl CLG_FFT_SRC)
string(REPLACE "	t = j < n ? j : m - j;\n" "	t = j < n ? j : m - j;\n	if (t == n - 1)\n		t = n - 2;\n"
  CLG_FFT_MUTANT "${CLG_FFT_SRC}")
if(CLG_FFT_MUTANT STREQUAL CLG_FFT_SRC)
  message(FATAL_ERROR "fft mutation test: the chirp line was not found in fft.cl")
endif()
file(WRITE ${CLG_FFT_MUTANT_DIR}/fft.cl "${CLG_FFT_MUTANT}")
add_test(NAME test_ops_fft_catches_wrong_bluestein COMMAND test_ops --op fft_r2c)
set_tests_properties(test_ops_fft_catches_wrong_bluestein PROPERTIES
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_DIR=${CLG_FFT_MUTANT_DIR};CLGRAD_CACHE_DIR=0"
  PASS_REGULAR_EXPRESSION "fft_r2c \\[[^\n]*normalized error"
  SKIP_REGULAR_EXPRESSION "no OpenCL device present" TIMEOUT 900)
