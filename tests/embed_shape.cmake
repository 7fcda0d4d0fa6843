# INDEX_ADD's counting sort in both kernel shapes (family reduce): the CPU shape's last pass adds 16
# elements of a row a work-item (index_add_sorted16), the GPU shape's one chunk a work-item
# (index_add_sorted); each forced on every device so both stay compared with the reference, bit for
# bit, and the CPU shape's kernel under Oclgrind too.
foreach(shape cpu gpu)
  add_test(NAME test_ops_index_add_sort_${shape} COMMAND test_ops --op index_add)
  set_tests_properties(test_ops_index_add_sort_${shape} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_INDEX_ADD=sort;CLGRAD_KERNEL_SHAPE=${shape};CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endforeach()
add_test(NAME test_ops_oclgrind_index_add_sort_cpu
  COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op index_add)
set_tests_properties(test_ops_oclgrind_index_add_sort_cpu PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_INDEX_ADD=sort;CLGRAD_KERNEL_SHAPE=cpu;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
