/* Losses: cross-entropy and NLL (PyTorch's options: reduction, ignore_index, class weights, label
 * smoothing; class-index or dense targets; any leading dims, the class dim last), and mean squared
 * error. The formulas are in clgrad.h above clg_cross_entropy_ex.
 *
 * Two paths compute the same loss:
 * - fused (cross_entropy, reduction SUM or MEAN): the SOFTMAX_XENT ops on the logits viewed as
 *   (N, C) rows against dense target rows T (N, C): dense targets smoothed and weighted, or, for
 *   class indices, T[n][y_n] = (1 - eps) w[y_n] (ONE_HOT, one pass writing T; w[y_n] is 0 for an
 *   ignored or out-of-range index) plus eps / C * w[c] on the rows not ignored. The row terms are summed by
 *   the op; MEAN divides by the weight sum of the rows not ignored, a device scalar (no read-back).
 * - unfused (nll_loss, reduction NONE, 16-bit dtypes, a target or weight that needs a gradient, a
 *   device without the fused ops, CLGRAD_FUSED=0): log_softmax, then gather (the picked
 *   log-probability), embedding (w[y_n] from a table of C rows: 0 for an ignored class and for
 *   indices out of range), sums and products. */
#include "fe_internal.h"

#include <math.h>
#include <string.h>

/* Temporaries of a loss, freed together at its one exit. Ops given NULL return NULL without
 * touching the first error, so a chain stops at its first failure. */
#define LOSS_TMP_MAX 24

typedef struct {
	clg_tensor *t[LOSS_TMP_MAX];
	int n;
} loss_tmps;

static clg_tensor *tmp(loss_tmps *k, clg_tensor *t)
{
	if (t && k->n < LOSS_TMP_MAX)
		k->t[k->n++] = t;
	else if (t) { /* never with the chains below; fail rather than leak */
		clg_free(t);
		t = fe_fail(clg_fail(CLG_ERR_OOM, "loss: too many temporaries"));
	}
	return t;
}

static void free_tmps(loss_tmps *k)
{
	while (k->n > 0)
		clg_free(k->t[--k->n]);
}

/* The checked arguments of a loss. */
typedef struct {
	const char *op;
	int index;          /* int32 class indices; else dense rows */
	int64_t C, N;       /* classes; rows (the product of the leading dims) */
	double eps;         /* label smoothing */
	clg_reduction red;
	int64_t ignore;     /* the ignored class, or -1 when it is none of [0, C) */
	clg_tensor *w;      /* (C) weights in the logits' dtype, or NULL */
} loss_args;

static clg_status check_loss(const char *op, clg_tensor *x, clg_tensor *t, const clg_loss_opts *o, loss_args *la)
{
	const char *dev = x->v.buf->backend->info.name;
	clg_tensor *w = o->weight;
	char s0[96], s1[96];
	int nd = x->v.ndim;

	memset(la, 0, sizeof(*la));
	la->op = op;
	clg_shape_str(&x->v, s0, sizeof(s0));
	clg_shape_str(&t->v, s1, sizeof(s1));
	if (nd < 1 || x->v.dtype == CLG_I32)
		return clg_fail(nd < 1 ? CLG_ERR_SHAPE : CLG_ERR_DTYPE,
				"op '%s' on device '%s': the input is %s %s, must be float (..., C)", op, dev, s0,
				clg_dtype_name(x->v.dtype));
	la->C = x->v.shape[nd - 1];
	la->N = la->C > 0 ? clg_view_numel(&x->v) / la->C : 0;
	la->index = t->v.dtype == CLG_I32;
	if (la->index ? t->v.ndim != nd - 1 || memcmp(t->v.shape, x->v.shape, sizeof(int64_t) * (size_t)(nd - 1))
		      : t->v.ndim != nd || memcmp(t->v.shape, x->v.shape, sizeof(int64_t) * (size_t)nd))
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': input %s and %s target %s: int32 class indices take "
				"the input's shape without its last (class) dim, dense rows the input's shape",
				op, dev, s0, clg_dtype_name(t->v.dtype), s1);
	if (!la->index && t->v.dtype != x->v.dtype)
		return clg_fail(CLG_ERR_DTYPE, "op '%s' on device '%s': dense target %s is %s, the input %s is %s", op, dev, s1,
				clg_dtype_name(t->v.dtype), s0, clg_dtype_name(x->v.dtype));
	if ((unsigned)o->reduction > CLG_REDUCTION_NONE)
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': unknown reduction %d (mean 0, sum 1, none 2)", op, dev,
				(int)o->reduction);
	if (!(o->label_smoothing >= 0 && o->label_smoothing <= 1))
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': label_smoothing must be between 0.0 and 1.0, got %g", op,
				dev, o->label_smoothing);
	if (!la->index && o->ignore_index >= 0)
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': ignore_index %lld is not supported for dense targets "
				"(as in PyTorch: negative only)", op, dev, (long long)o->ignore_index);
	if (w && (w->v.ndim != 1 || w->v.shape[0] != la->C || w->v.dtype == CLG_I32))
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': weight %s %s for input %s: must be float (C) = (%lld)", op,
				dev, clg_shape_str(&w->v, s1, sizeof(s1)), clg_dtype_name(w->v.dtype), s0, (long long)la->C);
	la->red = o->reduction;
	la->eps = o->label_smoothing;
	la->ignore = la->index && o->ignore_index >= 0 && o->ignore_index < la->C ? o->ignore_index : -1;
	return CLG_OK;
}

