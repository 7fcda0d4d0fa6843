/* The op suite: every op, at several shapes and layouts, on a device against the reference
 * backend (ggml's test-backend-ops in spirit). See op_suite.h for the interface.
 *
 * Each case fills its buffers (dst included) with the same random numbers on both backends, runs
 * the op on views into them, reads back the whole dst buffer and compares: NaN/Inf positions
 * first, then the normalized squared error against a per-op threshold (0, i.e. bit-exact, for ops
 * whose float result is exact: comparisons, where, abs, clamp, max, min, argmax). Comparing the
 * whole buffer also catches writes outside the view. Inputs are drawn per op (fill_operand; their
 * seed a hash of the op's name and the case's index, case_seed; test_ops --seed varies them) so
 * each op meets its interesting cases: equal elements for comparisons and ties, zeros and
 * non-zeros in where's condition, NaN in some reductions, large logits for softmax.
 * The EW, REDUCE and ROW cases run again in float16 and in bfloat16 (named "... f16" / "... bf16",
 * tallied as "op f16" / "op bf16"): the same random numbers rounded to the 16-bit format on the
 * host (to16), results converted back (from16) before the comparison, against that format's
 * thresholds (half_threshold; native_half_threshold for float16 elementwise ops on devices that
 * compute them in half). GEMM, the conv family (im2col, col2im, pooling) and the fused ops (bias_act, softmax_xent and their
 * backward) run in both 16-bit formats too (float32 accumulation); the CAST
 * cases between formats are in tests/ops_cases_cast.c. */
#include "op_suite.h"

#include "suite_rand.h"
#include "test_ops.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

typedef struct {
	clg_buffer *buf[1 + CLG_MAX_SRC];
	clg_view view[1 + CLG_MAX_SRC]; /* 0 is dst */
} bound;

static const char *layout_names[] = {"contig", "bcast", "transp", "offset", "bcast_col"};

static int nsrc_of(clg_op op) { return clg_op_nsrc(op); }

static int is_reduce(clg_op op)
{
	return op == CLG_OP_SUM || op == CLG_OP_MAX || op == CLG_OP_MIN || op == CLG_OP_ARGMAX;
}

static double op_threshold(clg_op op);

static double half_threshold(clg_op op, clg_dtype t);

/* The cross-entropy's thresholds, from the lengths of its sums (u = 2^-24).
 *
 * softmax_xent_backward: dst (N, C) = k (p * sum_c t - t), p = exp(x - m - l) up to e^9 on the
 * suite's inputs, so p * sum_c t dominates dst and the normalized error is about the squared
 * relative error of each row's sum of C targets (weighted by the rows' sizes). A float32 sum of
 * C terms is within (C - 1) u sum |t| of the exact one (recursive summation's bound, which the
 * kernels' strided lanes and trees also meet): for targets of one sign a relative error of at
 * most (C - 1) u, hence (C u)^2, and 1e-11 (the default, (53 u)^2) for rows shorter than 53.
 * The suite's backward targets take both signs ([-3, 3] or [-2, 2], sigma ~ 1.2 to 1.7), whose
 * sums are ~sqrt(C) sigma, not C sigma; their roundings are random too, though: sixteen lanes of
 * C / 16 additions to partial sums of ~sqrt(k) sigma err by ~0.1 u C sigma in all, a normalized
 * error of ~0.01 u^2 C / q where q is the rows' mean squared sum over C sigma^2 (1 on average),
 * so (C u)^2 fails only for q < 0.01 / C: at C = 4097 over two rows, a chance of 2e-6 per draw.
 * 1e-11 alone is 53 u, a row sum's typical error near C = 4000 already: [2x4097] at an offset
 * failed on PoCL and Intel alike (2.8e-11) on one of the inputs the suite used to draw (the
 * reference sums in double; the devices' float32 sums stay inside the bound above: the
 * threshold, not the kernels, was wrong). A row sum one target short still fails by over 10^3
 * (tests/seed.cmake).
 *
 * softmax_xent: the loss adds N row terms l * sum_c t - sum_c t * (x - m), l = log sum exp(x - m)
 * >= 0, x - m <= 0: with targets >= 0 (fill_operand) every product and term has one sign, and
 * each enters at most C - 1 additions in its row and N - 1 in the loss (fused.cl's lanes, trees
 * and fixed-order sum of the row terms): a relative error of at most (C + N) u, besides exp's
 * and log's few ulps, hence ((C + N) u)^2 (1e-11 where C + N < 53). With targets in [-3, 3] the
 * loss cancelled: 1.29e-11 on [2x4097] at an offset, 1.27e-10 on [3x17] large logits (test_ops
 * --seed 1 and 2, PoCL and Intel alike). */
static double xent_threshold(const op_case *c)
{
	int fwd = c->op == CLG_OP_SOFTMAX_XENT;
	double N = 1, C = 1, b;

	if (c->nops >= 2 && c->op_nd[1] == 2)
		N = (double)c->op_shape[1][0], C = (double)c->op_shape[1][1];
	b = (fwd ? C + N : C) * 0x1p-24;
	return b * b > 1e-11 ? b * b : 1e-11;
}

/* layer_norm_backward (float32): the kernels (norm.cl) take sum(g' x') over the row in one pass,
 * g' = g - g0 and x' = x - x0 shifted by the row's first elements, then subtract dm sum(g'): the
 * partial sums grow as k g0 x0 (|g0 x0| <= 4 on [-2, 2]) and their roundings, a random walk of
 * ~u k g0 x0 / 2 steps, leave sum(g' x') ~u |g0 x0| C^1.5 / 3 off, which reaches dx through
 * xhat * mean(g xhat): a relative error of ~0.25 u |g0 x0| sqrt(C), a normalized one of
 * ~0.06 u^2 (g0 x0)^2 C <= u^2 C. Hence 16 C u^2, above 1e-11 from rows of 177: [2x4097] on
 * strided rows (one lane) reached 1.07e-11 on PoCL (test_ops --seed 3), 1e-11 on three of eight
 * seeds. PyTorch's CPU backward takes the same one-pass sums, unshifted. A sum of g one element
 * short is still 18 to 900 times over it at C = 4097 (4.1e-9 to 2.0e-7). */
static double layer_norm_backward_threshold(const op_case *c)
{
	double C = c->nd >= 1 ? (double)c->shape[c->nd - 1] : 1, t = 16 * C * 0x1p-48;
	return t > 1e-11 ? t : 1e-11;
}

/* softmax_backward y (g - sum(g y)) and log_softmax_backward g - exp(y) sum(g): as the
 * cross-entropy's backward (xent_threshold), the row's sum of C terms of both signs times an
 * elementwise factor dominates dst, hence (C u)^2 with 1e-11 below 53; log_softmax_backward
 * [2x4097 rows] transp (strided: one lane) reached 8.95e-11 on PoCL and Intel (--seed 4); its
 * sum one element short still fails there by 9000 times or more (5.5e-4 to 2.4e-3). */
static double row_sum_threshold(const op_case *c)
{
	double b = (c->nd >= 1 ? (double)c->shape[c->nd - 1] : 1) * 0x1p-24;
	return b * b > 1e-11 ? b * b : 1e-11;
}

