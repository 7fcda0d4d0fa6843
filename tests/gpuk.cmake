# GPU-shaped kernels (issue 17): launch sizes from the device's limits, and the GPU shapes of the
# fused bias+activation backward, the column reductions, the conv weight gradient's split-K and
# the own GEMM under both shapes (CLGRAD_KERNEL_SHAPE=cpu|gpu).
set(CLG_GPUK_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
foreach(shape cpu gpu)
  add_test(NAME test_ops_shape_${shape}_fused COMMAND test_ops --op bias_act_backward)
  add_test(NAME test_grad_shape_${shape}_fused COMMAND test_grad --case linear_relu_tall)
  # the column reductions (sum, max, min over leading dims: the suite's transposed layouts)
  add_test(NAME test_ops_shape_${shape}_sum COMMAND test_ops --op sum)
  add_test(NAME test_ops_shape_${shape}_max COMMAND test_ops --op max)
  # the conv weight gradient split over K (frontend/ops_conv.c, dw_chunks), with and without groups
  add_test(NAME test_grad_shape_${shape}_splitk COMMAND test_grad --case conv2d_splitk)
  add_test(NAME test_grad_shape_${shape}_splitk_groups COMMAND test_grad --case conv2d_splitk_groups)
  set_tests_properties(test_ops_shape_${shape}_fused test_grad_shape_${shape}_fused test_ops_shape_${shape}_sum
    test_ops_shape_${shape}_max test_grad_shape_${shape}_splitk test_grad_shape_${shape}_splitk_groups PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT "${CLG_GPUK_ENV};CLGRAD_KERNEL_SHAPE=${shape}")
endforeach()

# The own GEMM under both shapes (register-tiled for CPUs, gemm_tiles for GPUs), op suite and
# gradient checks.
foreach(shape cpu gpu)
  add_test(NAME test_ops_shape_${shape}_gemm_own COMMAND test_ops --op gemm)
  add_test(NAME test_grad_shape_${shape}_gemm_own COMMAND test_grad)
  set_tests_properties(test_ops_shape_${shape}_gemm_own test_grad_shape_${shape}_gemm_own PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT "${CLG_GPUK_ENV};CLGRAD_GEMM=own;CLGRAD_KERNEL_SHAPE=${shape}")
endforeach()

# Oclgrind with GPU-like limits: 256 / 32 KiB (many GPUs), 1024 / 48 KiB (NVIDIA), and a maximum
# that is not a power of two (192). Small cases of a few ops per launch style, both shapes.
find_program(CLG_GPUK_OCLGRIND oclgrind)
if(CLG_GPUK_OCLGRIND)
  set(CLG_GPUK_OPS add sum max argmax bias_act bias_act_backward softmax layer_norm adam_step int8_scales max_pool2d gemm)
  foreach(lim "256;32768" "1024;49152" "192;32768")
    list(GET lim 0 wg)
    list(GET lim 1 lm)
    foreach(shape cpu gpu)
      add_test(NAME test_ops_oclgrind_limits_${wg}_${shape}
        COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind_limits.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:clgrad_cli>
                $<TARGET_FILE:test_ops> ${wg} ${lm} ${CLG_GPUK_OPS})
      set_tests_properties(test_ops_oclgrind_limits_${wg}_${shape} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
        ENVIRONMENT "${CLG_GPUK_ENV};CLGRAD_KERNEL_SHAPE=${shape};CLGRAD_GEMM=own")
    endforeach()
  endforeach()
endif()
