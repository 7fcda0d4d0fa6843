/* Gradient-check cases, shared by the suite (suite/grad_suite.c) and the per-family case files
 * (tests/grad_cases_*.c). A case builds f(inputs); the check compares the gradient of
 * sum(f(inputs) * R) on every device with central differences in double on the reference.
 * A new family: declare it below and add it to grad_families[] in suite/grad_suite.c. */
#ifndef CLG_TEST_GRAD_H
#define CLG_TEST_GRAD_H

#include "grad_suite.h"

#include <clgrad.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A case's own check (beyond the gradient): a failure is recorded in the result of the case and
 * device being checked (the suite never prints or exits on its own). */
#define CHECK(cond, ...)                                                                  \
	do {                                                                              \
		if (!(cond))                                                              \
			grad_suite_check_failed(__FILE__, __LINE__, __VA_ARGS__);          \
	} while (0)
#define CHECK_OK(expr)                                                                    \
	do {                                                                              \
		clg_status s_ = (expr);                                                   \
		CHECK(s_ == CLG_OK, "%s -> %s: %s", #expr, clg_status_name(s_), clg_last_error()); \
	} while (0)

/* t's values as doubles (float32 or float64 tensors; int32 as integers), n <= 256 elements for
 * 32-bit ones: for cases that check values against a host computation. 1 on success. */
int grad_read_doubles(clg_tensor *t, double *out, int64_t n);

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
const gcase *grad_cases_fused(int *n); /* linear + activation, softmax cross-entropy */
const gcase *grad_cases_fft(int *n);   /* fft, ifft, rfft, irfft, complex_mul */
const gcase *grad_cases_attention(int *n); /* fused attention, and the composite */
const gcase *grad_cases_addnorm(int *n);   /* residual add + layer norm with gamma and beta */
const gcase *grad_cases_reduce(int *n);    /* max / min / argmax / argmin over any dim */
const gcase *grad_cases_loss(int *n);      /* cross-entropy and NLL with options */
const gcase *grad_cases_rnn(int *n);       /* GRU and LSTM cells, a GRU over steps */
const gcase *grad_cases_torch(int *n);     /* torch ops: clamp with tensors, broadcast matmul, pooling modes, conv_transpose2d, interpolate, group/RMS norm */

#endif