/* (a case's thr is calibrated for float32: 16-bit cases use their own) */
static double threshold(const op_case *c)
{
	if (clg_dtype_is_half_storage(c->dtype))
		return half_threshold(c->op, c->dtype);
	if (c->thr > 0)
		return c->thr;
	if (c->op == CLG_OP_SOFTMAX_XENT || c->op == CLG_OP_SOFTMAX_XENT_BACKWARD)
		return xent_threshold(c);
	if (c->op == CLG_OP_LAYER_NORM_BACKWARD && !c->nops)
		return layer_norm_backward_threshold(c);
	if ((c->op == CLG_OP_SOFTMAX_BACKWARD || c->op == CLG_OP_LOG_SOFTMAX_BACKWARD) && !c->nops)
		return row_sum_threshold(c);
	return op_threshold(c->op);
}

/* 16-bit storage formats: host conversions, and the case-name suffix */
static uint16_t to16(clg_dtype t, float f) { return t == CLG_BF16 ? clg_float_to_bf16(f) : clg_float_to_half(f); }
static float from16(clg_dtype t, uint16_t h) { return t == CLG_BF16 ? clg_bf16_to_float(h) : clg_half_to_float(h); }
static const char *dtype_suffix(clg_dtype t) { return t == CLG_F16 ? " f16" : t == CLG_BF16 ? " bf16" : ""; }
/* 0 float32 (and the rest), 1 float16, 2 bfloat16: the suite counts cases per op and format */
static int format_index(clg_dtype t) { return t == CLG_F16 ? 1 : t == CLG_BF16 ? 2 : 0; }

static double op_threshold(clg_op op)
{
	switch (op) {
	case CLG_OP_GEMM: case CLG_OP_GEMM_BIAS_ACT: return 1e-9;
	case CLG_OP_SUM: return 1e-10;
	/* the float result is exactly one of the inputs (or 0/1): any difference is a bug */
	case CLG_OP_ABS: case CLG_OP_CLAMP: case CLG_OP_CLAMP_TENSOR: case CLG_OP_WHERE: case CLG_OP_CLAMP_BACKWARD: case CLG_OP_ABS_BACKWARD:
	case CLG_OP_CMP_EQ: case CLG_OP_CMP_LT: case CLG_OP_CMP_LE: case CLG_OP_CMP_GT: case CLG_OP_CMP_GE:
	case CLG_OP_MAX: case CLG_OP_MIN: case CLG_OP_ARGMAX:
	case CLG_OP_CAST: /* one rounding to nearest even of the same value, or exact */
		return 0;
	default: return 1e-11;
	}
}

/* float16: the inputs are the same half values on both sides, and both round a float32 result to
 * half once, to nearest even: the device its float32 computation, the reference its double
 * result first rounded to float (clg_ref_store). They disagree only where the two float32 values
 * straddle a half rounding boundary, and then mostly by one half ulp, at most 2^-10 |r| for a
 * normal half r: even with every element one ulp apart the normalized squared error stays below
 * 2^-20 = 9.5e-7, hence 1e-6. That bound alone would let a kernel off by about an ulp
 * everywhere pass, so the suite also limits how many elements may differ at all (half_max_diffs).
 * Ops whose result is exactly an input, a constant or 0/1 must match bit for bit: 0.
 * bfloat16 has 8 bits of mantissa where float16 has 11: the same argument gives 2^-16, hence 2e-5. */
static double half_threshold(clg_op op, clg_dtype t)
{
	switch (op) {
	case CLG_OP_COPY: case CLG_OP_FILL: case CLG_OP_NEG: case CLG_OP_RELU: case CLG_OP_RELU_BACKWARD:
	case CLG_OP_MAXPOOL2D: case CLG_OP_IM2COL: /* a window's max, or a copy, of the inputs */
		return 0;
	default:
		return op_threshold(op) == 0 ? 0 : t == CLG_BF16 ? 2e-5 : 1e-6;
	}
}

/* How many of n float16 results may differ from the reference. A disagreement needs the two
 * float32 results to straddle a rounding boundary, which a few ulps of float32 error rarely do
 * (about one element in 2^13 per float32 ulp), except for results near zero that carry float32
 * cancellation error larger than their small half ulp: up to 5% of layer_norm_backward's on rows
 * shifted by 1000 (rows since kept to float32: values16). One element, plus one in eight, leaves room for that; a kernel that is wrong by
 * even one ulp moves most of its elements. */
static size_t half_max_diffs(size_t n) { return 1 + n / 8; }

/* float16 elementwise ops computed in half (devices with cl_khr_fp16, clg_half_native): each
 * intermediate result is rounded to half, so a result may be a few half ulps (2^-11 |r| each)
 * from the reference, in any number of elements: 4 ulps everywhere give a normalized squared
 * error of (4 * 2^-11)^2 = 3.8e-6, hence 1e-5 and no limit on how many differ. Ops whose result
 * is exact stay exact. */
static double native_half_threshold(clg_op op) { return half_threshold(op, CLG_F16) == 0 ? 0 : 1e-5; }

/* The ops with a float16 path (kinds EW, REDUCE and ROW in clg_ops.def, GEMM, pooling and the fused
 * ops), listed here rather than asked of the library, so that an op that loses its float16 path
 * fails the suite. */
static int takes_f16(clg_op op)
{
	switch (op) {
	case CLG_OP_SUM: case CLG_OP_MAX: case CLG_OP_MIN: case CLG_OP_ARGMAX:
	case CLG_OP_SOFTMAX: case CLG_OP_LOG_SOFTMAX: case CLG_OP_SOFTMAX_BACKWARD: case CLG_OP_LOG_SOFTMAX_BACKWARD:
	case CLG_OP_LAYER_NORM: case CLG_OP_LAYER_NORM_BACKWARD:
	case CLG_OP_GEMM:
	case CLG_OP_IM2COL: case CLG_OP_COL2IM:
	case CLG_OP_MAXPOOL2D: case CLG_OP_MAXPOOL2D_BACKWARD: case CLG_OP_AVGPOOL2D: case CLG_OP_AVGPOOL2D_BACKWARD:
	case CLG_OP_BIAS_ACT: case CLG_OP_BIAS_ACT_BACKWARD: case CLG_OP_SOFTMAX_XENT: case CLG_OP_SOFTMAX_XENT_BACKWARD:
		return 1;
	default:
		return clg_op_is_elementwise(op);
	}
}

/* Host contents of operand `which` (0 = dst, 1.. = sources) of a case: the same numbers on every
 * backend. The dst is filled too, so that writes outside its view show. */
