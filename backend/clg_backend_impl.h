/* The backend object's fields: private to the library, its command and its tests (not installed).
 * Users of the installed API hold a clg_backend * and read the device through clg_backend_info. */
#ifndef CLG_BACKEND_IMPL_H
#define CLG_BACKEND_IMPL_H

#include "clg_backend.h"

struct clg_backend {
	const clg_backend_iface *iface;
	clg_op_fn ops[CLG_OP_COUNT];   /* NULL: op not supported on this device */
	clg_device_info info;
	void *ctx;                     /* backend-private state */
	/* per family: the shape in use and why (read through clg_backend_kernel_shape) */
	clg_kernel_shape shape[CLG_KFAM_COUNT];
	char shape_why[CLG_KFAM_COUNT][64];
	/* launch recorder of `clgrad bench step` (clg_record.h); NULL, the default: nothing recorded */
	struct clg_recorder *recorder;
	/* per-op timer of `train --profile` (clg_op_timer.h); NULL, the default: ops not timed */
	struct clg_op_timer *op_timer;
	/* the self-test of an op at its first use (cl_selftest.c), which may route it away before it
	 * runs; half: the call has a float16 operand. NULL once nothing is left to test (the
	 * reference backend: always) */
	void (*first_use)(clg_backend *be, clg_op op, int half);
};

#endif
