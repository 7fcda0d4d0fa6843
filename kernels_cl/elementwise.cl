/* Elementwise ops on strided views, forward and backward side by side.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when T or ACC is double;
 * -DUSE_HALF_STORAGE for T=half (with ACC=float: half is storage only, see LOAD / STORE in prelude.cl).
 * Each op NAME has three kernels with one signature (NAME_c, NAME_2d, NAME_s: see EW_KERNELS_N):
 * contiguous, two dims, any strides, described by geom (stride 0 is how broadcasting arrives).
 * Operand 0 is the destination, 1..3 the sources a, b, c (as many as the op has: a unary op binds
 * only a), read as x, y, z in EXPR; p0 and p1 are the op's float parameters (f[0], f[1]).
 * Semantics: backend/clg_ops.def.
 * -DINT_ONLY (with -DT=int -DACC=int) builds only the kernels that move values (copy, fill), for
 * int32 tensors.
 * -DCAST_SRC=1|2|3|4 builds only cast_c / cast_s, whose source is float, half, bfloat16 (ushort)
 * or double, converted to the dst's T.
 * -DUSE_NATIVE_HALF (with T=half, on devices with cl_khr_fp16 only): the ops compute in half
 * (ACC = half, plain half loads and stores); their parameters p0, p1 stay float. */
#ifdef USE_NATIVE_HALF
#undef ACC
#define ACC half
#undef LOAD
#undef STORE
#define LOAD(p, i) ((p)[i])
#ifdef CLG_TEST_HALF_WRONG /* a planted error for the float16 self-test's test (cl_program.c) */
#define STORE(p, i, v) ((p)[i] = (half)(v) + (half)0.25f)
#else
#define STORE(p, i, v) ((p)[i] = (half)(v))
#endif
#define PARAM float
#else
#define PARAM ACC
#endif
#ifdef USE_FP64
#define K(x) x
#else
#define K(x) x##f
#endif

#define NOPS 4
typedef struct {
	int nd;             /* dims after the host merged the mergeable ones */
	int n;              /* elements */
	int shape[MAXD];
	int off[NOPS];      /* element offsets of dst, src0, src1, src2 */
	int st[NOPS][MAXD]; /* element strides of dst, src0, src1, src2 */
} geom;

/* Kernels bind the op's sources only: SRC1 (a), SRC2 (a, b) or SRC3 (a, b, c), read as x, y, z;
 * sources of type ST read with LD (T and LOAD, but for cast). Each op has three kernels:
 *   NAME_c   every operand contiguous
 *   NAME_2d  two dims after merging (the host's choice): work-item (column j, row r) of a 2-D
 *            range, each operand at off + r * st[0] + j * st[1]: no division, which covers the
 *            broadcasts (N, C) op (C) (strides (0, 1)) and (N, C) op (N, 1) (strides (1, 0)) and
 *            transposed copies
 *   NAME_s   any dims: a division and a remainder per dim per element
 * The kernel names come pasted (a NAME passed on unpasted would be macro-expanded first: some
 * runtimes define exp, log as macros). */
#define EW_ARGS1(ST) __global const ST *a
#define EW_ARGS2(ST) __global const ST *a, __global const ST *b
#define EW_ARGS3(ST) __global const ST *a, __global const ST *b, __global const ST *c
#define EW_READ1_C(LD, i) ACC x = LD(a, g.off[1] + (i));
#define EW_READ2_C(LD, i) EW_READ1_C(LD, i) ACC y = LD(b, g.off[2] + (i));
#define EW_READ3_C(LD, i) EW_READ2_C(LD, i) ACC z = LD(c, g.off[3] + (i));
#define EW_AT(k, r, j) (g.off[k] + (r) * g.st[k][0] + (j) * g.st[k][1])
#define EW_READ1_2(LD, r, j) ACC x = LD(a, EW_AT(1, r, j));
#define EW_READ2_2(LD, r, j) EW_READ1_2(LD, r, j) ACC y = LD(b, EW_AT(2, r, j));
#define EW_READ3_2(LD, r, j) EW_READ2_2(LD, r, j) ACC z = LD(c, EW_AT(3, r, j));
/* the strided walk: o[k] the offset of operand k (0: dst) for element i, k <= NS */
#define EW_WALK(NS)                                                                               \
	int o[4] = {g.off[0], g.off[1], g.off[2], g.off[3]};                                      \
	for (int dim = g.nd - 1; dim > 0; dim--) {                                                \
		int q = i % g.shape[dim];                                                         \
		i /= g.shape[dim];                                                                \
		for (int k = 0; k <= (NS); k++)                                                   \
			o[k] += q * g.st[k][dim];                                                 \
	}                                                                                         \
	/* the outermost dim needs no division: i < n leaves i < shape[0] (strides 0 when nd == 0) */ \
	for (int k = 0; k <= (NS); k++)                                                           \
		o[k] += i * g.st[k][0];