static void fill_operand(const op_case *c, int which, float *x, size_t n, unsigned seed)
{
	float lo = c->lo, hi = c->hi;

	if (which == 0 && c->op == CLG_OP_ARGMAX) {
		/* an int32 dst: small integers, stored as such */
		suite_fill_uniform(x, n, seed, -1000, 1000);
		for (size_t i = 0; i < n; i++) {
			int32_t v = (int32_t)x[i];
			memcpy(&x[i], &v, sizeof(v));
		}
		return;
	}
	if (c->nops && c->op_dtype[which] == CLG_I32) {
		/* indices (or an int32 dst): integers in [idx_lo, idx_hi), stored as such */
		suite_fill_uniform(x, n, seed, (float)c->idx_lo, (float)(c->idx_hi > c->idx_lo ? c->idx_hi : c->idx_lo + 1));
		for (size_t i = 0; i < n; i++) {
			int32_t v = (int32_t)floorf(x[i]); /* (the integer below: the same as before for idx_lo 0) */
			memcpy(&x[i], &v, sizeof(v));
		}
		return;
	}
	if (which == 0 && c->op == CLG_OP_SOFTMAX_XENT)
		lo = -3, hi = 3; /* the loss's buffer: its unwritten part must not dwarf the loss (logits near 1e4) */
	if (which == 0 && (c->op == CLG_OP_SOFTMAX || c->op == CLG_OP_LOG_SOFTMAX))
		lo = -3, hi = 3; /* outputs in [0, 1] or [-(hi - lo) - ln C, 0]: an unwritten element at 1e4 (or 90)
				  * would dwarf them in the normalized error (x - (m + log s) passed at 1e4) */
	if (which > 0 && (c->zero_src >> (which - 1)) & 1) {
		memset(x, 0, n * sizeof(*x));
		return;
	}
	if (which > 0) {
		switch (c->op) {
		case CLG_OP_POW: /* a positive base, any exponent */
			if (which == 1)
				lo = 0.1f, hi = 2.5f;
			break;
		case CLG_OP_TANH_BACKWARD: /* src1 is the forward output */
			if (which == 2)
				lo = -1, hi = 1;
			break;
		case CLG_OP_SIGMOID_BACKWARD:
		case CLG_OP_SOFTMAX_BACKWARD:
			if (which == 2)
				lo = 0, hi = 1;
			break;
		case CLG_OP_LOG_SOFTMAX_BACKWARD: /* log-probabilities */
			if (which == 2)
				lo = -6, hi = 0;
			break;
		case CLG_OP_SOFTMAX_XENT: /* targets in [0, 3] whatever the logits' range: of one sign, as
					   * PyTorch's probabilities, so the loss adds terms of one sign
					   * (xent_threshold); [-3, 3] cancelled to 1.3e-10 on large logits */
			if (which == 2)
				lo = 0, hi = 3;
			break;
		default:
			break;
		}
	}
	suite_fill_uniform(x, n, seed, lo, hi);
	if (which == 0)
		return;
	if (c->op == CLG_OP_WHERE && which == 1) {
		/* the condition: zeros and non-zeros (1 and -0.5) */
		for (size_t i = 0; i < n; i++) {
			int k = (int)((x[i] - lo) / (hi - lo) * 3);
			x[i] = k == 0 ? 0.0f : k == 1 ? 1.0f : -0.5f;
		}
	}
	if (c->quant)
		for (size_t i = 0; i < n; i++)
			x[i] = roundf(x[i] * 4) / 4;
	if (c->nan_rate > 0 || c->ninf_rate > 0) {
		float *u = malloc(n * sizeof(float));
		if (u) {
			suite_fill_uniform(u, n, seed + 7919u, 0, 1);
			for (size_t i = 0; i < n; i++)
				if (u[i] < c->nan_rate)
					x[i] = NAN;
				else if (u[i] < c->nan_rate + c->ninf_rate)
					x[i] = -INFINITY;
			free(u);
		}
	}
}

/* Lays out one operand of the given logical shape inside a buffer, according to the case layout. */
static void make_view(const op_case *c, int which, int nd, const int64_t *shape, clg_view *v, size_t *elems)
{
	int64_t s = 1, pad = c->layout == L_OFFSET ? 3 : 0, off = c->layout == L_OFFSET ? 5 : 0;
	int transposed = ((c->layout == L_TRANSPOSED && which == 1) || (c->nops && (c->op_trans >> which) & 1)) && nd >= 2;
	int bcast = c->layout == L_BROADCAST && nd >= 1 && which == (nsrc_of(c->op) >= 2 ? 2 : 1);
	int bcast_col = c->layout == L_BCAST_COL && nd >= 2 && which == (nsrc_of(c->op) >= 2 ? 2 : 1);

	memset(v, 0, sizeof(*v));
	v->dtype = which == 0 && c->op == CLG_OP_ARGMAX ? CLG_I32 : c->dtype;
	v->ndim = nd;
	v->offset = off;
	for (int d = 0; d < nd; d++)
		v->shape[d] = shape[d];
	if (c->op == CLG_OP_GEMM) {
		int tr = (which == 1 && c->transA) || (which == 2 && c->transB);
		transposed = tr;
		bcast = 0;
	}
	if (c->dim_last && which == 1 && is_reduce(c->op) && nd >= 2) {
		/* a contiguous (rows padded) tensor whose dim d is the view's last: the storage holds the
		 * view's dims 0..d-1, its last, then d..nd-2 */
		int d0 = c->dim_last - 1;
		int64_t S[CLG_MAX_DIMS], st[CLG_MAX_DIMS];
		for (int k = 0; k < nd; k++)
			S[k] = k < d0 ? shape[k] : k == d0 ? shape[nd - 1] : shape[k - 1];
		st[nd - 1] = 1;
		for (int k = nd - 2; k >= 0; k--)
			st[k] = st[k + 1] * (S[k + 1] + (k + 1 == nd - 1 ? pad : 0));
		for (int k = 0; k < nd; k++)
			v->stride[k] = k < d0 ? st[k] : k == nd - 1 ? st[d0] : st[k + 1];
		*elems = (size_t)(off + S[0] * st[0] + pad + 1);
		return;
	}
	if (transposed) {
		/* last two dims stored swapped (column-major matrix) */
		int a = nd - 2, b = nd - 1;
		v->stride[a] = 1;
		v->stride[b] = shape[a] + pad;
		s = shape[b] * (shape[a] + pad);
		for (int d = nd - 3; d >= 0; d--) {
			v->stride[d] = s;
			s *= shape[d];
		}
	} else {
		for (int d = nd - 1; d >= 0; d--) {
			v->stride[d] = s;
			s *= shape[d] + (d == nd - 1 ? pad : 0);
		}
	}
	if (bcast_col) { /* one value a row, read for every index of the last dim */
		v->stride[nd - 1] = 0;
		s = 1;
		for (int d = nd - 2; d >= 0; d--) {
			v->stride[d] = s;
			s *= shape[d];
		}
	}
	if (c->nops && (c->chan_major & 1) && nd == 4 && !transposed) {
		/* (N, C, H, W) stored as (C, N, H, W): the planes of conv's GEMM layout */
		v->stride[0] = shape[2] * v->stride[2];
		v->stride[1] = shape[0] * v->stride[0];
	}
	if (c->nops && (c->chan_major & 2) && nd == 3 && !transposed) {
		/* (N, R, L) stored as (R, N, L), rows padded: conv's im2col matrix (R, N * L) */
		v->stride[0] = shape[2];
		v->stride[1] = shape[0] * shape[2] + pad;
	}
	if (bcast) {
		/* stored once, read for every index of dim 0 */
		s = s / (shape[0] + (nd == 1 ? pad : 0));
		v->stride[0] = 0;
		if (s == 0)
			s = 1;
	}
	*elems = (size_t)(off + s + pad + 1);
}

