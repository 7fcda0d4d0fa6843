/* Reference int8 block quantization (clg_ops.def, INT8_*): the definition, in float32 as the
 * devices compute it (the bytes must agree exactly). */
#include "ref_internal.h"

#include "../clg_quant_internal.h"

#include <math.h>

static clg_status ref_int8(clg_backend *be, const clg_op_call *c)
{
	int64_t n, block;
	clg_status st = clg_int8_check(be, c, &n, &block);

	if (st)
		return st;
	if (c->op == CLG_OP_INT8_SCALES) {
		const float *x = (const float *)c->src[0].buf->handle + c->src[0].offset;
		float *s = (float *)c->dst.buf->handle + c->dst.offset;
		for (int64_t b = 0; b * block < n; b++) {
			float m = 0;
			for (int64_t k = b * block; k < n && k < (b + 1) * block; k++)
				m = fmaxf(m, fabsf(x[k]));
			s[b] = m / 127.0f;
		}
	} else if (c->op == CLG_OP_INT8_QUANT) {
		const float *x = (const float *)c->src[0].buf->handle + c->src[0].offset;
		const float *s = (const float *)c->src[1].buf->handle + c->src[1].offset;
		int32_t *q = (int32_t *)c->dst.buf->handle + c->dst.offset;
		for (int64_t j = 0; j < (n + 3) / 4; j++) {
			uint32_t packed = 0;
			for (int t = 0; t < 4 && 4 * j + t < n; t++) {
				int64_t k = 4 * j + t;
				float sc = s[k / block];
				int v = sc > 0 ? (int)rintf(x[k] / sc) : 0;
				v = v > 127 ? 127 : v < -127 ? -127 : v;
				packed |= (uint32_t)(v & 0xff) << (8 * t);
			}
			q[j] = (int32_t)packed;
		}
	} else {
		const int32_t *q = (const int32_t *)c->src[0].buf->handle + c->src[0].offset;
		const float *s = (const float *)c->src[1].buf->handle + c->src[1].offset;
		float *x = (float *)c->dst.buf->handle + c->dst.offset;
		for (int64_t k = 0; k < n; k++)
			x[k] = s[k / block] * (float)(int8_t)(((uint32_t)q[k / 4] >> (8 * (k % 4))) & 0xff);
	}
	return CLG_OK;
}

void clg_ref_register_quant(clg_backend *be)
{
	be->ops[CLG_OP_INT8_SCALES] = ref_int8;
	be->ops[CLG_OP_INT8_QUANT] = ref_int8;
	be->ops[CLG_OP_INT8_DEQUANT] = ref_int8;
}
