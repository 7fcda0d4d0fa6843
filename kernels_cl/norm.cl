/* Norm family (ROW ops): layer normalisation over the last dim, forward and backward, in two
 * shapes (family "row", backend/kernel_shape.c): <name>_rows one work-group per row (GPU; last
 * argument the local scratch), <name>_rows_cpu one work-item per row, sixteen elements at a time
 * where the row is contiguous, no barriers (CPU; last argument the number of rows).
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

__kernel void layer_norm_rows_cpu(const row_geom g, __global T *d, __global const T *a, __global const T *b,
				  const ACC eps, const int nrows)
{
	int r = get_global_id(0), o[3];
	ACC x0, dm, rstd;
	if (r >= nrows)
		return;
	row_offsets_of(&g, r, o);
	norm_row_stats_cpu(&g, a, o[1], g.cst[1], eps, &x0, &dm, &rstd);
	int j = 0;
	if (g.cst[0] == 1 && g.cst[1] == 1)
		for (; j + 16 <= g.C; j += 16)
			VSTORE16(d, o[0] + j, ((VLOAD16(a, o[1] + j) - x0) - dm) * rstd);
	for (; j < g.C; j++)
		STORE(d, o[0] + j * g.cst[0], ((LOAD(a, o[1] + j * g.cst[1]) - x0) - dm) * rstd);
}

__kernel void layer_norm_backward_rows_cpu(const row_geom g, __global T *d, __global const T *a,
					   __global const T *b, const ACC eps, const int nrows)
{
	int r = get_global_id(0), o[3], j = 0;
	ACC x0, dm, rstd, g0, sx = (ACC)0, sg = (ACC)0, sgx = (ACC)0;
	if (r >= nrows)
		return;
	row_offsets_of(&g, r, o);
	x0 = LOAD(b, o[2]);
	g0 = LOAD(a, o[1]); /* g shifted by its first element, as in the GPU shape */
	/* one pass for the mean and both sums: sum(g' xhat) = rstd (sum(g' x') - dm sum(g')) with
	 * x' = x - x0, g' = g - g0 */
	if (g.cst[1] == 1 && g.cst[2] == 1 && g.C >= 16) {
		ACC16 sx16 = (ACC16)0, sg16 = (ACC16)0, sgx16 = (ACC16)0;
		for (; j + 16 <= g.C; j += 16) {
			ACC16 gj = VLOAD16(a, o[1] + j) - g0, xj = VLOAD16(b, o[2] + j) - x0;
			sx16 += xj;
			sg16 += gj;
			sgx16 += gj * xj;
		}
		sx = HSUM16(sx16);
		sg = HSUM16(sg16);
		sgx = HSUM16(sgx16);
	}
	for (; j < g.C; j++) {
		ACC gj = LOAD(a, o[1] + j * g.cst[1]) - g0, xj = LOAD(b, o[2] + j * g.cst[2]) - x0;
		sx += xj;
		sg += gj;
		sgx += gj * xj;
	}
	dm = sx / (ACC)g.C;
	rstd = rsqrt(norm_row_sum(b, o[2], g.cst[2], g.C, x0, dm, 1) / (ACC)g.C + eps);
	sgx = rstd * (sgx - dm * sg) / (ACC)g.C;
	sg /= (ACC)g.C;
	j = 0;
	if (g.cst[0] == 1 && g.cst[1] == 1 && g.cst[2] == 1)
		for (; j + 16 <= g.C; j += 16) {
			ACC16 gj = VLOAD16(a, o[1] + j) - g0, xh = ((VLOAD16(b, o[2] + j) - x0) - dm) * rstd;
			VSTORE16(d, o[0] + j, rstd * ((gj - sg) - xh * sgx));
		}
	for (; j < g.C; j++) {
		ACC gj = LOAD(a, o[1] + j * g.cst[1]) - g0, xh = ((LOAD(b, o[2] + j * g.cst[2]) - x0) - dm) * rstd;
		STORE(d, o[0] + j * g.cst[0], rstd * ((gj - sg) - xh * sgx));
	}
}