/* Logical shapes of dst and sources for a case. */
static int case_shapes(const op_case *c, int64_t shapes[][CLG_MAX_DIMS], int *nds)
{
	int nsrc = nsrc_of(c->op);
	if (c->nops) {
		for (int k = 0; k < c->nops; k++) {
			nds[k] = c->op_nd[k];
			memcpy(shapes[k], c->op_shape[k], sizeof(c->op_shape[k]));
		}
		return c->nops - 1;
	}
	if (c->op == CLG_OP_GEMM) {
		int64_t M = c->shape[0], N = c->shape[1], K = c->shape[2];
		int nd = c->batch ? 3 : 2, o = c->batch ? 1 : 0;
		for (int k = 0; k < 3; k++) {
			nds[k] = nd;
			if (c->batch)
				shapes[k][0] = c->batch;
		}
		shapes[0][o] = M, shapes[0][o + 1] = N;
		shapes[1][o] = M, shapes[1][o + 1] = K;
		shapes[2][o] = K, shapes[2][o + 1] = N;
		return 2;
	}
	if (is_reduce(c->op)) {
		nds[0] = c->nkeep;
		nds[1] = c->nd;
		memcpy(shapes[1], c->shape, sizeof(c->shape));
		memcpy(shapes[0], c->shape, sizeof(c->shape));
		return 1;
	}
	for (int k = 0; k <= nsrc; k++) {
		nds[k] = c->nd;
		memcpy(shapes[k], c->shape, sizeof(c->shape));
	}
	return nsrc;
}

static void case_name(const op_case *c, char *buf, size_t len)
{
	size_t p = (size_t)snprintf(buf, len, "%s [", clg_op_name(c->op));
	int n = c->op == CLG_OP_GEMM ? 3 : c->nops ? c->op_nd[1] : c->nd;
	const int64_t *shape = c->nops ? c->op_shape[1] : c->shape;
	for (int d = 0; d < n; d++)
		p += (size_t)snprintf(buf + p, len - p, d ? "x%lld" : "%lld", (long long)shape[d]);
	if (is_reduce(c->op))
		p += (size_t)snprintf(buf + p, len - p, " keep %d", c->nkeep);
	if (is_reduce(c->op) && c->dim_last)
		p += (size_t)snprintf(buf + p, len - p, " dim %d moved last", c->dim_last - 1);
	if (c->quant)
		p += (size_t)snprintf(buf + p, len - p, " quant");
	if (c->nan_rate > 0)
		p += (size_t)snprintf(buf + p, len - p, " nan");
	if (c->ninf_rate > 0)
		p += (size_t)snprintf(buf + p, len - p, " -inf");
	if (c->tag)
		p += (size_t)snprintf(buf + p, len - p, " %s", c->tag);
	if (c->op == CLG_OP_CAST && c->nops)
		p += (size_t)snprintf(buf + p, len - p, " %s->%s", clg_dtype_name(c->op_dtype[1]), clg_dtype_name(c->op_dtype[0]));
	if (c->op == CLG_OP_GEMM)
		p += (size_t)snprintf(buf + p, len - p, "%s%s batch %d a %.1f b %.1f", c->transA ? " At" : "",
				      c->transB ? " Bt" : "", c->batch, c->f[0], c->f[1]);
	snprintf(buf + p, len - p, "] %s%s", layout_names[c->layout], dtype_suffix(c->dtype));
}

/* Reads operand k of a run (elems elements) into out as float. */
static clg_status read_back(const bound *b, int k, size_t elems, float *out)
{
	clg_status st;
	if (clg_dtype_is_half_storage(b->view[k].dtype)) {
		/* 16-bit results, widened to float for the comparison (exact) */
		uint16_t *h = malloc((elems ? elems : 1) * sizeof(uint16_t));
		st = h ? clg_buffer_download(b->buf[k], 0, h, elems * sizeof(uint16_t)) : CLG_ERR_OOM;
		for (size_t i = 0; !st && i < elems; i++)
			out[i] = from16(b->view[k].dtype, h[i]);
		free(h);
		return st;
	}
	st = clg_buffer_download(b->buf[k], 0, out, elems * sizeof(float));
	if (!st && b->view[k].dtype == CLG_I32) {
		/* int32 results (argmax): convert in place for the comparison, exact below 2^24 */
		for (size_t i = 0; i < elems; i++) {
			int32_t v;
			memcpy(&v, &out[i], sizeof(v));
			out[i] = (float)v;
		}
	}
	return st;
}

/* splitmix64's finalizer: every input bit moves about half of the output bits */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The seed of a case's inputs: a hash (FNV-1a) of its op's NAME, mixed with the case's index
 * among the cases of that op and format (table order) and the run's seed (op_suite_opts.seed).
 * Neither the op's position in clg_ops.def nor any other op's cases enter it, so adding an op
 * (or a case of another op) never changes a case's inputs; the suite used to seed by the op's
 * position, and an op inserted mid-table moved the inputs of every later op. A 16-bit case has
 * the index of the float32 case it copies, hence its numbers (rounded). Filters (--op, --small,
 * quick) do not change it either: the index counts every case of the table. */
static uint64_t case_seed(const op_case *c, int index, uint64_t run_seed)
{
	uint64_t h = 14695981039346656037ull;

	for (const char *p = clg_op_name(c->op); *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return mix64(h ^ mix64((uint64_t)index ^ mix64(run_seed)));
}

/* operand which's stream of a case seeded by seed (case_seed) */
static unsigned operand_seed(uint64_t seed, int which) { return (unsigned)(mix64(seed + (uint64_t)which) >> 32); }

/* Runs a case on one backend (inputs drawn from seed, case_seed); returns the dst buffer contents
 * (malloc'd) or NULL on failure. */
static float *run_case(clg_backend *be, const op_case *c, uint64_t seed, clg_status *status, size_t *dst_elems)
{
	int64_t shapes[1 + CLG_MAX_SRC][CLG_MAX_DIMS] = {{0}};
	int nds[1 + CLG_MAX_SRC] = {0};
	int nsrc = case_shapes(c, shapes, nds);
	bound b;
	clg_op_call call;
	float *out = NULL;
	size_t elems[1 + CLG_MAX_SRC] = {0};
	clg_status st = CLG_OK;

	memset(&b, 0, sizeof(b));
	memset(&call, 0, sizeof(call));
	for (int k = 0; k <= nsrc && !st; k++) {
		float *host;
		size_t es;
		make_view(c, k, nds[k], shapes[k], &b.view[k], &elems[k]);
		if (c->nops)
			b.view[k].dtype = c->op_dtype[k] ? c->op_dtype[k] : c->dtype; /* 0 (float32): the case's */
		es = clg_dtype_size(b.view[k].dtype);
		host = malloc(elems[k] * sizeof(float));
		if (!host) {
			st = CLG_ERR_OOM;
			break;
		}
		fill_operand(c, k, host, elems[k], operand_seed(seed, k));
		st = clg_buffer_alloc(be, elems[k] * es, &b.buf[k]);
		if (!st && clg_dtype_is_half_storage(b.view[k].dtype)) {
			/* the same numbers rounded to half (or bfloat16) */
			uint16_t *h = malloc(elems[k] * sizeof(uint16_t));
			st = h ? CLG_OK : CLG_ERR_OOM;
			for (size_t i = 0; h && i < elems[k]; i++)
				h[i] = to16(b.view[k].dtype, host[i]);
			if (!st)
				st = clg_buffer_upload(b.buf[k], 0, h, elems[k] * es);
			free(h);
		} else if (!st) {
			st = clg_buffer_upload(b.buf[k], 0, host, elems[k] * es);
		}
		b.view[k].buf = b.buf[k];
		free(host);
	}
	if (!st) {
		call.op = c->op;
		call.dst = b.view[0];
		for (int k = 0; k < nsrc; k++)
			call.src[k] = b.view[k + 1];
		memcpy(call.f, c->f, sizeof(call.f));
		memcpy(call.i, c->i, sizeof(call.i));
		st = clg_run(be, &call);
	}
	if (!st) {
		size_t total = elems[0], at = elems[0];
		for (int k = 1; k <= nsrc; k++)
			total += c->check_src & (1 << (k - 1)) ? elems[k] : 0;
		out = malloc(total * sizeof(float));
		st = out ? read_back(&b, 0, elems[0], out) : CLG_ERR_OOM;
		/* sources the op writes in place, after the dst */
		for (int k = 1; !st && k <= nsrc; k++) {
			if (!(c->check_src & (1 << (k - 1))))
				continue;
			st = read_back(&b, k, elems[k], out + at);
			at += elems[k];
		}
		elems[0] = total;
	}
	for (int k = 0; k <= nsrc; k++)
		clg_buffer_free(b.buf[k]);
	*status = st;
	*dst_elems = elems[0];
	if (st) {
		free(out);
		return NULL;
	}
	return out;
}

/* NaN/Inf agreement, then normalized squared error. Returns the error (INFINITY on disagreement). */
static double compare(const float *ref, const float *dev, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(ref[i]) != isnan(dev[i]) || isinf(ref[i]) != isinf(dev[i]))
			return INFINITY;
		if (isnan(ref[i]) || isinf(ref[i])) {
			if (isinf(ref[i]) && ref[i] != dev[i])
				return INFINITY;
			continue;
		}
		num += ((double)ref[i] - dev[i]) * ((double)ref[i] - dev[i]);
		den += (double)ref[i] * ref[i];
	}
	return den > 0 ? num / den : num;
}

