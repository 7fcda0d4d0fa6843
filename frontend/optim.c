/* Optimizers (SGD with momentum/Nesterov/weight decay, Adam, AdamW) as fused device updates,
 * learning-rate schedules, and gradient clipping by global norm.
 *
 * One launch for all parameters (OpenCL 1.2 has no arrays of buffers): at creation the parameters
 * move into one arena, each a view at its offset, and the optimizer keeps arenas of the same
 * layout for their gradients (each parameter's grad_slot: backward writes its gradient there,
 * frontend/autograd.c) and for its state; a step is then one SGD_STEP or ADAM_STEP over the
 * arenas as flat tensors, the same elementwise update the per-parameter calls make. It applies
 * when the parameters share a device and dtype and each owns its whole storage; a step where
 * some parameter has no gradient, or the parameters differ in whether they have state yet, goes
 * parameter by parameter through the same arenas. $CLGRAD_OPTIM_LAUNCH=per-tensor makes no
 * arenas (one launch per parameter, the parameters where they were). */
#include "fe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct clg_optimizer {
	clg_opt_config cfg;
	int n;
	clg_tensor **params;  /* owned references */
	clg_tensor **state;   /* 2 slots per parameter, owned, NULL until the first step */
	unsigned char *have;  /* parameter i has state (the first SGD step with momentum has not) */
	int64_t steps;
	/* the single-launch layout (NULL flat[0]: none): arenas of the parameters, their gradients
	 * and the two state slots (made at first use), parameter i at element off[i] in each */
	clg_tensor *flat[4];
	int64_t *off, total;
};

static clg_optimizer *opt_fail(clg_status s)
{
	fe_fail(s);
	return NULL;
}

/* Whether the parameters can share one arena: $CLGRAD_OPTIM_LAUNCH is not per-tensor, they are on
 * one device in one dtype, and each owns its whole storage (no other tensor shares it). */
static int arena_fits(clg_optimizer *o)
{
	const char *e = clg_cfg_str(CLG_CFG_OPTIM_LAUNCH);
	clg_tensor *p0 = o->params[0];

	if ((e && !strcmp(e, "per-tensor")) || o->n < 1)
		return 0;
	for (int i = 0; i < o->n; i++) {
		clg_tensor *p = o->params[i];
		if (p->v.buf->backend != p0->v.buf->backend || p->v.dtype != p0->v.dtype || p->st->refs != 1 ||
		    p->v.offset != 0 || p->st->buf->size != (size_t)clg_view_numel(&p->v) * clg_dtype_size(p->v.dtype))
			return 0;
		for (int j = 0; j < i; j++)
			if (o->params[j] == p) /* listed twice */
				return 0;
	}
	return 1;
}

/* The parameters moved into one arena and the gradients' arena made, each parameter's gradient
 * slot a view into it; nothing done (per-parameter launches) where arena_fits says no. */
static clg_status make_arenas(clg_optimizer *o)
{
	clg_tensor *p0 = o->params[0];
	clg_backend *be;
	clg_status st = CLG_OK;

	if (!arena_fits(o))
		return CLG_OK;
	be = p0->v.buf->backend;
	for (int i = 0; i < o->n; i++) {
		o->off[i] = o->total;
		o->total += clg_view_numel(&o->params[i]->v);
	}
	o->flat[0] = fe_own(fe_new(be, p0->v.dtype, 1, &o->total));
	o->flat[1] = fe_own(fe_new(be, p0->v.dtype, 1, &o->total));
	if (!o->flat[0] || !o->flat[1])
		return clg_last_status();
	for (int i = 0; i < o->n && !st; i++) {
		clg_tensor *p = o->params[i];
		clg_view v;
		if ((st = fe_rehome(p, o->flat[0], o->off[i])))
			break;
		clg_view_contiguous(&v, o->flat[1]->v.buf, p->v.dtype, p->v.ndim, p->v.shape);
		v.offset = o->off[i];
		if (!(p->grad_slot = fe_own(fe_view_of(o->flat[1], &v))))
			st = clg_last_status();
	}
	return st;
}

