/* Row indexing with int32 indices, on strided views, forward and backward side by side.
 *   index_select  dst (B..., M..., D) = rows of table (B..., V, D) at idx (B..., M...)
 *                 one work-item per dst element; an index outside [0, V) gives a row of zeros
 *   index_add     dst (B..., V, D) += rows of src (B..., M..., D) at idx (B..., M...)
 *                 one work-item per (batch, dst row, chunk of the row): it scans the batch's
 *                 indices in order and adds each matching source row into its own chunk, so every
 *                 dst element receives its additions in index order, with no atomics: the result
 *                 is deterministic and bit-identical to the reference backend's. An index outside
 *                 [0, V) adds nowhere. For tiny calls only: larger ones take the counting sort
 *                 (index_add_count ... index_add_sorted, below), same order, same bits.
 *   one_hot       dst (N, C) = val (N)[n] at column idx (N)[n] of row n, 0 elsewhere (an index
 *                 outside [0, C): a row of zeros); one work-item per dst element (GPU shape of
 *                 family "row") or per row (CPU shape)
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

#if CLG_WANT(index_select)
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
#endif

/* index_select where the dst's leading dims and the indices merge into one run of R rows and the
 * table has no batch dims (an embedding lookup): a 2-D launch over (element e of a row, row r), no
 * division per element (PoCL runs integer division element by element: the general kernel above
 * took ~9 ns an element on the transformer's (16, 64, 64) lookup). */
typedef struct {
	int R, D, V;
	int off[3];            /* element offsets of dst, table, idx */
	int dst_row, dst_el;   /* dst strides along the merged rows and along D */
	int tab_row, tab_el;   /* table strides along V and along D */
	int idx_st;            /* index stride along the merged rows */
} rgeom;

#if CLG_WANT(index_select_rows)
__kernel void index_select_rows(const rgeom g, __global T *d, __global const T *tab, __global const int *idx)
{
	int e = get_global_id(0), r = get_global_id(1);
	if (e >= g.D || r >= g.R)
		return;
	int j = idx[g.off[2] + r * g.idx_st];
	d[g.off[0] + r * g.dst_row + e * g.dst_el] = j >= 0 && j < g.V ? tab[g.off[1] + j * g.tab_row + e * g.tab_el] : (T)0;
}
#endif

/* one_hot: dst (R, D) row r holds val[r] at column idx[r] (when in [0, D)), 0 elsewhere; rgeom's
 * tab_row is the values' stride (V, tab_el unused). GPU shape (family "row"): the 2-D launch of
 * index_select_rows, a work-item per element. */
#if CLG_WANT(one_hot)
__kernel void one_hot(const rgeom g, __global T *d, __global const T *val, __global const int *idx)
{
	int e = get_global_id(0), r = get_global_id(1);
	if (e >= g.D || r >= g.R)
		return;
	int j = idx[g.off[2] + r * g.idx_st];
	d[g.off[0] + r * g.dst_row + e * g.dst_el] = j == e ? val[g.off[1] + r * g.tab_row] : (T)0;
}
#endif

/* ... CPU shape: a work-item per row, its zeros sixteen at a time where the row is contiguous, then
 * its value (the per-element kernel ran 2-D groups of one index load and one branch an element:
 * PoCL 14 ms for (2048, 8192)) */
#if CLG_WANT(one_hot_rows_cpu)
__kernel void one_hot_rows_cpu(const rgeom g, __global T *d, __global const T *val, __global const int *idx)
{
	int r = get_global_id(0), e = 0;
	if (r >= g.R)
		return;
	int o = g.off[0] + r * g.dst_row, j = idx[g.off[2] + r * g.idx_st];
	if (g.dst_el == 1)
		for (; e + 16 <= g.D; e += 16)
			VSTORE16(d, o + e, (ACC16)0);
	for (; e < g.D; e++)
		d[o + e * g.dst_el] = (T)0;
	if (j >= 0 && j < g.D)
		d[o + j * g.dst_el] = val[g.off[1] + r * g.tab_row];
}
#endif

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

#if CLG_WANT(index_add)
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
#endif

/* ---- index_add by counting sort: for V * M too large to scan (cl_ops_index.c picks) ----
 * Rows r = b * V + v over all batches, positions p = b * M + m. The buckets of a row come out of
 * four passes: index_add_count (atomic histogram: the counts are deterministic), index_add_scan
 * (their exclusive sum, the start of each bucket), index_add_place (each position into its row's
 * bucket through an atomic cursor: the order within a bucket is not deterministic) and
 * index_add_sort (each bucket back into ascending m). index_add_sorted then adds each row's source
 * rows in ascending m, the reference's order: the sums are bit-identical to index_add's. */