/* The absolute difference below which two 16-bit results of a case count as equal (half_ulps): 0
 * (any difference counts) but for log_softmax, whose outputs y = (x - m) - log(s), s = sum_j
 * exp(x_j - m) in [1, C], reach 0 at the row's max: there a result is known to float32's absolute
 * error in log(s), not to a 16-bit ulp of |y|, and a 16-bit ulp near 0 is tiny (bfloat16 keeps
 * float's exponent range). The devices compute as PyTorch does for 16-bit inputs (float32
 * accumulation, (x - m) - log(s) in that order, one rounding of the output); the reference in
 * double. A row of C elements holding a max m and, say, m - 40 gives log(s) = 4e-18, exact in
 * bfloat16 for the reference but 1 + 4e-18 = 1 in float: 0 on the device, 13,000 bfloat16 ulps
 * away and right to float32's precision. The bound: each exp within 3 ulps (OpenCL's full
 * profile), the C-term sum adds (C - 1) u relative (u = 2^-24, recursive summation's bound,
 * which a tree's also meets), so s is within (C + 2) u relative and log(s) within (C + 2) u
 * absolute plus log's own 3 ulps of |log(s)| <= ln C; the reference's rounding to float and the
 * device's subtraction add u |y| each, which the ulp count covers. Hence (C + 2 + 3 ln C + 1) u,
 * a few 1e-7 for short rows: a wrong max, sum or log still moves results by far more (see
 * rows.cmake's planted kernels), and results away from 0 are held to the ulp count as before. */
static double half_abs_tol(const op_case *c)
{
	if (c->op != CLG_OP_LOG_SOFTMAX || c->nops || c->nd < 1)
		return 0;
	double C = (double)c->shape[c->nd - 1];
	return (C + 3 + 3 * log(C)) * 0x1p-24;
}

/* float16 results in units in the last place: the number of elements that differ and the largest
 * difference (halves ordered as integers, -0 and +0 equal; NaN and inf positions are compare()'s).
 * Differences of at most abs_tol (half_abs_tol) are not counted. */
static void half_ulps(clg_dtype t, const float *ref, const float *dev, size_t n, double abs_tol, size_t *ndiff,
		      int *maxulp)
{
	*ndiff = 0;
	*maxulp = 0;
	for (size_t i = 0; i < n; i++) {
		uint16_t hr, hd;
		int a, b, d;
		if (isnan(ref[i]) || isnan(dev[i]) || fabs((double)ref[i] - dev[i]) <= abs_tol)
			continue;
		hr = to16(t, ref[i]); /* exact: both are 16-bit values */
		hd = to16(t, dev[i]);
		a = hr & 0x8000u ? -(int)(hr & 0x7fffu) : (int)hr;
		b = hd & 0x8000u ? -(int)(hd & 0x7fffu) : (int)hd;
		d = a > b ? a - b : b - a;
		if (d) {
			(*ndiff)++;
			if (d > *maxulp)
				*maxulp = d;
		}
	}
}

/* ---- the case table ---- */

/* ---- the case table: built once, on first use ---- */

static op_case *cases; /* [ncases] */
static int ncases, cap_cases, table_oom;

static void add(op_case c)
{
	if (ncases == cap_cases) {
		int cap = cap_cases ? 2 * cap_cases : 4096;
		op_case *p = realloc(cases, sizeof(*p) * (size_t)cap);
		if (!p) {
			table_oom = 1;
			return;
		}
		cases = p;
		cap_cases = cap;
	}
	cases[ncases++] = c;
}

/* The input range and parameters of an elementwise case of op (on top of [-2, 2), f = {1.5, -0.25}). */
static void ew_inputs(op_case *c)
{
	switch (c->op) {
	case CLG_OP_LOG:
		c->lo = 0.01f;
		break;
	case CLG_OP_DIV:
		c->lo = 0.5f; /* keep divisors away from zero */
		break;
	case CLG_OP_SQRT:
	case CLG_OP_RSQRT:
		c->lo = 0.01f, c->hi = 4;
		break;
	case CLG_OP_SIGMOID:
	case CLG_OP_SILU:
	case CLG_OP_GELU:
	case CLG_OP_GELU_BACKWARD:
	case CLG_OP_SILU_BACKWARD:
	case CLG_OP_GELU_TANH:
	case CLG_OP_GELU_TANH_BACKWARD:
		c->lo = -10, c->hi = 10; /* into the tails */
		break;
	case CLG_OP_LEAKY_RELU:
	case CLG_OP_LEAKY_RELU_BACKWARD:
		c->f[0] = 0.1;
		c->quant = 1; /* exact zeros */
		break;
	case CLG_OP_CLAMP:
	case CLG_OP_CLAMP_BACKWARD:
		c->f[0] = -0.5, c->f[1] = 0.75;
		c->quant = 1; /* elements exactly on both bounds */
		break;
	case CLG_OP_CLAMP_TENSOR: /* elements equal to their bounds, crossed bounds, NaN in x and bounds */
		c->quant = 1;
		c->nan_rate = 0.05f;
		break;
	case CLG_OP_ABS:
	case CLG_OP_ABS_BACKWARD:
	case CLG_OP_CMP_EQ:
	case CLG_OP_CMP_LT:
	case CLG_OP_CMP_LE:
	case CLG_OP_CMP_GT:
	case CLG_OP_CMP_GE:
		c->quant = 1; /* exact zeros, equal pairs */
		break;
	default:
		break;
	}
}

