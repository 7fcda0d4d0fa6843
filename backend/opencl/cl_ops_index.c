/* OpenCL launchers of the index family: RAND_UNIFORM and RAND_NORMAL (kernels_cl/random.cl),
 * INDEX_SELECT, INDEX_ADD (kernels_cl/index.cl; INDEX_ADD by a scan of the indices per dst row
 * for tiny calls, by a counting sort of them by dst row for the rest) and ONE_HOT. Shapes are checked by
 * clg_index_check (shared with the reference backend); every operand may be a strided view. */
#include "cl_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD CLG_MAX_DIMS

/* Must match `rgeom` in kernels_cl/random.cl. */
typedef struct {
	cl_int nd, n, off;
	cl_int shape[MAXD];
	cl_int st[MAXD];
} rand_geom;

/* Must match `sgeom` in kernels_cl/index.cl. */
typedef struct {
	cl_int nd, n, V, tab_row_st;
	cl_int off[3];
	cl_int shape[MAXD];
	cl_int st[3][MAXD];
} select_geom;

/* Must match `rgeom` in kernels_cl/index.cl. */
typedef struct {
	cl_int R, D, V;
	cl_int off[3];
	cl_int dst_row, dst_el, tab_row, tab_el, idx_st;
} rows_geom;

/* Must match `ageom` in kernels_cl/index.cl. */
typedef struct {
	cl_int items, nb, V, D, DC, nchunk, mnd, M;
	cl_int off[3];
	cl_int bshape[MAXD];
	cl_int bst[3][MAXD];
	cl_int mshape[MAXD];
	cl_int mst[2][MAXD];
	cl_int dst_row_st, dst_el_st, src_el_st;
} add_geom;

/* Fewer work-items than this for INDEX_ADD and its rows are split into chunks. */
#define INDEX_ADD_MIN_ITEMS 8192

static clg_status check_all(clg_backend *be, const clg_op_call *c, int nv)
{
	clg_status st = clg_index_check(be, c);
	if (!st)
		st = clg_cl_check_dtype(be, c, c->dst.dtype);
	for (int k = 0; !st && k < nv; k++)
		st = clg_cl_check_int_range(be, c, k ? &c->src[k - 1] : &c->dst);
	return st;
}

static clg_status run_kernel(clg_backend *be, const clg_op_call *c, const char *program, const char *kname, int nargs,
			     const size_t *sizes, const void *const *vals, size_t items)
{
	const char *op = clg_op_name(c->op);
	char opts[256];
	cl_kernel k;
	clg_status st;

	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	st = clg_cl_kernel(be, program, opts, kname, &k);
	if (!st)
		st = clg_cl_set_args(be, k, op, nargs, sizes, vals);
	if (!st)
		st = clg_cl_launch_1d(be, k, items,
				      clg_cl_spread(be, items, clg_cl_local_size(be, k, clg_cl_of(be)->wg_size)), op);
	return st;
}

static clg_status cl_rand(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst;
	uint64_t seed = (uint64_t)c->i[0], offset = (uint64_t)c->i[1];
	cl_uint k0 = (cl_uint)seed, k1 = (cl_uint)(seed >> 32), c0 = (cl_uint)offset, c1 = (cl_uint)(offset >> 32);
	cl_float p0 = (cl_float)c->f[0], p1 = (cl_float)c->f[1];
	cl_mem mem = (cl_mem)d->buf->handle;
	int64_t n = clg_view_numel(d);
	rand_geom g;
	clg_status st = check_all(be, c, 1);

	if (st || n == 0)
		return st;
	/* size-1 dims dropped, contiguous neighbours merged: the row-major order (k) stays the same */
	memset(&g, 0, sizeof(g));
	g.n = (cl_int)n;
	g.off = (cl_int)d->offset;
	for (int k = 0; k < d->ndim; k++) {
		if (d->shape[k] == 1)
			continue;
		if (g.nd > 0 && g.st[g.nd - 1] == d->stride[k] * d->shape[k]) {
			g.shape[g.nd - 1] *= (cl_int)d->shape[k];
			g.st[g.nd - 1] = (cl_int)d->stride[k];
		} else {
			g.shape[g.nd] = (cl_int)d->shape[k];
			g.st[g.nd++] = (cl_int)d->stride[k];
		}
	}
	{
		size_t u = sizeof(cl_uint), f = sizeof(cl_float);
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), u, u, u, u, f, f};
		const void *vals[] = {&g, &mem, &k0, &k1, &c0, &c1, &p0, &p1};
		return run_kernel(be, c, "random", clg_op_name(c->op), 8, sizes, vals, (size_t)n);
	}
}