/* Offset of index position (b, m) in idx (which 1) or src (which 0). */
static int pos_offset(const ageom *g, int which, int b, int m)
{
	int o = g->off[which ? 2 : 1];
	for (int dim = g->nb - 1; dim >= 0; dim--) {
		o += (b % g->bshape[dim]) * g->bst[which ? 2 : 1][dim];
		b /= g->bshape[dim];
	}
	for (int dim = g->mnd - 1; dim >= 0; dim--) {
		o += (m % g->mshape[dim]) * g->mst[which ? 1 : 0][dim];
		m /= g->mshape[dim];
	}
	return o;
}

/* The row of position p, or -1 where its index is outside [0, V). */
static int pos_row(const ageom *g, __global const int *idx, int p)
{
	int b = p / g->M, j = idx[pos_offset(g, 1, b, p % g->M)];
	return j >= 0 && j < g->V ? b * g->V + j : -1;
}

#if CLG_WANT(index_add_zero)
__kernel void index_add_zero(int n, __global int *a)
{
	int i = get_global_id(0);
	if (i < n)
		a[i] = 0;
}
#endif

/* one work-item per position: cnt (rows) */
#if CLG_WANT(index_add_count)
__kernel void index_add_count(const ageom g, int n, __global const int *idx, __global int *cnt)
{
	int p = get_global_id(0);
	if (p >= n)
		return;
	int r = pos_row(&g, idx, p);
	if (r >= 0)
		atomic_inc(&cnt[r]);
}
#endif

/* one work-group: start (rows + 1) = exclusive sum of cnt (rows), start[rows] the total. Each
 * work-item sums a contiguous stretch, work-item 0 scans those partial sums (a group's worth). */
#if CLG_WANT(index_add_scan)
__kernel void index_add_scan(int rows, __global const int *cnt, __global int *start, __local int *part)
{
	int l = get_local_id(0), L = get_local_size(0);
	int per = (rows + L - 1) / L, a = min(l * per, rows), e = min(a + per, rows);
	int s = 0;
	for (int i = a; i < e; i++)
		s += cnt[i];
	part[l] = s;
	barrier(CLK_LOCAL_MEM_FENCE);
	if (l == 0) {
		int t = 0;
		for (int i = 0; i < L; i++) {
			int x = part[i];
			part[i] = t;
			t += x;
		}
		start[rows] = t;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	s = part[l];
	for (int i = a; i < e; i++) {
		start[i] = s;
		s += cnt[i];
	}
}
#endif

/* one work-item per position: pos[bucket] = m; counts cnt back down to 0 as its cursor */
#if CLG_WANT(index_add_place)
__kernel void index_add_place(const ageom g, int n, __global const int *idx, __global int *cnt,
			      __global const int *start, __global int *pos)
{
	int p = get_global_id(0);
	if (p >= n)
		return;
	int r = pos_row(&g, idx, p);
	if (r >= 0)
		pos[start[r] + atomic_dec(&cnt[r]) - 1] = p % g.M;
}
#endif

/* one work-item per row: its bucket of pos into ascending order, tmp (as long as pos) the scratch.
 * Insertion sort for the usual few entries; a bottom-up merge sort (n log n) for long buckets, such
 * as a padding token's, that would be quadratic. */
#if CLG_WANT(index_add_sort)
__kernel void index_add_sort(int rows, __global const int *start, __global int *pos, __global int *tmp)
{
	int r = get_global_id(0);
	if (r >= rows)
		return;
	int s = start[r], n = start[r + 1] - s;
	__global int *a = pos + s, *b = tmp + s;
	if (n <= 16) {
		for (int i = 1; i < n; i++) {
			int x = a[i], j = i - 1;
			for (; j >= 0 && a[j] > x; j--)
				a[j + 1] = a[j];
			a[j + 1] = x;
		}
		return;
	}
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = min(lo + w, n), hi = min(lo + 2 * w, n), i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				b[k++] = a[i] <= a[j] ? a[i++] : a[j++];
			while (i < mid)
				b[k++] = a[i++];
			while (j < hi)
				b[k++] = a[j++];
		}
		__global int *t = a;
		a = b, b = t;
	}
	if (a != pos + s)
		for (int i = 0; i < n; i++)
			pos[s + i] = a[i];
}
#endif

/* ---- the buckets in ascending m without index_add_sort, for the GPU shape: a bucket of hundreds
 * of positions (a character's, a frequent word's) sorted by one work-item was the H100's slowest
 * op of a transformer step. Positions in blocks of a work-group: index_add_rank gives each position
 * its rank among the block's positions of the same row and each (row, block) its count (no
 * atomics), index_add_scan sums the counts row-major over (row, block), so that block b of a row
 * starts after blocks 0..b-1 of it, and index_add_place_ranked puts each position at its start plus
 * its rank: every bucket in ascending p, hence m. index_add_starts then picks each row's start. */

