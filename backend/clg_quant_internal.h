/* The operand rules of the int8 ops (clg_ops.def), shared by every backend. */
#ifndef CLG_QUANT_INTERNAL_H
#define CLG_QUANT_INTERNAL_H

#include "clg_internal.h"

/* Checks an INT8_* call: contiguous 1-D operands of the right dtypes and lengths; *n values,
 * *block per scale. Fails with CLG_ERR_SHAPE / CLG_ERR_DTYPE / CLG_ERR_INVALID naming op and device. */
clg_status clg_int8_check(clg_backend *be, const clg_op_call *c, int64_t *n, int64_t *block);

#endif
