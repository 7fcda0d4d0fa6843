/* Residual add + layer norm with gamma and beta inside (ADD_LAYER_NORM and its backward, see
 * clg_ops.def), in the two shapes of family "row" (backend/kernel_shape.c):
 *   add_layer_norm_rows      GPU: a work-group per row, tree reductions in local memory
 *   add_layer_norm_cpu       CPU: a work-item per row, no barriers
 *   add_layer_norm_bwd_rows  GPU: a work-group per block of rows (one row after the other)
 *   add_layer_norm_bwd_cpu   CPU: a work-item per block of rows
 *   add_layer_norm_colsum    both: dgamma and dbeta, each column's block partials added in order
 * Forward: s = x + r (stored to s when g.res) or s = x, y = (s - mean) * rstd * gamma + beta.
 * Backward: dx = rstd * (h - mean(h) - xhat * mean(h * xhat)), h = g * gamma; each block of rows
 * leaves its partial sums of g * xhat and g in part (nb, 2, C), column j of a block written by one
 * work-item only, so the column sums are deterministic without atomics.
 * Numerics as norm.cl: the statistics in two passes over the row shifted by its first element, h
 * shifted by its first element too (the result does not change when a constant is added to h).
 * Every work-item reads only the elements of s it wrote itself: no barrier between the add and
 * the statistics.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when either is double. Geometry:
 * operand k at off[k] + n * rs[k] + j * cs[k] (1-D operands: rs unused); forward operands y, x, r,
 * gamma, beta, s; backward dx, g, s, gamma, dgamma, dbeta and (6) the earlier gradient of s that dx
 * adds when res is set. */

typedef struct {
	int N, C, res;
	int off[7];
	int rs[7];
	int cs[7];
} angeom;

#define AN_AT(g, k, n, j) ((g)->off[k] + (n) * (g)->rs[k] + (j) * (g)->cs[k])
#define AN_AT1(g, k, j) ((g)->off[k] + (j) * (g)->cs[k])

/* Sum of v over the work-group (a power-of-two size), through scratch (one ACC per work-item). */
ACC an_wg_sum(ACC v, __local ACC *scratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0);
	scratch[lid] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int k = lsz / 2; k > 0; k >>= 1) {
		if (lid < k)
			scratch[lid] += scratch[lid + k];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	v = scratch[0];
	barrier(CLK_LOCAL_MEM_FENCE);
	return v;
}

/* Row n's statistics of s (operand k): shift x0, mean offset dm (mean = x0 + dm) and rstd, from
 * the columns j = first, first + step, ...; sum reduces a partial over the work-group (or not). */
#define AN_STATS(g, s, k, n, first, step, eps, SUM, x0, dm, rstd)                                  \
	do {                                                                                        \
		ACC a_ = (ACC)0, v_ = (ACC)0;                                                       \
		x0 = LOAD(s, AN_AT(g, k, n, 0));                                                    \
		for (int j_ = (first); j_ < (g)->C; j_ += (step))                                  \
			a_ += LOAD(s, AN_AT(g, k, n, j_)) - x0;                                     \
		dm = SUM(a_) / (ACC)(g)->C;                                                         \
		for (int j_ = (first); j_ < (g)->C; j_ += (step)) {                                \
			ACC t_ = (LOAD(s, AN_AT(g, k, n, j_)) - x0) - dm;                           \
			v_ += t_ * t_;                                                              \
		}                                                                                   \
		rstd = rsqrt(SUM(v_) / (ACC)(g)->C + (eps));                                        \
	} while (0)

#define AN_SELF(v) (v)

/* ---- GPU shape ---- */