/* The embedding-lookup shape of index_select (no table batch dims; the dst's leading dims and the
 * indices one run of rows at single strides): index_select_rows, a 2-D launch with no division per
 * element. Returns 1 when it does not apply (then the general kernel runs). */
/* A 2-D launch over (element of a row, row) of g's R rows of D: a row's elements in adjacent lanes,
 * the rest of the group over rows */
static clg_status launch_rows(clg_backend *be, cl_kernel k, const rows_geom *g, const char *op)
{
	size_t L = clg_cl_local_size(be, k, clg_cl_of(be)->wg_size), items[2] = {(size_t)g->D, (size_t)g->R}, local[2];
	for (local[0] = 1; local[0] < L && local[0] < items[0];)
		local[0] *= 2;
	local[1] = L / local[0];
	while (local[1] > 1 && local[1] / 2 >= items[1])
		local[1] /= 2;
	return clg_cl_launch_2d(be, k, items, local, op);
}

static int select_rows(clg_backend *be, const clg_op_call *c, clg_status *st)
{
	const clg_view *d = &c->dst, *tab = &c->src[0], *ix = &c->src[1];
	int nd = d->ndim, last = -1;
	rows_geom g;
	cl_kernel k;
	char opts[256];
	cl_mem mem[3] = {(cl_mem)d->buf->handle, (cl_mem)tab->buf->handle, (cl_mem)ix->buf->handle};

	if (tab->ndim != 2 || nd < 1 || ix->ndim != nd - 1)
		return 1;
	memset(&g, 0, sizeof(g));
	g.R = 1;
	g.D = (cl_int)d->shape[nd - 1];
	/* merge the leading dims, innermost first: each must continue the run at both operands' strides */
	for (int k2 = nd - 2; k2 >= 0; k2--) {
		if (d->shape[k2] == 1)
			continue;
		if (last < 0) {
			g.dst_row = (cl_int)d->stride[k2];
			g.idx_st = (cl_int)ix->stride[k2];
		} else if (d->stride[k2] != d->stride[last] * d->shape[last] ||
			   ix->stride[k2] != ix->stride[last] * ix->shape[last]) {
			return 1;
		}
		g.R *= (cl_int)d->shape[k2];
		last = k2;
	}
	g.V = (cl_int)tab->shape[0];
	g.off[0] = (cl_int)d->offset, g.off[1] = (cl_int)tab->offset, g.off[2] = (cl_int)ix->offset;
	g.dst_el = (cl_int)d->stride[nd - 1];
	g.tab_row = (cl_int)tab->stride[0];
	g.tab_el = (cl_int)tab->stride[1];
	clg_cl_dtype_options(be, d->dtype, opts, sizeof(opts));
	*st = clg_cl_kernel(be, "index", opts, "index_select_rows", &k);
	if (!*st) {
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
		const void *vals[] = {&g, &mem[0], &mem[1], &mem[2]};
		*st = clg_cl_set_args(be, k, "index_select", 4, sizes, vals);
	}
	if (!*st)
		*st = launch_rows(be, k, &g, "index_select");
	return 0;
}

/* ONE_HOT (dst (N, C), values (N), idx (N), any strides): index_select_rows' launch (GPU shape of
 * family "row") or a work-item per row (CPU shape) */
