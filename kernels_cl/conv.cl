/* Conv family: im2col / col2im and 2-D max and average pooling, forward and backward side by side.
 *   im2col               d = cols (N, C*KH*KW, OH*OW)   a = x (N, C, H, W)
 *   col2im               d = dx (N, C, H, W)            a = cols
 *   max_pool2d           d = y (N, C, OH, OW)           a = x
 *   max_pool2d_backward  d = dx (N, C, H, W)            a = g (N, C, OH, OW), b = x
 *   avg_pool2d           d = y (N, C, OH, OW)           a = x
 *   avg_pool2d_backward  d = dx (N, C, H, W)            a = g (N, C, OH, OW)
 * Each kernel owns whole rows or planes of its dst (its comment says which), every operand at any
 * strides (cgeom); the 2x2 pooling kernels at the end own one window each. Row r of cols is
 * (c * KH + kh) * KW + kw, column l is oh * OW + ow; output (oh, ow) reads input
 * (oh * SH - PH + kh * DH, ow * SW - PW + kw * DW). The kernels that write the image side gather
 * what each pixel receives, in a fixed order (kh, then kw), or write pixels that receive at most
 * one term, so they need no atomics and give the same bits on every run. The max of a window is
 * its first largest element, NaN counting as larger than any number; a window of padding only
 * gives -inf. Average pooling counts padding as zeros
 * and divides by KH * KW, or by each window's taps inside the padded input or the input (avg_div).
 * The host sizes OH and OW (ceil_mode among them); the kernels follow them. Semantics: backend/clg_ops.def, reference: backend/ref/ref_ops_conv.c.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when either is double.
 * Elements go through XLOAD / XSTORE (prelude.cl), so the pooling ops take float16 and bfloat16
 * storage (ACC float; native half loads and stores under -DUSE_NATIVE_HALF).
 * The host makes an unused source (b) alias a, so every pointer is a valid buffer. */

typedef struct {
	int N, C, H, W, OH, OW;
	int KH, KW, SH, SW, PH, PW, DH, DW;
	int n;          /* work-items of the 1-D kernels (rows, segments or planes, as each says) */
	int off[3];     /* element offsets of d, a, b */
	int st[3][4];   /* element strides of d, a, b (a cols operand uses the first three) */
	int avg_div;    /* average pooling's divisor: 0 KH * KW, 1 a window's taps in the padded input, 2 in the input */
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

/* Plane p's image *n and channel *c of N x C, planes taken in memory order: images first where
 * they lie closer together than channels (strides sn < sc: the conv's (C, N*H*W) GEMM layout),
 * channels first otherwise (NCHW). Neighbouring work-items then touch neighbouring memory: walked
 * the other way, the GEMM layout's channel rows, hundreds of KiB apart, give each work-item a new
 * page and more streams than a CPU's prefetchers follow. */
void plane_of(int p, int N, int C, int sn, int sc, int *n, int *c)
{
	if (sn < sc) {
		*n = p % N;
		*c = p / N;
	} else {
		*c = p % C;
		*n = p / C;
	}
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
			ACC v = XLOAD(x, at(g, k, n, c, ih, iw));
			if (arg < 0 || (!isnan(m) && (v > m || isnan(v)))) {
				m = v;
				arg = kh * g->KW + kw;
			}
		}
	}
	*best = m;
	return arg;
}

/* The divisor of average-pool window (oh, ow) when avg_div is 1 or 2: its taps inside the padded
 * input or inside the input (PyTorch's ceil_mode windows and count_include_pad=False). */
ACC pool_divisor(const cgeom *g, int oh, int ow)
{
	int in = g->avg_div == 2, nh = 0, nw = 0;
	for (int kh = 0; kh < g->KH; kh++) {
		int ih = oh * g->SH - g->PH + kh * g->DH;
		nh += ih >= (in ? 0 : -g->PH) && ih < (in ? g->H : g->H + g->PH);
	}
	for (int kw = 0; kw < g->KW; kw++) {
		int iw = ow * g->SW - g->PW + kw * g->DW;
		nw += iw >= (in ? 0 : -g->PW) && iw < (in ? g->W : g->W + g->PW);
	}
	return (ACC)(nh * nw);
}

