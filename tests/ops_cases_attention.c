/* Op-suite cases of the fused attention ops (see tests/test_ops.h and clg_ops.def):
 * ATTENTION_FWD and ATTENTION_BWD, causal and not, T in {1, 7, 64, 100}, Dh in {8, 16, 64}, 4-D
 * (B, H, T, D) and 3-D (B, T, D) operands, contiguous and at an offset with padded rows; one case
 * with Tq != Tk and Dv != Dh; T around the CPU shape's blocks of 16 rows (Dh 32, 64 and odd). The
 * outputs written in place (the forward's log-sum-exp, the backward's dk and dv) are compared too.
 * Cases of at most 256 elements per operand run under Oclgrind (--small). */
#include "test_ops.h"

#include <math.h>

/* (B, H, T, X) or, with H == 0, (B, T, X); X == 0: the statistics (B, H, T) */
static void operand(op_case *c, int k, int64_t B, int64_t H, int64_t T, int64_t X)
{
	int nd = 0;
	c->op_shape[k][nd++] = B;
	if (H)
		c->op_shape[k][nd++] = H;
	c->op_shape[k][nd++] = T;
	if (X)
		c->op_shape[k][nd++] = X;
	c->op_nd[k] = nd;
}

static op_case attn_case(clg_op op, int64_t B, int64_t H, int64_t Tq, int64_t Tk, int64_t Dh, int64_t Dv, int causal,
			 enum layout l)
{
	op_case c = {.op = op, .layout = l, .lo = -1, .hi = 1, .thr = 1e-9};
	c.f[0] = 1.0 / sqrt((double)Dh);
	c.i[0] = causal;
	c.tag = causal ? "causal" : "full";
	if (op == CLG_OP_ATTENTION_FWD) {
		c.nops = 5;
		operand(&c, 0, B, H, Tq, Dv); /* o */
		operand(&c, 1, B, H, Tq, Dh); /* q */
		operand(&c, 2, B, H, Tk, Dh); /* k */
		operand(&c, 3, B, H, Tk, Dv); /* v */
		operand(&c, 4, B, H, Tq, 0);  /* lse */
		c.check_src = 1 << 3;
	} else {
		c.nops = 9;
		operand(&c, 0, B, H, Tq, Dh); /* dq */
		operand(&c, 1, B, H, Tq, Dv); /* do */
		operand(&c, 2, B, H, Tq, Dh); /* q */
		operand(&c, 3, B, H, Tk, Dh); /* k */
		operand(&c, 4, B, H, Tk, Dv); /* v */
		operand(&c, 5, B, H, Tq, Dv); /* o */
		operand(&c, 6, B, H, Tq, 0);  /* lse (any numbers: the op is a function of its inputs) */
		operand(&c, 7, B, H, Tk, Dh); /* dk */
		operand(&c, 8, B, H, Tk, Dv); /* dv */
		c.check_src = (1 << 6) | (1 << 7);
	}
	return c;
}

void ops_cases_attention(op_case_adder add)
{
	static const int64_t Ts[] = {1, 7, 64, 100}, Ds[] = {8, 16, 64};
	static const clg_op ops[] = {CLG_OP_ATTENTION_FWD, CLG_OP_ATTENTION_BWD};

	for (int o = 0; o < 2; o++) {
		for (int causal = 0; causal < 2; causal++)
			for (size_t t = 0; t < sizeof(Ts) / sizeof(Ts[0]); t++)
				for (size_t d = 0; d < sizeof(Ds) / sizeof(Ds[0]); d++) {
					int64_t T = Ts[t], D = Ds[d];
					/* B*H = 6 in 4-D; 3-D with B = 3; at an offset with padded rows */
					add(attn_case(ops[o], 2, 3, T, T, D, D, causal, L_CONTIG));
					add(attn_case(ops[o], 3, 0, T, T, D, D, causal, L_CONTIG));
					if (T == 7 || T == 100)
						add(attn_case(ops[o], 1, 2, T, T, D, D, causal, L_OFFSET));
				}
		/* more queries than keys and the other way round, v narrower than q and k */
		add(attn_case(ops[o], 2, 2, 9, 5, 16, 8, 1, L_CONTIG));
		add(attn_case(ops[o], 2, 2, 5, 9, 16, 8, 1, L_CONTIG));
		add(attn_case(ops[o], 1, 2, 70, 33, 8, 16, 0, L_OFFSET));
		/* the widest head the kernels take */
		add(attn_case(ops[o], 1, 1, 20, 20, 256, 256, 1, L_CONTIG));
		/* the CPU shape's blocks of 16 rows a work-item: one row past a block and one short, on the
		 * query side, the key side and both, at several widths; the small ones run under Oclgrind */
		for (int causal = 0; causal < 2; causal++) {
			add(attn_case(ops[o], 1, 1, 17, 17, 8, 8, causal, L_CONTIG));
			add(attn_case(ops[o], 1, 1, 15, 31, 4, 4, causal, L_CONTIG));
			add(attn_case(ops[o], 1, 1, 33, 17, 4, 4, causal, L_OFFSET));
			add(attn_case(ops[o], 1, 2, 9, 9, 64, 64, causal, L_CONTIG));
			add(attn_case(ops[o], 1, 1, 7, 5, 160, 144, causal, L_CONTIG));
			/* the cpu shape's stored-ds backward (ds of several key blocks summed into a query
			 * block, the last block cut short): head widths 32, 64 and odd, one head, T = 1,
			 * Tq != Tk across blocks, the transformer's larger head at T 128 */
			add(attn_case(ops[o], 2, 1, 35, 35, 32, 32, causal, L_CONTIG));
			add(attn_case(ops[o], 1, 3, 21, 21, 5, 7, causal, L_OFFSET));
			add(attn_case(ops[o], 2, 1, 1, 1, 32, 32, causal, L_CONTIG));
			add(attn_case(ops[o], 1, 1, 40, 23, 32, 16, causal, L_CONTIG));
			add(attn_case(ops[o], 1, 1, 23, 40, 64, 64, causal, L_CONTIG));
			add(attn_case(ops[o], 1, 2, 128, 128, 32, 32, causal, L_CONTIG));
		}
	}
}
