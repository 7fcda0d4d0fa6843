/* Norm family (ROW ops): layer normalisation over the last dim, forward and backward, in two
 * shapes (family "row", backend/kernel_shape.c): <name>_rows one work-group per row (GPU; last
 * argument the local scratch), <name>_rows_cpu one work-item per row, sixteen elements at a time
 * where the row is contiguous, no barriers (CPU; last argument the number of rows), and
 * <name>_rows16_cpu sixteen short contiguous rows a work-item (CPU, as softmax.cl's).
 *   layer_norm_rows           dst = (x - mean) * rstd                                  (a = x)
 *   layer_norm_backward_rows  dst = rstd * (g - mean(g) - xhat * mean(g * xhat))      (a = g, b = x)
 * with mean and the biased variance of the row, rstd = rsqrt(var + eps), xhat = (x - mean) * rstd.
 * Numerics: the statistics are taken in two passes over the row shifted by its first element
 * (mean = x0 + mean(x - x0), var = mean((x - x0 - that)^2)), so rows with a large common offset
 * lose no precision to cancellation; the backward recomputes them from x, and shifts g by its
 * first element likewise (exact: the result does not change when a constant is added to g). The
 * CPU-shaped backward takes the mean, sum(g') and sum(g' x') in one pass (x' = x - x0, g' = g - g0)
 * and sum(g' xhat) as rstd (sum(g' x') - dm sum(g')): three passes over the row instead of four.
 * Each work-item writes only elements it has read, after the row's reductions, so dst may alias a.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when either is double.
 * -DUSE_HALF_STORAGE for T=half (with ACC=float: half is storage only, see LOAD / STORE in prelude.cl).
 * Arguments: geometry, dst, a, b, eps (ACC), then (GPU) scratch of two ACC per work-item, the
 * work-group size a power of two, or (CPU) the number of rows. The row geometry (row_geom),
 * row_offsets, wg_sum, wg_sum2, VLOAD16 and ACC16 come from prelude.cl. */

/* The row's shift x0, mean offset dm (mean = x0 + dm) and rstd, from x at offset o, stride cs. */
void norm_row_stats(const row_geom *g, __global const T *x, int o, int cs, ACC eps, __local ACC *scratch,
		    ACC *x0, ACC *dm, ACC *rstd)
{
	int lid = get_local_id(0), lsz = get_local_size(0);
	ACC s = (ACC)0, v = (ACC)0, shift = LOAD(x, o);
	for (int j = lid; j < g->C; j += lsz)
		s += LOAD(x, o + j * cs) - shift;
	s = wg_sum(s, scratch) / (ACC)g->C;
	for (int j = lid; j < g->C; j += lsz) {
		ACC t = (LOAD(x, o + j * cs) - shift) - s;
		v += t * t;
	}
	v = wg_sum(v, scratch) / (ACC)g->C;
	*x0 = shift;
	*dm = s;
	*rstd = rsqrt(v + eps);
}

#if CLG_WANT(layer_norm_rows)
__kernel void layer_norm_rows(const row_geom g, __global T *d, __global const T *a, __global const T *b,
			      const ACC eps, __local ACC *scratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0), o[3];
	ACC x0, dm, rstd;
	row_offsets(&g, o);
	norm_row_stats(&g, a, o[1], g.cst[1], eps, scratch, &x0, &dm, &rstd);
	for (int j = lid; j < g.C; j += lsz)
		STORE(d, o[0] + j * g.cst[0], ((LOAD(a, o[1] + j * g.cst[1]) - x0) - dm) * rstd);
}
#endif

