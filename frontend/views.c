/* Differentiable views: reshape, permute, slice, expand. They share storage; backward maps the
 * gradient back to the base's shape; and fe_reduce_to / fe_give, which sum a broadcast gradient
 * back. Layer 2 of the frontend's core (fe_internal.h): it calls autograd.c and tensor.c. */
#include "fe_internal.h"

#include <string.h>

static clg_tensor *view_with_node(clg_tensor *t, const clg_view *v, const char *op, clg_backward_fn fn,
				  const int64_t *ip, int nip)
{
	clg_node *n;
	clg_tensor *out = fe_record_op(fe_view_of(t, v), op, fn, 1, &t, &n);
	for (int k = 0; n && k < nip && k < 8; k++)
		n->i[k] = ip[k];
	return out;
}

clg_tensor *clg_contiguous(clg_tensor *t)
{
	if (!t)
		return NULL;
	/* a copy (or an alias of a contiguous t), differentiable as the identity */
	return fe_record_op(fe_contiguous_nograd(t), clg_view_is_contiguous(&t->v) ? "alias" : "contiguous",
			    fe_identity_backward, 1, &t, NULL);
}

/* ---- reshape ---- */

static clg_status reshape_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *gx = clg_reshape(g, x->v.ndim, x->v.shape);
	clg_status st = gx ? fe_accumulate(x, gx) : clg_last_status();
	clg_free(gx);
	return st;
}

clg_tensor *clg_reshape(clg_tensor *t, int ndim, const int64_t *shape)
{
	int64_t sh[CLG_MAX_DIMS], known = 1, n;
	int infer = -1;
	clg_view v;
	clg_tensor *base, *out;
	char s0[96];

	if (!fe_check_inputs("reshape", 1, &t))
		return NULL;
	n = clg_view_numel(&t->v);
	if (ndim < 0 || ndim > CLG_MAX_DIMS)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'reshape': %d dims (at most %d)", ndim, CLG_MAX_DIMS));
	for (int d = 0; d < ndim; d++) {
		sh[d] = shape[d];
		if (shape[d] == -1 && infer < 0)
			infer = d;
		else if (shape[d] < 0)
			return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'reshape': bad dim %lld", (long long)shape[d]));
		else
			known *= shape[d];
	}
	if (infer >= 0)
		sh[infer] = known ? n / known : 0;
	if ((infer >= 0 ? known * sh[infer] : known) != n)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'reshape' on device '%s': cannot reshape %s (%lld elements) to %d dims of %lld elements",
					t->v.buf->backend->info.name, clg_shape_str(&t->v, s0, sizeof(s0)),
					(long long)n, ndim, (long long)known));
	base = clg_view_is_contiguous(&t->v) ? t : fe_own(clg_contiguous(t));
	if (!base)
		return NULL;
	clg_view_contiguous(&v, base->v.buf, base->v.dtype, ndim, sh);
	v.offset = base->v.offset;
	out = view_with_node(base, &v, "reshape", reshape_backward, NULL, 0);
	if (base != t)
		fe_release(base);
	return out;
}

/* ---- permute ---- */

static clg_status permute_backward(clg_node *n, clg_tensor *g)
{
	int inv[CLG_MAX_DIMS];
	clg_tensor *gx;
	clg_status st;
	for (int d = 0; d < g->v.ndim; d++)
		inv[n->i[d]] = d;
	gx = clg_permute(g, inv);
	st = gx ? fe_accumulate(n->in[0], gx) : clg_last_status();
	clg_free(gx);
	return st;
}

clg_tensor *clg_permute(clg_tensor *t, const int *perm)
{
	clg_view v;
	int seen[CLG_MAX_DIMS] = {0};
	int64_t ip[CLG_MAX_DIMS];

	if (!fe_check_inputs("permute", 1, &t))
		return NULL;
	v = t->v;
	for (int d = 0; d < t->v.ndim; d++) {
		int p = perm[d];
		if (p < 0 || p >= t->v.ndim || seen[p]++)
			return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'permute': not a permutation of %d dims", t->v.ndim));
		v.shape[d] = t->v.shape[p];
		v.stride[d] = t->v.stride[p];
		ip[d] = p;
	}
	return view_with_node(t, &v, "permute", permute_backward, ip, t->v.ndim);
}

clg_tensor *clg_transpose(clg_tensor *t, int d0, int d1)
{
	int perm[CLG_MAX_DIMS];
	if (!fe_check_inputs("transpose", 1, &t))
		return NULL;
	if (d0 < 0)
		d0 += t->v.ndim;
	if (d1 < 0)
		d1 += t->v.ndim;
	if (d0 < 0 || d1 < 0 || d0 >= t->v.ndim || d1 >= t->v.ndim)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'transpose': dims %d, %d out of range for %d dims", d0, d1, t->v.ndim));
	for (int d = 0; d < t->v.ndim; d++)
		perm[d] = d;
	perm[d0] = d1;
	perm[d1] = d0;
	return clg_permute(t, perm);
}

