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
 *   - for the ROW ops (softmax.cl, norm.cl, reduce.cl, fused.cl's cross-entropy; programs built
 *     with ACC): the row geometry (backend/opencl/cl_ops_row.c fills it), a row's offsets, a
 *     work-group sum (and two at once) and max (GPU shape: a
 *     tree in local memory, or sub-group reductions under -DUSE_SUBGROUPS, which the host passes
 *     only to devices that report cl_intel_subgroups, or cl_khr_subgroups with OpenCL C 2.0),
 *     and VLOAD4 / ACC4 (CPU shape: four consecutive elements as one ACC vector).;
 *   - CLG_WANT(name), CLG_IF(name, ...): which kernels a build holds. Every kernel of every file is
 *     guarded by `#if CLG_WANT(name)` ... `#endif` (a kernel a macro makes: CLG_IF(name, kernel)).
 *     A plain build holds them all; with -DCLG_SUBSET only those named by -DCLG_K_<name>=1: the
 *     host builds a program of the one kernel it needs (CLGRAD_KERNEL_SUBSETS, cl_program.c) on
 *     drivers that compile every kernel of a program when it is built. */
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

/* XLOAD / XSTORE: LOAD / STORE, except that with -DUSE_NATIVE_HALF (cl_khr_fp16) a float16 element
 * is read and written as a half directly (the cast rounds to nearest even, as vstore_half_rte);
 * the kernels using them (conv.cl, fused.cl) compute in ACC = float either way. */
#if defined(USE_NATIVE_HALF) && defined(USE_HALF_STORAGE)
#define XLOAD(p, i) ((ACC)(p)[i])
#define XSTORE(p, i, v) ((p)[i] = (T)(v))
#else
#define XLOAD(p, i) LOAD(p, i)
#define XSTORE(p, i, v) STORE(p, i, v)
#endif

#define MAXD 6

/* CLG_WANT(name): 1 when the build holds kernel name (see the header). The test for "defined as 1"
 * needs no #ifdef, so it works inside a macro's expansion: CLG_PLACEHOLDER_ pasted to 1 gives
 * "0," and shifts the 1 into CLG_SECOND's place; pasted to an undefined CLG_K_<name> it is one
 * unknown token, and the 0 stays second. */
#define CLG_CAT_(a, b) a##b
#define CLG_CAT(a, b) CLG_CAT_(a, b)
#define CLG_PLACEHOLDER_1 0,
#define CLG_SECOND_(a, b, ...) b
#define CLG_SECOND(...) CLG_SECOND_(__VA_ARGS__)
#define CLG_IS_ONE_(x) CLG_SECOND(x 1, 0, 0)
#define CLG_IS_ONE(x) CLG_IS_ONE_(CLG_PLACEHOLDER_##x)
#define CLG_WANT_(x) CLG_IS_ONE(x) /* x expanded: 1 where -DCLG_K_<name>=1 */
#ifdef CLG_SUBSET
#define CLG_WANT(name) CLG_WANT_(CLG_K_##name)
#else
#define CLG_WANT(name) 1
#endif
/* CLG_IF(name, kernel...): the kernel's text when the build holds it, else nothing (variadic:
 * the kernel's commas) */
#define CLG_IF_1(...) __VA_ARGS__
#define CLG_IF_0(...)
#define CLG_IF(name, ...) CLG_CAT(CLG_IF_, CLG_WANT(name))(__VA_ARGS__)

