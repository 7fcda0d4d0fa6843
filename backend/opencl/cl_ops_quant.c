/* OpenCL launchers of the int8 compression ops (kernels_cl/quant.cl). */
#include "cl_internal.h"

#include "../clg_quant_internal.h"

#include <stdio.h>

static clg_status int8_run(clg_backend *be, const clg_op_call *c)
{
	const char *op = clg_op_name(c->op);
	int64_t n64, block64;
	cl_int n, block, off[3];
	cl_mem mem[3];
	const clg_view *v[3];
	char opts[256];
	cl_kernel k;
	int group = c->op == CLG_OP_INT8_SCALES && clg_backend_kernel_shape(be, CLG_KFAM_REDUCE, NULL) == CLG_SHAPE_GPU;
	size_t items, local = 1;
	clg_status st = clg_int8_check(be, c, &n64, &block64);

	if (st)
		return st;
	/* argument order: values or packed input first, then scales, then the output */
	v[0] = &c->src[0];
	v[1] = c->op == CLG_OP_INT8_SCALES ? &c->dst : &c->src[1];
	v[2] = &c->dst;
	for (int j = 0; !st && j < 3; j++) {
		st = clg_cl_check_int_range(be, c, v[j]);
		mem[j] = (cl_mem)v[j]->buf->handle;
		off[j] = (cl_int)v[j]->offset;
	}
	if (st || n64 == 0)
		return st;
	if (block64 > 0x7fffffff)
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': block %lld over 2^31", op, be->info.name,
				(long long)block64);
	n = (cl_int)n64, block = (cl_int)block64;
	clg_cl_dtype_options(be, CLG_F32, opts, sizeof(opts));
	st = clg_cl_kernel(be, "quant", opts, c->op == CLG_OP_INT8_SCALES ? (group ? "int8_scales_group" : "int8_scales_item")
								  : c->op == CLG_OP_INT8_QUANT ? "int8_quant" : "int8_dequant", &k);
	if (st)
		return st;
	{
		size_t is = sizeof(cl_int), ms = sizeof(cl_mem);
		size_t sizes[] = {is, is, ms, is, ms, is, ms, is};
		const void *vals[] = {&n, &block, &mem[0], &off[0], &mem[1], &off[1], &mem[2], &off[2]};
		st = clg_cl_set_args(be, k, op, c->op == CLG_OP_INT8_SCALES ? 6 : 8, sizes, vals);
	}
	if (st)
		return st;
	if (c->op == CLG_OP_INT8_SCALES) {
		size_t nb = (size_t)((n64 + block64 - 1) / block64);
		if (group) { /* the local scratch, one float per work-item */
			cl_int err;
			local = clg_cl_group_size(be, k, block64);
			err = clSetKernelArg(k, 6, local * sizeof(float), NULL);
			if (err != CL_SUCCESS)
				st = clg_cl_fail(be, op, err, "clSetKernelArg(6)");
		}
		items = group ? nb * local : nb;
	} else {
		items = c->op == CLG_OP_INT8_QUANT ? (size_t)(n64 + 3) / 4 : (size_t)n64;
	}
	if (!group)
		local = clg_cl_local_size(be, k, clg_cl_of(be)->wg_size);
	if (st)
		return st;
	return clg_cl_launch_1d(be, k, items, local, op);
}

void clg_cl_register_quant(clg_backend *be)
{
	be->ops[CLG_OP_INT8_SCALES] = int8_run;
	be->ops[CLG_OP_INT8_QUANT] = int8_run;
	be->ops[CLG_OP_INT8_DEQUANT] = int8_run;
}