static void build_cases(void)
{
	static const int64_t ew_shapes[][CLG_MAX_DIMS + 1] = {
		/* nd, dims... : odd sizes, primes, non-multiples of work-group sizes */
		{1, 1}, {1, 7}, {1, 257}, {1, 1000}, {2, 3, 5}, {2, 31, 17}, {3, 4, 1, 9}, {4, 2, 3, 4, 5}, {2, 64, 300},
	};
	for (int op = 0; op < CLG_OP_COUNT; op++) {
		if (!clg_op_is_elementwise((clg_op)op))
			continue;
		for (size_t s = 0; s < sizeof(ew_shapes) / sizeof(ew_shapes[0]); s++) {
			for (int l = 0; l < L_COUNT; l++) {
				op_case c = {.op = (clg_op)op, .nd = (int)ew_shapes[s][0], .layout = (enum layout)l,
					     .lo = -2, .hi = 2, .f = {1.5, -0.25}};
				if (l == L_TRANSPOSED && c.nd < 2)
					continue;
				if ((l == L_BROADCAST || l == L_BCAST_COL) && clg_op_nsrc((clg_op)op) == 0)
					continue;
				if (l == L_BCAST_COL && c.nd < 2)
					continue;
				memcpy(c.shape, &ew_shapes[s][1], sizeof(c.shape));
				ew_inputs(&c);
				add(c);
			}
		}
	}
	static const int64_t red_shapes[][CLG_MAX_DIMS + 2] = {
		/* nd, nkeep, dims... */
		{1, 0, 1}, {1, 0, 1000}, {1, 0, 100003}, {2, 1, 3, 5}, {2, 1, 128, 10}, {2, 1, 7, 4099},
		{3, 1, 5, 6, 7}, {3, 2, 4, 3, 65}, {3, 0, 4, 3, 65}, {4, 2, 2, 3, 4, 5}, {2, 1, 6, 1}, {2, 1, 2, 31},
	};
	static const clg_op red_ops[] = {CLG_OP_SUM, CLG_OP_MAX, CLG_OP_MIN, CLG_OP_ARGMAX};
	for (size_t o = 0; o < sizeof(red_ops) / sizeof(red_ops[0]); o++) {
		for (size_t s = 0; s < sizeof(red_shapes) / sizeof(red_shapes[0]); s++) {
			int64_t R = 1;
			for (int d = (int)red_shapes[s][1]; d < (int)red_shapes[s][0]; d++)
				R *= red_shapes[s][2 + d];
			for (int l = 0; l < L_COUNT; l++) {
				/* max, min, argmax also meet ties and NaN (in about half of the outputs) */
				for (int v = 0; v < (red_ops[o] == CLG_OP_SUM ? 1 : 3); v++) {
					op_case c = {.op = red_ops[o], .nd = (int)red_shapes[s][0],
						     .nkeep = (int)red_shapes[s][1], .layout = (enum layout)l, .lo = -1, .hi = 1,
						     .quant = v == 1, .nan_rate = v == 2 ? 0.7f / (float)R : 0};
					if (l == L_BROADCAST || l == L_BCAST_COL || (l == L_TRANSPOSED && c.nd < 2))
						continue;
					memcpy(c.shape, &red_shapes[s][2], sizeof(c.shape));
					add(c);
				}
			}
		}
	}
	/* max, min, argmax over a dim other than the last (clg_max_dim ...): the source a contiguous
	 * tensor with that dim moved last, the kept dims strided; plain, with ties, with NaN */
	static const int64_t dim_shapes[][CLG_MAX_DIMS + 2] = {
		/* nd, the dim moved last, the view's dims... */
		{2, 0, 7, 5}, {3, 0, 3, 65, 4}, {3, 1, 4, 6, 7}, {3, 0, 5, 7, 33}, {4, 2, 2, 3, 4, 5}, {3, 1, 2, 129, 3},
	};
	for (size_t o = 1; o < sizeof(red_ops) / sizeof(red_ops[0]); o++) {
		for (size_t s = 0; s < sizeof(dim_shapes) / sizeof(dim_shapes[0]); s++) {
			int nd = (int)dim_shapes[s][0];
			for (int l = 0; l < 2; l++) {
				for (int v = 0; v < 3; v++) {
					op_case c = {.op = red_ops[o], .nd = nd, .nkeep = nd - 1, .dim_last = (int)dim_shapes[s][1] + 1,
						     .layout = l ? L_OFFSET : L_CONTIG, .lo = -1, .hi = 1, .quant = v == 1,
						     .nan_rate = v == 2 ? 0.7f / (float)dim_shapes[s][1 + nd] : 0};
					memcpy(c.shape, &dim_shapes[s][2], sizeof(int64_t) * (size_t)nd);
					add(c);
				}
			}
		}
	}
	static const int64_t row_shapes[][CLG_MAX_DIMS + 1] = {
		/* nd, dims...: the last dim is the row */
		{2, 1, 1}, {1, 7}, {2, 5, 1}, {2, 7, 10}, {2, 3, 17}, {2, 2, 31}, {3, 2, 2, 13}, {2, 128, 10},
		{2, 3, 1000}, {3, 2, 3, 65}, {2, 4, 257},
	};
	static const clg_op row_ops[] = {CLG_OP_SOFTMAX, CLG_OP_LOG_SOFTMAX, CLG_OP_SOFTMAX_BACKWARD,
					 CLG_OP_LOG_SOFTMAX_BACKWARD};
	for (size_t o = 0; o < sizeof(row_ops) / sizeof(row_ops[0]); o++) {
		for (size_t s = 0; s < sizeof(row_shapes) / sizeof(row_shapes[0]); s++) {
			for (int l = 0; l < L_COUNT; l++) {
				op_case c = {.op = row_ops[o], .nd = (int)row_shapes[s][0], .layout = (enum layout)l,
					     .lo = -2, .hi = 2};
				if ((l == L_TRANSPOSED && c.nd < 2) || l == L_BCAST_COL)
					continue;
				memcpy(c.shape, &row_shapes[s][1], sizeof(c.shape));
				add(c);
				if (row_ops[o] == CLG_OP_SOFTMAX || row_ops[o] == CLG_OP_LOG_SOFTMAX) {
					/* logits whose exp overflows float: only the max subtraction saves them */
					c.lo = 80, c.hi = 120, c.tag = "large";
					add(c);
				}
			}
		}
	}
	/* For the own CPU kernels (kernels_cl/gemm.cl), where the device prefers vectors of 4 floats
	 * (Oclgrind; small enough for --small): {6, 8, 10} is one full tile of gemm_op, {4, 6, 16}
	 * full tiles of gemm_dot (Bt), {2, 17, 9} edge tiles and a tail along k. Operands whose rows
	 * along k are a multiple of 512 bytes apart are packed first where K > 512: B and A stored
	 * transposed (At, At Bt) in {128, 128, 520}; with K up to 512 they are read as stored: B in
	 * {70, 512, 100}, A stored transposed in {128, 10, 512} and {512, 33, 70}. A long side (at
	 * least 8192) takes other default tiles on AVX-512 devices (long_side_tile in cl_gemm.c): long
	 * rows of C in {5, 8200, 7}, long dot products in {6, 13, 8195}. A @ B^T with 256 rows or more
	 * packs B^T and runs gemm_op (clg_cl_gemm_op_for_bt): {300, 37, 19}, edge tiles both ways and an odd K.
	 * gemm_op's last tile along q loads whole vectors where its width is a multiple of them (the MLP's
	 * 784 columns): {3, 20, 5} with 4-float vectors (tile 8), {5, 56, 9} with 8 (tile 16), {64, 48, 32}
	 * with 16 (tile 32). */
	static const int64_t mnk[][3] = {{1, 1, 1}, {7, 5, 3}, {6, 8, 10}, {4, 6, 16}, {2, 17, 9}, {64, 48, 32},
					 {129, 65, 33}, {128, 10, 512}, {3, 257, 17}, {70, 512, 100}, {512, 33, 70},
					 {128, 128, 520}, {5, 8200, 7}, {6, 13, 8195}, {300, 37, 19}, {3, 20, 5},
					 {5, 56, 9}};
	for (size_t s = 0; s < sizeof(mnk) / sizeof(mnk[0]); s++) {
		for (int t = 0; t < 4; t++) {
			for (int batch = 0; batch <= 3; batch += 3) {
				op_case c = {.op = CLG_OP_GEMM, .nd = 3, .transA = t & 1, .transB = (t >> 1) & 1,
					     .batch = batch, .lo = -1, .hi = 1, .f = {1.0, 0.0}};
				memcpy(c.shape, mnk[s], sizeof(mnk[s]));
				if (s == 5 && t == 0 && !batch) {
					op_case ab = c;
					ab.f[0] = 0.5, ab.f[1] = 2.0; /* alpha and beta: accumulate into dst */
					add(ab);
				}
				add(c);
			}
		}
	}
}

