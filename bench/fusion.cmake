# Host overhead per op on the reference backend (frontend + clg_run + autograd), never run by ctest.
add_executable(bench_overhead ${CMAKE_CURRENT_SOURCE_DIR}/bench_overhead.c)
target_link_libraries(bench_overhead PRIVATE clgrad)
