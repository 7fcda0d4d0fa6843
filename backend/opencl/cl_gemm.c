/* GEMM on OpenCL devices, two implementations:
 *   - CLBlast (SGEMM / DGEMM, strided-batched for a batch): GPU-style kernels, the choice on GPUs;
 *   - our own register-tiled kernels (kernels_cl/gemm.cl): no local memory, one work-item per
 *     work-group, vector accumulators; the choice on CPU-type devices (PoCL), where CLBlast's
 *     default kernels run at about a tenth of the speed (docs/PERFORMANCE.md has the figures).
 *     Under the GPU kernel shape (CLG_KFAM_GEMM) the own GEMM is gemm_tiles instead: 64 x 64
 *     tiles through local memory by 16 x 16 work-items, for GPUs where CLBlast is not trusted or
 *     not wanted.
 * $CLGRAD_GEMM=clblast|own|auto (default auto) forces one; auto picks the own kernels on devices
 * of type CPU and CLBlast elsewhere, unless a stored tune result (`clgrad tune`, cl_tune.c) names
 * the implementation and tile for the shape. $CLGRAD_GEMM_TILE="TM,TN,VW,DM,DN" overrides the own
 * kernels' tile (see gemm.cl), otherwise it comes from the tune result or follows the device's
 * preferred vector width. $CLGRAD_GEMM and $CLGRAD_GEMM_TILE win over a tune result. Each operand
 * is used as stored: a view with unit stride in its last dim is row-major, one with unit stride
 * in its second-last dim is a transposed row-major matrix. Tune results are measured, and so
 * applied, in float32 only. float16 and bfloat16 operands go to a third, kernels_cl/gemm_half.cl
 * (any strides, float32 accumulation), or on CPU devices through float32 copies to the float32
 * kernels ($CLGRAD_GEMM_HALF=kernel|staged forces one; see half_staged).
 * $CLGRAD_GEMM_MIN_INDIRECT=T sets CLBlast's switch to its indirect path (m*n*k >= T^3; 1: every
 * product), for tests and for devices where one of its paths is wrong (cl_clblast.c). */
#include "cl_tune.h"
#include "../clg_fused_internal.h"

#include <clblast_c.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	CLBlastTranspose trans;
	size_t ld;
} gemm_layout;

typedef clg_cl_gemm_impl gemm_impl;
#define GEMM_AUTO CLG_CL_GEMM_AUTO
#define GEMM_CLBLAST CLG_CL_GEMM_CLBLAST
#define GEMM_OWN CLG_CL_GEMM_OWN

/* rows x cols view -> (transpose flag, leading dimension) as a row-major matrix, or -1. */
static int layout_of(const clg_view *v, gemm_layout *l)
{
	int nd = v->ndim;
	int64_t rows = v->shape[nd - 2], cols = v->shape[nd - 1];
	int64_t sr = v->stride[nd - 2], sc = v->stride[nd - 1];

	if ((sc == 1 || cols == 1) && (rows == 1 || sr >= cols)) {
		l->trans = CLBlastTransposeNo;
		l->ld = (size_t)(rows == 1 ? (cols > 0 ? cols : 1) : sr);
		return 0;
	}
	if ((sr == 1 || rows == 1) && (cols == 1 || sc >= rows)) {
		l->trans = CLBlastTransposeYes;
		l->ld = (size_t)(cols == 1 ? (rows > 0 ? rows : 1) : sc);
		return 0;
	}
	return -1;
}

/* The implementation asked for by CLGRAD_GEMM (the configuration accepts auto, own, clblast only). */
static gemm_impl impl_from_config(void)
{
	return clg_cfg_is(CLG_CFG_GEMM, "clblast") ? GEMM_CLBLAST : clg_cfg_is(CLG_CFG_GEMM, "own") ? GEMM_OWN : GEMM_AUTO;
}

/* ---- CLBlast ----------------------------------------------------------------------------- */

/* CLBlast's scratch for its indirect path (padded and transposed copies of the operands), at
 * least bytes long: one buffer per backend, grown when a call needs more, released at close.
 * Without it CLBlast creates (and releases) a buffer in every call that takes the indirect path.
 * Replacing it while a GEMM that uses it is queued is safe: OpenCL frees a released buffer only
 * once the commands that use it have completed, and the in-order queue runs later GEMMs after. */
static clg_status gemm_scratch(clg_backend *be, size_t bytes, cl_mem *out)
{
	clg_cl *cl = clg_cl_of(be);
	cl_int err = CL_SUCCESS;
	cl_mem m;

	*out = NULL;
	if (!bytes)
		return CLG_OK;
	if (cl->gemm_tmp_size < bytes) {
		m = clCreateBuffer(cl->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
		if (err != CL_SUCCESS)
			return clg_cl_fail(be, "gemm", err, "clCreateBuffer(CLBlast scratch, %zu bytes)", bytes);
		if (cl->gemm_tmp)
			clReleaseMemObject(cl->gemm_tmp);
		cl->gemm_tmp = m;
		cl->gemm_tmp_size = bytes;
	}
	*out = cl->gemm_tmp;
	return CLG_OK;
}

/* CLBlast is called column-major: row-major C (M, N) = op(A) op(B) is, read column-major, C^T =
 * op(B)^T op(A)^T, so the operands, M and N swap and every transpose flag and leading dimension
 * stays. Called row-major, CLBlast's indirect path transposes C there and back and A as well
 * (its kernels are column-major), and pads more. */
static clg_status gemm_clblast(clg_backend *be, const clg_op_call *c, size_t M, size_t N, size_t K, size_t batch,
			       const gemm_layout *la, const gemm_layout *lb, const gemm_layout *lc)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst;
	const CLBlastLayout col = CLBlastLayoutColMajor;
	cl_command_queue q = clg_cl_of(be)->queue;
	cl_mem a = (cl_mem)A->buf->handle, b = (cl_mem)B->buf->handle, cm = (cl_mem)C->buf->handle, tmp = NULL;
	size_t oa = (size_t)A->offset, ob = (size_t)B->offset, oc = (size_t)C->offset, need = 0;
	size_t sa = batch > 1 ? (size_t)A->stride[0] : 0, sb = batch > 1 ? (size_t)B->stride[0] : 0;
	size_t sc = batch > 1 ? (size_t)C->stride[0] : 0;
	int f64 = C->dtype == CLG_F64;
	CLBlastStatusCode s;
	clg_status st;
	char s0[64], s1[64], s2[64];
	double t0;

	/* after the tune file's parameters (applied at the first lookup): the variable wins */
	if ((st = clg_cl_clblast_env_min_indirect(be)))
		return st;
	t0 = clg_now(); /* CLBlast's host time, its scratch query included */
	if (batch == 1) {
		/* 0 bytes where the direct kernel runs: no scratch then */
		s = f64 ? CLBlastDGemmTempBufferSize(col, lb->trans, la->trans, N, M, K, ob, lb->ld, oa, la->ld, oc, lc->ld,
						     &q, &need)
			: CLBlastSGemmTempBufferSize(col, lb->trans, la->trans, N, M, K, ob, lb->ld, oa, la->ld, oc, lc->ld,
						     &q, &need);
		if (s != CLBlastSuccess)
			goto fail;
		if ((st = gemm_scratch(be, need, &tmp)))
			return st;
	}
	if (f64) {
		double alpha = c->f[0], beta = c->f[1];
		s = batch == 1 ? CLBlastDgemmWithTempBuffer(col, lb->trans, la->trans, N, M, K, alpha, b, ob, lb->ld, a, oa,
							    la->ld, beta, cm, oc, lc->ld, &q, NULL, tmp)
			       : CLBlastDgemmStridedBatched(col, lb->trans, la->trans, N, M, K, alpha, b, ob, lb->ld, sb, a,
							    oa, la->ld, sa, beta, cm, oc, lc->ld, sc, batch, &q, NULL);
	} else {
		float alpha = (float)c->f[0], beta = (float)c->f[1];
		s = batch == 1 ? CLBlastSgemmWithTempBuffer(col, lb->trans, la->trans, N, M, K, alpha, b, ob, lb->ld, a, oa,
							    la->ld, beta, cm, oc, lc->ld, &q, NULL, tmp)
			       : CLBlastSgemmStridedBatched(col, lb->trans, la->trans, N, M, K, alpha, b, ob, lb->ld, sb, a,
							    oa, la->ld, sa, beta, cm, oc, lc->ld, sc, batch, &q, NULL);
	}
	if (s != CLBlastSuccess)
		goto fail;
	clg_cl_of(be)->stats.n_launch++;
	clg_cl_of(be)->stats.enqueue_seconds += clg_now() - t0;
	if (be->recorder) /* CLBlast's own kernels are not seen: the shape only */
		clg_record_library(be, C->dtype == CLG_F64 ? "CLBlast DGEMM" : "CLBlast SGEMM", (int64_t)M, (int64_t)N,
				   (int64_t)K, (int64_t)batch);
	return CLG_OK;
fail:
	return clg_cl_fail(be, "gemm", (cl_int)s, "CLBlast %cGEMM %zux%zux%zu (batch %zu, called column-major): A %s, B %s, C %s",
			   f64 ? 'D' : 'S', M, N, K, batch, clg_shape_str(A, s0, sizeof(s0)),
			   clg_shape_str(B, s1, sizeof(s1)), clg_shape_str(C, s2, sizeof(s2)));
}

