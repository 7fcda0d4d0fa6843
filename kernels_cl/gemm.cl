/* GEMM for CPU-type devices (PoCL): register-tiled, no local memory, one tile of the output per
 * work-item, meant for work-groups of a single work-item. The host (backend/opencl/cl_gemm.c)
 * picks the form from the operands' layouts:
 *   gemm_op   D (P, Q) = alpha * S (P, K) @ V (K, Q) + beta * D
 *             outer products: V has unit stride along q; S any strides (its elements are
 *             broadcast one at a time). Each work-item holds a TM x TN block of D in TM * TN/VW
 *             vectors and, per step of k, loads TN/VW vectors of a row of V and TM scalars of S.
 *             Covers C = A @ B with B as stored (S = A, as stored or transposed; V = B) and, as
 *             C^T = B^T @ A^T, both operands transposed (S = B^T, V = A^T, D = C^T).
 *   gemm_dot  D (P, Q) = alpha * S (P, K) @ W (Q, K)^T + beta * D
 *             dot products: S and W both have unit stride along k. Each work-item holds a
 *             DM x DN block of D as DM * DN vectors of partial sums over k (VW at a time), summed
 *             across lanes at the end. Covers C = A @ B with only B transposed where C has few
 *             rows; with many, the host packs B^T into panels and runs gemm_op (its lane sums and
 *             DM + DN loads per DM * DN multiply-adds cost more than the pack).
 *   gemm_dot_bias_act, gemm_op_bias_act  gemm_dot (gemm_op on the packed weight) and the linear
 *             layer's bias and activation in its store (one batch): the forward of a linear layer,
 *             x @ w^T, without a pass of its own after it.
 *   gemm_pack copies an operand of gemm_op into panels of W rows (TM for S, TN for V, V taken
 *             as V^T) contiguous along k, zero-padded, for operands whose rows along k are a
 *             multiple of 512 bytes apart and so would fall into a few cache sets.
 * Layouts (in elements): S (p, k) at s_off + (p / TM) * s_pp + (p % TM) * s_sp + k * s_sk, with
 * s_pp = TM * s_sp as stored, or s_pp = K * TM, s_sp = 1, s_sk = TM packed. V (k, q) at
 * v_off + (q / TN) * v_sp + k * ldv + q % TN, with v_sp = TN and ldv its row stride as stored, or
 * v_sp = K * TN, ldv = TN packed; columns at or past vq are not read (vq = Q as stored, Q rounded
 * up to TN packed). D has any strides (d_sp, d_sq); d_sq == 1 stores whole vectors. Each operand
 * has a batch stride (0 repeats it across the batch); the batch is get_global_id(2). Dim 0 of the
 * range walks tiles along p, dim 1 along q, so work-groups that run one after the other share
 * their tile of V (or W), which stays in cache.
 * Edges: tiles that stick out of P or Q read clamped (valid) rows and columns and store only
 * their valid elements, so any P, Q, K >= 1 works. beta == 0 never reads D (it may hold NaN), as
 * BLAS does. Sums are accumulated in T. Offsets, strides and sizes must fit in an int (the host
 * checks).
 * Expects: -DT=<float|double> (-DUSE_FP64 for double), -DTM -DTN -DVW (gemm_op tile; TN a multiple
 * of VW), -DDM -DDN (gemm_dot tile), VW one of 2, 4, 8, 16 (defaults below: AVX2, float);
 * -DUSE_FMA: multiply-adds with fma() (devices that report CL_FP_FMA), else mad(). */

#ifndef TM
#define TM 6
#endif
#ifndef TN
#define TN 16
#endif
#ifndef VW
#define VW 8
#endif
#ifndef DM
#define DM 4
#endif
#ifndef DN
#define DN 3
#endif

/* fma() where the device fuses in hardware (PoCL's mad() stays a multiply and an add) */
#ifdef USE_FMA
#define MAD(a, b, c) fma(a, b, c)
#else
#define MAD(a, b, c) mad(a, b, c)
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VT CAT(T, VW)             /* e.g. float8 */
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)
#define NV (TN / VW)              /* vectors per row of a gemm_op tile */

