/* Fused scaled dot-product attention (semantics: backend/clg_ops.def, "fused scaled dot-product
 * attention"), FlashAttention style: the forward writes no (Tq, Tk) matrix to global memory; it
 * walks the keys with an online softmax (running max m and sum l, the output rescaled when m
 * grows) and stores each query row's log-sum-exp; the backward recomputes the probabilities from q, k and
 * that log-sum-exp: attn_bwd_dq_* (query rows: dq, and delta_i = do_i . o_i into a scratch
 * buffer), then attn_bwd_dkv_* (key rows: dk, dv), each row summed by one work-item in a fixed
 * order, so results are deterministic without atomics. Under the cpu shape, where the host's
 * scratch allows, attn_bwd_dkvs_cpu (dk, dv and every ds stored) then attn_bwd_dqs_cpu (dq = ds k)
 * instead: each score and its exp computed once (see there).
 * Two shapes per kernel (backend/kernel_shape.c, family "attention"):
 *   _cpu: a work-item per block of QB rows of a head, a row a lane of an ACC vector, walking the
 *         other side's rows in global memory with uniform loop bounds (the causal part masked);
 *         no barriers. A work-item per row with a causal trip count of its own ran at ~4 GFLOP/s
 *         on PoCL: its loops could not be vectorized across work-items, nor its exps.
 *   _gpu: a work-group per tile of rows; the other side's rows come through local memory in tiles
 *         of g.tile rows (sized by the host from CL_DEVICE_LOCAL_MEM_SIZE); a causal forward / dq
 *         stops at its tile's last visible key, a causal dkv starts at its tile's first key.
 * Expects: -DT, -DACC (and -DUSE_FP64) as every program; -DDH=<q, k width> -DDV=<v, o width>;
 * -DKB=<scores per online-softmax step> (_gpu); -DATTN_GPU or -DATTN_CPU builds only that shape's
 * kernels (the host's builds: a driver compiles every kernel of a program), neither builds both.
 * Operands are (b, h, t, x) strided views (ageom). */
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

#ifndef ATTN_CPU /* the host builds one shape's kernels: -DATTN_GPU or -DATTN_CPU */
/* one work-group per tile of get_local_size(0) query rows; keys through local memory */
#if CLG_WANT(attn_fwd_gpu)
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
#endif

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

#if CLG_WANT(attn_bwd_dq_gpu)
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
#endif

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

/* one work-group per tile of get_local_size(0) key rows; queries through local memory */
#if CLG_WANT(attn_bwd_dkv_gpu)
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
#endif
#endif /* ATTN_CPU */

#ifndef ATTN_GPU
/* ---- _cpu shape: QB rows per work-item, one row a lane of an ACC16 vector (VT) ----
 * A work-item holds its QB rows transposed (qt[x]: element x of each row) and walks the other
 * side's rows one at a time: each score is DH vector FMAs with a broadcast element, each exp is
 * one vector exp, and every loop bound is the same for all lanes (the causal part is masked with
 * select), a small outer-product GEMM without private arrays indexed by lane. */
#define QB 16 /* rows a work-item (QB in cl_ops_attention.c): 4 and 8 ran 2-4x slower on PoCL and Intel */
#define CKB 16 /* scores per online-softmax step in attn_fwd_cpu, even (8: ~6% more CPU time at T 128, Dh 32) */
#define VCAT_(a, b) a##b
#define VCAT(a, b) VCAT_(a, b)
#define VT VCAT(ACC, QB)
#define VLOADQ VCAT(vload, QB)
#define VSTOREQ VCAT(vstore, QB)
#define IOTA ((VT)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))

/* R = the sum of TERM(x) over x in [0, n) in four chains: PoCL keeps the x loops rolled, and one
 * accumulator made each score a chain of n dependent FMAs (latency-bound). TERM(x) is a VT. */
#define VDOT(R, n, TERM)                                                                           \
	{                                                                                          \
		VT a0_ = (VT)0, a1_ = (VT)0, a2_ = (VT)0, a3_ = (VT)0;                             \
		int x_ = 0;                                                                        \
		for (; x_ + 4 <= (n); x_ += 4) {                                                   \
			a0_ += TERM(x_);                                                           \
			a1_ += TERM(x_ + 1);                                                       \
			a2_ += TERM(x_ + 2);                                                       \
			a3_ += TERM(x_ + 3);                                                       \
		}                                                                                  \
		for (; x_ < (n); x_++)                                                             \
			a0_ += TERM(x_);                                                           \
		R = (a0_ + a1_) + (a2_ + a3_);                                                     \
	}

