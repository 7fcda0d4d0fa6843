/* Attention over one packed projection: qkv (B, T, 3 D) holds q, k and v side by side in each row
 * (as a (D, 3 D) projection writes them), D = H * Dh. The fused path (ATTENTION_FWD / _BWD,
 * clg_ops.def) takes the heads as strided views of qkv and writes the output in (B, T, H, Dh)
 * order and the backward's dq, dk and dv into one (B, T, 3 D) gradient: no copies either way.
 * Elsewhere the heads are sliced views through the autograd and the composite attention runs. */
#include "fe_internal.h"

#include <math.h>

/* The (B, H, T, Dh) view of head block `part` (0 q, 1 k, 2 v; 0 for a (B, T, D) tensor) of a
 * (B, T, W) view whose row holds blocks of D = H * Dh. */
static clg_view head_view(const clg_view *bt, int part, int64_t H, int64_t Dh)
{
	clg_view h = *bt;
	int64_t sB = bt->stride[0], sT = bt->stride[1], sE = bt->stride[2];
	h.ndim = 4;
	h.offset = bt->offset + (int64_t)part * H * Dh * sE;
	h.shape[0] = bt->shape[0], h.shape[1] = H, h.shape[2] = bt->shape[1], h.shape[3] = Dh;
	h.stride[0] = sB, h.stride[1] = Dh * sE, h.stride[2] = sT, h.stride[3] = sE;
	return h;
}

/* in[0] qkv; saved[0] the log-sum-exp (B, H, T), saved[1] the output (B, T, D); f[0] the scale,
 * i[0] causal, i[1] heads */
static clg_status qkv_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *qkv = n->in[0], *d;
	int64_t H = n->i[1], Dh = qkv->v.shape[2] / 3 / H;
	clg_op_call c = {.op = CLG_OP_ATTENTION_BWD};

	if (n->nsaved != 2)
		return clg_fail(CLG_ERR_OOM, "op 'attention_qkv' backward: the saved tensors were not kept (out of host memory)");
	d = fe_new(qkv->v.buf->backend, qkv->v.dtype, 3, qkv->v.shape); /* (B, T, 3 D): dq, dk, dv side by side */
	if (!d)
		return clg_last_status();
	c.dst = head_view(&d->v, 0, H, Dh);
	c.src[0] = head_view(&g->v, 0, H, Dh);
	c.src[1] = head_view(&qkv->v, 0, H, Dh);
	c.src[2] = head_view(&qkv->v, 1, H, Dh);
	c.src[3] = head_view(&qkv->v, 2, H, Dh);
	c.src[4] = head_view(&n->saved[1]->v, 0, H, Dh);
	c.src[5] = n->saved[0]->v;
	c.src[6] = head_view(&d->v, 1, H, Dh);
	c.src[7] = head_view(&d->v, 2, H, Dh);
	c.f[0] = n->f[0];
	c.i[0] = n->i[0];
	if (fe_run(qkv->v.buf->backend, &c)) {
		clg_free(d);
		return clg_last_status();
	}
	return fe_give(qkv, d);
}

static clg_tensor *qkv_fused(clg_tensor *qkv, int64_t H, int64_t Dh, int causal, double scale)
{
	clg_backend *be = qkv->v.buf->backend;
	int64_t B = qkv->v.shape[0], T = qkv->v.shape[1], oshape[3] = {B, T, H * Dh};
	clg_op_call c = {.op = CLG_OP_ATTENTION_FWD};
	clg_tensor *o, *lse, *r;
	clg_node *node = NULL;

	o = fe_new(be, qkv->v.dtype, 3, oshape);
	lse = o ? fe_new(be, qkv->v.dtype, CLG_SHAPE(B, H, T)) : NULL;
	if (!lse)
		goto fail;
	c.dst = head_view(&o->v, 0, H, Dh);
	c.src[0] = head_view(&qkv->v, 0, H, Dh);
	c.src[1] = head_view(&qkv->v, 1, H, Dh);
	c.src[2] = head_view(&qkv->v, 2, H, Dh);
	c.src[3] = lse->v;
	c.f[0] = scale;
	c.i[0] = causal != 0;
	if (fe_run(be, &c))
		goto fail;
	r = fe_record_op(o, "attention_qkv", qkv_backward, 1, &qkv, &node);
	if (node) {
		node->f[0] = c.f[0];
		node->i[0] = c.i[0];
		node->i[1] = H;
		fe_save(node, lse);
		fe_save(node, r);
	}
	clg_free(lse);
	return r;
fail:
	clg_free(o);
	clg_free(lse);
	return NULL;
}

