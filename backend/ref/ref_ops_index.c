/* Reference implementations of the index family (see clg_ops.def), and the shape checks both
 * backends share (clg_index_check):
 *   RAND_UNIFORM, RAND_NORMAL  counter-based Philox-4x32-10 numbers, computed exactly as
 *                              kernels_cl/random.cl does (float32, same operations, same order)
 *   INDEX_SELECT               dst (B..., M..., D) = rows of table (B..., V, D) at idx (B..., M...)
 *   INDEX_ADD                  dst (B..., V, D) += rows of src0 (B..., M..., D) at idx (B..., M...)
 *   ONE_HOT                    dst (N, C) = src0 (N)[n] at column idx (N)[n] of row n, 0 elsewhere
 * Unlike the other reference ops these do not compute in double: the random numbers are float32 by
 * definition, and INDEX_ADD sums in the dst's dtype in index order, as the OpenCL kernel does, so
 * every device gives the same bits. */
#include "ref_internal.h"

#include <math.h>

#define load clg_ref_load
#define store clg_ref_store
#define next_index clg_ref_next_index

/* ---- shape checks, shared with the OpenCL backend ---- */

static clg_status shape_fail(clg_backend *be, const clg_op_call *c, const char *why)
{
	char s0[128], s1[128], s2[128];
	int nsrc = clg_op_nsrc(c->op);
	return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': %s: src0 %s, src1 %s, dst %s", clg_op_name(c->op),
			be->info.name, why, nsrc > 0 ? clg_shape_str(&c->src[0], s0, sizeof(s0)) : "-",
			nsrc > 1 ? clg_shape_str(&c->src[1], s1, sizeof(s1)) : "-", clg_shape_str(&c->dst, s2, sizeof(s2)));
}

static clg_status dtype_fail(clg_backend *be, const clg_op_call *c, const char *role, clg_dtype t, const char *want)
{
	return clg_fail(CLG_ERR_DTYPE, "op '%s' on device '%s': %s is %s, must be %s", clg_op_name(c->op), be->info.name,
			role, clg_dtype_name(t), want);
}

static int is_float(clg_dtype t) { return t == CLG_F32 || t == CLG_F64; }

/* Shapes, dtypes and parameters of the index family's ops (clg_run checks devices and bounds). */
clg_status clg_index_check(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *a = &c->src[0], *ix = &c->src[1];

	switch (c->op) {
	case CLG_OP_RAND_UNIFORM:
	case CLG_OP_RAND_NORMAL: {
		float lo = (float)c->f[0], hi = (float)c->f[1];
		if (!is_float(d->dtype))
			return dtype_fail(be, c, "dst", d->dtype, "float32 or float64");
		if (c->op == CLG_OP_RAND_UNIFORM && !(lo < hi && isfinite(hi - lo)))
			return clg_fail(CLG_ERR_INVALID, "op 'rand_uniform' on device '%s': range [%g, %g) is empty or not finite in float32",
					be->info.name, c->f[0], c->f[1]);
		if (c->op == CLG_OP_RAND_NORMAL && !(isfinite(lo) && isfinite(hi) && hi >= 0))
			return clg_fail(CLG_ERR_INVALID, "op 'rand_normal' on device '%s': mean %g and standard deviation %g must be finite, the deviation >= 0",
					be->info.name, c->f[0], c->f[1]);
		return CLG_OK;
	}
	case CLG_OP_INDEX_SELECT: {
		/* table a (B..., V, D), idx (B..., M...), dst (B..., M..., D) */
		int nb = a->ndim - 2;
		if (!is_float(d->dtype))
			return dtype_fail(be, c, "dst", d->dtype, "float32 or float64");
		if (a->dtype != d->dtype)
			return dtype_fail(be, c, "src0 (the table)", a->dtype, clg_dtype_name(d->dtype));
		if (ix->dtype != CLG_I32)
			return dtype_fail(be, c, "src1 (the indices)", ix->dtype, "int32");
		if (nb < 0 || ix->ndim < nb || d->ndim != ix->ndim + 1)
			return shape_fail(be, c, "expects table (B..., V, D), indices (B..., M...), dst (B..., M..., D)");
		for (int k = 0; k < ix->ndim; k++)
			if (d->shape[k] != ix->shape[k] || (k < nb && a->shape[k] != ix->shape[k]))
				return shape_fail(be, c, "batch or index dims differ");
		if (d->shape[d->ndim - 1] != a->shape[nb + 1])
			return shape_fail(be, c, "row lengths differ");
		return CLG_OK;
	}
	case CLG_OP_INDEX_ADD: {
		/* dst (B..., V, D), src a (B..., M..., D), idx (B..., M...) */
		int nb = d->ndim - 2;
		if (!is_float(d->dtype))
			return dtype_fail(be, c, "dst", d->dtype, "float32 or float64");
		if (a->dtype != d->dtype)
			return dtype_fail(be, c, "src0 (the rows)", a->dtype, clg_dtype_name(d->dtype));
		if (ix->dtype != CLG_I32)
			return dtype_fail(be, c, "src1 (the indices)", ix->dtype, "int32");
		if (nb < 0 || ix->ndim < nb || a->ndim != ix->ndim + 1)
			return shape_fail(be, c, "expects dst (B..., V, D), rows (B..., M..., D), indices (B..., M...)");
		for (int k = 0; k < ix->ndim; k++)
			if (a->shape[k] != ix->shape[k] || (k < nb && d->shape[k] != ix->shape[k]))
				return shape_fail(be, c, "batch or index dims differ");
		if (a->shape[a->ndim - 1] != d->shape[nb + 1])
			return shape_fail(be, c, "row lengths differ");
		return CLG_OK;
	}
	case CLG_OP_ONE_HOT: /* dst (N, C), values a (N), idx (N) */
		if (!is_float(d->dtype))
			return dtype_fail(be, c, "dst", d->dtype, "float32 or float64");
		if (a->dtype != d->dtype)
			return dtype_fail(be, c, "src0 (the values)", a->dtype, clg_dtype_name(d->dtype));
		if (ix->dtype != CLG_I32)
			return dtype_fail(be, c, "src1 (the indices)", ix->dtype, "int32");
		if (d->ndim != 2 || a->ndim != 1 || ix->ndim != 1 || a->shape[0] != d->shape[0] || ix->shape[0] != d->shape[0])
			return shape_fail(be, c, "expects values (N), indices (N), dst (N, C)");
		return CLG_OK;
	default:
		return clg_fail(CLG_ERR_INVALID, "op '%s' is not of the index family", clg_op_name(c->op));
	}
}