/* a work-group per block of get_local_size(0) positions: rank (n) and cnt (rows x blocks; zeroed) */
#if CLG_WANT(index_add_rank)
__kernel void index_add_rank(const ageom g, int n, __global const int *idx, __global int *cnt,
			     __global int *rank, __local int *lr)
{
	int p = get_global_id(0), l = get_local_id(0), L = get_local_size(0), nblk = get_num_groups(0);
	int r = p < n ? pos_row(&g, idx, p) : -1, k = 0, tot = 0;
	lr[l] = r;
	barrier(CLK_LOCAL_MEM_FENCE);
	if (r < 0)
		return;
	for (int j = 0; j < L; j++) {
		int same = lr[j] == r;
		k += same && j < l;
		tot += same;
	}
	rank[p] = k;
	if (k == 0)
		cnt[r * nblk + get_group_id(0)] = tot;
}
#endif

/* one work-item per position: pos[its (row, block)'s start + its rank] = m */
#if CLG_WANT(index_add_place_ranked)
__kernel void index_add_place_ranked(const ageom g, int n, int block, int nblk, __global const int *idx,
				     __global const int *bstart, __global const int *rank, __global int *pos)
{
	int p = get_global_id(0);
	if (p >= n)
		return;
	int r = pos_row(&g, idx, p);
	if (r >= 0)
		pos[bstart[r * nblk + p / block] + rank[p]] = p % g.M;
}
#endif

/* start (rows + 1) = bstart at each row's first block; bstart[rows * nblk] is the total */
#if CLG_WANT(index_add_starts)
__kernel void index_add_starts(int rows, int nblk, __global const int *bstart, __global int *start)
{
	int r = get_global_id(0);
	if (r <= rows)
		start[r] = bstart[r * nblk];
}
#endif

/* dst's offset of bucket r's row: table row v of batch position b, r = b * V + v */
static int sorted_dst_row(const ageom *g, int r)
{
	int v = r % g->V, b = r / g->V, od = g->off[0] + v * g->dst_row_st;
	for (int dim = g->nb - 1, q = b; dim >= 0; dim--) {
		od += (q % g->bshape[dim]) * g->bst[0][dim];
		q /= g->bshape[dim];
	}
	return od;
}

/* one work-item per (row, chunk of the row): adds its bucket's source rows in ascending m */
#if CLG_WANT(index_add_sorted)
__kernel void index_add_sorted(const ageom g, __global T *d, __global const T *src, __global const int *start,
			       __global const int *pos)
{
	int i = get_global_id(0);
	if (i >= g.items)
		return;
	int c = i % g.nchunk, r = i / g.nchunk, b = r / g.V, od = sorted_dst_row(&g, r);
	int e0 = c * g.DC, e1 = min(e0 + g.DC, g.D);
	for (int k = start[r]; k < start[r + 1]; k++) {
		int os = pos_offset(&g, 0, b, pos[k]);
		for (int e = e0; e < e1; e++)
			d[od + e * g.dst_el_st] += src[os + e * g.src_el_st];
	}
}
#endif

/* index_add_sorted for the CPU shape: a work-item per (row, 16 elements of the row), the 16 sums
 * held in registers across the bucket. The position's offset (divisions, which PoCL runs element by
 * element) is found once per 16 elements instead of once per element, as in index_add_sorted at
 * the GPU shape's one element a work-item. Each element still adds its rows in ascending m, starting
 * from dst: the same operations in the same order, the same bits. */
#if CLG_WANT(index_add_sorted16)
__kernel void index_add_sorted16(const ageom g, __global T *d, __global const T *src, __global const int *start,
				 __global const int *pos)
{
	int i = get_global_id(0);
	if (i >= g.items)
		return;
	int c = i % g.nchunk, r = i / g.nchunk, b = r / g.V, od = sorted_dst_row(&g, r);
	int e0 = c * 16, n = min(16, g.D - e0);
	T acc[16];
	od += e0 * g.dst_el_st;
	for (int e = 0; e < 16; e++)
		acc[e] = e < n ? d[od + e * g.dst_el_st] : (T)0;
	for (int k = start[r]; k < start[r + 1]; k++) {
		int os = pos_offset(&g, 0, b, pos[k]) + e0 * g.src_el_st;
		if (n == 16 && g.src_el_st == 1) {
			for (int e = 0; e < 16; e++)
				acc[e] += src[os + e];
		} else {
			for (int e = 0; e < n; e++)
				acc[e] += src[os + e * g.src_el_st];
		}
	}
	for (int e = 0; e < n; e++)
		d[od + e * g.dst_el_st] = acc[e];
}
#endif
