# Generation with and without the gpt model's KV cache at T 512 (bench/bench_generate.c), never run
# by ctest.
add_executable(bench_generate ${CMAKE_CURRENT_SOURCE_DIR}/bench_generate.c)
target_link_libraries(bench_generate PRIVATE clgrad)