/* V = EXPR of rows r0 .. r0 + QB - 1 (EXPR reads its row as r_), rows past `last` read as `last` */
#define GATHER(V, r0, last, EXPR)                                                                  \
	{                                                                                          \
		ACC t_[QB];                                                                        \
		for (int l_ = 0; l_ < QB; l_++) {                                                  \
			int r_ = min((r0) + l_, (last));                                           \
			t_[l_] = EXPR;                                                             \
		}                                                                                  \
		V = VLOADQ(0, t_);                                                                 \
	}
/* STMT for the lanes of V whose rows r_ = r0 + lane are below n, with the lane's value as e_ */
#define SCATTER(V, r0, n, STMT)                                                                    \
	{                                                                                          \
		ACC t_[QB];                                                                        \
		VSTOREQ((V), 0, t_);                                                               \
		for (int l_ = 0; l_ < QB && (r0) + l_ < (n); l_++) {                               \
			int r_ = (r0) + l_;                                                        \
			ACC e_ = t_[l_];                                                           \
			STMT;                                                                      \
		}                                                                                  \
	}

/* VDOT terms: score of query lanes with key j (FWD_S), dp of query lanes (DQ_DP), score and dp of
 * key lanes with query i (KV_S, KV_DP), dp - delta_i of key lanes (KVS_DPD: do_i . (v - o_i)) */
#define FWD_S(x) qt[x] * GKEY(j, x)
#define DQ_DP(x) dot[x] * GVAL(j, x)
#define KV_S(x) kt[x] * GQRY(i, x)
#define KV_DP(x) vt[x] * GDO(i, x)
#define KVS_DPD(x) (vt[x] - LOAD(o, orow + i * g.st[A_O][2] + (x) * XS(A_O))) * GDO(i, x)

/* Work-item w: head bh, rows r0 .. r0 + QB - 1 of a side of n rows. */
#define BLOCK(n, r0)                                                                               \
	int nb_ = ((n) + QB - 1) / QB, w_ = get_global_id(0);                                      \
	if (w_ >= g.B * g.H * nb_)                                                                 \
		return;                                                                            \
	int bh = w_ / nb_, r0 = (w_ - bh * nb_) * QB;                                              \
	HEAD(bh)

/* Keys a block of query rows from i0 walks (kend), and each lane's last visible key (vlast): row
 * numbers as ACC, exact up to 2^24 rows (the host's limit for this shape). */
#define QUERY_KEYS(i0)                                                                             \
	int kend = g.causal ? min(g.Tk, min(g.Tq, (i0) + QB)) : g.Tk;                              \
	VT vlast = (VT)(ACC)(kend - 1);                                                            \
	if (g.causal)                                                                              \
		vlast = fmin(vlast, (VT)(ACC)(i0) + IOTA);

/* A block of query rows: the keys through an online softmax, CKB scores a step (a masked tail),
 * two keys at a time into acc (spilled: read and written once for both). */
#if CLG_WANT(attn_fwd_cpu)
__kernel void attn_fwd_cpu(const ageom g, const ACC scale, __global const T *q, __global const T *k,
			   __global const T *v, __global T *o, __global T *lse)
{
	BLOCK(g.Tq, i0);
	int qr = ROW(A_Q, b, h, 0), kr = ROW(A_K, b, h, 0), vr = ROW(A_V, b, h, 0);
	QUERY_KEYS(i0)
	VT qt[DH], acc[DV], m = (VT)(-INFINITY), l = (VT)0;
	for (int x = 0; x < DH; x++) {
		GATHER(qt[x], i0, g.Tq - 1, LOAD(q, qr + r_ * g.st[A_Q][2] + x * XS(A_Q)))
		qt[x] *= scale;
	}
	for (int x = 0; x < DV; x++)
		acc[x] = (VT)0;
	for (int j0 = 0; j0 < kend; j0 += CKB) {
		VT s[CKB], bm = m;
		for (int jj = 0; jj < CKB; jj++) {
			int j = min(j0 + jj, kend - 1);
			VT d;
			VDOT(d, DH, FWD_S)
			s[jj] = select(d, (VT)(-INFINITY), (VT)(ACC)(j0 + jj) > vlast);
			bm = fmax(bm, s[jj]);
		}
		VT corr = exp(m - bm); /* key 0 is every lane's: bm is finite from the first step */
		l *= corr;
		for (int x = 0; x < DV; x++)
			acc[x] *= corr;
		m = bm;
		for (int jj = 0; jj < CKB; jj += 2) {
			int j = min(j0 + jj, kend - 1), j1 = min(j0 + jj + 1, kend - 1);
			VT p = exp(s[jj] - m), p1 = exp(s[jj + 1] - m);
			l += p + p1;
			for (int x = 0; x < DV; x++) {
				VT a = acc[x];
				a += p * GVAL(j, x);
				a += p1 * GVAL(j1, x);
				acc[x] = a;
			}
		}
	}
	VT inv = select((VT)0, (VT)1 / l, l > (VT)0);
	for (int x = 0; x < DV; x++)
		SCATTER(acc[x] * inv, i0, g.Tq, STORE(o, ROW(A_O, b, h, r_) + x * XS(A_O), e_))
	SCATTER(select((VT)(-INFINITY), m + log(l), l > (VT)0), i0, g.Tq, STORE(lse, ROW(A_L, b, h, r_), e_))
}
#endif

