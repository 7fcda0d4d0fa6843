/* GEMM for 16-bit operands (float16, bfloat16: backend/opencl/cl_gemm.c sends them here, CLBlast
 * and gemm.cl take float32 / float64 only):
 *   gemm_half  D (b, M, N) = alpha * A (b, M, K) @ B (b, K, N) + beta * D
 * every operand at any element strides (batch stride 0 repeats it), read as 16-bit values and
 * accumulated in float32, each result rounded once on store. One work-item computes an HM x HN
 * block straight from global memory (no local memory: the caches of CPU devices serve the
 * re-reads); blocks sticking out of M or N read clamped rows and columns and store only their
 * valid elements. beta == 0 never reads D (it may hold NaN), as BLAS does.
 * Expects the prelude's T, ACC (float), LOAD / STORE: -DUSE_HALF_STORAGE or -DUSE_BF16_STORAGE;
 * with -DUSE_NATIVE_HALF (cl_khr_fp16) float16 values are loaded as half and converted. Builds for
 * float32 too (plain T = float). Offsets and strides must fit in an int (the host checks). */
#ifndef HM
#define HM 4
#endif
#ifndef HN
#define HN 4
#endif

#ifdef USE_NATIVE_HALF
#define HLOAD(p, i) ((float)(p)[i])
#else
#define HLOAD(p, i) ((float)LOAD(p, i))
#endif

__kernel void gemm_half(const int M, const int N, const int K, const float alpha, const float beta,
			__global const T *A, const int a_off, const int a_sm, const int a_sk, const int a_sb,
			__global const T *B, const int b_off, const int b_sk, const int b_sn, const int b_sb,
			__global T *D, const int d_off, const int d_sm, const int d_sn, const int d_sb)
{
	int m0 = get_global_id(0) * HM, n0 = get_global_id(1) * HN, b = get_global_id(2);
	int ar[HM], bc[HN];
	float acc[HM][HN];

	if (m0 >= M || n0 >= N)
		return;
	for (int i = 0; i < HM; i++)
		ar[i] = a_off + b * a_sb + min(m0 + i, M - 1) * a_sm;
	for (int j = 0; j < HN; j++)
		bc[j] = b_off + b * b_sb + min(n0 + j, N - 1) * b_sn;
	for (int i = 0; i < HM; i++)
		for (int j = 0; j < HN; j++)
			acc[i][j] = 0.0f;
	for (int k = 0; k < K; k++) {
		float av[HM], bv[HN];
		for (int i = 0; i < HM; i++)
			av[i] = HLOAD(A, ar[i] + k * a_sk);
		for (int j = 0; j < HN; j++)
			bv[j] = HLOAD(B, bc[j] + k * b_sk);
		for (int i = 0; i < HM; i++)
			for (int j = 0; j < HN; j++)
				acc[i][j] = mad(av[i], bv[j], acc[i][j]);
	}
	for (int i = 0; i < HM && m0 + i < M; i++) {
		for (int j = 0; j < HN && n0 + j < N; j++) {
			int o = d_off + b * d_sb + (m0 + i) * d_sm + (n0 + j) * d_sn;
			float v = alpha * acc[i][j];
			if (beta != 0.0f)
				v += beta * HLOAD(D, o);
			STORE(D, o, v);
		}
	}
}
