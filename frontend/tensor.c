/* Tensors: creation, reference counting, scopes, node lifetime, graph-free compute (elementwise
 * ops, broadcast views, copies) and transfers. Layer 0 of the frontend's core (fe_internal.h):
 * it calls nothing above it. */
#include "fe_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clg_tensor *fe_fail(clg_status s)
{
	clg_note_status(s);
	return NULL;
}

int fe_check_inputs(const char *op, int n, clg_tensor *const *ts)
{
	for (int i = 0; i < n; i++)
		if (!ts[i])
			return 0; /* an earlier call failed: keep its message */
	for (int i = 1; i < n; i++) {
		if (ts[i]->v.buf->backend != ts[0]->v.buf->backend) {
			clg_fail(CLG_ERR_DEVICE, "op '%s': operands live on different devices ('%s' and '%s'); copy with clg_to_device first",
					       op, ts[0]->v.buf->backend->info.name, ts[i]->v.buf->backend->info.name);
			return 0;
		}
		if (ts[i]->v.dtype != ts[0]->v.dtype) {
			clg_fail(CLG_ERR_DTYPE, "op '%s' on device '%s': operands have different dtypes (%s and %s)",
					       op, ts[0]->v.buf->backend->info.name, clg_dtype_name(ts[0]->v.dtype),
					       clg_dtype_name(ts[i]->v.dtype));
			return 0;
		}
	}
	return 1;
}

clg_status fe_run(clg_backend *be, clg_op_call *c)
{
	clg_status st = clg_run(be, c);
	clg_note_status(st);
	return st;
}

/* ---- scopes ---- */

typedef struct {
	clg_tensor **items;
	int n, cap;
} scope;

static _Thread_local scope *scopes;
static _Thread_local int nscopes, capscopes;

/* Puts t in the scope at depth (1-based); depth 0 leaves it to the caller. */
static void scope_add_at(clg_tensor *t, int depth)
{
	scope *s;
	t->scope_depth = 0;
	if (depth <= 0 || depth > nscopes)
		return;
	s = &scopes[depth - 1];
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 64;
		void *p = realloc(s->items, (size_t)cap * sizeof(*s->items));
		if (!p)
			return; /* the tensor stays owned by the caller */
		s->items = p;
		s->cap = cap;
	}
	t->scope_depth = depth;
	t->scope_slot = s->n;
	s->items[s->n++] = t;
}

static void scope_add(clg_tensor *t) { scope_add_at(t, nscopes); }

static void scope_remove(clg_tensor *t)
{
	if (t->scope_depth > 0 && t->scope_depth <= nscopes)
		scopes[t->scope_depth - 1].items[t->scope_slot] = NULL;
	t->scope_depth = 0;
}

void clg_scope_begin(void)
{
	if (nscopes == capscopes) {
		int cap = capscopes ? 2 * capscopes : 8;
		void *p = realloc(scopes, (size_t)cap * sizeof(*scopes));
		if (!p)
			return;
		scopes = p;
		capscopes = cap;
	}
	memset(&scopes[nscopes], 0, sizeof(scopes[0]));
	nscopes++;
}

static void release(clg_tensor *t);

void clg_scope_end(void)
{
	scope *s;
	if (nscopes == 0)
		return;
	s = &scopes[nscopes - 1];
	for (int i = 0; i < s->n; i++) {
		clg_tensor *t = s->items[i];
		if (t) {
			t->scope_depth = 0;
			release(t);
		}
	}
	free(s->items);
	nscopes--;
}

clg_tensor *clg_keep(clg_tensor *t)
{
	int depth;
	if (!t || t->scope_depth == 0)
		return t;
	depth = t->scope_depth;
	scope_remove(t);
	scope_add_at(t, depth - 1);
	return t;
}

clg_tensor *clg_unscope(clg_tensor *t)
{
	if (t && t->scope_depth)
		scope_remove(t);
	return t;
}

/* ---- lifetime ---- */

static void storage_release(clg_storage *s)
{
	if (s && --s->refs == 0) {
		clg_buffer_free(s->buf);
		free(s);
	}
}

/* Tensors whose last reference went while another was being freed. Freeing a graph recursed once
 * a node (a tensor frees its grad_fn, which frees its inputs, ...): a chain of 10^5 ops, a loop in
 * Python or a long RNN, overflowed the stack. The outermost release frees them one at a time, from
 * a small list in place, grown on the heap for a deep graph and given back after. */
