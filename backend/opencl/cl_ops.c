/* OpenCL launchers for the elementwise and reduction ops (kernels_cl/elementwise.cl, reduce.cl),
 * and the small launch helpers the other launchers share (cl_ops_row.c, cl_gemm.c). */
#include "cl_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define MAXD CLG_MAX_DIMS

/* Must match `geom` in kernels_cl/elementwise.cl. */
#define EW_NOPS 4 /* dst and up to three sources */
typedef struct {
	cl_int nd, n;
	cl_int shape[MAXD];
	cl_int off[EW_NOPS];
	cl_int st[EW_NOPS][MAXD];
} ew_geom;

/* Must match `rgeom` in kernels_cl/reduce.cl. */
typedef struct {
	cl_int nout, nred, R, dst_off, src_off;
	cl_int out_shape[MAXD], red_shape[MAXD];
	cl_int dst_st[MAXD], src_out_st[MAXD], src_red_st[MAXD];
} red_geom;

/* Kernels index with 32-bit ints (fast on every GPU); larger buffers are refused up front. */
clg_status clg_cl_check_int_range(clg_backend *be, const clg_op_call *c, const clg_view *v)
{
	if (v->buf->size / clg_dtype_size(v->dtype) > INT_MAX)
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': buffer of %zu bytes exceeds 2^31 elements",
				clg_op_name(c->op), be->info.name, v->buf->size);
	return CLG_OK;
}

/* Builds the geometry of nv operands (dst first) of one shape, dropping size-1 dims and merging
 * dims that are contiguous with each other in every operand. */
static void ew_geometry(const clg_view *const *v, int nv, ew_geom *g)
{
	memset(g, 0, sizeof(*g));
	g->n = 1;
	for (int k = 0; k < nv; k++)
		g->off[k] = (cl_int)v[k]->offset;
	for (int d = 0; d < v[0]->ndim; d++) {
		int64_t sz = v[0]->shape[d];
		if (sz == 1)
			continue;
		g->n *= (cl_int)sz;
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
	for (int d = 0; v[0]->ndim && d < v[0]->ndim; d++)
		if (v[0]->shape[d] == 0)
			g->n = 0;
}

static int ew_contiguous(const ew_geom *g, int nv)
{
	if (g->nd > 1)
		return 0;
	for (int k = 0; k < nv && g->nd == 1; k++)
		if (g->st[k][0] != 1)
			return 0;
	return 1;
}

clg_status clg_cl_launch_1d(clg_backend *be, cl_kernel k, size_t items, size_t local, const char *op)
{
	clg_cl *cl = clg_cl_of(be);
	size_t global;
	cl_int err;

	if (items == 0)
		return CLG_OK;
	global = (items + local - 1) / local * local;
	err = clg_cl_fault(be, CLG_FAULT_ENQUEUE);
	if (err == CL_SUCCESS)
		err = clg_cl_enqueue(be, k, 1, &global, &local);
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, op, err, "clEnqueueNDRangeKernel(global %zu, local %zu)%s", global, local,
				   clg_cl_fault_note());
	cl->stats.n_launch++;
	if (be->recorder)
		clg_cl_record(be, k, 1, &global, &local);
	return CLG_OK;
}

clg_status clg_cl_set_args(clg_backend *be, cl_kernel k, const char *op, int n, const size_t *sizes,
			   const void *const *vals)
{
	for (int i = 0; i < n; i++) {
		cl_int err = clSetKernelArg(k, (cl_uint)i, sizes[i], vals[i]);
		if (err != CL_SUCCESS)
			return clg_cl_fail(be, op, err, "clSetKernelArg(%d)", i);
	}
	return CLG_OK;
}

clg_status clg_cl_check_dtype(clg_backend *be, const clg_op_call *c, clg_dtype t)
{
	/* float16 is storage only (vload_half / vstore_half_rte, core OpenCL C 1.2): every device has
	 * it, for the kinds whose kernels read and write through LOAD / STORE */
	if (t == CLG_F32 || (t == CLG_F64 && be->info.has_fp64) || (clg_dtype_is_half_storage(t) && clg_op_accepts_f16(c->op)))
		return CLG_OK;
	return clg_fail(CLG_ERR_DTYPE, "op '%s' on device '%s': dtype %s is not available on this device",
			clg_op_name(c->op), be->info.name, clg_dtype_name(t));
}

