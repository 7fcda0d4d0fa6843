/* Fused hot-path ops (semantics: backend/clg_ops.def, "fused hot-path ops"): the linear layer's
 * epilogue (bias + activation) and its backward (activation gradient and bias gradient in one
 * pass), softmax cross-entropy forward (loss and each row's max and log-sum) and backward; and GELU
 * alone (op gelu) under the CPU shape of family "fused", sixteen elements a work-item (gelu_v16).
 * The cross-entropy kernels come in the two shapes of family "row" (backend/kernel_shape.c):
 * <name>_rows a work-group per row (GPU: coalesced loads, wg_sum / wg_max of prelude.cl, local
 * scratch of one ACC per work-item, a power-of-two size), <name>_rows_cpu a work-item per row (CPU:
 * sixteen elements at a time along contiguous rows, no barriers), and for the forward over rows
 * of 16..64 contiguous elements softmax_xent_rows16_cpu, sixteen rows a work-item. The forward
 * writes each row's statistics st (N, 2): its max m and l = log sum exp(x - m), apart (a logsumexp
 * m + l in float32 is 2^-11 off at 1e4), and its loss term l * sum(t) - sum(t * (x - m)) (part, N
 * elements of ACC; no cancellation of terms ~ m * sum(t)); softmax_xent_sum[_cpu] then adds the
 * terms in a fixed order, so the loss does not depend on the scheduling.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when either is double.
 * Elements go through XLOAD / XSTORE / VLOAD4 / VSTORE4 / VLOAD16 / VSTORE16 (prelude.cl): float16
 * and bfloat16 are storage, computed in ACC = float (native half loads and stores under -DUSE_NATIVE_HALF); the
 * cross-entropy's row terms (part) are ACC whatever T.
 * Operands are 2-D (N, C) or 1-D views at any strides, described by fgeom: operand 0 is the dst,
 * 1..4 the sources; a 1-D operand's stride is in rs. Activations: 0 none, 1 relu, 2 gelu. */
#ifdef USE_FP64
#define K(x) x
#else
#define K(x) x##f
#endif

typedef struct {
	int N, C, act;
	int off[5]; /* element offsets of dst, src0..src3 */
	int rs[5];  /* row strides (the only stride of a 1-D operand) */
	int cs[5];  /* column strides */
} fgeom;

#define AT(k, n, j) (g.off[k] + (n) * g.rs[k] + (j) * g.cs[k])
#define AT1(k, n) (g.off[k] + (n) * g.rs[k])

ACC act_(int a, ACC u)
{
	if (a == 1)
		return u > (ACC)0 ? u : (ACC)0;
	if (a == 2) {
		NTYPE pdf;
		return u * (ACC)NCDF(u, pdf);
	}
	return u;
}

/* gelu' = Phi(u) + u phi(u), one exp for both (NCDF, prelude.cl) */
ACC act_grad_(int a, ACC u)
{
	if (a == 1)
		return u > (ACC)0 ? (ACC)1 : (ACC)0;
	if (a == 2) {
		NTYPE pdf, cdf = NCDF(u, pdf);
		return (ACC)(cdf + (NTYPE)u * pdf);
	}
	return (ACC)1;
}

/* bias_act and bias_act_backward come twice: NAME guards the range; NAME_x has no guard, for
 * launches whose global size is exactly the work (the host picks it when the work-group size
 * divides it): PoCL then vectorises with plain instead of masked loads and stores, several times
 * faster on AVX2 CPUs. */

/* one work-item per element, i = n * C + j (columns fastest: the bias is read along a row) */
#define BIAS_ACT_BODY                                                                              \
	int n = i / g.C, j = i - n * g.C;                                                          \
	XSTORE(d, AT(0, n, j), act_(g.act, XLOAD(x, AT(1, n, j)) + XLOAD(b, AT1(2, j))));

#if CLG_WANT(bias_act)
__kernel void bias_act(const fgeom g, __global T *d, __global const T *x, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.N * g.C)
		return;
	BIAS_ACT_BODY
}
#endif