#define DYING_INLINE 64
static _Thread_local struct {
	clg_tensor *inline_t[DYING_INLINE], **t;
	size_t n, cap;
	int active;
} dying;

static void destroy(clg_tensor *t)
{
	storage_release(t->st);
	if (t->grad)
		release(t->grad);
	if (t->grad_fn)
		fe_node_release(t->grad_fn);
	free(t);
}

/* Adds t to the list; 0 when out of host memory (the caller frees t at once). */
static int dying_push(clg_tensor *t)
{
	if (!dying.t) {
		dying.t = dying.inline_t;
		dying.cap = DYING_INLINE;
	}
	if (dying.n == dying.cap) {
		size_t cap = 2 * dying.cap;
		clg_tensor **p = dying.t == dying.inline_t ? malloc(cap * sizeof(*p)) : realloc(dying.t, cap * sizeof(*p));
		if (!p)
			return 0;
		if (dying.t == dying.inline_t)
			memcpy(p, dying.inline_t, sizeof(dying.inline_t));
		dying.t = p;
		dying.cap = cap;
	}
	dying.t[dying.n++] = t;
	return 1;
}

static void release(clg_tensor *t)
{
	if (!t || --t->refs > 0)
		return;
	if (dying.active) {
		if (!dying_push(t))
			destroy(t); /* out of host memory: recursing here, as before */
		return;
	}
	dying.active = 1;
	destroy(t);
	while (dying.n > 0)
		destroy(dying.t[--dying.n]);
	if (dying.t != dying.inline_t)
		free(dying.t);
	dying.t = NULL;
	dying.active = 0;
}

void clg_free(clg_tensor *t)
{
	if (!t)
		return;
	if (t->scope_depth)
		scope_remove(t);
	release(t);
}

void fe_release(clg_tensor *t) { release(t); }

/* ---- node lifetime (the graph's nodes are made in autograd.c; tensors own their grad_fn) ---- */

void fe_node_drop_saved(clg_node *n)
{
	for (int i = 0; i < n->nsaved; i++)
		release(n->saved[i]);
	n->nsaved = 0;
	if (n->gout)
		release(n->gout);
	n->gout = NULL;
}

void fe_node_release(clg_node *n)
{
	if (!n || --n->refs > 0)
		return;
	fe_node_drop_saved(n);
	for (int i = 0; i < n->ninputs; i++)
		release(n->in[i]);
	if (n->ctx_free)
		n->ctx_free(n->ctx);
	free(n);
}

clg_tensor *clg_retain(clg_tensor *t)
{
	if (t)
		t->refs++;
	return t;
}

clg_tensor *fe_own(clg_tensor *t)
{
	if (t && t->scope_depth)
		scope_remove(t);
	return t;
}

static clg_tensor *wrap(clg_storage *s, const clg_view *v)
{
	clg_tensor *t = calloc(1, sizeof(*t));
	if (!t)
		return fe_fail(clg_fail(CLG_ERR_OOM, "tensor: out of host memory"));
	t->v = *v;
	t->v.buf = s->buf;
	t->st = s;
	s->refs++;
	t->refs = 1;
	scope_add(t);
	return t;
}

clg_tensor *fe_new(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape)
{
	clg_storage *s;
	clg_tensor *t;
	clg_view v;
	int64_t n = 1;
	clg_status st;

	if (!be)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "tensor: no device given"));
	if (ndim < 0 || ndim > CLG_MAX_DIMS)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "tensor: %d dims (at most %d)", ndim, CLG_MAX_DIMS));
	if ((unsigned)dt >= CLG_DTYPE_COUNT)
		return fe_fail(clg_fail(CLG_ERR_DTYPE, "tensor: unknown dtype %d", (int)dt));
	/* float16 is storage, read and written as float32 by the ops that take it (clg_run): every
	 * device has it, cl_khr_fp16 or not */
	if (dt == CLG_F64 && !be->info.has_fp64)
		return fe_fail(clg_fail(CLG_ERR_DTYPE, "tensor: dtype %s is not available on device '%s'",
					clg_dtype_name(dt), be->info.name));
	for (int d = 0; d < ndim; d++) {
		if (shape[d] < 0)
			return fe_fail(clg_fail(CLG_ERR_SHAPE, "tensor: negative dim %lld", (long long)shape[d]));
		if (shape[d] && n > INT64_MAX / 16 / shape[d])
			return fe_fail(clg_fail(CLG_ERR_OOM, "tensor on device '%s': shape too large", be->info.name));
		n *= shape[d];
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return fe_fail(clg_fail(CLG_ERR_OOM, "tensor: out of host memory"));
	st = clg_buffer_alloc(be, (size_t)n * clg_dtype_size(dt), &s->buf);
	if (st) {
		char dims[160] = "";
		size_t at = 0;
		for (int d = 0; d < ndim && at < sizeof(dims); d++)
			at += (size_t)snprintf(dims + at, sizeof(dims) - at, "%s%lld", d ? ", " : "", (long long)shape[d]);
		free(s);
		return fe_fail(clg_fail_prefix(st, "tensor (%s) %s: ", dims, clg_dtype_name(dt)));
	}
	clg_view_contiguous(&v, s->buf, dt, ndim, shape);
	t = wrap(s, &v);
	if (!t) {
		clg_buffer_free(s->buf);
		free(s);
	}
	return t;
}

