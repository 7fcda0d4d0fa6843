/* OpenCL launchers of residual add + layer norm with gamma and beta (kernels_cl/addnorm.cl;
 * semantics in clg_ops.def), in the shape of family "row": forward one launch (a work-group per
 * row on GPUs, a work-item per row on CPUs); backward two, dx with each block of rows' partial
 * column sums, then dgamma and dbeta adding the blocks in order. Operands at any strides. */
#include "cl_internal.h"
#include "../clg_addnorm_internal.h"

#include <string.h>

/* Must match angeom in kernels_cl/addnorm.cl. */
typedef struct {
	cl_int N, C, res;
	cl_int off[7];
	cl_int rs[7];
	cl_int cs[7];
} angeom;

typedef union {
	float f;
	double d;
} scalar;

/* Operand k of the geometry from view v: 2-D (N, C) or 1-D (C). */
static clg_status put(clg_backend *be, const clg_op_call *c, angeom *g, int k, const clg_view *v, cl_mem *mem)
{
	clg_status st = clg_cl_check_int_range(be, c, v);
	mem[k] = (cl_mem)v->buf->handle;
	g->off[k] = (cl_int)v->offset;
	g->rs[k] = v->ndim == 2 ? (cl_int)v->stride[0] : 0;
	g->cs[k] = (cl_int)v->stride[v->ndim - 1];
	return st;
}