#if CLG_WANT(bias_act_x)
__kernel void bias_act_x(const fgeom g, __global T *d, __global const T *x, __global const T *b)
{
	int i = get_global_id(0);
	BIAS_ACT_BODY
}
#endif

/* one work-item per column j: walks the rows, writes dz and sums it into db (beta = p0) */
#define BIAS_ACT_BACKWARD_BODY                                                                     \
	ACC acc = (ACC)0;                                                                          \
	for (int n = 0; n < g.N; n++) {                                                            \
		ACC v = XLOAD(gr, AT(1, n, j));                                                    \
		if (g.act)                                                                         \
			v *= act_grad_(g.act, XLOAD(t, AT(2, n, j)));                              \
		XSTORE(dz, AT(0, n, j), v);                                                        \
		acc += v;                                                                          \
	}                                                                                          \
	ACC old = beta != (ACC)0 ? beta * XLOAD(db, AT1(3, j)) : (ACC)0;                           \
	XSTORE(db, AT1(3, j), old + acc);

#if CLG_WANT(bias_act_backward)
__kernel void bias_act_backward(const fgeom g, __global T *dz, __global const T *gr, __global const T *t,
				__global T *db, const ACC beta)
{
	int j = get_global_id(0);
	if (j >= g.C)
		return;
	BIAS_ACT_BACKWARD_BODY
}
#endif

#if CLG_WANT(bias_act_backward_x)
__kernel void bias_act_backward_x(const fgeom g, __global T *dz, __global const T *gr, __global const T *t,
				  __global T *db, const ACC beta)
{
	int j = get_global_id(0);
	BIAS_ACT_BACKWARD_BODY
}
#endif

/* CPU shape of bias_act_backward where the columns are contiguous and C % 4 == 0: a work-item per
 * four columns, as one ACC4 (explicit vectors: PoCL does not vectorise across work-items around a
 * loop over rows, and the per-column kernel above ran 4-7x slower than an elementwise gelu_backward). */
ACC4 act4_(int a, ACC4 u)
{
	if (a == 1)
		return select((ACC4)0, u, isgreater(u, (ACC4)0));
	if (a == 2) {
		ACC4 pdf;
		return u * NCDF4(u, pdf);
	}
	return u;
}

/* CPU shape of bias_act where the columns are contiguous and C % 4 == 0: a work-item per four
 * columns of a row, as one ACC4 (the per-element kernel divides per element and does not vectorise:
 * 2-3x an elementwise add on PoCL). */
#if CLG_WANT(bias_act_v4)
__kernel void bias_act_v4(const fgeom g, __global T *d, __global const T *x, __global const T *b)
{
	int c4 = g.C / 4, i = get_global_id(0), n = i / c4, j = 4 * (i - n * c4);

	if (n >= g.N)
		return;
	VSTORE4(d, AT(0, n, j), act4_(g.act, VLOAD4(x, AT(1, n, j)) + VLOAD4(b, AT1(2, j))));
}
#endif

ACC4 act_grad4_(int a, ACC4 u)
{
	ACC4 pdf, cdf;

	if (a == 1)
		return select((ACC4)0, (ACC4)1, isgreater(u, (ACC4)0));
	cdf = NCDF4(u, pdf);
	return cdf + u * pdf;
}

#if CLG_WANT(bias_act_backward_v4)
__kernel void bias_act_backward_v4(const fgeom g, __global T *dz, __global const T *gr, __global const T *t,
				   __global T *db, const ACC beta)
{
	int j = 4 * (int)get_global_id(0);
	ACC4 acc = (ACC4)0;

	if (j >= g.C)
		return;
	for (int n = 0; n < g.N; n++) {
		ACC4 v = VLOAD4(gr, AT(1, n, j));
		if (g.act)
			v *= act_grad4_(g.act, VLOAD4(t, AT(2, n, j)));
		VSTORE4(dz, AT(0, n, j), v);
		acc += v;
	}
	for (int q = 0; q < 4; q++) {
		ACC old = beta != (ACC)0 ? beta * XLOAD(db, AT1(3, j + q)) : (ACC)0;
		XSTORE(db, AT1(3, j + q), old + (q == 0 ? acc.s0 : q == 1 ? acc.s1 : q == 2 ? acc.s2 : acc.s3));
	}
}
#endif

