# The float16 self-test turns native half off on a device whose half path is wrong (issue 15); runs
# where a device has cl_khr_fp16 (Intel's CPU runtime: tests/intel.cmake adds it there).
if(CLGRAD_TEST_HOOKS)
  clg_env_test(test_half_selftest 900 "" bash ${CMAKE_SOURCE_DIR}/tests/test_half_selftest.sh
    $<TARGET_FILE:clgrad_cli> $<TARGET_FILE:test_ops>)
endif()
