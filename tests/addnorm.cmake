# Residual add + layer norm with gamma and beta (kernels_cl/addnorm.cl, ADD_LAYER_NORM and its
# backward) and attention over one packed Q, K, V projection: the op suite and the gradient checks
# in both shapes of family "row" on every device, the composite paths (CLGRAD_FUSED=0) in the
# gradient checks, and the small cases under Oclgrind
# with a GPU's limits in both shapes, failing on any memory error or data race it reports.
set(CLG_ADDNORM_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
set(CLG_ADDNORM_GRAD add_layer_norm_gamma add_layer_norm_beta add_layer_norm_row63 add_layer_norm_row65
    add_layer_norm_row1 add_layer_norm_tall add_layer_norm_3d add_layer_norm_strided layer_norm_affine_row63
    layer_norm_affine_tall attention_qkv attention_qkv_1head attention_qkv_t1 attention_qkv_open
    attention_qkv_strided transformer_block)
foreach(shape cpu gpu)
  foreach(op add_layer_norm add_layer_norm_backward)
    clg_env_test(test_ops_addnorm_${shape}_${op} 600 "${CLG_ADDNORM_ENV};CLGRAD_KERNEL_SHAPE=row=${shape}"
      test_ops --op ${op})
  endforeach()
  foreach(c IN LISTS CLG_ADDNORM_GRAD)
    clg_env_test(test_grad_addnorm_${shape}_${c} 300 "${CLG_ADDNORM_ENV};CLGRAD_KERNEL_SHAPE=row=${shape}"
      test_grad --case ${c})
  endforeach()
endforeach()
foreach(c add_layer_norm_tall attention_qkv_strided)
  clg_env_test(test_grad_addnorm_composite_${c} 300 "${CLG_ADDNORM_ENV};CLGRAD_FUSED=0" test_grad --case ${c})
endforeach()
if(CLG_OCLGRIND)
  foreach(shape cpu gpu)
    add_test(NAME test_ops_addnorm_oclgrind_${shape}
      COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op add_layer_norm)
    add_test(NAME test_ops_addnorm_oclgrind_${shape}_backward
      COMMAND ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op add_layer_norm_backward)
    set_tests_properties(test_ops_addnorm_oclgrind_${shape} test_ops_addnorm_oclgrind_${shape}_backward PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 900
      ENVIRONMENT "${CLG_ADDNORM_ENV};CLGRAD_KERNEL_SHAPE=row=${shape};OCLGRIND_MAX_WGSIZE=256;OCLGRIND_LOCAL_MEM_SIZE=32768")
  endforeach()
endif()

# Checkpoints of the transformer from before the packed Q, K, V layer: refused with the reason,
# converted by scripts/ckpt_upgrade.py.
add_test(NAME test_ckpt_upgrade COMMAND ${CMAKE_SOURCE_DIR}/tests/test_ckpt_upgrade.sh ${CMAKE_SOURCE_DIR}
  $<TARGET_FILE:clgrad_cli> $<TARGET_FILE:replay_checkpoint>)
set_tests_properties(test_ckpt_upgrade PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)

# The transformer's fused step end to end: fp32, mixed precision and the composite path agree, the
# fused step launches fewer kernels.
add_test(NAME test_train_tf_fused COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_train_tf_fused.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_train_tf_fused PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
