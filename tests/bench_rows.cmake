# `clgrad bench ops --rows`: the row kernels against a copy of the same bytes (tests/test_bench_rows.sh)
clg_env_test(test_bench_rows 600 "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  ${CMAKE_SOURCE_DIR}/tests/test_bench_rows.sh $<TARGET_FILE:clgrad_cli>)
