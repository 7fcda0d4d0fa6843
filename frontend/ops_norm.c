/* Norm family: layer_norm (fused LAYER_NORM / LAYER_NORM_BACKWARD ops), batch_norm and scaled
 * dot-product attention (the fused ops of ops_attention.c where the device has them, else a
 * composition of differentiable ops). */
#include "fe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Intermediate tensors of a composite op, freed together at the end. Ops given a NULL input
 * return NULL and keep the first error, so a composite is written straight through and checks
 * only its result. */
#define MAX_TEMPS 32
typedef struct {
	clg_tensor *t[MAX_TEMPS];
	int n;
} temps;

static clg_tensor *tmp(temps *ts, clg_tensor *t)
{
	if (!t)
		return NULL;
	if (ts->n == MAX_TEMPS) { /* a programming error: raise MAX_TEMPS */
		clg_free(t);
		return fe_fail(clg_fail(CLG_ERR_STATE, "norm ops: more than %d temporaries", MAX_TEMPS));
	}
	ts->t[ts->n++] = t;
	return t;
}

/* The result of a composite: t, taken back out of ts when it is the last temporary made, else a
 * new reference to it. */
static clg_tensor *result(temps *ts, clg_tensor *t)
{
	if (t && ts->n > 0 && ts->t[ts->n - 1] == t) {
		ts->n--;
		return t;
	}
	return t ? fe_alias(t) : NULL;
}

static void temps_free(temps *ts)
{
	for (int i = 0; i < ts->n; i++)
		clg_free(ts->t[i]);
	ts->n = 0;
}

/* Checks that the non-NULL tensors among n share x's device and dtype (x first, not NULL). */
static int check_optional(const char *op, int n, clg_tensor *const *ts)
{
	clg_tensor *given[8];
	int k = 0;
	for (int i = 0; i < n && k < 8; i++)
		if (ts[i])
			given[k++] = ts[i];
	return fe_check_inputs(op, k, given);
}

/* A (C) tensor is a vector of length C. */
static int is_vec(const clg_tensor *t, int64_t C) { return !t || (t->v.ndim == 1 && t->v.shape[0] == C); }

/* ---- layer norm ---- */

/* dx = LAYER_NORM_BACKWARD(g, x), eps in f[0] */
static clg_status layer_norm_backward(clg_node *n, clg_tensor *g)
{
	return fe_give(n->in[0], fe_ew(CLG_OP_LAYER_NORM_BACKWARD, g, n->in[0], n->f[0], 0));
}

/* The normalisation alone, (x - mean) * rsqrt(var + eps) over the last dim: one fused op forward,
 * one backward. */
static clg_tensor *normalize_rows(clg_tensor *x, double eps)
{
	clg_node *node;
	clg_tensor *y = fe_record_op(fe_ew(CLG_OP_LAYER_NORM, x, NULL, eps, 0), "layer_norm", layer_norm_backward, 1,
				     &x, &node);
	if (node)
		node->f[0] = eps;
	return y;
}

clg_tensor *clg_layer_norm(clg_tensor *x, clg_tensor *gamma, clg_tensor *beta, double eps)
{
	clg_tensor *ins[3] = {x, gamma, beta}, *y, *t;
	char s0[96];
	int64_t D;

	if (x && fe_autocast_high(3, ins)) { /* autocast: statistics and output in float32 */
		clg_tensor *c[3];
		if (fe_cast_each(3, ins, CLG_F32, c))
			return NULL;
		y = clg_layer_norm(c[0], c[1], c[2], eps);
		for (int i = 0; i < 3; i++)
			clg_free(c[i]);
		return y;
	}
	if (!x || !check_optional("layer_norm", 3, ins))
		return NULL;
	if (x->v.ndim < 1)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'layer_norm' on device '%s': x must have at least one dim",
					x->v.buf->backend->info.name));
	D = x->v.shape[x->v.ndim - 1];
	if (!is_vec(gamma, D) || !is_vec(beta, D))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'layer_norm' on device '%s': gamma and beta must be (%lld) for x %s",
					x->v.buf->backend->info.name, (long long)D, clg_shape_str(&x->v, s0, sizeof(s0))));
	if (!(eps >= 0))
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'layer_norm': eps %g must be >= 0", eps));
	if (fe_addnorm_ok(x, NULL, gamma, beta)) /* gamma and beta inside the one fused op */
		return fe_addnorm(x, NULL, gamma, beta, eps, NULL);
	y = normalize_rows(x, eps);
	if (y && gamma) {
		t = clg_mul(y, gamma);
		clg_free(y);
		y = t;
	}
	if (y && beta) {
		t = clg_add(y, beta);
		clg_free(y);
		y = t;
	}
	return y;
}

