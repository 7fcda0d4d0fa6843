/* Random numbers, dropout, embedding, index_select, gather and concat: forward and backward pairs.
 * The index ops share one differentiable primitive, take_rows (INDEX_SELECT forward, INDEX_ADD
 * backward), applied to views: embedding uses it as is, index_select after merging the dims
 * around `dim`, gather with `dim` moved last and the other dims as batch dims. */
#include "fe_internal.h"

#include <string.h>

/* ---- random numbers ---- */

static clg_tensor *draw(clg_op op, clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, uint64_t seed,
			uint64_t offset, double f0, double f1)
{
	clg_op_call c = {.op = op};
	clg_tensor *t;
	/* a checkpointed function's re-run draws where its first run drew (ops_recompute.c) */
	clg_status st = fe_rand_stream(clg_op_name(op), &seed, &offset);

	if (st)
		return fe_fail(st);
	if (!(t = fe_new(be, dt, ndim, shape)))
		return NULL;
	c.dst = t->v;
	c.i[0] = (int64_t)seed;
	c.i[1] = (int64_t)offset;
	c.f[0] = f0;
	c.f[1] = f1;
	if (fe_run(be, &c)) {
		clg_free(t);
		return NULL;
	}
	return t;
}

clg_tensor *clg_rand(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, uint64_t seed)
{
	return draw(CLG_OP_RAND_UNIFORM, be, dt, ndim, shape, seed, 0, 0.0, 1.0);
}

clg_tensor *clg_randn(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, uint64_t seed)
{
	return draw(CLG_OP_RAND_NORMAL, be, dt, ndim, shape, seed, 0, 0.0, 1.0);
}

static clg_tensor *rng_draw(clg_op op, clg_rng *rng, clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape,
			    double f0, double f1)
{
	clg_tensor *t;
	if (!rng)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op '%s': NULL generator", clg_op_name(op)));
	t = draw(op, be, dt, ndim, shape, rng->seed, rng->offset, f0, f1);
	if (t && !clg_recomputing()) /* a re-run draws where the first run did: the stream moved on then */
		rng->offset += (uint64_t)clg_view_numel(&t->v);
	return t;
}

clg_tensor *clg_rng_uniform(clg_rng *rng, clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, double lo,
			    double hi)
{
	return rng_draw(CLG_OP_RAND_UNIFORM, rng, be, dt, ndim, shape, lo, hi);
}

clg_tensor *clg_rng_normal(clg_rng *rng, clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, double mean,
			   double std)
{
	return rng_draw(CLG_OP_RAND_NORMAL, rng, be, dt, ndim, shape, mean, std);
}

/* ---- dropout: y = x * mask, mask = (u >= p) / (1 - p); backward g * mask ---- */

static clg_status dropout_backward(clg_node *n, clg_tensor *g) { return fe_give(n->in[0], clg_mul(g, n->saved[0])); }

static clg_tensor *dropout_at(clg_tensor *x, double p, uint64_t seed, uint64_t offset)
{
	clg_backend *be = x->v.buf->backend;
	clg_dtype dt = x->v.dtype;
	clg_tensor *u, *pt = NULL, *keep = NULL, *mask = NULL, *out = NULL;
	clg_node *node;

	/* the threshold as float32, whatever the dtype, so every dtype and device drops the same */
	u = draw(CLG_OP_RAND_UNIFORM, be, dt, x->v.ndim, x->v.shape, seed, offset, 0.0, 1.0);
	if (u)
		pt = clg_full(be, dt, 0, NULL, (double)(float)p);
	if (pt)
		keep = fe_ew(CLG_OP_CMP_GE, u, pt, 0, 0);
	if (keep)
		mask = fe_ew(CLG_OP_SCALE, keep, NULL, p < 1 ? 1.0 / (1.0 - p) : 0.0, 0);
	if (mask)
		out = fe_ew(CLG_OP_MUL, x, mask, 0, 0);
	out = fe_record_op(out, "dropout", dropout_backward, 1, &x, &node);
	if (node)
		fe_save(node, mask);
	clg_free(u);
	clg_free(pt);
	clg_free(keep);
	clg_free(mask);
	return out;
}

static int dropout_args(clg_tensor *x, double p)
{
	if (!fe_check_inputs("dropout", 1, &x))
		return 0;
	if (!(p >= 0 && p <= 1)) {
		fe_fail(clg_fail(CLG_ERR_INVALID, "op 'dropout' on device '%s': p = %g is not in [0, 1]",
				 x->v.buf->backend->info.name, p));
		return 0;
	}
	return 1;
}

