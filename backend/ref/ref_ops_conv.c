/* Reference implementations of the conv family, plain loops in double over strided views:
 *   IM2COL               x (N, C, H, W) -> cols (N, C*KH*KW, OH*OW), zeros where the window is in padding
 *   COL2IM               cols -> dx (N, C, H, W), each pixel summing the columns that read it
 *   MAXPOOL2D            x -> (N, C, OH, OW), padding ignored (a window of padding only gives -inf)
 *   MAXPOOL2D_BACKWARD   g (N, C, OH, OW), x -> dx: each window's gradient goes to its argmax
 *   AVGPOOL2D            x -> (N, C, OH, OW): window sum (padding as zeros) / (KH * KW, or the
 *                        window's taps inside the padded input or the input: f[1], clg_ops.def)
 *   AVGPOOL2D_BACKWARD   g -> dx: g / (that divisor) to every element of the window
 * The pools' f[0] = 1 takes the ceil_mode output size (clg_pool_out_size).
 * Row r of cols is (c * KH + kh) * KW + kw, column l is oh * OW + ow; the window of output (oh, ow)
 * reads input (oh * SH - PH + kh * DH, ow * SW - PW + kw * DW). The max of a window is its first
 * largest element, NaN counting as larger than any number (as ARGMAX). The ops that write the image
 * side gather, pixel by pixel, so they overwrite the dst and sum in a fixed order.
 * Also the geometry check shared with the OpenCL backend and the frontend (clg_conv_internal.h). */
#include "ref_internal.h"
#include "../clg_conv_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define load clg_ref_load
#define store clg_ref_store

#define PARAM_MAX 2147483647 /* 2^31 - 1 */

/* ---- geometry (shared) ---- */

int64_t clg_conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil)
{
	if (k < 1 || stride < 1 || dil < 1 || pad < 0 || k > PARAM_MAX || stride > PARAM_MAX || dil > PARAM_MAX ||
	    pad > PARAM_MAX || in < 0 || in > INT64_MAX / 4)
		return -1;
	int64_t span = dil * (k - 1) + 1, padded = in + 2 * pad;
	if (span > padded)
		return -1;
	return (padded - span) / stride + 1;
}

int64_t clg_pool_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil, int ceil_mode)
{
	int64_t o = clg_conv_out_size(in, k, stride, pad, dil);
	if (o < 0 || !ceil_mode)
		return o;
	/* ceil((padded - span) / stride) + 1, where the remainder is not 0 */
	if ((in + 2 * pad - dil * (k - 1) - 1) % stride)
		o++;
	if ((o - 1) * stride >= in + pad) /* the last window would start in the right padding */
		o--;
	return o;
}

/* The divisor of average-pool window (oh, ow): KH * KW, or its taps inside the padded input
 * (avg_div 1) or inside the input (2). */
static double pool_divisor(const clg_conv_geom *g, int64_t oh, int64_t ow)
{
	int64_t nh = 0, nw = 0, lo_h = g->avg_div == 2 ? 0 : -g->PH, hi_h = g->avg_div == 2 ? g->H : g->H + g->PH;
	int64_t lo_w = g->avg_div == 2 ? 0 : -g->PW, hi_w = g->avg_div == 2 ? g->W : g->W + g->PW;
	if (!g->avg_div)
		return (double)g->KH * (double)g->KW;
	for (int64_t kh = 0; kh < g->KH; kh++) {
		int64_t ih = oh * g->SH - g->PH + kh * g->DH;
		nh += ih >= lo_h && ih < hi_h;
	}
	for (int64_t kw = 0; kw < g->KW; kw++) {
		int64_t iw = ow * g->SW - g->PW + kw * g->DW;
		nw += iw >= lo_w && iw < hi_w;
	}
	return (double)(nh * nw);
}

static const char *dims_str(char *buf, size_t len, int n, const int64_t *d)
{
	size_t p = (size_t)snprintf(buf, len, "(");
	for (int k = 0; k < n && p < len; k++)
		p += (size_t)snprintf(buf + p, len - p, k ? ", %lld" : "%lld", (long long)d[k]);
	if (p < len)
		snprintf(buf + p, len - p, ")");
	return buf;
}

static int same_shape(const clg_view *v, int n, const int64_t *d)
{
	if (v->ndim != n)
		return 0;
	for (int k = 0; k < n; k++)
		if (v->shape[k] != d[k])
			return 0;
	return 1;
}

