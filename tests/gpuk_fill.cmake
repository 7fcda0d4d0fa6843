# GPU-shaped launches that fill the GPU (issue 17): the own GEMM's split-K and smaller tiles, im2col
# a work-item per element, 1-D launches spread over every compute unit, combining passes with
# lanes over the partials. The model says nothing is flagged for the MLP and CNN on four GPUs; the
# op suite runs split-K forced into 5 and 64 chunks (a CPU device's few compute units split only
# the smallest cases), and im2col under both shapes.
clg_env_test(test_bench_step_fill 600 "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_bench_step_fill.sh $<TARGET_FILE:clgrad_cli>)
# each in one process over its variants (--with, tests/test_ops.c)
clg_env_test(test_gpuk_ops_gpu_gemm_split 600 "${CLG_TEST_ENV}" test_ops --op gemm
  --with "GEMM=own KERNEL_SHAPE=gpu GEMM_SPLIT=5" --with "GEMM=own KERNEL_SHAPE=gpu GEMM_SPLIT=64")
clg_env_test(test_gpuk_grad_gpu_gemm_split 600 "${CLG_TEST_ENV}" test_grad --case linear_relu_tall
  --with "GEMM=own KERNEL_SHAPE=gpu GEMM_SPLIT=5" --with "GEMM=own KERNEL_SHAPE=gpu GEMM_SPLIT=64")
clg_env_test(test_gpuk_ops_im2col 600 "${CLG_TEST_ENV}"
  test_ops --op im2col --with KERNEL_SHAPE=cpu --with KERNEL_SHAPE=gpu)
