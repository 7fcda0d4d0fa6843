/* Fused scaled dot-product attention (semantics: backend/clg_ops.def, "fused scaled dot-product
 * attention"), FlashAttention style: no (Tq, Tk) matrix in global memory. The forward walks the
 * keys with an online softmax (running max m and sum l, the output rescaled when m grows) and
 * stores each query row's log-sum-exp; the backward recomputes the probabilities from q, k and
 * that log-sum-exp: attn_bwd_dq_* (one query row per work-item: dq, and delta_i = do_i . o_i into
 * a scratch buffer), then attn_bwd_dkv_* (one key row per work-item: dk, dv), each row summed by
 * one work-item in a fixed order, so results are deterministic without atomics.
 * Two shapes per kernel (backend/kernel_shape.c, family "attention"):
 *   _cpu: a work-item per row, walking the other side in global memory; no barriers.
 *   _gpu: a work-group per tile of rows; the other side's rows come through local memory in tiles
 *         of g.tile rows (sized by the host from CL_DEVICE_LOCAL_MEM_SIZE); a causal forward / dq
 *         stops at its tile's last visible key, a causal dkv starts at its tile's first key.
 * Expects: -DT, -DACC (and -DUSE_FP64) as every program; -DDH=<q, k width> -DDV=<v, o width>;
 * -DKB=<scores per online-softmax step>. Operands are (b, h, t, x) strided views (ageom). */
#ifndef DH /* defaults, for builds without the host's options (the kernel-compile test) */
#define DH 64
#endif
#ifndef DV
#define DV DH
#endif
#ifndef KB
#define KB 16
#endif

/* operand roles in ageom (the host's order, cl_ops_attention.c) */
#define A_Q 0
#define A_K 1
#define A_V 2
#define A_O 3
#define A_L 4 /* log-sum-exp (b, h, t) */
#define A_DO 5
#define A_DQ 6
#define A_DK 7
#define A_DV 8

typedef struct {
	int B, H, Tq, Tk, causal;
	int tile;      /* _gpu: rows per local-memory tile */
	int off[9];    /* element offsets */
	int st[9][4];  /* strides of (b, h, t, x) */
} ageom;

#define ROW(r, b, h, t) (g.off[r] + (b) * g.st[r][0] + (h) * g.st[r][1] + (t) * g.st[r][2])
#define XS(r) g.st[r][3]

/* Folds keys [0, n) into one query row's running max m, sum l and output acc (DV): KB scores at a
 * time, one rescale per step when the max grows. qv is the query already times the scale.
 * KEY(j, x) and VAL(j, x) read key j (global or local memory). */
#define FWD_KEYS(n, KEY, VAL)                                                                      \
	for (int j0 = 0; j0 < (n); j0 += KB) {                                                     \
		int nb = min(KB, (n) - j0);                                                        \
		ACC bm = m, s[KB];                                                                 \
		for (int jj = 0; jj < nb; jj++) {                                                  \
			ACC dot = (ACC)0;                                                          \
			for (int x = 0; x < DH; x++)                                               \
				dot += qv[x] * KEY(j0 + jj, x);                                    \
			s[jj] = dot;                                                               \
			bm = fmax(bm, dot);                                                        \
		}                                                                                  \
		if (bm > m) {                                                                      \
			ACC corr = exp(m - bm);                                                    \
			l *= corr;                                                                 \
			for (int x = 0; x < DV; x++)                                               \
				acc[x] *= corr;                                                    \
			m = bm;                                                                    \
		}                                                                                  \
		for (int jj = 0; jj < nb; jj++) {                                                  \
			ACC p = exp(s[jj] - m);                                                    \
			l += p;                                                                    \
			for (int x = 0; x < DV; x++)                                               \
				acc[x] += p * VAL(j0 + jj, x);                                     \
		}                                                                                  \
	}

/* dq of one query row over keys [0, n): qv scaled, dov its output gradient, lr its log-sum-exp,
 * dl its delta */
#define DQ_KEYS(n, KEY, VAL)                                                                       \
	for (int j = 0; j < (n); j++) {                                                            \
		ACC s = (ACC)0, dp = (ACC)0;                                                       \
		for (int x = 0; x < DH; x++)                                                       \
			s += qv[x] * KEY(j, x);                                                    \
		for (int x = 0; x < DV; x++)                                                       \
			dp += dov[x] * VAL(j, x);                                                  \
		ACC ds = exp(s - lr) * (dp - dl);                                                  \
		for (int x = 0; x < DH; x++)                                                       \
			dq[x] += ds * KEY(j, x);                                                   \
	}