clg_optimizer *clg_optimizer_new(const clg_opt_config *cfg, clg_tensor *const *params, int n)
{
	clg_optimizer *o;

	for (int i = 0; i < n; i++) {
		if (!params[i])
			return NULL;
		if (!params[i]->requires_grad || params[i]->grad_fn)
			return opt_fail(clg_fail(CLG_ERR_INVALID, "optimizer: parameter %d is not a leaf that requires grad", i));
		if (!clg_view_is_contiguous(&params[i]->v))
			return opt_fail(clg_fail(CLG_ERR_INVALID, "optimizer: parameter %d is not contiguous", i));
	}
	o = calloc(1, sizeof(*o));
	if (!o || !(o->params = calloc((size_t)n + 1, sizeof(*o->params))) ||
	    !(o->state = calloc(2 * (size_t)n + 1, sizeof(*o->state)))) {
		if (o)
			free(o->params);
		free(o);
		return opt_fail(clg_fail(CLG_ERR_OOM, "optimizer: out of host memory"));
	}
	o->cfg = *cfg;
	if (o->cfg.beta1 == 0)
		o->cfg.beta1 = 0.9;
	if (o->cfg.beta2 == 0)
		o->cfg.beta2 = 0.999;
	if (o->cfg.eps == 0)
		o->cfg.eps = 1e-8;
	o->n = n;
	for (int i = 0; i < n; i++) {
		o->params[i] = params[i];
		params[i]->refs++;
	}
	if (!(o->have = calloc((size_t)n + 1, 1)) || !(o->off = calloc((size_t)n + 1, sizeof(*o->off)))) {
		clg_optimizer_free(o);
		return opt_fail(clg_fail(CLG_ERR_OOM, "optimizer: out of host memory"));
	}
	if (make_arenas(o)) {
		clg_optimizer_free(o);
		return NULL;
	}
	return o;
}

void clg_optimizer_free(clg_optimizer *o)
{
	if (!o)
		return;
	for (int i = 0; i < o->n; i++) {
		if (o->params[i]->grad_slot) {
			fe_release(o->params[i]->grad_slot);
			o->params[i]->grad_slot = NULL;
		}
		fe_release(o->params[i]);
		if (o->state[2 * i])
			fe_release(o->state[2 * i]);
		if (o->state[2 * i + 1])
			fe_release(o->state[2 * i + 1]);
	}
	for (int k = 0; k < 4; k++)
		if (o->flat[k])
			fe_release(o->flat[k]);
	free(o->params);
	free(o->state);
	free(o->have);
	free(o->off);
	free(o);
}

/* The state slot of parameter i, made (zeros) on first use: its own tensor, or with arenas the
 * slot's arena (made whole) and every parameter's view into it. */
static clg_tensor *state_slot(clg_optimizer *o, int i, int slot)
{
	clg_tensor *p = o->params[i], **s = &o->state[2 * i + slot], *a;

	o->have[i] = 1;
	if (*s || !o->flat[0]) {
		if (!*s)
			*s = fe_own(clg_zeros(p->v.buf->backend, p->v.dtype, p->v.ndim, p->v.shape));
		return *s;
	}
	a = o->flat[2 + slot] = fe_own(clg_zeros(p->v.buf->backend, p->v.dtype, 1, &o->total));
	for (int j = 0; a && j < o->n; j++) {
		clg_tensor *q = o->params[j];
		clg_view v;
		clg_view_contiguous(&v, a->v.buf, q->v.dtype, q->v.ndim, q->v.shape);
		v.offset = o->off[j];
		if (!(o->state[2 * j + slot] = fe_own(fe_view_of(a, &v))))
			return NULL;
	}
	return *s;
}

/* Whether this step can be one launch over the arenas: every parameter still in its place with
 * a gradient, and all with state or none. A gradient outside its slot (made before the
 * optimizer, or replaced) is copied there first. */
