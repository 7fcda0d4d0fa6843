/* More elementwise ops (activations, pow, clamp, comparisons, where), max/min/argmax/argmin over any
 * dim, softmax and log_softmax: forward and backward pairs (the losses are in ops_loss.c). */
#include "fe_internal.h"

#include <math.h>
#include <string.h>

/* ---- activations whose backward is one helper op on (g, x) or (g, y) ---- */

static clg_status helper_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *arg = n->nsaved ? n->saved[0] : n->in[0];
	return fe_give(n->in[0], fe_ew((clg_op)n->i[0], g, arg, n->f[0], n->f[1]));
}

static clg_tensor *activation(const char *name, clg_op op, clg_op bw, int save_out, clg_tensor *a, double f0, double f1)
{
	clg_node *node;
	clg_tensor *out;
	if (!fe_check_inputs(name, 1, &a))
		return NULL;
	out = fe_record_op(fe_ew(op, a, NULL, f0, f1), name, helper_backward, 1, &a, &node);
	if (node) {
		node->i[0] = bw;
		node->f[0] = f0;
		node->f[1] = f1;
		if (save_out)
			fe_save(node, out);
	}
	return out;
}

clg_tensor *clg_sigmoid(clg_tensor *a) { return activation("sigmoid", CLG_OP_SIGMOID, CLG_OP_SIGMOID_BACKWARD, 1, a, 0, 0); }
clg_tensor *clg_gelu(clg_tensor *a) { return activation("gelu", CLG_OP_GELU, CLG_OP_GELU_BACKWARD, 0, a, 0, 0); }
clg_tensor *clg_gelu_tanh(clg_tensor *a)
{
	return activation("gelu_tanh", CLG_OP_GELU_TANH, CLG_OP_GELU_TANH_BACKWARD, 0, a, 0, 0);
}
clg_tensor *clg_silu(clg_tensor *a) { return activation("silu", CLG_OP_SILU, CLG_OP_SILU_BACKWARD, 0, a, 0, 0); }
clg_tensor *clg_abs(clg_tensor *a) { return activation("abs", CLG_OP_ABS, CLG_OP_ABS_BACKWARD, 0, a, 0, 0); }
clg_tensor *clg_leaky_relu(clg_tensor *a, double slope)
{
	return activation("leaky_relu", CLG_OP_LEAKY_RELU, CLG_OP_LEAKY_RELU_BACKWARD, 0, a, slope, 0);
}
clg_tensor *clg_clamp(clg_tensor *a, double lo, double hi)
{
	return activation("clamp", CLG_OP_CLAMP, CLG_OP_CLAMP_BACKWARD, 0, a, lo, hi);
}

/* sqrt and rsqrt: backward from the output, g * 0.5 / y and g * -0.5 * y^3 */
static clg_status sqrt_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *y = n->saved[0], *t = clg_div(g, y);
	clg_status st = fe_give(n->in[0], clg_affine(t, 0.5, 0));
	clg_free(t);
	return st;
}

static clg_status rsqrt_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *y = n->saved[0], *y2 = clg_mul(y, y), *y3 = clg_mul(y2, y), *t = clg_mul(g, y3);
	clg_status st = fe_give(n->in[0], clg_affine(t, -0.5, 0));
	clg_free(y2);
	clg_free(y3);
	clg_free(t);
	return st;
}

static clg_tensor *unary_saved(const char *name, clg_op op, clg_backward_fn bw, clg_tensor *a)
{
	clg_node *node;
	clg_tensor *out;
	if (!fe_check_inputs(name, 1, &a))
		return NULL;
	out = fe_record_op(fe_ew(op, a, NULL, 0, 0), name, bw, 1, &a, &node);
	if (node)
		fe_save(node, out);
	return out;
}

clg_tensor *clg_sqrt(clg_tensor *a) { return unary_saved("sqrt", CLG_OP_SQRT, sqrt_backward, a); }
clg_tensor *clg_rsqrt(clg_tensor *a) { return unary_saved("rsqrt", CLG_OP_RSQRT, rsqrt_backward, a); }

/* pow(a, b) = a^b: da = g * b * a^(b-1) = g * b * y / a, db = g * y * log(a) */
static clg_status pow_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *a = n->in[0], *b = n->in[1], *y = n->saved[0], *t, *u;
	clg_status st = CLG_OK;
	if (a->requires_grad) {
		t = clg_mul(g, b);
		u = clg_mul(t, y);
		st = fe_give(a, clg_div(u, a));
		clg_free(t);
		clg_free(u);
	}
	if (!st && b->requires_grad) {
		t = clg_mul(g, y);
		u = clg_log(a);
		st = fe_give(b, clg_mul(t, u));
		clg_free(t);
		clg_free(u);
	}
	return st;
}

