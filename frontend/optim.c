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
 * arenas (one launch per parameter, the parameters where they were). Parameter groups (each its
 * own learning rate and weight decay) have arenas of their own: a step is a launch per group. */
#include "fe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One parameter group: its share of the optimizer's parameters (first .. first + n - 1), its
 * own learning rate and weight decay, and its single-launch layout. */
typedef struct {
	int first, n;
	double lr, lr_scale, weight_decay; /* lr_scale: lr / the base lr at creation */
	/* the single-launch layout (NULL flat[0]: none): arenas of the parameters, their gradients
	 * and the three state slots (made at first use), parameter first + j at element off[j] */
	clg_tensor *flat[2 + CLG_OPT_STATE_SLOTS];
	int64_t *off, total;
} opt_group;

struct clg_optimizer {
	clg_opt_config cfg;
	int n, ngroups;
	clg_tensor **params;  /* owned references, group by group */
	clg_tensor **state;   /* CLG_OPT_STATE_SLOTS per parameter, owned, NULL until first used */
	unsigned char *have;  /* parameter i has state (the first SGD step with momentum has not) */
	int64_t steps;
	opt_group *groups;
};

#define SLOT(o, i, slot) ((o)->state[CLG_OPT_STATE_SLOTS * (i) + (slot)])

static clg_optimizer *opt_fail(clg_status s)
{
	fe_fail(s);
	return NULL;
}

