# ---- clgrad compare --merge: same workload merged, another workload or clgrad version refused ----
# Included by tests/CMakeLists.txt (compare/compare_workload.c, docs/COMPARE.md "Two machines, one report").
find_program(CLG_MERGE_PYTHON3 python3)
if(CLG_MERGE_PYTHON3)
  add_test(NAME test_compare_merge
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_compare_merge.sh $<TARGET_FILE:clgrad_cli> ${CMAKE_SOURCE_DIR})
  set_tests_properties(test_compare_merge PROPERTIES TIMEOUT 300
    ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endif()