size_t clg_cl_group_size_local(clg_backend *be, cl_kernel k, int64_t n, size_t scratch_per_item)
{
	size_t local = clg_cl_group_size(be, k, n);
	cl_ulong used = 0, avail = be->info.local_mem;

	if (clGetKernelWorkGroupInfo(k, clg_cl_of(be)->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(used), &used,
				     NULL) == CL_SUCCESS && used < avail)
		avail -= used;
	while (local > 1 && local * scratch_per_item > avail)
		local /= 2;
	return local;
}

size_t clg_cl_cpu_group_size(clg_backend *be, cl_kernel k, int64_t items)
{
	size_t local = clg_cl_group_size(be, k, items);
	int64_t want = 4 * (int64_t)(be->info.compute_units ? be->info.compute_units : 1);

	if (local > 64)
		local = 64;
	while (local > 1 && items / (int64_t)local < want)
		local /= 2;
	return local;
}

void clg_cl_row_options(clg_backend *be, clg_dtype t, char *buf, size_t len)
{
	int sg = clg_backend_kernel_shape(be, CLG_KFAM_ROW, NULL) == CLG_SHAPE_GPU ? clg_cl_of(be)->subgroups : 0;
	char *std;
	size_t n;

	clg_cl_dtype_options(be, t, buf, len);
	if (!sg)
		return;
	if (sg == 2 && (std = strstr(buf, "-cl-std=CL1.2")) != NULL)
		std[10] = '2', std[12] = '0'; /* "-cl-std=CL2.0": the sub-group built-ins of cl_khr_subgroups */
	n = strlen(buf);
	snprintf(buf + n, len - n, " -DUSE_SUBGROUPS");
}

/* Whether two-dim geometries take the NAME_2d kernels: yes unless $CLGRAD_EW_2D=0 (then NAME_s,
 * for tests, which run both). */
static int ew_2d_wanted(void)
{
	return clg_cfg_bool(CLG_CFG_EW_2D);
}

/* A 2-D launch over (columns, rows) of a two-dim geometry: a row's columns in adjacent lanes (up
 * to the group), the rest of the group over rows, halved while the groups would leave compute
 * units idle. */
static clg_status ew_launch_2d(clg_backend *be, cl_kernel k, const ew_geom *g, const char *op)
{
	size_t L = clg_cl_local_size(be, k, clg_cl_of(be)->wg_size), cus = be->info.compute_units ? be->info.compute_units : 1;
	size_t items[2] = {(size_t)g->shape[1], (size_t)g->shape[0]}, local[2];

	for (local[0] = 1; local[0] < L && local[0] < items[0];)
		local[0] *= 2;
	local[1] = L / local[0];
	while (local[1] > 1 && local[1] / 2 >= items[1])
		local[1] /= 2;
	while (local[0] * local[1] > SPREAD_MIN &&
	       ((items[0] + local[0] - 1) / local[0]) * ((items[1] + local[1] - 1) / local[1]) < cus) {
		if (local[1] > 1)
			local[1] /= 2;
		else
			local[0] /= 2;
	}
	return clg_cl_launch_2d(be, k, items, local, op);
}