clg_tensor *clg_dropout(clg_tensor *x, double p, uint64_t seed, int training)
{
	if (!dropout_args(x, p))
		return NULL;
	return training ? dropout_at(x, p, seed, 0) : fe_alias(x);
}

clg_tensor *clg_dropout_rng(clg_tensor *x, double p, clg_rng *rng, int training)
{
	clg_tensor *out;
	if (!dropout_args(x, p))
		return NULL;
	if (!training)
		return fe_alias(x);
	if (!rng)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'dropout': NULL generator"));
	out = dropout_at(x, p, rng->seed, rng->offset);
	if (out && !clg_recomputing())
		rng->offset += (uint64_t)clg_view_numel(&x->v);
	return out;
}

/* ---- the index primitive ---- */

/* NULL (keeping the first error) unless t and idx exist, idx is int32 and both share a device. */
static int check_index_args(const char *op, clg_tensor *t, clg_tensor *idx)
{
	if (!fe_check_inputs(op, 1, &t) || !idx)
		return 0;
	if (idx->v.dtype != CLG_I32) {
		fe_fail(clg_fail(CLG_ERR_DTYPE, "op '%s' on device '%s': indices are %s, must be int32", op,
				 t->v.buf->backend->info.name, clg_dtype_name(idx->v.dtype)));
		return 0;
	}
	if (idx->v.buf->backend != t->v.buf->backend) {
		fe_fail(clg_fail(CLG_ERR_DEVICE, "op '%s': indices live on device '%s', the data on '%s'; copy with clg_to_device first",
				 op, idx->v.buf->backend->info.name, t->v.buf->backend->info.name));
		return 0;
	}
	return 1;
}

/* v with a trailing dim of size 1 appended. */
static clg_view with_unit_dim(const clg_view *v)
{
	clg_view u = *v;
	u.shape[u.ndim] = 1;
	u.stride[u.ndim] = 1;
	u.ndim++;
	return u;
}

static clg_status take_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *table = n->in[0], *iv = n->saved[0], *gt;
	clg_op_call c = {.op = CLG_OP_INDEX_ADD};
	clg_status st;
	int unit = (int)n->i[0];

	gt = clg_zeros(table->v.buf->backend, table->v.dtype, table->v.ndim, table->v.shape);
	if (!gt)
		return clg_last_status();
	c.dst = unit ? with_unit_dim(&gt->v) : gt->v;
	c.src[0] = unit ? with_unit_dim(&g->v) : g->v;
	c.src[1] = iv->v;
	st = fe_run(gt->v.buf->backend, &c);
	if (!st)
		st = fe_accumulate(table, gt);
	clg_free(gt);
	return st;
}

/* Rows of table (B..., V, D) at the indices iv (B..., M...), a view of idx's storage: a new tensor
 * (B..., M..., D). With unit set, table (B..., V) is read as (B..., V, 1) and the result is
 * (B..., M...). Differentiable w.r.t. table: backward adds the gradient's rows into a zero
 * table with INDEX_ADD. */
static clg_tensor *take_rows(const char *op, clg_tensor *table, int unit, clg_tensor *idx, const clg_view *iv)
{
	clg_backend *be = table->v.buf->backend;
	clg_op_call c = {.op = CLG_OP_INDEX_SELECT};
	clg_tensor *out, *saved;
	clg_node *node;
	int64_t shape[CLG_MAX_DIMS];
	int tnd = table->v.ndim + (unit ? 1 : 0);
	char s0[96], s1[96];

	if (tnd < 2 || tnd > CLG_MAX_DIMS || iv->ndim + 1 > CLG_MAX_DIMS)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': data %s and indices %s need too many dims (at most %d)",
					op, be->info.name, clg_shape_str(&table->v, s0, sizeof(s0)),
					clg_shape_str(iv, s1, sizeof(s1)), CLG_MAX_DIMS));
	for (int k = 0; k < iv->ndim; k++)
		shape[k] = iv->shape[k];
	if (!unit)
		shape[iv->ndim] = table->v.shape[table->v.ndim - 1];
	out = fe_new(be, table->v.dtype, iv->ndim + (unit ? 0 : 1), shape);
	if (!out)
		return NULL;
	c.dst = unit ? with_unit_dim(&out->v) : out->v;
	c.src[0] = unit ? with_unit_dim(&table->v) : table->v;
	c.src[1] = *iv;
	if (fe_run(be, &c)) {
		clg_free(out);
		return NULL;
	}
	out = fe_record_op(out, op, take_backward, 1, &table, &node);
	if (node) {
		node->i[0] = unit;
		saved = fe_view_of(idx, iv);
		fe_save(node, saved);
		clg_free(saved);
		if (node->nsaved != 1) {
			clg_free(out);
			return fe_fail(clg_fail(CLG_ERR_OOM, "op '%s': out of host memory", op));
		}
	}
	return out;
}