/* EXP1(x), EXP4(x), EXP16(x): exp of an ACC, ACC4, ACC16, for GELU (NCDF below) and the
 * CPU-shaped row kernels. In float a polynomial instead of the builtin, which PoCL runs element
 * by element (7-8 GB/s over an elementwise exp): exp(x) = 2^n 2^f, n = x log2(e) rounded, found by
 * one fma adding 1.5 * 2^23 + 127, whose low bits then hold n + 127, the float exponent of 2^n
 * (shifted into place; PoCL ran rint and convert_int16 element by element, 1.5x slower), and
 * f = x log2(e) - n in [-1/2, 1/2] by a second fma, from the exact product. 2^f: a degree-5
 * polynomial fitted for relative error (9e-8) with 1 as its constant, so exp(0) is 1. Under 2.3 ulp
 * for |x| < 1, under 20 ulp out to +-88 (log2(e)'s rounding), where rounding t = x log2(e) first,
 * then a degree-7 Taylor polynomial (until 2026-11-26: two operations and two fmas more) gave 64.
 * x is clamped to [-127 ln 2, 128 ln 2]: 0 below (results under 2^-126 flush to 0), inf above; NaN
 * stays NaN (the clamps compare, and a NaN compares false). EXP16N(x) for x <= 0 (softmax's
 * x - max): the same values without the upper clamp. Double programs keep the builtin. */
#if !defined(INT_ONLY) && !defined(CAST_SRC)
#ifdef USE_FP64
#define EXP1(x) exp(x)
#define EXP4(x) exp(x)
#define EXP16(x) exp(x)
#define EXP16N(x) exp(x)
#else
/* fma() where the device fuses in hardware (-DUSE_FMA: the host's probe of CL_FP_FMA): PoCL's mad()
 * stays a multiply and an add, seven more of the exp's operations; Intel's runtime fuses mad() itself */
#ifdef USE_FMA
#define CLG_FMADD(a, b, c) fma(a, b, c)
#else
#define CLG_FMADD(a, b, c) mad(a, b, c)
#endif
#define CLG_EXP_DEF(name, type, itype, HI)                                                         \
	type name(type x)                                                                          \
	{                                                                                          \
		type k, n, f, p;                                                                   \
		x = select(x, (type)-88.0296919f, isless(x, (type)-88.0296919f)); /* -127 ln 2 */  \
		if (HI)                                                                            \
			x = select(x, (type)88.7228391f, isgreater(x, (type)88.7228391f));          \
		k = CLG_FMADD(x, 1.44269504088896341f, 12583039.0f); /* 1.5 * 2^23 + 127 */        \
		n = k - 12583039.0f;                                                               \
		f = CLG_FMADD(x, 1.44269504088896341f, -n);                                        \
		p = CLG_FMADD(f, 1.32647005375474691e-03f, 9.67150181531906128e-03f);              \
		p = CLG_FMADD(p, f, 5.55073358118534088e-02f);                                     \
		p = CLG_FMADD(p, f, 2.40222424268722534e-01f);                                     \
		p = CLG_FMADD(p, f, 6.93147003650665283e-01f);                                     \
		p = CLG_FMADD(p, f, 1.0f);                                                         \
		return p * as_##type(as_##itype(k) << 23);                                         \
	}
CLG_EXP_DEF(clg_exp1, float, int, 1)
CLG_EXP_DEF(clg_exp4, float4, int4, 1)
CLG_EXP_DEF(clg_exp16, float16, int16, 1)
CLG_EXP_DEF(clg_exp16n, float16, int16, 0)
#define EXP1(x) clg_exp1(x)
#define EXP4(x) clg_exp4(x)
#define EXP16(x) clg_exp16(x)
#define EXP16N(x) clg_exp16n(x)
#endif
#endif

/* LOG1(x): log of an ACC, for the CPU-shaped log-softmax's one log a row (the cross-entropy keeps the
 * builtin: its loss feeds training, whose figures the tests pin). In float not the builtin, which PoCL ran at about 30 ns a call: as
 * much as the sixty-four exps of a (4096, 64) row. x = 2^e * u, u in [sqrt(1/2), sqrt(2)), and
 * log(u) = 2 atanh(z), z = (u - 1) / (u + 1), |z| < 0.172, by its series to z^9 (truncation below
 * 1e-9); ln 2 in two parts so e * ln 2 adds no rounding. Zero, subnormals, negatives, inf and NaN
 * go to the builtin. Double programs keep the builtin. */
