/* OpenCL launcher for the ROW ops (softmax family, kernels_cl/softmax.cl; layer norm through
 * cl_ops_norm.c): one work-group per row (the last dim; GPU shape) or one work-item per row (CPU
 * shape), as clg_backend_kernel_shape says for family "row"; rows and elements at any strides. */
#include "cl_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t clg_cl_row_geometry(const clg_view *const *v, int nv, clg_cl_row_geom *g)
{
	int nd = v[0]->ndim;
	int64_t rows = 1;

	memset(g, 0, sizeof(*g));
	g->C = nd > 0 ? (cl_int)v[0]->shape[nd - 1] : 1;
	for (int k = 0; k < nv; k++) {
		g->off[k] = (cl_int)v[k]->offset;
		g->cst[k] = nd > 0 ? (cl_int)v[k]->stride[nd - 1] : 0;
	}
	for (int d = 0; d < nd - 1; d++) {
		int64_t sz = v[0]->shape[d];
		if (sz == 1)
			continue;
		rows *= sz;
		int merge = g->nd > 0;
		for (int k = 0; k < nv && merge; k++)
			merge = g->st[k][g->nd - 1] == v[k]->stride[d] * sz;
		if (merge) {
			g->shape[g->nd - 1] *= (cl_int)sz;
			for (int k = 0; k < nv; k++)
				g->st[k][g->nd - 1] = (cl_int)v[k]->stride[d];
		} else {
			g->shape[g->nd] = (cl_int)sz;
			for (int k = 0; k < nv; k++)
				g->st[k][g->nd] = (cl_int)v[k]->stride[d];
			g->nd++;
		}
	}
	return g->C == 0 ? 0 : rows;
}

int clg_cl_rows_per_item(clg_backend *be, int C, int contiguous, int64_t rows, int pipelined)
{
	/* CLGRAD_ROWS16 at each call (a set between ops applies to the next): 0, 1, or -1 (auto: by the rows) */
	const char *e = clg_cfg_str(CLG_CFG_ROWS16);
	int forced = !strcmp(e, "0") ? 0 : !strcmp(e, "1") ? 1 : -1;
	int64_t cus = be->info.compute_units ? be->info.compute_units : 1;

	if (!contiguous || !forced)
		return 1;
	if (C % 16 == 0 && C <= 64)
		return rows >= 16 && (forced == 1 || (rows + 15) / 16 >= 2 * cus) ? 16 : 1;
	if (pipelined && C >= 16)
		return rows >= 2 && (forced == 1 || (rows + 3) / 4 >= 2 * cus) ? 4 : 1;
	return 1;
}

clg_status clg_cl_row_launch(clg_backend *be, const clg_op_call *c, const char *program, int with_eps,
			     int scratch_per_item)
{
	const clg_view *views[CLG_CL_ROW_NOPS];
	const char *op = clg_op_name(c->op);
	int nv = 1 + clg_op_nsrc(c->op), f64 = c->dst.dtype == CLG_F64;
	int cpu = clg_backend_kernel_shape(be, CLG_KFAM_ROW, NULL) == CLG_SHAPE_CPU;
	char opts[256], kname[64];
	clg_cl_row_geom g;
	cl_kernel k;
	cl_mem mem[CLG_CL_ROW_NOPS];
	size_t local, acc;
	int64_t rows;
	cl_int nrows;
	int by = 1; /* rows a work-item */
	double eps64 = c->f[0];
	float eps32 = (float)c->f[0];
	clg_status st;

	st = clg_cl_check_dtype(be, c, c->dst.dtype);
	for (int i = 0; !st && i < nv; i++) {
		views[i] = i ? &c->src[i - 1] : &c->dst;
		st = clg_cl_check_int_range(be, c, views[i]);
	}
	if (st)
		return st;
	/* an unused source aliases the last operand, as in the elementwise launcher */
	for (int i = nv; i < CLG_CL_ROW_NOPS; i++)
		views[i] = views[nv - 1];
	rows = clg_cl_row_geometry(views, CLG_CL_ROW_NOPS, &g);
	if (rows == 0)
		return CLG_OK;
	if (rows > INT_MAX) /* possible with broadcast (stride 0) views: the kernel counts rows in int */
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': %lld rows exceed 2^31", op,
				be->info.name, (long long)rows);
	nrows = (cl_int)rows;
	/* softmax, log-softmax, layer norm and its backward: <op>_rows16_cpu; log-softmax: its _rows4_cpu */
	if (cpu && c->op != CLG_OP_SOFTMAX_BACKWARD && c->op != CLG_OP_LOG_SOFTMAX_BACKWARD)
		by = clg_cl_rows_per_item(be, g.C, g.cst[0] == 1 && g.cst[1] == 1 && (nv < 3 || g.cst[2] == 1), rows,
					  c->op == CLG_OP_LOG_SOFTMAX);
	snprintf(kname, sizeof(kname), "%s_rows%s", op, by == 16 ? "16_cpu" : by == 4 ? "4_cpu" : cpu ? "_cpu" : "");
	clg_cl_row_options(be, c->dst.dtype, opts, sizeof(opts));
	st = clg_cl_kernel(be, program, opts, kname, &k);
	if (st)
		return st;
	acc = f64 ? sizeof(double) : sizeof(float);
	local = cpu ? clg_cl_cpu_group_size(be, k, (rows + by - 1) / by)
		    : clg_cl_group_size_local(be, k, g.C, scratch_per_item * acc);
	/* PoCL, log-softmax over (1024, 512): 16 groups of 16 work-items took 109-120 us from enqueue to
	 * finish, 8 of 32 124-134 (the kernels alike); Intel's runtime within 1% */
	if (by == 4 && local > 16)
		local = 16;
	for (int i = 0; i < CLG_CL_ROW_NOPS; i++)
		mem[i] = (cl_mem)views[i]->buf->handle;
	{
		/* (geometry, dst, src0, src1, [eps,] local scratch (GPU) or the number of rows (CPU)) */
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem), acc,
				  cpu ? sizeof(nrows) : scratch_per_item * local * acc};
		const void *vals[] = {&g, &mem[0], &mem[1], &mem[2], f64 ? (const void *)&eps64 : (const void *)&eps32,
				      cpu ? (const void *)&nrows : NULL};
		if (!with_eps) {
			sizes[4] = sizes[5];
			vals[4] = vals[5];
		}
		st = clg_cl_set_args(be, k, op, with_eps ? 6 : 5, sizes, vals);
	}
	if (st)
		return st;
	return clg_cl_launch_1d(be, k, cpu ? (size_t)((rows + by - 1) / by) : (size_t)rows * local, local, op);
}

clg_status clg_cl_row(clg_backend *be, const clg_op_call *c) { return clg_cl_row_launch(be, c, "softmax", 0, 1); }
