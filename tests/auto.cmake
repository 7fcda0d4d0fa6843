# ---- --device auto (cli/device_auto.c): measured once, stored, read back, the pick follows ----
# Included by tests/CMakeLists.txt. Runs on every OpenCL device present (Intel too: intel.cmake).
add_test(NAME test_device_auto COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_device_auto.sh $<TARGET_FILE:clgrad_cli>)
# (its own empty cache folder: the self-test would run cold on every device there, so it is off)
set_tests_properties(test_device_auto PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT "CLGRAD_SELFTEST=0")
