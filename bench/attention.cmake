# Fused against composed scaled dot-product attention (bench/bench_attention.c), never run by ctest.
add_executable(bench_attention ${CMAKE_CURRENT_SOURCE_DIR}/bench_attention.c)
target_link_libraries(bench_attention PRIVATE clgrad)