/* (C) ones, 0 at the ignored class (when it is one of them): which classes count */
static clg_tensor *class_keep(clg_backend *be, clg_dtype dt, const loss_args *la)
{
	clg_op_call c = {.op = CLG_OP_FILL};
	clg_tensor *k = clg_ones(be, dt, 1, &la->C);

	if (!k || la->ignore < 0)
		return k;
	c.dst = k->v;
	c.dst.offset += la->ignore;
	c.dst.shape[0] = 1;
	if (fe_run(be, &c)) {
		clg_free(k);
		return NULL;
	}
	return k;
}

/* Whether a loss over class indices needs class_keep: for the weights of the rows (no weight, or
 * an ignored class to zero) or to tell the rows not ignored (smoothing with weights) */
static int keep_needed(const loss_args *la) { return !la->w || la->ignore >= 0 || la->eps > 0; }

/* The (C) table of w[y_n] over the classes: the weights (or ones) with the ignored class 0; NULL
 * after a failure (prev NULL: an earlier one) */
static clg_tensor *class_table(loss_tmps *k, const loss_args *la, clg_tensor *prev, clg_tensor *keep)
{
	if (!prev || (keep_needed(la) && !keep))
		return NULL;
	if (!la->w)
		return keep;
	return la->ignore >= 0 ? tmp(k, clg_mul(la->w, keep)) : la->w;
}

/* ---- the fused path: SOFTMAX_XENT ---- */

/* saved[0] the targets, saved[1] each row's max and log-sum (N, 2); f[0] the scale. */
static clg_status xent_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *d;
	clg_op_call c = {.op = CLG_OP_SOFTMAX_XENT_BACKWARD};

	d = fe_new(x->v.buf->backend, x->v.dtype, 2, x->v.shape);
	if (!d)
		return clg_last_status();
	c.dst = d->v;
	c.src[0] = x->v;
	c.src[1] = n->saved[0]->v;
	c.src[2] = n->saved[1]->v;
	c.src[3] = g->v;
	c.f[0] = n->f[0];
	if (fe_run(d->v.buf->backend, &c)) {
		clg_free(d);
		return clg_last_status();
	}
	return fe_give(x, d);
}

/* loss = -scale * sum(t * log_softmax(x)) over x (N, C) and t (N, C) in one op, each row's max and
 * log of its sum of exp(x - max) kept for backward: apart, so that their precision does not depend
 * on the logits' magnitude */
static clg_tensor *xent_fused(clg_tensor *x, clg_tensor *t, double scale)
{
	clg_backend *be = x->v.buf->backend;
	clg_op_call c = {.op = CLG_OP_SOFTMAX_XENT};
	clg_tensor *loss = fe_new(be, x->v.dtype, 0, NULL);
	clg_tensor *stats = fe_new(be, x->v.dtype, 2, (int64_t[]){x->v.shape[0], 2}); /* (N, 2): max, log-sum */
	clg_node *node;

	if (!loss || !stats)
		goto fail;
	c.dst = loss->v;
	c.src[0] = x->v;
	c.src[1] = t->v;
	c.src[2] = stats->v;
	c.f[0] = scale;
	if (fe_run(be, &c))
		goto fail;
	loss = fe_record_op(loss, "cross_entropy", xent_backward, 1, &x, &node);
	if (node) {
		node->f[0] = scale;
		fe_save(node, t);
		fe_save(node, stats);
	}
	clg_free(stats);
	return loss;
fail:
	clg_free(loss);
	clg_free(stats);
	return NULL;
}