/* ---- slice ---- */

static clg_status slice_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *gx = clg_zeros(x->v.buf->backend, x->v.dtype, x->v.ndim, x->v.shape), *part;
	clg_op_call c = {.op = CLG_OP_COPY};
	clg_status st;

	if (!gx)
		return clg_last_status();
	clg_no_grad_begin();
	part = clg_slice(gx, (int)n->i[0], n->i[1], n->i[2], n->i[3]);
	clg_no_grad_end();
	if (!part) {
		clg_free(gx);
		return clg_last_status();
	}
	c.dst = part->v;
	c.src[0] = g->v;
	st = fe_run(gx->v.buf->backend, &c);
	if (!st)
		st = fe_accumulate(x, gx);
	clg_free(part);
	clg_free(gx);
	return st;
}

clg_tensor *clg_slice(clg_tensor *t, int dim, int64_t start, int64_t end, int64_t step)
{
	clg_view v;
	int64_t size, ip[4];

	if (!fe_check_inputs("slice", 1, &t))
		return NULL;
	if (dim < 0)
		dim += t->v.ndim;
	if (dim < 0 || dim >= t->v.ndim || step <= 0)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'slice': dim %d or step %lld invalid for %d dims", dim,
					(long long)step, t->v.ndim));
	size = t->v.shape[dim];
	if (start < 0)
		start += size;
	if (end < 0)
		end += size;
	if (end > size)
		end = size;
	if (start < 0 || start > end)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'slice': range [%lld, %lld) outside dim %d of size %lld",
					(long long)start, (long long)end, dim, (long long)size));
	v = t->v;
	v.offset += start * t->v.stride[dim];
	v.shape[dim] = (end - start + step - 1) / step;
	v.stride[dim] *= step;
	ip[0] = dim, ip[1] = start, ip[2] = end, ip[3] = step;
	return view_with_node(t, &v, "slice", slice_backward, ip, 4);
}

/* ---- expand ---- */

static clg_status expand_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *gx = fe_reduce_to(g, x->v.ndim, x->v.shape);
	clg_status st = gx ? fe_accumulate(x, gx) : clg_last_status();
	clg_free(gx);
	return st;
}

clg_tensor *clg_expand(clg_tensor *t, int ndim, const int64_t *shape)
{
	if (!fe_check_inputs("expand", 1, &t))
		return NULL;
	return fe_record_op(fe_expand_nograd(t, ndim, shape), "expand", expand_backward, 1, &t, NULL);
}

/* ---- gradients of broadcasts: summed back to the input's shape ---- */

clg_tensor *fe_reduce_to(clg_tensor *g, int ndim, const int64_t *shape)
{
	int lead = g->v.ndim - ndim, perm[CLG_MAX_DIMS], nkeep = 0, nred = 0, reduced[CLG_MAX_DIMS];
	int64_t keep_shape[CLG_MAX_DIMS];
	clg_op_call c = {.op = CLG_OP_SUM};
	clg_tensor *sum, *out;

	for (int d = 0; d < g->v.ndim; d++)
		reduced[d] = d < lead || (shape[d - lead] == 1 && g->v.shape[d] != 1);
	for (int d = 0; d < g->v.ndim; d++)
		if (!reduced[d]) {
			perm[nkeep] = d;
			keep_shape[nkeep++] = g->v.shape[d];
		}
	if (nkeep == g->v.ndim)
		return fe_alias(g);
	for (int d = 0; d < g->v.ndim; d++)
		if (reduced[d])
			perm[nkeep + nred++] = d;
	sum = fe_new(g->v.buf->backend, g->v.dtype, nkeep, keep_shape);
	if (!sum)
		return NULL;
	c.dst = sum->v;
	c.src[0] = g->v;
	for (int d = 0; d < g->v.ndim; d++) {
		c.src[0].shape[d] = g->v.shape[perm[d]];
		c.src[0].stride[d] = g->v.stride[perm[d]];
	}
	if (fe_run(sum->v.buf->backend, &c)) {
		clg_free(sum);
		return NULL;
	}
	out = clg_reshape(sum, ndim, shape);
	clg_free(sum);
	return out;
}

clg_status fe_give(clg_tensor *x, clg_tensor *g)
{
	clg_tensor *r;
	clg_status st;
	if (!g)
		return clg_last_status();
	if (!x->requires_grad) {
		clg_free(g);
		return CLG_OK;
	}
	r = fe_reduce_to(g, x->v.ndim, x->v.shape);
	clg_free(g);
	if (!r)
		return clg_last_status();
	st = fe_accumulate(x, r);
	clg_free(r);
	return st;
}
