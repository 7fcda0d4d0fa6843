/* OpenCL launchers of the conv family (kernels_cl/conv.cl): im2col, col2im, max and average
 * pooling with their backward ops. One work-item per dst element; shapes are checked by
 * clg_conv_geometry (the same check and message as the reference backend). */
#include "cl_internal.h"
#include "../clg_conv_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define CONV_NOPS 3 /* dst and up to two sources */

/* Must match `cgeom` in kernels_cl/conv.cl. */
typedef struct {
	cl_int N, C, H, W, OH, OW;
	cl_int KH, KW, SH, SW, PH, PW, DH, DW;
	cl_int n;
	cl_int off[CONV_NOPS];
	cl_int st[CONV_NOPS][4];
} conv_geom;

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

static clg_status conv_run(clg_backend *be, const clg_op_call *c)
{
	const char *op = clg_op_name(c->op);
	const clg_view *views[CONV_NOPS];
	int nv = 1 + clg_op_nsrc(c->op);
	clg_conv_geom cg;
	conv_geom g;
	cl_mem mem[CONV_NOPS];
	cl_kernel k;
	char opts[256];
	int64_t n;
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
	n = clg_view_numel(&c->dst);
	if (n == 0)
		return CLG_OK;
	memset(&g, 0, sizeof(g));
	g.N = (cl_int)cg.N, g.C = (cl_int)cg.C, g.H = (cl_int)cg.H, g.W = (cl_int)cg.W;
	g.OH = (cl_int)cg.OH, g.OW = (cl_int)cg.OW;
	g.KH = (cl_int)cg.KH, g.KW = (cl_int)cg.KW, g.SH = (cl_int)cg.SH, g.SW = (cl_int)cg.SW;
	g.PH = (cl_int)cg.PH, g.PW = (cl_int)cg.PW, g.DH = (cl_int)cg.DH, g.DW = (cl_int)cg.DW;
	g.n = (cl_int)n;
	for (int i = 0; i < CONV_NOPS; i++) {
		g.off[i] = (cl_int)views[i]->offset;
		for (int d = 0; d < views[i]->ndim && d < 4; d++)
			g.st[i][d] = (cl_int)views[i]->stride[d];
		mem[i] = (cl_mem)views[i]->buf->handle;
	}
	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	st = clg_cl_kernel(be, "conv", opts, op, &k);
	if (st)
		return st;
	{
		size_t sizes[] = {sizeof(g), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
		const void *args[] = {&g, &mem[0], &mem[1], &mem[2]};
		st = clg_cl_set_args(be, k, op, 4, sizes, args);
	}
	if (st)
		return st;
	return clg_cl_launch_1d(be, k, (size_t)n, clg_cl_of(be)->wg_size, op);
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
