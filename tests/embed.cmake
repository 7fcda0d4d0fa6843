# INDEX_ADD (embedding backward) on each OpenCL path (backend/opencl/cl_ops_index.c): the op suite's
# index_add cases (bit-exact) with every call forced onto the scan, the counting sort with sorted
# buckets, then with block ranks, so each stays compared with the reference on every device
# whatever the thresholds pick.
set(CLG_EMBED_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
# (each set of runs in one process: --with, tests/test_ops.c)
clg_env_test(test_ops_index_add_paths 600 "${CLG_EMBED_ENV}" test_ops --op index_add
  --with INDEX_ADD=scan --with INDEX_ADD=sort --with INDEX_ADD=rank)
# negative and too-large indices (test_random's index edges) and the embedding gradients on the sort
clg_env_test(test_random_index_add_sort 600 "${CLG_EMBED_ENV};CLGRAD_INDEX_ADD=sort" test_random)
clg_env_test(test_grad_embedding_paths 600 "${CLG_EMBED_ENV}" test_grad --case embedding,embedding_transposed_idx
  --with INDEX_ADD=sort --with INDEX_ADD=rank)
# the counting sort's kernels under Oclgrind (races, out-of-bounds and uninitialised reads), small
# cases, both bucket orders
clg_env_test(test_ops_oclgrind_index_add_paths 900 "${CLG_EMBED_ENV}"
  ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op index_add
  --with INDEX_ADD=sort --with INDEX_ADD=rank)
