# OpenBLAS, optional, for the peer columns of the GEMM benchmarks (bench/bench_gemm, clgrad bench).
# Sets CLGRAD_HAVE_OPENBLAS (ON/OFF), CLGRAD_OPENBLAS_LIB and CLGRAD_OPENBLAS_INCLUDE.
# Prefers OpenBLAS's own cblas.h (Debian keeps it per threading flavour; the plain
# /usr/include/x86_64-linux-gnu/cblas.h is an alternatives link that may be netlib's).
find_library(CLGRAD_OPENBLAS_LIB NAMES openblas
  PATHS /usr/lib/x86_64-linux-gnu/openblas-pthread /usr/lib/x86_64-linux-gnu)
find_path(CLGRAD_OPENBLAS_INCLUDE cblas.h
  HINTS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/x86_64-linux-gnu/openblas-openmp
        /usr/include/x86_64-linux-gnu/openblas-serial /usr/include/openblas
  PATH_SUFFIXES openblas)
set(CLGRAD_HAVE_OPENBLAS OFF)
if(CLGRAD_OPENBLAS_LIB AND CLGRAD_OPENBLAS_INCLUDE)
  file(STRINGS ${CLGRAD_OPENBLAS_INCLUDE}/cblas.h _clg_ob_api REGEX "openblas_get_num_threads")
  if(_clg_ob_api)
    set(CLGRAD_HAVE_OPENBLAS ON)
  endif()
endif()