clg_opt_config clg_opt_config_default(clg_opt_kind kind)
{
	clg_opt_config c = {.kind = kind, .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
	c.weight_decay = kind == CLG_OPT_ADAMW ? 0.01 : 0.0;
	return c;
}

/* Whether group g's parameters can share one arena: $CLGRAD_OPTIM_LAUNCH is not per-tensor, they
 * are on one device in one dtype, and each owns its whole storage (no other tensor shares it). */
static int arena_fits(clg_optimizer *o, const opt_group *g)
{
	clg_tensor *p0 = o->params[g->first];

	if (clg_cfg_is(CLG_CFG_OPTIM_LAUNCH, "per-tensor") || g->n < 1)
		return 0;
	for (int i = g->first; i < g->first + g->n; i++) {
		clg_tensor *p = o->params[i];
		if (p->v.buf->backend != p0->v.buf->backend || p->v.dtype != p0->v.dtype || p->st->refs != 1 ||
		    p->v.offset != 0 || p->st->buf->size != (size_t)clg_view_numel(&p->v) * clg_dtype_size(p->v.dtype))
			return 0;
	}
	return 1;
}

/* Group g's parameters moved into one arena and its gradients' arena made, each parameter's
 * gradient slot a view into it; nothing done (per-parameter launches) where arena_fits says no. */
static clg_status make_arenas(clg_optimizer *o, opt_group *g)
{
	clg_tensor *p0 = o->params[g->first];
	clg_backend *be;
	clg_status st = CLG_OK;

	if (!arena_fits(o, g))
		return CLG_OK;
	be = p0->v.buf->backend;
	for (int j = 0; j < g->n; j++) {
		g->off[j] = g->total;
		g->total += clg_view_numel(&o->params[g->first + j]->v);
	}
	g->flat[0] = fe_own(fe_new(be, p0->v.dtype, 1, &g->total));
	g->flat[1] = fe_own(fe_new(be, p0->v.dtype, 1, &g->total));
	if (!g->flat[0] || !g->flat[1])
		return clg_last_status();
	for (int j = 0; j < g->n && !st; j++) {
		clg_tensor *p = o->params[g->first + j];
		clg_view v;
		if ((st = fe_rehome(p, g->flat[0], g->off[j])))
			break;
		clg_view_contiguous(&v, g->flat[1]->v.buf, p->v.dtype, p->v.ndim, p->v.shape);
		v.offset = g->off[j];
		if (!(p->grad_slot = fe_own(fe_view_of(g->flat[1], &v))))
			st = clg_last_status();
	}
	return st;
}

/* The checks of one parameter: a leaf that requires grad, contiguous, in no earlier place. */
static clg_status check_param(clg_optimizer *o, int i, clg_tensor *p)
{
	if (!p->requires_grad || p->grad_fn)
		return clg_fail(CLG_ERR_INVALID, "optimizer: parameter %d is not a leaf that requires grad", i);
	if (!clg_view_is_contiguous(&p->v))
		return clg_fail(CLG_ERR_INVALID, "optimizer: parameter %d is not contiguous", i);
	for (int j = 0; j < i; j++)
		if (o->params[j] == p)
			return clg_fail(CLG_ERR_INVALID, "optimizer: parameter %d is parameter %d again (a parameter "
					"belongs to one group, once)", i, j);
	return CLG_OK;
}

clg_optimizer *clg_optimizer_new_groups(const clg_opt_config *cfg, const clg_opt_group *groups, int ngroups)
{
	clg_optimizer *o;
	int n = 0;

	for (int k = 0; k < ngroups; k++) {
		for (int j = 0; j < groups[k].n; j++)
			if (!groups[k].params[j])
				return NULL; /* a failed op made it: its error stands */
		n += groups[k].n;
	}
	if (ngroups < 1)
		return opt_fail(clg_fail(CLG_ERR_INVALID, "optimizer: no parameter group"));
	o = calloc(1, sizeof(*o));
	if (!o || !(o->params = calloc((size_t)n + 1, sizeof(*o->params))) ||
	    !(o->state = calloc(CLG_OPT_STATE_SLOTS * (size_t)n + 1, sizeof(*o->state))) ||
	    !(o->have = calloc((size_t)n + 1, 1)) || !(o->groups = calloc((size_t)ngroups, sizeof(*o->groups)))) {
		clg_optimizer_free(o);
		return opt_fail(clg_fail(CLG_ERR_OOM, "optimizer: out of host memory"));
	}
	o->cfg = *cfg;
	if (o->cfg.beta1 == 0)
		o->cfg.beta1 = 0.9;
	if (o->cfg.beta2 == 0)
		o->cfg.beta2 = 0.999;
	if (o->cfg.eps == 0)
		o->cfg.eps = 1e-8;
	for (int k = 0; k < ngroups; k++) {
		opt_group *g = &o->groups[k];
		g->first = o->n;
		g->n = groups[k].n;
		g->lr = groups[k].lr;
		g->lr_scale = cfg->lr != 0 ? groups[k].lr / cfg->lr : 1.0;
		g->weight_decay = groups[k].weight_decay;
		o->ngroups++;
		if (!(g->off = calloc((size_t)g->n + 1, sizeof(*g->off)))) {
			clg_optimizer_free(o);
			return opt_fail(clg_fail(CLG_ERR_OOM, "optimizer: out of host memory"));
		}
		for (int j = 0; j < g->n; j++) {
			clg_tensor *p = groups[k].params[j];
			clg_status st = check_param(o, o->n, p);
			if (st) {
				clg_optimizer_free(o);
				return opt_fail(st);
			}
			o->params[o->n++] = p;
			p->refs++;
		}
	}
	for (int k = 0; k < o->ngroups; k++) {
		if (make_arenas(o, &o->groups[k])) {
			clg_optimizer_free(o);
			return NULL;
		}
	}
	return o;
}

clg_optimizer *clg_optimizer_new(const clg_opt_config *cfg, clg_tensor *const *params, int n)
{
	clg_opt_group g = {.params = params, .n = n, .lr = cfg->lr, .weight_decay = cfg->weight_decay};
	return clg_optimizer_new_groups(cfg, &g, 1);
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
		for (int s = 0; s < CLG_OPT_STATE_SLOTS; s++)
			if (SLOT(o, i, s))
				fe_release(SLOT(o, i, s));
	}
	for (int k = 0; o->groups && k < o->ngroups; k++) {
		for (int f = 0; f < 2 + CLG_OPT_STATE_SLOTS; f++)
			if (o->groups[k].flat[f])
				fe_release(o->groups[k].flat[f]);
		free(o->groups[k].off);
	}
	free(o->params);
	free(o->state);
	free(o->have);
	free(o->groups);
	free(o);
}