#if !defined(INT_ONLY) && !defined(CAST_SRC)
#ifdef USE_FP64
#define LOG1(x) log(x)
#else
float clg_log1(float x)
{
	int i = as_int(x), e;
	float u, z, z2, p;

	if (!(x >= FLT_MIN && x <= FLT_MAX))
		return log(x);
	e = ((i >> 23) & 0xff) - 127;
	u = as_float((i & 0x007fffff) | 0x3f800000); /* [1, 2) */
	if (u > 1.41421356f) {
		u *= 0.5f;
		e++;
	}
	z = (u - 1.0f) / (u + 1.0f);
	z2 = z * z;
	p = mad(z2, 1.0f / 9.0f, 1.0f / 7.0f);
	p = mad(p, z2, 1.0f / 5.0f);
	p = mad(p, z2, 1.0f / 3.0f);
	p = mad(p, z2, 1.0f);
	return mad((float)e, 0.693145751953125f, mad((float)e, 1.428606765330187e-6f, 2.0f * z * p));
}
#define LOG1(x) clg_log1(x)
#endif
#endif

/* NCDF(u, pdf), NCDF4, NCDF16 for GELU (elementwise.cl, fused.cl, gemm.cl): Phi(u), the standard
 * normal CDF, of an NTYPE, NTYPE4, NTYPE16, with the density phi(u) stored in pdf (a variable of the
 * same type). In float, not the builtins: PoCL's erfc ran about 150 times slower than its exp (gelu
 * over 2M floats: 364 ms, tanh 3.5 ms, exp 2.0 ms). Both share one exp, e = exp(-u^2 / 2):
 * phi = e / sqrt(2 pi), and for z = |u| / sqrt 2, erfc(z) = e t Q(t), t = 1 / (1 + z / 2), Q a
 * degree-10 polynomial fitted (weighted least squares toward minimax, relative error below 1.1e-8
 * in exact arithmetic over t in [0, 1], i.e. every z >= 0) to erfc(z) exp(z^2) / t; then
 * Phi(u) = erfc(z) / 2 for u < 0 and 1 - erfc(z) / 2 otherwise, so the small tail keeps its relative
 * precision. GELU's backward, Phi + u phi, had taken two exps. Double programs keep the builtins. */
#if !defined(INT_ONLY) && !defined(CAST_SRC)
#ifdef USE_FP64
#define NTYPE double
#define CLG_NCDF_DEF(name, type)                                                                   \
	type name(type u, type *pdf)                                                               \
	{                                                                                          \
		*pdf = exp(-0.5 * u * u) * 0.39894228040143267794;                                  \
		return 0.5 * erfc(-u * 0.70710678118654752440);                                      \
	}
CLG_NCDF_DEF(clg_ncdf, double)
CLG_NCDF_DEF(clg_ncdf4, double4)
CLG_NCDF_DEF(clg_ncdf16, double16)
#else
#define NTYPE float
#define CLG_NCDF_DEF(name, type, expfn)                                                            \
	type name(type u, type *pdf)                                                               \
	{                                                                                          \
		type t = 1.0f / mad(fabs(u), 0.35355339059327376f, 1.0f), e = expfn(-0.5f * u * u), q; \
		q = mad(t, 4.2352593617437660e-2f, -2.3085765729264150e-1f);                         \
		q = mad(q, t, 4.8617889122801310e-1f);                                               \
		q = mad(q, t, -4.4697750311822790e-1f);                                              \
		q = mad(q, t, 1.2708951623873140e-1f);                                               \
		q = mad(q, t, -5.7232506734342990e-2f);                                              \
		q = mad(q, t, 9.3000591869630790e-2f);                                               \
		q = mad(q, t, 1.7537682979411650e-1f);                                               \
		q = mad(q, t, 2.4688058624384274e-1f);                                               \
		q = mad(q, t, 2.8209385268548780e-1f);                                               \
		q = mad(q, t, 2.8209479479678230e-1f);                                               \
		*pdf = e * 0.39894228040143267794f;                                                  \
		q *= 0.5f * t * e; /* erfc(|u| / sqrt 2) / 2 = Phi(-|u|) */                           \
		return select(1.0f - q, q, isless(u, (type)0.0f));                                   \
	}
