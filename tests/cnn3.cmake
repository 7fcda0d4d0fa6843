# col2im's CPU-shape row kernel (col2im_rows: 8 pixels a step, a step back, lane-by-lane run ends)
# under Oclgrind, which checks its loads stay inside the columns; the op suite's col2im cases
# 8, 14 and 19 pixels wide reach it (tests/ops_cases_conv.c). With im2col: both walk images
# first where cols is conv's (R, N * L) matrix (the suite's "cols row-major" cases). The 2x2
# pools' row kernels are run under Oclgrind by tests/cnnfast.cmake (max_pool2d,
# max_pool2d_backward, cpu shape).
if(CLG_OCLGRIND)
  clg_env_test(test_cnn3_oclgrind_cpu_col2im 600 "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;CLGRAD_KERNEL_SHAPE=cpu"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small --op col2im,im2col)
endif()