clg_tensor *clg_pow(clg_tensor *a, clg_tensor *b)
{
	clg_tensor *ins[2] = {a, b}, *out;
	clg_node *node;
	if (!fe_check_inputs("pow", 2, ins))
		return NULL;
	out = fe_record_op(fe_ew(CLG_OP_POW, a, b, 0, 0), "pow", pow_backward, 2, ins, &node);
	if (node)
		fe_save(node, out);
	return out;
}

/* comparisons: not differentiable, 1 or 0 */
clg_tensor *clg_compare(clg_tensor *a, clg_tensor *b, clg_cmp cmp)
{
	static const clg_op ops[] = {CLG_OP_CMP_EQ, CLG_OP_CMP_LT, CLG_OP_CMP_LE, CLG_OP_CMP_GT, CLG_OP_CMP_GE};
	clg_tensor *ins[2] = {a, b};
	if (!fe_check_inputs("compare", 2, ins))
		return NULL;
	if ((unsigned)cmp >= sizeof(ops) / sizeof(ops[0]))
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'compare': unknown comparison %d", (int)cmp));
	return fe_ew(ops[cmp], a, b, 0, 0);
}

/* where(cond, a, b): gradient flows to a where cond, to b elsewhere */
static clg_status where_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *cond = n->in[0], *zero = clg_zeros(g->v.buf->backend, g->v.dtype, CLG_SHAPE(1));
	clg_status st = fe_give(n->in[1], clg_where(cond, g, zero));
	if (!st)
		st = fe_give(n->in[2], clg_where(cond, zero, g));
	clg_free(zero);
	return st;
}

clg_tensor *clg_where(clg_tensor *cond, clg_tensor *a, clg_tensor *b)
{
	clg_tensor *ins[3] = {cond, a, b}, *ab, *out;
	clg_op_call c = {.op = CLG_OP_WHERE};
	clg_node *node;
	const clg_tensor *t[3] = {cond, a, b};
	int nd = 0;
	int64_t shape[CLG_MAX_DIMS];
	char s0[96];

	if (!fe_check_inputs("where", 3, ins))
		return NULL;
	/* the broadcast shape of all three */
	for (int k = 0; k < 3; k++)
		if (t[k]->v.ndim > nd)
			nd = t[k]->v.ndim;
	for (int d = 0; d < nd; d++) {
		shape[d] = 1;
		for (int k = 0; k < 3; k++) {
			int dk = d - (nd - t[k]->v.ndim);
			int64_t s = dk >= 0 ? t[k]->v.shape[dk] : 1;
			if (s != 1 && shape[d] != 1 && s != shape[d])
				return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'where' on device '%s': shapes do not broadcast (%s ...)",
							a->v.buf->backend->info.name, clg_shape_str(&t[k]->v, s0, sizeof(s0))));
			if (s != 1)
				shape[d] = s;
		}
	}
	out = fe_new(a->v.buf->backend, a->v.dtype, nd, shape);
	if (!out)
		return NULL;
	c.dst = out->v;
	for (int k = 0; k < 3; k++) {
		clg_tensor *e = clg_expand((clg_tensor *)t[k], nd, shape);
		if (!e) {
			clg_free(out);
			return NULL;
		}
		c.src[k] = e->v;
		clg_free(e);
	}
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	ab = out;
	return fe_record_op(ab, "where", where_backward, 3, ins, &node);
}

/* ---- max / min / argmax / argmin over any dim ---- */

/* The permutation of nd dims that moves dim last (the others keep their order), and its inverse. */
static void dim_last_perm(int nd, int dim, int *perm, int *inv)
{
	for (int k = 0, j = 0; k < nd; k++)
		if (k != dim)
			perm[j++] = k;
	perm[nd - 1] = dim;
	for (int k = 0; k < nd; k++)
		inv[perm[k]] = k;
}

/* dim of a (negative counts from the end) checked and made non-negative: CLG_OK or the failure */
static clg_status check_dim(const char *name, clg_tensor *a, int *dim)
{
	char s0[96];
	int nd = a->v.ndim;
	if (nd < 1 || *dim < -nd || *dim >= nd)
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': dim %d is out of range for %s (at least one dim needed)",
				name, a->v.buf->backend->info.name, *dim, clg_shape_str(&a->v, s0, sizeof(s0)));
	if (*dim < 0)
		*dim += nd;
	return CLG_OK;
}

/* A REDUCE op over dim of a (dim checked) into a new contiguous tensor of a's other dims: the op
 * reads a's view with dim moved last (no copy). For ARGMIN (op ARGMAX with neg set), the ARGMAX of
 * -a: NaN stays NaN and ties keep their order. */
