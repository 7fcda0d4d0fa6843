# GPU-shaped launches that fill the GPU (issue 17): the own GEMM's split-K and smaller tiles, im2col
# a work-item per element, 1-D launches spread over every compute unit, combining passes with
# lanes over the partials. The model says nothing is flagged for the MLP and CNN on four GPUs; the
# op suite runs split-K forced into 5 and 64 chunks (a CPU device's few compute units split only
# the smallest cases), and im2col under both shapes.
add_test(NAME test_bench_step_fill COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_bench_step_fill.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_bench_step_fill PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
foreach(split 5 64)
  add_test(NAME test_gpuk_ops_gpu_gemm_split${split} COMMAND test_ops --op gemm)
  add_test(NAME test_gpuk_grad_gpu_gemm_split${split} COMMAND test_grad --case linear_relu_tall)
  set_tests_properties(test_gpuk_ops_gpu_gemm_split${split} test_gpuk_grad_gpu_gemm_split${split} PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT
    "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;CLGRAD_GEMM=own;CLGRAD_KERNEL_SHAPE=gpu;CLGRAD_GEMM_SPLIT=${split}")
endforeach()
foreach(shape cpu gpu)
  add_test(NAME test_gpuk_ops_${shape}_im2col COMMAND test_ops --op im2col)
  set_tests_properties(test_gpuk_ops_${shape}_im2col PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT
    "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;CLGRAD_KERNEL_SHAPE=${shape}")
endforeach()