#if TN % VW
#error "TN must be a multiple of VW"
#endif

/* Sum of a vector's lanes. */
inline T hsum(VT x)
{
#if VW == 16
	CAT(T, 8) y8 = x.lo + x.hi;
	CAT(T, 4) y4 = y8.lo + y8.hi;
#elif VW == 8
	CAT(T, 4) y4 = x.lo + x.hi;
#endif
#if VW >= 8
	CAT(T, 2) y2 = y4.lo + y4.hi;
#elif VW == 4
	CAT(T, 2) y2 = x.lo + x.hi;
#else
	CAT(T, 2) y2 = x;
#endif
	return y2.x + y2.y;
}

/* dst = alpha * acc + beta * dst at element o (dst is not read when beta == 0). */
#define STORE1(D, o, v) ((D)[o] = beta == 0 ? alpha * (v) : alpha * (v) + beta * (D)[o])

/* The linear layer's epilogue on a vector of a gemm_op tile: act(u) with act 0 none, 1 relu (the
 * same float operations as gemm_dot_bias_act's store and fused.cl's bias_act). */
inline VT op_act(VT u, const int act)
{
	return act == 1 ? select((VT)0, u, isgreater(u, (VT)0)) : u;
}

/* The body of gemm_op and gemm_op_bias_act. bias == 0 (a constant after inlining): the plain
 * store; else D = act(acc + bias[b_off + q * b_sq]) (alpha 1, beta 0), see op_act. */
