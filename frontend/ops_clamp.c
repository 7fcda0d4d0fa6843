/* clamp with tensor bounds (torch.clamp(x, min=tensor, max=tensor)): the forward is one
 * elementwise op (CLAMP_TENSOR, with NaN propagation that where() and comparisons cannot give in
 * one pass); the backward composes comparisons, as it runs only for what needs a gradient. */
#include "fe_internal.h"

#include <math.h>

/* node->in: x, lo, hi (lo or hi a constant -inf / +inf when not given). PyTorch's gradients:
 *   dx  = g where lo <= x <= hi
 *   dlo = g where x < lo and lo < hi
 *   dhi = g where x > hi or hi < lo (crossed bounds give hi everywhere) */
static clg_tensor *masked(clg_tensor *g, clg_tensor *m)
{
	clg_tensor *r = clg_mul(g, m);
	clg_free(m);
	return r;
}

static clg_status clamp_tensor_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *lo = n->in[1], *hi = n->in[2];
	clg_status st = CLG_OK;

	if (x->requires_grad) {
		clg_tensor *a = clg_compare(x, lo, CLG_CMP_GE), *b = clg_compare(x, hi, CLG_CMP_LE);
		st = fe_give(x, masked(g, a && b ? clg_mul(a, b) : NULL));
		clg_free(a);
		clg_free(b);
	}
	if (!st && lo->requires_grad) {
		clg_tensor *a = clg_compare(x, lo, CLG_CMP_LT), *b = clg_compare(lo, hi, CLG_CMP_LT);
		st = fe_give(lo, masked(g, a && b ? clg_mul(a, b) : NULL));
		clg_free(a);
		clg_free(b);
	}
	if (!st && hi->requires_grad) {
		/* a or b, both 0/1: a + b - a b */
		clg_tensor *a = clg_compare(x, hi, CLG_CMP_GT), *b = clg_compare(hi, lo, CLG_CMP_LT);
		clg_tensor *ab = a && b ? clg_mul(a, b) : NULL, *s = a && b ? clg_add(a, b) : NULL;
		st = fe_give(hi, masked(g, s && ab ? clg_sub(s, ab) : NULL));
		clg_free(a);
		clg_free(b);
		clg_free(ab);
		clg_free(s);
	}
	return st;
}

/* The broadcast shape of the n tensors into shape (*nd dims); 0, or -1 when they do not broadcast. */
static int broadcast_shape(int n, clg_tensor *const *t, int *nd, int64_t *shape)
{
	*nd = 0;
	for (int k = 0; k < n; k++)
		if (t[k]->v.ndim > *nd)
			*nd = t[k]->v.ndim;
	for (int d = 0; d < *nd; d++) {
		shape[d] = 1;
		for (int k = 0; k < n; k++) {
			int dk = d - (*nd - t[k]->v.ndim);
			int64_t s = dk >= 0 ? t[k]->v.shape[dk] : 1;
			if (s != 1 && shape[d] != 1 && s != shape[d])
				return -1;
			if (s != 1)
				shape[d] = s;
		}
	}
	return 0;
}

clg_tensor *clg_clamp_tensor(clg_tensor *x, clg_tensor *lo, clg_tensor *hi)
{
	clg_tensor *ins[3] = {x, lo, hi}, *out = NULL;
	clg_op_call c = {.op = CLG_OP_CLAMP_TENSOR};
	int nd, made[3] = {0, 0, 0};
	int64_t shape[CLG_MAX_DIMS];
	char s0[96], s1[96], s2[96];

	if (!x || (!lo && !hi))
		return x ? fe_fail(clg_fail(CLG_ERR_INVALID, "op 'clamp' on device '%s': at least one of min and max must be given",
					    x->v.buf->backend->info.name))
			 : NULL;
	/* a missing bound is a constant +-inf, which never clamps (and gets no gradient) */
	for (int k = 1; k < 3; k++)
		if (!ins[k]) {
			ins[k] = clg_full(x->v.buf->backend, x->v.dtype, CLG_SHAPE(1), k == 1 ? -INFINITY : INFINITY);
			if (!ins[k])
				goto done;
			made[k] = 1;
		}
	if (!fe_check_inputs("clamp", 3, ins))
		goto done;
	if (ins[1]->v.dtype != x->v.dtype || ins[2]->v.dtype != x->v.dtype) {
		fe_fail(clg_fail(CLG_ERR_DTYPE, "op 'clamp' on device '%s': x is %s but min is %s and max %s",
				 x->v.buf->backend->info.name, clg_dtype_name(x->v.dtype), clg_dtype_name(ins[1]->v.dtype),
				 clg_dtype_name(ins[2]->v.dtype)));
		goto done;
	}
	if (broadcast_shape(3, ins, &nd, shape)) {
		fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'clamp' on device '%s': x %s, min %s and max %s do not broadcast",
				 x->v.buf->backend->info.name, clg_shape_str(&x->v, s0, sizeof(s0)),
				 clg_shape_str(&ins[1]->v, s1, sizeof(s1)), clg_shape_str(&ins[2]->v, s2, sizeof(s2))));
		goto done;
	}
	out = fe_new(x->v.buf->backend, x->v.dtype, nd, shape);
	if (!out)
		goto done;
	c.dst = out->v;
	for (int k = 0; k < 3; k++)
		fe_broadcast_view(ins[k], nd, shape, &c.src[k]);
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		out = NULL;
		goto done;
	}
	out = fe_record_op(out, "clamp", clamp_tensor_backward, 3, ins, NULL);
done:
	for (int k = 1; k < 3; k++)
		if (made[k])
			clg_free(ins[k]);
	return out;
}
