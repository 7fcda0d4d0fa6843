# `clgrad bench fft --json` (cli/bench_fft.c): its output checked against schema clgrad-bench-fft/1
# by tests/check_bench_fft_json.py; and the checker fails on a broken output (a row missing, a
# ratio that is not FFTW ms / clgrad ms), so it cannot pass vacuously.
find_program(CLG_BENCH_FFT_PYTHON3 python3)
if(CLG_BENCH_FFT_PYTHON3)
  add_test(NAME test_bench_fft_json COMMAND ${CLG_BENCH_FFT_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/check_bench_fft_json.py
    $<TARGET_FILE:clgrad_cli>)
  add_test(NAME test_bench_fft_json_broken COMMAND ${CLG_BENCH_FFT_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/check_bench_fft_json.py
    --check-only ${CMAKE_SOURCE_DIR}/tests/data/bench_fft_broken.json 64 1,4)
  set_tests_properties(test_bench_fft_json PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
  set_tests_properties(test_bench_fft_json_broken PROPERTIES WILL_FAIL TRUE)
endif()
