/* The conv family's geometry (IM2COL, COL2IM, MAXPOOL2D(_BACKWARD), AVGPOOL2D(_BACKWARD)), shared
 * by the reference backend and the OpenCL backend: the parameters in
 * clg_op_call.i[] (kernel h, w, stride h, w, padding h, w, dilation h, w) checked against the
 * operands' shapes once, with one error message for every backend. Implemented in
 * backend/ref/ref_ops_conv.c. Backends only: the frontend includes clg_backend.h. */
#ifndef CLG_CONV_INTERNAL_H
#define CLG_CONV_INTERNAL_H

#include "clg_internal.h"

typedef struct {
	int64_t N, C, H, W;                     /* the image side (N, C, H, W) */
	int64_t KH, KW, SH, SW, PH, PW, DH, DW; /* i[0..7] */
	int64_t OH, OW;                         /* output positions */
	int ceil_mode;                          /* the pools' f[0] */
	int avg_div;                            /* AVGPOOL2D(_BACKWARD)'s f[1]: 0 KH*KW, 1 taps in the padded input, 2 in the input */
	const clg_view *img;  /* the (N, C, H, W) operand: src0 of IM2COL and the forward pools, else the dst */
	const clg_view *out;  /* cols (N, C*KH*KW, OH*OW) or pooled (N, C, OH, OW): the dst of IM2COL and the
				 forward pools, src0 of COL2IM and of the backward pools */
	const clg_view *x;    /* MAXPOOL2D_BACKWARD: the forward input (src1, shape of img); else NULL */
} clg_conv_geom;

/* clg_conv_out_size (output positions along one axis) is in clg_backend.h: the frontend uses it. */

/* Checks a conv-family call's parameters and shapes and fills g; fails with CLG_ERR_INVALID (bad
 * parameters) or CLG_ERR_SHAPE, naming op, device and shapes. */
clg_status clg_conv_geometry(clg_backend *be, const clg_op_call *c, clg_conv_geom *g);

#endif
