# Optional Open MPI for `clgrad train --mpi` (cli/train_mpi.c): found, linked and announced; when
# absent the CLI still builds and --mpi says how to get it.
find_package(MPI COMPONENTS C QUIET)
if(MPI_C_FOUND)
  target_link_libraries(clgrad_cli PRIVATE MPI::MPI_C)
  target_compile_definitions(clgrad_cli PRIVATE CLGRAD_HAVE_MPI)
  message(STATUS "clgrad: MPI found (${MPI_C_LIBRARY_NAMES}): clgrad train --mpi is available")
else()
  message(STATUS "clgrad: MPI not found: clgrad train --mpi is off (install openmpi-bin libopenmpi-dev)")
endif()