/* bias_act_backward_v4 sixteen columns at a time (ACC16: one AVX-512 register) where C % 16 == 0
 * and the host finds columns enough for the compute units: GELU's exp and polynomials then run on
 * sixteen lanes at once. */
#if CLG_WANT(bias_act_backward_v16)
__kernel void bias_act_backward_v16(const fgeom g, __global T *dz, __global const T *gr, __global const T *t,
				    __global T *db, const ACC beta)
{
	int j = 16 * (int)get_global_id(0);
	ACC16 acc = (ACC16)0;
	ACC a[16];

	if (j >= g.C)
		return;
	for (int n = 0; n < g.N; n++) {
		ACC16 v = VLOAD16(gr, AT(1, n, j));
		if (g.act == 1) {
			v *= select((ACC16)0, (ACC16)1, isgreater(VLOAD16(t, AT(2, n, j)), (ACC16)0));
		} else if (g.act == 2) {
			ACC16 u = VLOAD16(t, AT(2, n, j)), pdf, cdf = NCDF16(u, pdf);
			v *= cdf + u * pdf;
		}
		VSTORE16(dz, AT(0, n, j), v);
		acc += v;
	}
	vstore16(acc, 0, a);
	for (int q = 0; q < 16; q++) {
		ACC old = beta != (ACC)0 ? beta * XLOAD(db, AT1(3, j + q)) : (ACC)0;
		XSTORE(db, AT1(3, j + q), old + a[q]);
	}
}
#endif

/* GELU (op gelu) over contiguous elements, CPU shape: sixteen a work-item (ACC16, NCDF16), the last
 * n % 16 one by one. elementwise.cl's gelu_c takes one element a work-item behind a guard, which
 * PoCL vectorises with masked loads: 2-3x slower than bias_act_backward's GELU derivative. */
#if CLG_WANT(gelu_v16)
__kernel CLG_VECTORIZED(float16) void gelu_v16(const int n, __global T *d, const int od, __global const T *x,
					       const int ox)
{
	int i = 16 * (int)get_global_id(0);

	if (i + 16 <= n) {
		ACC16 u = VLOAD16(x, ox + i), pdf;
		VSTORE16(d, od + i, u * NCDF16(u, pdf));
		return;
	}
	for (; i < n; i++) {
		ACC u = XLOAD(x, ox + i);
		NTYPE pdf;
		XSTORE(d, od + i, u * (ACC)NCDF(u, pdf));
	}
}
#endif

/* GPU shape of bias_act_backward (CLG_KFAM_FUSED = gpu): 2-D work-groups of (TC, TR) work-items,
 * TC = get_local_size(0) columns (adjacent lanes on adjacent columns: coalesced when columns are
 * contiguous) by TR = get_local_size(1), a power of two, rows. Group (cx, b) takes the columns of
 * tile cx and rows [b * rb, (b + 1) * rb), each work-item every TR-th row of them; the TR partial
 * sums of a column are combined in local memory (scratch: TR * TC ACC). With one row block the
 * group writes db itself; otherwise it writes part[b * C + j] and bias_act_backward_sum adds the
 * blocks in order b = 0, 1, ...: the result does not depend on timing. */
