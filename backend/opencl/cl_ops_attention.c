/* OpenCL launchers of the fused attention ops (kernels_cl/attention.cl; semantics in clg_ops.def).
 * The kernel shape (family "attention", backend/kernel_shape.c) picks a work-item per block of
 * rows held as the lanes of vectors (cpu) or a work-group per tile of rows with the other side's
 * rows staged in local memory (gpu). The backward runs two kernels: dq (which also writes each
 * query row's delta = do . o into a scratch buffer), then dk and dv; under the cpu shape, where
 * B*H*Tk*Tq values fit the scratch limit, dk and dv first (writing ds), then dq = ds k. */
#include "cl_internal.h"
#include "../clg_attention_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KB 16 /* scores per online-softmax step (FWD_KEYS) */
#define MAX_TILE 64 /* rows per work-group and per local-memory tile */
#define QB 16 /* rows a _cpu work-item takes, one a vector lane (QB in attention.cl) */
/* Largest ds scratch of the cpu shape's stored-ds backward: CLGRAD_ATTN_DS_MB (MiB, default
 * 256, 0 = never); past it the backward recomputes the scores in both passes. */

static int64_t ds_limit(void)
{
	return clg_cfg_int(CLG_CFG_ATTN_DS_MB) << 20;
}

/* Must match ageom in kernels_cl/attention.cl, operands in its A_* order. */
enum { A_Q, A_K, A_V, A_O, A_L, A_DO, A_DQ, A_DK, A_DV, A_N };
typedef struct {
	cl_int B, H, Tq, Tk, causal, tile;
	cl_int off[A_N];
	cl_int st[A_N][4];
} ageom;

typedef union {
	float f;
	double d;
} scalar;

static clg_status put(clg_backend *be, const clg_op_call *c, ageom *g, int role, const clg_view *v, cl_mem *mem)
{
	int64_t st[4];
	clg_status s = clg_cl_check_int_range(be, c, v);
	clg_attention_strides(v, role == A_L, st);
	g->off[role] = (cl_int)v->offset;
	for (int d = 0; d < 4; d++)
		g->st[role][d] = (cl_int)st[d];
	*mem = (cl_mem)v->buf->handle;
	return s;
}

/* Work-group size of a _gpu kernel over rows of n: a power of two up to MAX_TILE and the kernel's
 * CL_KERNEL_WORK_GROUP_SIZE; and the local tile (rows of per_row bytes) from half of
 * CL_DEVICE_LOCAL_MEM_SIZE, so that two groups fit (all of it where a row needs more). The
 * kernels have no local memory besides their arguments (CL_KERNEL_LOCAL_MEM_SIZE would count the
 * arguments of the last launch). */
static void gpu_sizes(clg_backend *be, cl_kernel k, int64_t n, size_t per_row, size_t *local, cl_int *tile)
{
	size_t avail = (size_t)be->info.local_mem, t = avail / 2 / per_row;

	*local = clg_cl_group_size(be, k, n < MAX_TILE ? n : MAX_TILE);
	if (*local > MAX_TILE)
		*local = MAX_TILE;
	if (t < 1)
		t = 1; /* attention_run checked that one row fits */
	*tile = (cl_int)(t > MAX_TILE ? MAX_TILE : t);
}

static clg_status launch(clg_backend *be, cl_kernel k, const char *op, int gpu, int64_t rows, int64_t heads,
			 size_t local)
{
	/* CPU shape: a work-item per QB rows, each its own work-group. PoCL's work-group function gives
	 * each work-item of a group a copy of the kernel's private arrays (kt, vt, dk, dv: 4 KiB a
	 * work-item at head size 16, 230 KiB at 64, far past the L1), and at 64 the transformer's
	 * attention ran 8-9% slower (Intel's runtime: within 1-2%); single groups also spread the
	 * uneven causal blocks over the cores (a group runs on one). */
	if (!gpu)
		return clg_cl_launch_1d(be, k, (size_t)(heads * ((rows + QB - 1) / QB)), 1, op);
	return clg_cl_launch_1d(be, k, (size_t)(heads * ((rows + (int64_t)local - 1) / (int64_t)local)) * local, local, op);
}

/* The cpu shape's backward with ds stored (attn_bwd_dkvs_cpu, then attn_bwd_dqs_cpu): ds of every
 * score in a (B*H, Tk, Tq) scratch of the compute type, where the recomputing pair spends a second
 * exp and Dh + Dv FMAs a score on it. */