static clg_status ew_run(clg_backend *be, const clg_op_call *c)
{
	const clg_view *views[EW_NOPS];
	int nsrc = clg_op_nsrc(c->op), nv = 1 + nsrc, two;
	char opts[256], kname[64];
	ew_geom g;
	cl_kernel k;
	clg_status st;
	cl_mem mem[EW_NOPS];
	double p64[2] = {c->f[0], c->f[1]};
	float p32[2] = {(float)c->f[0], (float)c->f[1]};
	cl_int pi[2] = {(cl_int)c->f[0], (cl_int)c->f[1]};
	int f64 = c->dst.dtype == CLG_F64, i32 = c->dst.dtype == CLG_I32;

	if (clg_cl_gelu_v16_fits(be, c)) /* sixteen elements a work-item (cl_ops_fused.c) */
		return clg_cl_gelu_v16(be, c);
	/* int32 tensors can be copied and filled (indices), not computed with */
	st = i32 && (c->op == CLG_OP_COPY || c->op == CLG_OP_FILL) ? CLG_OK : clg_cl_check_dtype(be, c, c->dst.dtype);
	if (!st && c->op == CLG_OP_CAST)
		st = clg_cl_check_dtype(be, c, c->src[0].dtype);
	for (int i = 0; !st && i < nv; i++) {
		views[i] = i ? &c->src[i - 1] : &c->dst;
		st = clg_cl_check_int_range(be, c, views[i]);
	}
	if (st)
		return st;
	ew_geometry(views, nv, &g); /* the op's operands only: a unary op binds its one source */
	if (g.n == 0)
		return CLG_OK;
	two = g.nd == 2 && ew_2d_wanted();
	snprintf(kname, sizeof(kname), "%s_%s", clg_op_name(c->op), ew_contiguous(&g, nv) ? "c" : two ? "2d" : "s");
	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	if (c->op == CLG_OP_CAST) { /* a program of its own: the source's type is not T */
		static const int src_code[CLG_DTYPE_COUNT] = {[CLG_F32] = 1, [CLG_F16] = 2, [CLG_BF16] = 3, [CLG_F64] = 4};
		size_t n = strlen(opts);
		snprintf(opts + n, sizeof(opts) - n, " -DCAST_SRC=%d%s", src_code[c->src[0].dtype],
			 c->src[0].dtype == CLG_F64 && !f64 ? " -DUSE_FP64" : "");
	}
	st = clg_cl_kernel(be, "elementwise", opts, kname, &k);
	if (st)
		return st;
	for (int i = 0; i < nv; i++)
		mem[i] = (cl_mem)views[i]->buf->handle;
	{
		size_t ps = f64 ? sizeof(double) : i32 ? sizeof(cl_int) : sizeof(float);
		const void *p0 = f64 ? (const void *)&p64[0] : i32 ? (const void *)&pi[0] : (const void *)&p32[0];
		const void *p1 = f64 ? (const void *)&p64[1] : i32 ? (const void *)&pi[1] : (const void *)&p32[1];
		size_t sizes[2 + EW_NOPS + 1];
		const void *vals[2 + EW_NOPS + 1];
		int n = 0;
		sizes[n] = sizeof(g), vals[n++] = &g;
		for (int i = 0; i < nv; i++)
			sizes[n] = sizeof(cl_mem), vals[n++] = &mem[i];
		sizes[n] = ps, vals[n++] = p0;
		sizes[n] = ps, vals[n++] = p1;
		st = clg_cl_set_args(be, k, clg_op_name(c->op), n, sizes, vals);
	}
	if (st)
		return st;
	if (two && !ew_contiguous(&g, nv))
		return ew_launch_2d(be, k, &g, clg_op_name(c->op));
	return clg_cl_launch_1d(be, k, (size_t)g.n,
				clg_cl_spread(be, (size_t)g.n, clg_cl_local_size(be, k, clg_cl_of(be)->wg_size)),
				clg_op_name(c->op));
}

/* GPU shape of SUM, MAX, MIN over the leading dims (reduce.cl, <op>_cols): when src's innermost
 * kept dim is contiguous, groups of 32 outputs x TR rows read along the contiguous dim, over row
 * blocks when the outputs alone give too few groups (about four per compute unit wanted, at
 * least four rows per work-item); <op>_cols_final then combines the blocks in order. */