static clg_tensor *reduce_dim(const char *name, clg_op op, int neg, clg_tensor *a, int dim, clg_dtype out_dt)
{
	clg_tensor *src = neg ? fe_ew(CLG_OP_NEG, a, NULL, 0, 0) : a, *out = NULL; /* no graph */
	clg_op_call c = {.op = op};
	int perm[CLG_MAX_DIMS], inv[CLG_MAX_DIMS], nd = a->v.ndim;
	int64_t shape[CLG_MAX_DIMS];

	if (!src)
		return NULL;
	dim_last_perm(nd, dim, perm, inv);
	c.src[0] = src->v;
	for (int k = 0; k < nd; k++) {
		c.src[0].shape[k] = src->v.shape[perm[k]];
		c.src[0].stride[k] = src->v.stride[perm[k]];
	}
	memcpy(shape, c.src[0].shape, sizeof(shape));
	out = fe_new(a->v.buf->backend, out_dt, nd - 1, shape);
	if (!out)
		goto out_src;
	c.dst = out->v;
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		out = NULL;
	}
out_src:
	if (src != a)
		clg_free(src);
	return out;
}

/* t (a's shape without dim) with dim back as size 1 (keepdim): a view; t is consumed. */
static clg_tensor *keep_dim(clg_tensor *t, const clg_tensor *a, int dim)
{
	int64_t shape[CLG_MAX_DIMS];
	clg_tensor *r;
	memcpy(shape, a->v.shape, sizeof(shape));
	shape[dim] = 1;
	r = t ? clg_reshape(t, a->v.ndim, shape) : NULL;
	clg_free(t);
	return r;
}

/* The gradient of each slice's max (min) goes to the one index torch.max(dim) (torch.min(dim))
 * returns, saved by the forward: ARGMAX's first largest element, a NaN counting as larger than any
 * number (so the NaN that MAX propagates gets it); a min is the max of -x (NaN stays NaN, ties
 * keep their order). In x's order with dim moved last, (R..., C) as (R, C), ONE_HOT puts g (a's
 * shape without dim, as (R)) at the indices (R) and zeros elsewhere, permuted back (a view); in
 * float32 for a 16-bit x (the index ops take float32 and float64), cast back exactly (each element
 * is one g or 0). node->i[0] the forward op, i[1] the dim, saved[0] the indices. */
static clg_status maxmin_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *idx = n->saved[0], *gw, *gr = NULL, *ir = NULL, *oh = NULL, *gp = NULL, *pv = NULL;
	clg_dtype wdt = clg_dtype_is_half_storage(x->v.dtype) ? CLG_F32 : x->v.dtype;
	int nd = x->v.ndim, dim = (int)n->i[1], perm[CLG_MAX_DIMS], inv[CLG_MAX_DIMS];
	int64_t R = 1, C = x->v.shape[dim], pshape[CLG_MAX_DIMS];
	clg_status st = CLG_OK;

	dim_last_perm(nd, dim, perm, inv);
	for (int k = 0; k < nd; k++)
		pshape[k] = x->v.shape[perm[k]];
	for (int k = 0; k < nd - 1; k++)
		R *= pshape[k];
	gw = g->v.dtype != wdt ? clg_cast(g, wdt) : fe_alias(g);
	gr = gw ? clg_reshape(gw, 1, &R) : NULL;
	ir = gr ? clg_reshape(idx, 1, &R) : NULL;
	oh = ir ? fe_one_hot(gr, ir, C) : NULL;              /* (R, C) */
	gp = oh ? clg_reshape(oh, nd, pshape) : NULL;       /* (R..., C): x with dim last */
	pv = gp ? clg_permute(gp, inv) : NULL;              /* x's shape (identity when dim is last) */
	if (!pv)
		st = clg_last_status();
	else if (wdt != x->v.dtype)
		st = fe_give(x, clg_cast(pv, x->v.dtype));
	else
		st = fe_accumulate(x, pv);
	clg_free(pv);
	clg_free(gp);
	clg_free(oh);
	clg_free(ir);
	clg_free(gr);
	clg_free(gw);
	return st;
}

/* max / min over dim: the values, recorded with the indices the backward needs; *indices (may be
 * NULL) gets them too */
