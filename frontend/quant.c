/* Block-wise int8 quantization (clgrad_quant.h) on the INT8_* backend ops. */
#include "clgrad_quant.h"
#include "fe_internal.h"

/* t's values as a 1-D view (t must be contiguous) */
static clg_view flat(const clg_tensor *t)
{
	clg_view v = t->v;
	v.ndim = 1;
	v.shape[0] = clg_view_numel(&t->v);
	v.stride[0] = 1;
	return v;
}

static clg_tensor *int8_op(const char *name, clg_op op, clg_tensor *a, clg_tensor *b, clg_dtype dt, int64_t len,
			   int64_t block, int64_t n)
{
	clg_tensor *ins[2] = {a, b}, *out;
	clg_op_call c = {.op = op, .i = {block, n}};

	/* not fe_check_inputs: these mix float32 values and packed int32 bytes */
	if (!a || (op != CLG_OP_INT8_SCALES && !b))
		return NULL;
	if (b && a->v.buf->backend != b->v.buf->backend)
		return fe_fail(clg_fail(CLG_ERR_DEVICE, "%s: operands on devices '%s' and '%s'", name,
					a->v.buf->backend->info.name, b->v.buf->backend->info.name));
	for (int k = 0; k < (b ? 2 : 1); k++)
		if (!clg_view_is_contiguous(&ins[k]->v))
			return fe_fail(clg_fail(CLG_ERR_INVALID, "%s: operand %d is not contiguous", name, k));
	if (block < 1)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "%s: block size %lld < 1", name, (long long)block));
	out = fe_new(a->v.buf->backend, dt, 1, &len);
	if (!out)
		return NULL;
	c.dst = out->v;
	c.src[0] = flat(a);
	if (b)
		c.src[1] = flat(b);
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	return out;
}

clg_tensor *clg_int8_scales(clg_tensor *x, int64_t block)
{
	int64_t n = x ? clg_numel(x) : 0;
	return int8_op("int8_scales", CLG_OP_INT8_SCALES, x, NULL, CLG_F32, block > 0 ? (n + block - 1) / block : 0, block, n);
}

clg_tensor *clg_int8_quantize(clg_tensor *x, clg_tensor *scales, int64_t block)
{
	int64_t n = x ? clg_numel(x) : 0;
	return int8_op("int8_quantize", CLG_OP_INT8_QUANT, x, scales, CLG_I32, (n + 3) / 4, block, n);
}

clg_tensor *clg_int8_dequantize(clg_tensor *packed, clg_tensor *scales, int64_t n, int64_t block)
{
	if (n < 0)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "int8_dequantize: %lld values", (long long)n));
	return int8_op("int8_dequantize", CLG_OP_INT8_DEQUANT, packed, scales, CLG_F32, n, block, n);
}
