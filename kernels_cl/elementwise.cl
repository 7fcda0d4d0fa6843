/* Elementwise ops on strided views, forward and backward side by side.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when T or ACC is double;
 * -DUSE_HALF_STORAGE for T=half (with ACC=float: half is storage only, see LOAD / STORE in prelude.cl).
 * Each op NAME has two kernels with one signature:
 *   NAME_c  every operand contiguous (the common case: plain indexing)
 *   NAME_s  any strides, described by geom (stride 0 is how broadcasting arrives)
 * Operand 0 is the destination, 1..3 the sources a, b, c, read as x, y, z in EXPR; p0 and p1 are
 * the op's float parameters (f[0], f[1]). The host makes an unused source alias a used operand,
 * so every read stays inside a buffer. Semantics: backend/clg_ops.def.
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
#define STORE(p, i, v) ((p)[i] = (half)(v))
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

/* Sources of type ST read with LD (T and LOAD, but for cast). The kernel names come pasted (a
 * NAME passed on unpasted would be macro-expanded first: some runtimes define exp, log as macros). */
#define EW_KERNELS_SRC(NAME_C, NAME_S, EXPR, ST, LD)                                             \
__kernel void NAME_C(const geom g, __global T *d, __global const ST *a, __global const ST *b, \
		       __global const ST *c, const PARAM p0, const PARAM p1)                    \
{                                                                                                \
	int i = get_global_id(0);                                                                \
	if (i >= g.n)                                                                            \
		return;                                                                          \
	ACC x = LD(a, g.off[1] + i), y = LD(b, g.off[2] + i), z = LD(c, g.off[3] + i);           \
	STORE(d, g.off[0] + i, EXPR);                                                            \
}                                                                                                \
__kernel void NAME_S(const geom g, __global T *d, __global const ST *a, __global const ST *b,   \
		       __global const ST *c, const PARAM p0, const PARAM p1)                    \
{                                                                                                \
	int i = get_global_id(0);                                                                \
	if (i >= g.n)                                                                            \
		return;                                                                          \
	int o0 = g.off[0], o1 = g.off[1], o2 = g.off[2], o3 = g.off[3];                          \
	for (int dim = g.nd - 1; dim > 0; dim--) {                                               \
		int q = i % g.shape[dim];                                                        \
		i /= g.shape[dim];                                                               \
		o0 += q * g.st[0][dim];                                                          \
		o1 += q * g.st[1][dim];                                                          \
		o2 += q * g.st[2][dim];                                                          \
		o3 += q * g.st[3][dim];                                                          \
	}                                                                                        \
	/* the outermost dim needs no division: i < n leaves i < shape[0] (strides 0 when nd == 0) */ \
	o0 += i * g.st[0][0];                                                                    \
	o1 += i * g.st[1][0];                                                                    \
	o2 += i * g.st[2][0];                                                                    \
	o3 += i * g.st[3][0];                                                                    \
	ACC x = LD(a, o1), y = LD(b, o2), z = LD(c, o3);                                         \
	STORE(d, o0, EXPR);                                                                      \
}
#define EW_KERNELS(NAME, EXPR) EW_KERNELS_SRC(NAME##_c, NAME##_s, EXPR, T, LOAD)

#define ZERO ((ACC)0)
#define ONE ((ACC)1)

#ifdef CAST_SRC
/* the conversion: read in the source's type, written through STORE (rounding to nearest even) */
#if CAST_SRC == 2
#define CAST_LOAD(p, i) vload_half((size_t)(i), (p))
EW_KERNELS_SRC(cast_c, cast_s, x, half, CAST_LOAD)
#elif CAST_SRC == 3
#define CAST_LOAD(p, i) as_float((uint)(p)[i] << 16)
EW_KERNELS_SRC(cast_c, cast_s, x, ushort, CAST_LOAD)
#elif CAST_SRC == 4
#define CAST_LOAD(p, i) ((p)[i])
EW_KERNELS_SRC(cast_c, cast_s, x, double, CAST_LOAD)
#else
#define CAST_LOAD(p, i) ((p)[i])
EW_KERNELS_SRC(cast_c, cast_s, x, float, CAST_LOAD)
#endif
#else /* the program of the other ops */