#if CLG_WANT(add_layer_norm_rows)
__kernel void add_layer_norm_rows(const angeom g, __global T *y, __global const T *x, __global const T *r,
				  __global const T *ga, __global const T *bt, __global T *s, const ACC eps,
				  __local ACC *scratch)
{
	int n = get_group_id(0), lid = get_local_id(0), lsz = get_local_size(0);
	ACC x0, dm, rstd;
#define AN_WG(v) an_wg_sum((v), scratch)
	if (g.res) {
		/* each work-item stores the columns it later reads back: no barrier needed */
		for (int j = lid; j < g.C; j += lsz)
			STORE(s, AN_AT(&g, 5, n, j), LOAD(x, AN_AT(&g, 1, n, j)) + LOAD(r, AN_AT(&g, 2, n, j)));
		/* the shift from x and r (any constant will do; element 0 belongs to work-item 0) */
		ACC a_ = (ACC)0, v_ = (ACC)0;
		x0 = LOAD(x, AN_AT(&g, 1, n, 0)) + LOAD(r, AN_AT(&g, 2, n, 0));
		for (int j = lid; j < g.C; j += lsz)
			a_ += LOAD(s, AN_AT(&g, 5, n, j)) - x0;
		dm = AN_WG(a_) / (ACC)g.C;
		for (int j = lid; j < g.C; j += lsz) {
			ACC t = (LOAD(s, AN_AT(&g, 5, n, j)) - x0) - dm;
			v_ += t * t;
		}
		rstd = rsqrt(AN_WG(v_) / (ACC)g.C + eps);
		for (int j = lid; j < g.C; j += lsz) {
			ACC xh = ((LOAD(s, AN_AT(&g, 5, n, j)) - x0) - dm) * rstd;
			STORE(y, AN_AT(&g, 0, n, j), xh * LOAD(ga, AN_AT1(&g, 3, j)) + LOAD(bt, AN_AT1(&g, 4, j)));
		}
		return;
	}
	AN_STATS(&g, x, 1, n, lid, lsz, eps, AN_WG, x0, dm, rstd);
	for (int j = lid; j < g.C; j += lsz) {
		ACC xh = ((LOAD(x, AN_AT(&g, 1, n, j)) - x0) - dm) * rstd;
		STORE(y, AN_AT(&g, 0, n, j), xh * LOAD(ga, AN_AT1(&g, 3, j)) + LOAD(bt, AN_AT1(&g, 4, j)));
	}
#undef AN_WG
}
#endif

/* Rows [b * rb, min(N, (b + 1) * rb)) of block b = the group, one after the other. */
#if CLG_WANT(add_layer_norm_bwd_rows)
__kernel void add_layer_norm_bwd_rows(const angeom g, __global T *dx, __global const T *gr, __global const T *s,
				      __global const T *ga, __global const T *ad, const ACC eps, const int rb,
				      __global ACC *part, __local ACC *scratch)
{
	int b = get_group_id(0), lid = get_local_id(0), lsz = get_local_size(0);
	int n0 = b * rb, n1 = min(g.N, n0 + rb);
	__global ACC *pg = part + (size_t)b * 2 * g.C, *pb = pg + g.C;
#define AN_WG(v) an_wg_sum((v), scratch)
	for (int n = n0; n < n1; n++) {
		ACC x0, dm, rstd, h0, sh = (ACC)0, shx = (ACC)0;
		AN_STATS(&g, s, 2, n, lid, lsz, eps, AN_WG, x0, dm, rstd);
		h0 = LOAD(gr, AN_AT(&g, 1, n, 0)) * LOAD(ga, AN_AT1(&g, 3, 0));
		for (int j = lid; j < g.C; j += lsz) {
			ACC gj = LOAD(gr, AN_AT(&g, 1, n, j)), xh = ((LOAD(s, AN_AT(&g, 2, n, j)) - x0) - dm) * rstd;
			ACC h = gj * LOAD(ga, AN_AT1(&g, 3, j)) - h0;
			sh += h;
			shx += h * xh;
			/* the column partials: column j is this work-item's in every row */
			pg[j] = n == n0 ? gj * xh : pg[j] + gj * xh;
			pb[j] = n == n0 ? gj : pb[j] + gj;
		}
		wg_sum2(&sh, &shx, scratch);
		sh /= (ACC)g.C;
		shx /= (ACC)g.C;
		for (int j = lid; j < g.C; j += lsz) {
			ACC xh = ((LOAD(s, AN_AT(&g, 2, n, j)) - x0) - dm) * rstd;
			ACC h = LOAD(gr, AN_AT(&g, 1, n, j)) * LOAD(ga, AN_AT1(&g, 3, j)) - h0;
			ACC d = rstd * ((h - sh) - xh * shx);
			STORE(dx, AN_AT(&g, 0, n, j), g.res ? d + LOAD(ad, AN_AT(&g, 6, n, j)) : d);
		}
	}
#undef AN_WG
}
#endif

/* ---- CPU shape ---- */
/* CPU shape: 1 / sqrt(variance + eps) of row n of operand k of src, centred by the shift x0 and
 * the mean offset dm (mean = x0 + dm), sixteen elements a load where the row is contiguous (unit). */
