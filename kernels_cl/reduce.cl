/* Reductions over the trailing dims of a strided view, in two shapes (family "row",
 * backend/kernel_shape.c): <name>_rows one work-group per output element (GPU; local scratch),
 * <name>_rows_cpu one work-item per output, sixteen elements at a time where the reduced elements
 * are contiguous, no barriers (CPU; last argument the number of outputs).
 *   sum_rows, max_rows, min_rows  dst T; max and min propagate NaN (as PyTorch does)
 *   argmax_rows                   dst int: flat index within the reduced dims, the first on ties,
 *                                 NaN counted as the largest value
 * An empty reduction (R == 0) gives 0, -inf, +inf and -1.
 * Expects: -DT=<storage type> -DACC=<accumulator type>; -DUSE_FP64 when either is double.
 * -DUSE_HALF_STORAGE for T=half (with ACC=float: half is storage only, see LOAD / STORE in prelude.cl).
 * GPU shape: the work-group size must be a power of two; scratch holds one ACC (and iscratch one
 * int) per work-item; sum goes through prelude.cl's wg_sum (sub-groups where the host allows). */

typedef struct {
	int nout;             /* kept (output) dims */
	int nred;             /* reduced dims */
	int R;                /* elements reduced into each output */
	int dst_off, src_off;
	int out_shape[MAXD];
	int red_shape[MAXD];
	int dst_st[MAXD];     /* dst strides over the kept dims */
	int src_out_st[MAXD]; /* src strides over the kept dims */
	int src_red_st[MAXD]; /* src strides over the reduced dims */
} rgeom;

/* Offsets of output o in dst and of its first reduced element in src. */
void row_start_of(const rgeom *g, int o, int *od, int *os)
{
	*od = g->dst_off;
	*os = g->src_off;
	if (g->nout == 1) { /* outputs at one stride: no divisions */
		*od += o * g->dst_st[0];
		*os += o * g->src_out_st[0];
		return;
	}
	for (int dim = g->nout - 1; dim >= 0; dim--) {
		int c = o % g->out_shape[dim];
		o /= g->out_shape[dim];
		*od += c * g->dst_st[dim];
		*os += c * g->src_out_st[dim];
	}
}

/* ... of this work-group's output (GPU shape) */
void row_start(const rgeom *g, int *od, int *os) { row_start_of(g, get_group_id(0), od, os); }

/* Offset in src of reduced element r (a flat index over the reduced dims). */
int red_offset(const rgeom *g, int os, int r)
{
	for (int dim = g->nred - 1; dim >= 0; dim--) {
		os += (r % g->red_shape[dim]) * g->src_red_st[dim];
		r /= g->red_shape[dim];
	}
	return os;
}

#define SUM_(a, b) ((a) + (b))
/* keeps a NaN once seen: a if it is NaN or not worse than b, else b (which may be NaN) */
#define MAX_(a, b) (isnan(a) || (a) >= (b) ? (a) : (b))
#define MIN_(a, b) (isnan(a) || (a) <= (b) ? (a) : (b))

#define REDUCE_KERNEL(NAME, IDENTITY, COMBINE)                                                   \
CLG_IF(NAME##_rows, __kernel void NAME##_rows(const rgeom g, __global T *d, __global const T *s, __local ACC *scratch) \
{                                                                                                \
	int lid = get_local_id(0), lsz = get_local_size(0), od, os;                              \
	row_start(&g, &od, &os);                                                                 \
	ACC acc = IDENTITY;                                                                      \
	for (int r = lid; r < g.R; r += lsz) {                                                   \
		ACC x = LOAD(s, g.nred == 1 ? os + r * g.src_red_st[0] : red_offset(&g, os, r)); \
		acc = COMBINE(acc, x);                                                           \
	}                                                                                        \
	scratch[lid] = acc;                                                                      \
	barrier(CLK_LOCAL_MEM_FENCE);                                                            \
	for (int k = lsz / 2; k > 0; k >>= 1) {                                                  \
		if (lid < k)                                                                     \
			scratch[lid] = COMBINE(scratch[lid], scratch[lid + k]);                  \
		barrier(CLK_LOCAL_MEM_FENCE);                                                    \
	}                                                                                        \
	if (lid == 0)                                                                            \
		STORE(d, od, scratch[0]);                                                        \
})

