/* Neural-network modules: the module mechanics (tensors, children, state), initialisation, and
 * the simple modules (linear, activations, flatten, sequential). */
#include "fe_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clg_module *clg_module_new(const clg_module_ops *ops)
{
	clg_module *m = calloc(1, sizeof(*m));
	if (!m) {
		fe_fail(clg_fail(CLG_ERR_OOM, "module: out of host memory"));
		return NULL;
	}
	m->ops = ops;
	m->training = 1;
	return m;
}

/* Room for one more entry in a module's arrays of n entries, cap of them (each elsize bytes). */
static int grow(void **arrs[], const size_t *elsize, int narr, int n, int *cap)
{
	int c = *cap ? 2 * *cap : 4;
	if (n < *cap)
		return 0;
	for (int k = 0; k < narr; k++) {
		void *p = realloc(*arrs[k], elsize[k] * (size_t)c);
		if (!p)
			return -1;
		*arrs[k] = p;
	}
	*cap = c;
	return 0;
}

/* NULL when name can name a tensor or child of m, else why not. */
static const char *bad_name(const clg_module *m, const char *name)
{
	if (!name || !*name)
		return "an empty name";
	if (strchr(name, '.'))
		return "a name with a '.'";
	for (int i = 0; i < m->ntensors; i++)
		if (!strcmp(m->tensor_names[i], name))
			return "a tensor of that name is there already";
	for (int i = 0; i < m->nchildren; i++)
		if (!strcmp(m->child_names[i], name))
			return "a child of that name is there already";
	return NULL;
}

clg_status clg_module_add_tensor(clg_module *m, const char *name, clg_tensor *t, int is_param)
{
	void **arrs[] = {(void **)&m->tensor_names, (void **)&m->tensors, (void **)&m->is_param};
	const size_t sizes[] = {sizeof(*m->tensor_names), sizeof(*m->tensors), sizeof(*m->is_param)};
	const char *why;
	char *copy;

	if (!t)
		return clg_last_status() ? clg_last_status() : clg_fail(CLG_ERR_INVALID, "module '%s': no tensor '%s'",
									  m->ops->kind, name ? name : "");
	if ((why = bad_name(m, name)) != NULL) {
		clg_free(t);
		return clg_fail(CLG_ERR_INVALID, "module '%s': cannot add tensor '%s': %s", m->ops->kind, name ? name : "",
				why);
	}
	if (grow(arrs, sizes, 3, m->ntensors, &m->tensors_cap) || !(copy = strdup(name))) {
		clg_free(t);
		return clg_fail(CLG_ERR_OOM, "module '%s': out of host memory for tensor '%s'", m->ops->kind, name);
	}
	fe_own(t);
	if (is_param)
		clg_set_requires_grad(t, 1);
	m->tensor_names[m->ntensors] = copy;
	m->tensors[m->ntensors] = t;
	m->is_param[m->ntensors] = is_param;
	m->ntensors++;
	return CLG_OK;
}

clg_status clg_module_add_child(clg_module *m, const char *name, clg_module *child)
{
	void **arrs[] = {(void **)&m->children, (void **)&m->child_names};
	const size_t sizes[] = {sizeof(*m->children), sizeof(*m->child_names)};
	char num[24];
	const char *why;
	char *copy;

	if (!child)
		return clg_last_status() ? clg_last_status() : clg_fail(CLG_ERR_INVALID, "module '%s': no child '%s'",
									  m->ops->kind, name ? name : "");
	if (!name) {
		snprintf(num, sizeof(num), "%d", m->nchildren);
		name = num;
	}
	if (child == m || (why = bad_name(m, name)) != NULL) {
		if (child != m)
			clg_module_free(child);
		return clg_fail(CLG_ERR_INVALID, "module '%s': cannot add child '%s': %s", m->ops->kind, name,
				child == m ? "a module cannot be its own child" : why);
	}
	if (grow(arrs, sizes, 2, m->nchildren, &m->children_cap) || !(copy = strdup(name))) {
		clg_module_free(child);
		return clg_fail(CLG_ERR_OOM, "module '%s': out of host memory for child '%s'", m->ops->kind, name);
	}
	m->children[m->nchildren] = child;
	m->child_names[m->nchildren] = copy;
	m->nchildren++;
	return CLG_OK;
}

