/* The self-test's cases (cl_selftest_cases.c): small calls of every op family, run on an OpenCL
 * device and on the reference backend and compared; cl_selftest.c decides the routes. */
#ifndef CLG_CL_SELFTEST_CASES_H
#define CLG_CL_SELFTEST_CASES_H

#include "cl_internal.h"
#include "clg_selftest.h"

typedef struct clg_st_cases clg_st_cases;

/* What the cases of one op found. */
typedef struct {
	int failed;        /* a case gave a wrong result */
	int errored;       /* a case failed to run on the device */
	double worst;      /* worst normalized error */
	double tol;
	clg_status status; /* of the first error */
	char msg[160];     /* its message */
} clg_st_result;

/* The case list (NULL when out of host memory). */
clg_st_cases *clg_st_cases_new(void);
void clg_st_cases_free(clg_st_cases *l);
/* The float16 cases, for devices that compute in half (NULL when out of host memory). */
clg_st_cases *clg_st_half_cases_new(void);
/* Runs the cases of the ops with want[op] set (every op's when want is NULL) whose op dev still
 * has, folding them into res[op] (CLG_OP_COUNT entries) and counting them in info. A case that
 * does not run on the reference backend is a broken case: skipped with a CLGRAD_DEBUG message. */
void clg_st_cases_run(const clg_st_cases *l, clg_backend *dev, clg_backend *ref, const unsigned char *want,
		      clg_st_result *res, clg_selftest_info *info);
/* Whether the list has a case of op. */
int clg_st_cases_has(const clg_st_cases *l, clg_op op);

#endif
