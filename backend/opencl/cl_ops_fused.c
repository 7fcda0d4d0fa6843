/* OpenCL launchers of the fused hot-path ops (kernels_cl/fused.cl; semantics in clg_ops.def):
 * BIAS_ACT one work-item per element (on CPUs per four contiguous columns, as one vector),
 * BIAS_ACT_BACKWARD one per column on CPUs (it walks the rows,
 * so the bias gradient needs no second pass; four or sixteen columns as one vector where they are contiguous)
 * and 2-D tiles on GPUs (bias_act_backward_tiles, family
 * "fused"). SOFTMAX_XENT and its backward are row kernels in the shape of family "row": a
 * work-group per row (GPU) or a work-item per row (CPU); the forward leaves each row's loss term in
 * a temporary buffer that a second kernel adds in a fixed order. Operands at any strides.
 * GELU (an elementwise op, cl_ops.c) comes here under the CPU shape over contiguous float32 / float64:
 * sixteen elements a work-item (gelu_v16). */
#include "cl_internal.h"
#include "../clg_fused_internal.h"

#include <stdio.h>
#include <string.h>

/* Must match fgeom in kernels_cl/fused.cl. */
typedef struct {
	cl_int N, C, act;
	cl_int off[5];
	cl_int rs[5];
	cl_int cs[5];
} fgeom;

typedef union {
	float f;
	double d;
} scalar;

/* fills g and mem from the call's operands (dst first), and p with f[0] in the dst's precision */
static clg_status fused_geometry(clg_backend *be, const clg_op_call *c, fgeom *g, cl_mem *mem, scalar *p)
{
	int nsrc = clg_op_nsrc(c->op);
	clg_status st = clg_fused_check(be, c);

	if (!st)
		st = clg_cl_check_dtype(be, c, c->dst.dtype);
	memset(g, 0, sizeof(*g));
	for (int j = 0; !st && j <= nsrc; j++) {
		const clg_view *v = j ? &c->src[j - 1] : &c->dst;
		st = clg_cl_check_int_range(be, c, v);
		mem[j] = (cl_mem)v->buf->handle;
		g->off[j] = (cl_int)v->offset;
		g->rs[j] = v->ndim > 0 ? (cl_int)v->stride[0] : 0;
		g->cs[j] = v->ndim > 1 ? (cl_int)v->stride[1] : 0;
	}
	if (st)
		return st;
	{
		const clg_view *rows = c->op == CLG_OP_SOFTMAX_XENT ? &c->src[0] : &c->dst;
		g->N = (cl_int)rows->shape[0];
		g->C = (cl_int)rows->shape[1];
	}
	g->act = (cl_int)c->i[0];
	if (c->dst.dtype == CLG_F64)
		p->d = c->f[0];
	else
		p->f = (float)c->f[0];
	return CLG_OK;
}