/* Work is split by rows, not by elements: a work-item owns a whole row (or segment) of its dst and
 * walks it with additions only, so the integer divisions that split a work-item's index into
 * (n, c, ...) happen once per row instead of once per element (on CPU devices they dominated). */

/* im2col_px, the GPU shape (CLG_KFAM_CONV = gpu) of im2col: work-item (l, i) writes element l of
 * segment i, so adjacent lanes write adjacent columns of cols (coalesced where its stride along l
 * is 1) and every launch has N * C * KH * KW * OH * OW work-items; the index divisions are per
 * element, cheap on GPUs. */
#if CLG_WANT(im2col_px)
__kernel void im2col_px(const cgeom g, __global T *restrict d, __global const T *restrict a, __global const T *b)
{
	int l = get_global_id(0), i = get_global_id(1), L = g.OH * g.OW;
	if (l >= L || i >= g.n)
		return;
	int kw = i % g.KW, t = i / g.KW;
	int kh = t % g.KH;
	t /= g.KH;
	int c = t % g.C, n = t / g.C, oh = l / g.OW, ow = l - oh * g.OW;
	int ih = oh * g.SH - g.PH + kh * g.DH, iw = ow * g.SW - g.PW + kw * g.DW;
	int r = (c * g.KH + kh) * g.KW + kw;
	XSTORE(d, at(&g, 0, n, r, l, 0), ih >= 0 && ih < g.H && iw >= 0 && iw < g.W ? XLOAD(a, at(&g, 1, n, c, ih, iw)) : (ACC)0);
}
#endif

/* im2col: work-item i owns the segment of cols for image n and row r = (c, kh, kw): its OH * OW
 * values. Along each output row, columns [lo, hi) read inside the image and the rest is padding.
 * The hint keeps Intel's runtime from packing sixteen work-items into one (each element then a
 * gather and a scatter): it vectorises the unit-stride loop instead, 2.7-2.9 -> 1.6 ms for the
 * CNN's conv2 im2col (128, 288, 196) a step; PoCL ignores it. */
#if CLG_WANT(im2col)
__kernel CLG_VECTORIZED(float16) void im2col(const cgeom g, __global T *restrict d, __global const T *restrict a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	/* i over (N, C * KH * KW) in cols' memory order (operand 0, rows r = (c, kh, kw)) */
	int n, r, c, kh, kw, t;
	plane_of(i, g.N, g.C * g.KH * g.KW, g.st[0][0], g.st[0][1], &n, &r);
	kw = r % g.KW, t = r / g.KW;
	kh = t % g.KH;
	c = t / g.KH;
	int x0 = kw * g.DW - g.PW; /* input column of output column 0 */
	int lo = x0 < 0 ? min((-x0 + g.SW - 1) / g.SW, g.OW) : 0;
	int hi = x0 < g.W ? clamp((g.W - 1 - x0) / g.SW + 1, lo, g.OW) : lo;
	int dl = g.st[0][2], dst0 = at(&g, 0, n, r, 0, 0);
	int aw = g.st[1][3] * g.SW, src0 = at(&g, 1, n, c, 0, 0) + x0 * g.st[1][3];

	for (int oh = 0; oh < g.OH; oh++) {
		int ih = oh * g.SH - g.PH + kh * g.DH;
		int o = dst0 + oh * g.OW * dl, ow = 0;
		if (ih >= 0 && ih < g.H) {
			int s = src0 + ih * g.st[1][2];
			for (; ow < lo; ow++)
				XSTORE(d, o + ow * dl, 0);
			if (dl == 1 && aw == 1) /* unit strides: a loop the compiler vectorises */
				for (; ow < hi; ow++)
					XSTORE(d, o + ow, XLOAD(a, s + ow));
			for (; ow < hi; ow++)
				XSTORE(d, o + ow * dl, XLOAD(a, s + ow * aw));
		}
		for (; ow < g.OW; ow++)
			XSTORE(d, o + ow * dl, 0);
	}
}
#endif

/* Forward pooling: work-item i owns output row (n, c, oh). The max needs no argmax: it is NaN when
 * the window holds one, else the largest value (-inf for a window of padding only). */