#if CLG_WANT(layer_norm_backward_rows)
__kernel void layer_norm_backward_rows(const row_geom g, __global T *d, __global const T *a, __global const T *b,
				       const ACC eps, __local ACC *scratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0), o[3];
	ACC x0, dm, rstd, g0, sg = (ACC)0, sgx = (ACC)0;
	row_offsets(&g, o);
	norm_row_stats(&g, b, o[2], g.cst[2], eps, scratch, &x0, &dm, &rstd);
	/* the result is unchanged by a constant added to g (mean(xhat) = 0), so g is shifted by its
	 * first element too: no cancellation in g - mean(g) */
	g0 = LOAD(a, o[1]);
	for (int j = lid; j < g.C; j += lsz) {
		ACC gj = LOAD(a, o[1] + j * g.cst[1]) - g0, xh = ((LOAD(b, o[2] + j * g.cst[2]) - x0) - dm) * rstd;
		sg += gj;
		sgx += gj * xh;
	}
	wg_sum2(&sg, &sgx, scratch);
	sg /= (ACC)g.C;
	sgx /= (ACC)g.C;
	for (int j = lid; j < g.C; j += lsz) {
		ACC gj = LOAD(a, o[1] + j * g.cst[1]) - g0, xh = ((LOAD(b, o[2] + j * g.cst[2]) - x0) - dm) * rstd;
		STORE(d, o[0] + j * g.cst[0], rstd * ((gj - sg) - xh * sgx));
	}
}
#endif

/* ---- CPU shape: one work-item per row ---------------------------------------------------- */
/* Contiguous rows go sixteen elements at a time (ACC16 of prelude.cl), the last C % 16 one at a
 * time; rows with a stride along them one at a time throughout. */

/* sum of x - x0 over a row (offset o, stride cs); u = 1: sum of (x - x0 - dm)^2 instead */
ACC norm_row_sum(__global const T *x, int o, int cs, int C, ACC x0, ACC dm, int u)
{
	ACC s = (ACC)0;
	int j = 0;
	if (cs == 1 && C >= 16) {
		ACC16 s16 = (ACC16)0;
		for (; j + 16 <= C; j += 16) {
			ACC16 t = (VLOAD16(x, o + j) - x0) - dm;
			s16 += u ? t * t : t;
		}
		s = HSUM16(s16);
	}
	for (; j < C; j++) {
		ACC t = (LOAD(x, o + j * cs) - x0) - dm;
		s += u ? t * t : t;
	}
	return s;
}

/* The row's x0, dm and rstd as norm_row_stats computes them, by one work-item. */
void norm_row_stats_cpu(const row_geom *g, __global const T *x, int o, int cs, ACC eps, ACC *x0, ACC *dm,
			ACC *rstd)
{
	*x0 = LOAD(x, o);
	*dm = norm_row_sum(x, o, cs, g->C, *x0, (ACC)0, 0) / (ACC)g->C;
	*rstd = rsqrt(norm_row_sum(x, o, cs, g->C, *x0, *dm, 1) / (ACC)g->C + eps);
}

/* Row r of the layer norm, one work-item (CPU shape) */
void layer_norm_row_cpu(const row_geom *g, __global T *d, __global const T *a, ACC eps, int r)
{
	int o[3], j = 0;
	ACC x0, dm, rstd;

	row_offsets_of(g, r, o);
	norm_row_stats_cpu(g, a, o[1], g->cst[1], eps, &x0, &dm, &rstd);
	if (g->cst[0] == 1 && g->cst[1] == 1)
		for (; j + 16 <= g->C; j += 16)
			VSTORE16(d, o[0] + j, ((VLOAD16(a, o[1] + j) - x0) - dm) * rstd);
	for (; j < g->C; j++)
		STORE(d, o[0] + j * g->cst[0], ((LOAD(a, o[1] + j * g->cst[1]) - x0) - dm) * rstd);
}