CLG_NCDF_DEF(clg_ncdf, float, clg_exp1)
CLG_NCDF_DEF(clg_ncdf4, float4, clg_exp4)
CLG_NCDF_DEF(clg_ncdf16, float16, clg_exp16)
#endif
#define NCDF(u, pdf) clg_ncdf((NTYPE)(u), &(pdf))
#define NCDF4(u, pdf) clg_ncdf4(u, &(pdf))
#define NCDF16(u, pdf) clg_ncdf16(u, &(pdf))
#endif

#if defined(ACC) && !defined(INT_ONLY) /* not for int32 copies: fmax(int, int) is ambiguous */
#if defined(USE_SUBGROUPS) && defined(cl_intel_subgroups)
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#elif defined(USE_SUBGROUPS) && defined(cl_khr_subgroups)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif

#define CLG_CAT_(a, b) a##b
#define CLG_CAT(a, b) CLG_CAT_(a, b)
#define ACC4 CLG_CAT(ACC, 4)
/* VLOAD4(p, i): elements i..i+3 of p as ACC4 (p + i needs only the element's alignment) */
#if defined(USE_HALF_STORAGE)
#define VLOAD4(p, i) vload_half4(0, (p) + (i))
#elif defined(USE_BF16_STORAGE)
#define VLOAD4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#else
#define VLOAD4(p, i) vload4(0, (p) + (i))
#endif
/* VSTORE4(p, i, v): ACC4 v into elements i..i+3 of p, rounded as STORE rounds */
#if defined(USE_HALF_STORAGE)
#define VSTORE4(p, i, v) vstore_half4_rte((v), 0, (p) + (i))
#elif defined(USE_BF16_STORAGE)
#define VSTORE4(p, i, v) do { ACC4 v4_ = (v); STORE(p, (i), v4_.s0); STORE(p, (i) + 1, v4_.s1); \
	STORE(p, (i) + 2, v4_.s2); STORE(p, (i) + 3, v4_.s3); } while (0)
#else
#define VSTORE4(p, i, v) vstore4((v), 0, (p) + (i))
#endif
#define HSUM4(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#define HMAX4(v) fmax(fmax((v).s0, (v).s1), fmax((v).s2, (v).s3))

/* Sixteen consecutive elements as one ACC16 (CPU-shaped row kernels: one AVX-512 register, or
 * two AVX2 ones, per load; four-wide loads left PoCL and Intel's runtime 3-6x below a copy). */
#define ACC16 CLG_CAT(ACC, 16)
#if defined(USE_HALF_STORAGE)
#define VLOAD16(p, i) vload_half16(0, (p) + (i))
#define VSTORE16(p, i, v) vstore_half16_rte((v), 0, (p) + (i))
#elif defined(USE_BF16_STORAGE)
#define VLOAD16(p, i) as_float16(convert_uint16(vload16(0, (p) + (i))) << 16)
#define VSTORE16(p, i, v) do { ACC16 v16_ = (v); VSTORE4(p, (i), v16_.s0123); VSTORE4(p, (i) + 4, v16_.s4567); \
	VSTORE4(p, (i) + 8, v16_.s89ab); VSTORE4(p, (i) + 12, v16_.scdef); } while (0)
#elif defined(USE_PACKED_V16)
/* CPU devices (-DUSE_PACKED_V16 from the host): through a packed struct, one unaligned 64-byte load
 * or store; PoCL 3.1 split vstore16 into three stores (16 + 16 + 32 bytes): an elementwise exp of
 * 1 MiB by EXP16 took 38 us that way, 30 through the struct */