#if CLG_WANT(max_pool2d)
__kernel void max_pool2d(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int oh = i % g.OH, t = i / g.OH;
	int c = t % g.C, n = t / g.C;
	int sw = g.st[1][3], plane = at(&g, 1, n, c, 0, 0);
	for (int ow = 0; ow < g.OW; ow++) {
		ACC m = (ACC)(-INFINITY);
		for (int kh = 0; kh < g.KH; kh++) {
			int ih = oh * g.SH - g.PH + kh * g.DH;
			if (ih < 0 || ih >= g.H)
				continue;
			int row = plane + ih * g.st[1][2];
			for (int kw = 0; kw < g.KW; kw++) {
				int iw = ow * g.SW - g.PW + kw * g.DW;
				if (iw < 0 || iw >= g.W)
					continue;
				ACC v = XLOAD(a, row + iw * sw);
				m = (v > m) | isnan(v) ? v : m;
			}
		}
		XSTORE(d, at(&g, 0, n, c, oh, ow), m);
	}
}
#endif

#if CLG_WANT(avg_pool2d)
__kernel void avg_pool2d(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int oh = i % g.OH, t = i / g.OH;
	int c = t % g.C, n = t / g.C;
	ACC inv = (ACC)1 / ((ACC)g.KH * (ACC)g.KW);
	for (int ow = 0; ow < g.OW; ow++) {
		ACC s = (ACC)0;
		for (int kh = 0; kh < g.KH; kh++) {
			int ih = oh * g.SH - g.PH + kh * g.DH;
			if (ih < 0 || ih >= g.H)
				continue;
			for (int kw = 0; kw < g.KW; kw++) {
				int iw = ow * g.SW - g.PW + kw * g.DW;
				if (iw >= 0 && iw < g.W)
					s += XLOAD(a, at(&g, 1, n, c, ih, iw));
			}
		}
		XSTORE(d, at(&g, 0, n, c, oh, ow), g.avg_div ? s / pool_divisor(&g, oh, ow) : s * inv);
	}
}
#endif

/* The gather of col2im and the backward pools: MODE 0 col2im, 1 max_pool2d_backward,
 * 2 avg_pool2d_backward. Work-item i owns image row (n, c, y); each pixel sums its terms in the
 * order (kh, kw). The output row of tap kh is found once per row; along the row, stride 1 (the
 * common case) needs no division. */
#define GATHER_KERNEL(NAME, MODE)                                                                \
CLG_IF(NAME, __kernel void NAME(const cgeom g, __global T *d, __global const T *a, __global const T *b)       \
{                                                                                                \
	int i = get_global_id(0);                                                                \
	if (i >= g.n)                                                                            \
		return;                                                                          \
	int y = i % g.H, t = i / g.H;                                                            \
	int c = t % g.C, n = t / g.C;                                                            \
	for (int x = 0; x < g.W; x++) {                                                          \
		ACC acc = (ACC)0, best;                                                          \
		for (int kh = 0; kh < g.KH; kh++) {                                              \
			int oh = window_of(y, kh, g.SH, g.PH, g.DH, g.OH);                       \
			if (oh < 0)                                                              \
				continue;                                                        \
			for (int kw = 0; kw < g.KW; kw++) {                                      \
				int ow = x + g.PW - kw * g.DW;                                   \
				if (g.SW != 1)                                                   \
					ow = window_of(x, kw, g.SW, g.PW, g.DW, g.OW);           \
				if (ow < 0 || ow >= g.OW)                                        \
					continue;                                                \
				if (MODE == 0)                                                   \
					acc += XLOAD(a, at(&g, 1, n, (c * g.KH + kh) * g.KW + kw,\
							   oh * g.OW + ow, 0));                  \
				else if (MODE == 2 && g.avg_div)                                 \
					acc += XLOAD(a, at(&g, 1, n, c, oh, ow)) /               \
					       pool_divisor(&g, oh, ow);                         \
				else if (MODE == 2 ||                                            \
					 window_argmax(&g, b, 2, n, c, oh, ow, &best) ==         \
						 kh * g.KW + kw)                                 \
					acc += XLOAD(a, at(&g, 1, n, c, oh, ow));                \
			}                                                                        \
		}                                                                                \
		if (MODE == 2 && !g.avg_div)                                                     \
			acc *= (ACC)1 / ((ACC)g.KH * (ACC)g.KW);                                 \
		XSTORE(d, at(&g, 0, n, c, y, x), acc);                                           \
	}                                                                                        \
})