/* ---- batch norm ---- */

/* Copies src into dst's view (same shape), in place, outside the graph. */
static clg_status copy_into(clg_tensor *dst, clg_tensor *src)
{
	clg_op_call c = {.op = CLG_OP_COPY};
	if (!src)
		return clg_last_status();
	c.dst = dst->v;
	c.src[0] = src->v;
	return fe_run(dst->v.buf->backend, &c);
}

/* running = (1 - momentum) * running + momentum * batch (C), in place */
static clg_status update_running(temps *ts, clg_tensor *running, clg_tensor *batch, double momentum)
{
	clg_tensor *a = tmp(ts, clg_affine(running, 1.0 - momentum, 0.0));
	clg_tensor *b = tmp(ts, clg_affine(batch, momentum, 0.0));
	return copy_into(running, tmp(ts, clg_add(a, b)));
}

static clg_tensor *batch_norm(clg_tensor *x, clg_tensor *gamma, clg_tensor *beta, clg_tensor *running_mean,
			      clg_tensor *running_var, double momentum, double eps, int training);

clg_tensor *clg_batch_norm(clg_tensor *x, clg_tensor *gamma, clg_tensor *beta, clg_tensor *running_mean,
			   clg_tensor *running_var, double momentum, double eps, int training)
{
	clg_tensor *ins[3] = {x, gamma, beta}, *c[3], *y;
	clg_dtype dt;

	if (!x || !fe_autocast_high(3, ins))
		return batch_norm(x, gamma, beta, running_mean, running_var, momentum, eps, training);
	/* autocast: a 16-bit x stays 16-bit (gamma and beta cast to it), its statistics computed in
	 * float32 (the normalising row kernel accumulates in float32, the running statistics are taken
	 * from a float32 copy); anything else in float32 */
	dt = clg_dtype_is_half_storage(x->v.dtype) ? x->v.dtype : CLG_F32;
	if (fe_cast_each(3, ins, dt, c))
		return NULL;
	y = batch_norm(c[0], c[1], c[2], running_mean, running_var, momentum, eps, training);
	for (int i = 0; i < 3; i++)
		clg_free(c[i]);
	return y;
}

