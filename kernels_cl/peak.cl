/* Peak-rate kernels for `clgrad compare` (backend/opencl/cl_measure.c), measured as clpeak does.
 *   peak_mad_<W> (W = 1, 2, 4, 8, 16): long chains of mad() (fma() with -DUSE_FMA) on W-wide vectors of PT held in
 *     registers. Eight independent chains per work-item (so a core with several FMA pipes is not
 *     bound by one chain's latency), PEAK_MADS mads each per loop iteration: a work-item does
 *     iters * 8 * PEAK_MADS * W mads (2 flops each). It writes one value so nothing is dead code.
 *   peak_copy: dst[i] = src[i] on float4 (global memory bandwidth, read + write).
 *   peak_read: each work-item sums per_item float4 at stride global size (read bandwidth).
 *   peak_empty: does nothing (launch latency).
 *   peak_iota: out[i] = 3 i + 1 (the program binary round trip checks this output).
 * PT, the arithmetic type, is T (-DT=float, or double with -DUSE_FP64), or half with -DPEAK_FP16,
 * which enables cl_khr_fp16: the host passes it only to devices that report the extension. Built
 * with float16 storage options (-DUSE_HALF_STORAGE) but without PEAK_FP16, PT is float. */
#ifdef PEAK_FP16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define PT half
#elif defined(USE_HALF_STORAGE)
#define PT float
#else
#define PT T
#endif

#define PEAK_CAT_(a, b) a##b
#define PEAK_CAT(a, b) PEAK_CAT_(a, b)

/* x = x * b + c on 8 independent chains x0..x7 (b < 1: every chain converges, so no value
 * overflows or turns subnormal; without -cl-fast-relaxed-math nothing may be folded) */
#ifdef USE_FMA /* the dtype options carry it where the type's fp config has CL_FP_FMA: fused in hardware */
#define MAD1(x) x = fma(x, b, c);
#else /* (some compilers lower mad to a separate multiply and add) */
#define MAD1(x) x = mad(x, b, c);
#endif
/* one mad on every chain, round robin: consecutive mads are independent */
#define ROUND MAD1(x0) MAD1(x1) MAD1(x2) MAD1(x3) MAD1(x4) MAD1(x5) MAD1(x6) MAD1(x7)
#define ROUND8 ROUND ROUND ROUND ROUND ROUND ROUND ROUND ROUND
#define PEAK_MADS 32

#define PEAK_MAD_KERNEL(W, VT)                                                                      \
	CLG_IF(peak_mad_##W, __kernel void peak_mad_##W(__global VT *out, float a, int iters)                            \
	{                                                                                           \
		VT b = (VT)((PT)0.999f), c = (VT)((PT)a);                                           \
		VT x0 = (VT)((PT)get_local_id(0)), x1 = x0 + (VT)((PT)1), x2 = x0 + (VT)((PT)2);    \
		VT x3 = x0 + (VT)((PT)3), x4 = x0 + (VT)((PT)4), x5 = x0 + (VT)((PT)5);             \
		VT x6 = x0 + (VT)((PT)6), x7 = x0 + (VT)((PT)7);                                    \
		for (int i = 0; i < iters; i++) {                                                   \
			ROUND8 ROUND8 ROUND8 ROUND8                                                 \
		}                                                                                   \
		out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));          \
	})

PEAK_MAD_KERNEL(1, PT)
PEAK_MAD_KERNEL(2, PEAK_CAT(PT, 2))
PEAK_MAD_KERNEL(4, PEAK_CAT(PT, 4))
PEAK_MAD_KERNEL(8, PEAK_CAT(PT, 8))
PEAK_MAD_KERNEL(16, PEAK_CAT(PT, 16))

/* src, dst: (n) float4, one per work-item */
#if CLG_WANT(peak_copy)
__kernel void peak_copy(__global const float4 *src, __global float4 *dst)
{
	size_t i = get_global_id(0);
	dst[i] = src[i];
}
#endif

/* src: (per_item * global size) float4; out: (global size) float */
#if CLG_WANT(peak_read)
__kernel void peak_read(__global const float4 *src, __global float *out, int per_item)
{
	size_t g = get_global_id(0), n = get_global_size(0);
	float4 s = (float4)(0.0f);
	for (int k = 0; k < per_item; k++)
		s += src[g + (size_t)k * n];
	out[g] = s.x + s.y + s.z + s.w;
}
#endif

#if CLG_WANT(peak_empty)
__kernel void peak_empty(__global float *out)
{
}
#endif

/* out: (global size) int */
#if CLG_WANT(peak_iota)
__kernel void peak_iota(__global int *out)
{
	int i = (int)get_global_id(0);
	out[i] = 3 * i + 1;
}
#endif
