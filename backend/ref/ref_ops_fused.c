/* Reference fused hot-path ops (see clg_ops.def): the linear epilogue bias + activation (alone and
 * after the GEMM) and its backward (activation gradient and bias gradient in one pass), and softmax
 * cross-entropy forward (loss and each row's saved max and log-sum) and backward. Plain loops in double. */
#include "ref_internal.h"
#include "../clg_fused_internal.h"

#include <math.h>

static int is_2d(const clg_view *v, int64_t n, int64_t c) { return v->ndim == 2 && v->shape[0] == n && v->shape[1] == c; }
static int is_1d(const clg_view *v, int64_t n) { return v->ndim == 1 && v->shape[0] == n; }

clg_status clg_fused_check(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *s = c->src;
	int64_t N = d->ndim == 2 ? d->shape[0] : 0, C = d->ndim == 2 ? d->shape[1] : 0;
	char s0[96], s1[96];
	int ok;

	switch (c->op) {
	case CLG_OP_BIAS_ACT:
		ok = d->ndim == 2 && is_2d(&s[0], N, C) && is_1d(&s[1], C);
		break;
	case CLG_OP_BIAS_ACT_BACKWARD:
		ok = d->ndim == 2 && is_2d(&s[0], N, C) && is_2d(&s[1], N, C) && is_1d(&s[2], C);
		break;
	case CLG_OP_GEMM_BIAS_ACT: /* A and B checked as GEMM's (clg_run) */
		ok = d->ndim == 2 && s[0].ndim == 2 && is_1d(&s[2], C);
		break;
	case CLG_OP_SOFTMAX_XENT:
		N = s[0].ndim == 2 ? s[0].shape[0] : -1;
		C = s[0].ndim == 2 ? s[0].shape[1] : -1;
		ok = N >= 0 && clg_view_numel(d) == 1 && is_2d(&s[1], N, C) && is_2d(&s[2], N, 2);
		break;
	case CLG_OP_SOFTMAX_XENT_BACKWARD:
		ok = d->ndim == 2 && is_2d(&s[0], N, C) && is_2d(&s[1], N, C) && is_2d(&s[2], N, 2) &&
		     clg_view_numel(&s[3]) == 1;
		break;
	default:
		ok = 0;
		break;
	}
	if (!ok)
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': shapes do not fit: dst %s, src0 %s (see clg_ops.def)",
				clg_op_name(c->op), be->info.name, clg_shape_str(d, s0, sizeof(s0)),
				clg_shape_str(&s[0], s1, sizeof(s1)));
	if ((c->op == CLG_OP_BIAS_ACT || c->op == CLG_OP_BIAS_ACT_BACKWARD || c->op == CLG_OP_GEMM_BIAS_ACT) &&
	    (c->i[0] < CLG_FUSED_NONE || c->i[0] > CLG_FUSED_GELU))
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': unknown activation %lld (0 none, 1 relu, 2 gelu)",
				clg_op_name(c->op), be->info.name, (long long)c->i[0]);
	return CLG_OK;
}

static double act(int64_t a, double u)
{
	if (a == CLG_FUSED_RELU)
		return u > 0 ? u : 0;
	if (a == CLG_FUSED_GELU)
		return 0.5 * u * (1 + erf(u / sqrt(2.0)));
	return u;
}

static double act_grad(int64_t a, double u)
{
	if (a == CLG_FUSED_RELU)
		return u > 0 ? 1 : 0;
	if (a == CLG_FUSED_GELU)
		return 0.5 * (1 + erf(u / sqrt(2.0))) + u * exp(-0.5 * u * u) * 0.39894228040143267794 /* 1 / sqrt(2 pi) */;
	return 1;
}

#define AT(v, n, c) ((v)->offset + (n) * (v)->stride[0] + (c) * (v)->stride[1])
#define AT1(v, n) ((v)->offset + (n) * (v)->stride[0])

static clg_status ref_bias_act(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *x = &c->src[0], *b = &c->src[1];
	clg_status st = clg_fused_check(be, c);
	for (int64_t n = 0; !st && n < d->shape[0]; n++)
		for (int64_t j = 0; j < d->shape[1]; j++) {
			double u = clg_ref_load(x, AT(x, n, j)) + clg_ref_load(b, AT1(b, j));
			clg_ref_store(d, AT(d, n, j), act(c->i[0], u));
		}
	return st;
}

