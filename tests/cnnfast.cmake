# conv2d -> relu -> max_pool2d as one node (clg_conv2d_relu_max_pool2d, issue 12's CNN): its
# gradient checks under both kernel shapes on every device, and under Oclgrind (small shapes);
# the 2x2 pooling kernels on channel-major planes (the conv's GEMM layout) are in the op suite's
# max_pool2d cases (tests/ops_cases_conv.c, "channel-major"), run here under Oclgrind too.
set(CLG_CNNFAST_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
set(CLG_CNNFAST_CASES conv_relu_pool conv_relu_pool_odd conv_relu_pool_overlap)
foreach(shape cpu gpu)
  foreach(c IN LISTS CLG_CNNFAST_CASES)
    add_test(NAME test_cnnfast_grad_${shape}_${c} COMMAND test_grad --case ${c})
    set_tests_properties(test_cnnfast_grad_${shape}_${c} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "${CLG_CNNFAST_ENV};CLGRAD_KERNEL_SHAPE=${shape}")
  endforeach()
endforeach()
if(CLG_OCLGRIND)
  foreach(shape cpu gpu)
    foreach(c IN LISTS CLG_CNNFAST_CASES)
      add_test(NAME test_cnnfast_oclgrind_${shape}_${c}
        COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_grad> --case ${c})
      set_tests_properties(test_cnnfast_oclgrind_${shape}_${c} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
        ENVIRONMENT "${CLG_CNNFAST_ENV};CLGRAD_KERNEL_SHAPE=${shape}")
    endforeach()
    foreach(op max_pool2d max_pool2d_backward)
      add_test(NAME test_cnnfast_oclgrind_${shape}_${op}
        COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op ${op})
      set_tests_properties(test_cnnfast_oclgrind_${shape}_${op} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
        ENVIRONMENT "${CLG_CNNFAST_ENV};CLGRAD_KERNEL_SHAPE=${shape}")
    endforeach()
  endforeach()
endif()