static clg_tensor *batch_norm(clg_tensor *x, clg_tensor *gamma, clg_tensor *beta, clg_tensor *running_mean,
			      clg_tensor *running_var, double momentum, double eps, int training)
{
	static const int axes2[] = {0}, axes4[] = {0, 2, 3};
	static const int to_channels[] = {1, 0, 2, 3}; /* (N, C, H, W) <-> (C, N, H, W) */
	clg_tensor *ins[5] = {x, gamma, beta, running_mean, running_var}, *xhat, *y = NULL;
	temps ts = {.n = 0};
	int nd, naxes;
	int64_t C, count, bshape[4] = {1, 1, 1, 1};
	char s0[96];
	clg_status st;

	if (!x || !check_optional("batch_norm", 5, ins))
		return NULL;
	nd = x->v.ndim;
	if (nd != 2 && nd != 4)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'batch_norm' on device '%s': x is %s, must be (N, C) or (N, C, H, W)",
					x->v.buf->backend->info.name, clg_shape_str(&x->v, s0, sizeof(s0))));
	C = x->v.shape[1];
	count = clg_view_numel(&x->v) / (C ? C : 1);
	if (!is_vec(gamma, C) || !is_vec(beta, C) || !is_vec(running_mean, C) || !is_vec(running_var, C))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'batch_norm' on device '%s': gamma, beta and the running statistics must be (%lld) for x %s",
					x->v.buf->backend->info.name, (long long)C, clg_shape_str(&x->v, s0, sizeof(s0))));
	if (!running_mean != !running_var)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'batch_norm': give both running_mean and running_var, or neither"));
	if (!training && !running_mean)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'batch_norm': evaluation (training = 0) needs running_mean and running_var"));
	if (training && count <= 1)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'batch_norm' on device '%s': training needs more than one value per channel, x is %s",
					x->v.buf->backend->info.name, clg_shape_str(&x->v, s0, sizeof(s0))));
	if (!(eps >= 0))
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'batch_norm': eps %g must be >= 0", eps));
	bshape[1] = C;
	naxes = nd == 2 ? 1 : 3;

	if (training) {
		/* channel-major rows, normalised by the fused layer-norm op: (C, N) is a transposed view
		 * of x; (C, N*H*W) needs a copy */
		if (nd == 2) {
			clg_tensor *xt = tmp(&ts, clg_transpose(x, 0, 1));
			xhat = tmp(&ts, clg_transpose(tmp(&ts, normalize_rows(xt, eps)), 0, 1));
		} else {
			clg_tensor *xt = tmp(&ts, clg_permute(x, to_channels));
			clg_tensor *xr = tmp(&ts, clg_reshape(xt, CLG_SHAPE(C, count)));
			clg_tensor *h = tmp(&ts, normalize_rows(xr, eps));
			clg_tensor *hr = tmp(&ts, clg_reshape(h, 4, xt ? xt->v.shape : bshape));
			xhat = tmp(&ts, clg_permute(hr, to_channels));
		}
		if (xhat && running_mean) {
			/* the running statistics, outside the graph: unbiased variance, as PyTorch */
			clg_no_grad_begin();
			/* in float32 whatever x's dtype (a 16-bit mean would lose the running statistics' digits) */
			clg_tensor *x32 = x->v.dtype == CLG_F32 || x->v.dtype == CLG_F64 ? x : tmp(&ts, clg_cast(x, CLG_F32));
			clg_tensor *mean = tmp(&ts, clg_mean(x32, naxes, nd == 2 ? axes2 : axes4, 1));
			clg_tensor *d = tmp(&ts, clg_sub(x32, mean));
			clg_tensor *d2 = tmp(&ts, clg_mul(d, d));
			clg_tensor *ss = tmp(&ts, clg_sum(d2, naxes, nd == 2 ? axes2 : axes4, 0)); /* (C) */
			clg_tensor *var = tmp(&ts, clg_affine(ss, 1.0 / (double)(count - 1), 0.0));
			st = update_running(&ts, running_mean, tmp(&ts, clg_reshape(mean, CLG_SHAPE(C))), momentum);
			if (!st)
				st = update_running(&ts, running_var, var, momentum);
			clg_no_grad_end();
			if (st)
				xhat = NULL;
		}
	} else {
		/* (x - running_mean) * rsqrt(running_var + eps), the statistics broadcast per channel */
		clg_tensor *m = tmp(&ts, clg_reshape(running_mean, nd, bshape));
		clg_tensor *ve = tmp(&ts, clg_affine(running_var, 1.0, eps));
		clg_tensor *r = tmp(&ts, clg_reshape(tmp(&ts, clg_rsqrt(ve)), nd, bshape));
		xhat = tmp(&ts, clg_mul(tmp(&ts, clg_sub(x, m)), r));
	}
	if (xhat && gamma)
		xhat = tmp(&ts, clg_mul(xhat, tmp(&ts, clg_reshape(gamma, nd, bshape))));
	if (xhat && beta)
		xhat = tmp(&ts, clg_add(xhat, tmp(&ts, clg_reshape(beta, nd, bshape))));
	y = result(&ts, xhat);
	temps_free(&ts);
	return y;
}

/* ---- scaled dot-product attention ---- */

/* (Tq, Tk) additive mask: 0 where key j <= query i, -inf above the diagonal. */
static clg_tensor *causal_mask(clg_backend *be, clg_dtype dt, int64_t Tq, int64_t Tk)
{
	size_t n = (size_t)(Tq * Tk), es = clg_dtype_size(dt);
	void *host = malloc(n ? n * es : 1);
	clg_tensor *m;
	if (!host)
		return fe_fail(clg_fail(CLG_ERR_OOM, "op 'attention': out of host memory"));
	for (int64_t i = 0; i < Tq; i++)
		for (int64_t j = 0; j < Tk; j++) {
			double v = j <= i ? 0.0 : -INFINITY;
			if (dt == CLG_F64)
				((double *)host)[i * Tk + j] = v;
			else if (dt == CLG_F16)
				((uint16_t *)host)[i * Tk + j] = clg_float_to_half((float)v);
			else if (dt == CLG_BF16)
				((uint16_t *)host)[i * Tk + j] = clg_float_to_bf16((float)v);
			else
				((float *)host)[i * Tk + j] = (float)v;
		}
	m = clg_from_host(be, dt, CLG_SHAPE(Tq, Tk), host);
	free(host);
	return m;
}