ACC an_row_rstd(const angeom *g, __global const T *src, int k, int n, int unit, ACC x0, ACC dm, ACC eps)
{
	int o = AN_AT(g, k, n, 0), j = 0;
	ACC v = (ACC)0;

	if (unit) {
		ACC16 v16 = (ACC16)0;
		for (; j + 16 <= g->C; j += 16) {
			ACC16 t = (VLOAD16(src, o + j) - x0) - dm;
			v16 += t * t;
		}
		v = HSUM16(v16);
	}
	for (; j < g->C; j++) {
		ACC t = (LOAD(src, AN_AT(g, k, n, j)) - x0) - dm;
		v += t * t;
	}
	return rsqrt(v / (ACC)g->C + eps);
}

/* Sixteen elements at a time where every row operand and gamma (and beta) have unit stride (one
 * AVX-512 register on PoCL: four left three quarters of it idle, 1.3-1.5x slower at (1024, 64));
 * the op takes float and double only, so the sum s as stored is the sum computed (no re-read). */

#if CLG_WANT(add_layer_norm_cpu)
__kernel CLG_VECTORIZED(float16) void add_layer_norm_cpu(const angeom g, __global T *y, __global const T *x,
							 __global const T *r, __global const T *ga, __global const T *bt,
							 __global T *s, const ACC eps)
{
	int n = get_global_id(0), k = g.res ? 5 : 1, j = 0;
	if (n >= g.N)
		return;
	int unit = g.cs[0] == 1 && g.cs[1] == 1 && g.cs[3] == 1 && g.cs[4] == 1 && (!g.res || (g.cs[2] == 1 && g.cs[5] == 1));
	int oy = AN_AT(&g, 0, n, 0), ox = AN_AT(&g, 1, n, 0), orr = AN_AT(&g, 2, n, 0), os = AN_AT(&g, k, n, 0);
	__global const T *src = g.res ? (__global const T *)s : x;
	ACC x0 = g.res ? LOAD(x, ox) + LOAD(r, orr) : LOAD(x, ox), a = (ACC)0, dm, rstd;

	/* the sum (stored when there is a residual) and its mean */
	if (unit) {
		ACC16 a16 = (ACC16)0;
		for (; j + 16 <= g.C; j += 16) {
			ACC16 t = VLOAD16(x, ox + j);
			if (g.res) {
				t += VLOAD16(r, orr + j);
				VSTORE16(s, os + j, t);
			}
			a16 += t - x0;
		}
		a = HSUM16(a16);
	}
	for (; j < g.C; j++) {
		ACC t = LOAD(x, AN_AT(&g, 1, n, j));
		if (g.res) {
			t += LOAD(r, AN_AT(&g, 2, n, j));
			STORE(s, AN_AT(&g, 5, n, j), t);
		}
		a += t - x0;
	}
	dm = a / (ACC)g.C;
	rstd = an_row_rstd(&g, src, k, n, unit, x0, dm, eps);
	j = 0;
	if (unit)
		for (; j + 16 <= g.C; j += 16)
			VSTORE16(y, oy + j, ((VLOAD16(src, os + j) - x0) - dm) * rstd * VLOAD16(ga, g.off[3] + j) + VLOAD16(bt, g.off[4] + j));
	for (; j < g.C; j++)
		STORE(y, AN_AT(&g, 0, n, j),
		      ((LOAD(src, AN_AT(&g, k, n, j)) - x0) - dm) * rstd * LOAD(ga, AN_AT1(&g, 3, j)) + LOAD(bt, AN_AT1(&g, 4, j)));
}
#endif