/* dk, dv of one key row over queries [i0, n): kv scaled, vv its value */
#define DKV_QUERIES(i0, n, QRY, DOUT, LSE, DELTA)                                                  \
	for (int i = (i0); i < (n); i++) {                                                         \
		ACC s = (ACC)0, dp = (ACC)0;                                                       \
		for (int x = 0; x < DH; x++)                                                       \
			s += kv[x] * QRY(i, x);                                                    \
		ACC p = exp(s - LSE(i));                                                           \
		for (int x = 0; x < DV; x++) {                                                     \
			ACC d = DOUT(i, x);                                                        \
			dp += d * vv[x];                                                           \
			dv[x] += p * d;                                                            \
		}                                                                                  \
		ACC ds = p * (dp - DELTA(i));                                                      \
		for (int x = 0; x < DH; x++)                                                       \
			dk[x] += ds * QRY(i, x);                                                   \
	}

/* global-memory rows (the _cpu shape, and the tile loads) */
#define GKEY(j, x) LOAD(k, kr + (j) * g.st[A_K][2] + (x) * XS(A_K))
#define GVAL(j, x) LOAD(v, vr + (j) * g.st[A_V][2] + (x) * XS(A_V))
#define GQRY(i, x) LOAD(q, qr + (i) * g.st[A_Q][2] + (x) * XS(A_Q))
#define GDO(i, x) LOAD(dO, dor + (i) * g.st[A_DO][2] + (x) * XS(A_DO))
#define GLSE(i) LOAD(lse, lr0 + (i) * g.st[A_L][2])
#define GDELTA(i) delta[bh * g.Tq + (i)]
/* local-memory tiles */
#define LKEY(j, x) ks[(j) * DH + (x)]
#define LVAL(j, x) vs[(j) * DV + (x)]
#define LQRY(i, x) qs[(i) * DH + (x)]
#define LDO(i, x) os[(i) * DV + (x)]
#define LLSE(i) ls[i]
#define LDELTA(i) ls[g.tile + (i)]

/* the keys query i sees */
#define VISIBLE(i) (g.causal ? min(g.Tk, (i) + 1) : g.Tk)

/* Row i of head bh: b, h and the row's start in operand r (used by the stores below). */
#define HEAD(bh) int b = (bh) / g.H, h = (bh) - b * g.H

#define FWD_STORE                                                                                  \
	{                                                                                          \
		int orow = ROW(A_O, b, h, i);                                                      \
		ACC inv = l > (ACC)0 ? (ACC)1 / l : (ACC)0;                                        \
		for (int x = 0; x < DV; x++)                                                       \
			STORE(o, orow + x * XS(A_O), acc[x] * inv);                                \
		STORE(lse, ROW(A_L, b, h, i), l > (ACC)0 ? m + log(l) : -INFINITY);                \
	}

/* one work-item per query row */
__kernel void attn_fwd_cpu(const ageom g, const ACC scale, __global const T *q, __global const T *k,
			   __global const T *v, __global T *o, __global T *lse)
{
	int r = get_global_id(0);
	if (r >= g.B * g.H * g.Tq)
		return;
	int bh = r / g.Tq, i = r - bh * g.Tq;
	HEAD(bh);
	int qr = ROW(A_Q, b, h, i), kr = ROW(A_K, b, h, 0), vr = ROW(A_V, b, h, 0);
	ACC qv[DH], acc[DV], m = -INFINITY, l = (ACC)0;
	for (int x = 0; x < DH; x++)
		qv[x] = scale * LOAD(q, qr + x * XS(A_Q));
	for (int x = 0; x < DV; x++)
		acc[x] = (ACC)0;
	FWD_KEYS(VISIBLE(i), GKEY, GVAL)
	FWD_STORE
}

