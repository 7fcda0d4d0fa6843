# Kernel shapes measured by `clgrad tune` and applied at device open: tests/test_shapetune.sh
# says what it checks. Tune files and kernel binaries go to a temporary folder of its own.
clg_env_test(test_shapetune 600 "CLGRAD_SELFTEST=0"
  bash ${CMAKE_SOURCE_DIR}/tests/test_shapetune.sh $<TARGET_FILE:clgrad_cli>)
