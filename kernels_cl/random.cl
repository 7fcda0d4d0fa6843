/* Counter-based random numbers: Philox-4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011), one work-item per dst element.
 *   rand_uniform  dst = p0 + (p1 - p0) * u           u uniform in [0, 1); the result in [p0, p1)
 *   rand_normal   dst = p0 + p1 * z                  z standard normal (Box-Muller)
 * Mapping (the same in backend/ref/ref_ops_index.c and clg_ops.def): dst element k, counted
 * row-major over the dst's shape whatever its strides, is drawn from ONE Philox block:
 *   counter (c0, c1, c2, c3) = (low 32 bits of offset + k, high 32 bits of offset + k, 0, 0)
 *   key     (k0, k1)         = (low 32 bits of seed, high 32 bits of seed)
 * giving words x0..x3, of which
 *   uniform uses x0:      u  = (x0 >> 8) * 2^-24                      (24 bits, exact in float)
 *   normal uses x0, x1:   u1 = ((x0 >> 8) + 1) * 2^-24 in (0, 1],  u2 = (x1 >> 8) * 2^-24 in [0, 1)
 *                         z  = sqrt(-2 log(u1)) * cos(2 pi u2)
 * Everything is 32-bit integer arithmetic (mul_hi) and float32 arithmetic, one IEEE operation per
 * step with contraction off, whatever T: uniform numbers are bit-identical on every device and on
 * the reference backend; normal ones may differ in the last bits where a device's log, sqrt or
 * cos differs from the host's libm.
 * Expects: -DT=<storage type> (-DUSE_FP64 when T is double); ACC is unused. */
#pragma OPENCL FP_CONTRACT OFF

typedef struct {
	int nd;          /* dst dims (size-1 dims dropped) */
	int n;           /* dst elements */
	int off;         /* dst element offset */
	int shape[MAXD];
	int st[MAXD];    /* dst element strides */
} rgeom;

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

uint4 philox4x32_10(uint4 x, uint k0, uint k1)
{
	for (int r = 0; r < 10; r++) {
		if (r > 0) {
			k0 += PHILOX_W0;
			k1 += PHILOX_W1;
		}
		uint hi0 = mul_hi(PHILOX_M0, x.s0), lo0 = PHILOX_M0 * x.s0;
		uint hi1 = mul_hi(PHILOX_M1, x.s2), lo1 = PHILOX_M1 * x.s2;
		x = (uint4)(hi1 ^ x.s1 ^ k0, lo1, hi0 ^ x.s3 ^ k1, lo0);
	}
	return x;
}

#define TWO_POW_M24 5.9604644775390625e-8f /* 2^-24 */
#define TWO_PI_F 6.28318530717958647692f

/* The Philox block of element i (offset (c0, c1) + i, with the carry into the high word), and the
 * dst offset of element i. */
uint4 block_of(int i, uint k0, uint k1, uint c0, uint c1)
{
	uint lo = c0 + (uint)i;
	uint hi = c1 + (lo < c0 ? 1u : 0u);
	return philox4x32_10((uint4)(lo, hi, 0u, 0u), k0, k1);
}

int dst_offset(const rgeom *g, int i)
{
	int o = g->off;
	for (int dim = g->nd - 1; dim >= 0; dim--) {
		int q = i % g->shape[dim];
		i /= g->shape[dim];
		o += q * g->st[dim];
	}
	return o;
}

#if CLG_WANT(rand_uniform)
__kernel void rand_uniform(const rgeom g, __global T *d, const uint k0, const uint k1, const uint c0,
			   const uint c1, const float p0, const float p1)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	uint4 x = block_of(i, k0, k1, c0, c1);
	float u = (float)(x.s0 >> 8) * TWO_POW_M24;
	float w = p1 - p0;
	float t = w * u;
	float v = p0 + t;
	/* rounding may reach p1 itself: take the float just below it */
	d[dst_offset(&g, i)] = (T)(v < p1 ? v : nextafter(p1, p0));
}
#endif

#if CLG_WANT(rand_normal)
__kernel void rand_normal(const rgeom g, __global T *d, const uint k0, const uint k1, const uint c0,
			  const uint c1, const float p0, const float p1)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	uint4 x = block_of(i, k0, k1, c0, c1);
	float u1 = (float)((x.s0 >> 8) + 1u) * TWO_POW_M24;
	float u2 = (float)(x.s1 >> 8) * TWO_POW_M24;
	float l = log(u1);
	float r = sqrt(-2.0f * l);
	float th = TWO_PI_F * u2;
	float z = r * cos(th);
	float t = p1 * z;
	d[dst_offset(&g, i)] = (T)(p0 + t);
}
#endif