/* ---- own kernels (kernels_cl/gemm.cl) -------------------------------------------------------- */

typedef clg_cl_gemm_tile gemm_tile;

int clg_cl_gemm_tile_valid(const clg_cl_gemm_tile *u)
{
	return u->tm >= 1 && u->tm <= 16 && (u->vw == 2 || u->vw == 4 || u->vw == 8 || u->vw == 16) &&
	       u->tn >= u->vw && u->tn <= 64 && u->tn % u->vw == 0 && u->dm >= 1 && u->dm <= 8 && u->dn >= 1 &&
	       u->dn <= 8;
}

/* The vector width the untuned tile takes for dtype t (float or double): the preferred one, or
 * on a CPU device the native one where that is wider (a CPU runtime that vectorises across
 * work-items itself, Intel's, prefers 1 for the code it is given; its registers' width is the
 * native one). Asked of the device once per backend: the tile is chosen on every GEMM call. */
static int tile_vector_width(clg_backend *be, clg_dtype t)
{
	clg_cl *cl = clg_cl_of(be);
	int *vw = &cl->gemm_vw[t == CLG_F64];
	cl_uint pref = 0, native = 0;

	if (*vw)
		return *vw;
	clGetDeviceInfo(cl->device,
			t == CLG_F64 ? CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE : CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
			sizeof(pref), &pref, NULL);
	if (be->info.type == CLG_DEV_CPU &&
	    clGetDeviceInfo(cl->device,
			    t == CLG_F64 ? CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE : CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
			    sizeof(native), &native, NULL) == CL_SUCCESS &&
	    native > pref)
		pref = native;
	*vw = pref >= 16 ? 16 : pref >= 8 ? 8 : 4;
	return *vw;
}

/* The untuned tile from that vector width (8 floats on AVX2: 6 x 16 = 12 accumulator
 * registers of 16; 16 on AVX-512: 8 x 32, 16 of 32; gemm_dot 4 x 3, 12 registers of partial
 * sums, 4 x 6 = 24 of 32 on AVX-512). Measured on Zen 3 (docs/PERFORMANCE.md). gemm_dot's 4 x 6
 * on AVX-512 (PoCL, Zen 4, the MLP's forward x @ w^T at 128 rows, GFLOP per CPU second, alternated,
 * loaded): (128, 512) K 784 median 85 -> 97 with DN 3 -> 6; K 512 unchanged (89-90); DN 5 and
 * 3 x 8 no better. Fewer, wider tiles: each row of S read once per 6 outputs rather than 3. */
void clg_cl_gemm_default_tile(clg_backend *be, clg_dtype t, clg_cl_gemm_tile *g)
{
	int vw = tile_vector_width(be, t);

	*g = (gemm_tile){.tm = vw >= 16 ? 8 : 6, .tn = 2 * vw, .vw = vw, .dm = 4, .dn = vw >= 16 ? 6 : 3};
}

/* The untuned tile for products with a long side, such as a conv's GEMMs, whose N*OH*OW side
 * runs to tens of thousands (25088 and 100352 in the Fashion-MNIST CNN at batch 128), on devices
 * whose default is the AVX-512 one (VW 16): gemm_op 4 rows by four vectors (TM 4, TN 64) when its
 * rows are that long, gemm_dot with 6 partial sums a row (DN = 6, 24 of 32 registers) when its dot
 * products are. gemm_op's k step then makes 16 FMAs from 4 vector loads of B and 4 broadcasts of A
 * (8 x 16: 8 FMAs from 9), and touches 256 bytes of each B row it reaches, rows 100 KiB apart
 * (a page each). Measured with PoCL, `bench_cnn` a step: on Zen 5, TM x TN 8 x 16 19.7-20.1 ms,
 * 8 x 32 18.2-18.8, 6 x 64 18.3-18.9, 4 x 64 17.4 (two rounds); Intel's runtime on the same
 * machine (16-wide tiles: clg_cl_gemm_default_tile) 20.3-23.8 ms whatever the tile. Earlier, on
 * Zen 4 (8 x 32 -> 8 x 16, 4 x 64 not tried): CPU time of the CNN's conv2 products (rows 25104 apart): (64, 25088) K 289 11.7 -> 10.5 ms,
 * (288, 25088) K 64 14.6 -> 11.4 ms; (64, 289) K 25088 14.4 -> 10.7-11.1 ms (DN 3 -> 6).
 * Tune results and $CLGRAD_GEMM_TILE win. */
#define GEMM_LONG_SIDE 8192
static void long_side_tile(gemm_tile *g, size_t q, size_t K)
{
	if (g->vw < 16)
		return;
	if (q >= GEMM_LONG_SIDE) {
		g->tm = 4;
		g->tn = 4 * g->vw;
	}
	if (K >= GEMM_LONG_SIDE && g->dm * 6 <= 24)
		g->dn = 6;
}

/* $CLGRAD_GEMM_TILE into *g: 1 when set and valid. */
static int tile_from_env(gemm_tile *g)
{
	const char *e = clg_cfg_str(CLG_CFG_GEMM_TILE);
	gemm_tile u;

	if (!e || !*e)
		return 0;
	if (sscanf(e, "%d,%d,%d,%d,%d", &u.tm, &u.tn, &u.vw, &u.dm, &u.dn) == 5 && clg_cl_gemm_tile_valid(&u)) {
		*g = u;
		return 1;
	}
	clg_debug("gemm: ignoring CLGRAD_GEMM_TILE='%s' (want TM,TN,VW,DM,DN)", e);
	return 0;
}

/* Whether gemm_op reads an operand packed into panels by gemm_pack rather than as stored; step is
 * the operand's stride along k in bytes. Packing costs a pass over the operand and a launch. It
 * pays when many rows that gemm_op walks through along k lie a multiple of 512 bytes apart: they
 * then fall into a few cache sets and evict each other (on Zen 3, 1024^3 ran at about 90 GFLOP/s
 * unpacked and 150 packed; docs/PERFORMANCE.md). Up to K = 512 the rows stay in the L2 cache and
 * the pass costs more than it saves: the MLP's backward GEMMs (K 128 and 512, rows 2 KiB apart)
 * ran 5-10% faster unpacked on a 2-core EPYC under PoCL, and a training step lost four launches. */