inline void gemm_op_tile(const int P, const int Q, const int K, const T alpha, const T beta,
			 __global const T *S, const int s_off, const int s_sp, const int s_sk, const int s_pp,
			 const int s_sb,
			 __global const T *V, const int v_off, const int ldv, const int v_sp, const int vq,
			 const int v_sb,
			 __global T *D, const int d_off, const int d_sp, const int d_sq, const int d_sb,
			 __global const T *bias, const int b_off, const int b_sq, const int act)
{
	const int tp = (int)get_global_id(0), tq = (int)get_global_id(1), p0 = tp * TM, q0 = tq * TN;
	const int b = (int)get_global_id(2);
	__global const T *s = S + s_off + b * s_sb + tp * s_pp;
	__global const T *v = V + v_off + b * v_sb + tq * v_sp;
	__global T *d = D + d_off + b * d_sb;
	const int full_q = q0 + TN <= vq;
	int sr[TM]; /* offset of each row of S, clamped to a valid row */
	VT acc[TM][NV];

	if (p0 >= P || q0 >= Q)
		return;
#pragma unroll
	for (int i = 0; i < TM; i++) {
		sr[i] = min(i, P - 1 - p0) * s_sp;
#pragma unroll
		for (int j = 0; j < NV; j++)
			acc[i][j] = (VT)0;
	}
	if (full_q) {
		__global const T *vk = v, *sk = s;
		for (int k = 0; k < K; k++, vk += ldv, sk += s_sk) {
			VT bv[NV];
#pragma unroll
			for (int j = 0; j < NV; j++)
				bv[j] = VLOAD(j, vk);
#pragma unroll
			for (int i = 0; i < TM; i++) {
				const VT a = (VT)sk[sr[i]];
#pragma unroll
				for (int j = 0; j < NV; j++)
					acc[i][j] = MAD(a, bv[j], acc[i][j]);
			}
		}
	} else if ((vq - q0) % VW == 0) {
		/* the last tile along q, whole vectors wide (the MLP's 784 = 24.5 x 32 columns): those
		 * vectors as loads, the vectors past vq repeat the last one (computed, not stored); a
		 * gather of TN scalars a step of k made this one tile in 25 cost an eighth of the GEMM */
		int vo[NV];
		__global const T *vk = v, *sk = s;
#pragma unroll
		for (int j = 0; j < NV; j++)
			vo[j] = min(j, (vq - q0) / VW - 1) * VW;
		for (int k = 0; k < K; k++, vk += ldv, sk += s_sk) {
			VT bv[NV];
#pragma unroll
			for (int j = 0; j < NV; j++)
				bv[j] = VLOAD(0, vk + vo[j]);
#pragma unroll
			for (int i = 0; i < TM; i++) {
				const VT a = (VT)sk[sr[i]];
#pragma unroll
				for (int j = 0; j < NV; j++)
					acc[i][j] = MAD(a, bv[j], acc[i][j]);
			}
		}
	} else {
		/* the last tile along q: gather a row of V with its columns clamped */
		int vc[TN];
		__global const T *vk = v, *sk = s;
#pragma unroll
		for (int c = 0; c < TN; c++)
			vc[c] = min(c, Q - 1 - q0);
		for (int k = 0; k < K; k++, vk += ldv, sk += s_sk) {
			T row[TN];
			VT bv[NV];
#pragma unroll
			for (int c = 0; c < TN; c++)
				row[c] = vk[vc[c]];
#pragma unroll
			for (int j = 0; j < NV; j++)
				bv[j] = VLOAD(j, row);
#pragma unroll
			for (int i = 0; i < TM; i++) {
				const VT a = (VT)sk[sr[i]];
#pragma unroll
				for (int j = 0; j < NV; j++)
					acc[i][j] = MAD(a, bv[j], acc[i][j]);
			}
		}
	}
	if (bias) {
		/* bias per column as one vector, or gathered (strided bias, the last tile along q) */
		VT bv[NV];
		T bc[TN];
#pragma unroll
		for (int c = 0; c < TN; c++)
			bc[c] = bias[b_off + min(q0 + c, Q - 1) * b_sq];
#pragma unroll
		for (int j = 0; j < NV; j++)
			bv[j] = VLOAD(j, bc);
#pragma unroll
		for (int i = 0; i < TM; i++)
#pragma unroll
			for (int j = 0; j < NV; j++)
				acc[i][j] = op_act(acc[i][j] + bv[j], act);
	}
	if (q0 + TN <= Q && d_sq == 1) {
#pragma unroll
		for (int i = 0; i < TM; i++) {
			__global T *dr = d + (p0 + i) * d_sp + q0;
			if (p0 + i >= P)
				break;
#pragma unroll
			for (int j = 0; j < NV; j++) {
				VT r = bias ? acc[i][j] : (VT)alpha * acc[i][j];
				if (beta != 0)
					r = MAD((VT)beta, VLOAD(j, dr), r);
				VSTORE(r, j, dr);
			}
		}
	} else {
		for (int i = 0; i < TM && p0 + i < P; i++) {
			T out[TN];
			__global T *dr = d + (p0 + i) * d_sp;
#pragma unroll
			for (int j = 0; j < NV; j++)
				VSTORE(acc[i][j], j, out);
			for (int c = 0; c < TN && q0 + c < Q; c++) {
				if (bias)
					dr[(q0 + c) * d_sq] = out[c];
				else
					STORE1(dr, (q0 + c) * d_sq, out[c]);
			}
		}
	}
}

#if CLG_WANT(gemm_op)
__kernel void gemm_op(const int P, const int Q, const int K, const T alpha, const T beta,
		      __global const T *S, const int s_off, const int s_sp, const int s_sk, const int s_pp,
		      const int s_sb,
		      __global const T *V, const int v_off, const int ldv, const int v_sp, const int vq,
		      const int v_sb,
		      __global T *D, const int d_off, const int d_sp, const int d_sq, const int d_sb)
{
	gemm_op_tile(P, Q, K, alpha, beta, S, s_off, s_sp, s_sk, s_pp, s_sb, V, v_off, ldv, v_sp, vq, v_sb, D, d_off,
		     d_sp, d_sq, d_sb, (__global const T *)0, 0, 0, 0);
}
#endif

/* gemm_op with the linear layer's epilogue (op gemm_bias_act, one batch): D (P, Q) = act(S @ V +
 * bias (Q)), act 0 none, 1 relu; V packed from the weight (x @ w^T with w^T in panels). */
