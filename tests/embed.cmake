# INDEX_ADD (embedding backward) on each OpenCL path (backend/opencl/cl_ops_index.c): the op suite's
# index_add cases (bit-exact) with every call forced onto the scan, the counting sort with sorted
# buckets, then with block ranks, so each stays compared with the reference on every device
# whatever the thresholds pick.
set(CLG_EMBED_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
foreach(path scan sort rank)
  clg_env_test(test_ops_index_add_${path} 600 "${CLG_EMBED_ENV};CLGRAD_INDEX_ADD=${path}" test_ops --op index_add)
endforeach()
# negative and too-large indices (test_random's index edges) and the embedding gradients on the sort
clg_env_test(test_random_index_add_sort 600 "${CLG_EMBED_ENV};CLGRAD_INDEX_ADD=sort" test_random)
foreach(case embedding embedding_transposed_idx)
  foreach(path sort rank)
    clg_env_test(test_grad_${case}_${path} 600 "${CLG_EMBED_ENV};CLGRAD_INDEX_ADD=${path}" test_grad --case ${case})
  endforeach()
endforeach()
# the counting sort's kernels under Oclgrind (races, out-of-bounds and uninitialised reads), small
# cases, both bucket orders
foreach(path sort rank)
  clg_env_test(test_ops_oclgrind_index_add_${path} 900 "${CLG_EMBED_ENV};CLGRAD_INDEX_ADD=${path}"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op index_add)
endforeach()