clg_tensor *fe_view_of(clg_tensor *t, const clg_view *v)
{
	return wrap(t->st, v);
}

/* The dims of v by stride, largest first (insertion sort: stable, at most six), and whether v is a
 * permutation of a dense layout: no gaps, no overlaps (size-1 dims may have any stride). */
static int dense_order(const clg_view *v, int *order)
{
	int64_t want = 1;

	for (int d = 0; d < v->ndim; d++) {
		int i = d;
		for (; i > 0 && v->stride[order[i - 1]] < v->stride[d]; i--)
			order[i] = order[i - 1];
		order[i] = d;
	}
	for (int i = v->ndim - 1; i >= 0; i--) {
		int64_t n = v->shape[order[i]];
		if (n != 1 && v->stride[order[i]] != want)
			return 0;
		want *= n;
	}
	return 1;
}

int fe_view_is_dense(const clg_view *v)
{
	int order[CLG_MAX_DIMS];
	return dense_order(v, order);
}

clg_tensor *fe_new_like(clg_backend *be, clg_dtype dt, const clg_view *like)
{
	int nd = like->ndim, order[CLG_MAX_DIMS];
	int64_t shape[CLG_MAX_DIMS];
	clg_tensor *base, *r;
	clg_view v;

	if (clg_view_is_contiguous(like) || !dense_order(like, order))
		return fe_new(be, dt, nd, like->shape);
	for (int i = 0; i < nd; i++)
		shape[i] = like->shape[order[i]];
	base = fe_new(be, dt, nd, shape);
	if (!base)
		return NULL;
	v = base->v;
	for (int i = 0; i < nd; i++) {
		v.shape[order[i]] = base->v.shape[i];
		v.stride[order[i]] = base->v.stride[i];
	}
	r = fe_view_of(base, &v);
	clg_free(base);
	return r;
}

clg_status fe_rehome(clg_tensor *t, clg_tensor *arena, int64_t off)
{
	clg_op_call c = {.op = CLG_OP_COPY};
	clg_view v;
	clg_status st;

	clg_view_contiguous(&v, arena->v.buf, t->v.dtype, t->v.ndim, t->v.shape);
	v.offset = off;
	c.dst = v;
	c.src[0] = t->v;
	if ((st = fe_run(arena->v.buf->backend, &c)))
		return st;
	/* the old buffer may go at once: the in-order queue runs its next user after the copy */
	storage_release(t->st);
	t->st = arena->st;
	t->st->refs++;
	t->v = v;
	return CLG_OK;
}

/* ---- graph-free compute: elementwise ops with broadcasting, broadcast views ---- */

static int broadcast_shape(const clg_tensor *a, const clg_tensor *b, int *nd, int64_t *shape)
{
	int n = a->v.ndim > b->v.ndim ? a->v.ndim : b->v.ndim;
	for (int d = 0; d < n; d++) {
		int da = d - (n - a->v.ndim), db = d - (n - b->v.ndim);
		int64_t sa = da >= 0 ? a->v.shape[da] : 1, sb = db >= 0 ? b->v.shape[db] : 1;
		if (sa != sb && sa != 1 && sb != 1)
			return 0;
		shape[d] = sa == 1 ? sb : sa;
	}
	*nd = n;
	return 1;
}

void fe_broadcast_view(const clg_tensor *t, int nd, const int64_t *shape, clg_view *v)
{
	int lead = nd - t->v.ndim;
	*v = t->v;
	v->ndim = nd;
	for (int d = nd - 1; d >= 0; d--) {
		v->shape[d] = shape[d];
		v->stride[d] = d < lead || t->v.shape[d - lead] != shape[d] ? 0 : t->v.stride[d - lead];
	}
}