/* one work-group per tile of get_local_size(0) query rows; keys through local memory */
__kernel void attn_fwd_gpu(const ageom g, const ACC scale, __global const T *q, __global const T *k,
			   __global const T *v, __global T *o, __global T *lse, __local ACC *ks, __local ACC *vs)
{
	int L = get_local_size(0), li = get_local_id(0), tiles = (g.Tq + L - 1) / L;
	int bh = get_group_id(0) / tiles, q0 = (get_group_id(0) - bh * tiles) * L, i = q0 + li, live = i < g.Tq;
	HEAD(bh);
	int kr = ROW(A_K, b, h, 0), vr = ROW(A_V, b, h, 0), kend = g.causal ? min(g.Tk, min(g.Tq, q0 + L)) : g.Tk;
	ACC qv[DH], acc[DV], m = -INFINITY, l = (ACC)0;
	for (int x = 0; x < DH; x++)
		qv[x] = live ? scale * LOAD(q, ROW(A_Q, b, h, i) + x * XS(A_Q)) : (ACC)0;
	for (int x = 0; x < DV; x++)
		acc[x] = (ACC)0;
	for (int t0 = 0; t0 < kend; t0 += g.tile) {
		int n = min(g.tile, kend - t0);
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int e = li; e < n * DH; e += L)
			ks[e] = GKEY(t0 + e / DH, e % DH);
		for (int e = li; e < n * DV; e += L)
			vs[e] = GVAL(t0 + e / DV, e % DV);
		barrier(CLK_LOCAL_MEM_FENCE);
		int nm = live ? clamp(VISIBLE(i) - t0, 0, n) : 0;
		FWD_KEYS(nm, LKEY, LVAL)
	}
	if (live)
		FWD_STORE
}

/* Loads query row i's scaled q, do, lse, and computes and stores its delta. */
#define DQ_ROW_START                                                                               \
	ACC qv[DH], dov[DV], dq[DH], dl = (ACC)0, lr = (ACC)0;                                     \
	if (live) {                                                                                \
		int qr = ROW(A_Q, b, h, i), dor = ROW(A_DO, b, h, i), orow = ROW(A_O, b, h, i);    \
		for (int x = 0; x < DH; x++)                                                       \
			qv[x] = scale * LOAD(q, qr + x * XS(A_Q));                                 \
		for (int x = 0; x < DV; x++) {                                                     \
			dov[x] = LOAD(dO, dor + x * XS(A_DO));                                     \
			dl += dov[x] * LOAD(o, orow + x * XS(A_O));                                \
		}                                                                                  \
		lr = LOAD(lse, ROW(A_L, b, h, i));                                                 \
		delta[bh * g.Tq + i] = dl;                                                         \
	}                                                                                          \
	for (int x = 0; x < DH; x++)                                                               \
		dq[x] = (ACC)0;

#define DQ_STORE                                                                                   \
	{                                                                                          \
		int dqr = ROW(A_DQ, b, h, i);                                                      \
		for (int x = 0; x < DH; x++)                                                       \
			STORE(dqo, dqr + x * XS(A_DQ), scale * dq[x]);                             \
	}

__kernel void attn_bwd_dq_cpu(const ageom g, const ACC scale, __global T *dqo, __global const T *dO,
			      __global const T *q, __global const T *k, __global const T *v, __global const T *o,
			      __global const T *lse, __global ACC *delta)
{
	int r = get_global_id(0);
	if (r >= g.B * g.H * g.Tq)
		return;
	int bh = r / g.Tq, i = r - bh * g.Tq, live = 1;
	HEAD(bh);
	int kr = ROW(A_K, b, h, 0), vr = ROW(A_V, b, h, 0);
	DQ_ROW_START
	DQ_KEYS(VISIBLE(i), GKEY, GVAL)
	DQ_STORE
}

__kernel void attn_bwd_dq_gpu(const ageom g, const ACC scale, __global T *dqo, __global const T *dO,
			      __global const T *q, __global const T *k, __global const T *v, __global const T *o,
			      __global const T *lse, __global ACC *delta, __local ACC *ks, __local ACC *vs)
{
	int L = get_local_size(0), li = get_local_id(0), tiles = (g.Tq + L - 1) / L;
	int bh = get_group_id(0) / tiles, q0 = (get_group_id(0) - bh * tiles) * L, i = q0 + li, live = i < g.Tq;
	HEAD(bh);
	int kr = ROW(A_K, b, h, 0), vr = ROW(A_V, b, h, 0), kend = g.causal ? min(g.Tk, min(g.Tq, q0 + L)) : g.Tk;
	DQ_ROW_START
	for (int t0 = 0; t0 < kend; t0 += g.tile) {
		int n = min(g.tile, kend - t0);
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int e = li; e < n * DH; e += L)
			ks[e] = GKEY(t0 + e / DH, e % DH);
		for (int e = li; e < n * DV; e += L)
			vs[e] = GVAL(t0 + e / DV, e % DV);
		barrier(CLK_LOCAL_MEM_FENCE);
		int nm = live ? clamp(VISIBLE(i) - t0, 0, n) : 0;
		DQ_KEYS(nm, LKEY, LVAL)
	}
	if (live)
		DQ_STORE
}

