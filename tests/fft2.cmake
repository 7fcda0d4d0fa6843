# 2-D FFTs (frontend/ops_fft2.c) on every device against a direct 2-D DFT in double (tests/test_fft2.c).
clg_test(test_fft2)
