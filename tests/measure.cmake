# test_measure: the measurements behind `clgrad compare` (backend/clg_measure.h) and the sections
# capabilities, peaks, compile and roofline (compare/compare_{caps,peaks,compile,roofline}.c), linked
# in from the comparison library (compare/), on the reference backend and every OpenCL device.
add_executable(test_measure ${CMAKE_SOURCE_DIR}/tests/test_measure.c)
target_compile_definitions(test_measure PRIVATE "CLG_TEST_KERNEL_SRC_DIR=\"${CMAKE_SOURCE_DIR}/kernels_cl\"")
target_link_libraries(test_measure PRIVATE clg_testutil clgrad_compare m)
clg_env_test(test_measure 600 "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  test_measure)
