# GPU-shaped kernels (issue 17): launch sizes from the device's limits, and the GPU shapes of the
# fused bias+activation backward, the column reductions, the conv weight gradient's split-K and
# the own GEMM under both shapes (CLGRAD_KERNEL_SHAPE=cpu|gpu).
set(CLG_GPUK_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
foreach(shape cpu gpu)
  add_test(NAME test_gpuk_ops_${shape}_fused COMMAND test_ops --op bias_act_backward)
  add_test(NAME test_gpuk_grad_${shape}_fused COMMAND test_grad --case linear_relu_tall)
  # the column reductions (sum, max, min over leading dims: the suite's transposed layouts)
  add_test(NAME test_gpuk_ops_${shape}_sum COMMAND test_ops --op sum)
  add_test(NAME test_gpuk_ops_${shape}_max COMMAND test_ops --op max)
  # the conv weight gradient split over K (frontend/ops_conv.c, dw_chunks), with and without groups
  add_test(NAME test_gpuk_grad_${shape}_splitk COMMAND test_grad --case conv2d_splitk)
  add_test(NAME test_gpuk_grad_${shape}_splitk_groups COMMAND test_grad --case conv2d_splitk_groups)
  set_tests_properties(test_gpuk_ops_${shape}_fused test_gpuk_grad_${shape}_fused test_gpuk_ops_${shape}_sum
    test_gpuk_ops_${shape}_max test_gpuk_grad_${shape}_splitk test_gpuk_grad_${shape}_splitk_groups PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "${CLG_GPUK_ENV};CLGRAD_KERNEL_SHAPE=${shape}")
endforeach()

# The own GEMM under both shapes (register-tiled for CPUs, gemm_tiles for GPUs), op suite and
# gradient checks.
foreach(shape cpu gpu)
  add_test(NAME test_gpuk_ops_${shape}_gemm_own COMMAND test_ops --op gemm)
  add_test(NAME test_gpuk_grad_${shape}_gemm_own COMMAND test_grad)
  set_tests_properties(test_gpuk_ops_${shape}_gemm_own test_gpuk_grad_${shape}_gemm_own PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT "${CLG_GPUK_ENV};CLGRAD_GEMM=own;CLGRAD_KERNEL_SHAPE=${shape}")
endforeach()

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
      add_test(NAME test_gpuk_oclgrind_limits_${CLG_GPUK_WG}_${shape}
        COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind_limits.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:clgrad_cli>
                $<TARGET_FILE:test_ops> ${CLG_GPUK_WG} ${CLG_GPUK_LM} ${CLG_GPUK_RUN})
      set_tests_properties(test_gpuk_oclgrind_limits_${CLG_GPUK_WG}_${shape} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
        ENVIRONMENT "${CLG_GPUK_ENV};CLGRAD_KERNEL_SHAPE=${shape};CLGRAD_GEMM=own")
    endforeach()
  endforeach()
endif()