/* A block of query rows: dq, and delta = do . o of each row into the scratch buffer. */
#if CLG_WANT(attn_bwd_dq_cpu)
__kernel void attn_bwd_dq_cpu(const ageom g, const ACC scale, __global T *dqo, __global const T *dO,
			      __global const T *q, __global const T *k, __global const T *v, __global const T *o,
			      __global const T *lse, __global ACC *delta)
{
	BLOCK(g.Tq, i0);
	int qr = ROW(A_Q, b, h, 0), dor = ROW(A_DO, b, h, 0), orow = ROW(A_O, b, h, 0), lr0 = ROW(A_L, b, h, 0);
	int kr = ROW(A_K, b, h, 0), vr = ROW(A_V, b, h, 0);
	QUERY_KEYS(i0)
	VT qt[DH], dot[DV], dq[DH], dl = (VT)0, lr, ov;
	for (int x = 0; x < DH; x++) {
		GATHER(qt[x], i0, g.Tq - 1, LOAD(q, qr + r_ * g.st[A_Q][2] + x * XS(A_Q)))
		qt[x] *= scale;
		dq[x] = (VT)0;
	}
	for (int x = 0; x < DV; x++) {
		GATHER(dot[x], i0, g.Tq - 1, LOAD(dO, dor + r_ * g.st[A_DO][2] + x * XS(A_DO)))
		GATHER(ov, i0, g.Tq - 1, LOAD(o, orow + r_ * g.st[A_O][2] + x * XS(A_O)))
		dl += dot[x] * ov;
	}
	GATHER(lr, i0, g.Tq - 1, LOAD(lse, lr0 + r_ * g.st[A_L][2]))
	SCATTER(dl, i0, g.Tq, delta[bh * g.Tq + r_] = e_)
	for (int j = 0; j < kend; j++) {
		VT s, dp;
		VDOT(s, DH, FWD_S)
		VDOT(dp, DV, DQ_DP)
		VT ds = select(exp(s - lr), (VT)0, (VT)(ACC)j > vlast) * (dp - dl);
		for (int x = 0; x < DH; x++)
			dq[x] += ds * GKEY(j, x);
	}
	for (int x = 0; x < DH; x++)
		SCATTER(scale * dq[x], i0, g.Tq, STORE(dqo, ROW(A_DQ, b, h, r_) + x * XS(A_DQ), e_))
}
#endif

/* A block of key rows (after attn_bwd_dq_*, which wrote delta): dk, dv over the queries that see
 * any of them, the causal lanes a query does not see masked. */
#if CLG_WANT(attn_bwd_dkv_cpu)
__kernel void attn_bwd_dkv_cpu(const ageom g, const ACC scale, __global T *dko, __global T *dvo,
			       __global const T *dO, __global const T *q, __global const T *k, __global const T *v,
			       __global const T *lse, __global const ACC *delta)
{
	BLOCK(g.Tk, j0);
	int qr = ROW(A_Q, b, h, 0), dor = ROW(A_DO, b, h, 0), lr0 = ROW(A_L, b, h, 0);
	int kr = ROW(A_K, b, h, 0), vr = ROW(A_V, b, h, 0);
	VT kt[DH], vt[DV], dk[DH], dv[DV], col = (VT)(ACC)j0 + IOTA;
	for (int x = 0; x < DH; x++) {
		GATHER(kt[x], j0, g.Tk - 1, GKEY(r_, x))
		kt[x] *= scale;
		dk[x] = (VT)0;
	}
	for (int x = 0; x < DV; x++) {
		GATHER(vt[x], j0, g.Tk - 1, GVAL(r_, x))
		dv[x] = (VT)0;
	}
	for (int i = g.causal ? min(j0, g.Tq) : 0; i < g.Tq; i++) {
		VT s, dp;
		VDOT(s, DH, KV_S)
		VDOT(dp, DV, KV_DP)
		VT p = exp(s - GLSE(i));
		if (g.causal)
			p = select(p, (VT)0, col > (VT)(ACC)i);
		for (int x = 0; x < DV; x++)
			dv[x] += p * GDO(i, x);
		VT ds = p * (dp - GDELTA(i));
		for (int x = 0; x < DH; x++)
			dk[x] += ds * GQRY(i, x);
	}
	for (int x = 0; x < DH; x++)
		SCATTER(scale * dk[x], j0, g.Tk, STORE(dko, ROW(A_DK, b, h, r_) + x * XS(A_DK), e_))
	for (int x = 0; x < DV; x++)
		SCATTER(dv[x], j0, g.Tk, STORE(dvo, ROW(A_DV, b, h, r_) + x * XS(A_DV), e_))
}
#endif

