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
# each in one process over both shapes (--with, tests/test_ops.c)
list(JOIN CLG_ADDNORM_GRAD "," CLG_ADDNORM_GRAD_LIST)
clg_env_test(test_ops_addnorm 600 "${CLG_TEST_ENV}" test_ops --op add_layer_norm,add_layer_norm_backward
  --with KERNEL_SHAPE=row=cpu --with KERNEL_SHAPE=row=gpu)
clg_env_test(test_grad_addnorm 600 "${CLG_TEST_ENV}" test_grad --case ${CLG_ADDNORM_GRAD_LIST}
  --with KERNEL_SHAPE=row=cpu --with KERNEL_SHAPE=row=gpu)
clg_env_test(test_grad_addnorm_composite 300 "${CLG_ADDNORM_ENV};CLGRAD_FUSED=0"
  test_grad --case add_layer_norm_tall,attention_qkv_strided)
if(CLG_OCLGRIND)
  clg_env_test(test_ops_addnorm_oclgrind 900 "${CLG_ADDNORM_ENV};OCLGRIND_MAX_WGSIZE=256;OCLGRIND_LOCAL_MEM_SIZE=32768"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small
            --op add_layer_norm,add_layer_norm_backward --with KERNEL_SHAPE=row=cpu --with KERNEL_SHAPE=row=gpu)
endif()

# Checkpoints of the transformer from before the packed Q, K, V layer: refused with the reason,
# converted by scripts/ckpt_upgrade.py.
clg_env_test(test_ckpt_upgrade 120 "" ${CMAKE_SOURCE_DIR}/tests/test_ckpt_upgrade.sh ${CMAKE_SOURCE_DIR}
  $<TARGET_FILE:clgrad_cli> $<TARGET_FILE:replay_checkpoint>)

# The transformer's fused step end to end: fp32, mixed precision and the composite path agree, the
# fused step launches fewer kernels.
clg_env_test(test_train_tf_fused 600 "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_train_tf_fused.sh $<TARGET_FILE:clgrad_cli>)
