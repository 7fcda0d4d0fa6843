/* Conv family: im2col / col2im and 2-D max and average pooling, forward and backward side by side.
 *   im2col               d = cols (N, C*KH*KW, OH*OW)   a = x (N, C, H, W)
 *   col2im               d = dx (N, C, H, W)            a = cols
 *   max_pool2d           d = y (N, C, OH, OW)           a = x
 *   max_pool2d_backward  d = dx (N, C, H, W)            a = g (N, C, OH, OW), b = x
 *   avg_pool2d           d = y (N, C, OH, OW)           a = x
 *   avg_pool2d_backward  d = dx (N, C, H, W)            a = g (N, C, OH, OW)
 * One work-item per dst element, every operand at any strides (cgeom). Row r of cols is
 * (c * KH + kh) * KW + kw, column l is oh * OW + ow; output (oh, ow) reads input
 * (oh * SH - PH + kh * DH, ow * SW - PW + kw * DW). The kernels that write the image side gather
 * what each pixel receives, in a fixed order (kh, then kw), so they need no atomics and give the
 * same bits on every run. The max of a window is its first largest element, NaN counting as larger
 * than any number; a window of padding only gives -inf. Average pooling counts padding as zeros
 * and divides by KH * KW. Semantics: backend/clg_ops.def, reference: backend/ref/ref_ops_conv.c.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when either is double.
 * The host makes an unused source (b) alias a, so every pointer is a valid buffer. */

typedef struct {
	int N, C, H, W, OH, OW;
	int KH, KW, SH, SW, PH, PW, DH, DW;
	int n;          /* work-items: elements of the dst */
	int off[3];     /* element offsets of d, a, b */
	int st[3][4];   /* element strides of d, a, b (a cols operand uses the first three) */
} cgeom;

/* Element offset of (i0, i1, i2, i3) in operand k; 3-D operands pass i3 = 0. */
int at(const cgeom *g, int k, int i0, int i1, int i2, int i3)
{
	return g->off[k] + i0 * g->st[k][0] + i1 * g->st[k][1] + i2 * g->st[k][2] + i3 * g->st[k][3];
}

/* The output position along one axis whose window holds input i at tap k, or -1. */
int window_of(int i, int k, int stride, int pad, int dil, int nout)
{
	int t = i + pad - k * dil;
	if (t < 0 || t % stride)
		return -1;
	t /= stride;
	return t < nout ? t : -1;
}

/* Tap (kh * KW + kw) of the max of window (oh, ow) of plane (n, c) of operand k, -1 when the
 * window holds no input element; *best gets its value. */
int window_argmax(const cgeom *g, __global const T *x, int k, int n, int c, int oh, int ow, ACC *best)
{
	int arg = -1;
	ACC m = (ACC)(-INFINITY);
	for (int kh = 0; kh < g->KH; kh++) {
		int ih = oh * g->SH - g->PH + kh * g->DH;
		if (ih < 0 || ih >= g->H)
			continue;
		for (int kw = 0; kw < g->KW; kw++) {
			int iw = ow * g->SW - g->PW + kw * g->DW;
			if (iw < 0 || iw >= g->W)
				continue;
			ACC v = x[at(g, k, n, c, ih, iw)];
			if (arg < 0 || (!isnan(m) && (v > m || isnan(v)))) {
				m = v;
				arg = kh * g->KW + kw;
			}
		}
	}
	*best = m;
	return arg;
}

/* Splits work-item i into (n, c, y, x) over a (N, C, Y, X) grid. */
#define SPLIT4(Y, X)                 \
	int x_ = i % (X);            \
	int y_ = (i / (X)) % (Y);    \
	int c_ = (i / (X) / (Y)) % g.C; \
	int n_ = i / (X) / (Y) / g.C;

__kernel void im2col(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	/* i over (N, C, KH, KW, OH, OW) */
	int ow = i % g.OW, t = i / g.OW;
	int oh = t % g.OH;
	t /= g.OH;
	int kw = t % g.KW;
	t /= g.KW;
	int kh = t % g.KH;
	t /= g.KH;
	int c = t % g.C, n = t / g.C;
	int ih = oh * g.SH - g.PH + kh * g.DH, iw = ow * g.SW - g.PW + kw * g.DW;
	T v = (T)0;
	if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W)
		v = a[at(&g, 1, n, c, ih, iw)];
	d[at(&g, 0, n, (c * g.KH + kh) * g.KW + kw, oh * g.OW + ow, 0)] = v;
}

__kernel void max_pool2d(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	SPLIT4(g.OH, g.OW)
	ACC m;
	window_argmax(&g, a, 1, n_, c_, y_, x_, &m);
	d[at(&g, 0, n_, c_, y_, x_)] = (T)m;
}

__kernel void avg_pool2d(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	SPLIT4(g.OH, g.OW)
	ACC s = (ACC)0;
	for (int kh = 0; kh < g.KH; kh++) {
		int ih = y_ * g.SH - g.PH + kh * g.DH;
		if (ih < 0 || ih >= g.H)
			continue;
		for (int kw = 0; kw < g.KW; kw++) {
			int iw = x_ * g.SW - g.PW + kw * g.DW;
			if (iw >= 0 && iw < g.W)
				s += (ACC)a[at(&g, 1, n_, c_, ih, iw)];
		}
	}
	d[at(&g, 0, n_, c_, y_, x_)] = (T)(s * ((ACC)1 / ((ACC)g.KH * (ACC)g.KW)));
}

/* The gather of col2im and the backward pools: MODE 0 col2im, 1 max_pool2d_backward,
 * 2 avg_pool2d_backward. */
#define GATHER_KERNEL(NAME, MODE)                                                                \
__kernel void NAME(const cgeom g, __global T *d, __global const T *a, __global const T *b)       \
{                                                                                                \
	int i = get_global_id(0);                                                                \
	if (i >= g.n)                                                                            \
		return;                                                                          \
	SPLIT4(g.H, g.W)                                                                         \
	ACC acc = (ACC)0, best;                                                                  \
	for (int kh = 0; kh < g.KH; kh++) {                                                      \
		int oh = window_of(y_, kh, g.SH, g.PH, g.DH, g.OH);                              \
		if (oh < 0)                                                                      \
			continue;                                                                \
		for (int kw = 0; kw < g.KW; kw++) {                                              \
			int ow = window_of(x_, kw, g.SW, g.PW, g.DW, g.OW);                      \
			if (ow < 0)                                                              \
				continue;                                                        \
			if (MODE == 0)                                                           \
				acc += (ACC)a[at(&g, 1, n_, (c_ * g.KH + kh) * g.KW + kw,        \
						 oh * g.OW + ow, 0)];                            \
			else if (MODE == 2 ||                                                    \
				 window_argmax(&g, b, 2, n_, c_, oh, ow, &best) == kh * g.KW + kw) \
				acc += (ACC)a[at(&g, 1, n_, c_, oh, ow)];                        \
		}                                                                                \
	}                                                                                        \
	if (MODE == 2)                                                                           \
		acc *= (ACC)1 / ((ACC)g.KH * (ACC)g.KW);                                         \
	d[at(&g, 0, n_, c_, y_, x_)] = (T)acc;                                                   \
}

GATHER_KERNEL(col2im, 0)
GATHER_KERNEL(max_pool2d_backward, 1)
GATHER_KERNEL(avg_pool2d_backward, 2)
