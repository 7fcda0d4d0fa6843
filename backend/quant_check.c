/* Operand rules of the int8 compression ops (clg_ops.def, INT8_*). */
#include "clg_quant_internal.h"

#include <stdio.h>

clg_status clg_int8_check(clg_backend *be, const clg_op_call *c, int64_t *n, int64_t *block)
{
	const clg_view *values, *scales, *packed;
	const char *op = clg_op_name(c->op);
	int64_t nb;

	*block = c->i[0];
	if (*block < 1)
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': block size %lld < 1", op, be->info.name,
				(long long)*block);
	switch (c->op) {
	case CLG_OP_INT8_SCALES:
		values = &c->src[0], scales = &c->dst, packed = NULL;
		break;
	case CLG_OP_INT8_QUANT:
		values = &c->src[0], scales = &c->src[1], packed = &c->dst;
		break;
	default:
		values = &c->dst, scales = &c->src[1], packed = &c->src[0];
		break;
	}
	*n = clg_view_numel(values);
	nb = (*n + *block - 1) / *block;
	if (values->dtype != CLG_F32 || scales->dtype != CLG_F32 || (packed && packed->dtype != CLG_I32))
		return clg_fail(CLG_ERR_DTYPE, "op '%s' on device '%s': values and scales are float32, packed bytes int32",
				op, be->info.name);
	if (values->ndim != 1 || scales->ndim != 1 || (packed && packed->ndim != 1) || scales->shape[0] != nb ||
	    (packed && packed->shape[0] != (*n + 3) / 4) || (c->op == CLG_OP_INT8_QUANT && c->i[1] != *n))
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': %lld values need %lld scales (block %lld) and "
				"%lld packed int32 (1-D each)", op, be->info.name, (long long)*n, (long long)nb,
				(long long)*block, (long long)((*n + 3) / 4));
	if (!clg_view_is_contiguous(values) || !clg_view_is_contiguous(scales) || (packed && !clg_view_is_contiguous(packed)))
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': operands must be contiguous", op, be->info.name);
	return CLG_OK;
}
