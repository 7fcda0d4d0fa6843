/* Op-suite cases of CAST between float32, float16 and bfloat16 (each pair both ways): values in a
 * normal range, wide ones that overflow float16 to inf, tiny ones that fall into its subnormals or
 * flush to zero, and NaN; contiguous and at an offset. The case's dtype stays float32, the
 * operands' own dtypes are in op_dtype (0 meaning float32). The result must be bit-exact. */
#include "test_ops.h"

void ops_cases_cast(op_case_adder add)
{
	static const clg_dtype dts[] = {CLG_F32, CLG_F16, CLG_BF16};
	static const struct {
		float lo, hi, nan_rate;
		const char *tag;
	} ranges[] = {{-3, 3, 0, NULL}, {-1e5f, 1e5f, 0, "wide"}, {-1e-6f, 1e-6f, 0, "tiny"}, {-3, 3, 0.1f, NULL}};
	static const int64_t lens[] = {7, 257, 1000};

	for (size_t a = 0; a < 3; a++)
		for (size_t b = 0; b < 3; b++)
			for (size_t r = 0; a != b && r < sizeof(ranges) / sizeof(ranges[0]); r++)
				for (size_t n = 0; n < sizeof(lens) / sizeof(lens[0]); n++)
					for (int l = L_CONTIG; l <= L_OFFSET; l += L_OFFSET - L_CONTIG) {
						op_case c = {.op = CLG_OP_CAST, .layout = (enum layout)l, .nops = 2,
							     .lo = ranges[r].lo, .hi = ranges[r].hi,
							     .nan_rate = ranges[r].nan_rate, .tag = ranges[r].tag};
						c.op_nd[0] = c.op_nd[1] = 1;
						c.op_shape[0][0] = c.op_shape[1][0] = lens[n];
						c.op_dtype[0] = dts[b];
						c.op_dtype[1] = dts[a];
						add(c);
					}
}
