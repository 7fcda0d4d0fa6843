/* Residual add + layer norm with gamma and beta (ADD_LAYER_NORM, ADD_LAYER_NORM_BACKWARD; see
 * clg_ops.def): the shape check both backends share (implemented in ref/ref_ops_addnorm.c). */
#ifndef CLG_ADDNORM_INTERNAL_H
#define CLG_ADDNORM_INTERNAL_H

#include "clg_internal.h"

/* Checks the operands' shapes (dst (N, C); the sources (N, C) or (C) as clg_ops.def says) and the
 * residual flag; the same message on every backend. */
clg_status clg_addnorm_check(clg_backend *be, const clg_op_call *c);

#endif