#define PACK_KMIN 513
/* A transposed (S read across its rows, a column of A at a time) is packed only where C has
 * PACK_S_QTILES tiles of gemm_op along q or more: gemm_op reads S once a tile, and with two the
 * pass that packs it costs more than the conflicts it saves (the transformer's weight gradient
 * (256, 64) K 1024, A^T's rows 1 KiB apart: 44-52 GFLOP per CPU second packed, 86-91 as stored,
 * PoCL; (1024, 256) K 2048 with 8 tiles: 56-60 packed, 34-35 as stored). */
#define PACK_S_QTILES 4
static int want_pack(int64_t K, int64_t step)
{
	return K >= PACK_KMIN && step % 512 == 0;
}

static clg_status set_and_launch(clg_backend *be, cl_kernel k, const char *kname, int n, const size_t *sizes,
				 const void *const *vals, const size_t *global, const size_t *local)
{
	clg_status st = clg_cl_set_args(be, k, "gemm", n, sizes, vals);
	cl_int err;

	if (st)
		return st;
	err = clg_cl_fault(be, CLG_FAULT_ENQUEUE);
	if (err == CL_SUCCESS)
		err = clg_cl_enqueue(be, k, 3, global, local);
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, "gemm", err, "clEnqueueNDRangeKernel(%s, global %zux%zux%zu, local %zux%zux%zu)%s",
				   kname, global[0], global[1], global[2], local[0], local[1], local[2], clg_cl_fault_note());
	clg_cl_of(be)->stats.n_launch++;
	if (be->recorder)
		clg_cl_record(be, k, 3, global, local);
	return CLG_OK;
}

/* A gemm_op operand: X (rows, K) at off + r * sr + k * sk + b * sb (S as given; V as V^T). */
typedef struct {
	cl_mem mem;
	cl_int off, sr, sk, sb;
	cl_int sp;  /* stride from one panel of tile rows to the next */
	cl_int lim; /* rows that may be read: rows as stored, rounded up to the tile when packed */
} op_operand;

/* Elements of the packed copy of x (rows, K) in panels of w rows, for nb batches; -1 if it would
 * not be addressable with ints. */
static int64_t packed_elems(int64_t rows, int64_t K, int w, int64_t nb)
{
	int64_t n = (rows + w - 1) / w * w * K * nb;
	return n > INT_MAX ? -1 : n;
}

/* Packs x (rows, K) into panels of w rows, contiguous along k (gemm_pack), in a new buffer *out,
 * and makes x describe the packed copy. */
static clg_status pack_operand(clg_backend *be, const char *opts, op_operand *x, cl_int rows, cl_int K, cl_int w,
			       int64_t batch, size_t ts, clg_buffer **out)
{
	int64_t nb = x->sb == 0 ? 1 : batch;
	cl_int npan = (rows + w - 1) / w, o_sb = npan * K * w;
	size_t lk = K < 64 ? (size_t)K : 64, global[3], local[3] = {1, lk, 1};
	const size_t I = sizeof(cl_int), MEM = sizeof(cl_mem);
	size_t sizes[] = {I, I, I, MEM, I, I, I, I, MEM, I};
	cl_mem mp;
	cl_kernel k;
	clg_status st;

	if ((st = clg_cl_kernel(be, "gemm", opts, "gemm_pack", &k)) ||
	    (st = clg_buffer_alloc(be, (size_t)nb * (size_t)o_sb * ts, out)))
		return st;
	mp = (cl_mem)(*out)->handle;
	const void *vals[] = {&K, &rows, &w, &x->mem, &x->off, &x->sk, &x->sr, &x->sb, &mp, &o_sb};
	local[1] = lk = clg_cl_local_size(be, k, lk);
	global[0] = (size_t)npan;
	global[1] = ((size_t)K + lk - 1) / lk * lk;
	global[2] = (size_t)nb;
	if ((st = set_and_launch(be, k, "gemm_pack", 10, sizes, vals, global, local)))
		return st;
	*x = (op_operand){.mem = mp, .off = 0, .sr = 1, .sk = w, .sb = x->sb == 0 ? 0 : o_sb, .sp = K * w,
			  .lim = npan * w};
	return CLG_OK;
}

/* Split-K of gemm_tiles: the chunks of K when tiles output tiles (the batch's included) would leave
 * some of the device's compute units idle: enough chunks that tiles x chunks covers them, each at
 * least SPLIT_KMIN long; 1 (no split) where the tiles already cover them. $CLGRAD_GEMM_SPLIT=N
 * forces N chunks (at most 64; for tests, where a CPU device's few compute units rarely split). */
#define SPLIT_KMIN 8
static int64_t split_chunks(clg_backend *be, int64_t tiles, int64_t K)
{
	/* CLGRAD_GEMM_SPLIT (1..64) forces the chunks; 0 chooses */
	int64_t cus = be->info.compute_units ? be->info.compute_units : 1, ns = clg_cfg_int(CLG_CFG_GEMM_SPLIT), kc;

	if (ns == 0 && tiles < cus && K >= 2 * SPLIT_KMIN) {
		kc = K / ((cus + tiles - 1) / tiles); /* rounded down: ceil(K / kc) chunks cover the units */
		ns = (K + (kc < SPLIT_KMIN ? SPLIT_KMIN : kc) - 1) / (kc < SPLIT_KMIN ? SPLIT_KMIN : kc);
	}
	return ns < 1 ? 1 : ns > K ? K : ns;
}

/* Adds the ns slices of P (batch, ns, M, N) into C as alpha * sum + beta * C (gemm_split_sum):
 * groups of 64 (or the kernel's limit) as ot outputs x ls lanes over the slices, the outputs
 * halved until there are a group per compute unit or one output a group. */
static clg_status split_sum(clg_backend *be, const char *dt, const clg_op_call *c, cl_int M, cl_int N, cl_int nbat,
			    cl_int ns, cl_mem pm, const gemm_layout *lc)
{
	const clg_view *C = &c->dst;
	int f64 = C->dtype == CLG_F64;
	double a64 = c->f[0], b64 = c->f[1];
	float a32 = (float)c->f[0], b32 = (float)c->f[1];
	size_t ts = f64 ? sizeof(double) : sizeof(float), G, ot, ls, nout = (size_t)nbat * (size_t)M * (size_t)N;
	size_t cus = be->info.compute_units ? be->info.compute_units : 1, global[3], local[3];
	cl_int d_off = (cl_int)C->offset, d_sm = (cl_int)lc->ld, d_sb = nbat > 1 ? (cl_int)C->stride[0] : 0;
	cl_mem mc = (cl_mem)C->buf->handle;
	const size_t I = sizeof(cl_int), MEM = sizeof(cl_mem);
	cl_kernel k;
	clg_status st;

	if ((st = clg_cl_kernel(be, "gemm", dt, "gemm_split_sum", &k)))
		return st;
	G = clg_cl_local_size(be, k, 64);
	for (ot = G; ot > 1 && (nout + ot - 1) / ot < cus;)
		ot /= 2;
	for (ls = G / ot; ls > 1 && ls / 2 >= (size_t)ns;)
		ls /= 2;
	if ((st = clg_cl_check_local_mem(be, k, ot * ls * ts, "gemm")))
		return st;
	{
		size_t sizes[] = {I, I, I, I, ts, ts, MEM, MEM, I, I, I, ot * ls * ts};
		const void *vals[] = {&M, &N, &nbat, &ns, f64 ? (const void *)&a64 : (const void *)&a32,
				      f64 ? (const void *)&b64 : (const void *)&b32, &pm, &mc, &d_off, &d_sm, &d_sb,
				      NULL};
		global[0] = (nout + ot - 1) / ot * ot, global[1] = ls, global[2] = 1;
		local[0] = ot, local[1] = ls, local[2] = 1;
		if ((st = set_and_launch(be, k, "gemm_split_sum", 12, sizes, vals, global, local)))
			return st;
	}
	clg_record_combine(be, (int64_t)ns * (int64_t)nout);
	return CLG_OK;
}