GATHER_KERNEL(col2im_pixels, 0)
GATHER_KERNEL(max_pool2d_backward, 1)
GATHER_KERNEL(avg_pool2d_backward, 2)

/* Tap (kh, kw) of col2im on image row y, oh = its output row (window_of >= 0): pixel x reads column
 * ow = x + PW - kw * DW, for ow in [0, OW), so the tap reaches the pixels [*lo, *hi); returns the
 * offset in operand 1 of pixel 0's value (pixel x's is that plus x times the positions' stride). */
int col2im_run(const cgeom *g, int n, int c, int kh, int kw, int oh, int *lo, int *hi)
{
	int x0 = kw * g->DW - g->PW;
	*lo = max(x0, 0);
	*hi = min(x0 + g->OW, g->W);
	return at(g, 1, n, (c * g->KH + kh) * g->KW + kw, oh * g->OW - x0, 0);
}

/* col2im with unit stride along the width (the host picks col2im_pixels otherwise): work-item i
 * owns image row (n, c, y), zeroes it, then adds the columns of each tap (kh, kw) along the row
 * as one contiguous run. Each pixel still receives its terms in the order (kh, kw), starting from
 * 0, as in the gather. The row accumulates in T: the host takes col2im_pixels for 16-bit storage. */
#if CLG_WANT(col2im)
__kernel void col2im(const cgeom g, __global T *restrict d, __global const T *restrict a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int y = i % g.H, t = i / g.H;
	int c = t % g.C, n = t / g.C;
	int dw = g.st[0][3], drow = at(&g, 0, n, c, y, 0), al = g.st[1][2];
	for (int x = 0; x < g.W; x++)
		XSTORE(d, drow + x * dw, 0);
	for (int kh = 0; kh < g.KH; kh++) {
		int oh = window_of(y, kh, g.SH, g.PH, g.DH, g.OH);
		if (oh < 0)
			continue;
		for (int kw = 0; kw < g.KW; kw++) {
			int lo, hi, src = col2im_run(&g, n, c, kh, kw, oh, &lo, &hi);
			if (dw == 1 && al == 1) /* unit strides: a loop the compiler vectorises */
				for (int x = lo; x < hi; x++)
					XSTORE(d, drow + x, XLOAD(d, drow + x) + XLOAD(a, src + x));
			else
				for (int x = lo; x < hi; x++)
					XSTORE(d, drow + x * dw, XLOAD(d, drow + x * dw) + XLOAD(a, src + x * al));
		}
	}
}
#endif

/* The CPU shape (CLG_KFAM_CONV = cpu) of col2im for float32 rows of 8 pixels or more, unit strides
 * along w everywhere (the host checks): work-item i owns image row (n, c, y) and takes it 8 pixels
 * at a time (the last step going back to W - 8), summing the taps in registers in the order
 * (kh, kw) from +0, as col2im does in memory: a tap's run covers the 8 pixels in one load, or
 * lane by lane at the run's ends (adding +0 where it does not reach, which leaves every sum
 * that starts from +0 unchanged). */
/* float32 views of T pointers, for the CPU-shape kernels (launched for float32 only) */
#define PF(p) ((__global float *)(p))
#define PCF(p) ((__global const float *)(p))

#if CLG_WANT(col2im_rows)
__kernel CLG_VECTORIZED(float8) void col2im_rows(const cgeom g, __global T *restrict d, __global const T *restrict a,
						 __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int y = i % g.H, n, c;
	plane_of(i / g.H, g.N, g.C, g.st[1][0], g.st[1][1], &n, &c); /* in cols' order (images, rows) */
	__global float *drow = PF(d) + at(&g, 0, n, c, y, 0);
	for (int x = 0, last = g.W - 8; x <= last; x = x < last && x + 8 > last ? last : x + 8) {
		float8 acc = (float8)(0.0f);
		for (int kh = 0; kh < g.KH; kh++) {
			int oh = window_of(y, kh, g.SH, g.PH, g.DH, g.OH);
			if (oh < 0)
				continue;
			for (int kw = 0; kw < g.KW; kw++) {
				int lo, hi, src = col2im_run(&g, n, c, kh, kw, oh, &lo, &hi);
				if (x >= lo && x + 8 <= hi) {
					acc += vload8(0, PCF(a) + src + x);
				} else {
					float v[8];
					for (int j = 0; j < 8; j++)
						v[j] = x + j >= lo && x + j < hi ? PCF(a)[src + x + j] : 0.0f;
					acc += vload8(0, v);
				}
			}
		}
		vstore8(acc, 0, drow + x);
	}
}
#endif

