/* Prepended by the host to every kernel program (backend/opencl/cl_program.c); not a program.
 * Holds what every program shares:
 *   - the cl_khr_fp64 pragma when the host asks for double (-DUSE_FP64; the host passes it only to
 *     devices that report fp64), the cl_khr_fp16 one for -DUSE_NATIVE_HALF (devices that report
 *     fp16: half arithmetic in the elementwise ops, see elementwise.cl);
 *   - element access: LOAD(p, i) reads element i of p as ACC, STORE(p, i, v) writes ACC v there.
 *     With -DUSE_HALF_STORAGE (T=half, ACC=float) through core OpenCL C 1.2's vload_half /
 *     vstore_half_rte: half is storage only (no half-precision extension needed), float32
 *     arithmetic, one rounding to nearest even on store. Otherwise plain indexing;
 *   - MAXD, the most dims a geometry struct describes (CLG_MAX_DIMS on the host);
 *   - for the ROW ops (one work-group per row: softmax.cl, norm.cl; programs built with ACC): the
 *     row geometry (backend/opencl/cl_ops_row.c fills it), the row's offsets, a work-group sum. */
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef USE_NATIVE_HALF
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

#if defined(USE_HALF_STORAGE)
#define LOAD(p, i) vload_half((size_t)(i), (p))
#define STORE(p, i, v) vstore_half_rte((ACC)(v), (size_t)(i), (p))
#elif defined(USE_BF16_STORAGE)
/* bfloat16: the top half of a float's bits; stores round to nearest even, NaN kept quiet */
inline float bf16_load(ushort b) { return as_float((uint)b << 16); }
inline ushort bf16_store(float v)
{
	uint u = as_uint(v);
	return isnan(v) ? (ushort)((u >> 16) | 0x40u) : (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#define LOAD(p, i) bf16_load((p)[i])
#define STORE(p, i, v) ((p)[i] = bf16_store((float)(v)))
#else
#define LOAD(p, i) ((ACC)(p)[i])
#define STORE(p, i, v) ((p)[i] = (T)(v))
#endif

#define MAXD 6

#ifdef ACC
typedef struct {
	int nd;          /* leading (row index) dims, after merging */
	int C;           /* row length */
	int shape[MAXD]; /* leading dims */
	int off[3];      /* element offsets of dst, src0, src1 */
	int st[3][MAXD]; /* strides of dst, src0, src1 over the leading dims */
	int cst[3];      /* strides of dst, src0, src1 along the row */
} row_geom;

/* Row offsets of this work-group's row in each operand. */
void row_offsets(const row_geom *g, int *o)
{
	int r = get_group_id(0);
	o[0] = g->off[0];
	o[1] = g->off[1];
	o[2] = g->off[2];
	for (int dim = g->nd - 1; dim >= 0; dim--) {
		int q = r % g->shape[dim];
		r /= g->shape[dim];
		o[0] += q * g->st[0][dim];
		o[1] += q * g->st[1][dim];
		o[2] += q * g->st[2][dim];
	}
}

/* Work-group sum of one value per work-item (tree in local memory, power-of-two work-group);
 * every work-item gets the result. */
ACC wg_sum(ACC v, __local ACC *scratch)
{
	int lid = get_local_id(0);
	scratch[lid] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int k = get_local_size(0) / 2; k > 0; k >>= 1) {
		if (lid < k)
			scratch[lid] += scratch[lid + k];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	v = scratch[0];
	barrier(CLK_LOCAL_MEM_FENCE); /* everyone has read before scratch is reused */
	return v;
}
#endif
