# ---- no device named: train, eval and bench pick from stored figures, GPU before CPU otherwise;
# `clgrad devices` says which device each job gets and why (cli/device_auto.c) ----
# Included by tests/CMakeLists.txt (before intel.cmake, which adds Intel's runtime to this test).
add_test(NAME test_device_default COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_device_default.sh $<TARGET_FILE:clgrad_cli>)
# (its own cache folder: the self-test would run cold on every device there, so it is off)
set_tests_properties(test_device_default PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT "CLGRAD_SELFTEST=0")
# The library's default (no spec) passes over Oclgrind, which says it is a GPU.
clg_env_test(test_default_not_simulator 120 "CLGRAD_SELFTEST=0"
  bash ${CMAKE_SOURCE_DIR}/tests/test_default_not_simulator.sh $<TARGET_FILE:clgrad_cli>)