static clg_status reduce_cols(clg_backend *be, const clg_op_call *c, const red_geom *g, size_t nout)
{
	const char *op = clg_op_name(c->op);
	const clg_view *s = &c->src[0];
	size_t acc = s->dtype == CLG_F64 ? sizeof(double) : sizeof(float), L, tc, tr, ctiles, nb, rb, maxnb, want;
	cl_int n = (cl_int)nout, rb_i, nb_i;
	cl_mem dm = (cl_mem)c->dst.buf->handle, sm = (cl_mem)s->buf->handle, pm;
	clg_buffer *part = NULL;
	char opts[256], kname[64];
	cl_kernel k;
	clg_status st;

	clg_cl_row_options(be, s->dtype, opts, sizeof(opts)); /* reduce.cl is built once, with reduce_run's */
	snprintf(kname, sizeof(kname), "%s_cols", op);
	st = clg_cl_kernel(be, "reduce", opts, kname, &k);
	if (st)
		return st;
	L = clg_cl_local_size(be, k, clg_cl_of(be)->wg_size);
	tc = L < 32 ? L : 32; /* a warp's worth of adjacent outputs */
	while (tc > 1 && tc / 2 >= nout)
		tc /= 2;
	tr = L / tc;
	while (tr > 1 && (int64_t)tr / 2 >= g->R)
		tr /= 2;
	ctiles = (nout + tc - 1) / tc;
	want = 4 * (size_t)(be->info.compute_units ? be->info.compute_units : 1);
	for (;;) { /* fewer rows a group where the row blocks leave compute units idle */
		nb = (want + ctiles - 1) / ctiles;
		maxnb = ((size_t)g->R + 4 * tr - 1) / (4 * tr);
		nb = nb > maxnb ? maxnb : nb;
		nb = nb < 1 ? 1 : nb;
		if (tr == 1 || ctiles * nb >= want / 4)
			break;
		tr /= 2;
	}
	rb = ((size_t)g->R + nb - 1) / nb;
	nb = g->R > 0 ? ((size_t)g->R + rb - 1) / rb : 1;
	rb_i = (cl_int)rb, nb_i = (cl_int)nb;
	st = clg_cl_check_local_mem(be, k, tc * tr * acc, op);
	if (!st && nb > 1)
		st = clg_buffer_alloc(be, nb * nout * acc, &part);
	if (st)
		return st;
	pm = part ? (cl_mem)part->handle : dm; /* unwritten with one block */
	{
		const size_t is = sizeof(cl_int), ms = sizeof(cl_mem);
		size_t sizes[] = {sizeof(*g), is, is, ms, ms, ms, tc * tr * acc};
		const void *vals[] = {g, &n, &rb_i, &dm, &sm, &pm, NULL};
		size_t items[2] = {nout, nb * tr}, local[2] = {tc, tr};
		st = clg_cl_set_args(be, k, op, 7, sizes, vals);
		if (!st)
			st = clg_cl_launch_2d(be, k, items, local, op);
	}
	if (!st && nb > 1) {
		const size_t is = sizeof(cl_int), ms = sizeof(cl_mem);
		size_t sizes[] = {sizeof(*g), is, is, ms, ms};
		const void *vals[] = {g, &n, &nb_i, &dm, &pm};
		snprintf(kname, sizeof(kname), "%s_cols_final", op);
		st = clg_cl_kernel(be, "reduce", opts, kname, &k);
		if (!st)
			st = clg_cl_set_args(be, k, op, 5, sizes, vals);
		if (!st)
			st = clg_cl_launch_1d(be, k, nout,
					      clg_cl_spread(be, nout, clg_cl_local_size(be, k, clg_cl_of(be)->wg_size)), op);
		if (!st)
			clg_record_combine(be, (int64_t)(nb * nout));
	}
	/* safe at once: the in-order queue runs any later user of the buffer after these kernels */
	clg_buffer_free(part);
	return st;
}

/* SUM, MAX, MIN, ARGMAX (see kernels_cl/reduce.cl): one work-group per output element (GPU shape)
 * or one work-item per output (CPU shape), as the device's shape of family "row" says; over the
 * leading dims, the column shape above where family "reduce" is GPU-shaped. */