static clg_status cl_one_hot(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *val = &c->src[0], *ix = &c->src[1];
	cl_mem mem[3] = {(cl_mem)d->buf->handle, (cl_mem)val->buf->handle, (cl_mem)ix->buf->handle};
	int cpu = clg_backend_kernel_shape(be, CLG_KFAM_ROW, NULL) == CLG_SHAPE_CPU;
	size_t local;
	rows_geom g;
	cl_kernel k;
	char opts[256];
	clg_status st = check_all(be, c, 3);

	if (st || clg_view_numel(d) == 0)
		return st;
	memset(&g, 0, sizeof(g));
	g.R = (cl_int)d->shape[0];
	g.D = g.V = (cl_int)d->shape[1];
	g.off[0] = (cl_int)d->offset, g.off[1] = (cl_int)val->offset, g.off[2] = (cl_int)ix->offset;
	g.dst_row = (cl_int)d->stride[0];
	g.dst_el = (cl_int)d->stride[1];
	g.tab_row = (cl_int)val->stride[0];
	g.idx_st = (cl_int)ix->stride[0];
	clg_cl_dtype_options(be, d->dtype, opts, sizeof(opts));
	st = clg_cl_kernel(be, "index", opts, cpu ? "one_hot_rows_cpu" : "one_hot", &k);
	if (!st) {
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
		const void *vals[] = {&g, &mem[0], &mem[1], &mem[2]};
		st = clg_cl_set_args(be, k, "one_hot", 4, sizes, vals);
	}
	if (st || !cpu)
		return st ? st : launch_rows(be, k, &g, "one_hot");
	local = clg_cl_cpu_group_size(be, k, g.R);
	return clg_cl_launch_1d(be, k, ((size_t)g.R + local - 1) / local * local, local, "one_hot");
}

static clg_status cl_index_select(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *tab = &c->src[0], *ix = &c->src[1];
	int nb = tab->ndim - 2, nd = d->ndim;
	int64_t n = clg_view_numel(d);
	cl_mem mem[3] = {(cl_mem)d->buf->handle, (cl_mem)tab->buf->handle, (cl_mem)ix->buf->handle};
	select_geom g;
	clg_status st = check_all(be, c, 3);

	if (st || n == 0)
		return st;
	if (!select_rows(be, c, &st))
		return st;
	memset(&g, 0, sizeof(g));
	g.nd = nd;
	g.n = (cl_int)n;
	g.V = (cl_int)tab->shape[nb];
	g.tab_row_st = (cl_int)tab->stride[nb];
	g.off[0] = (cl_int)d->offset, g.off[1] = (cl_int)tab->offset, g.off[2] = (cl_int)ix->offset;
	for (int k = 0; k < nd; k++) {
		g.shape[k] = (cl_int)d->shape[k];
		g.st[0][k] = (cl_int)d->stride[k];
		g.st[1][k] = (cl_int)(k < nb ? tab->stride[k] : k == nd - 1 ? tab->stride[nb + 1] : 0);
		g.st[2][k] = (cl_int)(k < nd - 1 ? ix->stride[k] : 0);
	}
	{
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
		const void *vals[] = {&g, &mem[0], &mem[1], &mem[2]};
		return run_kernel(be, c, "index", "index_select", 4, sizes, vals, (size_t)n);
	}
}

/* The scan reads M indices per work-item; past this many reads in all the counting sort's six
 * launches cost less (bench_index_add on PoCL and Intel's CPU runtime: the sort was 0.6x the scan's
 * speed at 800 reads, 4x at 160k, 40x at 6.4M, 380-680x at V=50000, M=8192, D=64). */
#define INDEX_ADD_SORT_MIN (1 << 14)

/* The counting sort's bucket order by block ranks (index_add_rank) where the scan over (row, block)
 * counts stays this short; the GPU shape only, by default (a CPU sorts a long bucket quickly). */
#define INDEX_ADD_RANK_MAX (1 << 16)
#define INDEX_ADD_BLOCK 256

enum { PATH_SCAN, PATH_SORT, PATH_RANK };

/* $CLGRAD_INDEX_ADD: scan, sort, rank or auto (unset: auto: the scan below INDEX_ADD_SORT_MIN reads,
 * else the ranks on the GPU shape where rows x blocks <= INDEX_ADD_RANK_MAX, else the sort). */
static clg_status index_add_path(clg_backend *be, const clg_op_call *c, int64_t reads, int64_t rows, int64_t n,
				 int *path)
{
	int gpu = clg_backend_kernel_shape(be, CLG_KFAM_REDUCE, NULL) == CLG_SHAPE_GPU;

	*path = reads < INDEX_ADD_SORT_MIN ? PATH_SCAN
		: gpu && rows * ((n + INDEX_ADD_BLOCK - 1) / INDEX_ADD_BLOCK) <= INDEX_ADD_RANK_MAX ? PATH_RANK
		: PATH_SORT;
	/* CLGRAD_INDEX_ADD forces one (the configuration accepts auto, scan, sort, rank only) */
	if (clg_cfg_is(CLG_CFG_INDEX_ADD, "scan"))
		*path = PATH_SCAN;
	else if (clg_cfg_is(CLG_CFG_INDEX_ADD, "sort"))
		*path = PATH_SORT;
	else if (clg_cfg_is(CLG_CFG_INDEX_ADD, "rank"))
		*path = PATH_RANK;
	(void)c;
	return CLG_OK;
}

