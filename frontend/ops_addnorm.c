/* Residual add + layer norm with gamma and beta as one op each way (ADD_LAYER_NORM and
 * ADD_LAYER_NORM_BACKWARD, clg_ops.def): the forward returns y = LN(x + r) * gamma + beta and the
 * sum s = x + r for the residual stream (a composite of four ops, one launch fused); the backward
 * gives dx (the gradient of s, so of x and r alike), dgamma and dbeta in one op. clg_layer_norm
 * takes the same op without the residual. Where the op does not serve (no gamma or beta, 16-bit
 * or autocast, CLGRAD_FUSED=0, rows that are no 2-D view) the composite runs: the reference. */
#include "fe_internal.h"

#include <string.h>

/* v as (rows, C) when its leading dims merge into one stride (size-1 dims dropped), else 0. */
static int rows_view(const clg_view *v, clg_view *out)
{
	int nd = v->ndim, inner = -1;
	int64_t rows = 1;

	if (nd < 1)
		return 0;
	for (int d = nd - 2; d >= 0; d--) {
		if (v->shape[d] == 1)
			continue;
		if (inner >= 0 && v->stride[d] != v->stride[inner] * v->shape[inner])
			return 0;
		inner = d;
		rows *= v->shape[d];
	}
	/* the stride of the merged dim is the innermost leading one's */
	{
		int64_t rs = 0;
		for (int d = nd - 2; d >= 0; d--)
			if (v->shape[d] != 1) {
				rs = v->stride[d];
				break;
			}
		*out = *v;
		out->ndim = 2;
		out->shape[0] = rows;
		out->shape[1] = v->shape[nd - 1];
		out->stride[0] = rs;
		out->stride[1] = v->stride[nd - 1];
	}
	return 1;
}

static int is_vec(const clg_tensor *t, int64_t C) { return t && t->v.ndim == 1 && t->v.shape[0] == C; }

int fe_addnorm_ok(clg_tensor *x, clg_tensor *r, clg_tensor *gamma, clg_tensor *beta)
{
	clg_tensor *ins[4] = {x, gamma, beta, r};
	clg_backend *be;
	clg_view v;
	int64_t C;

	if (!x || !gamma || !beta || x->v.ndim < 1 || !clg_fused_ops_enabled() || fe_autocast_high(r ? 4 : 3, ins))
		return 0;
	be = x->v.buf->backend;
	C = x->v.shape[x->v.ndim - 1];
	if ((x->v.dtype != CLG_F32 && x->v.dtype != CLG_F64) || !clg_backend_has_op(be, CLG_OP_ADD_LAYER_NORM) ||
	    !clg_backend_has_op(be, CLG_OP_ADD_LAYER_NORM_BACKWARD) || !is_vec(gamma, C) || !is_vec(beta, C) || !rows_view(&x->v, &v))
		return 0;
	/* one device and one dtype (a float16 branch under autocast goes through the composite's add) */
	for (int i = 1; i < (r ? 4 : 3); i++)
		if (ins[i]->v.buf->backend != be || ins[i]->v.dtype != x->v.dtype)
			return 0;
	if (!r)
		return 1;
	if (r->v.ndim != x->v.ndim || !rows_view(&r->v, &v))
		return 0;
	for (int d = 0; d < x->v.ndim; d++)
		if (r->v.shape[d] != x->v.shape[d])
			return 0;
	return 1;
}

static clg_status residual_backward(clg_node *n, clg_tensor *g)
{
	clg_status st = fe_give(n->in[0], fe_alias(g));
	return st ? st : fe_give(n->in[1], fe_alias(g));
}

/* The gradient of s that arrived before this one (its node's pending gradient), when the op can
 * add it to dx (same dtype, rows one 2-D view): NULL otherwise. */
static clg_tensor *earlier_grad(clg_tensor *s, clg_view *rows)
{
	clg_tensor *p = s->grad_fn ? s->grad_fn->gout : NULL;
	if (!p || p->v.dtype != s->v.dtype || p->v.ndim != s->v.ndim ||
	    memcmp(p->v.shape, s->v.shape, sizeof(int64_t) * (size_t)s->v.ndim) != 0 || !rows_view(&p->v, rows))
		return NULL;
	return p;
}

/* in[0] s, in[1] gamma, in[2] beta; f[0] eps. One op: dx (plus s's earlier gradient, replacing
 * it: no ADD after), and gamma's and beta's gradients straight into their .grad where they are
 * leaves (no copy), else temporaries given after. */
