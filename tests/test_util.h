/* Small helpers shared by the tests. */
#ifndef CLG_TEST_UTIL_H
#define CLG_TEST_UTIL_H

#include <clgrad.h>
#include <clg_backend_impl.h> /* tests read backends' fields */
#include <stdio.h>
#include <stdlib.h>

#define SKIP_CODE 77

extern int t_failures;

/* Records a failure (with file:line) and keeps going. */
#define CHECK(cond, ...)                                                          \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                             \
			fputc('\n', stderr);                                      \
			t_failures++;                                             \
		}                                                                 \
	} while (0)

/* A call that must succeed; prints the library's message otherwise. */
#define CHECK_OK(expr)                                                            \
	do {                                                                      \
		clg_status s_ = (expr);                                           \
		CHECK(s_ == CLG_OK, "%s -> %s: %s", #expr, clg_status_name(s_), clg_last_error()); \
	} while (0)

/* Exits 77 when no OpenCL device is present (the test cannot run here). */
void t_require_opencl(void);
/* Number of OpenCL devices (list positions 1..n). */
int t_opencl_count(void);
/* Deterministic uniform numbers in [lo, hi). */
void t_fill_uniform(float *x, size_t n, unsigned seed, float lo, float hi);
/* A temporary folder (mkdtemp) under $TMPDIR or /tmp; the caller removes it with t_rmtree. */
char *t_tmpdir(void);
void t_rmtree(const char *path);
/* A configuration a suite is run under (test_ops and test_grad --with), so that one process walks
 * the variants ctest once ran as one process per environment: "NAME=VALUE[ NAME=VALUE...]" (NAME
 * as clg_config_set takes it, e.g. KERNEL_SHAPE=row=cpu: split at the first '='). t_with_apply
 * sets each through clg_config_set, keeping the values in force, and fails (with a message on
 * stderr) on a malformed spec or a value the option refuses; t_with_restore puts the kept values
 * back. Options read at a device's open apply to backends opened after the apply. */
#define T_WITH_MAX 8
typedef struct {
	int n;
	char *name[T_WITH_MAX], *old[T_WITH_MAX];
} t_with_saved;
int t_with_apply(const char *spec, t_with_saved *saved);
void t_with_restore(t_with_saved *saved);
/* Prints the tally line and returns the exit code. */
int t_finish(const char *name);

#endif