/* The group parameter i belongs to. */
static opt_group *group_of(clg_optimizer *o, int i)
{
	int k = 0;
	while (k + 1 < o->ngroups && i >= o->groups[k + 1].first)
		k++;
	return &o->groups[k];
}

/* The state slot of parameter i, made (zeros) on first use: its own tensor, or with arenas the
 * slot's arena of its group (made whole) and every parameter's view into it. */
static clg_tensor *state_slot(clg_optimizer *o, int i, int slot)
{
	clg_tensor *p = o->params[i], **s = &SLOT(o, i, slot), *a;
	opt_group *g = group_of(o, i);

	o->have[i] = 1;
	if (*s || !g->flat[0]) {
		if (!*s)
			*s = fe_own(clg_zeros(p->v.buf->backend, p->v.dtype, p->v.ndim, p->v.shape));
		return *s;
	}
	a = g->flat[2 + slot] = fe_own(clg_zeros(p->v.buf->backend, p->v.dtype, 1, &g->total));
	for (int j = 0; a && j < g->n; j++) {
		clg_tensor *q = o->params[g->first + j];
		clg_view v;
		clg_view_contiguous(&v, a->v.buf, q->v.dtype, q->v.ndim, q->v.shape);
		v.offset = g->off[j];
		if (!(SLOT(o, g->first + j, slot) = fe_own(fe_view_of(a, &v))))
			return NULL;
	}
	return *s;
}

/* Whether group g's step can be one launch over its arenas: every parameter still in its place
 * with a gradient, and all with state or none. A gradient outside its slot (made before the
 * optimizer, or replaced) is copied there first. */
static int flat_step_ready(clg_optimizer *o, const opt_group *g, clg_status *st)
{
	*st = CLG_OK;
	if (!g->flat[0])
		return 0;
	for (int j = 0; j < g->n; j++) {
		clg_tensor *p = o->params[g->first + j];
		if (!p->grad || p->v.buf != g->flat[0]->v.buf || p->v.offset != g->off[j] ||
		    o->have[g->first + j] != o->have[g->first])
			return 0;
	}
	for (int j = 0; j < g->n && !*st; j++) {
		clg_tensor *p = o->params[g->first + j], *gr = p->grad;
		clg_op_call c = {.op = CLG_OP_COPY};
		if (gr == p->grad_slot)
			continue;
		c.dst = p->grad_slot->v;
		c.src[0] = gr->v;
		*st = fe_run(gr->v.buf->backend, &c);
	}
	return !*st;
}