/* Row r of the layer norm's backward, one work-item (CPU shape) */
void layer_norm_backward_row_cpu(const row_geom *g, __global T *d, __global const T *a, __global const T *b,
				 ACC eps, int r)
{
	int o[3], j = 0, C = g->C;
	ACC x0, dm, rstd, g0, sx = (ACC)0, sg = (ACC)0, sgx = (ACC)0;

	row_offsets_of(g, r, o);
	x0 = LOAD(b, o[2]);
	g0 = LOAD(a, o[1]); /* g shifted by its first element, as in the GPU shape */
	/* one pass for the mean and both sums: sum(g' xhat) = rstd (sum(g' x') - dm sum(g')) with
	 * x' = x - x0, g' = g - g0 */
	if (g->cst[1] == 1 && g->cst[2] == 1 && C >= 16) {
		ACC16 sx16 = (ACC16)0, sg16 = (ACC16)0, sgx16 = (ACC16)0;
		for (; j + 16 <= C; j += 16) {
			ACC16 gj = VLOAD16(a, o[1] + j) - g0, xj = VLOAD16(b, o[2] + j) - x0;
			sx16 += xj;
			sg16 += gj;
			sgx16 += gj * xj;
		}
		sx = HSUM16(sx16);
		sg = HSUM16(sg16);
		sgx = HSUM16(sgx16);
	}
	for (; j < C; j++) {
		ACC gj = LOAD(a, o[1] + j * g->cst[1]) - g0, xj = LOAD(b, o[2] + j * g->cst[2]) - x0;
		sx += xj;
		sg += gj;
		sgx += gj * xj;
	}
	dm = sx / (ACC)C;
	rstd = rsqrt(norm_row_sum(b, o[2], g->cst[2], C, x0, dm, 1) / (ACC)C + eps);
	sgx = rstd * (sgx - dm * sg) / (ACC)C;
	sg /= (ACC)C;
	j = 0;
	if (g->cst[0] == 1 && g->cst[1] == 1 && g->cst[2] == 1)
		for (; j + 16 <= C; j += 16) {
			ACC16 gj = VLOAD16(a, o[1] + j) - g0, xh = ((VLOAD16(b, o[2] + j) - x0) - dm) * rstd;
			VSTORE16(d, o[0] + j, rstd * ((gj - sg) - xh * sgx));
		}
	for (; j < C; j++) {
		ACC gj = LOAD(a, o[1] + j * g->cst[1]) - g0, xh = ((LOAD(b, o[2] + j * g->cst[2]) - x0) - dm) * rstd;
		STORE(d, o[0] + j * g->cst[0], rstd * ((gj - sg) - xh * sgx));
	}
}

/* Sixteen rows r0..r0 + 15, contiguous, C a multiple of 16 (the host's choice, for C <= 64, as
 * softmax.cl's softmax_rows16): the rows' sums gather into one ACC16 (prelude.cl's tree16_sum,
 * lane i = row i, in HSUM16's order), so the statistics are those of the row-by-row functions
 * above, computed for the sixteen rows in one vector each, and the rows' chains of reductions
 * run side by side. */
void layer_norm_rows16(const row_geom *g, __global T *d, __global const T *a, ACC eps, int r0)
{
	int od[16], oa[16], ob[16], C = g->C;
	ACC16 v[16], dm16, rstd16;
	ACC x0[16], dm[16], rstd[16];

	row_offsets16(g, r0, od, oa, ob);
	for (int i = 0; i < 16; i++)
		x0[i] = LOAD(a, oa[i]);
	for (int i = 0; i < 16; i++) { /* norm_row_sum(u = 0) */
		ACC16 s = (ACC16)0;
		for (int c = 0; c < C; c += 16)
			s += (VLOAD16(a, oa[i] + c) - x0[i]) - (ACC)0;
		v[i] = s;
	}
	dm16 = tree16_sum(v) / (ACC)C;
	vstore16(dm16, 0, dm);
	for (int i = 0; i < 16; i++) { /* norm_row_sum(u = 1), as the row-by-row forward adds it */
		ACC16 s = (ACC16)0;
		for (int c = 0; c < C; c += 16) {
			ACC16 t = (VLOAD16(a, oa[i] + c) - x0[i]) - dm[i], t2 = t * t;
			s += t2; /* a separate statement: no fma, as in PoCL's row-by-row forward */
		}
		v[i] = s;
	}
	rstd16 = rsqrt(tree16_sum(v) / (ACC)C + eps);
	vstore16(rstd16, 0, rstd);
	for (int i = 0; i < 16; i++)
		for (int c = 0; c < C; c += 16)
			VSTORE16(d, od[i] + c, ((VLOAD16(a, oa[i] + c) - x0[i]) - dm[i]) * rstd[i]);
}