#if CLG_WANT(sum_rows)
__kernel void sum_rows(const rgeom g, __global T *d, __global const T *s, __local ACC *scratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0), od, os;
	ACC acc = (ACC)0;
	row_start(&g, &od, &os);
	if (g.nred == 1) /* one reduced dim: no index arithmetic per element */
		for (int r = lid; r < g.R; r += lsz)
			acc += LOAD(s, os + r * g.src_red_st[0]);
	else
		for (int r = lid; r < g.R; r += lsz)
			acc += LOAD(s, red_offset(&g, os, r));
	acc = wg_sum(acc, scratch);
	if (lid == 0)
		STORE(d, od, acc);
}
#endif
REDUCE_KERNEL(max, (ACC)(-INFINITY), MAX_)
REDUCE_KERNEL(min, (ACC)INFINITY, MIN_)

/* Whether (v, i) beats (bv, bi): larger, or NaN over a number, or equal (both NaN counts as
 * equal) with a smaller index. i == INT_MAX marks "no element yet" and never wins. */
int argmax_better(ACC v, int i, ACC bv, int bi)
{
	if (i == INT_MAX)
		return 0;
	if (bi == INT_MAX)
		return 1;
	if (isnan(v) || isnan(bv))
		return isnan(v) && (!isnan(bv) || i < bi);
	return v > bv || (v == bv && i < bi);
}

