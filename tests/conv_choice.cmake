# conv1d's choice between im2col + GEMM and the FFT by the crossover `clgrad tune` stores
# (frontend/conv_choice.c, clg_tune_store_fft_conv): both paths agree, env forcing, tune file line.
clg_test(test_conv_choice)