clg_status clg_conv_geometry(clg_backend *be, const clg_op_call *c, clg_conv_geom *g)
{
	const char *op = clg_op_name(c->op), *dev = be->info.name;
	const int64_t *p = c->i;
	int fwd = c->op == CLG_OP_IM2COL || c->op == CLG_OP_MAXPOOL2D || c->op == CLG_OP_AVGPOOL2D;
	int cols = c->op == CLG_OP_IM2COL || c->op == CLG_OP_COL2IM;
	const char *img_role = fwd ? "src0" : "dst", *out_role = fwd ? "dst" : "src0";
	int64_t want[4];
	char s0[128], s1[128];

	memset(g, 0, sizeof(*g));
	g->KH = p[0], g->KW = p[1], g->SH = p[2], g->SW = p[3];
	g->PH = p[4], g->PW = p[5], g->DH = p[6], g->DW = p[7];
	for (int k = 0; k < 8; k++)
		if (p[k] < (k == 4 || k == 5 ? 0 : 1) || p[k] > PARAM_MAX)
			return clg_fail(CLG_ERR_INVALID,
					"op '%s' on device '%s': bad parameters: kernel %lldx%lld, stride %lldx%lld, padding %lldx%lld, dilation %lldx%lld (kernel, stride and dilation at least 1, padding at least 0, all below 2^31)",
					op, dev, (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3],
					(long long)p[4], (long long)p[5], (long long)p[6], (long long)p[7]);
	if (!cols) {
		int avg = c->op == CLG_OP_AVGPOOL2D || c->op == CLG_OP_AVGPOOL2D_BACKWARD;
		if ((c->f[0] != 0 && c->f[0] != 1) || (c->f[1] != 0 && (!avg || (c->f[1] != 1 && c->f[1] != 2))))
			return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': bad pooling mode f[0] = %g (ceil_mode 0 or 1), f[1] = %g (the average's divisor 0, 1 or 2)",
					op, dev, c->f[0], c->f[1]);
		g->ceil_mode = c->f[0] == 1;
		g->avg_div = (int)c->f[1];
	}
	g->img = fwd ? &c->src[0] : &c->dst;
	g->out = fwd ? &c->dst : &c->src[0];
	g->x = c->op == CLG_OP_MAXPOOL2D_BACKWARD ? &c->src[1] : NULL;
	if (g->img->ndim != 4)
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': %s %s must be 4-D (N, C, H, W)", op, dev,
				img_role, clg_shape_str(g->img, s0, sizeof(s0)));
	g->N = g->img->shape[0], g->C = g->img->shape[1], g->H = g->img->shape[2], g->W = g->img->shape[3];
	g->OH = clg_pool_out_size(g->H, g->KH, g->SH, g->PH, g->DH, g->ceil_mode);
	g->OW = clg_pool_out_size(g->W, g->KW, g->SW, g->PW, g->DW, g->ceil_mode);
	if (g->OH < 0 || g->OW < 0)
		return clg_fail(CLG_ERR_SHAPE,
				"op '%s' on device '%s': kernel %lldx%lld with dilation %lldx%lld is larger than the input %s padded by %lldx%lld",
				op, dev, (long long)g->KH, (long long)g->KW, (long long)g->DH, (long long)g->DW,
				clg_shape_str(g->img, s0, sizeof(s0)), (long long)g->PH, (long long)g->PW);
	if (cols) {
		if (g->C > INT64_MAX / (g->KH * g->KW) || g->OH > INT64_MAX / (g->OW ? g->OW : 1))
			return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': the columns of %s overflow 64 bits", op, dev,
					clg_shape_str(g->img, s0, sizeof(s0)));
		want[0] = g->N, want[1] = g->C * g->KH * g->KW, want[2] = g->OH * g->OW;
	} else {
		want[0] = g->N, want[1] = g->C, want[2] = g->OH, want[3] = g->OW;
	}
	if (!same_shape(g->out, cols ? 3 : 4, want))
		return clg_fail(CLG_ERR_SHAPE,
				"op '%s' on device '%s': %s is %s but %s %s with kernel %lldx%lld, stride %lldx%lld, padding %lldx%lld, dilation %lldx%lld needs %s",
				op, dev, out_role, clg_shape_str(g->out, s0, sizeof(s0)), img_role,
				clg_shape_str(g->img, s1, sizeof(s1)), (long long)g->KH, (long long)g->KW, (long long)g->SH,
				(long long)g->SW, (long long)g->PH, (long long)g->PW, (long long)g->DH, (long long)g->DW,
				dims_str((char[128]){0}, 128, cols ? 3 : 4, want));
	if (g->x && !same_shape(g->x, 4, g->img->shape))
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': src1 (the input x) is %s but dst is %s", op, dev,
				clg_shape_str(g->x, s0, sizeof(s0)), clg_shape_str(g->img, s1, sizeof(s1)));
	return CLG_OK;
}

/* ---- the ops ---- */

static int64_t at4(const clg_view *v, int64_t a, int64_t b, int64_t c, int64_t d)
{
	return v->offset + a * v->stride[0] + b * v->stride[1] + c * v->stride[2] + d * v->stride[3];
}

static int64_t at3(const clg_view *v, int64_t a, int64_t b, int64_t c)
{
	return v->offset + a * v->stride[0] + b * v->stride[1] + c * v->stride[2];
}

/* The output position along one axis whose window holds input i at kernel tap k, or -1. */
static int64_t window_of(int64_t i, int64_t k, int64_t stride, int64_t pad, int64_t dil, int64_t nout)
{
	int64_t t = i + pad - k * dil;
	if (t < 0 || t % stride)
		return -1;
	t /= stride;
	return t < nout ? t : -1;
}

/* Tap (kh * KW + kw) of the max of window (oh, ow) of plane (n, c) of x, -1 when the window holds
 * no input element; *best gets its value. NaN counts as larger than any number; first on ties. */
