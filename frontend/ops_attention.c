/* The fused path of scaled dot-product attention (ATTENTION_FWD / ATTENTION_BWD, clg_ops.def):
 * one op forward, saving the output and each query row's log-sum-exp; one op backward for dq, dk
 * and dv. clg_scaled_dot_product_attention (ops_norm.c) takes it where fe_attention_fused_ok
 * says so, and composes the unfused ops otherwise. */
#include "fe_internal.h"


int fe_attention_fused_ok(clg_tensor *q, int64_t Dh, int64_t Dv)
{
	clg_backend *be = q->v.buf->backend;
	clg_dtype dt = q->v.dtype;
	/* the op table entries are cleared where the first-use self-test found them wrong */
	return clg_fused_ops_enabled() && (dt == CLG_F32 || dt == CLG_F64) && Dh <= CLG_ATTENTION_DMAX &&
	       Dv <= CLG_ATTENTION_DMAX && clg_backend_has_op(be, CLG_OP_ATTENTION_FWD) &&
	       clg_backend_has_op(be, CLG_OP_ATTENTION_BWD);
}

/* saved[0]: the log-sum-exp (B, H, Tq); saved[1]: the output; f[0] the scale, i[0] causal */
static clg_status attention_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *q = n->in[0], *k = n->in[1], *v = n->in[2], *dq = NULL, *dk = NULL, *dv = NULL;
	clg_backend *be = g->v.buf->backend;
	clg_op_call c = {.op = CLG_OP_ATTENTION_BWD};
	clg_status st;

	if (n->nsaved != 2)
		return clg_fail(CLG_ERR_OOM, "op 'attention' backward: the saved tensors were not kept (out of host memory)");
	/* each gradient in its input's layout: the heads' permute back to (B, T, H, Dh) then copies nothing */
	dq = fe_new_like(be, q->v.dtype, &q->v);
	dk = dq ? fe_new_like(be, k->v.dtype, &k->v) : NULL;
	dv = dk ? fe_new_like(be, v->v.dtype, &v->v) : NULL;
	if (!dv) {
		st = clg_last_status();
		goto out;
	}
	c.dst = dq->v;
	c.src[0] = g->v;
	c.src[1] = q->v;
	c.src[2] = k->v;
	c.src[3] = v->v;
	c.src[4] = n->saved[1]->v;
	c.src[5] = n->saved[0]->v;
	c.src[6] = dk->v;
	c.src[7] = dv->v;
	c.f[0] = n->f[0];
	c.i[0] = n->i[0];
	st = fe_run(be, &c);
	/* fe_give takes its gradient over, even on failure */
	if (!st && q->requires_grad)
		st = fe_give(q, dq), dq = NULL;
	if (!st && k->requires_grad)
		st = fe_give(k, dk), dk = NULL;
	if (!st && v->requires_grad)
		st = fe_give(v, dv), dv = NULL;
out:
	clg_free(dq);
	clg_free(dk);
	clg_free(dv);
	return st;
}

clg_tensor *fe_attention_fused(clg_tensor *q, clg_tensor *k, clg_tensor *v, int causal, int64_t Dv, double scale)
{
	clg_tensor *ins[3] = {q, k, v}, *o, *lse, *r;
	clg_backend *be = q->v.buf->backend;
	clg_op_call c = {.op = CLG_OP_ATTENTION_FWD};
	clg_node *node = NULL;
	int nd = q->v.ndim;
	int64_t oshape[4];

	for (int d = 0; d < nd - 1; d++)
		oshape[d] = q->v.shape[d];
	oshape[nd - 1] = Dv;
	/* (B, H, Tq, Dv), in q's layout where its rows are as long (see attention_backward) */
	o = Dv == q->v.shape[nd - 1] ? fe_new_like(be, q->v.dtype, &q->v) : fe_new(be, q->v.dtype, nd, oshape);
	lse = o ? fe_new(be, q->v.dtype, nd - 1, q->v.shape) : NULL; /* (B, H, Tq) */
	if (!lse)
		goto fail;
	c.dst = o->v;
	c.src[0] = q->v;
	c.src[1] = k->v;
	c.src[2] = v->v;
	c.src[3] = lse->v;
	c.f[0] = scale;
	c.i[0] = causal != 0;
	if (fe_run(be, &c))
		goto fail;
	r = fe_record_op(o, "attention", attention_backward, 3, ins, &node);
	if (node) {
		node->f[0] = c.f[0];
		node->i[0] = c.i[0];
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
