# The cpu shape's backward has two paths (backend/opencl/cl_ops_attention.c): ds stored in a
# scratch (the default where B*H*Tk*Tq values fit $CLGRAD_ATTN_DS_MB) and, past the limit, the
# scores recomputed by a dq pass and a dk/dv pass. tests/attn.cmake runs the first; here the
# second, forced with a limit of 0, and a gradient check through it.
clg_env_test(test_ops_attention_bwd_cpu_recompute 900 "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=attention=cpu;CLGRAD_ATTN_DS_MB=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  test_ops --op attention_bwd)
clg_env_test(test_grad_attn_fused_4d_causal_t33_cpu_recompute 600 "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=attention=cpu;CLGRAD_ATTN_DS_MB=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  test_grad --case attn_fused_4d_causal_t33)
