# GEMM tuning (backend/clg_tune.h, backend/opencl/cl_tune.c, `clgrad tune`) and `clgrad bench gemm
# --json`: tests/test_tune.sh says what it checks. Tune files go to a temporary folder, kernel
# binaries to the shared test cache. The wrong gemm.cl comes from tests/selftest.cmake when present.
set(CLG_TUNE_MUTANT "")
if(DEFINED CLG_GEMM_MUTANT_DIR)
  set(CLG_TUNE_MUTANT ${CLG_GEMM_MUTANT_DIR})
endif()
clg_env_test(test_tune 900 "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_tune.sh $<TARGET_FILE:clgrad_cli> $<TARGET_FILE:test_ops>
          ${CLG_TUNE_MUTANT})
