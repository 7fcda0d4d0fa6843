/* Op-suite cases of the int8 block quantization (clg_ops.def, INT8_*): lengths that are and are not
 * multiples of the block and of 4, blocks of 1, 3 and 256. Scales drawn from [-1, 1] make some
 * blocks all-zero (a scale <= 0 quantizes to 0) and small ones clamp at +-127. */
#include "test_ops.h"

static op_case quant_case(clg_op op, int64_t n, int64_t block)
{
	int64_t nb = (n + block - 1) / block, packed = (n + 3) / 4;
	op_case c = {.op = op, .layout = L_CONTIG, .lo = -1, .hi = 1, .nops = 3, .i = {block, n}, .idx_hi = 0x7fffffff};
	for (int k = 0; k < 3; k++)
		c.op_nd[k] = 1;
	if (op == CLG_OP_INT8_SCALES) {
		c.nops = 2;
		c.op_shape[0][0] = nb, c.op_shape[1][0] = n;
	} else if (op == CLG_OP_INT8_QUANT) {
		c.op_shape[0][0] = packed, c.op_dtype[0] = CLG_I32;
		c.op_shape[1][0] = n, c.op_shape[2][0] = nb;
	} else {
		c.op_shape[0][0] = n;
		c.op_shape[1][0] = packed, c.op_dtype[1] = CLG_I32;
		c.op_shape[2][0] = nb;
	}
	return c;
}

void ops_cases_quant(op_case_adder add)
{
	static const int64_t lengths[] = {1, 3, 4, 255, 256, 257, 1000, 4099};
	static const int64_t blocks[] = {1, 3, 256};
	static const clg_op ops[] = {CLG_OP_INT8_SCALES, CLG_OP_INT8_QUANT, CLG_OP_INT8_DEQUANT};
	for (size_t o = 0; o < 3; o++)
		for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++)
			for (size_t b = 0; b < 3; b++)
				add(quant_case(ops[o], lengths[l], blocks[b]));
}
