# FFTW for the CLI (optional; Debian's libfftw3-dev): `clgrad bench fft` times fftwf next to
# clgrad's transforms in the same run when configure finds it (cli/bench_fft_fftw.c).
find_path(CLGRAD_FFTW_INCLUDE fftw3.h)
find_library(CLGRAD_FFTW_LIB fftw3f)
if(CLGRAD_FFTW_INCLUDE AND CLGRAD_FFTW_LIB)
  message(STATUS "cli: clgrad bench fft compares with FFTW ${CLGRAD_FFTW_LIB}")
  target_compile_definitions(clgrad_cli PRIVATE CLG_HAVE_FFTW=1)
  target_include_directories(clgrad_cli PRIVATE ${CLGRAD_FFTW_INCLUDE})
  target_link_libraries(clgrad_cli PRIVATE ${CLGRAD_FFTW_LIB})
else()
  message(STATUS "cli: FFTW (libfftw3-dev) not found: clgrad bench fft runs without its FFTW column")
endif()
