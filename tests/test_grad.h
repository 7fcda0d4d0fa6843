/* Gradient-check cases, shared by tests/test_grad.c and the per-family case files
 * (tests/grad_cases_*.c). A case builds f(inputs); the check compares the gradient of
 * sum(f(inputs) * R) on every device with central differences in double on the reference. */
#ifndef CLG_TEST_GRAD_H
#define CLG_TEST_GRAD_H

#include "test_util.h"

typedef clg_tensor *(*build_fn)(clg_tensor **in);

typedef struct {
	const char *name;
	int nin;
	int nd[3];
	int64_t shape[3][4];
	float lo, hi;
	build_fn f;
	double tol;  /* > 0: overrides the default relative tolerance (2e-3) */
} gcase;

/* Each family returns its cases and their count. */
const gcase *grad_cases_conv(int *n);
const gcase *grad_cases_index(int *n);
const gcase *grad_cases_norm(int *n);

#endif