/* GPU shape of the own GEMM (gemm.cl, gemm_tiles): TS x TS work-groups, each computing a
 * WPT TS x WPT TS tile of D through local memory. The tile is the largest of 64 x 64 (TS 16,
 * WPT 4), 32 x 32 (8, 4) and 16 x 16 (8, 2) whose tiles give every compute unit a group; where
 * none does, 32 x 32 with K split (split_chunks): each chunk's product goes to a slice of a
 * scratch buffer and split_sum adds the slices into C (16 x 16 where K is too short to split).
 * TS halves further (4...) where the device or the kernel allows fewer than TS * TS work-items. */
static clg_status gemm_tiles(clg_backend *be, const clg_op_call *c, int64_t M, int64_t N, int64_t K, int64_t batch,
			     const gemm_layout *la, const gemm_layout *lb, const gemm_layout *lc)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst;
	int f64 = C->dtype == CLG_F64, ta = la->trans == CLBlastTransposeYes, tb = lb->trans == CLBlastTransposeYes;
	cl_int Mi = (cl_int)M, Ni = (cl_int)N, Ki = (cl_int)K, lda = (cl_int)la->ld, ldb = (cl_int)lb->ld;
	cl_int a_off = (cl_int)A->offset, a_sm = ta ? 1 : lda, a_sk = ta ? lda : 1;
	cl_int a_sb = batch > 1 ? (cl_int)A->stride[0] : 0;
	cl_int b_off = (cl_int)B->offset, b_sk = tb ? 1 : ldb, b_sn = tb ? ldb : 1;
	cl_int b_sb = batch > 1 ? (cl_int)B->stride[0] : 0;
	cl_int d_off = (cl_int)C->offset, d_sm = (cl_int)lc->ld, d_sb = batch > 1 ? (cl_int)C->stride[0] : 0;
	cl_int ns = 1, kc = Ki, d_ss = 0, nbat = (cl_int)batch;
	cl_mem ma = (cl_mem)A->buf->handle, mb = (cl_mem)B->buf->handle, mc = (cl_mem)C->buf->handle;
	double a64 = c->f[0], b64 = c->f[1], one64 = 1, zero64 = 0;
	float a32 = (float)c->f[0], b32 = (float)c->f[1], one32 = 1, zero32 = 0;
	size_t ts = f64 ? sizeof(double) : sizeof(float), tile, wpt, L, global[3], local[3];
	int64_t cus = be->info.compute_units ? be->info.compute_units : 1, tiles, nsplit;
	const size_t I = sizeof(cl_int), MEM = sizeof(cl_mem);
	char opts[256], dt[192];
	clg_buffer *part = NULL;
	cl_kernel k = NULL;
	clg_status st;

	clg_cl_dtype_options(be, C->dtype, dt, sizeof(dt));
	L = clg_cl_local_size(be, NULL, 256);
	for (tile = 16; tile > 1 && tile * tile > L; tile /= 2)
		;
#define TILES(t) (((M + (int64_t)(t) - 1) / (int64_t)(t)) * ((N + (int64_t)(t) - 1) / (int64_t)(t)) * batch)
	wpt = 4;
	if (tile == 16 && TILES(64) < cus)
		tile = 8;
	if (tile == 8 && TILES(32) < cus && (TILES(16) >= cus || K < 2 * SPLIT_KMIN))
		wpt = 2;
	for (;;) { /* the kernel itself may allow fewer work-items (registers): a smaller tile */
		snprintf(opts, sizeof(opts), "%s -cl-mad-enable -DTS=%zu -DWPT=%zu", dt, tile, wpt);
		if ((st = clg_cl_kernel(be, "gemm", opts, "gemm_tiles", &k)))
			return st;
		if (tile == 1 || clg_cl_local_size(be, k, tile * tile) == tile * tile)
			break;
		tile /= 2;
	}
	tiles = TILES(tile * wpt);
#undef TILES
	if ((st = clg_cl_check_local_mem(be, k, 0, "gemm")))
		return st;
	nsplit = split_chunks(be, tiles, K);
	if (nsplit > 1 && batch * nsplit * M * N <= INT_MAX) { /* the chunks' products into slices of part */
		kc = (cl_int)((K + nsplit - 1) / nsplit);
		ns = (cl_int)((K + kc - 1) / kc);
		if ((st = clg_buffer_alloc(be, (size_t)(batch * ns * M * N) * ts, &part)))
			return st;
		mc = (cl_mem)part->handle;
		d_off = 0, d_sm = Ni, d_ss = Mi * Ni, d_sb = ns * Mi * Ni;
	}
	{
		int sp = ns > 1; /* slices hold the plain products: alpha 1, beta 0 */
		size_t sizes[] = {I, I, I, ts, ts, MEM, I, I, I, I, MEM, I, I, I, I, MEM, I, I, I, I, I, I};
		const void *vals[] = {&Mi, &Ni, &Ki,
				      f64 ? (const void *)(sp ? &one64 : &a64) : (const void *)(sp ? &one32 : &a32),
				      f64 ? (const void *)(sp ? &zero64 : &b64) : (const void *)(sp ? &zero32 : &b32),
				      &ma, &a_off, &a_sm, &a_sk, &a_sb, &mb, &b_off, &b_sk, &b_sn, &b_sb, &mc, &d_off,
				      &d_sm, &d_sb, &ns, &kc, &d_ss};
		global[0] = ((size_t)N + wpt * tile - 1) / (wpt * tile) * tile; /* tiles of wpt * tile */
		global[1] = ((size_t)M + wpt * tile - 1) / (wpt * tile) * tile;
		global[2] = (size_t)batch * (size_t)ns;
		local[0] = local[1] = tile, local[2] = 1;
		st = set_and_launch(be, k, "gemm_tiles", 22, sizes, vals, global, local);
	}
	if (!st && part)
		st = split_sum(be, dt, c, Mi, Ni, nbat, ns, (cl_mem)part->handle, lc);
	/* safe at once: the in-order queue runs any later user of the buffer after the sum */
	clg_buffer_free(part);
	return st;
}

/* Work-items a work-group of gemm_dot (or gemm_dot_bias_act) along dim 0, for tiles0 tiles along
 * p: 8 (or the largest power of two below it that divides tiles0 and the kernel allows). Its 4 x 3
 * tiles are small, and one work-group per tile left the forward's 128 x 512 GEMMs with 5472 groups,
 * whose scheduling cost 6-8% of their time on PoCL (128 x 512 x 784 and x 512, A @ B^T: 1.08-1.24 ->
 * 1.04-1.07 ms and 0.77-0.88 -> 0.72-0.75 ms, alternated, loaded); Intel's CPU runtime was no slower
 * (1.89-4.0 -> 1.49-2.09 ms). gemm_op's 8 x 32 tiles gained nothing: one work-item a group there. */
/* gemm_op's work-groups: one work-item untuned (each work-item's tile fills PoCL's vector
 * registers by itself). Mesa's llvmpipe runs a work-group as one loop over 8-lane SIMD batches of
 * work-items, so a group of one leaves 7 lanes idle: there 8 work-items along q (sharing S, the
 * broadcast operand) ran the MLP's weight gradient (512, 784) K 128 at 9-10 GFLOP/s against
 * 0.9-1.0 (rusticl, Mesa 25.0.7, 2-core Zen 5, loaded; 8 along p: 1.8). Which width a device
 * gets is measured by `clgrad tune` (cl_tune_wg.c), not guessed from its name or type. */