#if CLG_WANT(gemm_op_bias_act)
__kernel void gemm_op_bias_act(const int P, const int Q, const int K,
			       __global const T *S, const int s_off, const int s_sp, const int s_pp,
			       __global const T *V, const int v_off, const int ldv, const int v_sp, const int vq,
			       __global T *D, const int d_off, const int d_sp,
			       __global const T *bias, const int b_off, const int b_sq, const int act)
{
	gemm_op_tile(P, Q, K, (T)1, (T)0, S, s_off, s_sp, 1, s_pp, 0, V, v_off, ldv, v_sp, vq, 0, D, d_off, d_sp, 1, 0,
		     bias, b_off, b_sq, act);
}
#endif

/* The body of gemm_dot and gemm_dot_bias_act. bias == 0 (a constant after inlining): the plain
 * store; else D = act(acc + bias[b_off + q * b_sq]) with act 0 none, 1 relu (alpha 1, beta 0; the
 * same float operations as GEMM then bias_act, fused.cl). */
inline void gemm_dot_tile(const int P, const int Q, const int K, const T alpha, const T beta,
			  __global const T *S, const int s_off, const int lds, const int s_sb,
			  __global const T *W, const int w_off, const int ldw, const int w_sb,
			  __global T *D, const int d_off, const int d_sp, const int d_sq, const int d_sb,
			  __global const T *bias, const int b_off, const int b_sq, const int act)
{
	const int p0 = (int)get_global_id(0) * DM, q0 = (int)get_global_id(1) * DN, b = (int)get_global_id(2);
	__global const T *s = S + s_off + b * s_sb;
	__global const T *w = W + w_off + b * w_sb;
	__global T *d = D + d_off + b * d_sb;
	__global const T *sr[DM], *wr[DN]; /* rows of S and W, clamped to valid rows */
	VT acc[DM][DN];
	T res[DM][DN];
	int k = 0;

	if (p0 >= P || q0 >= Q)
		return;
#pragma unroll
	for (int i = 0; i < DM; i++)
		sr[i] = s + min(p0 + i, P - 1) * lds;
#pragma unroll
	for (int j = 0; j < DN; j++)
		wr[j] = w + min(q0 + j, Q - 1) * ldw;
#pragma unroll
	for (int i = 0; i < DM; i++)
#pragma unroll
		for (int j = 0; j < DN; j++)
			acc[i][j] = (VT)0;
	for (; k + VW <= K; k += VW) {
		VT a[DM], bw[DN];
#pragma unroll
		for (int i = 0; i < DM; i++)
			a[i] = VLOAD(0, sr[i] + k);
#pragma unroll
		for (int j = 0; j < DN; j++)
			bw[j] = VLOAD(0, wr[j] + k);
#pragma unroll
		for (int i = 0; i < DM; i++)
#pragma unroll
			for (int j = 0; j < DN; j++)
				acc[i][j] = MAD(a[i], bw[j], acc[i][j]);
	}
#pragma unroll
	for (int i = 0; i < DM; i++)
#pragma unroll
		for (int j = 0; j < DN; j++)
			res[i][j] = hsum(acc[i][j]);
	for (; k < K; k++) {
#pragma unroll
		for (int i = 0; i < DM; i++)
#pragma unroll
			for (int j = 0; j < DN; j++)
				res[i][j] = MAD(sr[i][k], wr[j][k], res[i][j]);
	}
	if (bias) {
		for (int j = 0; j < DN && q0 + j < Q; j++) {
			const T bj = bias[b_off + (q0 + j) * b_sq];
			for (int i = 0; i < DM && p0 + i < P; i++) {
				const T u = res[i][j] + bj;
				d[(p0 + i) * d_sp + (q0 + j) * d_sq] = act == 1 ? (u > (T)0 ? u : (T)0) : u;
			}
		}
		return;
	}
	for (int i = 0; i < DM && p0 + i < P; i++)
		for (int j = 0; j < DN && q0 + j < Q; j++)
			STORE1(d, (p0 + i) * d_sp + (q0 + j) * d_sq, res[i][j]);
}

