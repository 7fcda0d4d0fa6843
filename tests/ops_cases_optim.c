/* Op-suite cases of the fused optimizer updates (see tests/test_ops.h). The suite compares the
 * updated parameter (the dst); tests/test_optim.c checks the state and whole trajectories. */
#include "test_ops.h"

#include <string.h>

static op_case optim_case(clg_op op, int nd, const int64_t *shape, enum layout l)
{
	op_case c = {.op = op, .layout = l, .lo = -1, .hi = 1, .nops = op == CLG_OP_ADAM_STEP ? 5 : 3};
	for (int k = 0; k < c.nops; k++) {
		c.op_nd[k] = nd;
		memcpy(c.op_shape[k], shape, sizeof(int64_t) * (size_t)nd);
	}
	return c;
}

void ops_cases_optim(op_case_adder add)
{
	static const int64_t shapes[][3] = {{1, 1}, {1, 7}, {1, 1000}, {2, 13, 31}};
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		int nd = (int)shapes[s][0];
		for (int l = 0; l < 2; l++) {
			/* offset views must stay contiguous: only L_CONTIG for the 2-D shape (padded rows) */
			enum layout lay = l ? L_OFFSET : L_CONTIG;
			if (lay == L_OFFSET && nd > 1)
				continue;
			op_case c = optim_case(CLG_OP_SGD_STEP, nd, &shapes[s][1], lay);
			c.f[0] = 0.1, c.f[1] = 0.9, c.f[2] = 1e-2, c.f[3] = 0.0;
			c.i[0] = 1; /* nesterov */
			c.tag = "nesterov";
			add(c);
			c.i[0] = 0, c.i[1] = 1, c.tag = "first step";
			add(c);
			c.f[1] = 0, c.i[1] = 0, c.tag = "no momentum";
			add(c);
			op_case a = optim_case(CLG_OP_ADAM_STEP, nd, &shapes[s][1], lay);
			a.lo = 0, a.hi = 1; /* the second moment must be >= 0 */
			a.f[0] = 1e-3, a.f[1] = 0.9, a.f[2] = 0.999, a.f[3] = 1e-8, a.f[4] = 1e-2, a.f[5] = 0.19, a.f[6] = 0.002;
			a.tag = "adam";
			add(a);
			a.i[0] = 1, a.tag = "adamw";
			add(a);
			/* amsgrad: the running max (src3, random in [0, 1): above the new v for some elements,
			 * below for others) is updated and divides the step; compared with m and v */
			a.i[1] = 1, a.check_src = 14, a.tag = "adamw amsgrad";
			add(a);
			a.i[0] = 0, a.tag = "adam amsgrad";
			add(a);
			a.i[1] = 0, a.check_src = 0;
			/* the first step from a zero state at beta2 = 0.9999: v = (1 - beta2) g^2 alone, and the
			 * update lr * sign(g) / sqrt((1 - beta2) / bc2), ~ lr here. (1 - beta2) taken in float from
			 * float(0.9999) is 1.66e-4 too large, which shrank the update by 8.3e-5 (a normalized error
			 * ~3e-10 at lr 0.1); computed in double (and the state compared too): ~1e-14 */
			a.f[0] = 0.1, a.f[1] = 0.9, a.f[2] = 0.9999, a.f[5] = 1 - 0.9, a.f[6] = 1 - 0.9999;
			a.zero_src = a.check_src = 6; /* m and v: sources 2 and 3 */
			a.thr = 1e-12;
			a.i[0] = 0, a.tag = "adam beta2 0.9999 first step";
			add(a);
			a.i[0] = 1, a.tag = "adamw beta2 0.9999 first step";
			add(a);
		}
	}
}