/* t viewed as (rows, cols): t itself when 2-D, else a view kept in k */
static clg_tensor *as_2d(loss_tmps *k, clg_tensor *t, int64_t rows, int64_t cols)
{
	return t->v.ndim == 2 ? t : tmp(k, clg_reshape(t, 2, (int64_t[]){rows, cols}));
}

/* The fused loss of logits x (..., C) against t; la checked, la->red SUM or MEAN. */
static clg_tensor *xent_fused_loss(clg_tensor *x, clg_tensor *t, const loss_args *la)
{
	clg_backend *be = x->v.buf->backend;
	clg_dtype dt = x->v.dtype;
	loss_tmps k = {{0}, 0};
	clg_tensor *x2 = as_2d(&k, x, la->N, la->C), *T, *out = NULL; /* (N, C) */
	double C = (double)la->C;

	if (!x2)
		goto out_free;
	if (!la->index) {
		T = as_2d(&k, t, la->N, la->C);
		if (T && la->eps > 0)
			T = tmp(&k, clg_affine(T, 1.0 - la->eps, la->eps / C));
		if (T && la->w)
			T = tmp(&k, clg_mul(T, la->w));
		if (T)
			out = xent_fused(x2, T, la->red == CLG_REDUCTION_MEAN ? (la->N > 0 ? 1.0 / (double)la->N : 0.0) : 1.0);
		goto out_free;
	}
	{
		clg_tensor *idx = tmp(&k, clg_reshape(t, 1, &la->N));                 /* (N) */
		clg_tensor *keep = idx && keep_needed(la) ? tmp(&k, class_keep(be, dt, la)) : NULL; /* (C) */
		clg_tensor *wt = class_table(&k, la, idx, keep);
		clg_tensor *wt2 = wt ? tmp(&k, clg_reshape(wt, 2, (int64_t[]){la->C, 1})) : NULL;
		clg_tensor *wy = wt2 ? tmp(&k, clg_embedding(wt2, idx)) : NULL;        /* (N, 1): w[y_n], 0 if ignored */
		clg_tensor *val = wy && la->eps > 0 ? tmp(&k, clg_affine(wy, 1.0 - la->eps, 0)) : wy;
		clg_tensor *v1 = val ? tmp(&k, clg_reshape(val, 1, &la->N)) : NULL;
		T = v1 ? tmp(&k, fe_one_hot(v1, idx, la->C)) : NULL;                   /* (N, C) */
		if (T && la->eps > 0) { /* + eps / C * w[c] on the rows not ignored */
			clg_tensor *keep2 = la->w ? tmp(&k, clg_reshape(keep, 2, (int64_t[]){la->C, 1})) : NULL;
			clg_tensor *valid = !la->w ? wy : keep2 ? tmp(&k, clg_embedding(keep2, idx)) : NULL; /* (N, 1) */
			clg_tensor *vs = valid ? tmp(&k, clg_affine(valid, la->eps / C, 0)) : NULL;
			clg_tensor *sm = vs && la->w ? tmp(&k, clg_mul(vs, la->w)) : vs;        /* (N, C) or (N, 1) */
			T = sm ? tmp(&k, clg_add(T, sm)) : NULL;
		}
		out = T ? xent_fused(x2, T, 1.0) : NULL;
		if (out && la->red == CLG_REDUCTION_MEAN) {
			clg_tensor *den = tmp(&k, clg_sum(wy, 0, NULL, 0));
			tmp(&k, out);
			out = den ? clg_div(out, den) : NULL;
		}
	}
out_free:
	free_tmps(&k);
	return out;
}

/* ---- the unfused path ---- */

