/* Op-suite cases of the conv family (see tests/test_ops.h): im2col, col2im, max and average pooling
 * and their backward ops, on explicit operands. Geometries mix odd sizes (1, 5, 7, 13), stride 1
 * and 2, padding 0 to 2, dilation 1 and 2, square and rectangular kernels, a kernel as large as
 * the padded input, and (for max pooling) a window of padding only. Each runs contiguous and at
 * an offset with padded rows; the smaller ones fit Oclgrind's --small (<= 256 elements each). The
 * last geometries take the OpenCL backend's special paths (non-overlapping max-pool windows, 2x2,
 * 1x1). Max pooling and its backward also run on every geometry with channel-major operands
 * ((C, N, H, W) storage: planes at uneven strides, as clg_conv2d_relu_max_pool2d uses them), and
 * im2col and col2im with cols stored as conv's (R, N * L) matrix. */
#include "test_ops.h"

#include <string.h>

typedef struct {
	int64_t N, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW;
} geo;

static const geo geos[] = {
	{1, 1, 5, 5, 3, 3, 1, 1, 0, 0, 1, 1},     /* small, no padding */
	{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1},     /* one pixel */
	{1, 2, 5, 5, 5, 5, 1, 1, 2, 2, 1, 1},     /* kernel = input, padding 2 */
	{2, 2, 7, 5, 2, 3, 2, 1, 0, 1, 1, 1},     /* rectangular kernel, mixed strides */
	{1, 1, 7, 7, 3, 3, 2, 2, 1, 1, 2, 2},     /* dilation 2, stride 2 */
	{1, 2, 5, 7, 2, 2, 1, 1, 1, 0, 1, 1},     /* overlapping 2x2 windows */
	{2, 3, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1},     /* the common 3x3 "same" conv */
	{2, 3, 5, 14, 3, 3, 1, 1, 1, 1, 1, 1},    /* the same, 14 wide: col2im's CPU rows, 8 wide and a step back */
	{1, 2, 4, 8, 3, 3, 1, 1, 1, 1, 1, 1},     /* 8 wide: one step of 8 */
	{1, 2, 5, 19, 3, 3, 1, 1, 2, 0, 1, 2},    /* 19 wide, dilation 2 along w, no padding along w */
	{1, 1, 2, 9, 1, 3, 1, 1, 0, 1, 1, 1},     /* 9 wide, 1x3: col2im's CPU rows within --small (Oclgrind) */
	{1, 2, 13, 13, 3, 3, 2, 2, 1, 1, 1, 1},   /* stride 2 */
	{1, 3, 13, 7, 3, 2, 1, 2, 2, 1, 2, 1},    /* dilation 2 in h only */
	{2, 4, 13, 13, 5, 5, 2, 2, 2, 2, 2, 2},   /* larger: 5x5, dilation 2 */
	/* the OpenCL backend's special paths: windows that do not overlap (max_pool2d_backward
	 * scatters), 2x2 written out, rows of pixels in no window, 1x1 (a permutation) */
	{1, 3, 7, 9, 2, 2, 2, 2, 0, 0, 1, 1},     /* 2x2 stride 2, odd sizes: last row and column in no window */
	{2, 2, 6, 8, 2, 2, 2, 2, 0, 0, 1, 1},     /* 2x2 stride 2 tiling the image (one work-item per window) */
	{3, 1, 4, 6, 2, 2, 2, 2, 0, 0, 1, 1},     /* the same with one channel */
	{2, 3, 10, 18, 2, 2, 2, 2, 0, 0, 1, 1},   /* tiling, 9 windows a row: the CPU rows' 4-wide steps and a step back */
	{1, 2, 4, 16, 2, 2, 2, 2, 0, 0, 1, 1},    /* tiling, 8 windows a row: 4-wide steps only */
	{1, 3, 6, 14, 2, 2, 2, 2, 0, 0, 1, 1},    /* tiling, 7 windows a row (the CNN's 14x14): a step back */
	{1, 2, 8, 7, 3, 3, 3, 3, 1, 1, 1, 1},     /* 3x3 stride 3, padding 1 */
	{1, 2, 9, 8, 2, 2, 3, 3, 0, 1, 1, 1},     /* 2x2 stride 3: gaps between windows */
	{1, 2, 7, 7, 2, 2, 3, 3, 1, 0, 2, 1},     /* dilation 2 within stride 3 */
	{2, 5, 3, 4, 1, 1, 1, 1, 0, 0, 1, 1},     /* 1x1: the NCHW <-> (C, N*H*W) permutation */
};

