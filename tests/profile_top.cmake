# `clgrad train --profile-top N`: the op table's length (0: every op of the step), range checked.
add_test(NAME test_profile_top COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_profile_top.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_profile_top PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
