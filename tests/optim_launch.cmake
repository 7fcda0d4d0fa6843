# One optimizer launch for all parameters (frontend/optim.c: parameters, gradients and state in
# arenas) is the default, and test_optim checks it against the per-tensor launches and PyTorch's
# rule; the per-tensor fallback ($CLGRAD_OPTIM_LAUNCH=per-tensor) trains as the reference does too.
foreach(t test_train test_trainer)
  clg_env_test(${t}_optim_per_tensor 600 "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;CLGRAD_OPTIM_LAUNCH=per-tensor"
    ${t})
endforeach()
