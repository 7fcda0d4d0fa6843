/* Op-suite cases of residual add + layer norm with gamma and beta (ADD_LAYER_NORM and its
 * backward, clg_ops.def): with and without the residual, row lengths 1, 63, 65 and wider, row
 * counts that are no multiple of a work-group, the transformer's (4096, 64) and (1024, 512), rows
 * sharing a large offset, operands at an offset with padded rows. The sum s written in place and
 * the column sums dgamma and dbeta (overwritten or accumulated) are compared too (check_src); the
 * backward with and without the earlier gradient of s added to dx. Operands of at most 256 elements
 * run under Oclgrind (--small). */
#include "test_ops.h"

#include <string.h>

/* operands by code: 'm' (N, C), 'c' (C) */
static op_case addnorm_case(clg_op op, const char *layout, int64_t N, int64_t C, enum layout l)
{
	op_case c = {.op = op, .layout = l, .lo = -2, .hi = 2, .nops = (int)strlen(layout), .f = {1e-5}};
	for (int k = 0; k < c.nops; k++) {
		if (layout[k] == 'm')
			c.op_nd[k] = 2, c.op_shape[k][0] = N, c.op_shape[k][1] = C;
		else
			c.op_nd[k] = 1, c.op_shape[k][0] = C;
	}
	return c;
}

void ops_cases_addnorm(op_case_adder add)
{
	static const int64_t shapes[][2] = {{1, 1}, {3, 1}, {2, 63}, {3, 65}, {4, 64}, {33, 63}, {7, 65},
					    {130, 64}, {5, 300}, {4096, 64}, {1024, 512}};
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		int64_t N = shapes[s][0], C = shapes[s][1];
		for (int l = 0; l < 2; l++) {
			enum layout lay = l ? L_OFFSET : L_CONTIG;
			for (int res = 0; res < 2; res++) {
				/* y, x, r, gamma, beta, s */
				op_case c = addnorm_case(CLG_OP_ADD_LAYER_NORM, "mmmccm", N, C, lay);
				c.i[0] = res;
				c.check_src = res ? 1 << 4 : 0;
				c.tag = res ? "residual" : "no residual";
				add(c);
				if (C > 1 && l == 0) { /* x and r around 500: s around 1000, spread 2 */
					c.lo = 499, c.hi = 501, c.tag = res ? "residual, shifted" : "no residual, shifted";
					add(c);
				}
			}
			/* dx, g, s, gamma, dgamma, dbeta, the earlier gradient of s */
			op_case c = addnorm_case(CLG_OP_ADD_LAYER_NORM_BACKWARD, "mmmcccm", N, C, lay);
			c.check_src = (1 << 3) | (1 << 4);
			add(c);
			op_case a = c;
			a.i[0] = 1, a.tag = "adding the earlier gradient";
			add(a);
			a.f[1] = 1, a.f[2] = 1, a.tag = "adding the earlier gradient, accumulating dgamma, dbeta";
			add(a);
			if (l == 0 && C > 1) {
				c.f[0] = 0.01, c.lo = -0.05f, c.hi = 0.05f, c.tag = "eps 0.01";
				add(c);
			}
		}
	}
}
