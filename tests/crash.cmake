# A driver crash names its step, is recorded, and is not repeated (issue 18; tests/test_crash.sh).
# Needs the test-only crash hook (CLGRAD_TEST_CRASH).
if(CLGRAD_TEST_HOOKS)
  clg_env_test(test_crash 600 "" bash ${CMAKE_SOURCE_DIR}/tests/test_crash.sh $<TARGET_FILE:clgrad_cli>)
endif()