/* act(A @ B + bias): the sum, the bias and act in double, one rounding at the store */
static clg_status ref_gemm_bias_act(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *A = &c->src[0], *B = &c->src[1], *b = &c->src[2];
	clg_status st = clg_fused_check(be, c);
	int64_t K = A->ndim == 2 ? A->shape[1] : 0;

	for (int64_t n = 0; !st && n < d->shape[0]; n++)
		for (int64_t j = 0; j < d->shape[1]; j++) {
			double u = clg_ref_load(b, AT1(b, j));
			for (int64_t k = 0; k < K; k++)
				u += clg_ref_load(A, AT(A, n, k)) * clg_ref_load(B, AT(B, k, j));
			clg_ref_store(d, AT(d, n, j), act(c->i[0], u));
		}
	return st;
}

static clg_status ref_bias_act_backward(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *g = &c->src[0], *t = &c->src[1], *db = &c->src[2];
	clg_status st = clg_fused_check(be, c);
	for (int64_t j = 0; !st && j < d->shape[1]; j++) {
		double acc = 0;
		for (int64_t n = 0; n < d->shape[0]; n++) {
			double dz = clg_ref_load(g, AT(g, n, j));
			if (c->i[0] != CLG_FUSED_NONE)
				dz *= act_grad(c->i[0], clg_ref_load(t, AT(t, n, j)));
			clg_ref_store(d, AT(d, n, j), dz);
			acc += dz;
		}
		clg_ref_store(db, AT1(db, j), (c->f[0] != 0 ? c->f[0] * clg_ref_load(db, AT1(db, j)) : 0) + acc);
	}
	return st;
}

/* row n of x: its max m, l = log sum exp(x - m), and the row's sums of t and t * (x - m) */
static void xent_row(const clg_view *x, const clg_view *t, int64_t n, double *m, double *l, double *tsum,
		     double *txm)
{
	double s = 0;
	int64_t C = x->shape[1];
	*m = -INFINITY;
	*tsum = *txm = 0;
	for (int64_t j = 0; j < C; j++)
		*m = fmax(*m, clg_ref_load(x, AT(x, n, j)));
	for (int64_t j = 0; j < C; j++) {
		double xv = clg_ref_load(x, AT(x, n, j)), tv = clg_ref_load(t, AT(t, n, j));
		s += exp(xv - *m);
		*tsum += tv;
		*txm += tv * (xv - *m);
	}
	*l = log(s);
}

static clg_status ref_softmax_xent(clg_backend *be, const clg_op_call *c)
{
	const clg_view *x = &c->src[0], *t = &c->src[1], *r = &c->src[2];
	double total = 0;
	clg_status st = clg_fused_check(be, c);
	for (int64_t n = 0; !st && n < x->shape[0]; n++) {
		double m, l, tsum, txm;
		xent_row(x, t, n, &m, &l, &tsum, &txm);
		clg_ref_store(r, AT(r, n, 0), m);
		clg_ref_store(r, AT(r, n, 1), l);
		total += l * tsum - txm;
	}
	if (!st)
		clg_ref_store(&c->dst, c->dst.offset, c->f[0] * total);
	return st;
}

static clg_status ref_softmax_xent_backward(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *x = &c->src[0], *t = &c->src[1], *r = &c->src[2], *g = &c->src[3];
	clg_status st = clg_fused_check(be, c);
	double scale = st ? 0 : c->f[0] * clg_ref_load(g, g->offset);
	for (int64_t n = 0; !st && n < d->shape[0]; n++) {
		double tsum = 0, m = clg_ref_load(r, AT(r, n, 0)), l = clg_ref_load(r, AT(r, n, 1));
		for (int64_t j = 0; j < d->shape[1]; j++)
			tsum += clg_ref_load(t, AT(t, n, j));
		for (int64_t j = 0; j < d->shape[1]; j++) {
			double p = exp((clg_ref_load(x, AT(x, n, j)) - m) - l);
			clg_ref_store(d, AT(d, n, j), scale * (p * tsum - clg_ref_load(t, AT(t, n, j))));
		}
	}
	return st;
}

void clg_ref_register_fused(clg_backend *be)
{
	be->ops[CLG_OP_BIAS_ACT] = ref_bias_act;
	be->ops[CLG_OP_BIAS_ACT_BACKWARD] = ref_bias_act_backward;
	be->ops[CLG_OP_GEMM_BIAS_ACT] = ref_gemm_bias_act;
	be->ops[CLG_OP_SOFTMAX_XENT] = ref_softmax_xent;
	be->ops[CLG_OP_SOFTMAX_XENT_BACKWARD] = ref_softmax_xent_backward;
}
