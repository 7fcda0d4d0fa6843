/* The fused hot-path ops (BIAS_ACT, BIAS_ACT_BACKWARD, GEMM_BIAS_ACT, SOFTMAX_XENT, SOFTMAX_XENT_BACKWARD; see
 * clg_ops.def): the shape check both backends share (implemented in ref/ref_ops_fused.c). */
#ifndef CLG_FUSED_INTERNAL_H
#define CLG_FUSED_INTERNAL_H

#include "clg_internal.h"

enum { CLG_FUSED_NONE = 0, CLG_FUSED_RELU = 1, CLG_FUSED_GELU = 2 };

/* Checks the operands' shapes and the activation code of a fused op; the same message on every
 * backend. */
clg_status clg_fused_check(clg_backend *be, const clg_op_call *c);

#endif