static int ceil_mode; /* make()'s pools take the ceil_mode output size (f[0] = 1) */

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d)
{
	int64_t span = in + 2 * p - d * (k - 1) - 1, o = span / s + 1;
	/* PyTorch's ceil_mode: ceil, less one where the last window would start in the right padding */
	if (ceil_mode && span % s)
		o++;
	if (ceil_mode && (o - 1) * s >= in + p)
		o--;
	return o;
}

static void set4(op_case *c, int k, int64_t a, int64_t b, int64_t d2, int64_t d3)
{
	c->op_nd[k] = 4;
	c->op_shape[k][0] = a, c->op_shape[k][1] = b, c->op_shape[k][2] = d2, c->op_shape[k][3] = d3;
}

static void set3(op_case *c, int k, int64_t a, int64_t b, int64_t d2)
{
	c->op_nd[k] = 3;
	c->op_shape[k][0] = a, c->op_shape[k][1] = b, c->op_shape[k][2] = d2;
}

/* One case of op on geometry g (operand 0 is the dst). */
static op_case make(clg_op op, const geo *g, enum layout l)
{
	int64_t OH = out_size(g->H, g->KH, g->SH, g->PH, g->DH), OW = out_size(g->W, g->KW, g->SW, g->PW, g->DW);
	int64_t R = g->C * g->KH * g->KW;
	op_case c = {.op = op, .layout = l, .lo = -2, .hi = 2,
		     .i = {g->KH, g->KW, g->SH, g->SW, g->PH, g->PW, g->DH, g->DW}};

	c.nops = 1 + clg_op_nsrc(op);
	switch (op) {
	case CLG_OP_IM2COL:
		set3(&c, 0, g->N, R, OH * OW);
		set4(&c, 1, g->N, g->C, g->H, g->W);
		break;
	case CLG_OP_COL2IM:
		set4(&c, 0, g->N, g->C, g->H, g->W);
		set3(&c, 1, g->N, R, OH * OW);
		break;
	case CLG_OP_MAXPOOL2D:
	case CLG_OP_AVGPOOL2D:
		set4(&c, 0, g->N, g->C, OH, OW);
		set4(&c, 1, g->N, g->C, g->H, g->W);
		break;
	case CLG_OP_MAXPOOL2D_BACKWARD:
		set4(&c, 0, g->N, g->C, g->H, g->W);
		set4(&c, 1, g->N, g->C, OH, OW);
		set4(&c, 2, g->N, g->C, g->H, g->W);
		break;
	default: /* AVGPOOL2D_BACKWARD */
		set4(&c, 0, g->N, g->C, g->H, g->W);
		set4(&c, 1, g->N, g->C, OH, OW);
		break;
	}
	return c;
}