static clg_status ds_backward(clg_backend *be, const clg_op_call *c, ageom *g, cl_mem *m, const char *opts,
			      const scalar *sc, size_t ps, int64_t heads, const clg_attention_dims *d)
{
	const char *op = clg_op_name(c->op);
	size_t ms = sizeof(cl_mem);
	clg_buffer *scratch = NULL;
	cl_mem dm;
	cl_kernel k;
	clg_status st = clg_buffer_alloc(be, (size_t)(heads * d->Tq * d->Tk) * ps, &scratch);

	if (st)
		return st;
	dm = (cl_mem)scratch->handle;
	st = clg_cl_kernel(be, "attention", opts, "attn_bwd_dkvs_cpu", &k);
	if (!st) {
		size_t sizes[11] = {sizeof(*g), ps, ms, ms, ms, ms, ms, ms, ms, ms, ms};
		const void *vals[11] = {g, sc, &m[A_DK], &m[A_DV], &m[A_DO], &m[A_Q], &m[A_K], &m[A_V], &m[A_O], &m[A_L], &dm};
		st = clg_cl_set_args(be, k, op, 11, sizes, vals);
	}
	if (!st)
		st = launch(be, k, op, 0, d->Tk, heads, 1);
	if (!st)
		st = clg_cl_kernel(be, "attention", opts, "attn_bwd_dqs_cpu", &k);
	if (!st) {
		size_t sizes[5] = {sizeof(*g), ps, ms, ms, ms};
		const void *vals[5] = {g, sc, &m[A_DQ], &m[A_K], &dm};
		st = clg_cl_set_args(be, k, op, 5, sizes, vals);
	}
	if (!st)
		st = launch(be, k, op, 0, d->Tq, heads, 1);
	clg_buffer_free(scratch); /* the queue is in order: a later user of the memory runs after */
	return st;
}