#if CLG_WANT(gemm_dot)
__kernel void gemm_dot(const int P, const int Q, const int K, const T alpha, const T beta,
		       __global const T *S, const int s_off, const int lds, const int s_sb,
		       __global const T *W, const int w_off, const int ldw, const int w_sb,
		       __global T *D, const int d_off, const int d_sp, const int d_sq, const int d_sb)
{
	gemm_dot_tile(P, Q, K, alpha, beta, S, s_off, lds, s_sb, W, w_off, ldw, w_sb, D, d_off, d_sp, d_sq, d_sb,
		      (__global const T *)0, 0, 0, 0);
}
#endif

/* gemm_dot with the linear layer's epilogue (op gemm_bias_act): D (P, Q) = act(S @ W^T + bias (Q)),
 * one batch; act 0 none, 1 relu. */
#if CLG_WANT(gemm_dot_bias_act)
__kernel void gemm_dot_bias_act(const int P, const int Q, const int K,
				__global const T *S, const int s_off, const int lds,
				__global const T *W, const int w_off, const int ldw,
				__global T *D, const int d_off, const int d_sp,
				__global const T *bias, const int b_off, const int b_sq, const int act)
{
	gemm_dot_tile(P, Q, K, (T)1, (T)0, S, s_off, lds, 0, W, w_off, ldw, 0, D, d_off, d_sp, 1, 0, bias, b_off,
		      b_sq, act);
}
#endif

/* Packs X (K, Q), at any strides, into panels of W columns for gemm_op: panel t holds
 * X(k, t * W + c) at t * K * W + k * W + c, zeros past column Q; one work-item per (panel, k).
 * V is packed with W = TN; S with W = TM, as S^T (its rows become the columns). */
#if CLG_WANT(gemm_pack)
__kernel void gemm_pack(const int K, const int Q, const int W, __global const T *X, const int x_off,
			const int x_sk, const int x_sq, const int x_sb, __global T *O, const int o_sb)
{
	const int t = (int)get_global_id(0), k = (int)get_global_id(1), b = (int)get_global_id(2), q0 = t * W;
	__global const T *x = X + x_off + b * x_sb + k * x_sk;
	__global T *o = O + b * o_sb + (t * K + k) * W;

	if (k >= K)
		return;
	if (W == TN && q0 + TN <= Q && x_sq == 1) {
#pragma unroll
		for (int j = 0; j < NV; j++)
			VSTORE(VLOAD(j, x + q0), j, o);
	} else {
		for (int c = 0; c < W; c++)
			o[c] = q0 + c < Q ? x[(q0 + c) * x_sq] : (T)0;
	}
}
#endif

/* GPU shape (CLG_KFAM_GEMM = gpu) of the own GEMM, for GPUs where CLBlast is not used (not
 * trusted, or CLGRAD_GEMM=own): the kernels above run one work-item per group there.
 *   gemm_tiles  D (M, N) = alpha * A (M, K) @ B (K, N) + beta * D, A, B and D at any strides
 * Work-groups of TS x TS work-items (-DTS, default 16) compute a TT x TT tile of D, TT = TS * WPT
 * (-DWPT, default 4): work-item (x, y) the elements (m0 + y + i * TS, n0 + x + j * TS), i, j < WPT, so
 * adjacent lanes write adjacent columns of D. Per step of KT (16) along k the group stages the
 * TT x KT slice of A and the KT x TT slice of B in local memory, adjacent lanes loading adjacent
 * elements along k for A and along n for B (coalesced when those strides are 1); each element
 * is read once from global memory and WPT * TS times from local memory. Loads past the edges
 * give 0, so any M, N, K >= 1 works. Dim 2 of the range is batch x ns: split-K, where the host
 * finds too few tiles for the GPU's compute units, gives chunk sp of ns the k range
 * [sp * kc, min(K, (sp + 1) * kc)) and its own slice of D, at d_ss * sp (the host then adds the
 * slices with gemm_split_sum); ns = 1, kc = K is one product. A batch stride of 0 repeats an
 * operand. beta == 0 never reads D. */
#ifndef TS
#define TS 16
#endif
#ifndef WPT
#define WPT 4
#endif
#define KT 16
#define TT (TS * WPT)