#if CLG_WANT(bias_act_backward_tiles)
__kernel void bias_act_backward_tiles(const fgeom g, __global T *restrict dz, __global const T *restrict gr,
				      __global const T *restrict t, __global T *restrict db, const ACC beta,
				      const int rb, __global ACC *restrict part, __local ACC *scratch)
{
	int lx = get_local_id(0), ly = get_local_id(1), tc = get_local_size(0), tr = get_local_size(1);
	int j = get_global_id(0), b = get_group_id(1), n_end = min(g.N, (b + 1) * rb);
	ACC acc = (ACC)0;

	if (j < g.C)
		for (int n = b * rb + ly; n < n_end; n += tr) {
			ACC v = XLOAD(gr, AT(1, n, j));
			if (g.act)
				v *= act_grad_(g.act, XLOAD(t, AT(2, n, j)));
			XSTORE(dz, AT(0, n, j), v);
			acc += v;
		}
	scratch[ly * tc + lx] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int k = tr / 2; k > 0; k >>= 1) {
		if (ly < k)
			scratch[ly * tc + lx] += scratch[(ly + k) * tc + lx];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (ly != 0 || j >= g.C)
		return;
	if (get_num_groups(1) > 1) {
		part[b * g.C + j] = scratch[lx];
	} else {
		ACC old = beta != (ACC)0 ? beta * XLOAD(db, AT1(3, j)) : (ACC)0;
		XSTORE(db, AT1(3, j), old + scratch[lx]);
	}
}
#endif

/* db[j] = beta * db[j] + part[0 * C + j] + part[1 * C + j] + ... (nb row blocks), one work-item a column */
#if CLG_WANT(bias_act_backward_sum)
__kernel void bias_act_backward_sum(const fgeom g, __global T *restrict db, const ACC beta, const int nb,
				    __global const ACC *restrict part, __local ACC *scratch)
{
	/* groups of OT columns (dim 0) x LS lanes (dim 1, a power of two) over the blocks: lane l adds
	 * blocks l, l + LS, ..., the group's tree the lanes (an order fixed by nb and LS) */
	int lx = get_local_id(0), ly = get_local_id(1), ot = get_local_size(0), ls = get_local_size(1);
	int j = get_global_id(0);
	ACC acc = (ACC)0;

	if (j < g.C)
		for (int b = ly; b < nb; b += ls)
			acc += part[b * g.C + j];
	scratch[ly * ot + lx] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int h = ls / 2; h > 0; h >>= 1) {
		if (ly < h)
			scratch[ly * ot + lx] += scratch[(ly + h) * ot + lx];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (ly != 0 || j >= g.C)
		return;
	ACC old = beta != (ACC)0 ? beta * XLOAD(db, AT1(3, j)) : (ACC)0;
	XSTORE(db, AT1(3, j), old + scratch[lx]);
}
#endif

/* ---- softmax cross-entropy --------------------------------------------------------------- */

/* The row's loss term l * sum(t) - sum(t * (x - m)), l = log(s), with st[n] = (m, l) stored;
 * tx holds sum(t * (x - m)). */
#define XENT_ROW_END(n, m, s, ts, tx)                                                              \
	ACC l_ = log(s);                                                                           \
	XSTORE(st, AT(3, n, 0), m);                                                                \
	XSTORE(st, AT(3, n, 1), l_);                                                               \
	part[n] = l_ * (ts) - (tx);

/* GPU shape: work-group n takes row n */
#if CLG_WANT(softmax_xent_rows)
__kernel void softmax_xent_rows(const fgeom g, __global ACC *part, __global const T *x, __global const T *t,
				__global T *st, __local ACC *scratch)
{
	int n = get_group_id(0), l = get_local_id(0), L = get_local_size(0);
	ACC m = -INFINITY, s = (ACC)0, ts = (ACC)0, tx = (ACC)0;
	for (int j = l; j < g.C; j += L)
		m = fmax(m, XLOAD(x, AT(1, n, j)));
	m = wg_max(m, scratch);
	for (int j = l; j < g.C; j += L) {
		ACC xv = XLOAD(x, AT(1, n, j)) - m, tv = XLOAD(t, AT(2, n, j));
		s += exp(xv);
		ts += tv;
		tx += tv * xv;
	}
	s = wg_sum(s, scratch);
	ts = wg_sum(ts, scratch);
	tx = wg_sum(tx, scratch);
	if (l == 0) {
		XENT_ROW_END(n, m, s, ts, tx)
	}
}
#endif

