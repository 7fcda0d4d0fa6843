# ---- clgrad compare (docs/COMPARE.md): driver, watchdog, reports ----------------------------
# Included by tests/CMakeLists.txt. The runs use the shared test kernel cache, so only the first
# run on a machine pays PoCL's cold kernel builds.
find_program(CLG_COMPARE_PYTHON3 python3)
if(CLG_COMPARE_PYTHON3)
  set(CLG_COMPARE_SH ${CMAKE_SOURCE_DIR}/tests/test_compare.sh)
  set(CLG_COMPARE_ENV "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  # reports re-rendered from tests/data/compare fixtures, a corrupt worker file, --baseline
  add_test(NAME test_compare_render COMMAND bash ${CLG_COMPARE_SH} render $<TARGET_FILE:clgrad_cli> ${CMAKE_SOURCE_DIR})
  # a crashing and a hanging worker: the report completes with those devices marked
  add_test(NAME test_compare_faults COMMAND bash ${CLG_COMPARE_SH} faults $<TARGET_FILE:clgrad_cli> ${CMAKE_SOURCE_DIR})
  # one device's kernels fail to build: its compile section shows it, the others are unaffected
  add_test(NAME test_compare_build_failure COMMAND bash ${CLG_COMPARE_SH} build $<TARGET_FILE:clgrad_cli> ${CMAKE_SOURCE_DIR})
  # `compare --quick` over every device (reference + PoCL): schema and every section populated
  add_test(NAME test_compare_quick COMMAND bash ${CLG_COMPARE_SH} quick $<TARGET_FILE:clgrad_cli> ${CMAKE_SOURCE_DIR})
  set_tests_properties(test_compare_render test_compare_faults test_compare_build_failure
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT "${CLG_COMPARE_ENV}")
  set_tests_properties(test_compare_quick PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1500 ENVIRONMENT "${CLG_COMPARE_ENV}")
  find_program(CLG_COMPARE_OCLGRIND oclgrind)
  if(CLG_COMPARE_OCLGRIND)
    # the reference and Oclgrind (registered beside PoCL), smallest workloads
    clg_env_test(test_compare_oclgrind 900 "${CLG_COMPARE_ENV}"
      bash ${CLG_COMPARE_SH} oclgrind $<TARGET_FILE:clgrad_cli> ${CMAKE_SOURCE_DIR})
  endif()
endif()
# the comparison mode as a library (compare/clgrad_compare.h): a run with the clgrad command as the
# worker program, the refusals, Ctrl-C during a run
add_executable(test_compare_api ${CMAKE_SOURCE_DIR}/tests/test_compare_api.c)
target_link_libraries(test_compare_api PRIVATE clg_testutil clgrad_compare Threads::Threads)
add_test(NAME test_compare_api COMMAND test_compare_api $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_compare_api PROPERTIES TIMEOUT 300
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