/* The loss from log-probabilities lp (..., C) against t; la checked. */
static clg_tensor *nll_loss_core(clg_tensor *lp, clg_tensor *t, const loss_args *la)
{
	static const int last[1] = {-1};
	clg_backend *be = lp->v.buf->backend;
	loss_tmps k = {{0}, 0};
	clg_tensor *term, *out = NULL;
	double C = (double)la->C;
	int nd = lp->v.ndim;

	if (!la->index) { /* -sum_c w[c] t'[n, c] lp[n, c] */
		clg_tensor *tt = la->eps > 0 ? tmp(&k, clg_affine(t, 1.0 - la->eps, la->eps / C)) : t;
		clg_tensor *p;
		if (tt && la->w)
			tt = tmp(&k, clg_mul(tt, la->w));
		p = tt ? tmp(&k, clg_mul(lp, tt)) : NULL;
		if (p && la->red == CLG_REDUCTION_NONE) {
			clg_tensor *s = tmp(&k, clg_sum(p, 1, last, 0));
			out = s ? clg_neg(s) : NULL;
		} else if (p) {
			clg_tensor *s = tmp(&k, clg_sum(p, 0, NULL, 0));
			out = s ? clg_affine(s, la->red == CLG_REDUCTION_MEAN ? -1.0 / (double)la->N : -1.0, 0) : NULL;
		}
		goto out_free;
	}
	{
		int64_t cshape[CLG_MAX_DIMS];
		clg_tensor *tcol, *picked, *keep, *wt, *wt2, *wy;
		memcpy(cshape, lp->v.shape, sizeof(cshape));
		cshape[nd - 1] = 1;
		tcol = tmp(&k, clg_reshape(t, nd, cshape));                             /* (..., 1) */
		picked = tcol ? tmp(&k, clg_gather(lp, -1, tcol)) : NULL;               /* lp[n, y_n], 0 out of range */
		keep = picked && keep_needed(la) ? tmp(&k, class_keep(be, lp->v.dtype, la)) : NULL;
		wt = class_table(&k, la, picked, keep);
		wt2 = wt ? tmp(&k, clg_reshape(wt, 2, (int64_t[]){la->C, 1})) : NULL;
		wy = wt2 ? tmp(&k, clg_embedding(wt2, t)) : NULL;                       /* (..., 1): w[y_n], 0 if ignored */
		term = wy ? tmp(&k, clg_mul(picked, wy)) : NULL;                        /* -(row loss) without smoothing */
		if (term && la->eps > 0) { /* (1 - eps) term + eps / C * valid_n sum_c w[c] lp[n, c] */
			clg_tensor *lw = la->w ? tmp(&k, clg_mul(lp, la->w)) : lp;
			clg_tensor *s = lw ? tmp(&k, clg_sum(lw, 1, last, 1)) : NULL;  /* (..., 1) */
			clg_tensor *keep2 = s && la->w ? tmp(&k, clg_reshape(keep, 2, (int64_t[]){la->C, 1})) : NULL;
			clg_tensor *valid = !la->w ? wy : keep2 ? tmp(&k, clg_embedding(keep2, t)) : NULL;
			clg_tensor *sv = s && valid ? tmp(&k, clg_mul(s, valid)) : NULL;
			clg_tensor *a1 = sv ? tmp(&k, clg_affine(term, 1.0 - la->eps, 0)) : NULL;
			clg_tensor *a2 = a1 ? tmp(&k, clg_affine(sv, la->eps / C, 0)) : NULL;
			term = a2 ? tmp(&k, clg_add(a1, a2)) : NULL;
		}
		if (!term)
			goto out_free;
		if (la->red == CLG_REDUCTION_NONE) {
			clg_tensor *r = tmp(&k, clg_reshape(term, t->v.ndim, t->v.shape));
			out = r ? clg_neg(r) : NULL;
		} else {
			clg_tensor *s = tmp(&k, clg_sum(term, 0, NULL, 0));
			if (s && la->red == CLG_REDUCTION_MEAN) {
				clg_tensor *den = tmp(&k, clg_sum(wy, 0, NULL, 0));
				s = den ? tmp(&k, clg_div(s, den)) : NULL;
			}
			out = s ? clg_neg(s) : NULL;
		}
	}
out_free:
	free_tmps(&k);
	return out;
}

/* ---- entry points ---- */

