/* Op-suite cases of the row kernels in either shape (family "row": one work-item per row on CPU
 * devices, a work-group per row on GPUs; tests/rows.cmake runs the suite with each forced):
 * softmax, log-softmax and their backwards, layer norm and its backward, and the row reductions
 * sum, max, min, argmax, and softmax cross-entropy forward and backward, at row lengths around the
 * vector width (16) and work-group sizes (1, 3, 15, 16, 17, 63, 64, 65, 512, 1000, 4097) and at many
 * rows (3001 of 3, 1025 of 64 and of 65), contiguous (the CPU shape's vector
 * loads), padded at an offset, and transposed (strided rows: its scalar path; cross-entropy
 * takes contiguous and offset operands); softmax, log-softmax and cross-entropy again on logits of
 * large magnitude (large_logit_cases: a wrong row max); softmax and log-softmax over rows holding -inf
 * or NaN (special_value_cases: exp's clamp). Shapes of at most 64 elements (256 per operand for
 * cross-entropy) also run under Oclgrind (--small). */
#include "test_ops.h"

#include <string.h>

/* cross-entropy operands: dst first; 'm' (N, C), 'S' (N, 2) (each row's max and log-sum), '1' (1) */
static op_case xent_case(clg_op op, const char *ops, int64_t N, int64_t C, enum layout l)
{
	op_case c = {.op = op, .layout = l, .lo = -3, .hi = 3, .nops = (int)strlen(ops), .f = {1.0 / (double)N},
		     .tag = "rows"};
	for (int k = 0; k < c.nops; k++) {
		c.op_nd[k] = ops[k] == '1' ? 1 : 2;
		c.op_shape[k][0] = ops[k] == '1' ? 1 : N;
		c.op_shape[k][1] = ops[k] == 'S' ? 2 : C;
	}
	return c;
}

/* Softmax is the same for any shift of a row, so a wrong row max goes unseen on inputs near 0:
 * only exp's range shows it. Rows of logits 90 +- 2 (exp(90) overflows float) and spread over
 * [-80, 80] (a max off by more than 88 overflows, most terms underflow) make a kernel that
 * subtracts the wrong max fail (tests/rows.cmake plants one in each shape). */
static void large_logit_cases(op_case_adder add)
{
	static const int64_t shapes[][2] = {{9, 1}, {9, 3}, {3, 17}, {6, 65}, {257, 64}};
	static const float ranges[][2] = {{88, 92}, {-80, 80}};
	static const clg_op ops[] = {CLG_OP_SOFTMAX, CLG_OP_LOG_SOFTMAX};
	static const enum layout layouts[] = {L_CONTIG, L_TRANSPOSED};

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
			for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++)
				for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
					op_case c = {.op = ops[o], .nd = 2, .shape = {shapes[s][0], shapes[s][1]},
						     .layout = layouts[l], .lo = ranges[r][0], .hi = ranges[r][1],
						     .tag = "rows large logits"};
					add(c);
				}
			op_case x = xent_case(CLG_OP_SOFTMAX_XENT, "1mmS", shapes[s][0], shapes[s][1], L_CONTIG);
			x.lo = ranges[r][0], x.hi = ranges[r][1], x.tag = "rows large logits";
			add(x);
		}
}

/* Cross-entropy on logits near 1e4 (float32 ulp 2^-10): a row's loss term is small beside the
 * logits, so it must come from x - max, not from logsumexp * sum(t) - sum(t * x) (which left
 * PoCL's loss wrong in the fourth digit); the scalar, sixteen-wide, register-held (16..64) and
 * sixteen-rows-a-work-item paths, and long rows. The dst (the loss) alone is compared: the row
 * statistics, ~1e4, would drown its error. Log-softmax on the same rows: its outputs must be
 * (x - max) - log(sum), in PyTorch's order, not x - (max + log(sum)), whose rounding at 1e4 (half
 * an ulp, 2^-11) is 2e-8 in normalized error, 2000 times the threshold (a kernel computing it so
 * fails every one of these cases; the large-logit cases, at 90, did not notice). */
static void offset_logit_cases(op_case_adder add)
{
	static const int64_t shapes[][2] = {{8, 6}, {16, 16}, {5, 40}, {40, 32}, {3, 1000}};

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		op_case x = xent_case(CLG_OP_SOFTMAX_XENT, "1mmS", shapes[s][0], shapes[s][1], L_CONTIG);
		x.lo = 1e4f - 2, x.hi = 1e4f + 2, x.tag = "rows logits 1e4";
		add(x);
		op_case c = {.op = CLG_OP_LOG_SOFTMAX, .nd = 2, .shape = {shapes[s][0], shapes[s][1]}, .layout = L_CONTIG,
			     .lo = 1e4f - 2, .hi = 1e4f + 2, .tag = "rows logits 1e4"};
		add(c);
	}
}

/* Softmax and log-softmax over rows holding -inf (masked scores: exp gives exactly 0, log-softmax
 * -inf) or NaN (its row's outputs NaN, as the reference's), in each CPU path: sixteen rows a
 * work-item (16, 16), (40, 32), the register-held row (3, 48), long rows (3, 512), strided rows. */
static void special_value_cases(op_case_adder add)
{
	static const int64_t shapes[][2] = {{16, 16}, {40, 32}, {3, 48}, {3, 512}, {9, 17}};
	static const clg_op ops[] = {CLG_OP_SOFTMAX, CLG_OP_LOG_SOFTMAX};
	static const enum layout layouts[] = {L_CONTIG, L_TRANSPOSED};

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++)
			for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
				for (int v = 0; v < 2; v++) {
					op_case c = {.op = ops[o], .nd = 2, .shape = {shapes[s][0], shapes[s][1]},
						     .layout = layouts[l], .lo = -3, .hi = 3, .tag = "rows special"};
					if (v)
						c.nan_rate = 0.7f / (float)shapes[s][1];
					else
						c.ninf_rate = 0.3f;
					add(c);
				}
}