#if CLG_WANT(add_layer_norm_bwd_cpu)
__kernel void add_layer_norm_bwd_cpu(const angeom g, __global T *dx, __global const T *gr, __global const T *s,
				     __global const T *ga, __global const T *ad, const ACC eps, const int rb,
				     __global ACC *part, const int nb)
{
	int b = get_global_id(0);
	if (b >= nb)
		return;
	int n0 = b * rb, n1 = min(g.N, n0 + rb), og3 = g.off[3];
	int unit = g.cs[0] == 1 && g.cs[1] == 1 && g.cs[2] == 1 && g.cs[3] == 1 && (!g.res || g.cs[6] == 1);
	__global ACC *pg = part + (size_t)b * 2 * g.C, *pb = pg + g.C;
	for (int n = n0; n < n1; n++) {
		int od = AN_AT(&g, 0, n, 0), og = AN_AT(&g, 1, n, 0), os = AN_AT(&g, 2, n, 0), oa = AN_AT(&g, 6, n, 0), j = 0;
		ACC x0 = LOAD(s, os), a = (ACC)0, dm, rstd, h0, sh = (ACC)0, shx = (ACC)0;
		if (unit) {
			ACC16 a16 = (ACC16)0;
			for (; j + 16 <= g.C; j += 16)
				a16 += VLOAD16(s, os + j) - x0;
			a = HSUM16(a16);
		}
		for (; j < g.C; j++)
			a += LOAD(s, AN_AT(&g, 2, n, j)) - x0;
		dm = a / (ACC)g.C;
		rstd = an_row_rstd(&g, s, 2, n, unit, x0, dm, eps);
		/* the row's sums of h and h * xhat, and the block's column partials */
		h0 = LOAD(gr, og) * LOAD(ga, og3);
		j = 0;
		if (unit) {
			ACC16 sh16 = (ACC16)0, shx16 = (ACC16)0;
			for (; j + 16 <= g.C; j += 16) {
				ACC16 gj = VLOAD16(gr, og + j), xh = ((VLOAD16(s, os + j) - x0) - dm) * rstd;
				ACC16 h = gj * VLOAD16(ga, og3 + j) - h0;
				sh16 += h;
				shx16 += h * xh;
				vstore16(n == n0 ? gj * xh : vload16(0, pg + j) + gj * xh, 0, pg + j);
				vstore16(n == n0 ? gj : vload16(0, pb + j) + gj, 0, pb + j);
			}
			sh = HSUM16(sh16);
			shx = HSUM16(shx16);
		}
		for (; j < g.C; j++) {
			ACC gj = LOAD(gr, AN_AT(&g, 1, n, j)), xh = ((LOAD(s, AN_AT(&g, 2, n, j)) - x0) - dm) * rstd;
			ACC h = gj * LOAD(ga, AN_AT1(&g, 3, j)) - h0;
			sh += h;
			shx += h * xh;
			pg[j] = n == n0 ? gj * xh : pg[j] + gj * xh;
			pb[j] = n == n0 ? gj : pb[j] + gj;
		}
		sh /= (ACC)g.C;
		shx /= (ACC)g.C;
		j = 0;
		if (unit)
			for (; j + 16 <= g.C; j += 16) {
				ACC16 xh = ((VLOAD16(s, os + j) - x0) - dm) * rstd;
				ACC16 h = VLOAD16(gr, og + j) * VLOAD16(ga, og3 + j) - h0, d = rstd * ((h - sh) - xh * shx);
				VSTORE16(dx, od + j, g.res ? d + VLOAD16(ad, oa + j) : d);
			}
		for (; j < g.C; j++) {
			ACC xh = ((LOAD(s, AN_AT(&g, 2, n, j)) - x0) - dm) * rstd;
			ACC h = LOAD(gr, AN_AT(&g, 1, n, j)) * LOAD(ga, AN_AT1(&g, 3, j)) - h0;
			ACC d = rstd * ((h - sh) - xh * shx);
			STORE(dx, AN_AT(&g, 0, n, j), g.res ? d + LOAD(ad, AN_AT(&g, 6, n, j)) : d);
		}
	}
}
#endif

/* ---- both shapes: the column sums ---- */

/* dgamma[j] = bg * dgamma[j] + the nb blocks' partials of column j, in block order (the old value
 * unread where bg is 0), dbeta[j] likewise with bb; a work-item per column (dgamma at off[4],
 * stride cs[4]; dbeta at off[5], stride cs[5]). */
#if CLG_WANT(add_layer_norm_colsum)
__kernel void add_layer_norm_colsum(const angeom g, __global T *dg, __global T *db, __global const ACC *part,
				    const int nb, const ACC bg, const ACC bb)
{
	int j = get_global_id(0);
	ACC a = (ACC)0, c = (ACC)0;
	if (j >= g.C)
		return;
	for (int b = 0; b < nb; b++) {
		a += part[(size_t)b * 2 * g.C + j];
		c += part[(size_t)b * 2 * g.C + g.C + j];
	}
	if (bg != (ACC)0)
		a += bg * LOAD(dg, g.off[4] + j * g.cs[4]);
	if (bb != (ACC)0)
		c += bb * LOAD(db, g.off[5] + j * g.cs[5]);
	STORE(dg, g.off[4] + j * g.cs[4], a);
	STORE(db, g.off[5] + j * g.cs[5], c);
}
#endif
