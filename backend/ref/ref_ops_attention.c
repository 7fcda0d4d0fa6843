/* Reference fused attention (see clg_ops.def): the definition, one query row (forward) or one
 * (query, key) pair (backward) at a time, in double; the probabilities of the backward come from
 * q, k and the forward's log-sum-exp, as on the devices. */
#include "ref_internal.h"
#include "../clg_attention_internal.h"

#include <math.h>
#include <stdlib.h>

void clg_attention_strides(const clg_view *v, int stats, int64_t st[4])
{
	int nd = v->ndim, four = nd == (stats ? 3 : 4);
	st[0] = v->stride[0];
	st[1] = four ? v->stride[1] : 0;
	st[2] = v->stride[four ? 2 : 1];
	st[3] = stats ? 0 : v->stride[nd - 1];
}

/* v is (B, H, T, X) (or (B, T, X) when !four); X < 0: the statistics (B, H, T) */
static int fits(const clg_view *v, int four, const clg_attention_dims *d, int64_t T, int64_t X)
{
	int nd = (four ? 4 : 3) - (X < 0);
	if (v->ndim != nd || v->shape[0] != d->B || (four && v->shape[1] != d->H) || v->shape[four ? 2 : 1] != T)
		return 0;
	return X < 0 || v->shape[nd - 1] == X;
}

clg_status clg_attention_check(clg_backend *be, const clg_op_call *c, clg_attention_dims *d)
{
	const clg_view *q = &c->src[c->op == CLG_OP_ATTENTION_BWD], *o = c->op == CLG_OP_ATTENTION_BWD ? &c->src[4] : &c->dst;
	const clg_view *k = q + 1, *v = q + 2, *lse = c->op == CLG_OP_ATTENTION_BWD ? &c->src[5] : &c->src[3];
	int four = q->ndim == 4, ok = q->ndim == 3 || q->ndim == 4;
	char s0[96], s1[96], s2[96];

	if (ok) {
		d->B = q->shape[0];
		d->H = four ? q->shape[1] : 1;
		d->Tq = q->shape[q->ndim - 2];
		d->Dh = q->shape[q->ndim - 1];
		d->Tk = k->ndim == q->ndim ? k->shape[q->ndim - 2] : -1;
		d->Dv = v->ndim == q->ndim ? v->shape[q->ndim - 1] : -1;
		ok = d->Dh > 0 && d->Dv > 0 && fits(k, four, d, d->Tk, d->Dh) && fits(v, four, d, d->Tk, d->Dv) &&
		     fits(o, four, d, d->Tq, d->Dv) && fits(lse, four, d, d->Tq, -1);
	}
	if (ok && c->op == CLG_OP_ATTENTION_BWD)
		ok = fits(&c->dst, four, d, d->Tq, d->Dh) && fits(&c->src[0], four, d, d->Tq, d->Dv) &&
		     fits(&c->src[6], four, d, d->Tk, d->Dh) && fits(&c->src[7], four, d, d->Tk, d->Dv);
	if (!ok)
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': q %s, k %s, v %s: expected (B, H, Tq, Dh), "
				"(B, H, Tk, Dh), (B, H, Tk, Dv) or the same without H, and the other operands to match (see clg_ops.def)",
				clg_op_name(c->op), be->info.name, clg_shape_str(q, s0, sizeof(s0)),
				clg_shape_str(k, s1, sizeof(s1)), clg_shape_str(v, s2, sizeof(s2)));
	return CLG_OK;
}

typedef struct {
	const clg_view *v;
	int64_t st[4];
} operand;

static operand opnd(const clg_view *v, int stats)
{
	operand o = {.v = v};
	clg_attention_strides(v, stats, o.st);
	return o;
}

static double at(const operand *o, int64_t b, int64_t h, int64_t t, int64_t x)
{
	return clg_ref_load(o->v, o->v->offset + b * o->st[0] + h * o->st[1] + t * o->st[2] + x * o->st[3]);
}

static void put(const operand *o, int64_t b, int64_t h, int64_t t, int64_t x, double val)
{
	clg_ref_store(o->v, o->v->offset + b * o->st[0] + h * o->st[1] + t * o->st[2] + x * o->st[3], val);
}

/* scale * q_i . k_j */
static double score(const operand *q, const operand *k, int64_t b, int64_t h, int64_t i, int64_t j, int64_t Dh,
		    double scale)
{
	double s = 0;
	for (int64_t x = 0; x < Dh; x++)
		s += at(q, b, h, i, x) * at(k, b, h, j, x);
	return scale * s;
}

/* the keys query i sees */
static int64_t keys_of(const clg_op_call *c, const clg_attention_dims *d, int64_t i)
{
	return c->i[0] && i + 1 < d->Tk ? i + 1 : d->Tk;
}