/* ---- _cpu shape, backward with ds stored: attn_bwd_dkvs_cpu, then attn_bwd_dqs_cpu ----
 * The two kernels above each recompute a score, its exp and dp = do . v (the dq pass for the query
 * rows, the dk/dv pass again for the key rows): 4 Dh + 3 Dv vector FMAs and two exps a score.
 * Where the host's scratch allows B*H*Tk*Tq values (cl_ops_attention.c), the key-row kernel writes
 * each ds = p (dp - delta) it computes, key-major (dst[bh][j][i], a block of query rows contiguous),
 * and the query-row kernel only sums dq = ds k: 3 Dh + 2 Dv FMAs and one exp a score. delta_i =
 * do_i . o_i is folded into dp: dp - delta = do_i . (v_j - o_i), no pass of its own. */

/* P and DS = P (dp - delta) of key lanes with query row R */
#define DKVS_P(R, P, DS)                                                                           \
	{                                                                                          \
		int i = (R);                                                                       \
		VT s_, dpd_;                                                                       \
		VDOT(s_, DH, KV_S)                                                                 \
		VDOT(dpd_, DV, KVS_DPD)                                                            \
		P = exp(s_ - GLSE(i));                                                             \
		if (g.causal)                                                                      \
			P = select(P, (VT)0, col > (VT)(ACC)i);                                    \
		DS = P * dpd_;                                                                     \
	}

/* A block of key rows: dk, dv, and ds of every query that sees one of them into dst. */
#if CLG_WANT(attn_bwd_dkvs_cpu)
__kernel void attn_bwd_dkvs_cpu(const ageom g, const ACC scale, __global T *dko, __global T *dvo,
				__global const T *dO, __global const T *q, __global const T *k, __global const T *v,
				__global const T *o, __global const T *lse, __global ACC *dst)
{
	BLOCK(g.Tk, j0);
	int qr = ROW(A_Q, b, h, 0), dor = ROW(A_DO, b, h, 0), orow = ROW(A_O, b, h, 0), lr0 = ROW(A_L, b, h, 0);
	int kr = ROW(A_K, b, h, 0), vr = ROW(A_V, b, h, 0);
	size_t dsr = ((size_t)bh * g.Tk + j0) * g.Tq; /* dst row of key j0 */
	VT kt[DH], vt[DV], dk[DH], dv[DV], col = (VT)(ACC)j0 + IOTA;
	for (int x = 0; x < DH; x++) {
		GATHER(kt[x], j0, g.Tk - 1, GKEY(r_, x))
		kt[x] *= scale;
		dk[x] = (VT)0;
	}
	for (int x = 0; x < DV; x++) {
		GATHER(vt[x], j0, g.Tk - 1, GVAL(r_, x))
		dv[x] = (VT)0;
	}
	/* four queries a step (those past the last masked): dk and dv, spilled, loaded and stored
	 * once for the four */
	for (int i0 = g.causal ? min(j0, g.Tq) : 0; i0 < g.Tq; i0 += 4) {
		int i1 = min(i0 + 1, g.Tq - 1), i2 = min(i0 + 2, g.Tq - 1), i3 = min(i0 + 3, g.Tq - 1);
		VT p0, p1, p2, p3, ds0, ds1, ds2, ds3;
		DKVS_P(i0, p0, ds0)
		DKVS_P(i1, p1, ds1)
		DKVS_P(i2, p2, ds2)
		DKVS_P(i3, p3, ds3)
		if (i0 + 3 >= g.Tq) {
			p3 = ds3 = (VT)0;
			if (i0 + 2 >= g.Tq)
				p2 = ds2 = (VT)0;
			if (i0 + 1 >= g.Tq)
				p1 = ds1 = (VT)0;
		}
		for (int x = 0; x < DV; x++) {
			VT a = dv[x];
			a += p0 * GDO(i0, x);
			a += p1 * GDO(i1, x);
			a += p2 * GDO(i2, x);
			a += p3 * GDO(i3, x);
			dv[x] = a;
		}
		for (int x = 0; x < DH; x++) {
			VT a = dk[x];
			a += ds0 * GQRY(i0, x);
			a += ds1 * GQRY(i1, x);
			a += ds2 * GQRY(i2, x);
			a += ds3 * GQRY(i3, x);
			dk[x] = a;
		}
		SCATTER(ds0, j0, g.Tk, dst[dsr + (size_t)(r_ - j0) * g.Tq + i0] = e_)
		if (i0 + 3 < g.Tq) {
			SCATTER(ds1, j0, g.Tk, dst[dsr + (size_t)(r_ - j0) * g.Tq + i1] = e_)
			SCATTER(ds2, j0, g.Tk, dst[dsr + (size_t)(r_ - j0) * g.Tq + i2] = e_)
			SCATTER(ds3, j0, g.Tk, dst[dsr + (size_t)(r_ - j0) * g.Tq + i3] = e_)
		} else {
			if (i0 + 1 < g.Tq)
				SCATTER(ds1, j0, g.Tk, dst[dsr + (size_t)(r_ - j0) * g.Tq + i1] = e_)
			if (i0 + 2 < g.Tq)
				SCATTER(ds2, j0, g.Tk, dst[dsr + (size_t)(r_ - j0) * g.Tq + i2] = e_)
		}
	}
	for (int x = 0; x < DH; x++)
		SCATTER(scale * dk[x], j0, g.Tk, STORE(dko, ROW(A_DK, b, h, r_) + x * XS(A_DK), e_))
	for (int x = 0; x < DV; x++)
		SCATTER(dv[x], j0, g.Tk, STORE(dvo, ROW(A_DV, b, h, r_) + x * XS(A_DV), e_))
}
#endif

