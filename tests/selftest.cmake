# Routing at open (backend/opencl/cl_selftest.c): the known-bad list, the self-test and its cached
# result. test_selftest uses the mutant kernels made in CMakeLists.txt (a wrong `add`);
# test_selftest_gemm a copy with wrong own GEMM kernels, which must fall back to CLBlast on CPU
# devices (where the own kernels are the default). Their own cache folder: they delete the cached
# self-test results (selftest-*.txt) to start cold, and keep the program binaries.
set(CLG_GEMM_MUTANT_DIR ${CMAKE_BINARY_DIR}/mutant_gemm_kernels)
file(COPY ${CLG_REAL_KERNELS} DESTINATION ${CLG_GEMM_MUTANT_DIR})
file(READ ${CMAKE_SOURCE_DIR}/kernels_cl/gemm.cl CLG_GEMM_SRC)
string(REPLACE "#define MAD(a, b, c) mad(a, b, c)" "#define MAD(a, b, c) mad(a, b, (c) * 1.01f)" CLG_GEMM_MUTANT "${CLG_GEMM_SRC}")
string(REPLACE "#define MAD(a, b, c) fma(a, b, c)" "#define MAD(a, b, c) fma(a, b, (c) * 1.01f)" CLG_GEMM_MUTANT "${CLG_GEMM_MUTANT}")
if(CLG_GEMM_MUTANT STREQUAL CLG_GEMM_SRC)
  message(FATAL_ERROR "selftest: the MAD line was not found in gemm.cl")
endif()
file(WRITE ${CLG_GEMM_MUTANT_DIR}/gemm.cl "${CLG_GEMM_MUTANT}")

clg_test(test_selftest ${CLG_MUTANT_DIR})
# (one at a time under ctest -j: each deletes the other's cached results)
set_tests_properties(test_selftest PROPERTIES TIMEOUT 900 RESOURCE_LOCK selftest-cache
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/selftest-cache")
add_test(NAME test_selftest_gemm COMMAND test_selftest --gemm ${CLG_GEMM_MUTANT_DIR})
set_tests_properties(test_selftest_gemm PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 RESOURCE_LOCK selftest-cache
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/selftest-cache")
# the self-test at first use: a wrong add routed before its first result, ops never used untested
clg_test(test_selftest_lazy ${CLG_MUTANT_DIR})
set_tests_properties(test_selftest_lazy PROPERTIES TIMEOUT 300 RESOURCE_LOCK selftest-cache
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/selftest-cache")
# the first clgrad train on an empty cache: its first step before the whole self-test, progress in the log
clg_env_test(test_first_use 300 "" bash ${CMAKE_SOURCE_DIR}/tests/test_first_use.sh $<TARGET_FILE:clgrad_cli>)
# the cached result is read again by the same build and redone for another (clg_build_id; the
# stand-in for another build is a test hook)
if(CLGRAD_TEST_HOOKS)
  clg_env_test(test_selftest_build_id 300 ""
    bash ${CMAKE_SOURCE_DIR}/tests/test_selftest_build_id.sh $<TARGET_FILE:clgrad_cli>)
endif()