/* Loads key row j's scaled k and its v. */
#define DKV_ROW_START                                                                              \
	ACC kv[DH], vv[DV], dk[DH], dv[DV];                                                        \
	for (int x = 0; x < DH; x++) {                                                             \
		kv[x] = live ? scale * LOAD(k, ROW(A_K, b, h, j) + x * XS(A_K)) : (ACC)0;          \
		dk[x] = (ACC)0;                                                                    \
	}                                                                                          \
	for (int x = 0; x < DV; x++) {                                                             \
		vv[x] = live ? LOAD(v, ROW(A_V, b, h, j) + x * XS(A_V)) : (ACC)0;                  \
		dv[x] = (ACC)0;                                                                    \
	}

#define DKV_STORE                                                                                  \
	{                                                                                          \
		int dkr = ROW(A_DK, b, h, j), dvr = ROW(A_DV, b, h, j);                            \
		for (int x = 0; x < DH; x++)                                                       \
			STORE(dko, dkr + x * XS(A_DK), scale * dk[x]);                             \
		for (int x = 0; x < DV; x++)                                                       \
			STORE(dvo, dvr + x * XS(A_DV), dv[x]);                                     \
	}

/* one work-item per key row (after attn_bwd_dq_*, which wrote delta) */
__kernel void attn_bwd_dkv_cpu(const ageom g, const ACC scale, __global T *dko, __global T *dvo,
			       __global const T *dO, __global const T *q, __global const T *k, __global const T *v,
			       __global const T *lse, __global const ACC *delta)
{
	int r = get_global_id(0);
	if (r >= g.B * g.H * g.Tk)
		return;
	int bh = r / g.Tk, j = r - bh * g.Tk, live = 1;
	HEAD(bh);
	int qr = ROW(A_Q, b, h, 0), dor = ROW(A_DO, b, h, 0), lr0 = ROW(A_L, b, h, 0);
	DKV_ROW_START
	DKV_QUERIES(g.causal ? j : 0, g.Tq, GQRY, GDO, GLSE, GDELTA)
	DKV_STORE
}

/* one work-group per tile of get_local_size(0) key rows; queries through local memory */
__kernel void attn_bwd_dkv_gpu(const ageom g, const ACC scale, __global T *dko, __global T *dvo,
			       __global const T *dO, __global const T *q, __global const T *k, __global const T *v,
			       __global const T *lse, __global const ACC *delta, __local ACC *qs, __local ACC *os,
			       __local ACC *ls)
{
	int L = get_local_size(0), li = get_local_id(0), tiles = (g.Tk + L - 1) / L;
	int bh = get_group_id(0) / tiles, k0 = (get_group_id(0) - bh * tiles) * L, j = k0 + li, live = j < g.Tk;
	HEAD(bh);
	int qr = ROW(A_Q, b, h, 0), dor = ROW(A_DO, b, h, 0), lr0 = ROW(A_L, b, h, 0);
	DKV_ROW_START
	for (int t0 = g.causal ? min(k0, g.Tq) : 0; t0 < g.Tq; t0 += g.tile) {
		int n = min(g.tile, g.Tq - t0);
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int e = li; e < n * DH; e += L)
			qs[e] = GQRY(t0 + e / DH, e % DH);
		for (int e = li; e < n * DV; e += L)
			os[e] = GDO(t0 + e / DV, e % DV);
		for (int e = li; e < n; e += L) {
			ls[e] = GLSE(t0 + e);
			ls[g.tile + e] = GDELTA(t0 + e);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		int first = live ? (g.causal ? clamp(j - t0, 0, n) : 0) : n;
		DKV_QUERIES(first, n, LQRY, LDO, LLSE, LDELTA)
	}
	if (live)
		DKV_STORE
}
