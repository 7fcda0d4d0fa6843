/* Block-wise int8 quantization for the compressed gradient exchange (clg_ops.def, INT8_*),
 * float32 only. Scales in two shapes (backend/kernel_shape.c, family "reduce"): a work-item per
 * block (CPU) or a work-group per block reducing in local memory (GPU). Packing and unpacking
 * take a work-item per four values (one int32 of bytes) or per value. */

/* CPU shape: work-item b scans block b. */
#if CLG_WANT(int8_scales_item)
__kernel void int8_scales_item(int n, int block, __global const float *restrict x, int xoff,
			       __global float *restrict s, int soff)
{
	int b = get_global_id(0), lo = b * block, hi = min(lo + block, n);
	float m = 0.0f;
	if (lo >= n)
		return;
	for (int k = lo; k < hi; k++)
		m = fmax(m, fabs(x[xoff + k]));
	s[soff + b] = m / 127.0f;
}
#endif

/* GPU shape: work-group b reads block b coalesced, then a tree reduction (any group size). */
#if CLG_WANT(int8_scales_group)
__kernel void int8_scales_group(int n, int block, __global const float *restrict x, int xoff,
				__global float *restrict s, int soff, __local float *part)
{
	int b = get_group_id(0), l = get_local_id(0), ls = get_local_size(0);
	int lo = b * block, hi = min(lo + block, n);
	float m = 0.0f;
	for (int k = lo + l; k < hi; k += ls)
		m = fmax(m, fabs(x[xoff + k]));
	part[l] = m;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int w = ls; w > 1;) {
		int upper = (w + 1) / 2;
		if (l < w - upper)
			part[l] = fmax(part[l], part[l + upper]);
		barrier(CLK_LOCAL_MEM_FENCE);
		w = upper;
	}
	if (l == 0 && lo < n)
		s[soff + b] = part[0] / 127.0f;
}
#endif

/* Work-item j packs values 4j .. 4j + 3 into one int32, byte t at bits 8t. */
#if CLG_WANT(int8_quant)
__kernel void int8_quant(int n, int block, __global const float *restrict x, int xoff,
			 __global const float *restrict s, int soff, __global int *restrict q, int qoff)
{
	int j = get_global_id(0);
	uint packed = 0;
	if (4 * j >= n)
		return;
	for (int t = 0; t < 4; t++) {
		int k = 4 * j + t, v = 0;
		if (k < n) {
			float sc = s[soff + k / block];
			v = sc > 0.0f ? clamp((int)rint(x[xoff + k] / sc), -127, 127) : 0;
		}
		packed |= ((uint)v & 0xffu) << (8 * t);
	}
	q[qoff + j] = (int)packed;
}
#endif

#if CLG_WANT(int8_dequant)
__kernel void int8_dequant(int n, int block, __global const int *restrict q, int qoff,
			   __global const float *restrict s, int soff, __global float *restrict x, int xoff)
{
	int k = get_global_id(0);
	if (k >= n)
		return;
	x[xoff + k] = s[soff + k / block] * (float)(char)(((uint)q[qoff + k / 4] >> (8 * (k % 4))) & 0xffu);
}
#endif