/* The CPU shape's sixteen rows a work-item (softmax.cl's softmax_rows16, norm.cl's layer norm and its
 * backward, fused.cl's softmax_xent_rows16_cpu, over rows of 16..64 contiguous elements; tests/rows.cmake forces it
 * with CLGRAD_ROWS16=1): whole blocks and a partial last one at each such row length, the rows
 * contiguous and at an offset; (16, 16) with explicit operands is small enough for Oclgrind. */
static void rows16_cases(op_case_adder add)
{
	static const int64_t shapes[][2] = {{16, 16}, {40, 32}, {35, 48}, {17, 64}};
	static const clg_op ops[] = {CLG_OP_SOFTMAX, CLG_OP_LOG_SOFTMAX, CLG_OP_LAYER_NORM, CLG_OP_LAYER_NORM_BACKWARD};
	static const enum layout layouts[] = {L_CONTIG, L_OFFSET};

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
			for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
				int norm = ops[o] == CLG_OP_LAYER_NORM || ops[o] == CLG_OP_LAYER_NORM_BACKWARD;
				op_case c = {.op = ops[o], .layout = layouts[l], .lo = -3, .hi = 3,
					     .nops = ops[o] == CLG_OP_LAYER_NORM_BACKWARD ? 3 : 2, .f = {norm ? 1e-5 : 0},
					     .tag = "rows16"};
				for (int k = 0; k < c.nops; k++) {
					c.op_nd[k] = 2;
					c.op_shape[k][0] = shapes[s][0];
					c.op_shape[k][1] = shapes[s][1];
				}
				add(c);
			}
			op_case x = xent_case(CLG_OP_SOFTMAX_XENT, "1mmS", shapes[s][0], shapes[s][1], layouts[l]);
			x.tag = "rows16";
			add(x);
		}
}

void ops_cases_rows(op_case_adder add)
{
	static const int64_t shapes[][2] = {
		/* rows, row length */
		{5, 1}, {9, 3}, {1, 63}, {6, 63}, {6, 65}, {3, 1000}, {2, 4097}, {3001, 3}, {1025, 65},
		/* around the CPU shape's sixteen-wide loads: none, exactly one, one and a tail; rows
		 * of 64 and 512 with no tail, 1025 of them (not a multiple of the work-group); 48: the
		 * register-held rows (softmax.cl's softmax_row64) with one register unused; log-softmax's
		 * four rows a work-item (CLGRAD_ROWS16=1): 6 and 1025 rows end in a partial block, 2 and 3
		 * are one */
		{5, 15}, {4, 16}, {3, 17}, {1025, 64}, {3, 512}, {3, 48},
	};
	static const clg_op row_ops[] = {CLG_OP_SOFTMAX, CLG_OP_LOG_SOFTMAX, CLG_OP_SOFTMAX_BACKWARD,
					 CLG_OP_LOG_SOFTMAX_BACKWARD, CLG_OP_LAYER_NORM, CLG_OP_LAYER_NORM_BACKWARD};
	static const clg_op red_ops[] = {CLG_OP_SUM, CLG_OP_MAX, CLG_OP_MIN, CLG_OP_ARGMAX};
	static const enum layout layouts[] = {L_CONTIG, L_OFFSET, L_TRANSPOSED};

	large_logit_cases(add);
	offset_logit_cases(add);
	special_value_cases(add);
	rows16_cases(add);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
			for (size_t o = 0; o < sizeof(row_ops) / sizeof(row_ops[0]); o++) {
				int norm = row_ops[o] == CLG_OP_LAYER_NORM || row_ops[o] == CLG_OP_LAYER_NORM_BACKWARD;
				op_case c = {.op = row_ops[o], .nd = 2, .shape = {shapes[s][0], shapes[s][1]},
					     .layout = layouts[l], .lo = -2, .hi = 2, .f = {norm ? 1e-5 : 0}, .tag = "rows"};
				add(c);
				if (norm && layouts[l] == L_CONTIG && shapes[s][1] >= 63) {
					/* a large common offset: the shift by the first element must survive
					 * the CPU shape's sixteen-lane sums (long rows only: in float16 a row of
					 * three values near 1000 keeps too few distinct values to compare) */
					c.lo = 1000, c.hi = 1001, c.tag = "rows shifted";
					add(c);
				}
			}
			if (layouts[l] != L_TRANSPOSED) {
				add(xent_case(CLG_OP_SOFTMAX_XENT, "1mmS", shapes[s][0], shapes[s][1], layouts[l]));
				add(xent_case(CLG_OP_SOFTMAX_XENT_BACKWARD, "mmmS1", shapes[s][0], shapes[s][1], layouts[l]));
			}
			for (size_t o = 0; o < sizeof(red_ops) / sizeof(red_ops[0]); o++) {
				/* max, min, argmax also meet ties and NaN */
				for (int v = 0; v < (red_ops[o] == CLG_OP_SUM ? 1 : 3); v++) {
					op_case c = {.op = red_ops[o], .nd = 2, .nkeep = 1,
						     .shape = {shapes[s][0], shapes[s][1]}, .layout = layouts[l], .lo = -1,
						     .hi = 1, .quant = v == 1, .nan_rate = v == 2 ? 0.7f / (float)shapes[s][1] : 0,
						     .tag = "rows"};
					add(c);
				}
			}
		}
	}
}