static clg_tensor *loss_ex(const char *op, int from_logits, clg_tensor *x, clg_tensor *t, const clg_loss_opts *opts)
{
	clg_loss_opts o = opts ? *opts : clg_loss_opts_default();
	clg_tensor *ins[3] = {x, t, o.weight}, *c[3] = {NULL, NULL, NULL}, *out = NULL, *wc = NULL, *lp;
	int nin = o.weight ? 3 : 2;
	clg_backend *be;
	clg_status st;
	loss_args la;

	for (int i = 0; i < nin; i++)
		if (!ins[i])
			return NULL; /* an earlier call failed: keep its message */
	for (int i = 1; i < nin; i++)
		if (ins[i]->v.buf->backend != x->v.buf->backend)
			return fe_fail(clg_fail(CLG_ERR_DEVICE, "op '%s': the %s lives on device '%s', the input on '%s'; copy with "
						"clg_to_device first", op, i == 1 ? "target" : "weight",
						ins[i]->v.buf->backend->info.name, x->v.buf->backend->info.name));
	if (fe_autocast_high(nin, ins)) { /* autocast: the loss in float32 */
		if (fe_cast_each(nin, ins, CLG_F32, c))
			return NULL;
		o.weight = c[2];
		out = loss_ex(op, from_logits, c[0], c[1], &o);
		goto out_casts;
	}
	st = check_loss(op, x, t, &o, &la);
	if (st)
		return fe_fail(st);
	if (la.index && clg_dtype_is_half_storage(x->v.dtype)) {
		/* the index ops take float32 and float64: computed in float32, cast back */
		clg_tensor *l;
		if (fe_cast_each(nin, ins, CLG_F32, c))
			return NULL;
		o.weight = c[2];
		l = loss_ex(op, from_logits, c[0], c[1], &o);
		out = l ? clg_cast(l, x->v.dtype) : NULL;
		clg_free(l);
		goto out_casts;
	}
	if (o.weight && o.weight->v.dtype != x->v.dtype) {
		wc = clg_cast(o.weight, x->v.dtype);
		if (!wc)
			return NULL;
	}
	la.w = wc ? wc : o.weight;
	be = x->v.buf->backend;
	if (from_logits && la.red != CLG_REDUCTION_NONE && clg_fused_ops_enabled() && !clg_dtype_is_half_storage(x->v.dtype) &&
	    !(clg_grad_enabled() && ((!la.index && t->requires_grad) || (la.w && la.w->requires_grad))) &&
	    clg_backend_has_op(be, CLG_OP_SOFTMAX_XENT) && clg_backend_has_op(be, CLG_OP_SOFTMAX_XENT_BACKWARD) &&
	    clg_backend_has_op(be, CLG_OP_ONE_HOT) &&
	    clg_backend_has_op(be, CLG_OP_INDEX_SELECT)) {
		out = xent_fused_loss(x, t, &la);
	} else {
		lp = from_logits ? clg_log_softmax(x) : fe_alias(x);
		out = lp ? nll_loss_core(lp, t, &la) : NULL;
		clg_free(lp);
	}
	clg_free(wc);
	return out;
out_casts:
	for (int i = 0; i < 3; i++)
		clg_free(c[i]);
	return out;
}

clg_tensor *clg_cross_entropy_ex(clg_tensor *logits, clg_tensor *target, const clg_loss_opts *opts)
{
	return loss_ex("cross_entropy", 1, logits, target, opts);
}

clg_tensor *clg_nll_loss_ex(clg_tensor *logp, clg_tensor *target, const clg_loss_opts *opts)
{
	return loss_ex("nll_loss", 0, logp, target, opts);
}

clg_tensor *clg_nll_loss(clg_tensor *logp, clg_tensor *onehot) { return clg_nll_loss_ex(logp, onehot, NULL); }

clg_tensor *clg_cross_entropy(clg_tensor *logits, clg_tensor *onehot, double label_smoothing)
{
	clg_loss_opts o = CLG_LOSS_OPTS_INIT;
	o.label_smoothing = label_smoothing > 0 ? label_smoothing : 0; /* as before: <= 0 is none */
	return clg_cross_entropy_ex(logits, onehot, &o);
}

clg_tensor *clg_mse_loss(clg_tensor *pred, clg_tensor *target)
{
	clg_tensor *d = clg_sub(pred, target), *d2 = clg_mul(d, d), *m = clg_mean(d2, 0, NULL, 0);
	clg_free(d);
	clg_free(d2);
	return m;
}
