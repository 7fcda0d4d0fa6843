/* Op-suite cases of the fused hot-path ops (see tests/test_ops.h and clg_ops.def): bias +
 * activation forward and backward, the GEMM with them (gemm_bias_act), softmax cross-entropy
 * forward and backward. The suite compares
 * the dst, and bias_act_backward's bias gradient (written in place, check_src); the row statistics
 * (max, log-sum) reach the gradient checks (tests/grad_cases_fused.c) through the op that reads them. */
#include "test_ops.h"

#include <string.h>

/* a case with nops operands of nd[k] dims: shapes (N, C), (C), (N), (N, 2) ('S', cross-entropy's row
 * statistics) or (1) by code */
static op_case fused_case(clg_op op, const char *layout, int64_t N, int64_t C, enum layout l)
{
	op_case c = {.op = op, .layout = l, .lo = -2, .hi = 2, .nops = (int)strlen(layout)};
	for (int k = 0; k < c.nops; k++) {
		switch (layout[k]) {
		case 'm': c.op_nd[k] = 2, c.op_shape[k][0] = N, c.op_shape[k][1] = C; break;
		case 'c': c.op_nd[k] = 1, c.op_shape[k][0] = C; break;
		case 'n': c.op_nd[k] = 1, c.op_shape[k][0] = N; break;
		case 'S': c.op_nd[k] = 2, c.op_shape[k][0] = N, c.op_shape[k][1] = 2; break;
		default: c.op_nd[k] = 1, c.op_shape[k][0] = 1; break;
		}
	}
	return c;
}

/* gemm_bias_act: dst (M, N) = act(A (M, K) @ B (K, N) + bias (N)), with B stored transposed (the
 * linear layer's x @ w^T: on CPU devices the own GEMM's fused store, whole and edge tiles of
 * gemm_dot, a tail along k; from 256 rows gemm_op_bias_act on the packed weight: {300, 37, 19},
 * edge tiles both ways) and as stored or with A transposed too (GEMM then bias_act). */
static void gemm_bias_act_cases(op_case_adder add)
{
	static const int64_t mnk[][3] = {{1, 1, 1},     {3, 5, 7},     {4, 6, 16},  {9, 7, 33},
					 {128, 10, 70}, {33, 300, 17}, {300, 37, 19}};
	static const int trans[] = {4, 0, 6}; /* bit 1: A stored transposed, bit 2: B */
	static const char *const tags[3][3] = {{"Bt none", "Bt relu", "Bt gelu"},
					       {"A B none", "A B relu", "A B gelu"},
					       {"At Bt none", "At Bt relu", "At Bt gelu"}};

	for (size_t s = 0; s < sizeof(mnk) / sizeof(mnk[0]); s++)
		for (int f = 0; f < 3; f++)
			for (int a = 0; a < 3; a++)
				for (int l = 0; l < 2; l++) {
					op_case c = {.op = CLG_OP_GEMM_BIAS_ACT, .layout = l ? L_OFFSET : L_CONTIG,
						     .lo = -1, .hi = 1, .nops = 4, .op_nd = {2, 2, 2, 1}, .i = {a},
						     .op_trans = trans[f], .tag = tags[f][a]};
					c.op_shape[0][0] = c.op_shape[1][0] = mnk[s][0];
					c.op_shape[0][1] = c.op_shape[2][1] = c.op_shape[3][0] = mnk[s][1];
					c.op_shape[1][1] = c.op_shape[2][0] = mnk[s][2];
					add(c);
				}
}

void ops_cases_fused(op_case_adder add)
{
	/* (37, 64), (5, 128), (3, 64) (small enough for Oclgrind): bias_act_backward's CPU shape sixteen
	 * columns a work-item (up to two compute units) */
	static const int64_t shapes[][2] = {{1, 1}, {3, 5}, {128, 10}, {33, 300}, {2, 513}, {37, 64}, {5, 128}, {3, 64}};
	static const char *const acts[] = {"none", "relu", "gelu"};

	gemm_bias_act_cases(add);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		int64_t N = shapes[s][0], C = shapes[s][1];
		for (int l = 0; l < 2; l++) {
			enum layout lay = l ? L_OFFSET : L_CONTIG;
			for (int a = 0; a < 3; a++) {
				op_case c = fused_case(CLG_OP_BIAS_ACT, "mmc", N, C, lay);
				c.i[0] = a;
				c.tag = acts[a];
				add(c);
				c = fused_case(CLG_OP_BIAS_ACT_BACKWARD, "mmmc", N, C, lay);
				c.i[0] = a;
				c.tag = acts[a];
				c.check_src = 1 << 2;
				add(c);
			}
			op_case c = fused_case(CLG_OP_BIAS_ACT_BACKWARD, "mmmc", N, C, lay);
			c.i[0] = 1, c.f[0] = 1, c.tag = "relu, accumulating db";
			c.check_src = 1 << 2;
			add(c);
			/* GELU's tails (u = x + b in [-12, 12], short of the float exp's flush below 2^-126): Phi's small
			 * negative tail and 1 - Phi (one shared exp, NCDF) */
			c = fused_case(CLG_OP_BIAS_ACT, "mmc", N, C, lay);
			c.i[0] = 2, c.lo = -6, c.hi = 6, c.tag = "gelu tails";
			add(c);
			c = fused_case(CLG_OP_BIAS_ACT_BACKWARD, "mmmc", N, C, lay);
			c.i[0] = 2, c.f[0] = 1, c.lo = -6, c.hi = 6, c.tag = "gelu tails, accumulating db";
			c.check_src = 1 << 2;
			add(c);
			c = fused_case(CLG_OP_SOFTMAX_XENT, "1mmS", N, C, lay);
			c.f[0] = 1.0 / (double)N;
			c.lo = -3, c.hi = 3;
			add(c);
			c = fused_case(CLG_OP_SOFTMAX_XENT_BACKWARD, "mmmS1", N, C, lay);
			c.f[0] = 1.0 / (double)N;
			add(c);
		}
	}
}
