# One optimizer launch for all parameters (frontend/optim.c: parameters, gradients and state in
# arenas) is the default, and test_optim checks it against the per-tensor launches and PyTorch's
# rule; the per-tensor fallback ($CLGRAD_OPTIM_LAUNCH=per-tensor) trains as the reference does too.
foreach(t test_train test_trainer)
  add_test(NAME ${t}_optim_per_tensor COMMAND ${t})
  set_tests_properties(${t}_optim_per_tensor PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;CLGRAD_OPTIM_LAUNCH=per-tensor")
endforeach()
