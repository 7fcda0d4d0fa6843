# GELU's CPU-shaped kernels in fused.cl under Oclgrind (no access out of bounds): bias_act_backward's
# sixteen columns a work-item (bias_act_backward_v16; the op suite's small cases include a 64-column
# one, which takes that shape on up to two compute units) and gelu's sixteen elements a work-item
# with the tail one by one (gelu_v16).
if(CLG_OCLGRIND)
 clg_env_test(test_ops_oclgrind_cpu_gelu 900 "${CLG_TEST_ENV};CLGRAD_KERNEL_SHAPE=cpu"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op bias_act_backward,gelu)
endif()
