/* OpenCL launchers of the norm family (kernels_cl/norm.cl): LAYER_NORM and LAYER_NORM_BACKWARD,
 * ROW ops run as one work-group per row (the last dim), rows and their elements at any strides. */
#include "cl_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static clg_status norm_run(clg_backend *be, const clg_op_call *c)
{
	const clg_view *views[CLG_CL_ROW_NOPS];
	const char *op = clg_op_name(c->op);
	int nv = 1 + clg_op_nsrc(c->op), f64 = c->dst.dtype == CLG_F64;
	char opts[256], kname[64];
	clg_cl_row_geom g;
	cl_kernel k;
	cl_mem mem[CLG_CL_ROW_NOPS];
	size_t local;
	int64_t rows;
	clg_status st;
	double eps64 = c->f[0];
	float eps32 = (float)c->f[0];

	st = clg_cl_check_dtype(be, c, c->dst.dtype);
	for (int i = 0; !st && i < nv; i++) {
		views[i] = i ? &c->src[i - 1] : &c->dst;
		st = clg_cl_check_int_range(be, c, views[i]);
	}
	if (st)
		return st;
	/* an unused source aliases the last operand, so its (never made) reads would stay in range */
	for (int i = nv; i < CLG_CL_ROW_NOPS; i++)
		views[i] = views[nv - 1];
	rows = clg_cl_row_geometry(views, CLG_CL_ROW_NOPS, &g);
	if (rows == 0)
		return CLG_OK;
	if (rows > INT_MAX) /* possible with broadcast (stride 0) views: the kernel counts rows in int */
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': %lld rows exceed 2^31", op,
				be->info.name, (long long)rows);
	snprintf(kname, sizeof(kname), "%s_rows", op);
	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	st = clg_cl_kernel(be, "norm", opts, kname, &k);
	if (st)
		return st;
	local = clg_cl_group_size(be, k, g.C);
	for (int i = 0; i < CLG_CL_ROW_NOPS; i++)
		mem[i] = (cl_mem)views[i]->buf->handle;
	{
		size_t acc = f64 ? sizeof(double) : sizeof(float);
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), acc, 2 * local * acc};
		const void *vals[] = {&g, &mem[0], &mem[1], &mem[2], f64 ? (const void *)&eps64 : (const void *)&eps32,
				      NULL};
		st = clg_cl_set_args(be, k, op, 6, sizes, vals);
	}
	if (st)
		return st;
	return clg_cl_launch_1d(be, k, (size_t)rows * local, local, op);
}

void clg_cl_register_norm(clg_backend *be)
{
	be->ops[CLG_OP_LAYER_NORM] = norm_run;
	be->ops[CLG_OP_LAYER_NORM_BACKWARD] = norm_run;
}
