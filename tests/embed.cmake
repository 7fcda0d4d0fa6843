# INDEX_ADD (embedding backward) on each OpenCL path (backend/opencl/cl_ops_index.c): the op suite's
# index_add cases (bit-exact) with every call forced onto the scan, the counting sort with sorted
# buckets, then with block ranks, so each stays compared with the reference on every device
# whatever the thresholds pick.
foreach(path scan sort rank)
  add_test(NAME test_ops_index_add_${path} COMMAND test_ops --op index_add)
  set_tests_properties(test_ops_index_add_${path} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_INDEX_ADD=${path};CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endforeach()
# negative and too-large indices (test_random's index edges) and the embedding gradients on the sort
foreach(t test_random)
  add_test(NAME ${t}_index_add_sort COMMAND ${t})
  set_tests_properties(${t}_index_add_sort PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_INDEX_ADD=sort;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endforeach()
foreach(case embedding embedding_transposed_idx)
  foreach(path sort rank)
    add_test(NAME test_grad_${case}_${path} COMMAND test_grad --case ${case})
    set_tests_properties(test_grad_${case}_${path} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
      ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_INDEX_ADD=${path};CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  endforeach()
endforeach()
# the counting sort's kernels under Oclgrind (races, out-of-bounds and uninitialised reads), small
# cases, both bucket orders
foreach(path sort rank)
  add_test(NAME test_ops_oclgrind_index_add_${path}
    COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op index_add)
  set_tests_properties(test_ops_oclgrind_index_add_${path} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_INDEX_ADD=${path};CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
endforeach()