void clg_module_free(clg_module *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nchildren; i++) {
		clg_module_free(m->children[i]);
		free(m->child_names ? m->child_names[i] : NULL);
	}
	free(m->children);
	free(m->child_names);
	for (int i = 0; i < m->ntensors; i++) {
		fe_release(m->tensors[i]);
		free(m->tensor_names[i]);
	}
	free(m->tensors);
	free(m->tensor_names);
	free(m->is_param);
	if (m->ops->destroy)
		m->ops->destroy(m);
	free(m);
}

clg_tensor *clg_module_forward(clg_module *m, clg_tensor *x)
{
	clg_tensor *out = NULL;
	clg_status st;
	if (!m || !x)
		return NULL;
	if (m->ops->forward)
		return m->ops->forward(m, x);
	st = clg_module_forward_n(m, 1, &x, 1, &out);
	return st ? fe_fail(st) : out;
}

clg_status clg_module_forward_n(clg_module *m, int n_in, clg_tensor *const *in, int n_out, clg_tensor **out)
{
	clg_status st;

	for (int i = 0; i < n_out; i++)
		out[i] = NULL;
	if (!m)
		return clg_fail(CLG_ERR_INVALID, "module forward: no module");
	if (n_in < 1 || !in || !in[0])
		return clg_last_status() ? clg_last_status()
					 : clg_fail(CLG_ERR_INVALID, "module '%s': forward without an input", m->ops->kind);
	if (m->ops->forward_n) {
		st = m->ops->forward_n(m, n_in, in, n_out, out);
	} else if (n_in == 1 && n_out == 1 && m->ops->forward) {
		out[0] = m->ops->forward(m, in[0]);
		st = out[0] ? CLG_OK : clg_last_status() ? clg_last_status() : CLG_ERR_INVALID;
	} else {
		st = clg_fail(CLG_ERR_INVALID, "module '%s': takes 1 input and gives 1 output, not %d and %d", m->ops->kind,
			      n_in, n_out);
	}
	for (int i = 0; i < n_out; i++)
		if (!st && !out[i])
			st = clg_fail(CLG_ERR_INVALID, "module '%s': forward gave no output %d", m->ops->kind, i);
	if (st)
		for (int i = 0; i < n_out; i++) {
			clg_free(out[i]);
			out[i] = NULL;
		}
	return st;
}

void clg_module_train(clg_module *m, int training)
{
	m->training = training;
	for (int i = 0; i < m->nchildren; i++)
		clg_module_train(m->children[i], training);
}

static clg_status collect(clg_module *m, const char *prefix, int buffers, clg_named_tensors *l)
{
	char name[1024];
	for (int i = 0; i < m->ntensors; i++) {
		if (!m->is_param[i] && !buffers)
			continue;
		void *a = realloc(l->names, sizeof(*l->names) * (size_t)(l->n + 1));
		if (a)
			l->names = a;
		void *b = realloc(l->tensors, sizeof(*l->tensors) * (size_t)(l->n + 1));
		if (b)
			l->tensors = b;
		void *c = realloc(l->is_param, sizeof(*l->is_param) * (size_t)(l->n + 1));
		if (c)
			l->is_param = c;
		if (snprintf(name, sizeof(name), "%s%s", prefix, m->tensor_names[i]) >= (int)sizeof(name))
			return clg_fail(CLG_ERR_INVALID, "module state: name '%s%s' too long", prefix, m->tensor_names[i]);
		if (!a || !b || !c || !(l->names[l->n] = strdup(name)))
			return clg_fail(CLG_ERR_OOM, "module state: out of host memory");
		l->tensors[l->n] = m->tensors[i];
		l->is_param[l->n] = m->is_param[i];
		l->n++;
	}
	for (int i = 0; i < m->nchildren; i++) {
		clg_status st;
		if (snprintf(name, sizeof(name), "%s%s.", prefix, m->child_names[i]) >= (int)sizeof(name))
			return clg_fail(CLG_ERR_INVALID, "module state: name '%s%s.' too long", prefix, m->child_names[i]);
		st = collect(m->children[i], name, buffers, l);
		if (st)
			return st;
	}
	return CLG_OK;
}

clg_status clg_module_state(clg_module *m, int buffers, clg_named_tensors *out)
{
	clg_status st;
	memset(out, 0, sizeof(*out));
	st = collect(m, "", buffers, out);
	if (st)
		clg_named_tensors_free(out);
	return st;
}