/* CPU shape: row n, sixteen elements at a time where contiguous (ACC16, EXP16) */
void xent_row_cpu(const fgeom g, __global ACC *part, __global const T *x, __global const T *t, __global T *st,
		  int n)
{
	int j = 0;
	ACC m = -INFINITY, s = (ACC)0, ts = (ACC)0, tx = (ACC)0;
	int ox = AT(1, n, 0), ot = AT(2, n, 0), vec = g.cs[1] == 1 && g.cs[2] == 1 && g.C >= 16;
	if (vec && g.C <= 64 && !(g.C & 15)) {
		/* rows of 16..64 (attention rows): x and t held in registers, one pass over memory
		 * (softmax.cl's softmax_row64); unused registers repeat x0 for the max, take no exp */
		ACC16 x0 = VLOAD16(x, ox), t0 = VLOAD16(t, ot), x1 = x0, x2 = x0, x3 = x0, t1 = t0, t2 = t0, t3 = t0;
		ACC16 m16 = (ACC16)(-INFINITY), s16, ts16 = t0, tx16;
		if (g.C > 16) {
			t1 = VLOAD16(t, ot + 16);
			x1 = VLOAD16(x, ox + 16);
			ts16 += t1;
		}
		if (g.C > 32) {
			t2 = VLOAD16(t, ot + 32);
			x2 = VLOAD16(x, ox + 32);
			ts16 += t2;
		}
		if (g.C > 48) {
			t3 = VLOAD16(t, ot + 48);
			x3 = VLOAD16(x, ox + 48);
			ts16 += t3;
		}
		m16 = select(m16, x0, isgreater(x0, m16)); /* skips NaN as fmax */
		m16 = select(m16, x1, isgreater(x1, m16));
		m16 = select(m16, x2, isgreater(x2, m16));
		m16 = select(m16, x3, isgreater(x3, m16));
		m = HMAX16(m16);
		x0 -= m;
		s16 = EXP16N(x0);
		tx16 = t0 * x0;
		if (g.C > 16) {
			x1 -= m;
			s16 += EXP16N(x1);
			tx16 += t1 * x1;
		}
		if (g.C > 32) {
			x2 -= m;
			s16 += EXP16N(x2);
			tx16 += t2 * x2;
		}
		if (g.C > 48) {
			x3 -= m;
			s16 += EXP16N(x3);
			tx16 += t3 * x3;
		}
		s = HSUM16(s16);
		ts = HSUM16(ts16);
		tx = HSUM16(tx16);
		XENT_ROW_END(n, m, s, ts, tx)
		return;
	}
	if (vec) {
		ACC16 m16 = (ACC16)(-INFINITY);
		for (; j + 16 <= g.C; j += 16) {
			ACC16 v = VLOAD16(x, ox + j);
			m16 = select(m16, v, isgreater(v, m16)); /* skips NaN as fmax; cheaper (softmax.cl) */
		}
		m = HMAX16(m16);
	}
	for (; j < g.C; j++)
		m = fmax(m, XLOAD(x, ox + j * g.cs[1]));
	j = 0;
	if (vec) {
		ACC16 s16 = (ACC16)0, ts16 = (ACC16)0, tx16 = (ACC16)0;
		for (; j + 16 <= g.C; j += 16) {
			ACC16 xv = VLOAD16(x, ox + j) - m, tv = VLOAD16(t, ot + j);
			s16 += EXP16N(xv);
			ts16 += tv;
			tx16 += tv * xv;
		}
		s = HSUM16(s16);
		ts = HSUM16(ts16);
		tx = HSUM16(tx16);
	}
	for (; j < g.C; j++) {
		ACC xv = XLOAD(x, ox + j * g.cs[1]) - m, tv = XLOAD(t, ot + j * g.cs[2]);
		s += exp(xv);
		ts += tv;
		tx += tv * xv;
	}
	XENT_ROW_END(n, m, s, ts, tx)
}