int clg_cl_gemm_op_wg(clg_backend *be)
{
	int64_t e = clg_cfg_int(CLG_CFG_GEMM_WG);
	int w = clg_cl_of(be)->gemm_wg;

	if (e > 0)
		return (int)e;
	return w > 0 ? w : 1;
}

/* local[1] and global[1] (rounded up to a whole group: work-items past Q return at once) for
 * gemm_op kernel k. */
static void op_groups(clg_backend *be, cl_kernel k, size_t *global, size_t *local)
{
	size_t w = (size_t)clg_cl_gemm_op_wg(be);

	if (w > 1)
		w = clg_cl_local_size(be, k, w);
	local[0] = local[2] = 1;
	local[1] = w;
	global[1] = (global[1] + w - 1) / w * w;
}

static size_t dot_local(clg_backend *be, cl_kernel k, size_t tiles0)
{
	size_t l = clg_cl_local_size(be, k, 8);

	while (l > 1 && (l & (l - 1) || tiles0 % l))
		l--;
	return l < 1 ? 1 : l;
}

/* The build options of gemm.cl for dtype t and tile g (one program for every kernel of the tile). */
static void own_options(clg_backend *be, clg_dtype t, const gemm_tile *g, char *opts, size_t len)
{
	char dt[192];

	clg_cl_dtype_options(be, t, dt, sizeof(dt)); /* with -DUSE_FMA where the device fuses */
	snprintf(opts, len, "%s -cl-mad-enable -DTM=%d -DTN=%d -DVW=%d -DDM=%d -DDN=%d", dt, g->tm, g->tn, g->vw,
		 g->dm, g->dn);
}

/* Whether C = A @ B^T (A as stored, B transposed: x @ w^T, a linear layer's forward) runs as
 * gemm_op on B^T packed into panels (gemm_pack) rather than gemm_dot on both as stored. gemm_dot
 * loads a vector of each of its DM + DN rows for DM * DN multiply-adds and ends every output with
 * a sum across lanes (VW - 1 adds and shuffles), which for K of a few hundred costs as much as
 * the products; gemm_op loads TN / VW vectors and broadcasts TM scalars for TM * TN / VW. The
 * pack is a pass over B, small against the product where C has many rows. */
#define OP_BT_MMIN 256
int clg_cl_gemm_op_for_bt(int64_t M, int64_t N, int64_t K)
{
	const char *e = clg_cfg_str(CLG_CFG_GEMM_BT); /* dot|op forces one (tests, measurements) */

	(void)N, (void)K;
	if (e && !strcmp(e, "dot"))
		return 0;
	if (e && !strcmp(e, "op"))
		return 1;
	return M >= OP_BT_MMIN;
}

static clg_status gemm_own(clg_backend *be, const clg_op_call *c, int64_t M, int64_t N, int64_t K, int64_t batch,
			   const gemm_layout *la, const gemm_layout *lb, const gemm_layout *lc, const gemm_tile *tile)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst;
	int ta = la->trans == CLBlastTransposeYes, tb = lb->trans == CLBlastTransposeYes;
	int f64 = C->dtype == CLG_F64;
	char opts[256];
	gemm_tile g;
	cl_kernel k;
	clg_status st;
	clg_buffer *packed[2] = {NULL, NULL};
	cl_mem ma = (cl_mem)A->buf->handle, mb = (cl_mem)B->buf->handle, mc = (cl_mem)C->buf->handle;
	/* batch strides (unused, so zeroed, for a single matrix) */
	cl_int sa = batch > 1 ? (cl_int)A->stride[0] : 0, sb = batch > 1 ? (cl_int)B->stride[0] : 0;
	cl_int sc = batch > 1 ? (cl_int)C->stride[0] : 0;
	cl_int oa = (cl_int)A->offset, ob = (cl_int)B->offset, oc = (cl_int)C->offset;
	cl_int lda = (cl_int)la->ld, ldb = (cl_int)lb->ld, ldc = (cl_int)lc->ld, one = 1;
	cl_int P, Q, Kk = (cl_int)K, d_sp, d_sq;
	double a64 = c->f[0], b64 = c->f[1];
	float a32 = (float)c->f[0], b32 = (float)c->f[1];
	size_t ts = f64 ? sizeof(double) : sizeof(float), global[3], local[3] = {1, 1, 1};
	const void *pa = f64 ? (const void *)&a64 : (const void *)&a32;
	const void *pb = f64 ? (const void *)&b64 : (const void *)&b32;
	const size_t I = sizeof(cl_int), MEM = sizeof(cl_mem);
	op_operand S, V; /* gemm_op: D (P, Q) = S (P, K) @ V (K, Q), V described as V^T (Q, K) */
	int pack_s, pack_v;

	if ((st = clg_cl_check_int_range(be, c, A)) || (st = clg_cl_check_int_range(be, c, B)) ||
	    (st = clg_cl_check_int_range(be, c, C)))
		return st;
	if (clg_backend_kernel_shape(be, CLG_KFAM_GEMM, NULL) == CLG_SHAPE_GPU)
		return gemm_tiles(be, c, M, N, K, batch, la, lb, lc);
	g = *tile;
	own_options(be, C->dtype, &g, opts, sizeof(opts));

	if (!tb || !ta) { /* C (M, N) = A @ B: S = A, V = B */
		P = (cl_int)M, Q = (cl_int)N;
		S = (op_operand){ma, oa, ta ? 1 : lda, ta ? lda : 1, sa, 0, P};
		V = (op_operand){mb, ob, tb ? ldb : 1, tb ? 1 : ldb, sb, 0, Q};
		d_sp = ldc, d_sq = 1;
	} else { /* both transposed: C^T (N, M) = B^T @ A^T: S = B^T, V = A^T (row-major), D = C^T */
		P = (cl_int)N, Q = (cl_int)M;
		S = (op_operand){mb, ob, ldb, 1, sb, 0, P};
		V = (op_operand){ma, oa, 1, lda, sa, 0, Q};
		d_sp = 1, d_sq = ldc;
	}
	if (V.sr != 1 && (!clg_cl_gemm_op_for_bt(M, N, K) || packed_elems(Q, K, g.tn, V.sb ? batch : 1) < 0)) {
		/* B transposed, A as stored: gemm_dot, C (M, N) = A (M, K) @ (B^T (N, K))^T, reads both
		 * along k as stored (as fast as gemm_op on B packed, or faster, and no pass over B) */
		size_t sizes[] = {I, I, I, ts, ts, MEM, I, I, I, MEM, I, I, I, MEM, I, I, I, I};
		const void *vals[] = {&P, &Q, &Kk, pa, pb, &ma, &oa, &lda, &sa, &mb, &ob, &ldb, &sb,
				      &mc, &oc, &ldc, &one, &sc};
		if ((st = clg_cl_kernel(be, "gemm", opts, "gemm_dot", &k)))
			return st;
		global[0] = (size_t)((P + g.dm - 1) / g.dm);
		global[1] = (size_t)((Q + g.dn - 1) / g.dn);
		global[2] = (size_t)batch;
		local[0] = dot_local(be, k, global[0]);
		return set_and_launch(be, k, "gemm_dot", 18, sizes, vals, global, local);
	}
	/* gemm_op reads V along its rows (unit stride along q) and S one element at a time */
	/* B^T (V.sr != 1, clg_cl_gemm_op_for_bt) always: gemm_op needs unit stride along q */
	pack_v = (V.sr != 1 || want_pack(K, (int64_t)V.sk * (int64_t)ts)) &&
		 packed_elems(Q, K, g.tn, V.sb ? batch : 1) >= 0;
	/* S is read once per tile along q: packed only where PACK_S_QTILES or more read it */
	pack_s = S.sk != 1 && Q >= PACK_S_QTILES * g.tn && want_pack(K, (int64_t)S.sk * (int64_t)ts) &&
		 packed_elems(P, K, g.tm, S.sb ? batch : 1) >= 0;
	S.sp = g.tm * S.sr;
	V.sp = g.tn;
	if ((pack_v && (st = pack_operand(be, opts, &V, Q, Kk, g.tn, batch, ts, &packed[0]))) ||
	    (pack_s && (st = pack_operand(be, opts, &S, P, Kk, g.tm, batch, ts, &packed[1]))))
		goto out;
	{
		size_t sizes[] = {I, I, I, ts, ts, MEM, I, I, I, I, I, MEM, I, I, I, I, I, MEM, I, I, I, I};
		const void *vals[] = {&P, &Q, &Kk, pa, pb, &S.mem, &S.off, &S.sr, &S.sk, &S.sp, &S.sb,
				      &V.mem, &V.off, &V.sk, &V.sp, &V.lim, &V.sb, &mc, &oc, &d_sp, &d_sq, &sc};
		if ((st = clg_cl_kernel(be, "gemm", opts, "gemm_op", &k)))
			goto out;
		global[0] = (size_t)((P + g.tm - 1) / g.tm);
		global[1] = (size_t)((Q + g.tn - 1) / g.tn);
		global[2] = (size_t)batch;
		op_groups(be, k, global, local);
		st = set_and_launch(be, k, "gemm_op", 22, sizes, vals, global, local);
	}
