# OpenBLAS for the CLI (optional): `clgrad bench gemm|sweep` prints cblas_sgemm next to clgrad's
# GEMM when configure finds it (same detection as bench/CMakeLists.txt: OpenBLAS's own cblas.h).
find_library(CLGRAD_CLI_OPENBLAS_LIB NAMES openblas
  PATHS /usr/lib/x86_64-linux-gnu/openblas-pthread /usr/lib/x86_64-linux-gnu)
find_path(CLGRAD_CLI_OPENBLAS_INCLUDE cblas.h
  HINTS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/x86_64-linux-gnu/openblas-openmp
        /usr/include/x86_64-linux-gnu/openblas-serial /usr/include/openblas
  PATH_SUFFIXES openblas)
set(CLGRAD_CLI_OPENBLAS OFF)
if(CLGRAD_CLI_OPENBLAS_LIB AND CLGRAD_CLI_OPENBLAS_INCLUDE)
  file(STRINGS ${CLGRAD_CLI_OPENBLAS_INCLUDE}/cblas.h _clg_cli_ob_api REGEX "openblas_get_num_threads")
  if(_clg_cli_ob_api)
    set(CLGRAD_CLI_OPENBLAS ON)
  endif()
endif()
if(CLGRAD_CLI_OPENBLAS)
  message(STATUS "cli: clgrad bench compares with OpenBLAS ${CLGRAD_CLI_OPENBLAS_LIB}")
  target_compile_definitions(clgrad_cli PRIVATE CLG_HAVE_OPENBLAS=1)
  target_include_directories(clgrad_cli PRIVATE ${CLGRAD_CLI_OPENBLAS_INCLUDE})
  target_link_libraries(clgrad_cli PRIVATE ${CLGRAD_CLI_OPENBLAS_LIB})
else()
  message(STATUS "cli: OpenBLAS not found: clgrad bench gemm runs without its OpenBLAS column")
endif()
