# clgrad sweep: a grid of runs, a crashed and a hung run recorded, resume, bad options.
clg_env_test(test_sweep 900 "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_sweep.sh $<TARGET_FILE:clgrad_cli>)
