# Elementwise ops on two-dim geometries (kernels_cl/elementwise.cl): the NAME_2d kernels (chosen
# automatically: no division per element; the broadcasts (N, C) op (C) and (N, C) op (N, 1), the
# suite's bcast and bcast_col layouts, and transposed copies) and, with CLGRAD_EW_2D=0, the
# general strided NAME_s kernels, on every device. Unary ops (copy, exp, cast) bind one source,
# fill none, where three.
foreach(mode 1 0)
  foreach(op add mul copy exp where fill cast relu_backward)
    add_test(NAME test_ew2d_${mode}_${op} COMMAND test_ops --op ${op})
    set_tests_properties(test_ew2d_${mode}_${op} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT
      "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;CLGRAD_EW_2D=${mode}")
  endforeach()
endforeach()