/* The composite: the heads as sliced views through the autograd, clg_scaled_dot_product_attention,
 * the output permuted back and made contiguous. */
static clg_tensor *qkv_composite(clg_tensor *qkv, int64_t H, int64_t Dh, const clg_attention_opts *o)
{
	int64_t B = qkv->v.shape[0], T = qkv->v.shape[1];
	static const int to_heads[] = {0, 2, 1, 3};
	clg_tensor *r = clg_reshape(qkv, CLG_SHAPE(B, T, 3 * H, Dh)), *p = r ? clg_permute(r, to_heads) : NULL;
	clg_tensor *q = p ? clg_slice(p, 1, 0, H, 1) : NULL, *k = q ? clg_slice(p, 1, H, 2 * H, 1) : NULL;
	clg_tensor *v = k ? clg_slice(p, 1, 2 * H, 3 * H, 1) : NULL;
	clg_tensor *a = v ? clg_scaled_dot_product_attention_ex(q, k, v, o) : NULL;
	clg_tensor *ap = a ? clg_permute(a, to_heads) : NULL, *ac = ap ? clg_contiguous(ap) : NULL;
	clg_tensor *y = ac ? clg_reshape(ac, CLG_SHAPE(B, T, H * Dh)) : NULL;
	clg_tensor *tmp[] = {r, p, q, k, v, a, ap, ac};
	for (size_t i = 0; i < sizeof(tmp) / sizeof(tmp[0]); i++)
		clg_free(tmp[i]);
	return y;
}

clg_tensor *clg_attention_qkv(clg_tensor *qkv, int64_t heads, int causal)
{
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;
	o.causal = causal;
	return clg_attention_qkv_ex(qkv, heads, &o);
}

clg_tensor *clg_attention_qkv_ex(clg_tensor *qkv, int64_t heads, const clg_attention_opts *opts)
{
	static const clg_attention_opts none = CLG_ATTENTION_OPTS_INIT;
	const clg_attention_opts *o = opts ? opts : &none;
	int64_t W, Dh;
	double scale;
	int plain = !o->attn_mask && o->dropout_p == 0;
	char s0[96];

	if (!fe_check_inputs("attention_qkv", 1, &qkv))
		return NULL;
	W = qkv->v.ndim == 3 ? qkv->v.shape[2] : 0;
	if (qkv->v.ndim != 3 || heads < 1 || W < 3 || W % (3 * heads))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'attention_qkv' on device '%s': qkv %s with %lld heads: expected (B, T, 3 * heads * Dh)",
					qkv->v.buf->backend->info.name, clg_shape_str(&qkv->v, s0, sizeof(s0)), (long long)heads));
	Dh = W / 3 / heads;
	scale = o->scale != 0 ? o->scale : 1.0 / sqrt((double)Dh);
	if (plain && fe_attention_fused_ok(qkv, Dh, Dh))
		return qkv_fused(qkv, heads, Dh, o->causal, scale);
	if (plain && fe_autocast_high(1, &qkv) && clg_fused_ops_enabled()) {
		/* autocast: a 16-bit qkv cast to float32 once, then the fused kernels (as
		 * clg_scaled_dot_product_attention does with q, k and v) */
		clg_tensor *c, *y = NULL;
		int fused;
		if (fe_cast_each(1, &qkv, CLG_F32, &c))
			return NULL;
		fused = fe_attention_fused_ok(c, Dh, Dh);
		if (fused)
			y = qkv_fused(c, heads, Dh, o->causal, scale);
		clg_free(c);
		if (fused)
			return y; /* NULL: its error */
	}
	return qkv_composite(qkv, heads, Dh, o);
}
