/* Reference implementations: straightforward loops over strided views, computed in double.
 * Elementwise, reductions and GEMM here; the ROW ops (softmax family) are in ref_ops_row.c. */
#include "ref_internal.h"

#include <math.h>
#include <string.h>

#define load clg_ref_load
#define store clg_ref_store
#define next_index clg_ref_next_index

#define SQRT1_2 0.70710678118654752440     /* 1 / sqrt(2) */
#define INV_SQRT_2PI 0.39894228040143267794 /* 1 / sqrt(2 pi) */
#define GELU_TANH_K 0.79788456080286535588  /* sqrt(2 / pi) */

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Phi(x), the standard normal CDF; erfc keeps its precision for negative x */
static double normal_cdf(double x) { return 0.5 * erfc(-x * SQRT1_2); }

/* One elementwise op on sources x, y, z (those the op has; see clg_ops.def). */
static double ew_apply(clg_op op, double x, double y, double z, const double *f)
{
	switch (op) {
	case CLG_OP_COPY: return x;
	case CLG_OP_CAST: return x; /* load read the src's dtype, store rounds to the dst's */
	case CLG_OP_FILL: return f[0];
	case CLG_OP_ADD: return x + y;
	case CLG_OP_SUB: return x - y;
	case CLG_OP_MUL: return x * y;
	case CLG_OP_DIV: return x / y;
	case CLG_OP_NEG: return -x;
	case CLG_OP_EXP: return exp(x);
	case CLG_OP_LOG: return log(x);
	case CLG_OP_TANH: return tanh(x);
	case CLG_OP_RELU: return x > 0 ? x : 0;
	case CLG_OP_RELU_BACKWARD: return y > 0 ? x : 0;
	case CLG_OP_SCALE: return f[0] * x + f[1];
	case CLG_OP_POW: return pow(x, y);
	case CLG_OP_ABS: return fabs(x);
	case CLG_OP_SQRT: return sqrt(x);
	case CLG_OP_RSQRT: return 1.0 / sqrt(x);
	case CLG_OP_SIGMOID: return sigmoid(x);
	case CLG_OP_LEAKY_RELU: return x > 0 ? x : f[0] * x;
	case CLG_OP_GELU: return x * normal_cdf(x);
	case CLG_OP_SILU: return x * sigmoid(x);
	case CLG_OP_GELU_TANH: /* 0.5 x (1 + tanh(u)) as x sigmoid(2 u): no cancellation in the negative tail */
		return x * sigmoid(2 * GELU_TANH_K * (x + 0.044715 * x * x * x));
	case CLG_OP_CLAMP: {
		/* min(max(x, lo), hi) with NaN passing through */
		double t = x < f[0] ? f[0] : x;
		return t > f[1] ? f[1] : t;
	}
	case CLG_OP_CMP_EQ: return x == y;
	case CLG_OP_CMP_LT: return x < y;
	case CLG_OP_CMP_LE: return x <= y;
	case CLG_OP_CMP_GT: return x > y;
	case CLG_OP_CMP_GE: return x >= y;
	case CLG_OP_WHERE: return x != 0 ? y : z;
	case CLG_OP_TANH_BACKWARD: return x * (1 - y * y);
	case CLG_OP_SIGMOID_BACKWARD: return x * y * (1 - y);
	case CLG_OP_GELU_BACKWARD: return x * (normal_cdf(y) + y * exp(-0.5 * y * y) * INV_SQRT_2PI);
	case CLG_OP_SILU_BACKWARD: {
		double s = sigmoid(y);
		return x * s * (1 + y * (1 - s));
	}
	case CLG_OP_GELU_TANH_BACKWARD: {
		double s = sigmoid(2 * GELU_TANH_K * (y + 0.044715 * y * y * y));
		return x * (s + y * s * (1 - s) * 2 * GELU_TANH_K * (1 + 3 * 0.044715 * y * y));
	}
	case CLG_OP_LEAKY_RELU_BACKWARD: return y > 0 ? x : f[0] * x;
	case CLG_OP_CLAMP_BACKWARD: return y >= f[0] && y <= f[1] ? x : 0;
	case CLG_OP_ABS_BACKWARD: return y > 0 ? x : y < 0 ? -x : 0;
	default: return NAN;
	}
}

static clg_status ref_elementwise(clg_backend *be, const clg_op_call *c)
{
	const clg_view *v[4] = {&c->dst, &c->src[0], &c->src[1], &c->src[2]};
	int nsrc = clg_op_nsrc(c->op), nv = 1 + nsrc;
	int64_t idx[CLG_MAX_DIMS] = {0}, off[4];

	(void)be;
	if (clg_view_numel(&c->dst) == 0)
		return CLG_OK;
	for (int k = 0; k < nv; k++)
		off[k] = v[k]->offset;
	do {
		double x[3] = {0, 0, 0};
		for (int k = 0; k < nsrc; k++)
			x[k] = load(v[k + 1], off[k + 1]);
		store(v[0], off[0], ew_apply(c->op, x[0], x[1], x[2], c->f));
	} while (next_index(c->dst.ndim, c->dst.shape, idx, v, nv, off));
	return CLG_OK;
}