static clg_status reduce_run(clg_backend *be, const clg_op_call *c)
{
	const clg_view *s = &c->src[0], *dv = &c->dst;
	const char *op = clg_op_name(c->op);
	int argmax = c->op == CLG_OP_ARGMAX, cpu = clg_backend_kernel_shape(be, CLG_KFAM_ROW, NULL) == CLG_SHAPE_CPU;
	char opts[256], kname[64];
	red_geom g;
	cl_kernel k;
	clg_status st;
	cl_mem dm, sm;
	size_t local, items = 1;
	int64_t R = 1;

	if (argmax && dv->dtype != CLG_I32)
		return clg_fail(CLG_ERR_DTYPE, "op 'argmax' on device '%s': dst is %s, must be int32", be->info.name,
				clg_dtype_name(dv->dtype));
	st = clg_cl_check_dtype(be, c, s->dtype);
	if (!st)
		st = clg_cl_check_int_range(be, c, s);
	if (!st)
		st = clg_cl_check_int_range(be, c, dv);
	if (st)
		return st;
	memset(&g, 0, sizeof(g));
	g.dst_off = (cl_int)dv->offset;
	g.src_off = (cl_int)s->offset;
	for (int d = 0; d < dv->ndim; d++) {
		if (dv->shape[d] == 1)
			continue;
		g.out_shape[g.nout] = (cl_int)dv->shape[d];
		g.dst_st[g.nout] = (cl_int)dv->stride[d];
		g.src_out_st[g.nout] = (cl_int)s->stride[d];
		g.nout++;
		items *= (size_t)dv->shape[d];
	}
	for (int d = dv->ndim; d < s->ndim; d++) {
		if (s->shape[d] == 1)
			continue;
		/* merge with the previous reduced dim when contiguous with it */
		if (g.nred && g.src_red_st[g.nred - 1] == s->stride[d] * s->shape[d]) {
			g.red_shape[g.nred - 1] *= (cl_int)s->shape[d];
			g.src_red_st[g.nred - 1] = (cl_int)s->stride[d];
		} else {
			g.red_shape[g.nred] = (cl_int)s->shape[d];
			g.src_red_st[g.nred] = (cl_int)s->stride[d];
			g.nred++;
		}
		R *= s->shape[d];
	}
	for (int d = 0; d < dv->ndim; d++)
		if (dv->shape[d] == 0)
			return CLG_OK;
	if (R > INT_MAX)
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': %lld elements per output exceed 2^31",
				op, be->info.name, (long long)R);
	g.R = (cl_int)R;
	if (items > INT_MAX)
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': %zu outputs exceed 2^31", op,
				be->info.name, items);
	if (!argmax && g.nout && g.nred && g.src_out_st[g.nout - 1] == 1 &&
	    clg_backend_kernel_shape(be, CLG_KFAM_REDUCE, NULL) == CLG_SHAPE_GPU)
		return reduce_cols(be, c, &g, items);
	clg_cl_row_options(be, s->dtype, opts, sizeof(opts));
	snprintf(kname, sizeof(kname), "%s_rows%s", op, cpu ? "_cpu" : "");
	st = clg_cl_kernel(be, "reduce", opts, kname, &k);
	if (st)
		return st;
	dm = (cl_mem)dv->buf->handle;
	sm = (cl_mem)s->buf->handle;
	if (cpu) {
		cl_int nout = (cl_int)items;
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), sizeof(nout)};
		const void *vals[] = {&g, &dm, &sm, &nout};
		local = clg_cl_cpu_group_size(be, k, (int64_t)items);
		st = clg_cl_set_args(be, k, op, 4, sizes, vals);
		return st ? st : clg_cl_launch_1d(be, k, items, local, op);
	}
	/* a power of two no larger than what this kernel and the local memory allow, nor much larger than R */
	local = clg_cl_group_size_local(be, k, R, (s->dtype == CLG_F64 ? sizeof(double) : sizeof(float)) +
							  (argmax ? sizeof(cl_int) : 0));
	{
		size_t acc = s->dtype == CLG_F64 ? sizeof(double) : sizeof(float);
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), local * acc, local * sizeof(cl_int)};
		const void *vals[] = {&g, &dm, &sm, NULL, NULL};
		st = clg_cl_set_args(be, k, op, argmax ? 5 : 4, sizes, vals);
	}
	if (st)
		return st;
	return clg_cl_launch_1d(be, k, items * local, local, op);
}

void clg_cl_register_ops(clg_backend *be)
{
	for (int op = 0; op < CLG_OP_COUNT; op++)
		if (clg_op_is_elementwise((clg_op)op))
			be->ops[op] = ew_run;
	be->ops[CLG_OP_SUM] = reduce_run;
	be->ops[CLG_OP_MAX] = reduce_run;
	be->ops[CLG_OP_MIN] = reduce_run;
	be->ops[CLG_OP_ARGMAX] = reduce_run;
	be->ops[CLG_OP_SOFTMAX] = clg_cl_row;
	be->ops[CLG_OP_LOG_SOFTMAX] = clg_cl_row;
	be->ops[CLG_OP_SOFTMAX_BACKWARD] = clg_cl_row;
	be->ops[CLG_OP_LOG_SOFTMAX_BACKWARD] = clg_cl_row;
	clg_cl_register_conv(be);
	clg_cl_register_index(be);
	clg_cl_register_norm(be);
	clg_cl_register_optim(be);
	clg_cl_register_fused(be);
	clg_cl_register_addnorm(be);
	clg_cl_register_attention(be);
	clg_cl_register_quant(be);
	clg_cl_register_fft(be);
	be->ops[CLG_OP_GEMM] = clg_cl_gemm;
	be->ops[CLG_OP_GEMM_BIAS_ACT] = clg_cl_gemm_bias_act;
}
