# Fast start (clg_precompile on an empty and a warm kernel cache, concurrent program builds) and
# the fused ops' paths against the composite ones (tests/test_fast_start.c).
clg_test(test_fast_start)
# Cold precompile with one thread against several (PoCL's own kernel cache off): prints the ratio.
add_test(NAME test_fast_start_timing COMMAND test_fast_start --timing)
set_tests_properties(test_fast_start_timing PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT "POCL_KERNEL_CACHE=0")