static int flat_step_ready(clg_optimizer *o, clg_status *st)
{
	*st = CLG_OK;
	if (!o->flat[0])
		return 0;
	for (int i = 0; i < o->n; i++) {
		clg_tensor *p = o->params[i];
		if (!p->grad || p->v.buf != o->flat[0]->v.buf || p->v.offset != o->off[i] || o->have[i] != o->have[0])
			return 0;
	}
	for (int i = 0; i < o->n && !*st; i++) {
		clg_tensor *p = o->params[i], *g = p->grad;
		clg_op_call c = {.op = CLG_OP_COPY};
		if (g == p->grad_slot)
			continue;
		c.dst = p->grad_slot->v;
		c.src[0] = g->v;
		*st = fe_run(g->v.buf->backend, &c);
	}
	return !*st;
}

clg_status clg_optimizer_step(clg_optimizer *o)
{
	const clg_opt_config *c = &o->cfg;
	int adam = c->kind != CLG_OPT_SGD;
	double t = (double)(o->steps + 1);

	clg_status st;
	int flat = flat_step_ready(o, &st);

	if (st)
		return clg_fail_prefix(st, "optimizer step: ");
	for (int i = 0; i < (flat ? 1 : o->n); i++) {
		clg_tensor *p = o->params[i], *g = p->grad;
		clg_op_call call = {.op = adam ? CLG_OP_ADAM_STEP : CLG_OP_SGD_STEP};
		if (!g)
			continue;
		call.dst = flat ? o->flat[0]->v : p->v;
		call.src[0] = flat ? o->flat[1]->v : g->v;
		if (adam) {
			clg_tensor *m = state_slot(o, i, 0), *v = state_slot(o, i, 1);
			if (!m || !v)
				return clg_last_status();
			call.src[1] = flat ? o->flat[2]->v : m->v;
			call.src[2] = flat ? o->flat[3]->v : v->v;
			call.f[0] = c->lr, call.f[1] = c->beta1, call.f[2] = c->beta2, call.f[3] = c->eps;
			call.f[4] = c->weight_decay;
			call.f[5] = 1 - pow(c->beta1, t);
			call.f[6] = 1 - pow(c->beta2, t);
			call.i[0] = c->kind == CLG_OPT_ADAMW;
		} else {
			int first = c->momentum != 0 && !o->have[i];
			clg_tensor *b = c->momentum != 0 ? state_slot(o, i, 0) : g;
			if (!b)
				return clg_last_status();
			call.src[1] = flat ? (c->momentum != 0 ? o->flat[2]->v : o->flat[1]->v) : b->v;
			call.f[0] = c->lr, call.f[1] = c->momentum, call.f[2] = c->weight_decay, call.f[3] = c->dampening;
			call.i[0] = c->nesterov;
			call.i[1] = first;
		}
		if (fe_run(p->v.buf->backend, &call))
			return flat ? clg_fail_prefix(clg_last_status(), "optimizer step, all %d parameters in one launch: ", o->n)
				    : clg_fail_prefix(clg_last_status(), "optimizer step, parameter %d: ", i);
	}
	for (int i = 1; flat && i < o->n; i++) /* the step made (or used) every parameter's state */
		o->have[i] = o->have[0];
	o->steps++;
	return CLG_OK;
}

void clg_optimizer_zero_grad(clg_optimizer *o)
{
	for (int i = 0; i < o->n; i++)
		clg_zero_grad(o->params[i]);
}

int clg_optimizer_count(const clg_optimizer *o) { return o->n; }
void clg_optimizer_set_lr(clg_optimizer *o, double lr) { o->cfg.lr = lr; }
double clg_optimizer_lr(const clg_optimizer *o) { return o->cfg.lr; }
int64_t clg_optimizer_steps(const clg_optimizer *o) { return o->steps; }
void clg_optimizer_set_steps(clg_optimizer *o, int64_t steps) { o->steps = steps; }

clg_tensor *clg_optimizer_state(clg_optimizer *o, int i, int slot)
{
	return i >= 0 && i < o->n && (slot == 0 || slot == 1) && o->have[i] ? o->state[2 * i + slot] : NULL;
}