/* attn_mask (broadcast to the scores' (lead..., Tq, Tk)) as an additive mask in dt: a float mask
 * as it is (cast to dt), an int32 one through a 2-row table: 0 -> -inf, any other value (out of
 * the table: a zero row) -> 0, so nonzero attends as PyTorch's True. */
static clg_tensor *additive_mask(clg_tensor *m, clg_dtype dt, int nd, const int64_t *sshape)
{
	char s0[96];
	int ok = m->v.ndim <= nd;
	for (int d = 0; ok && d < m->v.ndim; d++) {
		int64_t e = m->v.shape[m->v.ndim - 1 - d], want = sshape[nd - 1 - d];
		ok = e == 1 || e == want;
	}
	if (!ok)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'attention': attn_mask %s does not broadcast to the scores (%s%lld, %lld)",
					clg_shape_str(&m->v, s0, sizeof(s0)), nd == 4 ? "B, H, " : "B, ",
					(long long)sshape[nd - 2], (long long)sshape[nd - 1]));
	if (m->v.dtype == CLG_I32) {
		clg_backend *be = m->v.buf->backend;
		double host[2] = {-INFINITY, 0.0};
		float hf[2] = {-INFINITY, 0.0f};
		clg_tensor *table = dt == CLG_F64 ? clg_from_host(be, dt, CLG_SHAPE(2, 1), host)
						  : clg_from_host(be, CLG_F32, CLG_SHAPE(2, 1), hf);
		clg_tensor *e = table ? clg_embedding(table, m) : NULL; /* (mask..., 1) */
		clg_tensor *a = e ? clg_reshape(e, m->v.ndim, m->v.shape) : NULL;
		clg_tensor *r = a && a->v.dtype != dt ? clg_cast(a, dt) : (a ? fe_alias(a) : NULL);
		clg_free(table);
		clg_free(e);
		clg_free(a);
		return r;
	}
	return m->v.dtype == dt ? fe_alias(m) : clg_cast(m, dt);
}

/* The composite (the reference, and the path of masks and dropout): heads folded into the batch,
 * (B*H, T, D), a view when contiguous. */
static clg_tensor *attention_composite(clg_tensor *q, clg_tensor *k, clg_tensor *v, const clg_attention_opts *o,
				       double scale)
{
	temps ts = {.n = 0};
	clg_tensor *q3, *k3, *v3, *s, *p, *out, *y;
	int nd = q->v.ndim;
	int64_t BH = 1, Tq = q->v.shape[nd - 2], Dh = q->v.shape[nd - 1], Tk = k->v.shape[nd - 2], Dv = v->v.shape[nd - 1];
	int64_t sshape[4];

	for (int d = 0; d < nd - 2; d++)
		BH *= q->v.shape[d], sshape[d] = q->v.shape[d];
	sshape[nd - 2] = Tq, sshape[nd - 1] = Tk;
	q3 = nd == 3 ? q : tmp(&ts, clg_reshape(q, CLG_SHAPE(BH, Tq, Dh)));
	k3 = nd == 3 ? k : tmp(&ts, clg_reshape(k, CLG_SHAPE(BH, Tk, Dh)));
	v3 = nd == 3 ? v : tmp(&ts, clg_reshape(v, CLG_SHAPE(BH, Tk, Dv)));
	/* scores (B*H, Tq, Tk) = scale q k^T, k^T a transposed view used without a copy */
	s = tmp(&ts, clg_matmul(q3, tmp(&ts, clg_transpose(k3, 1, 2))));
	s = tmp(&ts, clg_affine(s, scale, 0.0));
	if (o->causal && s)
		s = tmp(&ts, clg_add(s, tmp(&ts, causal_mask(q->v.buf->backend, q->v.dtype, Tq, Tk))));
	if (o->attn_mask && s) {
		/* (lead..., Tq, Tk) + the mask, broadcast as NumPy does */
		clg_tensor *s4 = tmp(&ts, clg_reshape(s, nd, sshape));
		clg_tensor *m = s4 ? tmp(&ts, additive_mask(o->attn_mask, s->v.dtype, nd, sshape)) : NULL;
		s = tmp(&ts, clg_reshape(tmp(&ts, clg_add(s4, m)), CLG_SHAPE(BH, Tq, Tk)));
	}
	p = tmp(&ts, clg_softmax(s));
	if (o->dropout_p > 0 && p)
		p = tmp(&ts, clg_dropout(p, o->dropout_p, o->seed, 1));
	out = tmp(&ts, clg_matmul(p, v3)); /* (B*H, Tq, Dv) */
	if (nd == 4)
		out = tmp(&ts, clg_reshape(out, CLG_SHAPE(q->v.shape[0], q->v.shape[1], Tq, Dv)));
	y = result(&ts, out);
	temps_free(&ts);
	return y;
}

