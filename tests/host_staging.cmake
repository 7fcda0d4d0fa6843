# (named to sort before intel.cmake, which adds test_staging to the tests that run on Intel too)
# Uploads through the pinned staging ring (backend/opencl/cl_staging.c): many in flight, the
# source reused at once, slots growing, one upload above the pinned limit, one region rewritten.
clg_test(test_staging)
