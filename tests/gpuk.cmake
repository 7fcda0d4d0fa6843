# GPU-shaped kernels (issue 17): launch sizes from the device's limits, and the GPU shapes of the
# fused bias+activation backward, the column reductions, the conv weight gradient's split-K and
# the own GEMM under both shapes (CLGRAD_KERNEL_SHAPE=cpu|gpu).
set(CLG_GPUK_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
# Each in one process over both shapes (--with, tests/test_ops.c):
# the fused bias+activation backward and the column reductions (sum, max over leading dims: the
# suite's transposed layouts); the conv weight gradient split over K (frontend/ops_conv.c,
# dw_chunks), with and without groups
clg_env_test(test_gpuk_ops 600 "${CLG_TEST_ENV}" test_ops --op bias_act_backward,sum,max
  --with KERNEL_SHAPE=cpu --with KERNEL_SHAPE=gpu)
clg_env_test(test_gpuk_grad 600 "${CLG_TEST_ENV}" test_grad --case linear_relu_tall,conv2d_splitk,conv2d_splitk_groups
  --with KERNEL_SHAPE=cpu --with KERNEL_SHAPE=gpu)
# The own GEMM under both shapes (register-tiled for CPUs, gemm_tiles for GPUs), op suite and
# gradient checks.
clg_env_test(test_gpuk_ops_gemm_own 600 "${CLG_TEST_ENV}" test_ops --op gemm
  --with "GEMM=own KERNEL_SHAPE=cpu" --with "GEMM=own KERNEL_SHAPE=gpu")
clg_env_test(test_gpuk_grad_gemm_own 600 "${CLG_TEST_ENV}" test_grad
  --with "GEMM=own KERNEL_SHAPE=cpu" --with "GEMM=own KERNEL_SHAPE=gpu")

# Oclgrind with GPU-like limits: 256 / 32 KiB (many GPUs), 1024 / 48 KiB (NVIDIA), and a maximum
# that is not a power of two (192). Small cases of a few ops per launch style.
find_program(CLG_GPUK_OCLGRIND oclgrind)
if(CLG_GPUK_OCLGRIND)
  # gemm (the own GEMM: gemm_tiles in the GPU shape, 8 x 8 groups at 192) only at 192: it takes
  # most of a run's time under Oclgrind, and test_ops_oclgrind_gemm_own covers the default 1024
  set(CLG_GPUK_OPS add sum max argmax bias_act bias_act_backward softmax layer_norm adam_step int8_scales max_pool2d)
  foreach(CLG_GPUK_LIM "256;32768" "1024;49152" "192;32768")
    list(GET CLG_GPUK_LIM 0 CLG_GPUK_WG)
    list(GET CLG_GPUK_LIM 1 CLG_GPUK_LM)
    set(CLG_GPUK_RUN ${CLG_GPUK_OPS})
    if(CLG_GPUK_WG EQUAL 192)
      list(APPEND CLG_GPUK_RUN gemm)
    endif()
    # the CPU shape meets a GPU's limits only when forced (CLGRAD_KERNEL_SHAPE=cpu): the odd limit
    # checks it; the GPU shape runs under every profile
    set(CLG_GPUK_SHAPES gpu)
    if(CLG_GPUK_WG EQUAL 192)
      list(APPEND CLG_GPUK_SHAPES cpu)
    endif()
    foreach(shape ${CLG_GPUK_SHAPES})
      clg_env_test(test_gpuk_oclgrind_limits_${CLG_GPUK_WG}_${shape} 600 "${CLG_GPUK_ENV};CLGRAD_KERNEL_SHAPE=${shape};CLGRAD_GEMM=own"
        ${CMAKE_SOURCE_DIR}/tests/run_oclgrind_limits.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:clgrad_cli>
                $<TARGET_FILE:test_ops> ${CLG_GPUK_WG} ${CLG_GPUK_LM} ${CLG_GPUK_RUN})
    endforeach()
  endforeach()
endif()
