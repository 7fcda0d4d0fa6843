/* The op suite's case description, shared by the suite (suite/op_suite.c) and the per-family
 * case files (tests/ops_cases_*.c), each of which adds its cases through ops_cases_<family>(add).
 * A new family: declare its adder below and call it in ops_families[] in suite/op_suite.c. */
#ifndef CLG_TEST_OPS_H
#define CLG_TEST_OPS_H

#include <clgrad.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum layout {
	L_CONTIG,     /* every operand contiguous */
	L_BROADCAST,  /* src1 (or src0 for unary) broadcast along dim 0 with stride 0 */
	L_TRANSPOSED, /* src0 a transposed (column-major) view */
	L_OFFSET,     /* operands start at an offset inside a larger buffer, rows padded */
	L_BCAST_COL,  /* elementwise: src1 (or src0 for unary) broadcast along its last dim with stride
		       * 0, as (N, C) op (N, 1) arrives */
	L_COUNT
};
typedef struct {
	clg_op op;
	int nd;
	int64_t shape[CLG_MAX_DIMS]; /* dst shape; for REDUCE ops the src shape, split at nkeep; for GEMM M,N,K (+batch) */
	int nkeep;                   /* REDUCE: leading dims kept */
	int dim_last;                /* REDUCE: 0, or d + 1: src0 is a contiguous tensor with its dim d
	                              * moved last (a permuted view: a reduction over dim d) */
	enum layout layout;
	int transA, transB, batch;   /* GEMM */
	double f[8];                 /* op parameters (clg_op_call.f) */
	int64_t i[8];                /* op parameters (clg_op_call.i) */
	float lo, hi;                /* input range (fill_operand may narrow it per source) */
	int quant;                   /* inputs rounded to multiples of 1/4: equal elements, exact zeros */
	float nan_rate;              /* fraction of source elements replaced by NaN */
	float ninf_rate;             /* fraction of source elements replaced by -inf (masked scores) */
	const char *tag;             /* shown in the case name */
	/* Explicit operands, for ops whose shapes follow none of the EW/REDUCE/ROW/GEMM rules
	 * (conv, pooling, indexing, ...). nops > 0 turns it on; operand 0 is the dst. Layouts
	 * L_CONTIG and L_OFFSET apply. */
	int nops;
	int op_nd[1 + CLG_MAX_SRC];
	int64_t op_shape[1 + CLG_MAX_SRC][CLG_MAX_DIMS];
	clg_dtype op_dtype[1 + CLG_MAX_SRC]; /* 0 (CLG_F32): the case's dtype; or CLG_I32, or another float
					      * dtype (CAST's operands) */
	int op_trans;                /* explicit operands: bit k set stores operand k (2-D or more) with
	                              * its last two dims swapped (a transposed matrix) */
	int32_t idx_hi;              /* int32 sources hold integers in [idx_lo, idx_hi) */
	int32_t idx_lo;              /* (0 unless set: negative indices, out of range) */
	int chan_major;              /* bit 0: 4-D explicit operands stored as (C, N, H, W), dims 0
	                              * and 1 swapped (the layout of conv's GEMM output); bit 1: 3-D
	                              * ones as (R, N, L) (conv's im2col matrix (R, N * L)) */
	int check_src;               /* sources the op writes in place (bit k - 1 for source k): compared
	                              * too, after the dst */
	int zero_src;                /* sources filled with zeros (bit k - 1 for source k): an
	                              * optimizer's fresh state */
	double thr;                  /* > 0: overrides the op's threshold */
	clg_dtype dtype;             /* of the float operands: CLG_F32 (0), or CLG_F16 (added by the
	                              * runner for the EW, REDUCE and ROW cases; host data in half bits) */
} op_case;

typedef void (*op_case_adder)(op_case c);

void ops_cases_conv(op_case_adder add);   /* im2col / col2im / pooling */
void ops_cases_index(op_case_adder add);  /* random numbers, index_select / index_add */
void ops_cases_norm(op_case_adder add);   /* layer norm */
void ops_cases_optim(op_case_adder add);  /* fused optimizer updates */
void ops_cases_fused(op_case_adder add);  /* fused hot-path ops: bias + activation, softmax cross-entropy */
void ops_cases_quant(op_case_adder add);  /* int8 block quantization (gradient compression) */
void ops_cases_rows(op_case_adder add);   /* row kernels of either shape: odd lengths, many rows */
void ops_cases_cast(op_case_adder add);   /* dtype conversions between float32, float16, bfloat16 */
void ops_cases_fft(op_case_adder add);    /* fft_c2c / fft_r2c / fft_c2r, complex_mul */
void ops_cases_attention(op_case_adder add); /* fused scaled dot-product attention, forward and backward */
void ops_cases_addnorm(op_case_adder add);   /* residual add + layer norm with gamma and beta */

#endif
