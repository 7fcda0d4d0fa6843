/* State of the known-bad list and the self-test on one OpenCL device, shared by cl_selftest.c (the
 * routes, the test at first use) and cl_selftest_cache.c (the cached result). */
#ifndef CLG_CL_SELFTEST_INTERNAL_H
#define CLG_CL_SELFTEST_INTERNAL_H

#include "cl_selftest_cases.h"
#include "cl_tune.h"

#define SELFTEST_FORMAT 6u /* bump when the cases or the file format change (6: per-op \"tested\" lines) */
#define MAX_ROUTES CLG_OP_COUNT

struct clg_cl_selftest {
	clg_route routes[MAX_ROUTES];
	int nroutes;
	clg_selftest_info info;
	clg_cl_gemm_impl gemm_impl;  /* the GEMM fallback, when GEMM is routed to one */
	clg_op_fn gemm_fn;           /* the op table's GEMM before routing */
	/* testing at first use: per op, whether its cases are still to run; tested: ran here or
	 * read from the cached result (what the cached result lists) */
	unsigned char pending[CLG_OP_COUNT], tested[CLG_OP_COUNT];
	int half_pending, half_tested;
	clg_st_cases *cases;         /* the float32 cases */
	clg_backend *ref;            /* the reference backend, opened at the first test */
	int have_path, batch;        /* batch: a run over several ops stores once, at its end */
	char dir[4096], path[4200];
	uint64_t key[2];
};

/* The route of op in s (an index), or -1. */
int clg_st_find_route(const struct clg_cl_selftest *s, clg_op op);
/* Records and applies a route (the first one for an op wins; a fallback exists for GEMM only). */
void clg_st_add_route(clg_backend *be, clg_op op, clg_route_action action, const char *why);
/* The op named name[0, len), 0; or -1. */
int clg_st_op_by_name(const char *name, size_t len, clg_op *out);
/* Native float16 off on be, with why, said once on stderr. */
void clg_st_half_off(clg_backend *be, const char *why);

/* The cached result (cl_selftest_cache.c): its key (what it depends on), reading it (the routes,
 * the GEMM choice, native half off, the ops tested; 0 when the file exists and is complete) and
 * writing it atomically. */
void clg_st_result_key(clg_backend *be, uint64_t key[2]);
int clg_st_load_result(clg_backend *be, const char *path, const uint64_t key[2]);
void clg_st_store_result(clg_backend *be, const char *dir, const char *path, const uint64_t key[2]);

#endif