static clg_status ref_attention_fwd(clg_backend *be, const clg_op_call *c)
{
	operand o = opnd(&c->dst, 0), q = opnd(&c->src[0], 0), k = opnd(&c->src[1], 0), v = opnd(&c->src[2], 0);
	operand lse = opnd(&c->src[3], 1);
	clg_attention_dims d;
	clg_status st = clg_attention_check(be, c, &d);
	double *s = st ? NULL : malloc((size_t)(d.Tk ? d.Tk : 1) * sizeof(double));

	if (!st && !s)
		st = clg_fail(CLG_ERR_OOM, "op '%s' on device '%s': out of host memory", clg_op_name(c->op), be->info.name);
	for (int64_t b = 0; !st && b < d.B; b++)
		for (int64_t h = 0; h < d.H; h++)
			for (int64_t i = 0; i < d.Tq; i++) {
				int64_t n = keys_of(c, &d, i);
				double m = -INFINITY, l = 0;
				for (int64_t j = 0; j < n; j++)
					m = fmax(m, s[j] = score(&q, &k, b, h, i, j, d.Dh, c->f[0]));
				for (int64_t j = 0; j < n; j++)
					l += s[j] = exp(s[j] - m);
				for (int64_t x = 0; x < d.Dv; x++) {
					double acc = 0;
					for (int64_t j = 0; j < n; j++)
						acc += s[j] * at(&v, b, h, j, x);
					put(&o, b, h, i, x, n ? acc / l : 0);
				}
				put(&lse, b, h, i, 0, n ? m + log(l) : -INFINITY);
			}
	free(s);
	return st;
}

static clg_status ref_attention_bwd(clg_backend *be, const clg_op_call *c)
{
	operand dq = opnd(&c->dst, 0), dO = opnd(&c->src[0], 0), q = opnd(&c->src[1], 0), k = opnd(&c->src[2], 0);
	operand v = opnd(&c->src[3], 0), o = opnd(&c->src[4], 0), lse = opnd(&c->src[5], 1);
	operand dk = opnd(&c->src[6], 0), dv = opnd(&c->src[7], 0);
	clg_attention_dims d;
	clg_status st = clg_attention_check(be, c, &d);
	double *acc = NULL, *delta = NULL;
	size_t nq, nk;

	if (st)
		return st;
	nq = (size_t)(d.Tq * d.Dh), nk = (size_t)(d.Tk * (d.Dh + d.Dv));
	acc = calloc(nq + nk + 1, sizeof(double));
	delta = malloc((size_t)(d.Tq + 1) * sizeof(double));
	if (!acc || !delta)
		st = clg_fail(CLG_ERR_OOM, "op '%s' on device '%s': out of host memory", clg_op_name(c->op), be->info.name);
	for (int64_t b = 0; !st && b < d.B; b++)
		for (int64_t h = 0; h < d.H; h++) {
			double *aq = acc, *ak = acc + nq, *av = ak + d.Tk * d.Dh;
			for (size_t e = 0; e < nq + nk; e++)
				acc[e] = 0;
			for (int64_t i = 0; i < d.Tq; i++) {
				delta[i] = 0;
				for (int64_t x = 0; x < d.Dv; x++)
					delta[i] += at(&dO, b, h, i, x) * at(&o, b, h, i, x);
			}
			for (int64_t i = 0; i < d.Tq; i++)
				for (int64_t j = 0; j < keys_of(c, &d, i); j++) {
					double p = exp(score(&q, &k, b, h, i, j, d.Dh, c->f[0]) - at(&lse, b, h, i, 0)), dp = 0, ds;
					for (int64_t x = 0; x < d.Dv; x++) {
						double g = at(&dO, b, h, i, x);
						dp += g * at(&v, b, h, j, x);
						av[j * d.Dv + x] += p * g;
					}
					ds = p * (dp - delta[i]) * c->f[0];
					for (int64_t x = 0; x < d.Dh; x++) {
						aq[i * d.Dh + x] += ds * at(&k, b, h, j, x);
						ak[j * d.Dh + x] += ds * at(&q, b, h, i, x);
					}
				}
			for (int64_t i = 0; i < d.Tq; i++)
				for (int64_t x = 0; x < d.Dh; x++)
					put(&dq, b, h, i, x, aq[i * d.Dh + x]);
			for (int64_t j = 0; j < d.Tk; j++) {
				for (int64_t x = 0; x < d.Dh; x++)
					put(&dk, b, h, j, x, ak[j * d.Dh + x]);
				for (int64_t x = 0; x < d.Dv; x++)
					put(&dv, b, h, j, x, av[j * d.Dv + x]);
			}
		}
	free(acc);
	free(delta);
	return st;
}

void clg_ref_register_attention(clg_backend *be)
{
	be->ops[CLG_OP_ATTENTION_FWD] = ref_attention_fwd;
	be->ops[CLG_OP_ATTENTION_BWD] = ref_attention_bwd;
}
