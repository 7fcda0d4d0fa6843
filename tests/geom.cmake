# ---- clgrad bench step (cli/bench_step.c): launch geometry of a training step, modelled on a GPU ----
# Included by tests/CMakeLists.txt. PoCL only (the recorded geometry depends on the device's limits).
clg_env_test(test_bench_step 600 "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_bench_step.sh $<TARGET_FILE:clgrad_cli>)
