/* Launch recorder for `clgrad bench step` (cli/bench_step.c): every kernel launch a backend
 * enqueues while a recorder is set, with its geometry and an estimate of the bytes and FLOPs it
 * moves. Off by default (be->recorder is NULL: one pointer test per launch); only the bench sets it.
 *
 * Geometry comes from the enqueue sites (backend/opencl/cl_launch.c and the sites that call it);
 * bytes and FLOPs from the op call's shapes (clg_run): every operand read or written once, FLOPs
 * 2 M N K for a GEMM and one per element otherwise, split evenly over the op's launches (a GEMM's
 * FLOPs all go to its last launch that is not a combining pass, the product itself; packing and
 * casts come before it, a split-K sum after). A
 * library call (CLBlast, clFFT) is one record whose geometry is unknown (dims 0). */
#ifndef CLG_RECORD_H
#define CLG_RECORD_H

#include "clg_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	char kernel[48];        /* kernel function name, or "CLBlast SGEMM", "clFFT" */
	char op[24];            /* the op (clg_run) it ran for */
	int dims;               /* 1..3; 0: geometry unknown (a library's own kernels) */
	size_t global[3];       /* work-items per dim (rounded up to whole groups) */
	size_t local[3];        /* 0: left to the driver */
	int64_t items, groups;  /* total work-items and work-groups (groups 0: unknown) */
	int64_t m, n, k, batch; /* GEMM shape (0 for other ops) */
	double bytes, flops;    /* estimates from the op's shapes */
	int64_t elems;          /* the op's parallel work: elements of its largest operand */
	int library;            /* 1: CLBlast or clFFT */
	int combine;            /* 1: a pass that combines partial results (clg_record_combine) */
	int estimated;          /* bytes / flops filled (by the innermost op) */
} clg_launch_record;

typedef struct clg_recorder {
	clg_launch_record *rec;
	int n, cap;
	int dropped;                 /* records lost to a failed allocation */
	const clg_op_call *op;       /* op in progress (clg_run), NULL outside one */
} clg_recorder;

/* Sets (or with NULL clears) the recorder of be; the caller owns r. */
void clg_backend_set_recorder(clg_backend *be, clg_recorder *r);
void clg_recorder_clear(clg_recorder *r); /* frees the records, keeps r usable */

/* For backends: one launch (global/local as enqueued; local NULL: the driver's choice). */
void clg_record_launch(clg_backend *be, const char *kernel, int dims, const size_t *global, const size_t *local);
/* For backends: a library call whose kernels are not seen (m, n, k, batch: a GEMM's, else 0). */
void clg_record_library(clg_backend *be, const char *what, int64_t m, int64_t n, int64_t k, int64_t batch);
/* For backends, after the launch of a pass that combines an op's partial results (split-K slices,
 * a reduction's row blocks): its parallel work is the work partials it reads rather than the op's
 * largest operand, and it carries none of a GEMM's FLOPs. */
void clg_record_combine(clg_backend *be, int64_t work);
/* For clg_run: the op call c has run; its launches are records [first, r->n). */
void clg_record_op_done(clg_recorder *r, const clg_op_call *c, int first);

#ifdef __cplusplus
}
#endif
#endif
