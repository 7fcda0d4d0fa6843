# test_measure: the measurements behind `clgrad compare` (backend/clg_measure.h) and the sections
# capabilities, peaks, compile and roofline (compare/compare_{caps,peaks,compile,roofline}.c), linked
# in from the comparison library (compare/), on the reference backend and every OpenCL device.
add_executable(test_measure ${CMAKE_SOURCE_DIR}/tests/test_measure.c)
target_compile_definitions(test_measure PRIVATE "CLG_TEST_KERNEL_SRC_DIR=\"${CMAKE_SOURCE_DIR}/kernels_cl\"")
target_link_libraries(test_measure PRIVATE clg_testutil clgrad_compare m)
add_test(NAME test_measure COMMAND test_measure)
set_tests_properties(test_measure PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