void ops_cases_conv(op_case_adder add)
{
	static const clg_op ops[] = {CLG_OP_IM2COL, CLG_OP_COL2IM, CLG_OP_MAXPOOL2D, CLG_OP_MAXPOOL2D_BACKWARD,
				     CLG_OP_AVGPOOL2D, CLG_OP_AVGPOOL2D_BACKWARD};
	/* a window of padding only: max pooling gives -inf there (and no gradient) */
	static const enum layout layouts[] = {L_CONTIG, L_OFFSET};
	static const geo pad_only = {1, 2, 3, 3, 1, 1, 2, 2, 1, 1, 1, 1};

	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (size_t s = 0; s < sizeof(geos) / sizeof(geos[0]); s++) {
			for (int l = 0; l < 2; l++) {
				op_case c = make(ops[o], &geos[s], layouts[l]);
				add(c);
				if (ops[o] == CLG_OP_MAXPOOL2D || ops[o] == CLG_OP_MAXPOOL2D_BACKWARD) {
					/* ties (first max wins), and NaN (counted as the largest) */
					op_case t = c;
					t.quant = 1;
					t.lo = -1, t.hi = 1;
					add(t);
					if (s % 3 == 0) {
						op_case nn = c;
						nn.nan_rate = 0.05f;
						add(nn);
					}
				}
			}
		}
		if (ops[o] == CLG_OP_MAXPOOL2D || ops[o] == CLG_OP_MAXPOOL2D_BACKWARD) {
			/* every operand channel-major, as clg_conv2d_relu_max_pool2d reads and writes the
			 * conv's output: the 2x2 kernels' planes at uneven strides, and the general kernels */
			for (size_t s = 0; s < sizeof(geos) / sizeof(geos[0]); s++) {
				op_case c = make(ops[o], &geos[s], s % 2 ? L_OFFSET : L_CONTIG);
				c.chan_major = 1;
				c.tag = "channel-major";
				add(c);
			}
		}
		if (ops[o] == CLG_OP_IM2COL || ops[o] == CLG_OP_COL2IM) {
			/* cols as conv builds it, (R, N * L): images closer together than rows, which
			 * the CPU kernels walk images first; and the image channel-major too */
			for (size_t s = 0; s < sizeof(geos) / sizeof(geos[0]); s++) {
				op_case c = make(ops[o], &geos[s], s % 2 ? L_OFFSET : L_CONTIG);
				c.chan_major = s % 3 ? 2 : 3;
				c.tag = s % 3 ? "cols row-major" : "cols row-major, image channel-major";
				add(c);
			}
		}
		add(make(ops[o], &pad_only, L_CONTIG));
		add(make(ops[o], &pad_only, L_OFFSET));
		if (ops[o] == CLG_OP_IM2COL || ops[o] == CLG_OP_COL2IM)
			continue;
		/* PyTorch's pooling modes (f[0] ceil_mode; f[1] the average's divisor: 1 the taps in the
		 * padded input, 2 those in the input): the last windows overhang the input (odd sizes,
		 * strides 2 and 3), padded windows divide by fewer taps */
		for (size_t s = 0; s < sizeof(geos) / sizeof(geos[0]); s++) {
			int avg = ops[o] == CLG_OP_AVGPOOL2D || ops[o] == CLG_OP_AVGPOOL2D_BACKWARD;
			const geo *g = &geos[s];
			int64_t fh = out_size(g->H, g->KH, g->SH, g->PH, g->DH), fw = out_size(g->W, g->KW, g->SW, g->PW, g->DW);
			int differs;
			ceil_mode = 1;
			differs = out_size(g->H, g->KH, g->SH, g->PH, g->DH) != fh || out_size(g->W, g->KW, g->SW, g->PW, g->DW) != fw;
			ceil_mode = 0;
			for (int mode = 0; mode < (avg ? 3 : 1); mode++) {
				op_case c;
				/* only the geometries a mode changes: a window overhanging, or padding */
				if (mode != 2 ? !differs : !(g->PH || g->PW))
					continue;
				ceil_mode = mode != 2;
				c = make(ops[o], &geos[s], s % 2 ? L_OFFSET : L_CONTIG);
				c.f[0] = ceil_mode;
				c.f[1] = avg ? (mode == 0 ? 1 : 2) : 0;
				c.tag = !avg ? "ceil_mode" : mode == 0 ? "ceil_mode, padding counted" : ceil_mode ? "ceil_mode, padding not counted" : "padding not counted";
				ceil_mode = 0;
				add(c);
			}
		}
	}
}