/* ... work-item n takes row n */
#if CLG_WANT(softmax_xent_rows_cpu)
__kernel void softmax_xent_rows_cpu(const fgeom g, __global ACC *part, __global const T *x, __global const T *t,
				    __global T *st)
{
	int n = get_global_id(0);
	if (n < g.N)
		xent_row_cpu(g, part, x, t, st, n);
}
#endif

/* Rows n0..n0+15 of C = 16, 32, 48 or 64 contiguous elements (the host's choice, as for
 * softmax.cl's softmax_rows16): sixteen independent rows, their sums gathered into one ACC16 each
 * (prelude.cl's tree16_sum, lane i = row i, which adds in HSUM16's order), one vector log for the
 * sixteen (the builtin, which gives the scalar builtin's values); each row's sums add in
 * xent_row_cpu's order, so st and the terms are those of the row-by-row kernel to the bit. A
 * last, partial block goes row by row. Out of line, called with the work-item's first row (PoCL
 * inlines a function that calls get_global_id itself, whatever its attribute): inlined, the
 * kernel's private arrays got a copy per work-item of the group from PoCL (32 KiB each at 32
 * work-items), and it ran 8% slower there (Intel's runtime: within 1%). */
__attribute__((noinline)) void xent_rows16(const fgeom g, __global ACC *part, __global const T *x,
					   __global const T *t, __global T *st, int n0)
{
	int ox[16], ot[16];
	ACC16 v[16], s16[16], ts16[16], tx16[16];
	ACC m[16], ls[16], ts[16], tx[16];

	if (n0 + 16 > g.N) {
		for (int n = n0; n < g.N; n++)
			xent_row_cpu(g, part, x, t, st, n);
		return;
	}
	for (int i = 0; i < 16; i++) {
		ox[i] = AT(1, n0 + i, 0);
		ot[i] = AT(2, n0 + i, 0);
	}
	for (int i = 0; i < 16; i++)
		v[i] = row_max16(x, ox[i], g.C);
	vstore16(tree16_max(v), 0, m);
	for (int i = 0; i < 16; i++) {
		ACC16 x0 = VLOAD16(x, ox[i]) - m[i], t0 = VLOAD16(t, ot[i]);
		s16[i] = EXP16N(x0);
		ts16[i] = t0;
		tx16[i] = t0 * x0;
		for (int c = 16; c < g.C; c += 16) {
			ACC16 xv = VLOAD16(x, ox[i] + c) - m[i], tv = VLOAD16(t, ot[i] + c);
			s16[i] += EXP16N(xv);
			ts16[i] += tv;
			tx16[i] += tv * xv;
		}
	}
	vstore16(log(tree16_sum(s16)), 0, ls);
	vstore16(tree16_sum(ts16), 0, ts);
	vstore16(tree16_sum(tx16), 0, tx);
	for (int i = 0; i < 16; i++) {
		XSTORE(st, AT(3, n0 + i, 0), m[i]);
		XSTORE(st, AT(3, n0 + i, 1), ls[i]);
		part[n0 + i] = ls[i] * ts[i] - tx[i];
	}
}

/* ... work-item b takes rows 16b..16b+15 */
#if CLG_WANT(softmax_xent_rows16_cpu)
__kernel void softmax_xent_rows16_cpu(const fgeom g, __global ACC *part, __global const T *x, __global const T *t,
				      __global T *st)
{
	xent_rows16(g, part, x, t, st, get_global_id(0) * 16);
}
#endif