#if CLG_WANT(gemm_tiles)
__kernel void gemm_tiles(const int M, const int N, const int K, const T alpha, const T beta,
			 __global const T *restrict A, const int a_off, const int a_sm, const int a_sk, const int a_sb,
			 __global const T *restrict B, const int b_off, const int b_sk, const int b_sn, const int b_sb,
			 __global T *restrict D, const int d_off, const int d_sm, const int d_sb,
			 const int ns, const int kc, const int d_ss)
{
	__local T As[KT][TT + 1], Bs[KT][TT + 1]; /* +1: the strided stores of As hit distinct banks */
	int x = get_local_id(0), y = get_local_id(1), t = y * TS + x, z = get_global_id(2);
	int bt = z / ns, sp = z % ns, kb = sp * kc, ke = min(K, kb + kc);
	int m0 = get_group_id(1) * TT, n0 = get_group_id(0) * TT;
	T acc[WPT][WPT], a[WPT], b[WPT];

	for (int i = 0; i < WPT; i++)
		for (int j = 0; j < WPT; j++)
			acc[i][j] = (T)0;
	A += a_off + bt * a_sb;
	B += b_off + bt * b_sb;
	D += sp * d_ss;
	for (int k0 = kb; k0 < ke; k0 += KT) {
		for (int e = t; e < TT * KT; e += TS * TS) {
			int ak = e % KT, am = e / KT, bn = e % TT, bk = e / TT;
			As[ak][am] = m0 + am < M && k0 + ak < ke ? A[(m0 + am) * a_sm + (k0 + ak) * a_sk] : (T)0;
			Bs[bk][bn] = k0 + bk < ke && n0 + bn < N ? B[(k0 + bk) * b_sk + (n0 + bn) * b_sn] : (T)0;
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int kk = 0; kk < KT; kk++) {
			for (int i = 0; i < WPT; i++) {
				a[i] = As[kk][y + i * TS];
				b[i] = Bs[kk][x + i * TS];
			}
			for (int i = 0; i < WPT; i++)
				for (int j = 0; j < WPT; j++)
					acc[i][j] = MAD(a[i], b[j], acc[i][j]);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	for (int i = 0; i < WPT; i++) {
		int m = m0 + y + i * TS;
		for (int j = 0; j < WPT; j++) {
			int n = n0 + x + j * TS, o = d_off + bt * d_sb + m * d_sm + n;
			if (m < M && n < N)
				D[o] = beta != (T)0 ? alpha * acc[i][j] + beta * D[o] : alpha * acc[i][j];
		}
	}
}
#endif

/* The slices of a split-K gemm_tiles added in order: D (M, N) = alpha * sum_sp P[sp] + beta * D
 * for each of the batch's matrices, P (batch, ns, M, N) contiguous. Work-groups of OT outputs
 * (dim 0, adjacent outputs in adjacent lanes) x LS lanes (dim 1, a power of two): lane l adds
 * slices l, l + LS, ... and the group's tree adds the lanes, so the order is fixed by (ns, LS)
 * and the result does not depend on timing. Expects local memory of OT * LS T. */
#if CLG_WANT(gemm_split_sum)
__kernel void gemm_split_sum(const int M, const int N, const int nbat, const int ns, const T alpha, const T beta,
			     __global const T *restrict P, __global T *restrict D, const int d_off, const int d_sm,
			     const int d_sb, __local T *scratch)
{
	int lx = get_local_id(0), ly = get_local_id(1), ot = get_local_size(0), ls = get_local_size(1);
	int o = get_global_id(0), mn = M * N, bt = o / mn, r = o - bt * mn;
	T acc = (T)0;

	if (o < nbat * mn)
		for (int sp = ly; sp < ns; sp += ls)
			acc += P[(bt * ns + sp) * mn + r];
	scratch[ly * ot + lx] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int h = ls / 2; h > 0; h >>= 1) {
		if (ly < h)
			scratch[ly * ot + lx] += scratch[(ly + h) * ot + lx];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (ly == 0 && o < nbat * mn) {
		int at = d_off + bt * d_sb + (r / N) * d_sm + r % N;
		D[at] = beta != (T)0 ? alpha * scratch[lx] + beta * D[at] : alpha * scratch[lx];
	}
}
#endif
