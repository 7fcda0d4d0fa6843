# `clgrad train --profile-top N`: the op table's length (0: every op of the step), range checked.
clg_env_test(test_profile_top 300 "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_profile_top.sh $<TARGET_FILE:clgrad_cli>)
