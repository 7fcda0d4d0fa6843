/* Row indexing with int32 indices, on strided views, forward and backward side by side.
 *   index_select  dst (B..., M..., D) = rows of table (B..., V, D) at idx (B..., M...)
 *                 one work-item per dst element; an index outside [0, V) gives a row of zeros
 *   index_add     dst (B..., V, D) += rows of src (B..., M..., D) at idx (B..., M...)
 *                 one work-item per (batch, dst row, chunk of the row): it scans the batch's
 *                 indices in order and adds each matching source row into its own chunk, so every
 *                 dst element receives its additions in index order, with no atomics: the result
 *                 is deterministic and bit-identical to the reference backend's. An index outside
 *                 [0, V) adds nowhere.
 * B... are batch dims (none for a plain (V, D) table): each batch looks up rows in its own table.
 * The host describes each operand by strides over the dims of the work-item's decomposition (see
 * sgeom / ageom), so any layout works, including stride-0 (broadcast) tables and indices.
 * Expects: -DT=<storage type> (-DUSE_FP64 when T is double); ACC is unused (sums run in T). */

typedef struct {
	int nd;          /* dst dims */
	int n;           /* dst elements */
	int V;           /* table rows */
	int tab_row_st;  /* table stride along V */
	int off[3];      /* element offsets of dst, table, idx */
	int shape[MAXD]; /* dst shape */
	int st[3][MAXD]; /* strides of dst, table, idx over the dst's dims (0 where an operand lacks one) */
} sgeom;

__kernel void index_select(const sgeom g, __global T *d, __global const T *tab, __global const int *idx)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int od = g.off[0], ot = g.off[1], oi = g.off[2];
	for (int dim = g.nd - 1; dim >= 0; dim--) {
		int q = i % g.shape[dim];
		i /= g.shape[dim];
		od += q * g.st[0][dim];
		ot += q * g.st[1][dim];
		oi += q * g.st[2][dim];
	}
	int j = idx[oi];
	d[od] = j >= 0 && j < g.V ? tab[ot + j * g.tab_row_st] : (T)0;
}

typedef struct {
	int items;           /* work-items: batches * V * nchunk */
	int nb;              /* batch dims */
	int V, D;            /* dst rows and row length */
	int DC, nchunk;      /* row elements per work-item, chunks per row */
	int mnd, M;          /* index dims within a batch (merged where contiguous), their elements */
	int off[3];          /* element offsets of dst, src, idx */
	int bshape[MAXD];    /* batch dims */
	int bst[3][MAXD];    /* strides of dst, src, idx over the batch dims */
	int mshape[MAXD];    /* index dims */
	int mst[2][MAXD];    /* strides of src, idx over the index dims */
	int dst_row_st;      /* dst stride along V */
	int dst_el_st;       /* dst stride along D */
	int src_el_st;       /* src stride along D */
} ageom;

__kernel void index_add(const ageom g, __global T *d, __global const T *src, __global const int *idx)
{
	int i = get_global_id(0);
	if (i >= g.items)
		return;
	int c = i % g.nchunk;
	i /= g.nchunk;
	int v = i % g.V;
	i /= g.V;
	int od = g.off[0] + v * g.dst_row_st, os = g.off[1], oi = g.off[2];
	for (int dim = g.nb - 1; dim >= 0; dim--) {
		int q = i % g.bshape[dim];
		i /= g.bshape[dim];
		od += q * g.bst[0][dim];
		os += q * g.bst[1][dim];
		oi += q * g.bst[2][dim];
	}
	int e0 = c * g.DC, e1 = min(e0 + g.DC, g.D);
	int mi[MAXD];
	for (int k = 0; k < MAXD; k++)
		mi[k] = 0;
	for (int m = 0; m < g.M; m++) {
		if (idx[oi] == v)
			for (int e = e0; e < e1; e++)
				d[od + e * g.dst_el_st] += src[os + e * g.src_el_st];
		/* the next index position (row-major over mshape) */
		for (int dim = g.mnd - 1; dim >= 0; dim--) {
			if (++mi[dim] < g.mshape[dim]) {
				os += g.mst[0][dim];
				oi += g.mst[1][dim];
				break;
			}
			mi[dim] = 0;
			os -= g.mst[0][dim] * (g.mshape[dim] - 1);
			oi -= g.mst[1][dim] * (g.mshape[dim] - 1);
		}
	}
}
