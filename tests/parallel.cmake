# Data parallel training from the command line: several devices in one process, MPI ranks on
# loopback (when Open MPI is installed), int8 compression, a dead rank, bad device lists.
clg_env_test(test_parallel_cli 900 "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_parallel_cli.sh $<TARGET_FILE:clgrad_cli>)
