/* Differentiable views: reshape, permute, slice, expand. They share storage; backward maps the
 * gradient back to the base's shape. */
#include "fe_internal.h"

#include <string.h>

static clg_tensor *view_with_node(clg_tensor *t, const clg_view *v, const char *op, clg_backward_fn fn,
				  const int64_t *ip, int nip)
{
	clg_tensor *out = fe_view_of(t, v);
	if (out && fe_needs_grad(1, &t)) {
		clg_node *n = fe_record(out, op, fn, 1, &t);
		if (!n) {
			clg_free(out);
			return fe_fail(clg_fail(CLG_ERR_OOM, "op '%s': out of host memory", op));
		}
		for (int k = 0; k < nip && k < 8; k++)
			n->i[k] = ip[k];
	}
	return out;
}

/* A new tensor object over the same view; differentiable as the identity. */
clg_status fe_identity_backward(clg_node *n, clg_tensor *g) { return fe_accumulate(n->in[0], g); }

clg_tensor *fe_alias(clg_tensor *t)
{
	return view_with_node(t, &t->v, "alias", fe_identity_backward, NULL, 0);
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
	clg_view v;
	int lead;
	char s0[96];

	if (!fe_check_inputs("expand", 1, &t))
		return NULL;
	lead = ndim - t->v.ndim;
	if (lead < 0 || ndim > CLG_MAX_DIMS)
		goto bad;
	memset(&v, 0, sizeof(v));
	v.buf = t->v.buf;
	v.dtype = t->v.dtype;
	v.ndim = ndim;
	v.offset = t->v.offset;
	for (int d = 0; d < ndim; d++) {
		v.shape[d] = shape[d];
		if (d < lead) {
			v.stride[d] = 0;
		} else if (t->v.shape[d - lead] == shape[d]) {
			v.stride[d] = t->v.stride[d - lead];
		} else if (t->v.shape[d - lead] == 1) {
			v.stride[d] = 0;
		} else {
			goto bad;
		}
	}
	return view_with_node(t, &v, "expand", expand_backward, NULL, 0);
bad:
	return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'expand' on device '%s': cannot broadcast %s to %d dims",
				t->v.buf->backend->info.name, clg_shape_str(&t->v, s0, sizeof(s0)), ndim));
}