#ifndef INT_ONLY
ACC sigmoid_(ACC x) { return ONE / (ONE + exp(-x)); }
/* Phi(x), the standard normal CDF; erfc keeps its precision for negative x */
ACC normal_cdf_(ACC x) { return K(0.5) * (ACC)ERFC(-x * K(0.70710678118654752440)); }
/* d gelu / dx = Phi(x) + x * phi(x), phi the standard normal density */
ACC gelu_grad_(ACC x) { return normal_cdf_(x) + x * exp(-K(0.5) * x * x) * K(0.39894228040143267794); }
/* min(max(x, lo), hi) with NaN passing through */
ACC clamp_(ACC x, ACC lo, ACC hi)
{
	ACC t = x < lo ? lo : x;
	return t > hi ? hi : t;
}

#endif

EW_KERNELS(copy, x)

#ifndef INT_ONLY
EW_KERNELS(add, x + y)
EW_KERNELS(sub, x - y)
EW_KERNELS(mul, x * y)
EW_KERNELS(div, x / y)
EW_KERNELS(neg, -x)
EW_KERNELS(exp, exp(x))
EW_KERNELS(log, log(x))
EW_KERNELS(tanh, tanh(x))
EW_KERNELS(relu, x > ZERO ? x : ZERO)
EW_KERNELS(scale, p0 * x + p1)
EW_KERNELS(pow, pow(x, y))
EW_KERNELS(abs, fabs(x))
EW_KERNELS(sqrt, sqrt(x))
EW_KERNELS(rsqrt, rsqrt(x))
EW_KERNELS(sigmoid, sigmoid_(x))
EW_KERNELS(leaky_relu, x > ZERO ? x : p0 * x)
EW_KERNELS(gelu, x * normal_cdf_(x))
EW_KERNELS(silu, x * sigmoid_(x))
EW_KERNELS(clamp, clamp_(x, p0, p1))
/* comparisons give 1 or 0 (a scalar relational is an int 1 or 0) */
EW_KERNELS(eq, x == y)
EW_KERNELS(lt, x < y)
EW_KERNELS(le, x <= y)
EW_KERNELS(gt, x > y)
EW_KERNELS(ge, x >= y)
EW_KERNELS(where, x != ZERO ? y : z)

/* backward helpers: x is the upstream gradient g, y the forward input (or output, where noted) */
/* d(relu)/dx: the upstream gradient x passes where the forward input y was positive */
EW_KERNELS(relu_backward, y > ZERO ? x : ZERO)
EW_KERNELS(tanh_backward, x * (ONE - y * y))          /* y = tanh output */
EW_KERNELS(sigmoid_backward, x * y * (ONE - y))       /* y = sigmoid output */
EW_KERNELS(gelu_backward, x * gelu_grad_(y))
EW_KERNELS(silu_backward, x * sigmoid_(y) * (ONE + y * (ONE - sigmoid_(y))))
EW_KERNELS(leaky_relu_backward, y > ZERO ? x : p0 * x)
EW_KERNELS(clamp_backward, y >= p0 && y <= p1 ? x : ZERO)
EW_KERNELS(abs_backward, y > ZERO ? x : y < ZERO ? -x : ZERO)
#endif

/* fill reads nothing, so it has its own kernel (no read of uninitialised memory). */
__kernel void fill_s(const geom g, __global T *d, __global const T *a, __global const T *b,
		     __global const T *c, const PARAM p0, const PARAM p1)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int o0 = g.off[0];
	for (int dim = g.nd - 1; dim >= 0; dim--) {
		o0 += (i % g.shape[dim]) * g.st[0][dim];
		i /= g.shape[dim];
	}
	STORE(d, o0, p0);
}

__kernel void fill_c(const geom g, __global T *d, __global const T *a, __global const T *b,
		     __global const T *c, const PARAM p0, const PARAM p1)
{
	int i = get_global_id(0);
	if (i < g.n)
		STORE(d, g.off[0] + i, p0);
}
#endif /* CAST_SRC */