typedef struct __attribute__((packed)) {
	ACC16 v;
} clg_packed16;
#define VLOAD16(p, i) (((__global const clg_packed16 *)((p) + (i)))->v)
#define VSTORE16(p, i, x) (((__global clg_packed16 *)((p) + (i)))->v = (x))
#else
#define VLOAD16(p, i) vload16(0, (p) + (i))
#define VSTORE16(p, i, v) vstore16((v), 0, (p) + (i))
#endif
/* On a CPU-shaped kernel written in vectors of type t: tells a compiler that vectorizes across
 * work-items (Intel's CPU runtime) that the kernel is vectorized already. Intel's runtime packed
 * sixteen work-items of gelu_v16, add_layer_norm_cpu and conv.cl's col2im_rows into one, their vector
 * loads and stores into gathers and scatters (its build log: "Kernel ... was successfully
 * vectorized (16)"): 2.4x, 6.5x and 3-5x slower than with the hint. Most kernels with loops over
 * their vectors it leaves alone anyway. conv.cl's im2col, scalar but a loop over a contiguous
 * segment a work-item, takes the hint too (its loop vectorised instead). */
#define CLG_VECTORIZED(t) __attribute__((vec_type_hint(t)))
#define HSUM16(v) (HSUM4((v).s0123 + (v).s4567) + HSUM4((v).s89ab + (v).scdef))
#define HMAX16(v) HMAX4(fmax(fmax((v).s0123, (v).s4567), fmax((v).s89ab, (v).scdef)))

/* Sixteen rows' reductions at once (CPU-shaped kernels taking sixteen short rows a work-item):
 * v[i] holds row i's sixteen partial sums (maxima); the result's lane i is HSUM16(v[i])
 * (HMAX16(v[i])). A tree of fifteen vector operations on pairs of vectors, not sixteen chains of
 * scalar ones; the sums add in HSUM16's order (lanes j and j + 4 of each half, then adjacent
 * pairs, then the halves), so each lane equals HSUM16 of its row to the bit. v is overwritten. */
#define CLG_TREE_EVEN(a, b) ((ACC16)((a).s02468ace, (b).s02468ace))
#define CLG_TREE_ODD(a, b) ((ACC16)((a).s13579bdf, (b).s13579bdf))
ACC16 tree16_sum(ACC16 *v)
{
	for (int i = 0; i < 8; i++) /* lanes: HSUM16's two halves of row 2i, then of row 2i + 1 */
		v[i] = (ACC16)(v[2 * i].s0123, v[2 * i].s89ab, v[2 * i + 1].s0123, v[2 * i + 1].s89ab) +
		       (ACC16)(v[2 * i].s4567, v[2 * i].scdef, v[2 * i + 1].s4567, v[2 * i + 1].scdef);
	for (int n = 8; n > 1; n /= 2)
		for (int i = 0; i < n / 2; i++)
			v[i] = CLG_TREE_EVEN(v[2 * i], v[2 * i + 1]) + CLG_TREE_ODD(v[2 * i], v[2 * i + 1]);
	return v[0];
}
ACC16 tree16_max(ACC16 *v)
{
	for (int n = 16; n > 1; n /= 2)
		for (int i = 0; i < n / 2; i++)
			v[i] = fmax(CLG_TREE_EVEN(v[2 * i], v[2 * i + 1]), CLG_TREE_ODD(v[2 * i], v[2 * i + 1]));
	return v[0];
}

/* The lane-wise maxima of a contiguous row of C elements, C a multiple of 16 (tree16_max's v[i]),
 * in a register (kept in v[i] across the loads, PoCL went through memory: 4-11% of a row kernel).
 * NaN skipped, as fmax. */
ACC16 row_max16(__global const T *x, int o, int C)
{
	ACC16 m = (ACC16)(-INFINITY);
	for (int c = 0; c < C; c += 16) {
		ACC16 v = VLOAD16(x, o + c);
		m = select(m, v, isgreater(v, m));
	}
	return m;
}

typedef struct {
	int nd;          /* leading (row index) dims, after merging */
	int C;           /* row length */
	int shape[MAXD]; /* leading dims */
	int off[3];      /* element offsets of dst, src0, src1 */
	int st[3][MAXD]; /* strides of dst, src0, src1 over the leading dims */
	int cst[3];      /* strides of dst, src0, src1 along the row */
} row_geom;