/* One tap of the scatter's argmax: take v when it is the window's first element, larger than the
 * max so far, or its first NaN; pos follows as v's offset in dx's plane. The max so far is kept
 * as its offset in x (xpos) and read back rather than in a float variable: on PoCL this measured
 * faster than window_argmax (by about 40 %) and than finding the max first and then its position. */
#define SCATTER_TAP(IH, IW)                                                                      \
	if ((IH) >= 0 && (IH) < g.H && (IW) >= 0 && (IW) < g.W) {                                \
		int xo = xplane + (IH) * xh + (IW) * xw;                                         \
		ACC v = XLOAD(b, xo), m = XLOAD(b, xpos);                                        \
		int take = (pos < 0) | ((!isnan(m)) & ((v > m) | isnan(v)));                     \
		xpos = take ? xo : xpos;                                                         \
		pos = take ? (IH) * dh + (IW) * dw : pos;                                        \
	}

/* max_pool2d_backward when windows do not overlap (each spans at most its stride, as the usual
 * 2x2 stride-2 pooling): every pixel lies in at most one window, so the gather's sum has at most
 * one term. Work-item i owns plane (n, c): it zeroes the plane, then writes each window's gradient
 * to that window's max, finding it once per window rather than once per pixel. */
#if CLG_WANT(max_pool2d_backward_scatter)
__kernel void max_pool2d_backward_scatter(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int c = i % g.C, n = i / g.C;
	int dplane = at(&g, 0, n, c, 0, 0), dh = g.st[0][2], dw = g.st[0][3];
	int xplane = at(&g, 2, n, c, 0, 0), xh = g.st[2][2], xw = g.st[2][3];
	int two = g.KH == 2 && g.KW == 2;
	for (int y = 0; y < g.H; y++)
		for (int x = 0; x < g.W; x++)
			XSTORE(d, dplane + y * dh + x * dw, 0);
	for (int oh = 0; oh < g.OH; oh++)
		for (int ow = 0; ow < g.OW; ow++) {
			int pos = -1, xpos = xplane, ih = oh * g.SH - g.PH, iw = ow * g.SW - g.PW;
			if (two) { /* the usual 2x2, written out */
				SCATTER_TAP(ih, iw)
				SCATTER_TAP(ih, iw + g.DW)
				SCATTER_TAP(ih + g.DH, iw)
				SCATTER_TAP(ih + g.DH, iw + g.DW)
			} else {
				for (int kh = 0; kh < g.KH; kh++)
					for (int kw = 0; kw < g.KW; kw++) {
						SCATTER_TAP(ih + kh * g.DH, iw + kw * g.DW)
					}
			}
			/* 0 + g, as the gather's sum (a -0 gradient becomes +0) */
			if (pos >= 0)
				XSTORE(d, dplane + pos, (ACC)0 + XLOAD(a, at(&g, 1, n, c, oh, ow)));
		}
}
#endif

/* max_pool2d_backward for 2x2 windows of stride 2 tiling the image (no padding, no dilation,
 * H = 2 OH, W = 2 OW), with unit strides along w in every operand. One work-item per
 * window over a 3-D range (ow, oh, n * C + c), a work-group per plane: no loop and no division
 * but the plane's, the same across the group, so the compiler runs
 * neighbouring windows in vector lanes. Each window writes its four pixels: g to its first max
 * (NaN counting as larger than any number), 0 to the others. */