out:
	/* safe at once: the in-order queue runs any later user of these buffers after this GEMM */
	clg_buffer_free(packed[0]);
	clg_buffer_free(packed[1]);
	return st;
}

/* ---- 16-bit operands (kernels_cl/gemm_half.cl) ------------------------------------------------ */

#define HALF_HM 4
#define HALF_HN 4
#define HALF_DHM 4
#define HALF_DHN 2
#define HALF_VN 4

/* Any strides; accumulated in float32 (CLBlast has no bfloat16, and its HGEMM would accumulate in
 * half). */
static clg_status gemm_half(clg_backend *be, const clg_op_call *c, int64_t M, int64_t N, int64_t K, int64_t batch)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst;
	int nd = C->ndim, b3 = nd == 3;
	cl_int m = (cl_int)M, n = (cl_int)N, kk = (cl_int)K;
	cl_int ao = (cl_int)A->offset, asm_ = (cl_int)A->stride[nd - 2], ask = (cl_int)A->stride[nd - 1];
	cl_int bo = (cl_int)B->offset, bsk = (cl_int)B->stride[nd - 2], bsn = (cl_int)B->stride[nd - 1];
	cl_int dof = (cl_int)C->offset, dsm = (cl_int)C->stride[nd - 2], dsn = (cl_int)C->stride[nd - 1];
	cl_int asb = b3 ? (cl_int)A->stride[0] : 0, bsb = b3 ? (cl_int)B->stride[0] : 0, dsb = b3 ? (cl_int)C->stride[0] : 0;
	float alpha = (float)c->f[0], beta = (float)c->f[1];
	cl_mem am = (cl_mem)A->buf->handle, bm = (cl_mem)B->buf->handle, dm = (cl_mem)C->buf->handle;
	/* the layouts of training: B unit along n (outer products), A and B unit along k (dots) */
	int op = bsn == 1 || N == 1, dot = !op && (ask == 1 || K == 1) && (bsk == 1 || K == 1);
	const char *kname = op ? "gemm_half_op" : dot ? "gemm_half_dot" : "gemm_half";
	size_t global[3] = {(size_t)((M + HALF_HM - 1) / HALF_HM), (size_t)((N + HALF_HN - 1) / HALF_HN), (size_t)batch};
	const size_t one[3] = {1, 1, 1};
	char opts[320];
	cl_kernel k;
	cl_int err;
	clg_status st = CLG_OK;

	for (int i = 0; !st && i < 3; i++)
		st = clg_cl_check_int_range(be, c, i ? &c->src[i - 1] : C);
	if (st)
		return st;
	clg_cl_dtype_options(be, C->dtype, opts, sizeof(opts));
	snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), " -DHM=%d -DHN=%d -DDHM=%d -DDHN=%d -DVN=%d",
		 HALF_HM, HALF_HN, HALF_DHM, HALF_DHN, HALF_VN);
	if ((st = clg_cl_kernel(be, "gemm_half", opts, kname, &k)))
		return st;
	if (op) { /* dim 0 along n, 8 VN columns a work-item */
		global[0] = (size_t)((N + 8 * HALF_VN - 1) / (8 * HALF_VN));
		global[1] = (size_t)((M + HALF_HM - 1) / HALF_HM);
	} else if (dot) {
		global[0] = (size_t)((N + HALF_DHN - 1) / HALF_DHN);
		global[1] = (size_t)((M + HALF_DHM - 1) / HALF_DHM);
	}
	{
		size_t sizes[] = {sizeof(cl_int), sizeof(cl_int), sizeof(cl_int), sizeof(float), sizeof(float),
				  sizeof(cl_mem), sizeof(cl_int), sizeof(cl_int), sizeof(cl_int), sizeof(cl_int),
				  sizeof(cl_mem), sizeof(cl_int), sizeof(cl_int), sizeof(cl_int), sizeof(cl_int),
				  sizeof(cl_mem), sizeof(cl_int), sizeof(cl_int), sizeof(cl_int), sizeof(cl_int)};
		const void *vals[] = {&m, &n, &kk, &alpha, &beta, &am, &ao, &asm_, &ask, &asb,
				      &bm, &bo, &bsk, &bsn, &bsb, &dm, &dof, &dsm, &dsn, &dsb};
		st = clg_cl_set_args(be, k, "gemm", 20, sizes, vals);
	}
	if (st)
		return st;
	/* CPU devices: one work-item a work-group, as gemm.cl (each already holds a block of D) */
	err = clg_cl_enqueue(be, k, 3, global, be->info.type == CLG_DEV_CPU && (op || dot) ? one : NULL);
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, "gemm", err, "clEnqueueNDRangeKernel(%s %s, global %zux%zux%zu)", kname,
				   clg_dtype_name(C->dtype), global[0], global[1], global[2]);
	clg_cl_of(be)->stats.n_launch++;
	if (be->recorder)
		clg_cl_record(be, k, 3, global, be->info.type == CLG_DEV_CPU && (op || dot) ? one : NULL);
	return CLG_OK;
}

static clg_status gemm_run(clg_backend *be, const clg_op_call *c, gemm_impl impl, const gemm_tile *tile);

static void swap_last_two(clg_view *v)
{
	int nd = v->ndim;
	int64_t s = v->shape[nd - 1], t = v->stride[nd - 1];
	v->shape[nd - 1] = v->shape[nd - 2], v->stride[nd - 1] = v->stride[nd - 2];
	v->shape[nd - 2] = s, v->stride[nd - 2] = t;
}

/* The float32 copy of a 16-bit view, through CAST into a new buffer in the view's own order: a
 * transposed view is copied as its transpose (unit stride innermost on both sides: a transposed
 * read ran ten times slower) and handed back transposed. */
static clg_status widen(clg_backend *be, const clg_view *v, clg_buffer **buf, clg_view *out)
{
	clg_op_call cast = {.op = CLG_OP_CAST};
	clg_view src = *v;
	int nd = v->ndim, trans = v->stride[nd - 1] != 1 && v->stride[nd - 2] == 1;
	clg_status st = clg_buffer_alloc(be, (size_t)clg_view_numel(v) * sizeof(float), buf);

	if (st)
		return st;
	if (trans)
		swap_last_two(&src);
	clg_view_contiguous(out, *buf, CLG_F32, src.ndim, src.shape);
	cast.dst = *out;
	cast.src[0] = src;
	if (trans)
		swap_last_two(out);
	return clg_run(be, &cast);
}

