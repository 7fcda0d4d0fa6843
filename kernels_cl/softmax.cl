/* ROW ops: softmax family over the last dim, one work-group per row, forward and backward.
 *   softmax_rows               dst = exp(x - max) / sum(exp(x - max))            (a = x)
 *   log_softmax_rows           dst = x - max - log(sum(exp(x - max)))            (a = x)
 *   softmax_backward_rows      dst = y * (g - sum(g * y))                        (a = g, b = y)
 *   log_softmax_backward_rows  dst = g - exp(y) * sum(g)                         (a = g, b = y)
 * Subtracting the row max keeps exp from overflowing; a NaN in a row makes the row NaN. Each
 * work-item writes only elements it has read, after the row's reductions, so dst may alias a.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when either is double.
 * -DUSE_HALF_STORAGE for T=half (with ACC=float: half is storage only, see LOAD / STORE in prelude.cl).
 * The work-group size must be a power of two; scratch holds one ACC per work-item. The row
 * geometry (row_geom), row_offsets and wg_sum come from prelude.cl. */

/* Work-group max of one value per work-item (fmax: NaN is skipped here; the sum makes the row NaN). */
ACC wg_max(ACC v, __local ACC *scratch)
{
	int lid = get_local_id(0);
	scratch[lid] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int k = get_local_size(0) / 2; k > 0; k >>= 1) {
		if (lid < k)
			scratch[lid] = fmax(scratch[lid], scratch[lid + k]);
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	v = scratch[0];
	barrier(CLK_LOCAL_MEM_FENCE);
	return v;
}

#define SOFTMAX_KERNEL(NAME, LOG)                                                                \
__kernel void NAME##_rows(const row_geom g, __global T *d, __global const T *a, __global const T *b, \
			  __local ACC *scratch)                                                   \
{                                                                                                \
	int lid = get_local_id(0), lsz = get_local_size(0), o[3];                                \
	row_offsets(&g, o);                                                                      \
	ACC m = (ACC)(-INFINITY), s = (ACC)0;                                                    \
	for (int j = lid; j < g.C; j += lsz)                                                     \
		m = fmax(m, LOAD(a, o[1] + j * g.cst[1]));                                       \
	m = wg_max(m, scratch);                                                                  \
	for (int j = lid; j < g.C; j += lsz)                                                     \
		s += exp(LOAD(a, o[1] + j * g.cst[1]) - m);                                      \
	s = wg_sum(s, scratch);                                                                  \
	if (LOG) {                                                                               \
		ACC ls = log(s);                                                                 \
		for (int j = lid; j < g.C; j += lsz)                                             \
			STORE(d, o[0] + j * g.cst[0], LOAD(a, o[1] + j * g.cst[1]) - m - ls);    \
	} else {                                                                                 \
		ACC inv = (ACC)1 / s;                                                            \
		for (int j = lid; j < g.C; j += lsz)                                             \
			STORE(d, o[0] + j * g.cst[0], exp(LOAD(a, o[1] + j * g.cst[1]) - m) * inv); \
	}                                                                                        \
}

SOFTMAX_KERNEL(softmax, 0)
SOFTMAX_KERNEL(log_softmax, 1)

__kernel void softmax_backward_rows(const row_geom g, __global T *d, __global const T *a, __global const T *b,
				    __local ACC *scratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0), o[3];
	row_offsets(&g, o);
	ACC s = (ACC)0;
	for (int j = lid; j < g.C; j += lsz)
		s += LOAD(a, o[1] + j * g.cst[1]) * LOAD(b, o[2] + j * g.cst[2]);
	s = wg_sum(s, scratch);
	for (int j = lid; j < g.C; j += lsz) {
		ACC y = LOAD(b, o[2] + j * g.cst[2]);
		STORE(d, o[0] + j * g.cst[0], y * (LOAD(a, o[1] + j * g.cst[1]) - s));
	}
}

__kernel void log_softmax_backward_rows(const row_geom g, __global T *d, __global const T *a,
					__global const T *b, __local ACC *scratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0), o[3];
	row_offsets(&g, o);
	ACC s = (ACC)0;
	for (int j = lid; j < g.C; j += lsz)
		s += LOAD(a, o[1] + j * g.cst[1]);
	s = wg_sum(s, scratch);
	for (int j = lid; j < g.C; j += lsz)
		STORE(d, o[0] + j * g.cst[0], LOAD(a, o[1] + j * g.cst[1]) - exp(LOAD(b, o[2] + j * g.cst[2])) * s);
}