void clg_named_tensors_free(clg_named_tensors *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->tensors);
	free(l->is_param);
	memset(l, 0, sizeof(*l));
}

clg_tensor *clg_module_find(clg_module *m, const char *name)
{
	const char *dot;
	if (!m || !name)
		return NULL;
	dot = strchr(name, '.');
	if (!dot) {
		for (int i = 0; i < m->ntensors; i++)
			if (!strcmp(m->tensor_names[i], name))
				return m->tensors[i];
		return NULL;
	}
	for (int i = 0; i < m->nchildren; i++)
		if (strlen(m->child_names[i]) == (size_t)(dot - name) && !strncmp(m->child_names[i], name, (size_t)(dot - name)))
			return clg_module_find(m->children[i], dot + 1);
	return NULL;
}

/* ---- loading state, moving between devices ---- */

/* A growing message: "what: a, b, c" parts for one error. */
typedef struct {
	char *s;
	size_t len, cap;
	int oom;
} msgbuf;

static void msg_add(msgbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg_add(msgbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;
	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = (b->len + (size_t)n + 1) * 2;
		char *p = realloc(b->s, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void msg_shape(msgbuf *b, const clg_tensor *t)
{
	msg_add(b, "(");
	for (int d = 0; d < clg_ndim(t); d++)
		msg_add(b, "%s%lld", d ? ", " : "", (long long)clg_shape(t)[d]);
	msg_add(b, clg_ndim(t) == 1 ? ",)" : ")");
}

static int same_shape(const clg_tensor *a, const clg_tensor *b)
{
	if (clg_ndim(a) != clg_ndim(b))
		return 0;
	for (int d = 0; d < clg_ndim(a); d++)
		if (clg_shape(a)[d] != clg_shape(b)[d])
			return 0;
	return 1;
}

/* src's value in dst's dtype and on dst's device (a new reference; src itself when it fits). */
static clg_tensor *fitted(clg_tensor *src, clg_tensor *dst)
{
	clg_tensor *a = clg_device_of(src) == clg_device_of(dst) ? clg_retain(src) : clg_to_device(src, clg_device_of(dst));
	clg_tensor *b = a && clg_dtype_of(a) != clg_dtype_of(dst) ? clg_cast(a, clg_dtype_of(dst)) : a;
	if (b != a)
		clg_free(a);
	return b;
}

clg_status clg_module_load_state(clg_module *m, const clg_named_tensors *src, int strict)
{
	clg_named_tensors own = {0};
	msgbuf missing = {0}, unexpected = {0}, shapes = {0};
	int *match = NULL, nmissing = 0, nunexpected = 0, nshapes = 0;
	clg_status st;

	if (!m || !src)
		return clg_fail(CLG_ERR_INVALID, "load_state: no %s", m ? "state to load" : "module");
	st = clg_module_state(m, 1, &own);
	if (st)
		return st;
	match = malloc(sizeof(*match) * (size_t)(own.n + 1));
	if (!match) {
		st = clg_fail(CLG_ERR_OOM, "load_state: out of host memory");
		goto out_state;
	}
	/* match[i]: the src entry of module tensor i, or -1 */
	for (int i = 0; i < own.n; i++) {
		match[i] = -1;
		for (int j = 0; j < src->n && match[i] < 0; j++)
			if (src->names[j] && !strcmp(src->names[j], own.names[i]))
				match[i] = j;
		if (match[i] < 0) {
			msg_add(&missing, "%s%s", nmissing++ ? ", " : "", own.names[i]);
		} else if (!src->tensors[match[i]] || !same_shape(own.tensors[i], src->tensors[match[i]])) {
			msg_add(&shapes, "%s%s (module ", nshapes++ ? ", " : "", own.names[i]);
			msg_shape(&shapes, own.tensors[i]);
			if (src->tensors[match[i]]) {
				msg_add(&shapes, ", given ");
				msg_shape(&shapes, src->tensors[match[i]]);
				msg_add(&shapes, ")");
			} else {
				msg_add(&shapes, ", given none)");
			}
		}
	}
	for (int j = 0; j < src->n; j++) {
		int found = 0;
		for (int i = 0; i < own.n && !found; i++)
			found = src->names[j] && !strcmp(src->names[j], own.names[i]);
		if (!found)
			msg_add(&unexpected, "%s%s", nunexpected++ ? ", " : "", src->names[j] ? src->names[j] : "(no name)");
	}
	if (missing.oom || unexpected.oom || shapes.oom) {
		st = clg_fail(CLG_ERR_OOM, "load_state: out of host memory");
		goto out_match;
	}
	if (nshapes || (strict && (nmissing || nunexpected))) {
		st = clg_fail(CLG_ERR_INVALID,
			      "load_state (module '%s', %d tensors, %s): %d missing%s%s; %d unexpected%s%s; %d mis-shaped%s%s",
			      m->ops->kind, own.n, strict ? "strict" : "not strict", nmissing, nmissing ? ": " : "",
			      nmissing ? missing.s : "", nunexpected, nunexpected ? ": " : "", nunexpected ? unexpected.s : "",
			      nshapes, nshapes ? ": " : "", nshapes ? shapes.s : "");
		goto out_match;
	}
	clg_no_grad_begin();
	for (int i = 0; !st && i < own.n; i++) {
		clg_tensor *v;
		if (match[i] < 0)
			continue;
		v = fitted(src->tensors[match[i]], own.tensors[i]);
		st = v ? clg_assign(own.tensors[i], v) : clg_last_status();
		if (st)
			clg_fail_prefix(st, "load_state: tensor '%s': ", own.names[i]);
		clg_free(v);
	}
	clg_no_grad_end();
out_match:
	free(match);
	free(missing.s);
	free(unexpected.s);
	free(shapes.s);
out_state:
	clg_named_tensors_free(&own);
	return st;
}

/* Every tensor slot of the module tree, in state order (with buffers). */
typedef struct {
	clg_tensor ***slot; /* where each tensor is held */
	int n, cap;
} slot_list;

static int list_slots(clg_module *m, slot_list *l)
{
	for (int i = 0; i < m->ntensors; i++) {
		if (l->n == l->cap) {
			int cap = l->cap ? 2 * l->cap : 16;
			void *p = realloc(l->slot, sizeof(*l->slot) * (size_t)cap);
			if (!p)
				return -1;
			l->slot = p;
			l->cap = cap;
		}
		l->slot[l->n++] = &m->tensors[i];
	}
	for (int i = 0; i < m->nchildren; i++)
		if (list_slots(m->children[i], l))
			return -1;
	return 0;
}

clg_status clg_module_to(clg_module *m, clg_backend *be)
{
	slot_list l = {0};
	clg_tensor **copy = NULL;
	clg_status st = CLG_OK;
	int done = 0;

	if (!m || !be)
		return clg_fail(CLG_ERR_INVALID, "module to: no %s", m ? "device" : "module");
	if (list_slots(m, &l) || !(copy = calloc((size_t)l.n + 1, sizeof(*copy)))) {
		st = clg_fail(CLG_ERR_OOM, "module '%s' to '%s': out of host memory", m->ops->kind, be->info.name);
		goto out;
	}
	for (int i = 0; i < l.n && !st; i++) {
		clg_tensor *old = *l.slot[i];
		for (int j = 0; j < i && !copy[i]; j++) /* shared: one copy */
			if (*l.slot[j] == old)
				copy[i] = clg_retain(copy[j]);
		if (!copy[i])
			copy[i] = clg_device_of(old) == be ? clg_retain(old) : fe_own(clg_to_device(old, be));
		if (!copy[i])
			st = clg_fail_prefix(clg_last_status() ? clg_last_status() : CLG_ERR_INVALID,
					     "module '%s' to '%s': tensor %d of shape (%lld...): ", m->ops->kind, be->info.name, i,
					     clg_ndim(old) ? (long long)clg_shape(old)[0] : 1LL);
	}
	if (st)
		goto out;
	for (int i = 0; i < l.n; i++) {
		clg_tensor *old = *l.slot[i];
		if (copy[i] != old && clg_requires_grad(old))
			clg_set_requires_grad(copy[i], 1);
		*l.slot[i] = copy[i];
		fe_release(old);
		copy[i] = NULL;
	}
	done = 1;
out:
	for (int i = 0; copy && !done && i < l.n; i++)
		fe_release(copy[i]);
	free(copy);
	free(l.slot);
	return st;
}

int64_t clg_module_num_params(clg_module *m)
{
	clg_named_tensors l;
	int64_t n = 0;
	if (clg_module_state(m, 0, &l))
		return -1;
	for (int i = 0; i < l.n; i++)
		n += clg_numel(l.tensors[i]);
	clg_named_tensors_free(&l);
	return n;
}

/* splitmix64: a small, well-mixed generator for initialisation (host side, same on every machine) */
static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

clg_tensor *clg_init_uniform(clg_backend *be, int ndim, const int64_t *shape, double bound, uint64_t seed)
{
	int64_t n = 1;
	float *h;
	clg_tensor *t;
	uint64_t s = seed;

	for (int d = 0; d < ndim; d++)
		n *= shape[d];
	h = malloc(sizeof(float) * (size_t)(n ? n : 1));
	if (!h)
		return fe_fail(clg_fail(CLG_ERR_OOM, "init: out of host memory"));
	for (int64_t i = 0; i < n; i++)
		h[i] = (float)(bound * (2.0 * (double)(splitmix(&s) >> 11) * (1.0 / 9007199254740992.0) - 1.0));
	t = clg_from_host(be, CLG_F32, ndim, shape, h);
	free(h);
	return t;
}

double clg_init_bound(clg_init init, int64_t fan_in, int64_t fan_out)
{
	switch (init) {
	case CLG_INIT_KAIMING_UNIFORM: return sqrt(6.0 / (double)fan_in);
	case CLG_INIT_XAVIER_UNIFORM: return sqrt(6.0 / (double)(fan_in + fan_out));
	default: return 1.0 / sqrt((double)fan_in);
	}
}

/* ---- linear ---- */

static clg_tensor *linear_forward(clg_module *m, clg_tensor *x)
{
	return clg_linear(x, m->tensors[0], m->ntensors > 1 ? m->tensors[1] : NULL);
}

static const clg_module_ops linear_ops = {"linear", linear_forward, NULL};

clg_module *clg_nn_linear(clg_backend *be, int64_t in, int64_t out, int bias, clg_init init, uint64_t seed)
{
	clg_module *m = clg_module_new(&linear_ops);
	double wb = clg_init_bound(init, in, out), bb = 1.0 / sqrt((double)in);
	if (!m)
		return NULL;
	if (clg_module_add_tensor(m, "weight", clg_init_uniform(be, CLG_SHAPE(out, in), wb, seed), 1) ||
	    (bias && clg_module_add_tensor(m, "bias", clg_init_uniform(be, CLG_SHAPE(out), bb, seed ^ 0x5bd1e995u), 1))) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

/* ---- conv2d and pooling ---- */

typedef struct {
	int64_t stride, pad, groups, k;
} conv_params;

static clg_tensor *conv_forward(clg_module *m, clg_tensor *x)
{
	const conv_params *p = m->data;
	return clg_conv2d(x, m->tensors[0], m->ntensors > 1 ? m->tensors[1] : NULL, p->stride, p->stride, p->pad, p->pad,
			  1, 1, p->groups);
}

static clg_tensor *maxpool_forward(clg_module *m, clg_tensor *x)
{
	const conv_params *p = m->data;
	return clg_max_pool2d(x, p->k, p->k, p->stride, p->stride, p->pad, p->pad);
}

static void free_data(clg_module *m) { free(m->data); }

static const clg_module_ops conv_ops = {"conv2d", conv_forward, free_data};
static const clg_module_ops maxpool_ops = {"max_pool2d", maxpool_forward, free_data};

/* A module with a private copy of its parameters (size bytes at p). */
static clg_module *with_data(const clg_module_ops *ops, const void *p, size_t size)
{
	clg_module *m = clg_module_new(ops);
	if (m && !(m->data = malloc(size))) {
		free(m);
		fe_fail(clg_fail(CLG_ERR_OOM, "module: out of host memory"));
		return NULL;
	}
	if (m)
		memcpy(m->data, p, size);
	return m;
}

static clg_module *with_params(const clg_module_ops *ops, conv_params p) { return with_data(ops, &p, sizeof(p)); }

clg_module *clg_nn_conv2d(clg_backend *be, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad,
			  int64_t groups, int bias, clg_init init, uint64_t seed)
{
	clg_module *m;
	int64_t fan_in = (groups > 0 ? in / groups : in) * k * k;
	if (groups <= 0 || in % groups || out % groups) {
		fe_fail(clg_fail(CLG_ERR_INVALID, "conv2d module: %lld and %lld channels do not split into %lld groups",
				 (long long)in, (long long)out, (long long)groups));
		return NULL;
	}
	m = with_params(&conv_ops, (conv_params){stride, pad, groups, k});
	if (m && (clg_module_add_tensor(m, "weight",
				       clg_init_uniform(be, CLG_SHAPE(out, in / groups, k, k),
							clg_init_bound(init, fan_in, out * k * k), seed), 1) ||
		  (bias && clg_module_add_tensor(m, "bias", clg_init_uniform(be, CLG_SHAPE(out), 1.0 / sqrt((double)fan_in),
									     seed ^ 0x5bd1e995u), 1)))) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

clg_module *clg_nn_max_pool2d(int64_t k, int64_t stride, int64_t pad)
{
	return with_params(&maxpool_ops, (conv_params){stride, pad, 1, k});
}

/* ---- normalisation, dropout, embedding ---- */

typedef struct {
	double eps, momentum, p;
	uint64_t seed, calls;
} norm_params;

static clg_tensor *layernorm_forward(clg_module *m, clg_tensor *x)
{
	return clg_layer_norm(x, m->tensors[0], m->tensors[1], ((norm_params *)m->data)->eps);
}

static clg_tensor *batchnorm_forward(clg_module *m, clg_tensor *x)
{
	const norm_params *p = m->data;
	return clg_batch_norm(x, m->tensors[0], m->tensors[1], m->tensors[2], m->tensors[3], p->momentum, p->eps,
			      m->training);
}

static clg_tensor *dropout_forward(clg_module *m, clg_tensor *x)
{
	norm_params *p = m->data;
	/* a fresh mask per call, the same sequence on every device and every run (a checkpointed
	 * block's re-run in backward replays its first run's masks: the count stays) */
	uint64_t k = clg_recomputing() ? p->calls : ++p->calls;
	return clg_dropout(x, p->p, p->seed + 0x9e3779b97f4a7c15ULL * k, m->training);
}

static clg_tensor *embedding_forward(clg_module *m, clg_tensor *idx) { return clg_embedding(m->tensors[0], idx); }

static const clg_module_ops layernorm_ops = {"layer_norm", layernorm_forward, free_data};
static const clg_module_ops batchnorm_ops = {"batch_norm", batchnorm_forward, free_data};
static const clg_module_ops dropout_ops = {"dropout", dropout_forward, free_data};
static const clg_module_ops embedding_ops = {"embedding", embedding_forward, NULL};

static clg_module *with_norm_params(const clg_module_ops *ops, norm_params p) { return with_data(ops, &p, sizeof(p)); }

clg_module *clg_nn_layer_norm(clg_backend *be, int64_t dim, double eps)
{
	clg_module *m = with_norm_params(&layernorm_ops, (norm_params){.eps = eps});
	if (m && (clg_module_add_tensor(m, "weight", clg_ones(be, CLG_F32, CLG_SHAPE(dim)), 1) ||
		  clg_module_add_tensor(m, "bias", clg_zeros(be, CLG_F32, CLG_SHAPE(dim)), 1))) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

clg_module *clg_nn_batch_norm2d(clg_backend *be, int64_t channels, double momentum, double eps)
{
	clg_module *m = with_norm_params(&batchnorm_ops, (norm_params){.eps = eps, .momentum = momentum});
	if (m && (clg_module_add_tensor(m, "weight", clg_ones(be, CLG_F32, CLG_SHAPE(channels)), 1) ||
		  clg_module_add_tensor(m, "bias", clg_zeros(be, CLG_F32, CLG_SHAPE(channels)), 1) ||
		  clg_module_add_tensor(m, "running_mean", clg_zeros(be, CLG_F32, CLG_SHAPE(channels)), 0) ||
		  clg_module_add_tensor(m, "running_var", clg_ones(be, CLG_F32, CLG_SHAPE(channels)), 0))) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

clg_module *clg_nn_dropout(double p, uint64_t seed)
{
	return with_norm_params(&dropout_ops, (norm_params){.p = p, .seed = seed});
}

clg_module *clg_nn_embedding(clg_backend *be, int64_t num, int64_t dim, uint64_t seed)
{
	clg_module *m = clg_module_new(&embedding_ops);
	/* unit variance, like PyTorch's N(0, 1), from a uniform distribution */
	if (m && clg_module_add_tensor(m, "weight", clg_init_uniform(be, CLG_SHAPE(num, dim), sqrt(3.0), seed), 1)) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

/* ---- stateless modules ---- */

static clg_tensor *relu_forward(clg_module *m, clg_tensor *x) { return clg_relu(x); }
static clg_tensor *tanh_forward(clg_module *m, clg_tensor *x) { return clg_tanh(x); }
static clg_tensor *gelu_forward(clg_module *m, clg_tensor *x) { return clg_gelu(x); }

static clg_tensor *flatten_forward(clg_module *m, clg_tensor *x)
{
	return clg_reshape(x, CLG_SHAPE(clg_shape(x)[0], -1));
}

static const clg_module_ops relu_ops = {"relu", relu_forward, NULL};
static const clg_module_ops tanh_ops = {"tanh", tanh_forward, NULL};
static const clg_module_ops gelu_ops = {"gelu", gelu_forward, NULL};
static const clg_module_ops flatten_ops = {"flatten", flatten_forward, NULL};

clg_module *clg_nn_relu(void) { return clg_module_new(&relu_ops); }
clg_module *clg_nn_tanh(void) { return clg_module_new(&tanh_ops); }
clg_module *clg_nn_gelu(void) { return clg_module_new(&gelu_ops); }
clg_module *clg_nn_flatten(void) { return clg_module_new(&flatten_ops); }

/* ---- sequential ---- */

/* The activation module that follows child i, as a fused linear epilogue (-1: none that fuses). */
static int fusable_act(clg_module *m, int i)
{
	const clg_module_ops *next = i + 1 < m->nchildren ? m->children[i + 1]->ops : NULL;
	return next == &relu_ops ? CLG_ACT_RELU : next == &gelu_ops ? CLG_ACT_GELU : -1;
}

/* Whether children i, i + 1, i + 2 are a conv2d of one group, relu and max_pool2d. */
static int conv_relu_pool_at(clg_module *m, int i)
{
	return i + 2 < m->nchildren && m->children[i]->ops == &conv_ops &&
	       ((const conv_params *)m->children[i]->data)->groups == 1 && m->children[i + 1]->ops == &relu_ops &&
	       m->children[i + 2]->ops == &maxpool_ops;
}

static clg_tensor *sequential_forward(clg_module *m, clg_tensor *x)
{
	clg_tensor *h = x;
	for (int i = 0; i < m->nchildren && h; i++) {
		clg_module *c = m->children[i];
		int act = c->ops == &linear_ops ? fusable_act(m, i) : -1;
		clg_tensor *next;
		if (conv_relu_pool_at(m, i)) { /* conv2d, relu, max_pool2d: one node (the modules stay) */
			const conv_params *cp = c->data, *pp = m->children[i + 2]->data;
			next = clg_conv2d_relu_max_pool2d(h, c->tensors[0], c->ntensors > 1 ? c->tensors[1] : NULL, cp->stride,
							 cp->pad, pp->k, pp->stride, pp->pad);
			i += 2;
		} else if (act >= 0) { /* linear then relu / gelu: one fused op (the modules and names stay) */
			next = clg_linear_act(h, c->tensors[0], c->ntensors > 1 ? c->tensors[1] : NULL, (clg_act)act);
			i++;
		} else {
			next = clg_module_forward(c, h);
		}
		if (h != x)
			clg_free(h); /* the graph keeps what backward needs */
		h = next;
	}
	return h;
}

static const clg_module_ops sequential_ops = {"sequential", sequential_forward, NULL};

clg_module *clg_module_add_children(clg_module *m, clg_module **kids, int n)
{
	int i = 0;

	for (int j = 0; m && j < n; j++)
		if (!kids[j]) {
			clg_module_free(m);
			m = NULL;
		}
	for (; m && i < n; i++)
		if (clg_module_add_child(m, NULL, kids[i])) { /* it freed kids[i] */
			clg_module_free(m);
			m = NULL;
			i++;
			break;
		}
	for (int j = m ? n : i; j < n; j++) /* the ones not taken over */
		clg_module_free(kids[j]);
	return m;
}

clg_module *clg_nn_sequential(clg_module **mods, int n)
{
	int ok = 1;
	for (int j = 0; j < n; j++)
		ok &= mods[j] != NULL;
	return clg_module_add_children(ok ? clg_module_new(&sequential_ops) : NULL, mods, n);
}
