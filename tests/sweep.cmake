# clgrad sweep: a grid of runs, a crashed and a hung run recorded, resume, bad options.
add_test(NAME test_sweep COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_sweep.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_sweep PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