clg_tensor *fe_ew(clg_op op, clg_tensor *a, clg_tensor *b, double f0, double f1)
{
	int nd = a->v.ndim;
	int64_t shape[CLG_MAX_DIMS];
	clg_op_call c = {.op = op};
	clg_tensor *out;
	char s0[96], s1[96];

	memcpy(shape, a->v.shape, sizeof(shape));
	if (b && !broadcast_shape(a, b, &nd, shape))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': shapes %s and %s do not broadcast",
					clg_op_name(op), a->v.buf->backend->info.name, clg_shape_str(&a->v, s0, sizeof(s0)),
					clg_shape_str(&b->v, s1, sizeof(s1))));
	out = fe_new(a->v.buf->backend, a->v.dtype, nd, shape);
	if (!out)
		return NULL;
	c.dst = out->v;
	fe_broadcast_view(a, nd, shape, &c.src[0]);
	if (b)
		fe_broadcast_view(b, nd, shape, &c.src[1]);
	c.f[0] = f0;
	c.f[1] = f1;
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	return out;
}

clg_tensor *fe_expand_nograd(clg_tensor *t, int ndim, const int64_t *shape)
{
	clg_view v;
	int lead;
	char s0[96];

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
	return fe_view_of(t, &v);
bad:
	return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'expand' on device '%s': cannot broadcast %s to %d dims",
				t->v.buf->backend->info.name, clg_shape_str(&t->v, s0, sizeof(s0)), ndim));
}

/* ---- creation ---- */

clg_tensor *clg_empty(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape)
{
	return fe_new(be, dt, ndim, shape);
}

clg_tensor *clg_full(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, double value)
{
	clg_tensor *t = fe_new(be, dt, ndim, shape);
	clg_op_call c = {.op = CLG_OP_FILL};
	if (!t)
		return NULL;
	c.dst = t->v;
	c.f[0] = value;
	if (fe_run(be, &c)) {
		clg_free(t);
		return NULL;
	}
	return t;
}

clg_tensor *clg_zeros(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape)
{
	return clg_full(be, dt, ndim, shape, 0.0);
}

clg_tensor *clg_ones(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape)
{
	return clg_full(be, dt, ndim, shape, 1.0);
}

clg_tensor *clg_from_host(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, const void *data)
{
	clg_tensor *t = fe_new(be, dt, ndim, shape);
	clg_status st;
	if (!t)
		return NULL;
	st = clg_buffer_upload(t->v.buf, 0, data, t->v.buf->size);
	if (st) {
		clg_free(t);
		return fe_fail(st);
	}
	return t;
}

clg_tensor *clg_arange(clg_backend *be, clg_dtype dt, int64_t n)
{
	size_t es = clg_dtype_size(dt);
	void *host = malloc((size_t)(n > 0 ? n : 1) * (es ? es : 1));
	clg_tensor *t;
	if (!host)
		return fe_fail(clg_fail(CLG_ERR_OOM, "arange: out of host memory"));
	for (int64_t i = 0; i < n; i++) {
		if (dt == CLG_F64)
			((double *)host)[i] = (double)i;
		else if (dt == CLG_F16) /* exact up to 2048, then rounded to nearest even */
			((uint16_t *)host)[i] = clg_float_to_half((float)i);
		else if (dt == CLG_BF16) /* exact up to 256 */
			((uint16_t *)host)[i] = clg_float_to_bf16((float)i);
		else if (dt == CLG_I32)
			((int32_t *)host)[i] = (int32_t)i;
		else
			((float *)host)[i] = (float)i;
	}
	t = clg_from_host(be, dt, 1, &n, host);
	free(host);
	return t;
}

clg_tensor *fe_contiguous_nograd(clg_tensor *t)
{
	if (clg_view_is_contiguous(&t->v))
		return fe_view_of(t, &t->v);
	return fe_ew(CLG_OP_COPY, t, NULL, 0, 0);
}

static clg_status to_host(clg_tensor *t, void *out, size_t bytes, clg_read *r)
{
	clg_tensor *c;
	size_t need;
	clg_status st;

	if (!t)
		return clg_last_status() ? clg_last_status() : clg_fail(CLG_ERR_INVALID, "to_host: NULL tensor");
	need = (size_t)clg_view_numel(&t->v) * clg_dtype_size(t->v.dtype);
	if (bytes != need)
		return clg_fail(CLG_ERR_INVALID, "to_host from device '%s': buffer of %zu bytes for a tensor of %zu bytes",
				t->v.buf->backend->info.name, bytes, need);
	c = fe_contiguous_nograd(t);
	if (!c)
		return clg_last_status();
	if (r) { /* the queue is in order: a copy freed now is not reused before the read has run */
		r->be = c->v.buf->backend;
		st = clg_buffer_download_start(c->v.buf, (size_t)c->v.offset * clg_dtype_size(c->v.dtype), out, need, &r->done);
	} else
		st = clg_buffer_download(c->v.buf, (size_t)c->v.offset * clg_dtype_size(c->v.dtype), out, need);
	clg_free(c);
	return st;
}

