/* Fused scaled dot-product attention (ATTENTION_FWD / ATTENTION_BWD, see clg_ops.def): the shape
 * check both backends share (implemented in ref/ref_ops_attention.c) and the widths the OpenCL
 * kernels take. */
#ifndef CLG_ATTENTION_INTERNAL_H
#define CLG_ATTENTION_INTERNAL_H

#include "clg_internal.h"

/* CLG_ATTENTION_DMAX (the widest Dh, Dv) is in clg_backend.h: the frontend uses it. */

/* The sizes of an attention call, from its operands. */
typedef struct {
	int64_t B, H, Tq, Tk, Dh, Dv;
} clg_attention_dims;

/* Checks the operands' shapes (and dk, dv of the backward); fills *d. The same message on every
 * backend. */
clg_status clg_attention_check(clg_backend *be, const clg_op_call *c, clg_attention_dims *d);

/* Geometry of a 3-D or 4-D operand as (b, h, t, x) strides (a 3-D one has no h; the statistics
 * have no x): st[0..3], and its offset. */
void clg_attention_strides(const clg_view *v, int stats, int64_t st[4]);

#endif
