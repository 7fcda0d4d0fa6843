# Fused attention (ATTENTION_FWD / ATTENTION_BWD): the op cases and the gradient checks with each
# kernel shape forced (backend/kernel_shape.c, family "attention"), whatever the device type; both
# shapes under Oclgrind, failing on any memory error or data race: the gpu shape with small GPU-like
# limits (work-groups of at most 4, 512 bytes of local memory: several query and key tiles on T = 7),
# the cpu shape's blocks of rows with the small cases (T = 17, 15/31, 33/17: blocks cut short).
# each in one process over both shapes (--with, tests/test_ops.c)
clg_env_test(test_ops_attention 600 "${CLG_TEST_ENV}" test_ops --op attention_fwd,attention_bwd
  --with KERNEL_SHAPE=attention=cpu --with KERNEL_SHAPE=attention=gpu)
set_tests_properties(test_ops_attention PROPERTIES TIMEOUT 900)
set(CLG_ATTN_GRAD attn_fused_4d attn_fused_4d_causal attn_fused_3d_causal_tk attn_fused_3d_causal_tq attn_fused_4d_causal_t33
  attn_fused_heads_view attn_composed_causal attn_scale transformer_block)
list(JOIN CLG_ATTN_GRAD "," CLG_ATTN_GRAD_LIST)
clg_env_test(test_grad_attention 600 "${CLG_TEST_ENV}" test_grad --case ${CLG_ATTN_GRAD_LIST}
  --with KERNEL_SHAPE=attention=cpu --with KERNEL_SHAPE=attention=gpu)
if(CLG_OCLGRIND)
  clg_env_test(test_ops_oclgrind_attention_gpu 900 "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=attention=gpu;OCLGRIND_MAX_WGSIZE=4;OCLGRIND_LOCAL_MEM_SIZE=512;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op attention_fwd,attention_bwd)
  clg_env_test(test_ops_oclgrind_attention_cpu 900 "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_SHAPE=attention=cpu;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op attention_fwd,attention_bwd)
endif()
# The suite must be able to fail: a causal mask one key too wide in the kernels (both shapes: the
# gpu shape's VISIBLE, the cpu shape's last visible key of a lane) is caught with either shape.
set(CLG_ATTN_MUTANT_DIR ${CMAKE_BINARY_DIR}/mutant_attention_kernels)
file(COPY ${CLG_REAL_KERNELS} DESTINATION ${CLG_ATTN_MUTANT_DIR})
file(READ ${CMAKE_SOURCE_DIR}/kernels_cl/attention.cl CLG_ATTN_SRC)
string(REPLACE "min(g.Tk, (i) + 1)" "min(g.Tk, (i) + 2)" CLG_ATTN_MUTANT1 "${CLG_ATTN_SRC}")
string(REPLACE "(VT)(ACC)(i0) + IOTA)" "(VT)(ACC)(i0) + IOTA + (VT)1)" CLG_ATTN_MUTANT "${CLG_ATTN_MUTANT1}")
if(CLG_ATTN_MUTANT1 STREQUAL CLG_ATTN_SRC OR CLG_ATTN_MUTANT STREQUAL CLG_ATTN_MUTANT1)
  message(FATAL_ERROR "attention mutation test: the VISIBLE or the QUERY_KEYS line was not found in attention.cl")
endif()
file(WRITE ${CLG_ATTN_MUTANT_DIR}/attention.cl "${CLG_ATTN_MUTANT}")
foreach(shape cpu gpu)
  add_test(NAME test_ops_attention_catches_wrong_kernel_${shape} COMMAND test_ops --op attention_fwd)
  set_tests_properties(test_ops_attention_catches_wrong_kernel_${shape} PROPERTIES
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_KERNEL_DIR=${CLG_ATTN_MUTANT_DIR};CLGRAD_CACHE_DIR=0;CLGRAD_KERNEL_SHAPE=attention=${shape}"
    PASS_REGULAR_EXPRESSION "attention_fwd \\[[^\n]*normalized error"
    SKIP_REGULAR_EXPRESSION "no OpenCL device present" TIMEOUT 900)
endforeach()
# The self-test routes a wrong fused attention away and the frontend falls back to the composite
# (tests/test_attn_route.c); with the real kernels the fused ops pass it and serve.
add_executable(test_attn_route test_attn_route.c)
target_link_libraries(test_attn_route PRIVATE clg_testutil)
target_include_directories(test_attn_route PRIVATE ${CMAKE_SOURCE_DIR}/backend)
add_test(NAME test_attn_route COMMAND test_attn_route)
add_test(NAME test_attn_route_mutant COMMAND test_attn_route ${CLG_ATTN_MUTANT_DIR})
set_tests_properties(test_attn_route test_attn_route_mutant PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
# The gpt model and generation: GPT-2's names and initialisation, the tied embedding's gradient,
# the KV cache against the full forward (greedy ids equal), sampling and stops, dropout
# (tests/test_gpt.c), on every device.
clg_test(test_gpt)
# `clgrad train --model gpt` and `clgrad generate` (tests/test_generate_cli.sh): GPT-2's names in
# the checkpoint, greedy text with and without the KV cache the same, seeds, --stop, refusals.
add_test(NAME test_generate_cli COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_generate_cli.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_generate_cli PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
# GPT-2's own layout (transformer.* names, Conv1D (in, out) weights) loaded into the gpt model and
# written back, against a numpy forward of the same weights (tests/test_gpt2_numpy.sh).
add_executable(test_gpt2_load test_gpt2_load.c)
target_link_libraries(test_gpt2_load PRIVATE clg_testutil)
add_test(NAME test_gpt2_numpy COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_gpt2_numpy.sh $<TARGET_FILE:test_gpt2_load>
  ${CMAKE_SOURCE_DIR}/tests/check_gpt2_numpy.py ${CMAKE_SOURCE_DIR}/.venv/bin/python python3)
set_tests_properties(test_gpt2_numpy PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