static int64_t window_argmax(const clg_conv_geom *g, const clg_view *x, int64_t n, int64_t c, int64_t oh, int64_t ow,
			     double *best)
{
	int64_t arg = -1;
	double m = -INFINITY;
	for (int64_t kh = 0; kh < g->KH; kh++) {
		int64_t ih = oh * g->SH - g->PH + kh * g->DH;
		if (ih < 0 || ih >= g->H)
			continue;
		for (int64_t kw = 0; kw < g->KW; kw++) {
			int64_t iw = ow * g->SW - g->PW + kw * g->DW;
			if (iw < 0 || iw >= g->W)
				continue;
			double v = load(x, at4(x, n, c, ih, iw));
			if (arg < 0 || (!isnan(m) && (v > m || isnan(v)))) {
				m = v;
				arg = kh * g->KW + kw;
			}
		}
	}
	*best = m;
	return arg;
}

static clg_status ref_conv(clg_backend *be, const clg_op_call *call)
{
	clg_conv_geom g;
	clg_status st = clg_conv_geometry(be, call, &g);
	const clg_view *img = g.img, *out = g.out;
	double inv = 1.0 / ((double)g.KH * (double)g.KW);

	if (st)
		return st;
	for (int64_t n = 0; n < g.N; n++) {
		for (int64_t c = 0; c < g.C; c++) {
			switch (call->op) {
			case CLG_OP_IM2COL:
				for (int64_t kh = 0; kh < g.KH; kh++)
					for (int64_t kw = 0; kw < g.KW; kw++)
						for (int64_t oh = 0; oh < g.OH; oh++)
							for (int64_t ow = 0; ow < g.OW; ow++) {
								int64_t ih = oh * g.SH - g.PH + kh * g.DH;
								int64_t iw = ow * g.SW - g.PW + kw * g.DW;
								double v = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W
										   ? load(img, at4(img, n, c, ih, iw)) : 0.0;
								store(out, at3(out, n, (c * g.KH + kh) * g.KW + kw, oh * g.OW + ow), v);
							}
				break;
			case CLG_OP_MAXPOOL2D:
			case CLG_OP_AVGPOOL2D:
				for (int64_t oh = 0; oh < g.OH; oh++)
					for (int64_t ow = 0; ow < g.OW; ow++) {
						double v = 0;
						if (call->op == CLG_OP_MAXPOOL2D) {
							window_argmax(&g, img, n, c, oh, ow, &v);
						} else {
							for (int64_t kh = 0; kh < g.KH; kh++)
								for (int64_t kw = 0; kw < g.KW; kw++) {
									int64_t ih = oh * g.SH - g.PH + kh * g.DH;
									int64_t iw = ow * g.SW - g.PW + kw * g.DW;
									if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W)
										v += load(img, at4(img, n, c, ih, iw));
								}
							v = g.avg_div ? v / pool_divisor(&g, oh, ow) : v * inv;
						}
						store(out, at4(out, n, c, oh, ow), v);
					}
				break;
			default: /* COL2IM and the backward pools: each pixel gathers from the windows holding it */
				for (int64_t h = 0; h < g.H; h++)
					for (int64_t w = 0; w < g.W; w++) {
						double acc = 0, best;
						for (int64_t kh = 0; kh < g.KH; kh++) {
							int64_t oh = window_of(h, kh, g.SH, g.PH, g.DH, g.OH);
							if (oh < 0)
								continue;
							for (int64_t kw = 0; kw < g.KW; kw++) {
								int64_t ow = window_of(w, kw, g.SW, g.PW, g.DW, g.OW);
								if (ow < 0)
									continue;
								if (call->op == CLG_OP_COL2IM)
									acc += load(out, at3(out, n, (c * g.KH + kh) * g.KW + kw,
											     oh * g.OW + ow));
								else if (call->op == CLG_OP_AVGPOOL2D_BACKWARD && g.avg_div)
									acc += load(out, at4(out, n, c, oh, ow)) / pool_divisor(&g, oh, ow);
								else if (call->op == CLG_OP_AVGPOOL2D_BACKWARD ||
									 window_argmax(&g, g.x, n, c, oh, ow, &best) == kh * g.KW + kw)
									acc += load(out, at4(out, n, c, oh, ow));
							}
						}
						if (call->op == CLG_OP_AVGPOOL2D_BACKWARD && !g.avg_div)
							acc *= inv;
						store(img, at4(img, n, c, h, w), acc);
					}
				break;
			}
		}
	}
	return CLG_OK;
}

void clg_ref_register_conv(clg_backend *be)
{
	be->ops[CLG_OP_IM2COL] = ref_conv;
	be->ops[CLG_OP_COL2IM] = ref_conv;
	be->ops[CLG_OP_MAXPOOL2D] = ref_conv;
	be->ops[CLG_OP_MAXPOOL2D_BACKWARD] = ref_conv;
	be->ops[CLG_OP_AVGPOOL2D] = ref_conv;
	be->ops[CLG_OP_AVGPOOL2D_BACKWARD] = ref_conv;
}