/* ---- one-hot rows (internal: the losses' targets, the max/min backward) ---- */

clg_tensor *fe_one_hot(clg_tensor *val, clg_tensor *idx, int64_t C)
{
	clg_op_call c = {.op = CLG_OP_ONE_HOT};
	clg_tensor *out;

	if (!check_index_args("one_hot", val, idx))
		return NULL;
	out = fe_new(val->v.buf->backend, val->v.dtype, 2, (int64_t[]){val->v.ndim ? val->v.shape[0] : 1, C});
	if (!out)
		return NULL;
	c.dst = out->v;
	c.src[0] = val->v;
	c.src[1] = idx->v;
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	return out;
}

/* ---- embedding ---- */

clg_tensor *clg_embedding(clg_tensor *table, clg_tensor *idx)
{
	char s0[96];
	if (!check_index_args("embedding", table, idx))
		return NULL;
	if (table->v.ndim != 2)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'embedding' on device '%s': the table is %s, must be (V, D)",
					table->v.buf->backend->info.name, clg_shape_str(&table->v, s0, sizeof(s0))));
	return take_rows("embedding", table, 0, idx, &idx->v);
}

/* ---- index_select: t viewed as (B, V, D) around dim, the indices repeated over B ---- */

clg_tensor *clg_index_select(clg_tensor *t, int dim, clg_tensor *idx)
{
	int64_t B = 1, D = 1, shape[3], oshape[CLG_MAX_DIMS];
	clg_tensor *r, *o, *out;
	clg_view iv;
	char s0[96], s1[96];
	int nd;

	if (!check_index_args("index_select", t, idx))
		return NULL;
	nd = t->v.ndim;
	if (dim < 0)
		dim += nd;
	if (dim < 0 || dim >= nd || idx->v.ndim != 1)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'index_select' on device '%s': dim %d of %s with indices %s (must be 1-D)",
					t->v.buf->backend->info.name, dim, clg_shape_str(&t->v, s0, sizeof(s0)),
					clg_shape_str(&idx->v, s1, sizeof(s1))));
	for (int k = 0; k < dim; k++)
		B *= t->v.shape[k];
	for (int k = dim + 1; k < nd; k++)
		D *= t->v.shape[k];
	shape[0] = B, shape[1] = t->v.shape[dim], shape[2] = D;
	/* (V, D) when dim is 0, else (B, V, D) with the indices broadcast over B */
	r = dim == 0 ? clg_reshape(t, 2, shape + 1) : clg_reshape(t, 3, shape);
	if (!r)
		return NULL;
	iv = idx->v;
	if (dim > 0) {
		iv.ndim = 2;
		iv.shape[0] = B, iv.stride[0] = 0;
		iv.shape[1] = idx->v.shape[0], iv.stride[1] = idx->v.stride[0];
	}
	o = take_rows("index_select", r, 0, idx, &iv);
	clg_free(r);
	if (!o)
		return NULL;
	memcpy(oshape, t->v.shape, sizeof(oshape));
	oshape[dim] = idx->v.shape[0];
	out = clg_reshape(o, nd, oshape);
	clg_free(o);
	return out;
}

/* ---- gather: dim moved last, the other dims are batch dims, each row its own table ---- */

clg_tensor *clg_gather(clg_tensor *t, int dim, clg_tensor *idx)
{
	int nd, perm[CLG_MAX_DIMS], inv[CLG_MAX_DIMS];
	clg_tensor *ts, *tp = NULL, *o = NULL, *out = NULL;
	clg_view iv;
	char s0[96], s1[96];

	if (!check_index_args("gather", t, idx))
		return NULL;
	nd = t->v.ndim;
	if (dim < 0)
		dim += nd;
	if (dim < 0 || dim >= nd || nd + 1 > CLG_MAX_DIMS || idx->v.ndim != nd)
		goto bad;
	for (int k = 0; k < nd; k++)
		if (k != dim && idx->v.shape[k] > t->v.shape[k])
			goto bad;
	/* t cut to the indices' extent along the other dims (views) */
	ts = fe_alias(t);
	for (int k = 0; k < nd && ts; k++) {
		if (k != dim && idx->v.shape[k] < t->v.shape[k]) {
			clg_tensor *s = clg_slice(ts, k, 0, idx->v.shape[k], 1);
			clg_free(ts);
			ts = s;
		}
	}
	if (!ts)
		return NULL;
	for (int k = 0, j = 0; k < nd; k++)
		if (k != dim)
			perm[j++] = k;
	perm[nd - 1] = dim;
	for (int k = 0; k < nd; k++)
		inv[perm[k]] = k;
	tp = clg_permute(ts, perm);
	clg_free(ts);
	iv = idx->v;
	for (int k = 0; k < nd; k++) {
		iv.shape[k] = idx->v.shape[perm[k]];
		iv.stride[k] = idx->v.stride[perm[k]];
	}
	if (tp)
		o = take_rows("gather", tp, 1, idx, &iv);
	if (o)
		out = clg_permute(o, inv);
	clg_free(tp);
	clg_free(o);
	return out;
bad:
	return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'gather' on device '%s': cannot gather %s along dim %d with indices %s",
				t->v.buf->backend->info.name, clg_shape_str(&t->v, s0, sizeof(s0)), dim,
				clg_shape_str(&idx->v, s1, sizeof(s1))));
}

