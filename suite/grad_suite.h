/* Gradient checks as a library: for each differentiable op (and composites), the analytic
 * gradient of loss = sum(f(inputs) * R) in float32 on a device against central differences
 * computed in double on the reference backend; the forward loss is checked too. tests/test_grad.c
 * and `clgrad compare` drive it. The cases are described in tests/test_grad.h and come from
 * tests/grad_cases_*.c plus the base cases in grad_suite.c.
 *
 * Nothing is printed unless opts.verbose is set, nothing exits. Not thread-safe (a case's own
 * checks, CHECK in tests/test_grad.h, report into the result being filled). */
#ifndef CLG_GRAD_SUITE_H
#define CLG_GRAD_SUITE_H

#include <clgrad.h>
#include <clg_backend_impl.h> /* the suites read backends' fields */

typedef enum { GRAD_OK, GRAD_FAIL, GRAD_CANNOT_RUN } grad_outcome;

typedef struct {
	const char *name;      /* the case (static storage) */
	const char *device;    /* the backend's device name (valid while the backend is open) */
	int ref_pass;          /* 1: the reference backend's own float32 pass */
	grad_outcome outcome;  /* GRAD_CANNOT_RUN: the device does not support an op the case needs */
	double worst_rel_err;  /* max over inputs of max |num - analytic| / (max |num| + 1e-3); NAN if none */
	double tol;            /* the case's tolerance on it */
	double loss, ref_loss; /* forward loss on the device, and in double on the reference */
	int nfail;             /* failed checks */
	char message[768];     /* the failed checks, one per line; empty when ok */
} grad_result;

typedef struct {
	const char *only;  /* only the cases of these names (comma-separated); NULL: all */
	int quick;         /* only the quick subset: composites that together touch most ops */
	int max_cases;     /* > 0: at most this many cases (after the filters) */
	int skip_ref_pass; /* do not check the reference backend's own float32 gradients */
	int verbose;       /* one line per case and device on stdout */
	/* called after each case and device; may be NULL */
	void (*on_result)(const grad_result *r, void *ctx);
	void *ctx;
} grad_suite_opts;

/* Runs the selected cases: the reference's float32 pass (unless skipped), then each of devs.
 * *results (malloc'd, free() it) gets one entry per case and backend. Returns CLG_OK when the
 * checks ran, whatever they found; CLG_ERR_OOM when they could not. */
clg_status grad_suite_run(clg_backend *ref, clg_backend **devs, int ndevs, const grad_suite_opts *o,
			  grad_result **results, int *nresults);

/* The number of cases (all families). */
int grad_suite_case_count(void);

/* A failed check inside a case (CHECK in tests/test_grad.h): recorded in the current result;
 * ignored outside a run. */
void grad_suite_check_failed(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