/* One launch of the sort path, in work-groups of the backend's default size. */
static clg_status launch(clg_backend *be, const char *opts, const char *kname, int nargs, const size_t *sizes,
			 const void *const *vals, size_t items)
{
	cl_kernel k;
	clg_status st = clg_cl_kernel(be, "index", opts, kname, &k);

	if (!st)
		st = clg_cl_set_args(be, k, "index_add", nargs, sizes, vals);
	if (!st)
		st = clg_cl_launch_1d(be, k, items,
				      clg_cl_spread(be, items, clg_cl_local_size(be, k, clg_cl_of(be)->wg_size)), "index_add");
	return st;
}

/* The bucket starts: one work-group of up to 256, each work-item summing a stretch of the counts. */
static clg_status launch_scan(clg_backend *be, const char *opts, cl_int rows, cl_mem cnt, cl_mem start)
{
	const char *op = "index_add";
	cl_kernel k;
	size_t local = 0;
	clg_status st = clg_cl_kernel(be, "index", opts, "index_add_scan", &k);

	if (!st) {
		local = clg_cl_local_size(be, k, 256);
		st = clg_cl_check_local_mem(be, k, local * sizeof(cl_int), op);
	}
	if (!st) {
		size_t sizes[] = {sizeof(cl_int), sizeof(cl_mem), sizeof(cl_mem), local * sizeof(cl_int)};
		const void *vals[] = {&rows, &cnt, &start, NULL};
		st = clg_cl_set_args(be, k, op, 4, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, local, local, op);
	return st;
}

/* start (m[1], rows + 1) and pos (m[2], n): each row's bucket of positions in ascending m, placed
 * through atomic cursors (m[0]: cnt) and then sorted a bucket a work-item (m[3]: tmp) */
static clg_status place_sorted(clg_backend *be, const char *opts, const add_geom *g, cl_int rows, cl_int n, cl_mem idx,
			       const cl_mem *m)
{
	size_t is = sizeof(cl_int), ms = sizeof(cl_mem), gs = sizeof(*g);
	clg_status st = launch(be, opts, "index_add_zero", 2, (size_t[]){is, ms}, (const void *[]){&rows, &m[0]},
			       (size_t)rows);

	if (!st)
		st = launch(be, opts, "index_add_count", 4, (size_t[]){gs, is, ms, ms}, (const void *[]){g, &n, &idx, &m[0]},
			    (size_t)n);
	if (!st)
		st = launch_scan(be, opts, rows, m[0], m[1]);
	if (!st)
		st = launch(be, opts, "index_add_place", 6, (size_t[]){gs, is, ms, ms, ms, ms},
			    (const void *[]){g, &n, &idx, &m[0], &m[1], &m[2]}, (size_t)n);
	if (!st)
		st = launch(be, opts, "index_add_sort", 4, (size_t[]){is, ms, ms, ms},
			    (const void *[]){&rows, &m[1], &m[2], &m[3]}, (size_t)rows);
	return st;
}

/* start (rows + 1) and pos (n): each row's bucket of positions in ascending m, by block ranks
 * (index_add_rank ... index_add_starts in kernels_cl/index.cl) */
static clg_status place_ranked(clg_backend *be, const char *opts, const add_geom *g, cl_int rows, cl_int n,
			       cl_mem idx, cl_mem start, cl_mem pos)
{
	clg_buffer *b[3] = {NULL, NULL, NULL}; /* cnt (rows x blocks), bstart (rows x blocks + 1), rank (n) */
	size_t is = sizeof(cl_int), ms = sizeof(cl_mem), gs = sizeof(*g), L = 0;
	cl_int block, nblk, cells;
	cl_mem m[3];
	cl_kernel k;
	clg_status st = clg_cl_kernel(be, "index", opts, "index_add_rank", &k);

	if (!st) {
		L = clg_cl_local_size(be, k, INDEX_ADD_BLOCK);
		st = clg_cl_check_local_mem(be, k, L * sizeof(cl_int), "index_add");
	}
	block = (cl_int)L;
	nblk = block ? (n + block - 1) / block : 0;
	if (!st && (int64_t)rows * nblk >= INT_MAX) /* only where CLGRAD_INDEX_ADD=rank forces it */
		st = clg_fail(CLG_ERR_UNSUPPORTED, "op 'index_add' on device '%s': %d rows x %d blocks of %d indices "
			      "exceed the rank path's 32-bit counts (CLGRAD_INDEX_ADD=sort)", be->info.name, rows, nblk, block);
	cells = st ? 0 : rows * nblk;
	for (int i = 0; !st && i < 3; i++) {
		st = clg_buffer_alloc(be, (size_t)(i == 2 ? n : cells + i) * sizeof(cl_int), &b[i]);
		m[i] = st ? NULL : (cl_mem)b[i]->handle;
	}
	if (!st)
		st = launch(be, opts, "index_add_zero", 2, (size_t[]){is, ms}, (const void *[]){&cells, &m[0]},
			    (size_t)cells);
	if (!st)
		st = clg_cl_set_args(be, k, "index_add", 6, (size_t[]){gs, is, ms, ms, ms, L * sizeof(cl_int)},
				     (const void *[]){g, &n, &idx, &m[0], &m[2], NULL});
	if (!st)
		st = clg_cl_launch_1d(be, k, (size_t)n, L, "index_add");
	if (!st)
		st = launch_scan(be, opts, cells, m[0], m[1]);
	if (!st)
		st = launch(be, opts, "index_add_place_ranked", 8, (size_t[]){gs, is, is, is, ms, ms, ms, ms},
			    (const void *[]){g, &n, &block, &nblk, &idx, &m[1], &m[2], &pos}, (size_t)n);
	if (!st)
		st = launch(be, opts, "index_add_starts", 4, (size_t[]){is, is, ms, ms},
			    (const void *[]){&rows, &nblk, &m[1], &start}, (size_t)rows + 1);
	for (int i = 0; i < 3; i++) /* the in-order queue runs later users after these kernels */
		clg_buffer_free(b[i]);
	return st;
}

/* INDEX_ADD by a counting sort of the positions by dst row (kernels_cl/index.cl says how): rows
 * dst rows over all batches, n index positions over all batches; the buckets ordered by a sort of
 * each (PATH_SORT) or by block ranks (PATH_RANK). */
static clg_status index_add_sorted(clg_backend *be, const clg_op_call *c, const add_geom *g, int64_t rows, int64_t n,
				   const cl_mem *mem, int path)
{
	clg_buffer *b[4] = {NULL, NULL, NULL, NULL}; /* cnt (rows), start (rows + 1), pos (n), tmp (n) */
	size_t ms = sizeof(cl_mem), gs = sizeof(*g);
	cl_int rows_i = (cl_int)rows, n_i = (cl_int)n;
	cl_mem m[4] = {NULL, NULL, NULL, NULL};
	char opts[256];
	/* the CPU shape adds 16 elements of a row a work-item (index_add_sorted16), the GPU shape g's chunks */
	int cpu = clg_backend_kernel_shape(be, CLG_KFAM_REDUCE, NULL) == CLG_SHAPE_CPU;
	add_geom gc = *g;
	const add_geom *g16 = cpu ? &gc : g;
	clg_status st = CLG_OK;

	gc.DC = 16;
	gc.nchunk = (g->D + 15) / 16;
	gc.items = (cl_int)(rows * gc.nchunk);

	for (int k = 0; !st && k < 4; k++) {
		if (path == PATH_RANK && (k == 0 || k == 3)) /* cnt and tmp: the sort's */
			continue;
		st = clg_buffer_alloc(be, (size_t)(k < 2 ? rows + k : n) * sizeof(cl_int), &b[k]);
		m[k] = st ? NULL : (cl_mem)b[k]->handle;
	}
	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	if (!st && path == PATH_RANK)
		st = place_ranked(be, opts, g, rows_i, n_i, mem[2], m[1], m[2]);
	else if (!st)
		st = place_sorted(be, opts, g, rows_i, n_i, mem[2], m);
	if (!st)
		st = launch(be, opts, cpu ? "index_add_sorted16" : "index_add_sorted", 5, (size_t[]){gs, ms, ms, ms, ms},
			    (const void *[]){g16, &mem[0], &mem[1], &m[1], &m[2]}, (size_t)g16->items);
	/* safe at once: the in-order queue runs any later user of the buffers after these kernels */
	for (int k = 0; k < 4; k++)
		clg_buffer_free(b[k]);
	return st;
}

static clg_status cl_index_add(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *src = &c->src[0], *ix = &c->src[1];
	int nb = d->ndim - 2, nm = ix->ndim - nb;
	int64_t rows = 1, nchunk;
	int path;
	cl_mem mem[3] = {(cl_mem)d->buf->handle, (cl_mem)src->buf->handle, (cl_mem)ix->buf->handle};
	add_geom g;
	clg_status st = check_all(be, c, 3);

	if (st || clg_view_numel(d) == 0 || clg_view_numel(ix) == 0)
		return st;
	memset(&g, 0, sizeof(g));
	g.nb = nb;
	g.V = (cl_int)d->shape[nb];
	g.D = (cl_int)d->shape[nb + 1];
	g.off[0] = (cl_int)d->offset, g.off[1] = (cl_int)src->offset, g.off[2] = (cl_int)ix->offset;
	for (int k = 0; k < nb; k++) {
		g.bshape[k] = (cl_int)d->shape[k];
		g.bst[0][k] = (cl_int)d->stride[k];
		g.bst[1][k] = (cl_int)src->stride[k];
		g.bst[2][k] = (cl_int)ix->stride[k];
		rows *= d->shape[k];
	}
	rows *= g.V;
	/* the index dims within a batch: size-1 dims dropped, neighbours merged where contiguous in both */
	g.M = 1;
	for (int k = nb; k < nb + nm; k++) {
		int64_t sz = ix->shape[k];
		g.M *= (cl_int)sz;
		if (sz == 1)
			continue;
		if (g.mnd > 0 && g.mst[0][g.mnd - 1] == src->stride[k] * sz && g.mst[1][g.mnd - 1] == ix->stride[k] * sz) {
			g.mshape[g.mnd - 1] *= (cl_int)sz;
			g.mst[0][g.mnd - 1] = (cl_int)src->stride[k];
			g.mst[1][g.mnd - 1] = (cl_int)ix->stride[k];
		} else {
			g.mshape[g.mnd] = (cl_int)sz;
			g.mst[0][g.mnd] = (cl_int)src->stride[k];
			g.mst[1][g.mnd++] = (cl_int)ix->stride[k];
		}
	}
	g.dst_row_st = (cl_int)d->stride[nb];
	g.dst_el_st = (cl_int)d->stride[nb + 1];
	g.src_el_st = (cl_int)src->stride[src->ndim - 1];
	/* one work-item per dst row, or per chunk of a row when rows are few */
	nchunk = rows >= INDEX_ADD_MIN_ITEMS ? 1 : (INDEX_ADD_MIN_ITEMS + rows - 1) / rows;
	if (nchunk > g.D)
		nchunk = g.D;
	g.DC = (cl_int)((g.D + nchunk - 1) / nchunk);
	g.nchunk = (g.D + g.DC - 1) / g.DC;
	g.items = (cl_int)(rows * g.nchunk); /* at most the dst's element count */
	if ((st = index_add_path(be, c, (int64_t)g.items * g.M, rows, rows / g.V * g.M, &path)))
		return st;
	if (path != PATH_SCAN)
		return index_add_sorted(be, c, &g, rows, rows / g.V * g.M, mem, path);
	{
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
		const void *vals[] = {&g, &mem[0], &mem[1], &mem[2]};
		return run_kernel(be, c, "index", "index_add", 4, sizes, vals, (size_t)g.items);
	}
}

void clg_cl_register_index(clg_backend *be)
{
	be->ops[CLG_OP_RAND_UNIFORM] = cl_rand;
	be->ops[CLG_OP_RAND_NORMAL] = cl_rand;
	be->ops[CLG_OP_INDEX_SELECT] = cl_index_select;
	be->ops[CLG_OP_INDEX_ADD] = cl_index_add;
	be->ops[CLG_OP_ONE_HOT] = cl_one_hot;
}