static clg_tensor *maxmin_dim(const char *name, clg_op op, clg_tensor *a, int dim, int keepdim, clg_tensor **indices)
{
	clg_node *node = NULL;
	clg_tensor *out = NULL, *idx = NULL;
	clg_status st;

	if (indices)
		*indices = NULL;
	if (!fe_check_inputs(name, 1, &a))
		return NULL;
	st = check_dim(name, a, &dim);
	if (st)
		return fe_fail(st);
	if (indices || fe_needs_grad(1, &a)) {
		idx = reduce_dim(name, CLG_OP_ARGMAX, op == CLG_OP_MIN, a, dim, CLG_I32);
		if (!idx)
			return NULL;
	}
	out = reduce_dim(name, op, 0, a, dim, a->v.dtype);
	if (out)
		out = fe_record_op(out, name, maxmin_backward, 1, &a, &node);
	if (node) {
		node->i[0] = op;
		node->i[1] = dim;
		fe_save(node, idx);
		if (node->nsaved != 1) {
			clg_free(out);
			out = fe_fail(clg_fail(CLG_ERR_OOM, "op '%s': out of host memory", name));
		}
	}
	if (out && keepdim) {
		out = keep_dim(out, a, dim);
		idx = out && indices ? keep_dim(idx, a, dim) : idx;
	}
	if (out && indices && idx) {
		*indices = idx;
		return out;
	}
	if (out && indices) { /* keep_dim of the indices failed */
		clg_free(out);
		out = NULL;
	}
	clg_free(idx);
	return out;
}

static clg_tensor *argmaxmin_dim(const char *name, int neg, clg_tensor *a, int dim, int keepdim)
{
	clg_tensor *idx;
	clg_status st;
	if (!fe_check_inputs(name, 1, &a))
		return NULL;
	st = check_dim(name, a, &dim);
	if (st)
		return fe_fail(st);
	idx = reduce_dim(name, CLG_OP_ARGMAX, neg, a, dim, CLG_I32);
	return keepdim ? keep_dim(idx, a, dim) : idx;
}

clg_tensor *clg_max(clg_tensor *a) { return maxmin_dim("max", CLG_OP_MAX, a, -1, 0, NULL); }
clg_tensor *clg_min(clg_tensor *a) { return maxmin_dim("min", CLG_OP_MIN, a, -1, 0, NULL); }
clg_tensor *clg_argmax(clg_tensor *a) { return argmaxmin_dim("argmax", 0, a, -1, 0); }
clg_tensor *clg_argmin(clg_tensor *a) { return argmaxmin_dim("argmin", 1, a, -1, 0); }
clg_tensor *clg_max_dim(clg_tensor *a, int dim, int keepdim, clg_tensor **indices)
{
	return maxmin_dim("max", CLG_OP_MAX, a, dim, keepdim, indices);
}
clg_tensor *clg_min_dim(clg_tensor *a, int dim, int keepdim, clg_tensor **indices)
{
	return maxmin_dim("min", CLG_OP_MIN, a, dim, keepdim, indices);
}
clg_tensor *clg_argmax_dim(clg_tensor *a, int dim, int keepdim) { return argmaxmin_dim("argmax", 0, a, dim, keepdim); }
clg_tensor *clg_argmin_dim(clg_tensor *a, int dim, int keepdim) { return argmaxmin_dim("argmin", 1, a, dim, keepdim); }

/* ---- softmax and log_softmax over the last dim ---- */

static clg_status softmax_backward(clg_node *n, clg_tensor *g)
{
	return fe_give(n->in[0], fe_ew((clg_op)n->i[0], g, n->saved[0], 0, 0));
}

static clg_tensor *row_op(const char *name, clg_op op, clg_op bw, clg_tensor *a)
{
	clg_tensor *out;
	clg_op_call c = {.op = op};
	clg_node *node;
	if (!fe_check_inputs(name, 1, &a))
		return NULL;
	if (fe_autocast_high(1, &a)) { /* autocast: in float32 */
		clg_tensor *a32 = clg_cast(a, CLG_F32), *r = a32 ? row_op(name, op, bw, a32) : NULL;
		clg_free(a32);
		return r;
	}
	out = fe_new(a->v.buf->backend, a->v.dtype, a->v.ndim, a->v.shape);
	if (!out)
		return NULL;
	c.dst = out->v;
	c.src[0] = a->v;
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	out = fe_record_op(out, name, softmax_backward, 1, &a, &node);
	if (node) {
		node->i[0] = bw;
		fe_save(node, out);
	}
	return out;
}

clg_tensor *clg_softmax(clg_tensor *a) { return row_op("softmax", CLG_OP_SOFTMAX, CLG_OP_SOFTMAX_BACKWARD, a); }
clg_tensor *clg_log_softmax(clg_tensor *a)
{
	return row_op("log_softmax", CLG_OP_LOG_SOFTMAX, CLG_OP_LOG_SOFTMAX_BACKWARD, a);
}