/* 16-bit GEMM through float32 (CPU devices, or $CLGRAD_GEMM_HALF=staged): A, B (and C where beta
 * is not 0) widened to float32 copies by CAST, the float32 GEMM (tuned, own or CLBlast), the result
 * rounded once into C by CAST. The same numbers as gemm_half (float32 products and sums, one
 * rounding), at the float32 kernels' speed; the copies cost O(MK + KN + MN) against O(MNK). */
static clg_status gemm_staged(clg_backend *be, const clg_op_call *c, gemm_impl impl)
{
	clg_buffer *bufs[3] = {NULL, NULL, NULL};
	clg_op_call g = *c, back = {.op = CLG_OP_CAST};
	clg_status st = widen(be, &c->src[0], &bufs[0], &g.src[0]);

	if (!st)
		st = widen(be, &c->src[1], &bufs[1], &g.src[1]);
	if (!st && c->f[1] != 0)
		st = widen(be, &c->dst, &bufs[2], &g.dst);
	else if (!st && !(st = clg_buffer_alloc(be, (size_t)clg_view_numel(&c->dst) * sizeof(float), &bufs[2])))
		clg_view_contiguous(&g.dst, bufs[2], CLG_F32, c->dst.ndim, c->dst.shape);
	if (!st)
		st = gemm_run(be, &g, impl, NULL);
	back.dst = c->dst;
	back.src[0] = g.dst;
	if (!st)
		st = clg_run(be, &back);
	/* safe at once: the in-order queue runs any later user of these buffers after the casts */
	for (int i = 0; i < 3; i++)
		clg_buffer_free(bufs[i]);
	return st;
}

/* Whether 16-bit operands go through float32 (gemm_staged) rather than gemm_half.cl:
 * $CLGRAD_GEMM_HALF=staged|kernel, else staged on CPU devices without native half, the half
 * kernels elsewhere. On PoCL (storage only) the MLP's three GEMM shapes ran 3 to 10 times faster
 * staged than in gemm_half_op, and an epoch trained faster with every GEMM staged; on Intel's CPU
 * runtime (cl_khr_fp16) the half kernels ran 2 to 5 times faster than staged, faster even than
 * its float32 GEMM (docs/PERFORMANCE.md). */
static int half_staged(const clg_backend *be)
{
	const char *e = clg_cfg_str(CLG_CFG_GEMM_HALF);
	if (e && !strcmp(e, "staged"))
		return 1;
	if (e && !strcmp(e, "kernel"))
		return 0;
	return be->info.type == CLG_DEV_CPU && !clg_half_native(&be->info);
}

/* Checks a GEMM call and runs it with impl (AUTO: the tune result, else by device type) and
 * tile (NULL: the tune result, $CLGRAD_GEMM_TILE or the default). */
static clg_status gemm_run(clg_backend *be, const clg_op_call *c, gemm_impl impl, const gemm_tile *tile)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst;
	int nd = C->ndim;
	size_t M = (size_t)C->shape[nd - 2], N = (size_t)C->shape[nd - 1], K = (size_t)A->shape[nd - 1];
	size_t batch = nd == 3 ? (size_t)C->shape[0] : 1;
	gemm_layout la, lb, lc;
	gemm_tile g;
	gemm_impl tuned_impl = GEMM_AUTO;
	int tuned = 0;
	clg_status st;
	char sa[64], sb[64], sc[64];

	if (C->dtype != CLG_F32 && C->dtype != CLG_F64 && !clg_dtype_is_half_storage(C->dtype))
		return clg_fail(CLG_ERR_DTYPE, "op 'gemm' on device '%s': dtype %s is not supported (float32, float64, float16, bfloat16)",
				be->info.name, clg_dtype_name(C->dtype));
	if ((st = clg_cl_check_dtype(be, c, C->dtype)))
		return st;
	if (layout_of(A, &la) || layout_of(B, &lb) || layout_of(C, &lc) || lc.trans != CLBlastTransposeNo)
		return clg_fail(CLG_ERR_INVALID,
				"op 'gemm' on device '%s': operands need unit stride in one of their last two dims (dst in its last): A %s, B %s, C %s",
				be->info.name, clg_shape_str(A, sa, sizeof(sa)), clg_shape_str(B, sb, sizeof(sb)),
				clg_shape_str(C, sc, sizeof(sc)));
	if (M == 0 || N == 0 || batch == 0)
		return CLG_OK;
	if (K == 0) { /* C = beta * C; beta == 0 ignores C's old contents, even NaN */
		clg_op_call sc_call = {.op = c->f[1] != 0 ? CLG_OP_SCALE : CLG_OP_FILL, .dst = *C, .f = {c->f[1], 0}};
		if (c->f[1] != 0)
			sc_call.src[0] = *C;
		return clg_run(be, &sc_call);
	}
	if (clg_dtype_is_half_storage(C->dtype))
		return half_staged(be) ? gemm_staged(be, c, impl) : gemm_half(be, c, (int64_t)M, (int64_t)N, (int64_t)K, (int64_t)batch);
	if (!tile) {
		/* float32 only: tune results are measured in float32 */
		if (C->dtype == CLG_F32)
			tuned = clg_cl_tune_lookup(be, la.trans == CLBlastTransposeYes, lb.trans == CLBlastTransposeYes,
						   (int64_t)M, (int64_t)N, (int64_t)K, (int64_t)batch, &tuned_impl, &g);
		if (!tuned) {
			clg_cl_gemm_default_tile(be, C->dtype, &g);
			/* gemm_op's rows (Q) are C's, or C^T's when both operands are transposed */
			long_side_tile(&g, la.trans == CLBlastTransposeYes && lb.trans == CLBlastTransposeYes ? M : N, K);
		}
		tile_from_env(&g);
		tile = &g;
	}
	if (impl == GEMM_AUTO)
		impl = tuned ? tuned_impl : be->info.type == CLG_DEV_CPU ? GEMM_OWN : GEMM_CLBLAST;
	if (impl == GEMM_OWN)
		return gemm_own(be, c, (int64_t)M, (int64_t)N, (int64_t)K, (int64_t)batch, &la, &lb, &lc, tile);
	return gemm_clblast(be, c, M, N, K, batch, &la, &lb, &lc);
}

clg_status clg_cl_gemm_forced(clg_backend *be, const clg_op_call *c, clg_cl_gemm_impl impl,
			      const clg_cl_gemm_tile *tile)
{
	gemm_tile g;

	if (!tile) {
		clg_cl_gemm_default_tile(be, c->dst.dtype, &g);
		tile = &g;
	}
	return gemm_run(be, c, impl == GEMM_AUTO ? GEMM_OWN : impl, tile);
}

clg_status clg_cl_gemm(clg_backend *be, const clg_op_call *c)
{
	return gemm_run(be, c, impl_from_config(), NULL);
}

/* ---- GEMM with the linear layer's epilogue ------------------------------------------------------ */

/* gemm_bias_act as gemm_op_bias_act (see clg_cl_gemm_op_for_bt): B^T, the weight, packed into panels of TN
 * columns, then the product with the bias and activation applied as it is stored. */
