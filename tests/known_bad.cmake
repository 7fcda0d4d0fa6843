# ---- docs/known-bad/: the evidence programs build, run, and can fail; every known-bad entry names its folder ----
# The two host programs are docs (no clgrad code in them), built here so that they do not rot.
add_executable(clg_clbuild ${CMAKE_SOURCE_DIR}/docs/known-bad/clbuild.c)
target_link_libraries(clg_clbuild PRIVATE OpenCL::OpenCL)
add_executable(clg_sgemm_check ${CMAKE_SOURCE_DIR}/docs/known-bad/clblast-sgemm/sgemm_check.c)
target_include_directories(clg_sgemm_check PRIVATE ${CLBLAST_INCLUDE})
target_link_libraries(clg_sgemm_check PRIVATE ${CLBLAST_LIB} OpenCL::OpenCL m)
clg_env_test(test_known_bad 120 "${CLG_TEST_ENV}" bash ${CMAKE_SOURCE_DIR}/tests/test_known_bad.sh
  $<TARGET_FILE:clg_clbuild> $<TARGET_FILE:clg_sgemm_check> ${CMAKE_SOURCE_DIR})