static int small_case(const op_case *c)
{
	int64_t n = 1;
	if (c->nops) { /* every operand at most 256 elements */
		for (int k = 0; k < c->nops; k++) {
			int64_t m = 1;
			for (int d = 0; d < c->op_nd[k]; d++)
				m *= c->op_shape[k][d];
			if (m > 256)
				return 0;
		}
		return 1;
	}
	int dims = c->op == CLG_OP_GEMM ? 3 : c->nd;
	for (int d = 0; d < dims; d++)
		n *= c->shape[d];
	return c->op == CLG_OP_GEMM ? (c->shape[0] * c->shape[1] <= 64 && c->shape[2] <= 64 && c->shape[0] * c->shape[2] <= 64) : n <= 64;
}

/* The case families of tests/ops_cases_*.c (declared in tests/test_ops.h), after the base cases
 * above: the one list to extend when a family is added. */
static void (*const ops_families[])(op_case_adder) = {
	ops_cases_conv,
	ops_cases_index,
	ops_cases_norm,
	ops_cases_optim,
	ops_cases_fused,
	ops_cases_quant,
	ops_cases_rows,
	ops_cases_cast,
	ops_cases_fft,
	ops_cases_attention,
	ops_cases_addnorm,
};

/* How many values of 16-bit format t lie in [lo, hi] (in half_ulps' integer order). Rows at 1000
 * spread 1 (the norms' "shifted" cases) hold three float16 values and one bfloat16: their results
 * repeat a handful of values, so where the two sides' float32 results of one of them straddle a
 * rounding boundary every element holding it differs at once (535 of 3001 layer_norm results by
 * one ulp, on test_ops --seed 1, PoCL and Intel alike), and the limit on how many results may
 * differ (half_max_diffs), which assumes independent roundings, measures nothing there. Such a
 * case is not copied to that format; its float32 case keeps the inputs (and the cancellation
 * they test). */
static int values16(clg_dtype t, float lo, float hi)
{
	uint16_t a = to16(t, lo), b = to16(t, hi);
	int ia = a & 0x8000u ? -(int)(a & 0x7fffu) : (int)a, ib = b & 0x8000u ? -(int)(b & 0x7fffu) : (int)b;

	return (ib > ia ? ib - ia : ia - ib) + 1;
}

static int build_table(void)
{
	static int built;

	if (built)
		return table_oom ? -1 : 0;
	built = 1;
	build_cases();
	for (size_t f = 0; f < sizeof(ops_families) / sizeof(ops_families[0]); f++)
		ops_families[f](add);
	/* every case of an op with a 16-bit path, again in float16 and in bfloat16, but in a format
	 * that rounds the case's input range to fewer than 16 values (values16) */
	for (int ci = 0, n = ncases; ci < n && !table_oom; ci++) {
		if (takes_f16(cases[ci].op) && !(cases[ci].op == CLG_OP_CAST && cases[ci].nops)) {
			op_case h = cases[ci];
			h.dtype = CLG_F16;
			if (values16(CLG_F16, h.lo, h.hi) >= 16)
				add(h);
			h.dtype = CLG_BF16;
			if (values16(CLG_BF16, h.lo, h.hi) >= 16)
				add(h);
		}
	}
	return table_oom ? -1 : 0;
}

int op_suite_case_count(void)
{
	return build_table() ? -1 : ncases;
}

uint64_t op_suite_case_hash(void)
{
	uint64_t h = 14695981039346656037ull;
	char name[OP_SUITE_NAME_LEN];

	if (build_table())
		return 0;
	for (int ci = 0; ci < ncases; ci++) {
		case_name(&cases[ci], name, sizeof(name));
		for (const char *p = name; ; p++) { /* the NUL too: "ab","c" differs from "a","bc" */
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
			if (!*p)
				break;
		}
	}
	return h;
}

/* o->op is one op name or a comma-separated list of them */
static int op_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

static int selected(const op_suite_opts *o, const op_case *c)
{
	if (o->op && !op_listed(o->op, clg_op_name(c->op)))
		return 0;
	return !o->small || small_case(c);
}

/* Which cases run: the filters, then (quick) every k-th case of each op and dtype so that at most
 * OP_SUITE_QUICK_PER_OP of each remain, spread over its shapes and layouts. */
static char *pick_cases(const op_suite_opts *o)
{
	int count[3][CLG_OP_COUNT] = {{0}}, seen[3][CLG_OP_COUNT] = {{0}};
	char *pick = calloc((size_t)ncases + 1, 1);

	if (!pick)
		return NULL;
	for (int ci = 0; ci < ncases; ci++)
		if (selected(o, &cases[ci]))
			count[format_index(cases[ci].dtype)][cases[ci].op]++;
	for (int ci = 0; ci < ncases; ci++) {
		const op_case *c = &cases[ci];
		int h = format_index(c->dtype), n = count[h][c->op];
		int stride = (n + OP_SUITE_QUICK_PER_OP - 1) / OP_SUITE_QUICK_PER_OP;
		if (!selected(o, c))
			continue;
		pick[ci] = !o->quick || seen[h][c->op] % stride == 0;
		seen[h][c->op]++;
	}
	return pick;
}

