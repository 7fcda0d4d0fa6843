# A driver crash names its step, is recorded, and is not repeated (issue 18; tests/test_crash.sh).
# Needs the test-only crash hook (CLGRAD_TEST_CRASH).
if(CLGRAD_TEST_HOOKS)
  add_test(NAME test_crash COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_crash.sh $<TARGET_FILE:clgrad_cli>)
  set_tests_properties(test_crash PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
