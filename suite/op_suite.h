/* The op suite as a library: every op at several shapes, layouts and dtypes, run on one device and
 * on the reference backend and compared (ggml's test-backend-ops in spirit). tests/test_ops.c
 * and `clgrad compare` drive it. The cases are described in tests/test_ops.h and come from
 * tests/ops_cases_*.c plus the base cases in op_suite.c.
 *
 * Nothing is printed unless opts.verbose is set, nothing exits: the report says what happened.
 * Not thread-safe (the case table is built once, on first use, in static storage). */
#ifndef CLG_OP_SUITE_H
#define CLG_OP_SUITE_H

#include <clgrad.h>
#include <clg_backend_impl.h> /* the suites read backends' fields */

#include <stddef.h>
#include <stdint.h>

typedef enum { OP_CASE_PASS, OP_CASE_FAIL, OP_CASE_UNSUPPORTED } op_case_outcome;

#define OP_SUITE_NAME_LEN 192
#define OP_SUITE_OP_LEN 48

typedef struct {
	char name[OP_SUITE_NAME_LEN]; /* e.g. "add [31x17] offset f16" */
	char op[OP_SUITE_OP_LEN];     /* op name, " f16" or " bf16" appended for 16-bit cases */
	clg_op opcode;
	int f16;                      /* 0 float32 (or others), 1 float16, 2 bfloat16 */
	op_case_outcome outcome;
	double err;        /* normalized squared error; INFINITY: NaN/Inf positions differ; NAN: not compared */
	double threshold;  /* the case's threshold on err */
	size_t nelems;     /* elements compared (the whole dst buffer) */
	size_t ndiff;      /* float16: results that differ from the reference at all */
	int maxulp;        /* float16: the largest difference, in half ulps */
	char message[384]; /* why it failed or is unsupported; empty on pass */
} op_case_result;

/* One op (and dtype), over the cases run. */
typedef struct {
	char op[OP_SUITE_OP_LEN];
	clg_op opcode;
	int f16;           /* as op_case_result's */
	int pass, fail, unsupported;
	double worst_err;  /* largest err over the compared cases (INFINITY: NaN/Inf disagreement) */
	double threshold;  /* the threshold of that case */
	char worst_case[OP_SUITE_NAME_LEN];
} op_result;

typedef struct {
	const char *op; /* only these ops (clg_op_name, comma-separated; covers their float16 cases); NULL: all */
	int small;      /* only cases of at most 64 elements per operand (256 for explicit operands) */
	int quick;      /* at most OP_SUITE_QUICK_PER_OP cases per op and dtype, spread over its list */
	int verbose;    /* one line per case on stdout */
	uint64_t seed;  /* mixed into every case's input seed (op_suite.c's case_seed): 0 the suite's usual
			 * inputs, any other value other inputs for the same cases (test_ops --seed) */
	/* called after each case (progress, streaming of failures); may be NULL */
	void (*on_case)(const op_case_result *r, void *ctx);
	void *ctx;
} op_suite_opts;

#define OP_SUITE_QUICK_PER_OP 4

typedef struct {
	op_case_result *cases; /* every case run, in order */
	int ncases;
	op_result *ops;        /* every op met: float32 by op id, then float16 by op id */
	int nops;
	int pass, fail, unsupported;
} op_suite_report;

/* Runs the selected cases on dev and ref (dev may be ref itself) and fills rep (free it with
 * op_suite_report_free, also after a failure). Returns CLG_OK when the suite ran, whatever the
 * cases found; an error (out of memory) when it could not. */
clg_status op_suite_run(clg_backend *ref, clg_backend *dev, const op_suite_opts *o, op_suite_report *rep);
void op_suite_report_free(op_suite_report *rep);

/* The number of cases in the table (every op, both dtypes), building it if needed; -1 when it
 * could not be built. */
int op_suite_case_count(void);

/* A hash (FNV-1a, 64 bits) of every case's name, which holds its op, shapes, layout and dtype:
 * equal on two builds that run the same cases. 0 when the table could not be built. */
uint64_t op_suite_case_hash(void);

#endif