/* ---- concat: copies into slices of a new tensor; backward slices the gradient ---- */

static clg_status concat_backward(clg_node *n, clg_tensor *g)
{
	int dim = (int)n->i[0];
	clg_status st = CLG_OK;
	for (int k = 0; k < n->ninputs && !st; k++) {
		clg_tensor *x = n->in[k], *part;
		if (!x->requires_grad)
			continue;
		part = clg_slice(g, dim, n->i[1 + k], n->i[1 + k] + x->v.shape[dim], 1);
		st = part ? fe_accumulate(x, part) : clg_last_status();
		clg_free(part);
	}
	return st;
}

clg_tensor *clg_concat(clg_tensor *const *ts, int n, int dim)
{
	int64_t shape[CLG_MAX_DIMS], start = 0;
	clg_tensor *out;
	clg_node *node;
	char s0[96], s1[96];
	int nd;

	if (!ts || n < 1)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'concat': no tensors"));
	if (!fe_check_inputs("concat", n, ts))
		return NULL;
	nd = ts[0]->v.ndim;
	if (dim < 0)
		dim += nd;
	if (dim < 0 || dim >= nd)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'concat' on device '%s': dim %d out of range for %d dims",
					ts[0]->v.buf->backend->info.name, dim, nd));
	memcpy(shape, ts[0]->v.shape, sizeof(shape));
	shape[dim] = 0;
	for (int k = 0; k < n; k++) {
		const clg_view *v = &ts[k]->v;
		int ok = v->ndim == nd;
		for (int d = 0; d < nd && ok; d++)
			ok = d == dim || v->shape[d] == shape[d];
		if (!ok)
			return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'concat' on device '%s': tensor %d is %s, tensor 0 is %s (dim %d may differ)",
						ts[0]->v.buf->backend->info.name, k, clg_shape_str(v, s0, sizeof(s0)),
						clg_shape_str(&ts[0]->v, s1, sizeof(s1)), dim));
		shape[dim] += v->shape[dim];
	}
	if (n > CLG_MAX_SRC && fe_needs_grad(n, ts)) {
		/* a graph node holds at most CLG_MAX_SRC inputs: join groups of them, then the groups */
		clg_tensor *parts[CLG_MAX_SRC * CLG_MAX_SRC], *joined;
		int ng = 0, chunk = (n + CLG_MAX_SRC - 1) / CLG_MAX_SRC; /* inputs per group */
		for (int k = 0; k < n; k += chunk)
			parts[ng++] = clg_concat(ts + k, n - k < chunk ? n - k : chunk, dim);
		joined = clg_concat(parts, ng, dim);
		for (int k = 0; k < ng; k++)
			clg_free(parts[k]);
		return joined;
	}
	out = fe_new(ts[0]->v.buf->backend, ts[0]->v.dtype, nd, shape);
	if (!out)
		return NULL;
	for (int k = 0; k < n; k++) {
		clg_op_call c = {.op = CLG_OP_COPY};
		int64_t len = ts[k]->v.shape[dim];
		c.dst = out->v;
		c.dst.offset += start * out->v.stride[dim];
		c.dst.shape[dim] = len;
		c.src[0] = ts[k]->v;
		start += len;
		if (len > 0 && fe_run(out->v.buf->backend, &c)) {
			clg_free(out);
			return NULL;
		}
	}
	out = fe_record_op(out, "concat", concat_backward, n, ts, &node);
	if (node) {
		node->i[0] = dim;
		int64_t s = 0;
		for (int k = 0; k < n; k++) {
			node->i[1 + k] = s;
			s += ts[k]->v.shape[dim];
		}
	}
	return out;
}
