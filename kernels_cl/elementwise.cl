/* Elementwise ops on strided views, forward and backward side by side.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when T or ACC is double.
 * Each op NAME has two kernels with one signature:
 *   NAME_c  every operand contiguous (the common case: plain indexing)
 *   NAME_s  any strides, described by geom (stride 0 is how broadcasting arrives)
 * Operand 0 is the destination, 1 and 2 the sources (unused sources alias an operand). */
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define MAXD 6
typedef struct {
	int nd;             /* dims after the host merged the mergeable ones */
	int n;              /* elements */
	int shape[MAXD];
	int off[3];         /* element offsets of dst, src0, src1 */
	int st[3][MAXD];    /* element strides of dst, src0, src1 */
} geom;

#define EW_KERNELS(NAME, EXPR)                                                                   \
__kernel void NAME##_c(const geom g, __global T *d, __global const T *a, __global const T *b,   \
		       const ACC p0, const ACC p1)                                              \
{                                                                                                \
	int i = get_global_id(0);                                                                \
	if (i >= g.n)                                                                            \
		return;                                                                          \
	ACC x = a[g.off[1] + i], y = b[g.off[2] + i];                                            \
	d[g.off[0] + i] = (T)(EXPR);                                                             \
}                                                                                                \
__kernel void NAME##_s(const geom g, __global T *d, __global const T *a, __global const T *b,   \
		       const ACC p0, const ACC p1)                                              \
{                                                                                                \
	int i = get_global_id(0);                                                                \
	if (i >= g.n)                                                                            \
		return;                                                                          \
	int o0 = g.off[0], o1 = g.off[1], o2 = g.off[2];                                         \
	for (int dim = g.nd - 1; dim >= 0; dim--) {                                              \
		int c = i % g.shape[dim];                                                        \
		i /= g.shape[dim];                                                               \
		o0 += c * g.st[0][dim];                                                          \
		o1 += c * g.st[1][dim];                                                          \
		o2 += c * g.st[2][dim];                                                          \
	}                                                                                        \
	ACC x = a[o1], y = b[o2];                                                                \
	d[o0] = (T)(EXPR);                                                                       \
}

#define ZERO ((ACC)0)

EW_KERNELS(copy, x)
EW_KERNELS(add, x + y)
EW_KERNELS(sub, x - y)
EW_KERNELS(mul, x * y)
EW_KERNELS(div, x / y)
EW_KERNELS(neg, -x)
EW_KERNELS(exp, exp(x))
EW_KERNELS(log, log(x))
EW_KERNELS(tanh, tanh(x))
EW_KERNELS(relu, x > ZERO ? x : ZERO)
/* d(relu)/dx: the upstream gradient x passes where the forward input y was positive */
EW_KERNELS(relu_backward, y > ZERO ? x : ZERO)
EW_KERNELS(scale, p0 * x + p1)

/* fill reads nothing, so it has its own kernel (no read of uninitialised memory). */
__kernel void fill_s(const geom g, __global T *d, __global const T *a, __global const T *b,
		     const ACC p0, const ACC p1)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int o0 = g.off[0];
	for (int dim = g.nd - 1; dim >= 0; dim--) {
		o0 += (i % g.shape[dim]) * g.st[0][dim];
		i /= g.shape[dim];
	}
	d[o0] = (T)p0;
}

__kernel void fill_c(const geom g, __global T *d, __global const T *a, __global const T *b,
		     const ACC p0, const ACC p1)
{
	int i = get_global_id(0);
	if (i < g.n)
		d[g.off[0] + i] = (T)p0;
}