/* SUM, MAX, MIN and ARGMAX over the src's trailing dims. MAX and MIN propagate NaN; ARGMAX takes
 * NaN as the largest value and the first index on ties. An empty reduction gives 0, -inf, +inf
 * and -1 respectively. */
static clg_status ref_reduce(clg_backend *be, const clg_op_call *c)
{
	const clg_view *s = &c->src[0], *d = &c->dst;
	int nout = d->ndim, nred = s->ndim - d->ndim;
	int64_t oidx[CLG_MAX_DIMS] = {0}, ridx[CLG_MAX_DIMS] = {0}, off[2];
	const clg_view *ov[2] = {d, s};
	clg_op op = c->op;

	(void)be;
	if (op == CLG_OP_ARGMAX && d->dtype != CLG_I32)
		return clg_fail(CLG_ERR_DTYPE, "op 'argmax' on device '%s': dst is %s, must be int32", be->info.name,
				clg_dtype_name(d->dtype));
	if (clg_view_numel(d) == 0)
		return CLG_OK;
	off[0] = d->offset;
	off[1] = s->offset;
	do {
		/* a view of the src's reduced dims, starting at this output's row */
		clg_view red = *s;
		const clg_view *rv[1] = {&red};
		int64_t roff[1] = {off[1]}, r = 0, best = -1;
		double acc = op == CLG_OP_MAX || op == CLG_OP_ARGMAX ? -INFINITY : op == CLG_OP_MIN ? INFINITY : 0;
		red.ndim = nred;
		for (int k = 0; k < nred; k++) {
			red.shape[k] = s->shape[nout + k];
			red.stride[k] = s->stride[nout + k];
			ridx[k] = 0;
		}
		if (clg_view_numel(&red) > 0) {
			do {
				double x = load(s, roff[0]);
				switch (op) {
				case CLG_OP_MAX:
					if (!isnan(acc) && (x > acc || isnan(x)))
						acc = x;
					break;
				case CLG_OP_MIN:
					if (!isnan(acc) && (x < acc || isnan(x)))
						acc = x;
					break;
				case CLG_OP_ARGMAX:
					if (best < 0 || (!isnan(acc) && (x > acc || isnan(x)))) {
						acc = x;
						best = r;
					}
					break;
				default:
					acc += x;
					break;
				}
				r++;
			} while (next_index(nred, red.shape, ridx, rv, 1, roff));
		}
		store(d, off[0], op == CLG_OP_ARGMAX ? (double)best : acc);
	} while (next_index(nout, d->shape, oidx, ov, 2, off));
	return CLG_OK;
}

static clg_status ref_gemm(clg_backend *be, const clg_op_call *c)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst;
	int nd = C->ndim;
	int64_t batch = nd == 3 ? C->shape[0] : 1;
	int64_t M = C->shape[nd - 2], N = C->shape[nd - 1], K = A->shape[nd - 1];
	double alpha = c->f[0], beta = c->f[1];

	(void)be;
	for (int64_t b = 0; b < batch; b++) {
		int64_t ao = A->offset + (nd == 3 ? b * A->stride[0] : 0);
		int64_t bo = B->offset + (nd == 3 ? b * B->stride[0] : 0);
		int64_t co = C->offset + (nd == 3 ? b * C->stride[0] : 0);
		for (int64_t i = 0; i < M; i++) {
			for (int64_t j = 0; j < N; j++) {
				double acc = 0;
				int64_t cij = co + i * C->stride[nd - 2] + j * C->stride[nd - 1];
				for (int64_t k = 0; k < K; k++)
					acc += load(A, ao + i * A->stride[nd - 2] + k * A->stride[nd - 1]) *
					       load(B, bo + k * B->stride[nd - 2] + j * B->stride[nd - 1]);
				/* beta == 0 ignores C's old contents, even NaN, as BLAS does */
				store(C, cij, alpha * acc + (beta != 0 ? beta * load(C, cij) : 0));
			}
		}
	}
	return CLG_OK;
}

void clg_ref_register_ops(clg_backend *be)
{
	for (int op = 0; op < CLG_OP_COUNT; op++)
		if (clg_op_is_elementwise((clg_op)op))
			be->ops[op] = ref_elementwise;
	be->ops[CLG_OP_SUM] = ref_reduce;
	be->ops[CLG_OP_MAX] = ref_reduce;
	be->ops[CLG_OP_MIN] = ref_reduce;
	be->ops[CLG_OP_ARGMAX] = ref_reduce;
	be->ops[CLG_OP_SOFTMAX] = clg_ref_row;
	be->ops[CLG_OP_LOG_SOFTMAX] = clg_ref_row;
	be->ops[CLG_OP_SOFTMAX_BACKWARD] = clg_ref_row;
	be->ops[CLG_OP_LOG_SOFTMAX_BACKWARD] = clg_ref_row;
	clg_ref_register_conv(be);
	clg_ref_register_index(be);
	clg_ref_register_norm(be);
	clg_ref_register_optim(be);
	clg_ref_register_fused(be);
	clg_ref_register_addnorm(be);
	clg_ref_register_quant(be);
	clg_ref_register_fft(be);
	clg_ref_register_attention(be);
	be->ops[CLG_OP_GEMM] = ref_gemm;
}
