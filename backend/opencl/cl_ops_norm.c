/* OpenCL launchers of the norm family (kernels_cl/norm.cl): LAYER_NORM and LAYER_NORM_BACKWARD,
 * ROW ops run as one work-group per row (the last dim), rows and their elements at any strides. */
#include "cl_internal.h"

/* eps in f[0]; local scratch: two values per work-item (the backward's two sums share a reduction) */
static clg_status norm_run(clg_backend *be, const clg_op_call *c) { return clg_cl_row_launch(be, c, "norm", 1, 2); }

void clg_cl_register_norm(clg_backend *be)
{
	be->ops[CLG_OP_LAYER_NORM] = norm_run;
	be->ops[CLG_OP_LAYER_NORM_BACKWARD] = norm_run;
}