static clg_status bias_act_op(clg_backend *be, const clg_op_call *c, const gemm_layout *la, const gemm_layout *lb,
			      const gemm_layout *lc, const gemm_tile *g)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst, *bias = &c->src[2];
	cl_int P = (cl_int)C->shape[0], Q = (cl_int)C->shape[1], Kk = (cl_int)A->shape[1], act = (cl_int)c->i[0];
	cl_int oc = (cl_int)C->offset, ldc = (cl_int)lc->ld, obias = (cl_int)bias->offset;
	cl_int sbias = (cl_int)bias->stride[0];
	cl_mem mc = (cl_mem)C->buf->handle, mbias = (cl_mem)bias->buf->handle;
	size_t ts = C->dtype == CLG_F64 ? sizeof(double) : sizeof(float), global[3], local[3] = {1, 1, 1};
	const size_t I = sizeof(cl_int), MEM = sizeof(cl_mem);
	op_operand S = {(cl_mem)A->buf->handle, (cl_int)A->offset, (cl_int)la->ld, 1, 0, 0, P};
	op_operand V = {(cl_mem)B->buf->handle, (cl_int)B->offset, (cl_int)lb->ld, 1, 0, 0, Q};
	clg_buffer *packed = NULL;
	char opts[256];
	cl_kernel k;
	clg_status st = CLG_OK;

	for (int i = 0; !st && i < 4; i++)
		st = clg_cl_check_int_range(be, c, i < 3 ? &c->src[i] : C);
	if (st || P == 0 || Q == 0)
		return st;
	own_options(be, C->dtype, g, opts, sizeof(opts));
	S.sp = g->tm * S.sr;
	if ((st = pack_operand(be, opts, &V, Q, Kk, g->tn, 1, ts, &packed)) ||
	    (st = clg_cl_kernel(be, "gemm", opts, "gemm_op_bias_act", &k)))
		goto out;
	{
		size_t sizes[] = {I, I, I, MEM, I, I, I, MEM, I, I, I, I, MEM, I, I, MEM, I, I, I};
		const void *vals[] = {&P, &Q, &Kk, &S.mem, &S.off, &S.sr, &S.sp, &V.mem, &V.off, &V.sk, &V.sp, &V.lim,
				      &mc, &oc, &ldc, &mbias, &obias, &sbias, &act};
		global[0] = (size_t)((P + g->tm - 1) / g->tm);
		global[1] = (size_t)((Q + g->tn - 1) / g->tn);
		global[2] = 1;
		op_groups(be, k, global, local);
		st = set_and_launch(be, k, "gemm_op_bias_act", 19, sizes, vals, global, local);
	}
out:
	/* safe at once: the in-order queue runs any later user of the buffer after this GEMM */
	clg_buffer_free(packed);
	return st;
}

/* dst = act(A @ B + bias) (GEMM_BIAS_ACT, clg_ops.def): where the GEMM would run as the own CPU
 * kernel gemm_dot (float32 or float64, A as stored, B transposed: x @ w^T), gemm_dot_bias_act (or,
 * where clg_cl_gemm_op_for_bt picks gemm_op, gemm_op_bias_act) adds the bias and applies relu (or
 * nothing) as it stores, saving BIAS_ACT's launch and its pass over
 * dst; otherwise (GELU, CLBlast, the GPU shape, other layouts, 16-bit operands, a GEMM routed by
 * the self-test) GEMM then BIAS_ACT in place, each through clg_run. */
clg_status clg_cl_gemm_bias_act(clg_backend *be, const clg_op_call *c)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst, *bias = &c->src[2];
	int64_t M = C->ndim == 2 ? C->shape[0] : 0, N = C->ndim == 2 ? C->shape[1] : 0;
	int64_t K = A->ndim == 2 ? A->shape[1] : 0;
	gemm_layout la, lb, lc;
	gemm_impl impl = GEMM_AUTO, tuned_impl = GEMM_AUTO;
	gemm_tile g;
	int tuned = 0, fused;
	clg_status st = clg_fused_check(be, c);

	if (st)
		return st;
	impl = impl_from_config();
	fused = (C->dtype == CLG_F32 || C->dtype == CLG_F64) && be->ops[CLG_OP_GEMM] == clg_cl_gemm &&
		(c->i[0] == CLG_FUSED_NONE || c->i[0] == CLG_FUSED_RELU) && !layout_of(A, &la) && !layout_of(B, &lb) &&
		!layout_of(C, &lc) && lc.trans == CLBlastTransposeNo && la.trans == CLBlastTransposeNo &&
		lb.trans == CLBlastTransposeYes && clg_backend_kernel_shape(be, CLG_KFAM_GEMM, NULL) != CLG_SHAPE_GPU;
	if (fused && C->dtype == CLG_F32)
		tuned = clg_cl_tune_lookup(be, 0, 1, M, N, K, 1, &tuned_impl, &g);
	if (fused && !tuned)
		clg_cl_gemm_default_tile(be, C->dtype, &g);
	if (fused)
		tile_from_env(&g);
	if (impl == GEMM_AUTO)
		impl = tuned ? tuned_impl : be->info.type == CLG_DEV_CPU ? GEMM_OWN : GEMM_CLBLAST;
	if (fused && impl == GEMM_OWN && c->op == CLG_OP_GEMM_BIAS_ACT && clg_cl_gemm_op_for_bt(M, N, K) &&
	    packed_elems(N, K, g.tn, 1) >= 0 && (c->i[0] == CLG_FUSED_NONE || c->i[0] == CLG_FUSED_RELU))
		return bias_act_op(be, c, &la, &lb, &lc, &g);
	if (fused && impl == GEMM_OWN) {
		cl_int P = (cl_int)M, Q = (cl_int)N, Kk = (cl_int)K, act = (cl_int)c->i[0];
		cl_int oa = (cl_int)A->offset, ob = (cl_int)B->offset, oc = (cl_int)C->offset, obias = (cl_int)bias->offset;
		cl_int lda = (cl_int)la.ld, ldb = (cl_int)lb.ld, ldc = (cl_int)lc.ld, sbias = (cl_int)bias->stride[0];
		cl_mem ma = (cl_mem)A->buf->handle, mb = (cl_mem)B->buf->handle, mc = (cl_mem)C->buf->handle;
		cl_mem mbias = (cl_mem)bias->buf->handle;
		const size_t I = sizeof(cl_int), MEM = sizeof(cl_mem);
		size_t sizes[] = {I, I, I, MEM, I, I, MEM, I, I, MEM, I, I, MEM, I, I, I}, global[3], local[3] = {1, 1, 1};
		const void *vals[] = {&P, &Q, &Kk, &ma, &oa, &lda, &mb, &ob, &ldb, &mc, &oc, &ldc, &mbias, &obias, &sbias, &act};
		char opts[256];
		cl_kernel k;

		for (int i = 0; !st && i < 4; i++)
			st = clg_cl_check_int_range(be, c, i < 3 ? &c->src[i] : C);
		if (st || M == 0 || N == 0)
			return st;
		own_options(be, C->dtype, &g, opts, sizeof(opts));
		if ((st = clg_cl_kernel(be, "gemm", opts, "gemm_dot_bias_act", &k)))
			return st;
		global[0] = (size_t)((P + g.dm - 1) / g.dm);
		global[1] = (size_t)((Q + g.dn - 1) / g.dn);
		global[2] = 1;
		local[0] = dot_local(be, k, global[0]);
		return set_and_launch(be, k, "gemm_dot_bias_act", 16, sizes, vals, global, local);
	}
	{
		clg_op_call gm = {.op = CLG_OP_GEMM, .dst = *C, .f = {1.0, 0.0}};
		clg_op_call ba = {.op = CLG_OP_BIAS_ACT, .dst = *C, .i = {c->i[0]}};
		gm.src[0] = *A;
		gm.src[1] = *B;
		ba.src[0] = *C;
		ba.src[1] = *bias;
		st = clg_run(be, &gm);
		return st ? st : clg_run(be, &ba);
	}
}
