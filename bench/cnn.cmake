# bench_cnn: one training step of the Fashion-MNIST CNN (batch 128, Adam) on a device, with an
# optional per-op profile (--profile or CLGRAD_PROFILE=1). The profile wraps clg_run at link time,
# so the library carries no profiling code.
add_executable(bench_cnn bench_cnn.c)
target_link_libraries(bench_cnn PRIVATE clgrad)
target_link_options(bench_cnn PRIVATE -Wl,--wrap=clg_run)
