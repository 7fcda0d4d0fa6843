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

#if CLG_WANT(gemm_half)
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
#endif

/* 8 consecutive 16-bit values as float8 */
#if defined(USE_BF16_STORAGE)
#define VLOAD8(p) as_float8(convert_uint8(vload8(0, (p))) << 16)
#elif defined(USE_HALF_STORAGE)
#define VLOAD8(p) vload_half8(0, (p))
#else
#define VLOAD8(p) convert_float8(vload8(0, (p)))
#endif

/* The two layouts of training's GEMMs, with 8-wide loads (vload_half8, core OpenCL C):
 *   gemm_half_op   B has unit stride along n (b_sn == 1): each work-item holds HM rows x 8 VN
 *                  columns of D as HM x VN float8 accumulators (VN 4: a 64-byte line of B's row
 *                  per k); per k, VN vectors of B's row and HM scalars of A. Work-items whose
 *                  columns pass N take a scalar path.
 *   gemm_half_dot  A and B both have unit stride along k (a_sk == b_sk == 1, e.g. x @ w^T): each
 *                  work-item holds HM x HN float8 partial sums over k, summed across lanes at the
 *                  end; the last K % 8 terms one at a time.
 * Same arguments, edges and beta rule as gemm_half. */
inline void store_half_result(__global T *D, int o, float acc, float alpha, float beta)
{
	float v = alpha * acc;
	if (beta != 0.0f)
		v += beta * HLOAD(D, o);
	STORE(D, o, v);
}

#ifndef VN
#define VN 4
#endif

#if CLG_WANT(gemm_half_op)
__kernel void gemm_half_op(const int M, const int N, const int K, const float alpha, const float beta,
			   __global const T *A, const int a_off, const int a_sm, const int a_sk, const int a_sb,
			   __global const T *B, const int b_off, const int b_sk, const int b_sn, const int b_sb,
			   __global T *D, const int d_off, const int d_sm, const int d_sn, const int d_sb)
{
	int n0 = get_global_id(0) * 8 * VN, m0 = get_global_id(1) * HM, b = get_global_id(2);
	int ar[HM];
	float8 acc[HM][VN];

	if (m0 >= M || n0 >= N)
		return;
	for (int i = 0; i < HM; i++) {
		ar[i] = a_off + b * a_sb + min(m0 + i, M - 1) * a_sm;
		for (int v = 0; v < VN; v++)
			acc[i][v] = (float8)(0.0f);
	}
	if (n0 + 8 * VN <= N) {
		__global const T *bp = B + b_off + b * b_sb + n0;
		for (int k = 0; k < K; k++) {
			float8 bv[VN];
			for (int v = 0; v < VN; v++)
				bv[v] = VLOAD8(bp + k * b_sk + 8 * v);
			for (int i = 0; i < HM; i++) {
				float8 a = (float8)(HLOAD(A, ar[i] + k * a_sk));
				for (int v = 0; v < VN; v++)
					acc[i][v] = mad(a, bv[v], acc[i][v]);
			}
		}
	} else { /* the last columns: clamped scalar reads */
		for (int k = 0; k < K; k++) {
			for (int v = 0; v < VN; v++) {
				float bv[8];
				for (int j = 0; j < 8; j++)
					bv[j] = HLOAD(B, b_off + b * b_sb + min(n0 + 8 * v + j, N - 1) + k * b_sk);
				float8 bv8 = vload8(0, bv);
				for (int i = 0; i < HM; i++)
					acc[i][v] = mad((float8)(HLOAD(A, ar[i] + k * a_sk)), bv8, acc[i][v]);
			}
		}
	}
	for (int i = 0; i < HM && m0 + i < M; i++) {
		for (int v = 0; v < VN; v++) {
			float r[8];
			vstore8(acc[i][v], 0, r);
			for (int j = 0; j < 8 && n0 + 8 * v + j < N; j++)
				store_half_result(D, d_off + b * d_sb + (m0 + i) * d_sm + (n0 + 8 * v + j) * d_sn, r[j],
						  alpha, beta);
		}
	}
}
#endif

#ifndef DHM
#define DHM 4
#endif
#ifndef DHN
#define DHN 2
#endif

#if CLG_WANT(gemm_half_dot)
__kernel void gemm_half_dot(const int M, const int N, const int K, const float alpha, const float beta,
			    __global const T *A, const int a_off, const int a_sm, const int a_sk, const int a_sb,
			    __global const T *B, const int b_off, const int b_sk, const int b_sn, const int b_sb,
			    __global T *D, const int d_off, const int d_sm, const int d_sn, const int d_sb)
{
	int n0 = get_global_id(0) * DHN, m0 = get_global_id(1) * DHM, b = get_global_id(2);
	__global const T *ar[DHM], *bc[DHN];
	float8 acc[DHM][DHN];
	int k8 = K & ~7;

	if (m0 >= M || n0 >= N)
		return;
	for (int i = 0; i < DHM; i++)
		ar[i] = A + a_off + b * a_sb + min(m0 + i, M - 1) * a_sm;
	for (int j = 0; j < DHN; j++)
		bc[j] = B + b_off + b * b_sb + min(n0 + j, N - 1) * b_sn;
	for (int i = 0; i < DHM; i++)
		for (int j = 0; j < DHN; j++)
			acc[i][j] = (float8)(0.0f);
	for (int k = 0; k < k8; k += 8) {
		float8 av[DHM], bv[DHN];
		for (int i = 0; i < DHM; i++)
			av[i] = VLOAD8(ar[i] + k);
		for (int j = 0; j < DHN; j++)
			bv[j] = VLOAD8(bc[j] + k);
		for (int i = 0; i < DHM; i++)
			for (int j = 0; j < DHN; j++)
				acc[i][j] = mad(av[i], bv[j], acc[i][j]);
	}
	for (int i = 0; i < DHM && m0 + i < M; i++) {
		for (int j = 0; j < DHN && n0 + j < N; j++) {
			float8 a = acc[i][j];
			float s = ((a.s0 + a.s1) + (a.s2 + a.s3)) + ((a.s4 + a.s5) + (a.s6 + a.s7));
			for (int k = k8; k < K; k++)
				s = mad(HLOAD(ar[i], k), HLOAD(bc[j], k), s);
			store_half_result(D, d_off + b * d_sb + (m0 + i) * d_sm + (n0 + j) * d_sn, s, alpha, beta);
		}
	}
}
#endif
