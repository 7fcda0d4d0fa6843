# CLBlast's two GEMM paths (backend/opencl/cl_clblast.c, cl_gemm.c, cl_selftest.c).
# test_clblast_switch: the switch between them read back as set, the self-test's run on the
# indirect path leaves it as it was, $CLGRAD_GEMM_MIN_INDIRECT, GEMMs on either path (a folder of
# its own: the self-test must run cold). test_ops_gemm_clblast_indirect: every GEMM case of the op
# suite (transposes, offsets, batches) with CLBlast on its indirect path, where the small shapes
# of the suite never go by default.
clg_test(test_clblast_switch)
target_include_directories(test_clblast_switch PRIVATE ${CMAKE_SOURCE_DIR}/backend/opencl)
set_tests_properties(test_clblast_switch PROPERTIES TIMEOUT 900
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/clblast-switch-cache")
clg_env_test(test_ops_gemm_clblast_indirect 900 "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;CLGRAD_GEMM=clblast;CLGRAD_GEMM_MIN_INDIRECT=1"
  test_ops --op gemm)
# test_tune_clblast_restore: a tune run that fails at its end (CLGRAD_CACHE_DIR=0 inside) after
# CLBlast's search leaves CLBlast's switch as it was (first OpenCL device; about 45 s: a 40-s budget,
# so that CLBlast's search still fits after Intel's cold kernel builds).
clg_env_test(test_tune_clblast_restore 600 "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  test_clblast_switch --tune)