static clg_status addnorm_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *s = n->in[0], *gamma = n->in[1], *beta = n->in[2], *gc = NULL, *dx, *dg = NULL, *db = NULL;
	clg_tensor *tg, *tb = NULL, *prev;
	clg_backend *be = s->v.buf->backend;
	clg_op_call c = {.op = CLG_OP_ADD_LAYER_NORM_BACKWARD};
	double bg = 0, bb = 0;
	int made_g = 0, made_b = 0;
	clg_status st;

	if (!rows_view(&g->v, &c.src[0])) { /* a gradient whose rows do not merge: made contiguous */
		gc = clg_contiguous(g);
		if (!gc)
			return clg_last_status();
		rows_view(&gc->v, &c.src[0]);
	}
	dx = fe_new(be, s->v.dtype, s->v.ndim, s->v.shape);
	tg = dx ? fe_leaf_grad(gamma, &bg, &made_g) : NULL;
	if (dx && !tg)
		tg = dg = fe_new(be, s->v.dtype, 1, gamma->v.shape);
	if (tg)
		tb = beta != gamma ? fe_leaf_grad(beta, &bb, &made_b) : NULL;
	if (tg && !tb)
		tb = db = fe_new(be, s->v.dtype, 1, beta->v.shape);
	if (!tb) {
		st = clg_last_status();
		goto fail;
	}
	rows_view(&dx->v, &c.dst);
	rows_view(&s->v, &c.src[1]);
	c.src[2] = gamma->v;
	c.src[3] = tg->v;
	c.src[4] = tb->v;
	prev = s->requires_grad ? earlier_grad(s, &c.src[5]) : NULL;
	if (!prev)
		c.src[5] = c.src[0]; /* unread */
	c.i[0] = prev != NULL;
	c.f[0] = n->f[0];
	c.f[1] = bg;
	c.f[2] = bb;
	st = fe_run(be, &c);
	if (st)
		goto fail;
	if (prev) { /* dx holds s's whole gradient so far */
		fe_release(prev);
		s->grad_fn->gout = fe_own(dx);
		dx = NULL;
	}
	/* fe_give takes its gradient over, even on failure */
	if (dx && s->requires_grad)
		st = fe_give(s, dx), dx = NULL;
	if (!st && dg && gamma->requires_grad)
		st = fe_give(gamma, dg), dg = NULL;
	if (!st && db && beta->requires_grad)
		st = fe_give(beta, db), db = NULL;
	goto out;
fail:
	fe_leaf_grad_undo(gamma, made_g);
	fe_leaf_grad_undo(beta, made_b);
out:
	clg_free(gc);
	clg_free(dx);
	clg_free(dg);
	clg_free(db);
	return st;
}

clg_tensor *fe_addnorm(clg_tensor *x, clg_tensor *r, clg_tensor *gamma, clg_tensor *beta, double eps,
		       clg_tensor **sum)
{
	clg_backend *be = x->v.buf->backend;
	clg_op_call c = {.op = CLG_OP_ADD_LAYER_NORM};
	clg_tensor *s = NULL, *y, *ins[3];
	clg_node *node = NULL;

	y = fe_new(be, x->v.dtype, x->v.ndim, x->v.shape);
	s = y && r ? fe_new(be, x->v.dtype, x->v.ndim, x->v.shape) : NULL;
	if (!y || (r && !s))
		goto fail;
	rows_view(&y->v, &c.dst);
	rows_view(&x->v, &c.src[0]);
	if (r) {
		rows_view(&r->v, &c.src[1]);
		rows_view(&s->v, &c.src[4]);
	} else { /* ignored by the op */
		c.src[1] = c.src[0];
		c.src[4] = c.src[0];
	}
	c.src[2] = gamma->v;
	c.src[3] = beta->v;
	c.f[0] = eps;
	c.i[0] = r != NULL;
	if (fe_run(be, &c))
		goto fail;
	if (r) { /* s = x + r, differentiable as the add it is */
		clg_tensor *xr[2] = {x, r};
		s = fe_record_op(s, "add", residual_backward, 2, xr, NULL);
		if (!s)
			goto fail;
	}
	ins[0] = r ? s : x, ins[1] = gamma, ins[2] = beta;
	y = fe_record_op(y, "add_layer_norm", addnorm_backward, 3, ins, &node);
	if (node)
		node->f[0] = eps;
	if (!y)
		goto fail;
	if (sum)
		*sum = s;
	else
		clg_free(s);
	return y;
fail:
	clg_free(y);
	clg_free(s);
	return NULL;
}

clg_tensor *clg_add_layer_norm(clg_tensor *x, clg_tensor *r, clg_tensor *gamma, clg_tensor *beta, double eps,
			       clg_tensor **sum)
{
	clg_tensor *s, *y;

	if (sum)
		*sum = NULL;
	if (x && !r)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'add_layer_norm': no residual r (clg_layer_norm normalises x alone)"));
	if (x && eps >= 0 && fe_addnorm_ok(x, r, gamma, beta))
		return fe_addnorm(x, r, gamma, beta, eps, sum);
	/* the composite: the reference, and the fallback (clg_add and clg_layer_norm check devices,
	 * dtypes, shapes and eps, and promote a float16 addend) */
	s = clg_add(x, r);
	y = s ? clg_layer_norm(s, gamma, beta, eps) : NULL;
	if (y && sum)
		*sum = s;
	else
		clg_free(s);
	return y;
}