/* loss = scale * the sum of the N row terms: one work-group, a tree over fixed strides (GPU) */
#if CLG_WANT(softmax_xent_sum)
__kernel void softmax_xent_sum(const fgeom g, __global T *loss, __global const ACC *part, const ACC scale,
			       __local ACC *scratch)
{
	int l = get_local_id(0), L = get_local_size(0);
	ACC sum = (ACC)0;
	for (int n = l; n < g.N; n += L)
		sum += part[n];
	sum = wg_sum(sum, scratch);
	if (l == 0)
		XSTORE(loss, g.off[0], scale * sum);
}
#endif

/* ... one work-item (CPU): sixteen lanes, lane i adding terms i, i + 16, ..., then the lanes and
 * the tail in order (one chain of N dependent adds: about 5 us at N = 4096) */
#if CLG_WANT(softmax_xent_sum_cpu)
__kernel void softmax_xent_sum_cpu(const fgeom g, __global T *loss, __global const ACC *part, const ACC scale)
{
	ACC16 s16 = (ACC16)0;
	ACC sum;
	int n = 0;

	for (; n + 16 <= g.N; n += 16)
		s16 += vload16(0, part + n);
	sum = HSUM16(s16);
	for (; n < g.N; n++)
		sum += part[n];
	XSTORE(loss, g.off[0], scale * sum);
}
#endif

/* GPU shape: work-group n writes row n, (softmax * sum(t) - t) * scale * g, softmax = exp((x - m) - l)
 * from the forward's st (N, 2) */
#if CLG_WANT(softmax_xent_backward_rows)
__kernel void softmax_xent_backward_rows(const fgeom g, __global T *d, __global const T *x, __global const T *t,
					 __global const T *st, __global const T *gl, const ACC scale,
					 __local ACC *scratch)
{
	int n = get_group_id(0), l = get_local_id(0), L = get_local_size(0);
	ACC ts = (ACC)0, m = XLOAD(st, AT(3, n, 0)), ls = XLOAD(st, AT(3, n, 1)), k = scale * XLOAD(gl, g.off[4]);
	for (int j = l; j < g.C; j += L)
		ts += XLOAD(t, AT(2, n, j));
	ts = wg_sum(ts, scratch);
	for (int j = l; j < g.C; j += L)
		XSTORE(d, AT(0, n, j), k * (exp((XLOAD(x, AT(1, n, j)) - m) - ls) * ts - XLOAD(t, AT(2, n, j))));
}
#endif

/* CPU shape: work-item n writes row n, sixteen elements at a time where contiguous */
#if CLG_WANT(softmax_xent_backward_rows_cpu)
__kernel void softmax_xent_backward_rows_cpu(const fgeom g, __global T *d, __global const T *x,
					     __global const T *t, __global const T *st, __global const T *gl,
					     const ACC scale)
{
	int n = get_global_id(0), j = 0;
	if (n >= g.N)
		return;
	ACC ts = (ACC)0, m = XLOAD(st, AT(3, n, 0)), ls = XLOAD(st, AT(3, n, 1)), k = scale * XLOAD(gl, g.off[4]);
	int od = AT(0, n, 0), ox = AT(1, n, 0), ot = AT(2, n, 0);
	int vec = g.cs[0] == 1 && g.cs[1] == 1 && g.cs[2] == 1 && g.C >= 16;
	if (vec) {
		ACC16 ts16 = (ACC16)0;
		for (; j + 16 <= g.C; j += 16)
			ts16 += VLOAD16(t, ot + j);
		ts = HSUM16(ts16);
	}
	for (; j < g.C; j++)
		ts += XLOAD(t, ot + j * g.cs[2]);
	j = 0;
	if (vec)
		for (; j + 16 <= g.C; j += 16) {
			ACC16 tv = VLOAD16(t, ot + j);
			VSTORE16(d, od + j, k * (EXP16((VLOAD16(x, ox + j) - m) - ls) * ts - tv));
		}
	for (; j < g.C; j++)
		XSTORE(d, od + j * g.cs[0], k * (exp((XLOAD(x, ox + j * g.cs[1]) - m) - ls) * ts - XLOAD(t, ot + j * g.cs[2])));
}
#endif