/* Offsets of row r in each operand. */
void row_offsets_of(const row_geom *g, int r, int *o)
{
	o[0] = g->off[0];
	o[1] = g->off[1];
	o[2] = g->off[2];
	if (g->nd == 1) { /* rows at one stride (the common case): no divisions */
		o[0] += r * g->st[0][0];
		o[1] += r * g->st[1][0];
		o[2] += r * g->st[2][0];
		return;
	}
	for (int dim = g->nd - 1; dim >= 0; dim--) {
		int q = r % g->shape[dim];
		r /= g->shape[dim];
		o[0] += q * g->st[0][dim];
		o[1] += q * g->st[1][dim];
		o[2] += q * g->st[2][dim];
	}
}

/* Offsets of rows r0..r0 + 15 in each operand (o0[i], o1[i], o2[i]: the sixteen-row CPU kernels). */
void row_offsets16(const row_geom *g, int r0, int *o0, int *o1, int *o2)
{
	for (int i = 0; i < 16; i++) {
		int o[3];
		row_offsets_of(g, r0 + i, o);
		o0[i] = o[0];
		o1[i] = o[1];
		o2[i] = o[2];
	}
}

/* Row offsets of this work-group's row (GPU shape: one work-group per row). */
void row_offsets(const row_geom *g, int *o) { row_offsets_of(g, get_group_id(0), o); }

/* Work-group sum of one value per work-item (tree in local memory, power-of-two work-group;
 * with sub-groups: each sub-group reduces in registers, then every work-item adds the few
 * sub-group sums in the same order); every work-item gets the result. */
ACC wg_sum(ACC v, __local ACC *scratch)
{
#ifdef USE_SUBGROUPS
	int n = get_num_sub_groups();
	v = sub_group_reduce_add(v);
	if (get_sub_group_local_id() == 0)
		scratch[get_sub_group_id()] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	v = scratch[0];
	for (int i = 1; i < n; i++)
		v += scratch[i];
	barrier(CLK_LOCAL_MEM_FENCE); /* everyone has read before scratch is reused */
	return v;
#else
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
#endif
}

/* Two sums at once (scratch holds two ACC per work-item): *u and *v are replaced by their sums
 * (with sub-groups: one after the other, each through registers). */
void wg_sum2(ACC *u, ACC *v, __local ACC *scratch)
{
#ifdef USE_SUBGROUPS
	*u = wg_sum(*u, scratch);
	*v = wg_sum(*v, scratch);
#else
	int lid = get_local_id(0), lsz = get_local_size(0);
	scratch[lid] = *u;
	scratch[lsz + lid] = *v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int k = lsz / 2; k > 0; k >>= 1) {
		if (lid < k) {
			scratch[lid] += scratch[lid + k];
			scratch[lsz + lid] += scratch[lsz + lid + k];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	*u = scratch[0];
	*v = scratch[lsz];
	barrier(CLK_LOCAL_MEM_FENCE);
#endif
}

/* Work-group max of one value per work-item (fmax: NaN is skipped here; the sum makes the row NaN). */
ACC wg_max(ACC v, __local ACC *scratch)
{
#ifdef USE_SUBGROUPS
	int n = get_num_sub_groups();
	v = sub_group_reduce_max(v);
	if (get_sub_group_local_id() == 0)
		scratch[get_sub_group_id()] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	v = scratch[0];
	for (int i = 1; i < n; i++)
		v = fmax(v, scratch[i]);
	barrier(CLK_LOCAL_MEM_FENCE);
	return v;
#else
	int lid = get_local_id(0);
	scratch[lid] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int k = get_local_size(0) / 2; k > 0; k >>= 1) {
		if (lid < k)
			scratch[lid] = fmax(scratch[lid], scratch[lid + k]);
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	v = scratch[0];
	barrier(CLK_LOCAL_MEM_FENCE);
	return v;
#endif
}
#endif