static clg_status attention_run(clg_backend *be, const clg_op_call *c)
{
	int bwd = c->op == CLG_OP_ATTENTION_BWD, f64 = c->dst.dtype == CLG_F64;
	int gpu = clg_backend_kernel_shape(be, CLG_KFAM_ATTENTION, NULL) == CLG_SHAPE_GPU;
	const char *op = clg_op_name(c->op), *sh = gpu ? "gpu" : "cpu";
	size_t ps = f64 ? sizeof(double) : sizeof(float), ms = sizeof(cl_mem), local = 1;
	clg_attention_dims d;
	clg_buffer *scratch = NULL;
	cl_mem m[A_N], dm = NULL;
	cl_kernel k;
	scalar sc;
	ageom g;
	char opts[320], kname[40];
	int64_t heads;
	clg_status st = clg_attention_check(be, c, &d);

	if (!st)
		st = clg_cl_check_dtype(be, c, c->dst.dtype);
	if (st)
		return st;
	if (d.Dh > CLG_ATTENTION_DMAX || d.Dv > CLG_ATTENTION_DMAX)
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': head widths Dh %lld, Dv %lld: at most %d",
				op, be->info.name, (long long)d.Dh, (long long)d.Dv, CLG_ATTENTION_DMAX);
	memset(&g, 0, sizeof(g));
	memset(m, 0, sizeof(m));
	g.B = (cl_int)d.B, g.H = (cl_int)d.H, g.Tq = (cl_int)d.Tq, g.Tk = (cl_int)d.Tk, g.causal = c->i[0] != 0;
	heads = d.B * d.H;
	if (gpu && (uint64_t)(d.Dh + d.Dv + 2) * ps > be->info.local_mem)
		gpu = 0, sh = "cpu"; /* a row does not fit in local memory: the shape without it */
	if (heads * (d.Tq > d.Tk ? d.Tq : d.Tk) > 0x7fffffff)
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': %lld heads of %lld rows overflow 32-bit indices",
				op, be->info.name, (long long)heads, (long long)(d.Tq > d.Tk ? d.Tq : d.Tk));
	if (!gpu && (d.Tq > (1 << 24) || d.Tk > (1 << 24))) /* the cpu kernels mask with row numbers in ACC */
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': Tq %lld, Tk %lld: at most %d rows",
				op, be->info.name, (long long)d.Tq, (long long)d.Tk, 1 << 24);
	if (!bwd) {
		st = put(be, c, &g, A_O, &c->dst, &m[A_O]);
		for (int r = 0; !st && r < 4; r++)
			st = put(be, c, &g, r == 3 ? A_L : r, &c->src[r], &m[r == 3 ? A_L : r]);
	} else {
		static const int roles[8] = {A_DO, A_Q, A_K, A_V, A_O, A_L, A_DK, A_DV};
		st = put(be, c, &g, A_DQ, &c->dst, &m[A_DQ]);
		for (int r = 0; !st && r < 8; r++)
			st = put(be, c, &g, roles[r], &c->src[r], &m[roles[r]]);
	}
	if (st)
		return st;
	if (f64)
		sc.d = c->f[0];
	else
		sc.f = (float)c->f[0];
	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), " -DDH=%d -DDV=%d -DKB=%d -DATTN_%s", (int)d.Dh, (int)d.Dv,
		 KB, gpu ? "GPU" : "CPU");

	if (!bwd) {
		snprintf(kname, sizeof(kname), "attn_fwd_%s", sh);
		st = clg_cl_kernel(be, "attention", opts, kname, &k);
		if (!st && gpu)
			gpu_sizes(be, k, d.Tq, (size_t)(d.Dh + d.Dv) * ps, &local, &g.tile);
		if (!st) {
			size_t sizes[9] = {sizeof(g), ps, ms, ms, ms, ms, ms, (size_t)g.tile * (size_t)d.Dh * ps,
					   (size_t)g.tile * (size_t)d.Dv * ps};
			const void *vals[9] = {&g, &sc, &m[A_Q], &m[A_K], &m[A_V], &m[A_O], &m[A_L], NULL, NULL};
			st = clg_cl_set_args(be, k, op, gpu ? 9 : 7, sizes, vals);
		}
		return st ? st : launch(be, k, op, gpu, d.Tq, heads, local);
	}

	if (!gpu) {
		int64_t n = heads * d.Tq * d.Tk, bytes = n * (int64_t)ps;
		if (n > 0 && bytes <= ds_limit() && (uint64_t)bytes <= be->info.max_alloc)
			return ds_backward(be, c, &g, m, opts, &sc, ps, heads, &d);
	}
	/* delta (B*H*Tq) in the compute type, written by the dq pass, read by the dk/dv pass */
	st = clg_buffer_alloc(be, (size_t)(heads * d.Tq > 0 ? heads * d.Tq : 1) * ps, &scratch);
	if (st)
		return st;
	dm = (cl_mem)scratch->handle;
	snprintf(kname, sizeof(kname), "attn_bwd_dq_%s", sh);
	st = clg_cl_kernel(be, "attention", opts, kname, &k);
	if (!st && gpu)
		gpu_sizes(be, k, d.Tq, (size_t)(d.Dh + d.Dv) * ps, &local, &g.tile);
	if (!st) {
		size_t sizes[12] = {sizeof(g), ps, ms, ms, ms, ms, ms, ms, ms, ms, (size_t)g.tile * (size_t)d.Dh * ps,
				    (size_t)g.tile * (size_t)d.Dv * ps};
		const void *vals[12] = {&g, &sc, &m[A_DQ], &m[A_DO], &m[A_Q], &m[A_K], &m[A_V], &m[A_O], &m[A_L], &dm, NULL, NULL};
		st = clg_cl_set_args(be, k, op, gpu ? 12 : 10, sizes, vals);
	}
	if (!st)
		st = launch(be, k, op, gpu, d.Tq, heads, local);
	if (st)
		goto out;
	snprintf(kname, sizeof(kname), "attn_bwd_dkv_%s", sh);
	st = clg_cl_kernel(be, "attention", opts, kname, &k);
	if (!st && gpu)
		gpu_sizes(be, k, d.Tk, (size_t)(d.Dh + d.Dv + 2) * ps, &local, &g.tile);
	if (!st) {
		size_t sizes[13] = {sizeof(g), ps, ms, ms, ms, ms, ms, ms, ms, ms, (size_t)g.tile * (size_t)d.Dh * ps,
				    (size_t)g.tile * (size_t)d.Dv * ps, 2 * (size_t)g.tile * ps};
		const void *vals[13] = {&g, &sc, &m[A_DK], &m[A_DV], &m[A_DO], &m[A_Q], &m[A_K], &m[A_V], &m[A_L], &dm,
					NULL, NULL, NULL};
		st = clg_cl_set_args(be, k, op, gpu ? 13 : 10, sizes, vals);
	}
	if (!st)
		st = launch(be, k, op, gpu, d.Tk, heads, local);
out:
	clg_buffer_free(scratch); /* the queue is in order: a later user of the memory runs after */
	return st;
}

void clg_cl_register_attention(clg_backend *be)
{
	be->ops[CLG_OP_ATTENTION_FWD] = attention_run;
	be->ops[CLG_OP_ATTENTION_BWD] = attention_run;
}