/* SOFTMAX_XENT (rows, then their sum) and SOFTMAX_XENT_BACKWARD in the row family's shape */
static clg_status xent_run(clg_backend *be, const clg_op_call *c)
{
	int fwd = c->op == CLG_OP_SOFTMAX_XENT, f64 = c->dst.dtype == CLG_F64;
	int cpu = clg_backend_kernel_shape(be, CLG_KFAM_ROW, NULL) == CLG_SHAPE_CPU;
	const char *op = clg_op_name(c->op);
	size_t ps = f64 ? sizeof(double) : sizeof(float), ms = sizeof(cl_mem), local, items, by16 = 1;
	clg_buffer *part = NULL;
	cl_mem mem[5], pm;
	scalar p;
	fgeom g;
	char opts[256], kname[48];
	cl_kernel k;
	clg_status st = fused_geometry(be, c, &g, mem, &p);

	if (st)
		return st;
	clg_cl_row_options(be, c->dst.dtype, opts, sizeof(opts));
	if (cpu && fwd && clg_cl_rows_per_item(be, g.C, g.cs[1] == 1 && g.cs[2] == 1, g.N, 0) == 16)
		by16 = 16; /* fused.cl's softmax_xent_rows16_cpu: sixteen rows a work-item */
	snprintf(kname, sizeof(kname), "%s_rows%s", op, by16 > 1 ? "16_cpu" : cpu ? "_cpu" : "");
	st = clg_cl_kernel(be, "fused", opts, kname, &k);
	if (st)
		return st;
	items = ((size_t)g.N + by16 - 1) / by16;
	local = cpu ? clg_cl_cpu_group_size(be, k, (int64_t)items) : clg_cl_group_size_local(be, k, g.C, ps);
	if (fwd) { /* (g, part, x, t, st[, scratch]); st (N, 2) each row's max and log-sum */
		st = clg_buffer_alloc(be, (size_t)(g.N > 0 ? g.N : 1) * ps, &part);
		if (st)
			return st;
		pm = (cl_mem)part->handle;
		{
			size_t sizes[] = {sizeof(g), ms, ms, ms, ms, local * ps};
			const void *vals[] = {&g, &pm, &mem[1], &mem[2], &mem[3], NULL};
			st = clg_cl_set_args(be, k, op, cpu ? 5 : 6, sizes, vals);
		}
	} else { /* (g, d, x, t, st, gl, scale[, scratch]) */
		size_t sizes[] = {sizeof(g), ms, ms, ms, ms, ms, ps, local * ps};
		const void *vals[] = {&g, &mem[0], &mem[1], &mem[2], &mem[3], &mem[4], &p, NULL};
		st = clg_cl_set_args(be, k, op, cpu ? 7 : 8, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, cpu ? items : (size_t)g.N * local, local, op);
	if (st || !fwd)
		goto out_free;
	/* the loss: the row terms added in a fixed order (g, loss, part, scale[, scratch]) */
	snprintf(kname, sizeof(kname), "softmax_xent_sum%s", cpu ? "_cpu" : "");
	st = clg_cl_kernel(be, "fused", opts, kname, &k);
	if (st)
		goto out_free;
	local = cpu ? 1 : clg_cl_group_size_local(be, k, g.N, ps);
	{
		size_t sizes[] = {sizeof(g), ms, ms, ps, local * ps};
		const void *vals[] = {&g, &mem[0], &pm, &p, NULL};
		st = clg_cl_set_args(be, k, op, cpu ? 4 : 5, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, local, local, op);
out_free:
	clg_buffer_free(part); /* the queue is in order: a later use of the buffer runs after these */
	return st;
}

/* GPU shape of BIAS_ACT_BACKWARD (fused.cl, bias_act_backward_tiles): groups of TC columns by TR
 * rows over column tiles and row blocks, about four groups per compute unit (the one-column-per-item
 * CPU shape gives C / 256 groups: 2 for C = 512), then bias_act_backward_sum adds the row blocks'
 * partial sums of db in order when there is more than one. */
static clg_status bias_act_backward_tiles(clg_backend *be, const clg_op_call *c, const fgeom *g, cl_mem *mem,
					  const scalar *p, size_t ps)
{
	const char *op = clg_op_name(c->op);
	const size_t ms = sizeof(cl_mem), is = sizeof(cl_int);
	size_t L, tc, tr, ctiles, nb, rb, maxnb, want;
	char opts[256];
	cl_kernel k;
	clg_buffer *part = NULL;
	cl_mem pm;
	cl_int rb_i, nb_i;
	clg_status st;

	if (g->C == 0)
		return CLG_OK;
	clg_cl_row_options(be, c->dst.dtype, opts, sizeof(opts)); /* fused.cl is built once, with xent_run's */
	st = clg_cl_kernel(be, "fused", opts, "bias_act_backward_tiles", &k);
	if (st)
		return st;
	L = clg_cl_local_size(be, k, clg_cl_of(be)->wg_size);
	tc = L < 32 ? L : 32; /* a warp's worth of adjacent columns */
	while (tc > 1 && tc / 2 >= (size_t)g->C)
		tc /= 2;
	tr = L / tc;
	ctiles = ((size_t)g->C + tc - 1) / tc;
	want = 4 * (size_t)(be->info.compute_units ? be->info.compute_units : 1);
	for (;;) { /* fewer rows a group where the row blocks leave compute units idle */
		nb = (want + ctiles - 1) / ctiles;
		maxnb = g->N > 0 ? ((size_t)g->N + tr - 1) / tr : 1; /* at least TR rows a block */
		nb = nb < 1 ? 1 : nb > maxnb ? maxnb : nb;
		if (tr == 1 || ctiles * nb >= want / 4)
			break;
		tr /= 2;
	}
	rb = g->N > 0 ? ((size_t)g->N + nb - 1) / nb : 1;
	nb = g->N > 0 ? ((size_t)g->N + rb - 1) / rb : 1;
	rb_i = (cl_int)rb, nb_i = (cl_int)nb;
	st = clg_cl_check_local_mem(be, k, L * ps, op);
	if (!st && nb > 1)
		st = clg_buffer_alloc(be, nb * (size_t)g->C * ps, &part);
	if (st)
		return st;
	pm = part ? (cl_mem)part->handle : mem[0]; /* unread with one block */
	{
		size_t sizes[] = {sizeof(*g), ms, ms, ms, ms, ps, is, ms, L * ps};
		const void *vals[] = {g, &mem[0], &mem[1], &mem[2], &mem[3], p, &rb_i, &pm, NULL};
		size_t items[2] = {ctiles * tc, nb * tr}, local[2] = {tc, tr};
		st = clg_cl_set_args(be, k, op, 9, sizes, vals);
		if (!st)
			st = clg_cl_launch_2d(be, k, items, local, op);
	}
	if (!st && nb > 1)
		st = clg_cl_kernel(be, "fused", opts, "bias_act_backward_sum", &k);
	if (!st && nb > 1) { /* groups of ot columns x ls lanes over the blocks, a group per compute unit */
		size_t G = clg_cl_local_size(be, k, 64), ot, ls;
		size_t cus = be->info.compute_units ? be->info.compute_units : 1;
		for (ot = G; ot > 1 && ((size_t)g->C + ot - 1) / ot < cus;)
			ot /= 2;
		for (ls = G / ot; ls > 1 && ls / 2 >= nb;)
			ls /= 2;
		size_t sizes[] = {sizeof(*g), ms, ps, is, ms, ot * ls * ps};
		const void *vals[] = {g, &mem[3], p, &nb_i, &pm, NULL};
		size_t items[2] = {(size_t)g->C, ls}, local[2] = {ot, ls};
		st = clg_cl_check_local_mem(be, k, ot * ls * ps, op);
		if (!st)
			st = clg_cl_set_args(be, k, op, 6, sizes, vals);
		if (!st)
			st = clg_cl_launch_2d(be, k, items, local, op);
		if (!st)
			clg_record_combine(be, (int64_t)nb * g->C);
	}
	/* safe at once: the in-order queue runs any later user of the buffer after these kernels */
	clg_buffer_free(part);
	return st;
}

/* CPU shape of BIAS_ACT_BACKWARD over contiguous columns, C % w == 0 (fused.cl,
 * bias_act_backward_v4 / _v16): a work-item per w columns, in groups small enough that every
 * compute unit gets several (one group of 256 columns had left one core of two idle). */
static clg_status bias_act_backward_vec(clg_backend *be, const clg_op_call *c, const fgeom *g, cl_mem *mem,
					const scalar *p, size_t ps, int w)
{
	const char *op = clg_op_name(c->op);
	size_t items = (size_t)g->C / (size_t)w, local, ms = sizeof(cl_mem);
	char opts[256];
	cl_kernel k;
	clg_status st;

	clg_cl_row_options(be, c->dst.dtype, opts, sizeof(opts)); /* the build of fused.cl that fused_run uses */
	st = clg_cl_kernel(be, "fused", opts, w == 16 ? "bias_act_backward_v16" : "bias_act_backward_v4", &k);
	if (st)
		return st;
	local = clg_cl_cpu_group_size(be, k, (int64_t)items);
	{
		size_t sizes[] = {sizeof(*g), ms, ms, ms, ms, ps};
		const void *vals[] = {g, &mem[0], &mem[1], &mem[2], &mem[3], p};
		st = clg_cl_set_args(be, k, op, 6, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, (items + local - 1) / local * local, local, op);
	return st;
}

/* CPU shape of BIAS_ACT over contiguous columns, C % 4 == 0 (fused.cl, bias_act_v4): a
 * work-item per four columns of a row. */
static clg_status bias_act_v4(clg_backend *be, const clg_op_call *c, const fgeom *g, cl_mem *mem)
{
	const char *op = clg_op_name(c->op);
	size_t items = (size_t)g->N * (size_t)(g->C / 4), local, ms = sizeof(cl_mem);
	char opts[256];
	cl_kernel k;
	clg_status st;

	clg_cl_row_options(be, c->dst.dtype, opts, sizeof(opts));
	st = clg_cl_kernel(be, "fused", opts, "bias_act_v4", &k);
	if (st)
		return st;
	local = clg_cl_cpu_group_size(be, k, (int64_t)items);
	{
		size_t sizes[] = {sizeof(*g), ms, ms, ms};
		const void *vals[] = {g, &mem[0], &mem[1], &mem[2]};
		st = clg_cl_set_args(be, k, op, 4, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, (items + local - 1) / local * local, local, op);
	return st;
}

static clg_status fused_run(clg_backend *be, const clg_op_call *c)
{
	static const char *const names[] = {"bias_act", "bias_act_backward"};
	int which = c->op - CLG_OP_BIAS_ACT, nsrc = clg_op_nsrc(c->op), f64 = c->dst.dtype == CLG_F64;
	const char *op = clg_op_name(c->op);
	size_t items, local = clg_cl_of(be)->wg_size, ps = f64 ? sizeof(double) : sizeof(float);
	cl_mem mem[5];
	scalar p;
	fgeom g;
	char opts[256], kname[40];
	int exact;
	cl_kernel k;
	clg_status st = fused_geometry(be, c, &g, mem, &p);

	if (st)
		return st;
	if (c->op == CLG_OP_BIAS_ACT_BACKWARD && clg_backend_kernel_shape(be, CLG_KFAM_FUSED, NULL) == CLG_SHAPE_GPU)
		return bias_act_backward_tiles(be, c, &g, mem, &p, ps);
	if (c->op == CLG_OP_BIAS_ACT_BACKWARD && g.C % 4 == 0 && g.cs[0] == 1 && g.cs[1] == 1 && (g.cs[2] == 1 || !g.act)) {
		/* sixteen columns a work-item where that leaves two or more for every compute unit */
		size_t cus = be->info.compute_units ? be->info.compute_units : 1;
		return bias_act_backward_vec(be, c, &g, mem, &p, ps, g.C % 16 == 0 && (size_t)g.C / 16 >= 2 * cus ? 16 : 4);
	}
	if (c->op == CLG_OP_BIAS_ACT && g.C % 4 == 0 && g.cs[0] == 1 && g.cs[1] == 1 && g.rs[2] == 1 &&
	    clg_backend_kernel_shape(be, CLG_KFAM_FUSED, NULL) == CLG_SHAPE_CPU)
		return bias_act_v4(be, c, &g, mem);
	/* the work: elements (bias_act) or columns (its backward) */
	items = c->op == CLG_OP_BIAS_ACT ? (size_t)g.N * (size_t)g.C : (size_t)g.C;
	if (local > items) /* small launches: one small group */
		local = items ? items : 1;
	/* the unguarded variant where the groups cover the work exactly (see fused.cl) */
	exact = items % local == 0;
	snprintf(kname, sizeof(kname), "%s%s", names[which], exact ? "_x" : "");
	clg_cl_row_options(be, c->dst.dtype, opts, sizeof(opts)); /* one build of fused.cl with xent_run's */
	st = clg_cl_kernel(be, "fused", opts, kname, &k);
	if (!st && clg_cl_local_size(be, k, local) != local) {
		/* the kernel allows less: a power of two, which may no longer divide the work */
		local = clg_cl_local_size(be, k, local);
		if (exact && items % local) {
			snprintf(kname, sizeof(kname), "%s", names[which]);
			st = clg_cl_kernel(be, "fused", opts, kname, &k);
		}
	}
	if (st)
		return st;
	{
		size_t ms = sizeof(cl_mem), sizes[6] = {sizeof(g), ms, ms, ms, ms, ps};
		const void *vals[6] = {&g, &mem[0], &mem[1], &mem[2], &mem[3], &p};
		int nargs = 2 + nsrc;
		if (c->op != CLG_OP_BIAS_ACT)
			sizes[nargs] = ps, vals[nargs++] = &p;
		st = clg_cl_set_args(be, k, op, nargs, sizes, vals);
	}
	if (st)
		return st;
	return clg_cl_launch_1d(be, k, items, local, op);
}

int clg_cl_gelu_v16_fits(clg_backend *be, const clg_op_call *c)
{
	return c->op == CLG_OP_GELU && (c->dst.dtype == CLG_F32 || c->dst.dtype == CLG_F64) &&
	       c->src[0].dtype == c->dst.dtype && clg_view_is_contiguous(&c->dst) &&
	       clg_view_is_contiguous(&c->src[0]) && clg_view_numel(&c->dst) == clg_view_numel(&c->src[0]) &&
	       clg_backend_kernel_shape(be, CLG_KFAM_FUSED, NULL) == CLG_SHAPE_CPU;
}

/* GELU over contiguous float32 / float64 under the CPU shape (fused.cl, gelu_v16): sixteen elements
 * a work-item; elsewhere the elementwise kernels (cl_ops.c) */
clg_status clg_cl_gelu_v16(clg_backend *be, const clg_op_call *c)
{
	const char *op = clg_op_name(c->op);
	int64_t n64 = clg_view_numel(&c->dst);
	size_t items = (size_t)((n64 + 15) / 16), local, ms = sizeof(cl_mem), is = sizeof(cl_int);
	cl_int n = (cl_int)n64, od = (cl_int)c->dst.offset, ox = (cl_int)c->src[0].offset;
	cl_mem md = (cl_mem)c->dst.buf->handle, mx = (cl_mem)c->src[0].buf->handle;
	char opts[256];
	cl_kernel k;
	clg_status st = clg_cl_check_dtype(be, c, c->dst.dtype);

	for (int j = 0; !st && j < 2; j++)
		st = clg_cl_check_int_range(be, c, j ? &c->src[0] : &c->dst);
	if (st || n64 == 0)
		return st;
	clg_cl_row_options(be, c->dst.dtype, opts, sizeof(opts)); /* the build of fused.cl that fused_run uses */
	st = clg_cl_kernel(be, "fused", opts, "gelu_v16", &k);
	if (st)
		return st;
	local = clg_cl_cpu_group_size(be, k, (int64_t)items);
	{
		size_t sizes[] = {is, ms, is, ms, is};
		const void *vals[] = {&n, &md, &od, &mx, &ox};
		st = clg_cl_set_args(be, k, op, 5, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, (items + local - 1) / local * local, local, op);
	return st;
}

void clg_cl_register_fused(clg_backend *be)
{
	be->ops[CLG_OP_BIAS_ACT] = fused_run;
	be->ops[CLG_OP_BIAS_ACT_BACKWARD] = fused_run;
	be->ops[CLG_OP_SOFTMAX_XENT] = xent_run;
	be->ops[CLG_OP_SOFTMAX_XENT_BACKWARD] = xent_run;
}
