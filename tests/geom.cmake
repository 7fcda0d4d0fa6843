# ---- clgrad bench step (cli/bench_step.c): launch geometry of a training step, modelled on a GPU ----
# Included by tests/CMakeLists.txt. PoCL only (the recorded geometry depends on the device's limits).
add_test(NAME test_bench_step COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_bench_step.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_bench_step PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
