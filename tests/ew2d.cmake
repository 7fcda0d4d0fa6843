# Elementwise ops on two-dim geometries (kernels_cl/elementwise.cl): the NAME_2d kernels (chosen
# automatically: no division per element; the broadcasts (N, C) op (C) and (N, C) op (N, 1), the
# suite's bcast and bcast_col layouts, and transposed copies) and, with CLGRAD_EW_2D=0, the
# general strided NAME_s kernels, on every device. Unary ops (copy, exp, cast) bind one source,
# fill none, where three.
# Both modes in one process (--with, tests/test_ops.c).
clg_env_test(test_ew2d 600 "${CLG_TEST_ENV}"
  test_ops --op add,mul,copy,exp,where,fill,cast,relu_backward --with EW_2D=1 --with EW_2D=0)