#if CLG_WANT(max_pool2d_backward_2x2)
__kernel void max_pool2d_backward_2x2(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int ow = get_global_id(0), oh = get_global_id(1), p = get_global_id(2);
	int n = p / g.C, c = p - n * g.C; /* the same for the whole work-group (a plane) */
	int xh = g.st[2][2], dh = g.st[0][2];
	const int xw = 1, dw = 1; /* unit strides along w (checked by the host): constant for the compiler */
	int xo = at(&g, 2, n, c, 0, 0) + 2 * oh * xh + 2 * ow;
	int dout = at(&g, 0, n, c, 0, 0) + 2 * oh * dh + 2 * ow;
	ACC v0 = XLOAD(b, xo), v1 = XLOAD(b, xo + xw), v2 = XLOAD(b, xo + xh), v3 = XLOAD(b, xo + xh + xw);
	int t1 = (!isnan(v0)) & ((v1 > v0) | isnan(v1));
	ACC m = t1 ? v1 : v0;
	int t2 = (!isnan(m)) & ((v2 > m) | isnan(v2));
	m = t2 ? v2 : m;
	int t3 = (!isnan(m)) & ((v3 > m) | isnan(v3));
	int k = t3 ? 3 : t2 ? 2 : t1;
	/* 0 + g, as the gather's sum (a -0 gradient becomes +0) */
	ACC gz = (ACC)0 + XLOAD(a, at(&g, 1, n, c, 0, 0) + oh * g.st[1][2] + ow);
	XSTORE(d, dout, k == 0 ? gz : (ACC)0);
	XSTORE(d, dout + dw, k == 1 ? gz : (ACC)0);
	XSTORE(d, dout + dh, k == 2 ? gz : (ACC)0);
	XSTORE(d, dout + dh + dw, k == 3 ? gz : (ACC)0);
}
#endif

/* max_pool2d in the geometry of max_pool2d_backward_2x2 (same conditions, same 3-D range): NaN
 * when the window holds one, else its largest value. */
#if CLG_WANT(max_pool2d_2x2)
__kernel void max_pool2d_2x2(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int ow = get_global_id(0), oh = get_global_id(1), p = get_global_id(2);
	int n = p / g.C, c = p - n * g.C; /* the same for the whole work-group (a plane) */
	int xh = g.st[1][2];
	int xo = at(&g, 1, n, c, 0, 0) + 2 * oh * xh + 2 * ow; /* unit stride along w */
	ACC v0 = XLOAD(a, xo), v1 = XLOAD(a, xo + 1), v2 = XLOAD(a, xo + xh), v3 = XLOAD(a, xo + xh + 1);
	ACC m01 = (v1 > v0) | isnan(v1) ? v1 : v0, m23 = (v3 > v2) | isnan(v3) ? v3 : v2;
	ACC m = isnan(m01) ? m01 : (m23 > m01) | isnan(m23) ? m23 : m01;
	XSTORE(d, at(&g, 0, n, c, 0, 0) + oh * g.st[0][2] + ow, m);
}
#endif

/* The CPU shape (CLG_KFAM_CONV = cpu) of the two 2x2 kernels above, float32 only, same conditions:
 * work-item i owns output row (n, c, oh), i.e. input rows 2 oh and 2 oh + 1, and takes four windows
 * at a time as vectors: two 8-wide loads per input row pair, the even and odd lanes being each
 * window's left and right pixels. The 3-D kernels run windows in vector lanes too, but their
 * strided pixel loads and (backward) stores go element by element on CPUs. The tests and the
 * maxima are those of the 2x2 kernels, lane by lane; rows of fewer than 4 windows go one at a time. */