/* One group's update: one launch over its arenas (flat) or one per parameter. */
static clg_status group_step(clg_optimizer *o, opt_group *g, double t)
{
	const clg_opt_config *c = &o->cfg;
	int adam = c->kind != CLG_OPT_SGD;
	clg_status st;
	int flat = flat_step_ready(o, g, &st);

	if (st)
		return clg_fail_prefix(st, "optimizer step: ");
	for (int i = g->first; i < g->first + (flat ? 1 : g->n); i++) {
		clg_tensor *p = o->params[i], *gr = p->grad;
		clg_op_call call = {.op = adam ? CLG_OP_ADAM_STEP : CLG_OP_SGD_STEP};
		if (!gr)
			continue;
		call.dst = flat ? g->flat[0]->v : p->v;
		call.src[0] = flat ? g->flat[1]->v : gr->v;
		if (adam) {
			clg_tensor *m = state_slot(o, i, 0), *v = state_slot(o, i, 1);
			clg_tensor *vmax = c->amsgrad ? state_slot(o, i, 2) : v;
			if (!m || !v || !vmax)
				return clg_last_status();
			call.src[1] = flat ? g->flat[2]->v : m->v;
			call.src[2] = flat ? g->flat[3]->v : v->v;
			call.src[3] = flat ? g->flat[c->amsgrad ? 4 : 3]->v : vmax->v;
			call.f[0] = g->lr, call.f[1] = c->beta1, call.f[2] = c->beta2, call.f[3] = c->eps;
			call.f[4] = g->weight_decay;
			call.f[5] = 1 - pow(c->beta1, t);
			call.f[6] = 1 - pow(c->beta2, t);
			call.i[0] = c->kind == CLG_OPT_ADAMW;
			call.i[1] = c->amsgrad != 0;
		} else {
			int first = c->momentum != 0 && !o->have[i];
			clg_tensor *b = c->momentum != 0 ? state_slot(o, i, 0) : gr;
			if (!b)
				return clg_last_status();
			call.src[1] = flat ? (c->momentum != 0 ? g->flat[2]->v : g->flat[1]->v) : b->v;
			call.f[0] = g->lr, call.f[1] = c->momentum, call.f[2] = g->weight_decay, call.f[3] = c->dampening;
			call.i[0] = c->nesterov;
			call.i[1] = first;
		}
		if (fe_run(p->v.buf->backend, &call))
			return flat ? clg_fail_prefix(clg_last_status(), "optimizer step, all %d parameters of group %d in one "
						      "launch: ", g->n, (int)(g - o->groups))
				    : clg_fail_prefix(clg_last_status(), "optimizer step, parameter %d: ", i);
	}
	for (int i = g->first + 1; flat && i < g->first + g->n; i++) /* the step made (or used) every state */
		o->have[i] = o->have[g->first];
	return CLG_OK;
}

clg_status clg_optimizer_step(clg_optimizer *o)
{
	double t = (double)(o->steps + 1);

	for (int k = 0; k < o->ngroups; k++) {
		clg_status st = group_step(o, &o->groups[k], t);
		if (st)
			return st;
	}
	o->steps++;
	return CLG_OK;
}

void clg_optimizer_zero_grad(clg_optimizer *o)
{
	for (int i = 0; i < o->n; i++)
		clg_zero_grad(o->params[i]);
}

int clg_optimizer_count(const clg_optimizer *o) { return o->n; }

int clg_optimizer_index_of(const clg_optimizer *o, const clg_tensor *p)
{
	for (int i = 0; i < o->n; i++)
		if (o->params[i] == p)
			return i;
	return -1;
}
int clg_optimizer_group_count(const clg_optimizer *o) { return o->ngroups; }

void clg_optimizer_set_lr(clg_optimizer *o, double lr)
{
	o->cfg.lr = lr;
	for (int k = 0; k < o->ngroups; k++)
		o->groups[k].lr = lr * o->groups[k].lr_scale;
}

double clg_optimizer_lr(const clg_optimizer *o) { return o->cfg.lr; }

double clg_optimizer_group_lr(const clg_optimizer *o, int group)
{
	return group >= 0 && group < o->ngroups ? o->groups[group].lr : 0.0;
}

void clg_optimizer_set_group_lr(clg_optimizer *o, int group, double lr)
{
	if (group >= 0 && group < o->ngroups)
		o->groups[group].lr = lr;
}

int64_t clg_optimizer_steps(const clg_optimizer *o) { return o->steps; }
void clg_optimizer_set_steps(clg_optimizer *o, int64_t steps) { o->steps = steps; }

clg_tensor *clg_optimizer_state(clg_optimizer *o, int i, int slot)
{
	return i >= 0 && i < o->n && slot >= 0 && slot < CLG_OPT_STATE_SLOTS && o->have[i] ? SLOT(o, i, slot) : NULL;
}

clg_status clg_optimizer_set_state(clg_optimizer *o, int i, int slot, clg_tensor *value)
{
	clg_tensor *s;
	clg_op_call c = {.op = CLG_OP_COPY};
	if (i < 0 || i >= o->n || slot < 0 || slot >= CLG_OPT_STATE_SLOTS || !value)
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
