# Kernel shapes measured by `clgrad tune` and applied at device open: tests/test_shapetune.sh
# says what it checks. Tune files and kernel binaries go to a temporary folder of its own.
add_test(NAME test_shapetune COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_shapetune.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_shapetune PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT "CLGRAD_SELFTEST=0")
