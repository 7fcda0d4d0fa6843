/* OpenCL launchers of the conv family (kernels_cl/conv.cl): im2col, col2im, max and average
 * pooling with their backward ops. One work-item per row of the dst (a segment of cols, an output
 * or image row, or an image plane); shapes are checked by clg_conv_geometry (the same check and
 * message as the reference backend). */
#include "cl_internal.h"
#include "../clg_conv_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define CONV_NOPS 3 /* dst and up to two sources */
#define CONV_GROUP 16 /* work-items per group */

/* Must match `cgeom` in kernels_cl/conv.cl. */
typedef struct {
	cl_int N, C, H, W, OH, OW;
	cl_int KH, KW, SH, SW, PH, PW, DH, DW;
	cl_int n;
	cl_int off[CONV_NOPS];
	cl_int st[CONV_NOPS][4];
	cl_int avg_div;
} conv_geom;

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* The 2x2 kernels (max_pool2d_2x2, max_pool2d_backward_2x2) apply: max pooling whose 2x2 windows
 * of stride 2 tile the image, every operand with unit stride along w (planes at any strides: the
 * fused conv -> relu -> pool reads and writes planes in the GEMM's (C, N*H*W) layout). */
static int pool_2x2_tiles(const clg_conv_geom *g, const clg_op_call *c)
{
	if ((c->op != CLG_OP_MAXPOOL2D && c->op != CLG_OP_MAXPOOL2D_BACKWARD) || g->KH != 2 || g->KW != 2 || g->SH != 2 || g->SW != 2 || g->PH || g->PW || g->DH != 1 || g->DW != 1 ||
	    g->H != 2 * g->OH || g->W != 2 * g->OW)
		return 0;
	for (int k = 0; k <= clg_op_nsrc(c->op); k++) {
		const clg_view *v = k ? &c->src[k - 1] : &c->dst;
		if (v->shape[3] > 1 && v->stride[3] != 1)
			return 0;
	}
	return 1;
}

/* The kernel for the call (*kname) and its number of work-items; the 2x2 kernels when with_2x2. */
static int64_t pick_kernel(const clg_conv_geom *g, const clg_op_call *c, int with_2x2, const char **kname)
{
	*kname = clg_op_name(c->op);
	switch (c->op) {
	case CLG_OP_IM2COL: /* segments (n, c, kh, kw) of cols */
		return g->N * g->C * g->KH * g->KW;
	case CLG_OP_MAXPOOL2D:
		if (with_2x2) { /* windows, launched in 3-D */
			*kname = "max_pool2d_2x2";
			return g->N * g->C * g->OH * g->OW;
		}
		return g->N * g->C * g->OH; /* output rows */
	case CLG_OP_AVGPOOL2D:
		return g->N * g->C * g->OH;
	case CLG_OP_COL2IM: /* image rows, by runs of columns where the stride along w is 1 */
		if (g->SW != 1 || clg_dtype_is_half_storage(c->dst.dtype)) /* 16-bit: the gather sums in float32 */
			*kname = "col2im_pixels";
		return g->N * g->C * g->H;
	case CLG_OP_MAXPOOL2D_BACKWARD:
		if (with_2x2) {
			*kname = "max_pool2d_backward_2x2";
			return g->N * g->C * g->OH * g->OW;
		}
		/* windows that do not overlap: planes, each window's gradient scattered to its max */
		if (g->DH * (g->KH - 1) < g->SH && g->DW * (g->KW - 1) < g->SW) {
			*kname = "max_pool2d_backward_scatter";
			return g->N * g->C;
		}
		return g->N * g->C * g->H;
	default: /* image rows, each pixel gathering its terms */
		return g->N * g->C * g->H;
	}
}

static clg_status conv_run(clg_backend *be, const clg_op_call *c)
{
	const char *op = clg_op_name(c->op), *kname;
	const clg_view *views[CONV_NOPS];
	int nv = 1 + clg_op_nsrc(c->op), with_2x2;
	clg_conv_geom cg;
	conv_geom g;
	cl_mem mem[CONV_NOPS];
	cl_kernel k;
	char opts[256];
	int64_t n;
	int px; /* im2col's GPU shape: a work-item per element */
	int rows_2x2; /* the 2x2 pools' CPU shape */
	clg_kernel_shape shape;
	clg_status st;

	st = clg_conv_geometry(be, c, &cg);
	if (!st)
		st = clg_cl_check_dtype(be, c, c->dst.dtype);
	for (int i = 0; !st && i < nv; i++) {
		views[i] = i ? &c->src[i - 1] : &c->dst;
		st = clg_cl_check_int_range(be, c, views[i]);
		if (!st && !fits_int(clg_view_numel(views[i])))
			st = clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': %lld elements exceed 2^31", op,
				      be->info.name, (long long)clg_view_numel(views[i]));
	}
	if (st)
		return st;
	for (int i = nv; i < CONV_NOPS; i++)
		views[i] = views[1]; /* an unused source aliases src0 */
	/* the kernels index in int: every size and parameter, and the padded extents, must fit */
	{
		const int64_t v[] = {cg.N, cg.C, cg.H, cg.W, cg.OH, cg.OW, cg.KH, cg.KW, cg.SH, cg.SW, cg.PH, cg.PW,
				     cg.DH, cg.DW, cg.H + 2 * cg.PH, cg.W + 2 * cg.PW};
		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
			if (!fits_int(v[i]))
				return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': sizes or parameters exceed 2^31",
						op, be->info.name);
	}
	if (clg_view_numel(&c->dst) == 0)
		return CLG_OK;
	with_2x2 = pool_2x2_tiles(&cg, c);
	n = pick_kernel(&cg, c, with_2x2, &kname);
	shape = clg_backend_kernel_shape(be, CLG_KFAM_CONV, NULL);
	px = c->op == CLG_OP_IM2COL && shape == CLG_SHAPE_GPU;
	if (px)
		kname = "im2col_px";
	/* float32 2x2 pools on CPU-shaped devices: a work-item per output row, 4 windows a vector */
	rows_2x2 = with_2x2 && shape != CLG_SHAPE_GPU && c->dst.dtype == CLG_F32;
	if (rows_2x2)
		kname = c->op == CLG_OP_MAXPOOL2D ? "max_pool2d_2x2_rows" : "max_pool2d_backward_2x2_rows";
	/* float32 col2im on CPU-shaped devices, rows of 8 or more at unit strides along w: in registers */
	if (c->op == CLG_OP_COL2IM && !strcmp(kname, "col2im") && shape != CLG_SHAPE_GPU && c->dst.dtype == CLG_F32 &&
	    cg.W >= 8 && c->dst.stride[3] == 1 && c->src[0].stride[2] == 1)
		kname = "col2im_rows";
	memset(&g, 0, sizeof(g));
	g.N = (cl_int)cg.N, g.C = (cl_int)cg.C, g.H = (cl_int)cg.H, g.W = (cl_int)cg.W;
	g.OH = (cl_int)cg.OH, g.OW = (cl_int)cg.OW;
	g.KH = (cl_int)cg.KH, g.KW = (cl_int)cg.KW, g.SH = (cl_int)cg.SH, g.SW = (cl_int)cg.SW;
	g.PH = (cl_int)cg.PH, g.PW = (cl_int)cg.PW, g.DH = (cl_int)cg.DH, g.DW = (cl_int)cg.DW;
	g.avg_div = cg.avg_div;
	for (int i = 0; i < CONV_NOPS; i++) {
		g.off[i] = (cl_int)views[i]->offset;
		for (int d = 0; d < views[i]->ndim && d < 4; d++)
			g.st[i][d] = (cl_int)views[i]->stride[d];
		mem[i] = (cl_mem)views[i]->buf->handle;
	}
	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	st = clg_cl_kernel(be, "conv", opts, kname, &k);
	/* a 2x2 kernel runs a plane's windows in one work-group: fall back when they do not fit */
	if (!st && with_2x2 && rows_2x2) { /* the CPU shape's row kernels: 1-D over output rows */
		n = cg.N * cg.C * cg.OH;
		with_2x2 = 0;
	} else if (!st && with_2x2 && (int64_t)clg_cl_group_size(be, k, cg.OH * cg.OW) < cg.OH * cg.OW) {
		with_2x2 = 0;
		n = pick_kernel(&cg, c, 0, &kname);
		st = clg_cl_kernel(be, "conv", opts, kname, &k);
	}
	if (st)
		return st;
	g.n = (cl_int)n;
	{
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
		const void *args[] = {&g, &mem[0], &mem[1], &mem[2]};
		st = clg_cl_set_args(be, k, op, 4, sizes, args);
	}
	if (st)
		return st;
	if (with_2x2) { /* work-items (ow, oh, plane), a group per plane: no index division */
		size_t global[3] = {(size_t)cg.OW, (size_t)cg.OH, (size_t)(cg.N * cg.C)};
		size_t local[3] = {global[0], global[1], 1};
		cl_int err = clg_cl_fault(be, CLG_FAULT_ENQUEUE);
		if (err == CL_SUCCESS)
			err = clg_cl_enqueue(be, k, 3, global, local);
		if (err != CL_SUCCESS)
			return clg_cl_fail(be, op, err, "clEnqueueNDRangeKernel(global %zux%zux%zu, local %zux%zux1)%s",
					   global[0], global[1], global[2], local[0], local[1], clg_cl_fault_note());
		clg_cl_of(be)->stats.n_launch++;
		if (be->recorder)
			clg_cl_record(be, k, 3, global, local);
		return CLG_OK;
	}
	if (px) { /* work-items (column l, segment): adjacent lanes write adjacent columns */
		size_t L = (size_t)(cg.OH * cg.OW), items[2] = {L, (size_t)n}, local[2] = {1, 1};
		local[0] = clg_cl_spread(be, L * (size_t)n, clg_cl_local_size(be, k, clg_cl_of(be)->wg_size));
		while (local[0] > SPREAD_MIN && local[0] / 2 >= L) /* short rows: not mostly idle lanes */
			local[0] /= 2;
		return clg_cl_launch_2d(be, k, items, local, op);
	}
	/* rows are long: small groups spread few rows over every compute unit */
	return clg_cl_launch_1d(be, k, (size_t)n, clg_cl_local_size(be, k, CONV_GROUP), op);
}

void clg_cl_register_conv(clg_backend *be)
{
	be->ops[CLG_OP_IM2COL] = conv_run;
	be->ops[CLG_OP_COL2IM] = conv_run;
	be->ops[CLG_OP_MAXPOOL2D] = conv_run;
	be->ops[CLG_OP_MAXPOOL2D_BACKWARD] = conv_run;
	be->ops[CLG_OP_AVGPOOL2D] = conv_run;
	be->ops[CLG_OP_AVGPOOL2D_BACKWARD] = conv_run;
}