/* dq of a block of query rows over keys [0, kend), two keys a step (dq, spilled, read and written
 * once for both; the second past kend zeroed), the block's ds of key j read by DS(V, j) */
#define DQS_KEYS(DS)                                                                               \
	for (int j = 0; j < kend; j += 2) {                                                        \
		int j1 = min(j + 1, kend - 1);                                                     \
		VT ds0, ds1;                                                                       \
		DS(ds0, j);                                                                        \
		DS(ds1, j1);                                                                       \
		if (j + 1 >= kend)                                                                 \
			ds1 = (VT)0;                                                               \
		for (int x = 0; x < DH; x++) {                                                     \
			VT a = dq[x];                                                              \
			a += ds0 * GKEY(j, x);                                                     \
			a += ds1 * GKEY(j1, x);                                                    \
			dq[x] = a;                                                                 \
		}                                                                                  \
	}
#define DS_FULL(V, j) V = VLOADQ(0, src + dsr + (size_t)(j) * g.Tq)
#define DS_TAIL(V, j) GATHER(V, i0, g.Tq - 1, src[dsr + (size_t)(j) * g.Tq + (r_ - i0)])

/* A block of query rows (after attn_bwd_dkvs_cpu): dq = ds k, the causal ds already zero. */
#if CLG_WANT(attn_bwd_dqs_cpu)
__kernel void attn_bwd_dqs_cpu(const ageom g, const ACC scale, __global T *dqo, __global const T *k,
			       __global const ACC *src)
{
	BLOCK(g.Tq, i0);
	int kr = ROW(A_K, b, h, 0);
	size_t dsr = (size_t)bh * g.Tk * g.Tq + i0; /* src column of query i0 */
	int kend = g.causal ? min(g.Tk, min(g.Tq, i0 + QB)) : g.Tk;
	VT dq[DH];
	for (int x = 0; x < DH; x++)
		dq[x] = (VT)0;
	if (i0 + QB <= g.Tq) {
		DQS_KEYS(DS_FULL)
	} else { /* the last block: no reads past the rows (nor of unwritten values) */
		DQS_KEYS(DS_TAIL)
	}
	for (int x = 0; x < DH; x++)
		SCATTER(scale * dq[x], i0, g.Tq, STORE(dqo, ROW(A_DQ, b, h, r_) + x * XS(A_DQ), e_))
}
#endif
#endif /* ATTN_GPU */