#define EW_READ1_S(LD) ACC x = LD(a, o[1]);
#define EW_READ2_S(LD) EW_READ1_S(LD) ACC y = LD(b, o[2]);
#define EW_READ3_S(LD) EW_READ2_S(LD) ACC z = LD(c, o[3]);

#define EW_KERNELS_N(NS, NAME_C, NAME_2D, NAME_S, EXPR, ST, LD)                                   \
CLG_IF(NAME_C, __kernel void NAME_C(const geom g, __global T *d, EW_ARGS##NS(ST), const PARAM p0, const PARAM p1) \
{                                                                                                 \
	int i = get_global_id(0);                                                                 \
	if (i >= g.n)                                                                             \
		return;                                                                           \
	EW_READ##NS##_C(LD, i)                                                                    \
	STORE(d, g.off[0] + i, EXPR);                                                             \
})                                                                                                \
CLG_IF(NAME_2D, __kernel void NAME_2D(const geom g, __global T *d, EW_ARGS##NS(ST), const PARAM p0, const PARAM p1) \
{                                                                                                 \
	int j = get_global_id(0), r = get_global_id(1);                                           \
	if (j >= g.shape[1] || r >= g.shape[0])                                                   \
		return;                                                                           \
	EW_READ##NS##_2(LD, r, j)                                                                 \
	STORE(d, EW_AT(0, r, j), EXPR);                                                           \
})                                                                                                \
CLG_IF(NAME_S, __kernel void NAME_S(const geom g, __global T *d, EW_ARGS##NS(ST), const PARAM p0, const PARAM p1) \
{                                                                                                 \
	int i = get_global_id(0);                                                                 \
	if (i >= g.n)                                                                             \
		return;                                                                           \
	EW_WALK(NS)                                                                               \
	EW_READ##NS##_S(LD)                                                                       \
	STORE(d, o[0], EXPR);                                                                     \
})
#define EW1(NAME, EXPR) EW_KERNELS_N(1, NAME##_c, NAME##_2d, NAME##_s, EXPR, T, LOAD)
#define EW2(NAME, EXPR) EW_KERNELS_N(2, NAME##_c, NAME##_2d, NAME##_s, EXPR, T, LOAD)
#define EW3(NAME, EXPR) EW_KERNELS_N(3, NAME##_c, NAME##_2d, NAME##_s, EXPR, T, LOAD)

#define ZERO ((ACC)0)
#define ONE ((ACC)1)

#ifdef CAST_SRC
/* the conversion: read in the source's type, written through STORE (rounding to nearest even) */
#if CAST_SRC == 2
#define CAST_LOAD(p, i) vload_half((size_t)(i), (p))
EW_KERNELS_N(1, cast_c, cast_2d, cast_s, x, half, CAST_LOAD)
#elif CAST_SRC == 3
#define CAST_LOAD(p, i) as_float((uint)(p)[i] << 16)
EW_KERNELS_N(1, cast_c, cast_2d, cast_s, x, ushort, CAST_LOAD)
#elif CAST_SRC == 4
#define CAST_LOAD(p, i) ((p)[i])
EW_KERNELS_N(1, cast_c, cast_2d, cast_s, x, double, CAST_LOAD)
#else
#define CAST_LOAD(p, i) ((p)[i])
EW_KERNELS_N(1, cast_c, cast_2d, cast_s, x, float, CAST_LOAD)
#endif
#else /* the program of the other ops */

#ifndef INT_ONLY
ACC sigmoid_(ACC x) { return ONE / (ONE + exp(-x)); }
/* Phi(x), the standard normal CDF (NCDF, prelude.cl: precise in the negative tail) */
ACC normal_cdf_(ACC x)
{
	NTYPE pdf;
	return (ACC)NCDF(x, pdf);
}
/* d gelu / dx = Phi(x) + x * phi(x), phi the standard normal density (one exp for both) */
ACC gelu_grad_(ACC x)
{
	NTYPE pdf, cdf = NCDF(x, pdf);
	return (ACC)(cdf + (NTYPE)x * pdf);
}
/* GELU's tanh form (GPT-2's): 0.5 x (1 + tanh(u)) = x sigmoid(2 u), u = sqrt(2 / pi) (x + 0.044715 x^3)
 * (the sigmoid keeps its precision in the negative tail, where 1 + tanh(u) cancels); derivative
 * s + x s (1 - s) 2 u', u' = sqrt(2 / pi) (1 + 3 0.044715 x^2), s = sigmoid(2 u). In NTYPE (float,
 * or double): native-half programs would round the cubic and the products to half each. */
#define GELU_TANH_2K ((NTYPE)1.5957691216057308) /* 2 sqrt(2 / pi) */
ACC gelu_tanh_(ACC xa)
{
	NTYPE x = (NTYPE)xa;
	return (ACC)(x / ((NTYPE)1 + exp(-GELU_TANH_2K * (x + (NTYPE)0.044715 * x * x * x))));
}
ACC gelu_tanh_grad_(ACC xa)
{
	NTYPE x = (NTYPE)xa, s = (NTYPE)1 / ((NTYPE)1 + exp(-GELU_TANH_2K * (x + (NTYPE)0.044715 * x * x * x)));
	return (ACC)(s + x * s * ((NTYPE)1 - s) * GELU_TANH_2K * ((NTYPE)1 + (NTYPE)0.134145 * x * x));
}
/* min(max(x, lo), hi) with NaN passing through */
ACC clamp_(ACC x, ACC lo, ACC hi)
{
	ACC t = x < lo ? lo : x;
	return t > hi ? hi : t;
}
/* clamp with tensor bounds: NaN in x or in a bound gives NaN (torch.clamp) */
ACC clamp3_(ACC x, ACC lo, ACC hi)
{
	ACC t = isnan(lo) ? lo : x < lo ? lo : x;
	return isnan(hi) ? hi : t > hi ? hi : t;
}

#endif

EW1(copy, x)

#ifndef INT_ONLY
EW2(add, x + y)
EW2(sub, x - y)
EW2(mul, x * y)
EW2(div, x / y)
EW1(neg, -x)
EW1(exp, exp(x))
EW1(log, log(x))
EW1(tanh, tanh(x))
EW1(relu, x > ZERO ? x : ZERO)
EW1(scale, p0 * x + p1)
EW2(pow, pow(x, y))
EW1(abs, fabs(x))
EW1(sqrt, sqrt(x))
EW1(rsqrt, rsqrt(x))
EW1(sigmoid, sigmoid_(x))
EW1(leaky_relu, x > ZERO ? x : p0 * x)
EW1(gelu, x * normal_cdf_(x))
EW1(silu, x * sigmoid_(x))
EW1(gelu_tanh, gelu_tanh_(x))
EW1(clamp, clamp_(x, p0, p1))
/* comparisons give 1 or 0 (a scalar relational is an int 1 or 0) */
EW2(eq, x == y)
EW2(lt, x < y)
EW2(le, x <= y)
EW2(gt, x > y)
EW2(ge, x >= y)
EW3(where, x != ZERO ? y : z)
EW3(clamp_tensor, clamp3_(x, y, z))

/* backward helpers: x is the upstream gradient g, y the forward input (or output, where noted) */
/* d(relu)/dx: the upstream gradient x passes where the forward input y was positive */
EW2(relu_backward, y > ZERO ? x : ZERO)
/* y = tanh output. Computed in half (USE_NATIVE_HALF), 1 - y * y cancels near |y| = 1: y * y's
 * rounding (up to 2^-12) against 1 - y^2 down to 2^-10 left results 12% off, on every element of a
 * broadcast y (op suite, --seed 2, Intel's runtime: 3.4e-5 > 1e-5); (1 - y)(1 + y) has the factor
 * that cancels exact (Sterbenz) and the other within half an ulp. Float and double keep the
 * plain form (its error there is far below their thresholds; the figures pinned on it stay). */
#ifdef USE_NATIVE_HALF
EW2(tanh_backward, x * ((ONE - y) * (ONE + y)))
#else
EW2(tanh_backward, x * (ONE - y * y))
#endif
EW2(sigmoid_backward, x * y * (ONE - y))       /* y = sigmoid output */
EW2(gelu_backward, x * gelu_grad_(y))
EW2(silu_backward, x * sigmoid_(y) * (ONE + y * (ONE - sigmoid_(y))))
EW2(gelu_tanh_backward, x * gelu_tanh_grad_(y))
EW2(leaky_relu_backward, y > ZERO ? x : p0 * x)
EW2(clamp_backward, y >= p0 && y <= p1 ? x : ZERO)
EW2(abs_backward, y > ZERO ? x : y < ZERO ? -x : ZERO)
#endif

/* fill reads nothing: no source (no read of uninitialised memory). */
#if CLG_WANT(fill_s)
__kernel void fill_s(const geom g, __global T *d, const PARAM p0, const PARAM p1)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	EW_WALK(0)
	STORE(d, o[0], p0);
}
#endif

#if CLG_WANT(fill_2d)
__kernel void fill_2d(const geom g, __global T *d, const PARAM p0, const PARAM p1)
{
	int j = get_global_id(0), r = get_global_id(1);
	if (j < g.shape[1] && r < g.shape[0])
		STORE(d, EW_AT(0, r, j), p0);
}
#endif

#if CLG_WANT(fill_c)
__kernel void fill_c(const geom g, __global T *d, const PARAM p0, const PARAM p1)
{
	int i = get_global_id(0);
	if (i < g.n)
		STORE(d, g.off[0] + i, p0);
}
#endif
#endif /* CAST_SRC */