static clg_status addnorm_fwd(clg_backend *be, const clg_op_call *c, int cpu, const char *opts, size_t ps,
			      const scalar *eps)
{
	const char *op = clg_op_name(c->op);
	const size_t ms = sizeof(cl_mem);
	angeom g;
	cl_mem mem[7];
	cl_kernel k;
	size_t local;
	clg_status st = CLG_OK;

	memset(&g, 0, sizeof(g));
	g.N = (cl_int)c->dst.shape[0], g.C = (cl_int)c->dst.shape[1], g.res = (cl_int)c->i[0];
	/* y, x, r, gamma, beta, s; without a residual r and s stand for x (never read or written) */
	st = put(be, c, &g, 0, &c->dst, mem);
	for (int j = 0; !st && j < 5; j++)
		st = put(be, c, &g, j + 1, &c->src[g.res || (j != 1 && j != 4) ? j : 0], mem);
	if (!st)
		st = clg_cl_kernel(be, "addnorm", opts, cpu ? "add_layer_norm_cpu" : "add_layer_norm_rows", &k);
	if (st || g.N == 0)
		return st;
	local = cpu ? clg_cl_cpu_group_size(be, k, g.N) : clg_cl_group_size_local(be, k, g.C, ps);
	{
		size_t sizes[] = {sizeof(g), ms, ms, ms, ms, ms, ms, ps, local * ps};
		const void *vals[] = {&g, &mem[0], &mem[1], &mem[2], &mem[3], &mem[4], &mem[5], eps, NULL};
		st = clg_cl_set_args(be, k, op, cpu ? 8 : 9, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, cpu ? (size_t)g.N : (size_t)g.N * local, local, op);
	return st;
}

static clg_status addnorm_bwd(clg_backend *be, const clg_op_call *c, int cpu, const char *opts, size_t ps,
			      const scalar *eps)
{
	const char *op = clg_op_name(c->op);
	const size_t ms = sizeof(cl_mem), is = sizeof(cl_int);
	size_t cus = be->info.compute_units ? be->info.compute_units : 1, local, nb, rb;
	clg_buffer *part = NULL;
	angeom g;
	cl_mem mem[7], pm;
	cl_int rb_i, nb_i;
	scalar beta[2];
	cl_kernel k;
	clg_status st = CLG_OK;

	memset(&g, 0, sizeof(g));
	g.N = (cl_int)c->dst.shape[0], g.C = (cl_int)c->dst.shape[1], g.res = (cl_int)c->i[0];
	/* dx, g, s, gamma, dgamma, dbeta, the earlier gradient (g stands for it when there is none) */
	st = put(be, c, &g, 0, &c->dst, mem);
	for (int j = 0; !st && j < 6; j++)
		st = put(be, c, &g, j + 1, &c->src[j == 5 && !g.res ? 0 : j], mem);
	for (int j = 0; j < 2; j++) {
		if (ps == sizeof(double))
			beta[j].d = c->f[1 + j];
		else
			beta[j].f = (float)c->f[1 + j];
	}
	if (st || g.C == 0)
		return st;
	/* blocks of rows: a few per compute unit, so the partials stay few and the cores busy */
	nb = 8 * cus;
	nb = g.N == 0 ? 1 : nb > (size_t)g.N ? (size_t)g.N : nb;
	rb = g.N == 0 ? 1 : ((size_t)g.N + nb - 1) / nb;
	nb = g.N == 0 ? 1 : ((size_t)g.N + rb - 1) / rb;
	rb_i = (cl_int)rb, nb_i = (cl_int)nb;
	st = clg_buffer_alloc(be, nb * 2 * (size_t)g.C * ps, &part);
	if (st)
		return st;
	pm = (cl_mem)part->handle;
	if (g.N == 0) { /* no rows: the sums are zero */
		nb_i = 0;
	} else {
		st = clg_cl_kernel(be, "addnorm", opts, cpu ? "add_layer_norm_bwd_cpu" : "add_layer_norm_bwd_rows", &k);
		if (!st) {
			local = cpu ? clg_cl_cpu_group_size(be, k, (int64_t)nb) : clg_cl_group_size_local(be, k, g.C, 2 * ps);
			size_t sizes[] = {sizeof(g), ms, ms, ms, ms, ms, ps, is, ms, cpu ? is : 2 * local * ps};
			const void *vals[] = {&g, &mem[0], &mem[1], &mem[2], &mem[3], &mem[6], eps, &rb_i, &pm,
					      cpu ? (const void *)&nb_i : NULL};
			st = clg_cl_set_args(be, k, op, 10, sizes, vals);
			if (!st)
				st = clg_cl_launch_1d(be, k, cpu ? nb : nb * local, local, op);
		}
	}
	if (!st)
		st = clg_cl_kernel(be, "addnorm", opts, "add_layer_norm_colsum", &k);
	if (!st) {
		size_t sizes[] = {sizeof(g), ms, ms, ms, is, ps, ps};
		const void *vals[] = {&g, &mem[4], &mem[5], &pm, &nb_i, &beta[0], &beta[1]};
		local = clg_cl_cpu_group_size(be, k, g.C);
		st = clg_cl_set_args(be, k, op, 7, sizes, vals);
		if (!st)
			st = clg_cl_launch_1d(be, k, (size_t)g.C, local, op);
		if (!st)
			clg_record_combine(be, (int64_t)nb * 2 * g.C);
	}
	/* safe at once: the in-order queue runs any later user of the buffer after these kernels */
	clg_buffer_free(part);
	return st;
}

static clg_status addnorm_run(clg_backend *be, const clg_op_call *c)
{
	int f64 = c->dst.dtype == CLG_F64, cpu = clg_backend_kernel_shape(be, CLG_KFAM_ROW, NULL) == CLG_SHAPE_CPU;
	size_t ps = f64 ? sizeof(double) : sizeof(float);
	char opts[256];
	scalar eps;
	clg_status st = clg_addnorm_check(be, c);

	if (!st)
		st = clg_cl_check_dtype(be, c, c->dst.dtype);
	if (st)
		return st;
	if (f64)
		eps.d = c->f[0];
	else
		eps.f = (float)c->f[0];
	clg_cl_row_options(be, c->dst.dtype, opts, sizeof(opts));
	return c->op == CLG_OP_ADD_LAYER_NORM ? addnorm_fwd(be, c, cpu, opts, ps, &eps) : addnorm_bwd(be, c, cpu, opts, ps, &eps);
}

void clg_cl_register_addnorm(clg_backend *be)
{
	be->ops[CLG_OP_ADD_LAYER_NORM] = addnorm_run;
	be->ops[CLG_OP_ADD_LAYER_NORM_BACKWARD] = addnorm_run;
}