void layer_norm_backward_rows16(const row_geom *g, __global T *d, __global const T *a, __global const T *b, ACC eps,
				int r0)
{
	int od[16], oa[16], ob[16], C = g->C;
	ACC16 v[16], w[16], u[16], dm16, rstd16, sg16, sgx16;
	ACC x0[16], g0[16], dm[16], rstd[16], sg[16], sgx[16];

	row_offsets16(g, r0, od, oa, ob);
	for (int i = 0; i < 16; i++) {
		x0[i] = LOAD(b, ob[i]);
		g0[i] = LOAD(a, oa[i]);
	}
	for (int i = 0; i < 16; i++) { /* sum(x'), sum(g'), sum(g' x') */
		ACC16 sx = (ACC16)0, sgs = (ACC16)0, sgxs = (ACC16)0;
		for (int c = 0; c < C; c += 16) {
			ACC16 gj = VLOAD16(a, oa[i] + c) - g0[i], xj = VLOAD16(b, ob[i] + c) - x0[i];
			sx += xj;
			sgs += gj;
			sgxs += gj * xj;
		}
		v[i] = sx;
		w[i] = sgs;
		u[i] = sgxs;
	}
	dm16 = tree16_sum(v) / (ACC)C;
	sg16 = tree16_sum(w);
	sgx16 = tree16_sum(u);
	vstore16(dm16, 0, dm);
	for (int i = 0; i < 16; i++) { /* norm_row_sum(u = 1), as the row-by-row backward adds it */
		ACC16 s = (ACC16)0;
		for (int c = 0; c < C; c += 16) {
			ACC16 t = (VLOAD16(b, ob[i] + c) - x0[i]) - dm[i];
			s += t * t; /* one expression, as where norm_row_sum is inlined (PoCL fuses it) */
		}
		v[i] = s;
	}
	rstd16 = rsqrt(tree16_sum(v) / (ACC)C + eps);
	vstore16(rstd16, 0, rstd);
	vstore16(rstd16 * (sgx16 - dm16 * sg16) / (ACC)C, 0, sgx);
	vstore16(sg16 / (ACC)C, 0, sg);
	for (int i = 0; i < 16; i++)
		for (int c = 0; c < C; c += 16) {
			ACC16 gj = VLOAD16(a, oa[i] + c) - g0[i], xh = ((VLOAD16(b, ob[i] + c) - x0[i]) - dm[i]) * rstd[i];
			VSTORE16(d, od[i] + c, rstd[i] * ((gj - sg[i]) - xh * sgx[i]));
		}
}

/* <name>_rows_cpu: work-item r takes row r; <name>_rows16_cpu: work-item b takes rows 16b..16b+15,
 * a last partial block row by row */
#if CLG_WANT(layer_norm_rows_cpu)
__kernel void layer_norm_rows_cpu(const row_geom g, __global T *d, __global const T *a, __global const T *b,
				  const ACC eps, const int nrows)
{
	int r = get_global_id(0);
	if (r < nrows)
		layer_norm_row_cpu(&g, d, a, eps, r);
}
#endif

#if CLG_WANT(layer_norm_rows16_cpu)
__kernel void layer_norm_rows16_cpu(const row_geom g, __global T *d, __global const T *a, __global const T *b,
				    const ACC eps, const int nrows)
{
	int r0 = get_global_id(0) * 16;
	if (r0 + 16 <= nrows)
		layer_norm_rows16(&g, d, a, eps, r0);
	else
		for (int r = r0; r < nrows; r++)
			layer_norm_row_cpu(&g, d, a, eps, r);
}
#endif

#if CLG_WANT(layer_norm_backward_rows_cpu)
__kernel void layer_norm_backward_rows_cpu(const row_geom g, __global T *d, __global const T *a,
					   __global const T *b, const ACC eps, const int nrows)
{
	int r = get_global_id(0);
	if (r < nrows)
		layer_norm_backward_row_cpu(&g, d, a, b, eps, r);
}
#endif

#if CLG_WANT(layer_norm_backward_rows16_cpu)
__kernel void layer_norm_backward_rows16_cpu(const row_geom g, __global T *d, __global const T *a,
					     __global const T *b, const ACC eps, const int nrows)
{
	int r0 = get_global_id(0) * 16;
	if (r0 + 16 <= nrows)
		layer_norm_backward_rows16(&g, d, a, b, eps, r0);
	else
		for (int r = r0; r < nrows; r++)
			layer_norm_backward_row_cpu(&g, d, a, b, eps, r);
}
#endif
