/* Reductions over the trailing dims of a strided view: one work-group per output element.
 * Expects: -DT=<storage type> -DACC=<accumulator type>; -DUSE_FP64 when either is double.
 * The work-group size must be a power of two; scratch holds one ACC per work-item. */
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define MAXD 6
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

__kernel void sum_rows(const rgeom g, __global T *d, __global const T *s, __local ACC *scratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0);
	int o = get_group_id(0), od = g.dst_off, os = g.src_off;

	for (int dim = g.nout - 1; dim >= 0; dim--) {
		int c = o % g.out_shape[dim];
		o /= g.out_shape[dim];
		od += c * g.dst_st[dim];
		os += c * g.src_out_st[dim];
	}
	ACC acc = (ACC)0;
	for (int r = lid; r < g.R; r += lsz) {
		int q = r, off = os;
		for (int dim = g.nred - 1; dim >= 0; dim--) {
			off += (q % g.red_shape[dim]) * g.src_red_st[dim];
			q /= g.red_shape[dim];
		}
		acc += (ACC)s[off];
	}
	scratch[lid] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int k = lsz / 2; k > 0; k >>= 1) {
		if (lid < k)
			scratch[lid] += scratch[lid + k];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		d[od] = (T)scratch[0];
}