#if CLG_WANT(argmax_rows)
__kernel void argmax_rows(const rgeom g, __global int *d, __global const T *s, __local ACC *scratch,
			  __local int *iscratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0), od, os;
	row_start(&g, &od, &os);
	ACC best = (ACC)(-INFINITY);
	int bi = INT_MAX;
	/* r grows, so within one work-item a tie keeps the earlier index */
	for (int r = lid; r < g.R; r += lsz) {
		ACC x = LOAD(s, g.nred == 1 ? os + r * g.src_red_st[0] : red_offset(&g, os, r));
		if (argmax_better(x, r, best, bi)) {
			best = x;
			bi = r;
		}
	}
	scratch[lid] = best;
	iscratch[lid] = bi;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int k = lsz / 2; k > 0; k >>= 1) {
		if (lid < k && argmax_better(scratch[lid + k], iscratch[lid + k], scratch[lid], iscratch[lid])) {
			scratch[lid] = scratch[lid + k];
			iscratch[lid] = iscratch[lid + k];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		d[od] = iscratch[0] == INT_MAX ? -1 : iscratch[0];
}
#endif

/* GPU shape (CLG_KFAM_REDUCE = gpu) of sum, max and min when the outputs lie along src's
 * contiguous dim (a column reduction, such as a sum over the batch): 2-D work-groups of
 * (TC, TR) = get_local_size work-items, TR a power of two. Lane x of group (gx, b) takes output
 * gx * TC + x, so adjacent lanes read adjacent elements of each reduced row (coalesced), and
 * lane y the reduced rows b * rb + y, + TR, ... below (b + 1) * rb; the TR partial results of an
 * output are combined in local memory (scratch: TR * TC ACC). With one row block (one group in
 * dim 1) the group stores the result; otherwise it writes part[b * nout + o] and <op>_cols_final
 * combines the blocks in order b = 0, 1, ... (deterministic). The rows kernels instead give each
 * output a group whose lanes stride through memory by the row length. */
int out_start(const rgeom *g, int o, int *od)
{
	int os = g->src_off;
	*od = g->dst_off;
	for (int dim = g->nout - 1; dim >= 0; dim--) {
		int c = o % g->out_shape[dim];
		o /= g->out_shape[dim];
		*od += c * g->dst_st[dim];
		os += c * g->src_out_st[dim];
	}
	return os;
}

#define REDUCE_COLS_KERNEL(NAME, IDENTITY, COMBINE)                                               \
CLG_IF(NAME##_cols, __kernel void NAME##_cols(const rgeom g, const int nout, const int rb, __global T *d,            \
			  __global const T *s, __global ACC *part, __local ACC *scratch)         \
{                                                                                                \
	int lx = get_local_id(0), ly = get_local_id(1), tc = get_local_size(0);                  \
	int tr = get_local_size(1), o = get_global_id(0), b = get_group_id(1), od = 0, os;       \
	int r_end = min(g.R, (b + 1) * rb);                                                      \
	ACC acc = IDENTITY;                                                                      \
	if (o < nout) {                                                                          \
		os = out_start(&g, o, &od);                                                      \
		for (int r = b * rb + ly; r < r_end; r += tr) {                                  \
			int at = g.nred == 1 ? os + r * g.src_red_st[0] : red_offset(&g, os, r); \
			ACC x = LOAD(s, at);                                                     \
			acc = COMBINE(acc, x);                                                   \
		}                                                                                \
	}                                                                                        \
	scratch[ly * tc + lx] = acc;                                                             \
	barrier(CLK_LOCAL_MEM_FENCE);                                                            \
	for (int k = tr / 2; k > 0; k >>= 1) {                                                   \
		if (ly < k)                                                                      \
			scratch[ly * tc + lx] = COMBINE(scratch[ly * tc + lx],                   \
							scratch[(ly + k) * tc + lx]);            \
		barrier(CLK_LOCAL_MEM_FENCE);                                                    \
	}                                                                                        \
	if (ly != 0 || o >= nout)                                                                \
		return;                                                                          \
	if (get_num_groups(1) > 1)                                                               \
		part[b * nout + o] = scratch[lx];                                                \
	else                                                                                     \
		STORE(d, od, scratch[lx]);                                                       \
})                                                                                                \
CLG_IF(NAME##_cols_final, __kernel void NAME##_cols_final(const rgeom g, const int nout, const int nb, __global T *d,      \
				__global const ACC *part)                                        \
{                                                                                                \
	int o = get_global_id(0), od;                                                            \
	ACC acc = IDENTITY;                                                                      \
	if (o >= nout)                                                                           \
		return;                                                                          \
	out_start(&g, o, &od);                                                                   \
	for (int b = 0; b < nb; b++) {                                                           \
		ACC x = part[b * nout + o];                                                      \
		acc = COMBINE(acc, x);                                                           \
	}                                                                                        \
	STORE(d, od, acc);                                                                       \
})

REDUCE_COLS_KERNEL(sum, (ACC)0, SUM_)
REDUCE_COLS_KERNEL(max, (ACC)(-INFINITY), MAX_)
REDUCE_COLS_KERNEL(min, (ACC)INFINITY, MIN_)

/* ---- CPU shape: one work-item per output ------------------------------------------------- */

/* sum: the contiguous run goes in blocks of 256 elements (sixteen partial sums each: ACC16 of
 * prelude.cl), each block sum added to the total, which keeps the rounding error near that of the
 * GPU shape's tree */
#if CLG_WANT(sum_rows_cpu)
__kernel void sum_rows_cpu(const rgeom g, __global T *d, __global const T *s, const int nout)
{
	int o = get_global_id(0), od, os, r = 0;
	ACC acc = (ACC)0;
	if (o >= nout)
		return;
	row_start_of(&g, o, &od, &os);
	if (g.nred == 1 && g.src_red_st[0] == 1) {
		int end16 = g.R - g.R % 16;
		while (r < end16) {
			int e = min(r + 256, end16);
			ACC16 b = (ACC16)0;
			for (; r < e; r += 16)
				b += VLOAD16(s, os + r);
			acc += HSUM16(b);
		}
	}
	if (g.nred == 1)
		for (; r < g.R; r++)
			acc += LOAD(s, os + r * g.src_red_st[0]);
	else
		for (; r < g.R; r++)
			acc += LOAD(s, red_offset(&g, os, r));
	STORE(d, od, acc);
}
#endif

