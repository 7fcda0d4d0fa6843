# test_measure: the measurements behind `clgrad compare` (backend/clg_measure.h) and the sections
# capabilities, peaks, compile and roofline (cli/compare_{caps,peaks,compile,roofline}.c), linked
# in with the CLI's JSON writer and reader, on the reference backend and every OpenCL device.
add_executable(test_measure ${CMAKE_SOURCE_DIR}/tests/test_measure.c
  ${CMAKE_SOURCE_DIR}/cli/compare_caps.c ${CMAKE_SOURCE_DIR}/cli/compare_peaks.c
  ${CMAKE_SOURCE_DIR}/cli/compare_compile.c ${CMAKE_SOURCE_DIR}/cli/compare_roofline.c
  ${CMAKE_SOURCE_DIR}/cli/json_write.c ${CMAKE_SOURCE_DIR}/cli/json_read.c)
target_include_directories(test_measure PRIVATE ${CMAKE_SOURCE_DIR}/cli)
target_compile_definitions(test_measure PRIVATE "CLG_TEST_KERNEL_SRC_DIR=\"${CMAKE_SOURCE_DIR}/kernels_cl\"")
target_include_directories(test_measure PRIVATE ${CJSON_INCLUDE})
target_link_libraries(test_measure PRIVATE clg_testutil m ${CJSON_LIB})
add_test(NAME test_measure COMMAND test_measure)
set_tests_properties(test_measure PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
