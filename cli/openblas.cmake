# OpenBLAS for the CLI (optional): `clgrad bench gemm|sweep` prints cblas_sgemm next to clgrad's
# GEMM when configure finds it (cmake/find_openblas.cmake).
include(${CMAKE_SOURCE_DIR}/cmake/find_openblas.cmake)
if(CLGRAD_HAVE_OPENBLAS)
  message(STATUS "cli: clgrad bench compares with OpenBLAS ${CLGRAD_OPENBLAS_LIB}")
  target_compile_definitions(clgrad_cli PRIVATE CLG_HAVE_OPENBLAS=1)
  target_include_directories(clgrad_cli PRIVATE ${CLGRAD_OPENBLAS_INCLUDE})
  target_link_libraries(clgrad_cli PRIVATE ${CLGRAD_OPENBLAS_LIB})
else()
  message(STATUS "cli: OpenBLAS not found: clgrad bench gemm runs without its OpenBLAS column")
endif()
