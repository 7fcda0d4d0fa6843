# Hardening (issue 18): the strict option parser of every subcommand.
add_test(NAME test_cli_options COMMAND sh ${CMAKE_SOURCE_DIR}/tests/test_cli_options.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_cli_options PROPERTIES TIMEOUT 120
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
# Stale temporary files of writers killed before their rename (backend/stale_tmp.c).
clg_test(test_stale_tmp)
target_include_directories(test_stale_tmp PRIVATE ${CMAKE_SOURCE_DIR}/backend/opencl)
# Fault injection: training stops with a clear error and the checkpoint is kept (CLGRAD_FAULT).
# (36 s under ASan on a quiet 2-core machine; 300 s ran out beside test_crash on a shared one)
clg_env_test(test_fault 900 "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_fault.sh $<TARGET_FILE:clgrad_cli>)
# The fault walk: every build and file write, sampled allocations and reads of a 2-epoch run.
clg_env_test(test_fault_walk 900 ""
  bash ${CMAKE_SOURCE_DIR}/tests/test_fault_walk.sh $<TARGET_FILE:clgrad_cli>)
