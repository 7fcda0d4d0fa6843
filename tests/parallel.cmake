# Data parallel training from the command line: several devices in one process, MPI ranks on
# loopback (when Open MPI is installed), int8 compression, a dead rank, bad device lists.
clg_env_test(test_parallel_cli 900 "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_parallel_cli.sh $<TARGET_FILE:clgrad_cli>)
# All-reduce and the sharded optimizer across MPI ranks against the root exchange (tests/test_mpi_exchange.sh).
add_test(NAME test_mpi_exchange COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_mpi_exchange.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_mpi_exchange PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;CLGRAD_SELFTEST=0")
# MPI ranks on simulated hosts: network namespaces joined by rate-limited veth links (scripts/netns_hosts.sh).
add_test(NAME test_netns_hosts COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_netns_hosts.sh $<TARGET_FILE:clgrad_cli> ${CMAKE_SOURCE_DIR})
set_tests_properties(test_netns_hosts PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 RUN_SERIAL TRUE)