/* ---- Philox-4x32-10 ---- */

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static uint32_t mulhi32(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }

/* Ten rounds on counter x with key (k0, k1), in place (Salmon et al., SC 2011). */
static void philox4x32_10(uint32_t x[4], uint32_t k0, uint32_t k1)
{
	for (int r = 0; r < 10; r++) {
		uint32_t hi0, lo0, hi1, lo1;
		if (r > 0) {
			k0 += PHILOX_W0;
			k1 += PHILOX_W1;
		}
		hi0 = mulhi32(PHILOX_M0, x[0]);
		lo0 = PHILOX_M0 * x[0];
		hi1 = mulhi32(PHILOX_M1, x[2]);
		lo1 = PHILOX_M1 * x[2];
		x[0] = hi1 ^ x[1] ^ k0;
		x[1] = lo1;
		x[2] = hi0 ^ x[3] ^ k1;
		x[3] = lo0;
	}
}

#define TWO_POW_M24 5.9604644775390625e-8f /* 2^-24 */
#define TWO_PI_F 6.28318530717958647692f

/* The number of dst element k (see kernels_cl/random.cl for the mapping). Every step is one
 * float32 operation, in the kernel's order, so the host gives the kernel's bits. */
static float rand_value(clg_op op, uint64_t seed, uint64_t offset, uint64_t k, float p0, float p1)
{
	uint64_t ctr = offset + k;
	uint32_t x[4] = {(uint32_t)ctr, (uint32_t)(ctr >> 32), 0, 0};

	philox4x32_10(x, (uint32_t)seed, (uint32_t)(seed >> 32));
	if (op == CLG_OP_RAND_UNIFORM) {
		float u = (float)(x[0] >> 8) * TWO_POW_M24;
		float w = p1 - p0;
		float t = w * u;
		float v = p0 + t;
		return v < p1 ? v : nextafterf(p1, p0);
	} else {
		float u1 = (float)((x[0] >> 8) + 1u) * TWO_POW_M24; /* (0, 1] */
		float u2 = (float)(x[1] >> 8) * TWO_POW_M24;        /* [0, 1) */
		float l = logf(u1);
		float r = sqrtf(-2.0f * l);
		float th = TWO_PI_F * u2;
		float z = r * cosf(th);
		float t = p1 * z;
		return p0 + t;
	}
}

static clg_status ref_rand(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *v[1] = {d};
	int64_t idx[CLG_MAX_DIMS] = {0}, off[1] = {d->offset};
	uint64_t k = 0;
	clg_status st = clg_index_check(be, c);

	if (st || clg_view_numel(d) == 0)
		return st;
	do {
		store(d, off[0], rand_value(c->op, (uint64_t)c->i[0], (uint64_t)c->i[1], k++, (float)c->f[0], (float)c->f[1]));
	} while (next_index(d->ndim, d->shape, idx, v, 1, off));
	return CLG_OK;
}

/* ---- INDEX_SELECT and INDEX_ADD ---- */

