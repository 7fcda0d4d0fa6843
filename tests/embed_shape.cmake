# INDEX_ADD's counting sort in both kernel shapes (family reduce): the CPU shape's last pass adds 16
# elements of a row a work-item (index_add_sorted16), the GPU shape's one chunk a work-item
# (index_add_sorted); each forced on every device so both stay compared with the reference, bit for
# bit, and the CPU shape's kernel under Oclgrind too.
clg_env_test(test_ops_index_add_sort_shapes 600 "${CLG_TEST_ENV}" test_ops --op index_add
  --with "INDEX_ADD=sort KERNEL_SHAPE=cpu" --with "INDEX_ADD=sort KERNEL_SHAPE=gpu")
clg_env_test(test_ops_oclgrind_index_add_sort_cpu 900 "CLGRAD_SELFTEST=0;CLGRAD_INDEX_ADD=sort;CLGRAD_KERNEL_SHAPE=cpu;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op index_add)