/* The 2x2 max of the selected windows: NaN when one holds a NaN, else the largest value. */
#define MAX2X2(V0, V1, V2, V3, M)                                                                        \
	{                                                                                                \
		M##01 = select(V0, V1, (V1 > V0) | isnan(V1));                                              \
		M##23 = select(V2, V3, (V3 > V2) | isnan(V3));                                              \
		M = select(select(M##01, M##23, (M##23 > M##01) | isnan(M##23)), M##01, isnan(M##01));     \
	}

#if CLG_WANT(max_pool2d_2x2_rows)
__kernel void max_pool2d_2x2_rows(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int oh = i % g.OH, n, c, xh = g.st[1][2];
	plane_of(i / g.OH, g.N, g.C, g.st[1][0], g.st[1][1], &n, &c);
	__global const float *x0 = PCF(a) + at(&g, 1, n, c, 2 * oh, 0), *x1 = x0 + xh;
	__global float *y = PF(d) + at(&g, 0, n, c, oh, 0);
	/* rows of 4 windows or more end with a step back to OW - 4: it redoes a few windows, same values */
	for (int ow = 0, last = g.OW - 4; ow <= last; ow = ow < last && ow + 4 > last ? last : ow + 4) {
		float8 r0 = vload8(0, x0 + 2 * ow), r1 = vload8(0, x1 + 2 * ow);
		float4 m01, m23, m;
		MAX2X2(r0.even, r0.odd, r1.even, r1.odd, m)
		vstore4(m, 0, y + ow);
	}
	for (int ow = 0; g.OW < 4 && ow < g.OW; ow++) {
		float m01, m23, m;
		MAX2X2(x0[2 * ow], x0[2 * ow + 1], x1[2 * ow], x1[2 * ow + 1], m)
		y[ow] = m;
	}
}
#endif

#if CLG_WANT(max_pool2d_backward_2x2_rows)
__kernel void max_pool2d_backward_2x2_rows(const cgeom g, __global T *d, __global const T *a, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.n)
		return;
	int oh = i % g.OH, n, c, xh = g.st[2][2], dh = g.st[0][2];
	plane_of(i / g.OH, g.N, g.C, g.st[2][0], g.st[2][1], &n, &c);
	__global const float *x0 = PCF(b) + at(&g, 2, n, c, 2 * oh, 0), *x1 = x0 + xh;
	__global const float *gr = PCF(a) + at(&g, 1, n, c, oh, 0);
	__global float *d0 = PF(d) + at(&g, 0, n, c, 2 * oh, 0), *d1 = d0 + dh;
	/* as the forward: a last step back to OW - 4 */
	for (int ow = 0, last = g.OW - 4; ow <= last; ow = ow < last && ow + 4 > last ? last : ow + 4) {
		float8 r0 = vload8(0, x0 + 2 * ow), r1 = vload8(0, x1 + 2 * ow);
		float4 v0 = r0.even, v1 = r0.odd, v2 = r1.even, v3 = r1.odd, z = (float4)(0.0f);
		int4 t1 = (!isnan(v0)) & ((v1 > v0) | isnan(v1));
		float4 m = select(v0, v1, t1);
		int4 t2 = (!isnan(m)) & ((v2 > m) | isnan(v2));
		m = select(m, v2, t2);
		int4 t3 = (!isnan(m)) & ((v3 > m) | isnan(v3));
		/* 0 + g, as the gather's sum (a -0 gradient becomes +0) */
		float4 gz = 0.0f + vload4(0, gr + ow);
		float4 g0 = select(z, gz, ~(t1 | t2 | t3)), g1 = select(z, gz, t1 & ~(t2 | t3));
		float4 g2 = select(z, gz, t2 & ~t3), g3 = select(z, gz, t3);
		vstore8(shuffle2(g0, g1, (uint8)(0, 4, 1, 5, 2, 6, 3, 7)), 0, d0 + 2 * ow);
		vstore8(shuffle2(g2, g3, (uint8)(0, 4, 1, 5, 2, 6, 3, 7)), 0, d1 + 2 * ow);
	}
	for (int ow = 0; g.OW < 4 && ow < g.OW; ow++) {
		float v0 = x0[2 * ow], v1 = x0[2 * ow + 1], v2 = x1[2 * ow], v3 = x1[2 * ow + 1];
		int t1 = (!isnan(v0)) & ((v1 > v0) | isnan(v1));
		float m = t1 ? v1 : v0;
		int t2 = (!isnan(m)) & ((v2 > m) | isnan(v2));
		m = t2 ? v2 : m;
		int t3 = (!isnan(m)) & ((v3 > m) | isnan(v3));
		int k = t3 ? 3 : t2 ? 2 : t1;
		float gz = 0.0f + gr[ow];
		d0[2 * ow] = k == 0 ? gz : 0.0f;
		d0[2 * ow + 1] = k == 1 ? gz : 0.0f;
		d1[2 * ow] = k == 2 ? gz : 0.0f;
		d1[2 * ow + 1] = k == 3 ? gz : 0.0f;
	}
}
#endif