clg_status clg_to_host(clg_tensor *t, void *out, size_t bytes) { return to_host(t, out, bytes, NULL); }

clg_status clg_to_host_start(clg_tensor *t, void *out, size_t bytes, clg_read *r)
{
	*r = (clg_read){0};
	return to_host(t, out, bytes, r);
}

clg_status clg_read_wait(clg_read *r)
{
	clg_status st = r->done ? clg_buffer_wait(r->be, r->done) : CLG_OK;
	*r = (clg_read){0};
	return st;
}

clg_status clg_assign(clg_tensor *dst, clg_tensor *src)
{
	clg_op_call c = {.op = CLG_OP_COPY};
	char s0[96], s1[96];

	if (!dst || !src)
		return clg_last_status() ? clg_last_status() : clg_fail(CLG_ERR_INVALID, "assign: NULL tensor");
	if (!fe_check_inputs("assign", 2, (clg_tensor *[]){dst, src}))
		return clg_last_status();
	if (dst->v.ndim != src->v.ndim || memcmp(dst->v.shape, src->v.shape, sizeof(int64_t) * (size_t)dst->v.ndim))
		return clg_fail(CLG_ERR_SHAPE, "op 'assign' on device '%s': %s into %s", dst->v.buf->backend->info.name,
				clg_shape_str(&src->v, s0, sizeof(s0)), clg_shape_str(&dst->v, s1, sizeof(s1)));
	c.dst = dst->v;
	c.src[0] = src->v;
	return fe_run(dst->v.buf->backend, &c);
}

clg_status clg_item(clg_tensor *t, double *out)
{
	float f;
	double d;
	int32_t i;
	uint16_t h = 0;
	clg_status st;

	if (!t)
		return clg_last_status() ? clg_last_status() : clg_fail(CLG_ERR_INVALID, "item: NULL tensor");
	if (clg_view_numel(&t->v) != 1)
		return clg_fail(CLG_ERR_SHAPE, "item: tensor has %lld elements, not 1", (long long)clg_view_numel(&t->v));
	switch (t->v.dtype) {
	case CLG_F64:
		st = clg_to_host(t, &d, sizeof(d));
		*out = d;
		return st;
	case CLG_I32:
		st = clg_to_host(t, &i, sizeof(i));
		*out = i;
		return st;
	case CLG_F16:
	case CLG_BF16:
		st = clg_to_host(t, &h, sizeof(h));
		*out = t->v.dtype == CLG_F16 ? clg_half_to_float(h) : clg_bf16_to_float(h);
		return st;
	default:
		st = clg_to_host(t, &f, sizeof(f));
		*out = f;
		return st;
	}
}

clg_tensor *clg_to_device(clg_tensor *t, clg_backend *be)
{
	size_t bytes;
	void *host;
	clg_tensor *out;

	if (!t)
		return NULL;
	bytes = (size_t)clg_view_numel(&t->v) * clg_dtype_size(t->v.dtype);
	host = malloc(bytes ? bytes : 1);
	if (!host)
		return fe_fail(clg_fail(CLG_ERR_OOM, "to_device: out of host memory"));
	if (clg_to_host(t, host, bytes)) {
		free(host);
		return fe_fail(clg_last_status());
	}
	out = clg_from_host(be, t->v.dtype, t->v.ndim, t->v.shape, host);
	free(host);
	return out;
}

/* ---- properties ---- */

int clg_ndim(const clg_tensor *t) { return t->v.ndim; }
const int64_t *clg_shape(const clg_tensor *t) { return t->v.shape; }
int64_t clg_numel(const clg_tensor *t) { return clg_view_numel(&t->v); }
clg_dtype clg_dtype_of(const clg_tensor *t) { return t->v.dtype; }
clg_backend *clg_device_of(const clg_tensor *t) { return t->v.buf->backend; }
int clg_is_contiguous(const clg_tensor *t) { return clg_view_is_contiguous(&t->v); }
