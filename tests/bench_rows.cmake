# `clgrad bench ops --rows`: the row kernels against a copy of the same bytes (tests/test_bench_rows.sh)
add_test(NAME test_bench_rows COMMAND ${CMAKE_SOURCE_DIR}/tests/test_bench_rows.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_bench_rows PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
