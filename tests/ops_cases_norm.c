/* Op-suite cases of the norm family (see tests/test_ops.h): LAYER_NORM and LAYER_NORM_BACKWARD
 * (ROW ops: the last dim is the row) at odd row lengths, in every layout, with rows sharing a
 * large offset (cancellation), a larger eps, and NaN in some rows. Shapes of at most 64 elements
 * run under Oclgrind too (--small). */
#include "test_ops.h"

#include <string.h>

void ops_cases_norm(op_case_adder add)
{
	static const int64_t shapes[][CLG_MAX_DIMS + 1] = {
		/* nd, dims...: (1, 1), (2, 31), (2, 2, 13) and (1, 64) are small enough for Oclgrind */
		{2, 1, 1}, {2, 2, 31}, {3, 2, 2, 13}, {2, 1, 64}, {2, 7, 10}, {2, 128, 64}, {2, 3, 1000}, {3, 2, 3, 65},
	};
	static const clg_op ops[] = {CLG_OP_LAYER_NORM, CLG_OP_LAYER_NORM_BACKWARD};

	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			for (int l = 0; l < L_COUNT; l++) {
				op_case c = {.op = ops[o], .nd = (int)shapes[s][0], .layout = (enum layout)l,
					     .lo = -2, .hi = 2, .f = {1e-5}};
				if (l == L_TRANSPOSED && c.nd < 2)
					continue;
				memcpy(c.shape, &shapes[s][1], sizeof(c.shape));
				add(c);
				if (l != L_CONTIG && l != L_OFFSET)
					continue;
				/* rows around 1000 with spread 1: a one-pass E[x^2] - E[x]^2 in float loses
				 * every digit here */
				op_case sh = c;
				sh.lo = 1000, sh.hi = 1001, sh.tag = "shifted";
				add(sh);
				/* a larger eps, which must enter as var + eps */
				op_case e = c;
				e.lo = -0.05f, e.hi = 0.05f, e.f[0] = 0.01, e.tag = "eps 0.01";
				add(e);
				/* NaN in a few rows makes those rows NaN */
				op_case n = c;
				n.nan_rate = 0.02f;
				if (c.shape[c.nd - 1] > 1)
					add(n);
			}
		}
	}
}
