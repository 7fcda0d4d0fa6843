# The op suite and the gradient checks as a library (suite/), run by tests/test_ops.c,
# tests/test_grad.c and `clgrad compare` (compare/compare_ops.c). The case files stay in tests/ and
# are globbed, so that a new family file only needs its adder declared and listed in the suite.
file(GLOB CLGRAD_SUITE_CASES CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/tests/ops_cases_*.c ${CMAKE_SOURCE_DIR}/tests/grad_cases_*.c)
add_library(clgrad_suite STATIC
  ${CMAKE_SOURCE_DIR}/suite/op_suite.c ${CMAKE_SOURCE_DIR}/suite/grad_suite.c ${CLGRAD_SUITE_CASES})
target_include_directories(clgrad_suite PUBLIC ${CMAKE_SOURCE_DIR}/suite PRIVATE ${CMAKE_SOURCE_DIR}/tests)
target_link_libraries(clgrad_suite PUBLIC clgrad m)
set_target_properties(clgrad_suite PROPERTIES POSITION_INDEPENDENT_CODE ON) # linked into the Python extension
target_link_libraries(clgrad_cli PRIVATE clgrad_suite)
# A case file whose family the suite does not call would never run: say so at configure time.
foreach(file IN LISTS CLGRAD_SUITE_CASES)
  get_filename_component(family ${file} NAME_WE)
  if(family MATCHES "^ops_cases_")
    set(runner ${CMAKE_SOURCE_DIR}/suite/op_suite.c)
  else()
    set(runner ${CMAKE_SOURCE_DIR}/suite/grad_suite.c)
  endif()
  file(STRINGS ${runner} listed REGEX "^[ \t]*${family},")
  if(NOT listed)
    message(WARNING "${file}: ${family} is not listed in ${runner}; its cases never run")
  endif()
endforeach()