/* max and min: the lanes take fmax / fmin (exact) and remember whether a NaN went by, so the
 * result follows MAX_ / MIN_ (NaN once seen) */
#ifdef USE_FP64
#define ACCI16 long16
#else
#define ACCI16 int16
#endif
#define REDUCE_CPU_KERNEL(NAME, IDENTITY, COMBINE, VCOMBINE)                                     \
CLG_IF(NAME##_rows_cpu, __kernel void NAME##_rows_cpu(const rgeom g, __global T *d, __global const T *s, const int nout)  \
{                                                                                                \
	int o = get_global_id(0), od, os, r = 0;                                                 \
	ACC acc = IDENTITY;                                                                      \
	if (o >= nout)                                                                           \
		return;                                                                          \
	row_start_of(&g, o, &od, &os);                                                           \
	if (g.nred == 1 && g.src_red_st[0] == 1 && g.R >= 16) {                                  \
		ACC16 m = (ACC16)IDENTITY;                                                       \
		ACCI16 nan = (ACCI16)0;                                                          \
		for (; r + 16 <= g.R; r += 16) {                                                 \
			ACC16 x = VLOAD16(s, os + r);                                            \
			m = VSEL(m, x);                                                          \
			nan |= isnan(x);                                                         \
		}                                                                                \
		ACC4 m4 = VCOMBINE(VCOMBINE(m.s0123, m.s4567), VCOMBINE(m.s89ab, m.scdef));      \
		acc = any(nan) ? (ACC)NAN : VCOMBINE(VCOMBINE(m4.s0, m4.s1), VCOMBINE(m4.s2, m4.s3)); \
	}                                                                                        \
	if (g.nred == 1)                                                                         \
		for (; r < g.R; r++)                                                             \
			acc = COMBINE(acc, LOAD(s, os + r * g.src_red_st[0]));                  \
	else                                                                                     \
		for (; r < g.R; r++)                                                             \
			acc = COMBINE(acc, LOAD(s, red_offset(&g, os, r)));                     \
	STORE(d, od, acc);                                                                       \
})

/* the lanes keep the larger (smaller) by a compare and a select: fmax / fmin (IEEE maxNum, several
 * instructions on x86) took 2x as long at (1024, 512) on both runtimes; a NaN is never taken (the
 * compare is false) and is flagged on the side */
#define VSEL(m, x) select(m, x, isgreater(x, m))
REDUCE_CPU_KERNEL(max, (ACC)(-INFINITY), MAX_, fmax)
#undef VSEL
#define VSEL(m, x) select(m, x, isless(x, m))
REDUCE_CPU_KERNEL(min, (ACC)INFINITY, MIN_, fmin)
#undef VSEL

#if CLG_WANT(argmax_rows_cpu)
__kernel void argmax_rows_cpu(const rgeom g, __global int *d, __global const T *s, const int nout)
{
	int o = get_global_id(0), od, os, bi = INT_MAX;
	ACC best = (ACC)(-INFINITY);
	if (o >= nout)
		return;
	row_start_of(&g, o, &od, &os);
	for (int r = 0; r < g.R; r++) {
		ACC x = LOAD(s, g.nred == 1 ? os + r * g.src_red_st[0] : red_offset(&g, os, r));
		if (argmax_better(x, r, best, bi)) {
			best = x;
			bi = r;
		}
	}
	d[od] = bi == INT_MAX ? -1 : bi;
}
#endif