static void set_message(op_case_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_message(op_case_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
}

/* Runs one case on both backends (the same inputs, from seed: case_seed) and fills r. */
static void run_one(clg_backend *ref, clg_backend *dev, const op_case *c, uint64_t seed, op_case_result *r, int verbose)
{
	clg_status sr, sd;
	size_t nr = 0, nd = 0;
	float *rv, *dv;
	char ref_err[256] = "";

	memset(r, 0, sizeof(*r));
	case_name(c, r->name, sizeof(r->name));
	snprintf(r->op, sizeof(r->op), "%s%s", clg_op_name(c->op), dtype_suffix(c->dtype));
	r->opcode = c->op;
	r->f16 = format_index(c->dtype);
	r->threshold = threshold(c);
	r->err = NAN;
	if (verbose) { /* the name first, flushed: a case that hangs a device is named in the log */
		printf("  %-60s ", r->name);
		fflush(stdout);
	}
	rv = run_case(ref, c, seed, &sr, &nr);
	if (sr)
		snprintf(ref_err, sizeof(ref_err), "%s", clg_last_error());
	dv = run_case(dev, c, seed, &sd, &nd);
	r->nelems = nr;
	if (sr) {
		r->outcome = OP_CASE_FAIL;
		set_message(r, "reference failed on %s: %s", r->name, ref_err);
		if (verbose)
			printf("reference failed\n");
	} else if (sd == CLG_ERR_UNSUPPORTED) {
		r->outcome = OP_CASE_UNSUPPORTED;
		set_message(r, "%s not supported on %s: %s", r->name, dev->info.name, clg_last_error());
		if (verbose)
			printf("not supported\n");
	} else if (sd != CLG_OK) {
		r->outcome = OP_CASE_FAIL;
		set_message(r, "%s on %s failed: %s", r->name, dev->info.name, clg_last_error());
		if (verbose)
			printf("failed\n");
	} else {
		size_t max_diffs = r->f16 ? half_max_diffs(nr) : nr;
		if (c->dtype == CLG_F16 && clg_half_native(&dev->info) && clg_op_is_elementwise(c->op)) {
			r->threshold = native_half_threshold(c->op);
			max_diffs = nr;
		}
		r->err = compare(rv, dv, nr);
		if (r->f16)
			half_ulps(c->dtype, rv, dv, nr, half_abs_tol(c), &r->ndiff, &r->maxulp);
		if (r->err <= r->threshold && r->ndiff <= max_diffs) {
			r->outcome = OP_CASE_PASS;
		} else if (r->err <= r->threshold) {
			r->outcome = OP_CASE_FAIL;
			set_message(r, "%s on %s: %zu of %zu %s results differ (at most %d ulp), more than %zu",
				    r->name, dev->info.name, r->ndiff, nr, clg_dtype_name(c->dtype), r->maxulp, max_diffs);
		} else {
			r->outcome = OP_CASE_FAIL;
			set_message(r, "%s on %s: normalized error %.3g > %.3g", r->name, dev->info.name, r->err,
				    r->threshold);
		}
		if (verbose && r->f16)
			printf("err %.3g, %zu of %zu differ, at most %d ulp\n", r->err, r->ndiff, nr, r->maxulp);
		else if (verbose)
			printf("err %.3g\n", r->err);
	}
	free(rv);
	free(dv);
}

/* Adds a case to its op's line (slot: per op and dtype, -1 until met). */
static void tally(op_suite_report *rep, int slot[3][CLG_OP_COUNT], const op_case_result *r)
{
	op_result *t;
	int *s = &slot[r->f16][r->opcode];

	if (*s < 0) {
		*s = rep->nops++;
		t = &rep->ops[*s];
		memset(t, 0, sizeof(*t));
		snprintf(t->op, sizeof(t->op), "%s", r->op);
		t->opcode = r->opcode;
		t->f16 = r->f16;
		t->worst_err = NAN;
		t->threshold = r->threshold;
	}
	t = &rep->ops[*s];
	if (r->outcome == OP_CASE_PASS)
		t->pass++, rep->pass++;
	else if (r->outcome == OP_CASE_FAIL)
		t->fail++, rep->fail++;
	else
		t->unsupported++, rep->unsupported++;
	/* the worst compared case: NaN never compares greater, INFINITY always does */
	if (!isnan(r->err) && (isnan(t->worst_err) || r->err > t->worst_err ||
			       (r->err == t->worst_err && r->outcome == OP_CASE_FAIL))) {
		t->worst_err = r->err;
		t->threshold = r->threshold;
		snprintf(t->worst_case, sizeof(t->worst_case), "%s", r->name);
	}
}

/* Puts the op lines in tally order: float32 ops by id, then float16 ops by id. */
static void sort_ops(op_suite_report *rep, int slot[3][CLG_OP_COUNT])
{
	op_result *sorted = malloc(sizeof(*sorted) * (size_t)(rep->nops ? rep->nops : 1));
	int n = 0;

	if (!sorted)
		return; /* left in the order met */
	for (int h = 0; h < 3; h++)
		for (int op = 0; op < CLG_OP_COUNT; op++)
			if (slot[h][op] >= 0)
				sorted[n++] = rep->ops[slot[h][op]];
	memcpy(rep->ops, sorted, sizeof(*sorted) * (size_t)n);
	free(sorted);
}

clg_status op_suite_run(clg_backend *ref, clg_backend *dev, const op_suite_opts *o, op_suite_report *rep)
{
	static const op_suite_opts defaults;
	int slot[3][CLG_OP_COUNT], index[3][CLG_OP_COUNT] = {{0}};
	int npick = 0;
	char *pick = NULL;
	clg_status st = CLG_OK;

	memset(rep, 0, sizeof(*rep));
	if (!o)
		o = &defaults;
	if (!ref || !dev)
		return clg_fail(CLG_ERR_INVALID, "op suite: no %s backend", ref ? "device" : "reference");
	if (build_table())
		return clg_fail(CLG_ERR_OOM, "op suite: out of memory building the case table");
	pick = pick_cases(o);
	if (!pick)
		return clg_fail(CLG_ERR_OOM, "op suite: out of memory");
	for (int ci = 0; ci < ncases; ci++)
		npick += pick[ci];
	rep->cases = calloc((size_t)npick + 1, sizeof(*rep->cases));
	rep->ops = calloc(3 * CLG_OP_COUNT, sizeof(*rep->ops)); /* per op and format (float32, float16, bfloat16) */
	if (!rep->cases || !rep->ops) {
		st = clg_fail(CLG_ERR_OOM, "op suite: out of memory for %d results", npick);
		goto free_pick;
	}
	memset(slot, -1, sizeof(slot));
	for (int ci = 0; ci < ncases; ci++) {
		op_case_result *r = &rep->cases[rep->ncases];
		int *at = &index[format_index(cases[ci].dtype)][cases[ci].op];
		uint64_t seed = case_seed(&cases[ci], (*at)++, o->seed); /* counted whether picked or not */
		if (!pick[ci])
			continue;
		run_one(ref, dev, &cases[ci], seed, r, o->verbose);
		rep->ncases++;
		tally(rep, slot, r);
		if (o->on_case)
			o->on_case(r, o->ctx);
	}
	sort_ops(rep, slot);
free_pick:
	free(pick);
	return st;
}

void op_suite_report_free(op_suite_report *rep)
{
	if (!rep)
		return;
	free(rep->cases);
	free(rep->ops);
	memset(rep, 0, sizeof(*rep));
}
