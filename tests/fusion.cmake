# Fast start (clg_precompile on an empty and a warm kernel cache, concurrent program builds) and
# the fused ops' paths against the composite ones (tests/test_fast_start.c).
clg_test(test_fast_start)
# Cold precompile with one thread against several is a measurement, not a test (it asserts nothing
# the plain run does not): run it by hand, `POCL_KERNEL_CACHE=0 build/tests/test_fast_start --timing`;
# out of ctest it saves CI a minute or more of cold builds.