clg_status clg_optimizer_set_state(clg_optimizer *o, int i, int slot, clg_tensor *value)
{
	clg_tensor *s;
	clg_op_call c = {.op = CLG_OP_COPY};
	if (i < 0 || i >= o->n || (slot != 0 && slot != 1) || !value)
		return clg_fail(CLG_ERR_INVALID, "optimizer: no state slot %d of parameter %d", slot, i);
	s = state_slot(o, i, slot);
	if (!s)
		return clg_last_status();
	if (value->v.ndim != s->v.ndim || memcmp(value->v.shape, s->v.shape, sizeof(int64_t) * (size_t)s->v.ndim))
		return clg_fail(CLG_ERR_SHAPE, "optimizer: state for parameter %d has the wrong shape", i);
	c.dst = s->v;
	c.src[0] = value->v;
	return fe_run(s->v.buf->backend, &c);
}

clg_status clg_clip_grad_norm(clg_tensor *const *params, int n, double max_norm, clg_tensor **norm_out)
{
	clg_tensor *total = NULL, *norm, *scale;
	clg_status st = CLG_OK;

	if (norm_out)
		*norm_out = NULL;
	clg_no_grad_begin();
	/* total = sum over parameters of sum(g^2), one scalar on the device */
	for (int i = 0; i < n && !st; i++) {
		clg_tensor *g = params[i] ? params[i]->grad : NULL, *sq, *s, *t;
		if (!g)
			continue;
		sq = clg_mul(g, g);
		s = clg_sum(sq, 0, NULL, 0);
		t = total ? clg_add(total, s) : fe_alias(s);
		clg_free(sq);
		clg_free(s);
		clg_free(total);
		total = t;
		if (!total)
			st = clg_last_status();
	}
	if (st || !total)
		goto out;
	/* scale = min(1, max_norm / (norm + 1e-6)), applied to every gradient */
	norm = clg_sqrt(total);
	{
		clg_tensor *den = clg_affine(norm, 1.0, 1e-6), *num = clg_full(clg_device_of(norm), clg_dtype_of(norm), 0, NULL, max_norm);
		clg_tensor *q = clg_div(num, den);
		scale = clg_clamp(q, 0.0, 1.0);
		clg_free(den);
		clg_free(num);
		clg_free(q);
	}
	for (int i = 0; i < n && scale && !st; i++) {
		clg_tensor *g = params[i] ? params[i]->grad : NULL;
		clg_op_call c = {.op = CLG_OP_MUL};
		clg_tensor *sx;
		if (!g)
			continue;
		sx = clg_expand(scale, g->v.ndim, g->v.shape);
		if (!sx) {
			st = clg_last_status();
			break;
		}
		c.dst = g->v;
		c.src[0] = g->v;
		c.src[1] = sx->v;
		st = fe_run(g->v.buf->backend, &c);
		clg_free(sx);
	}
	if (!scale && !st)
		st = clg_last_status();
	clg_free(scale);
	if (norm_out && !st)
		*norm_out = norm;
	else
		clg_free(norm);
out:
	clg_free(total);
	clg_no_grad_end();
	return st;
}

double clg_lr_at(const clg_lr_schedule *s, int64_t step)
{
	double lr = s->base_lr;
	if (s->warmup_steps > 0 && step < s->warmup_steps)
		return s->base_lr * (double)(step + 1) / (double)s->warmup_steps;
	switch (s->kind) {
	case CLG_LR_STEP:
		if (s->step_size > 0)
			lr *= pow(s->gamma, (double)((step - s->warmup_steps) / s->step_size));
		break;
	case CLG_LR_COSINE: {
		int64_t span = s->total_steps - s->warmup_steps;
		double t = span > 0 ? (double)(step - s->warmup_steps) / (double)span : 1.0;
		if (t > 1)
			t = 1;
		lr = s->min_lr + 0.5 * (s->base_lr - s->min_lr) * (1 + cos(3.14159265358979323846 * t));
		break;
	}
	default:
		break;
	}
	return lr;
}