static int32_t load_index(const clg_view *ix, int64_t off) { return ((const int32_t *)ix->buf->handle)[off]; }

static clg_status ref_index_select(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *tab = &c->src[0], *ix = &c->src[1];
	int nb = tab->ndim - 2, nd = d->ndim;
	int64_t V = tab->shape[nb], idx[CLG_MAX_DIMS] = {0}, off[3];
	clg_view it, tt; /* idx and table strides over the dst's dims */
	const clg_view *v[3] = {d, &it, &tt};
	clg_status st = clg_index_check(be, c);

	if (st || clg_view_numel(d) == 0)
		return st;
	it = *ix;
	tt = *tab;
	it.stride[nd - 1] = 0;
	for (int k = 0; k < nd; k++)
		tt.stride[k] = k < nb ? tab->stride[k] : k == nd - 1 ? tab->stride[nb + 1] : 0;
	off[0] = d->offset, off[1] = ix->offset, off[2] = tab->offset;
	do {
		int64_t j = load_index(ix, off[1]);
		/* an index outside [0, V) reads as a row of zeros */
		store(d, off[0], j >= 0 && j < V ? load(tab, off[2] + j * tab->stride[nb]) : 0.0);
	} while (next_index(nd, d->shape, idx, v, 3, off));
	return CLG_OK;
}

/* Each dst element adds, in index order, the rows whose index is its row; an index outside [0, V)
 * adds nowhere. Walking the rows in index order and adding each into its dst row gives every dst
 * element the kernel's sequence of additions, in the dst's dtype. */
static clg_status ref_index_add(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *src = &c->src[0], *ix = &c->src[1];
	int nb = d->ndim - 2, nm = ix->ndim - nb;
	int64_t V = d->shape[nb], D = d->shape[nb + 1], bidx[CLG_MAX_DIMS] = {0}, boff[3];
	clg_view bd = *d, bs = *src, bi = *ix; /* the batch dims of each operand */
	clg_view ms = *src, mi = *ix;           /* the index dims within a batch */
	const clg_view *bv[3] = {&bd, &bs, &bi}, *mv[2] = {&ms, &mi};
	clg_status st = clg_index_check(be, c);

	if (st || clg_view_numel(d) == 0 || clg_view_numel(ix) == 0)
		return st;
	bd.ndim = bs.ndim = bi.ndim = nb;
	ms.ndim = mi.ndim = nm;
	for (int k = 0; k < nm; k++) {
		ms.shape[k] = mi.shape[k] = ix->shape[nb + k];
		ms.stride[k] = src->stride[nb + k];
		mi.stride[k] = ix->stride[nb + k];
	}
	boff[0] = d->offset, boff[1] = src->offset, boff[2] = ix->offset;
	do {
		int64_t midx[CLG_MAX_DIMS] = {0}, moff[2] = {boff[1], boff[2]};
		do {
			int64_t r = load_index(ix, moff[1]);
			if (r < 0 || r >= V)
				continue;
			for (int64_t e = 0; e < D; e++) {
				int64_t od = boff[0] + r * d->stride[nb] + e * d->stride[nb + 1];
				int64_t os = moff[0] + e * src->stride[nb + nm];
				if (d->dtype == CLG_F64) {
					store(d, od, load(d, od) + load(src, os));
				} else {
					float sum = (float)load(d, od) + (float)load(src, os);
					store(d, od, sum);
				}
			}
		} while (next_index(nm, mi.shape, midx, mv, 2, moff));
	} while (next_index(nb, bd.shape, bidx, bv, 3, boff));
	return CLG_OK;
}

/* Row n: its value at column idx[n] (when in [0, C)), 0 elsewhere; the value is stored as it is. */
static clg_status ref_one_hot(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *val = &c->src[0], *ix = &c->src[1];
	int64_t N = d->shape[0], C = d->shape[1];
	clg_status st = clg_index_check(be, c);

	if (st)
		return st;
	for (int64_t n = 0; n < N; n++) {
		int64_t y = load_index(ix, ix->offset + n * ix->stride[0]);
		double v = load(val, val->offset + n * val->stride[0]);
		for (int64_t j = 0; j < C; j++)
			store(d, d->offset + n * d->stride[0] + j * d->stride[1], j == y ? v : 0.0);
	}
	return CLG_OK;
}

void clg_ref_register_index(clg_backend *be)
{
	be->ops[CLG_OP_ONE_HOT] = ref_one_hot;
	be->ops[CLG_OP_RAND_UNIFORM] = ref_rand;
	be->ops[CLG_OP_RAND_NORMAL] = ref_rand;
	be->ops[CLG_OP_INDEX_SELECT] = ref_index_select;
	be->ops[CLG_OP_INDEX_ADD] = ref_index_add;
}