clg_tensor *clg_scaled_dot_product_attention(clg_tensor *q, clg_tensor *k, clg_tensor *v, int causal,
					     double dropout_p)
{
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;
	if (dropout_p != 0) {
		clg_tensor *ins[3] = {q, k, v};
		if (!fe_check_inputs("attention", 3, ins))
			return NULL;
		return fe_fail(clg_fail(CLG_ERR_UNSUPPORTED, "op 'attention': dropout_p %g without a seed: use clg_scaled_dot_product_attention_ex (its seed draws the mask)",
					dropout_p));
	}
	o.causal = causal;
	return clg_scaled_dot_product_attention_ex(q, k, v, &o);
}

clg_tensor *clg_scaled_dot_product_attention_ex(clg_tensor *q, clg_tensor *k, clg_tensor *v, const clg_attention_opts *opts)
{
	static const clg_attention_opts none = CLG_ATTENTION_OPTS_INIT;
	const clg_attention_opts *o = opts ? opts : &none;
	clg_tensor *ins[3] = {q, k, v}, *y = NULL;
	int nd, ok, plain;
	int64_t Dh = 0, Dv = 0;
	double scale;
	char s0[96], s1[96], s2[96];

	if (!fe_check_inputs("attention", 3, ins))
		return NULL;
	if (!(o->dropout_p >= 0 && o->dropout_p < 1))
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'attention': dropout_p %g outside [0, 1)", o->dropout_p));
	if (o->attn_mask && o->causal)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'attention': attn_mask and causal both set (as PyTorch, one or the other)"));
	if (o->attn_mask && o->attn_mask->v.buf->backend != q->v.buf->backend)
		return fe_fail(clg_fail(CLG_ERR_DEVICE, "op 'attention': attn_mask on device '%s', q on '%s'",
					o->attn_mask->v.buf->backend->info.name, q->v.buf->backend->info.name));
	nd = q->v.ndim;
	ok = (nd == 3 || nd == 4) && k->v.ndim == nd && v->v.ndim == nd;
	for (int d = 0; ok && d < nd - 2; d++)
		ok = k->v.shape[d] == q->v.shape[d] && v->v.shape[d] == q->v.shape[d];
	if (ok) {
		Dh = q->v.shape[nd - 1], Dv = v->v.shape[nd - 1];
		ok = k->v.shape[nd - 1] == Dh && v->v.shape[nd - 2] == k->v.shape[nd - 2] && Dh > 0;
	}
	if (!ok)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'attention' on device '%s': q %s, k %s, v %s: expected (B, H, Tq, Dh), (B, H, Tk, Dh), (B, H, Tk, Dv) or the same without H",
					q->v.buf->backend->info.name, clg_shape_str(&q->v, s0, sizeof(s0)),
					clg_shape_str(&k->v, s1, sizeof(s1)), clg_shape_str(&v->v, s2, sizeof(s2))));
	scale = o->scale != 0 ? o->scale : 1.0 / sqrt((double)Dh);
	/* the fused kernels take no mask and no dropout */
	plain = !o->attn_mask && o->dropout_p == 0;
	if (plain && fe_attention_fused_ok(q, Dh, Dv))
		return fe_attention_fused(q, k, v, o->causal, Dv, scale);
	if (plain && fe_autocast_high(3, ins) && clg_fused_ops_enabled()) {
		/* autocast: 16-bit q, k and v through the fused kernels in float32 (softmax and its
		 * log-sum-exp in float32, no (Tq, Tk) scores kept for the backward); the output is float32,
		 * cast again by the GEMM-like op that takes it. Where the fused path does not serve, the
		 * composite below in 16-bit (its softmax autocasts to float32). */
		clg_tensor *c[3];
		int fused;
		if (fe_cast_each(3, ins, CLG_F32, c))
			return NULL;
		fused = fe_attention_fused_ok(c[0], Dh, Dv);
		if (fused)
			y = fe_attention_fused(c[0], c[1], c[2], o->causal, Dv, scale);
		for (int i = 0; i < 3; i++)
			clg_free(c[i]);
		if (fused)
			return y; /* NULL: its error */
	}
	return attention_composite(q, k, v, o, scale);
}
