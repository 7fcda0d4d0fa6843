/* Reverse-mode autograd: graph nodes recorded as ops run (define-by-run), gradient accumulation
 * (leaf .grad, optimizer arena slots, the dtype casts it needs) and backward. Layer 1 of the
 * frontend's core (fe_internal.h): it calls only tensor.c. */
#include "fe_internal.h"

#include <stdlib.h>
#include <string.h>

static _Thread_local int no_grad_depth;

void clg_no_grad_begin(void) { no_grad_depth++; }
void clg_no_grad_end(void)
{
	if (no_grad_depth > 0)
		no_grad_depth--;
}
int clg_grad_enabled(void) { return no_grad_depth == 0; }

/* > 0 while a backward runs: autocast reads it (clg_autocast_dtype) and stays off there */
static _Thread_local int backward_depth;

int fe_in_backward(void) { return backward_depth > 0; }

/* ---- recompute (ops_recompute.c): the state of a checkpointed function's runs ---- */

/* The log its first run appends each random draw's stream position to, and the log its re-run in
 * backward takes them from (NULL: none); replay_depth > 0 while a re-run is under way. */
static _Thread_local fe_rand_log *rand_record, *rand_replay;
static _Thread_local int replay_depth;

int clg_recomputing(void) { return replay_depth > 0; }

fe_rand_log *fe_rand_record_swap(fe_rand_log *log)
{
	fe_rand_log *old = rand_record;
	rand_record = log;
	return old;
}

void fe_rand_log_free(fe_rand_log *log)
{
	free(log->pos);
	*log = (fe_rand_log){0};
}

clg_status fe_rand_stream(const char *op, uint64_t *seed, uint64_t *offset)
{
	if (rand_replay) {
		fe_rand_log *l = rand_replay;
		if (l->at >= l->n)
			return clg_fail(CLG_ERR_STATE, "op '%s': a recomputed function drew more random numbers on its re-run "
					"than on its first run (it must make the same calls both times)", op);
		*seed = l->pos[2 * l->at];
		*offset = l->pos[2 * l->at + 1];
		l->at++;
	}
	if (rand_record) {
		fe_rand_log *l = rand_record;
		if (l->n == l->cap) {
			int cap = l->cap ? 2 * l->cap : 8;
			void *p = realloc(l->pos, (size_t)cap * 2 * sizeof(*l->pos));
			if (!p)
				return clg_fail(CLG_ERR_OOM, "op '%s': out of host memory (recompute's log)", op);
			l->pos = p;
			l->cap = cap;
		}
		l->pos[2 * l->n] = *seed;
		l->pos[2 * l->n + 1] = *offset;
		l->n++;
	}
	return CLG_OK;
}

void fe_replay_begin(fe_replay_saved *s, fe_rand_log *log)
{
	*s = (fe_replay_saved){no_grad_depth, backward_depth, rand_record, rand_replay};
	/* the forward's conditions: recording on, autocast as the caller sets it, the draws replayed */
	no_grad_depth = 0;
	backward_depth = 0;
	rand_record = NULL;
	rand_replay = log;
	if (log)
		log->at = 0;
	replay_depth++;
}

void fe_replay_end(const fe_replay_saved *s)
{
	no_grad_depth = s->no_grad_depth;
	backward_depth = s->backward_depth;
	rand_record = s->record;
	rand_replay = s->replay;
	replay_depth--;
}

void clg_set_requires_grad(clg_tensor *t, int on)
{
	if (t && !t->grad_fn)
		t->requires_grad = on != 0;
}

int clg_requires_grad(const clg_tensor *t) { return t && t->requires_grad; }
clg_tensor *clg_grad(clg_tensor *t) { return t ? t->grad : NULL; }

void clg_zero_grad(clg_tensor *t)
{
	if (t && t->grad) {
		fe_release(t->grad);
		t->grad = NULL;
	}
}

int fe_needs_grad(int n, clg_tensor *const *ins)
{
	if (no_grad_depth)
		return 0;
	for (int i = 0; i < n; i++)
		if (ins[i] && ins[i]->requires_grad)
			return 1;
	return 0;
}

clg_node *fe_record(clg_tensor *out, const char *op, clg_backward_fn fn, int n, clg_tensor *const *ins)
{
	clg_node *node = calloc(1, sizeof(*node));
	if (!node)
		return NULL;
	node->op = op;
	node->backward = fn;
	node->refs = 1;
	node->ninputs = n;
	for (int i = 0; i < n; i++) {
		node->in[i] = ins[i];
		ins[i]->refs++;
	}
	out->grad_fn = node;
	out->requires_grad = 1;
	return node;
}

void fe_save(clg_node *n, clg_tensor *t)
{
	clg_tensor *d;
	if (!n || !t || n->nsaved >= CLG_MAX_SAVED)
		return;
	/* a detached alias: saving the node's own output must not make a reference cycle */
	d = fe_own(fe_view_of(t, &t->v));
	if (!d)
		return;
	n->saved[n->nsaved++] = d;
}

clg_tensor *fe_record_op(clg_tensor *out, const char *op, clg_backward_fn fn, int n, clg_tensor *const *ins,
			  clg_node **node)
{
	if (node)
		*node = NULL;
	if (!out || !fe_needs_grad(n, ins))
		return out;
	clg_node *nd = fe_record(out, op, fn, n, ins);
	if (!nd) {
		clg_free(out);
		return fe_fail(clg_fail(CLG_ERR_OOM, "op '%s': out of host memory", op));
	}
	if (node)
		*node = nd;
	return out;
}

/* A new tensor object over the same view; differentiable as the identity. */
clg_status fe_identity_backward(clg_node *n, clg_tensor *g) { return fe_accumulate(n->in[0], g); }

clg_tensor *fe_alias(clg_tensor *t)
{
	return fe_record_op(fe_view_of(t, &t->v), "alias", fe_identity_backward, 1, &t, NULL);
}

clg_tensor *clg_detach(clg_tensor *t)
{
	if (!t)
		return NULL;
	return fe_view_of(t, &t->v);
}

clg_tensor *fe_cast_nograd(clg_tensor *t, clg_dtype dt)
{
	clg_op_call c = {.op = CLG_OP_CAST};
	clg_tensor *out = fe_new(t->v.buf->backend, dt, t->v.ndim, t->v.shape);

	if (!out)
		return NULL;
	c.dst = out->v;
	c.src[0] = t->v;
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	return out;
}

/* dst += g in place when dst is exclusively ours and contiguous, else dst = dst + g. */
static clg_status add_into(clg_tensor **dst, clg_tensor *g)
{
	clg_tensor *d = *dst, *sum;
	clg_op_call c = {.op = CLG_OP_ADD};
	clg_tensor *gx;

	gx = fe_expand_nograd(g, d->v.ndim, d->v.shape);
	if (!gx)
		return clg_last_status();
	if (d->refs == 1 && d->st->refs == 1 && clg_view_is_contiguous(&d->v)) {
		clg_status st;
		c.dst = d->v;
		c.src[0] = d->v;
		c.src[1] = gx->v;
		st = fe_run(d->v.buf->backend, &c);
		clg_free(gx);
		return st;
	}
	sum = fe_own(fe_ew(CLG_OP_ADD, d, gx, 0, 0));
	clg_free(gx);
	if (!sum)
		return clg_last_status();
	fe_release(d);
	*dst = sum;
	return CLG_OK;
}

/* A leaf whose optimizer keeps its gradients in one arena (frontend/optim.c): the first gradient
 * is copied into its slot there, later ones added in place, so one optimizer launch updates all. */
static clg_status into_slot(clg_tensor *x, clg_tensor *g)
{
	clg_tensor *s = x->grad_slot, *gx = NULL;
	clg_op_call c = {.op = x->grad ? CLG_OP_ADD : CLG_OP_COPY};
	clg_status st;

	c.dst = s->v;
	c.src[0] = g->v;
	if (x->grad) {
		if (!(gx = fe_expand_nograd(g, s->v.ndim, s->v.shape)))
			return clg_last_status();
		c.src[0] = s->v;
		c.src[1] = gx->v;
	}
	st = fe_run(s->v.buf->backend, &c);
	clg_free(gx);
	if (!st && !x->grad) {
		s->refs++;
		x->grad = s;
	}
	return st;
}

clg_status fe_accumulate(clg_tensor *x, clg_tensor *g)
{
	clg_tensor **target;
	char s0[96], s1[96];

	if (!x->requires_grad)
		return CLG_OK;
	if (g->v.dtype != x->v.dtype) { /* mixed precision: x's gradient is in x's dtype */
		clg_tensor *c = fe_cast_nograd(g, x->v.dtype);
		clg_status st;
		if (!c)
			return clg_last_status();
		st = fe_accumulate(x, c);
		clg_free(c);
		return st;
	}
	if (g->v.ndim != x->v.ndim || memcmp(g->v.shape, x->v.shape, sizeof(int64_t) * (size_t)x->v.ndim) != 0)
		return clg_fail(CLG_ERR_SHAPE, "backward: gradient of shape %s for a tensor of shape %s",
				clg_shape_str(&g->v, s0, sizeof(s0)), clg_shape_str(&x->v, s1, sizeof(s1)));
	target = x->grad_fn ? &x->grad_fn->gout : &x->grad;
	if (!x->grad_fn && x->grad_slot && (!*target || *target == x->grad_slot))
		return into_slot(x, g);
	if (*target)
		return add_into(target, g);
	/* the first gradient: leaves get a private contiguous copy; nodes may share one that covers its
	 * elements once (contiguous or permuted: the attention's head gradients, see fe_new_like) */
	if (!x->grad_fn || !fe_view_is_dense(&g->v)) {
		clg_op_call c = {.op = CLG_OP_COPY};
		clg_tensor *copy = fe_new(g->v.buf->backend, g->v.dtype, g->v.ndim, g->v.shape);
		if (!copy)
			return clg_last_status();
		fe_own(copy);
		c.dst = copy->v;
		c.src[0] = g->v;
		if (fe_run(copy->v.buf->backend, &c)) {
			fe_release(copy);
			return clg_last_status();
		}
		*target = copy;
		return CLG_OK;
	}
	g->refs++;
	*target = g;
	return CLG_OK;
}

/* Where a leaf parameter's gradient can be written directly, saving the copy (or the add) that
 * fe_accumulate would make: a new contiguous tensor (or t's slot in its optimizer's gradient
 * arena) made t's .grad (*beta 0: overwrite), or t's own exclusive contiguous .grad, or its slot
 * (*beta 1: accumulate), on the conditions fe_accumulate adds in
 * place. NULL otherwise (t not a leaf, its gradient shared; *made 0): then go through fe_give. */
clg_tensor *fe_leaf_grad(clg_tensor *t, double *beta, int *made)
{
	clg_tensor *g = t->grad;
	*made = 0;
	*beta = 0;
	if (t->grad_fn || !t->requires_grad)
		return NULL;
	if (t->grad_slot && (!g || g == t->grad_slot)) { /* its place in the optimizer's arena */
		*beta = g ? 1 : 0;
		*made = !g;
		if (!g) {
			t->grad = t->grad_slot;
			t->grad->refs++;
		}
		return t->grad;
	}
	if (g) {
		if (g->refs != 1 || g->st->refs != 1 || !clg_view_is_contiguous(&g->v))
			return NULL;
		*beta = 1;
		return g;
	}
	g = fe_new(t->v.buf->backend, t->v.dtype, t->v.ndim, t->v.shape);
	if (!g)
		return NULL;
	t->grad = fe_own(g);
	*beta = 0;
	*made = 1;
	return g;
}

/* Undoes leaf_grad's new .grad after a failure (it holds no gradient). */
void fe_leaf_grad_undo(clg_tensor *t, int made)
{
	if (made) {
		fe_release(t->grad);
		t->grad = NULL;
	}
}

/* Depth-first post-order of the nodes below root; fails on a node already freed by a backward. */
static clg_status topo(clg_node *root, clg_node ***order, int *n)
{
	int cap = 64, sp = 0, scap = 64;
	clg_node **out = malloc((size_t)cap * sizeof(*out));
	struct frame {
		clg_node *node;
		int next;
	} *stack = malloc((size_t)scap * sizeof(*stack));
	clg_status st = CLG_OK;

	*n = 0;
	if (!out || !stack) {
		st = clg_fail(CLG_ERR_OOM, "backward: out of host memory");
		goto fail;
	}
	root->mark = 1;
	stack[sp++] = (struct frame){root, 0};
	while (sp > 0) {
		struct frame *f = &stack[sp - 1];
		clg_node *node = f->node;
		if (node->freed) {
			st = clg_fail(CLG_ERR_STATE,
				      "backward through op '%s' whose saved tensors a previous backward already freed (use clg_backward_ex with retain_graph)",
				      node->op);
			goto fail;
		}
		if (f->next < node->ninputs) {
			clg_node *child = node->in[f->next++]->grad_fn;
			if (child && !child->mark && node->in[f->next - 1]->requires_grad) {
				if (sp == scap) {
					void *p = realloc(stack, (size_t)(scap *= 2) * sizeof(*stack));
					if (!p) {
						st = clg_fail(CLG_ERR_OOM, "backward: out of host memory");
						goto fail;
					}
					stack = p;
				}
				child->mark = 1;
				stack[sp++] = (struct frame){child, 0};
			}
			continue;
		}
		if (*n == cap) {
			void *p = realloc(out, (size_t)(cap *= 2) * sizeof(*out));
			if (!p) {
				st = clg_fail(CLG_ERR_OOM, "backward: out of host memory");
				goto fail;
			}
			out = p;
		}
		node->refs++; /* the order holds each node alive */
		out[(*n)++] = node;
		sp--;
	}
	free(stack);
	*order = out;
	return CLG_OK;
fail:
	for (int i = 0; i < *n; i++) {
		out[i]->mark = 0;
		fe_node_release(out[i]);
	}
	for (int i = 0; i < sp; i++)
		stack[i].node->mark = 0;
	free(out);
	free(stack);
	*n = 0;
	return st;
}

/* For each leaf that needs a gradient, the position in `order` of its last consumer to run
 * (backward runs order[n-1] first, order[0] last): its gradient is final once that node ran. */
typedef struct {
	clg_tensor *leaf;
	int last;
} leaf_use;

static leaf_use *last_uses(clg_node **order, int n, int *count)
{
	leaf_use *u = NULL;
	int cap = 0;

	*count = 0;
	for (int i = n - 1; i >= 0; i--)
		for (int k = 0; k < order[i]->ninputs; k++) {
			clg_tensor *in = order[i]->in[k];
			int j;
			if (in->grad_fn || !in->requires_grad)
				continue;
			for (j = 0; j < *count && u[j].leaf != in; j++)
				;
			if (j == *count) {
				if (*count == cap) {
					void *p = realloc(u, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(*u));
					if (!p) {
						free(u);
						*count = -1;
						return NULL;
					}
					u = p;
				}
				u[(*count)++].leaf = in;
			}
			u[j].last = i;
		}
	return u;
}

/* Backward from nr roots with their gradients (held by the caller): one root's own node, or for
 * several a node of the caller's stack whose inputs are the roots, first in the order and never
 * run (no tensor has it as grad_fn, so no gradient reaches it). */
static clg_status run_backward(int nr, clg_tensor *const *roots, clg_tensor *const *grads, int retain_graph,
			       clg_leaf_ready_fn ready, void *user)
{
	clg_node **order = NULL, top = {.op = "backward roots", .refs = 1};
	leaf_use *uses = NULL;
	int n = 0, nuses = 0;
	clg_status st = CLG_OK;

	clg_no_grad_begin();
	backward_depth++;
	if (nr == 1 && !roots[0]->grad_fn) { /* a leaf */
		st = fe_accumulate(roots[0], grads[0]);
		if (!st && ready)
			ready(user, roots[0]);
		goto out;
	}
	if (nr > 1) {
		top.ninputs = nr;
		for (int k = 0; k < nr; k++)
			top.in[k] = roots[k];
	}
	st = topo(nr == 1 ? roots[0]->grad_fn : &top, &order, &n);
	if (st)
		goto out;
	if (ready && !(uses = last_uses(order, n, &nuses)) && nuses < 0)
		st = clg_fail(CLG_ERR_OOM, "backward: out of host memory");
	for (int k = 0; k < nr && !st; k++)
		st = fe_accumulate(roots[k], grads[k]);
	/* reverse post-order: every node runs after all the nodes that use its output */
	for (int i = n - 1; i >= 0 && !st; i--) {
		clg_node *node = order[i];
		clg_tensor *gout = node->gout;
		for (int j = 0; j < nuses && i < n - 1; j++) /* leaves whose last consumer ran before */
			if (uses[j].last == i + 1)
				ready(user, uses[j].leaf);
		if (!gout)
			continue; /* no gradient reached it */
		node->gout = NULL;
		st = node->backward(node, gout);
		fe_release(gout);
		if (st)
			clg_fail_prefix(st, "backward of op '%s': ", node->op);
		if (!retain_graph) { /* free what backward no longer needs, as early as possible */
			fe_node_drop_saved(node);
			for (int k = 0; k < node->ninputs; k++)
				fe_release(node->in[k]);
			node->ninputs = 0;
			node->freed = 1;
		}
	}
	for (int j = 0; j < nuses && !st; j++) /* the last node's inputs */
		if (uses[j].last == 0)
			ready(user, uses[j].leaf);
	free(uses);
	for (int i = 0; i < n; i++) {
		order[i]->mark = 0;
		if (order[i]->gout) { /* left over after a failure */
			fe_release(order[i]->gout);
			order[i]->gout = NULL;
		}
		fe_node_release(order[i]); /* the stack's top node only drops to its own reference */
	}
	free(order);
out:
	backward_depth--;
	clg_no_grad_end();
	return st;
}

static clg_status backward(clg_tensor *root, clg_tensor *grad, int retain_graph, clg_leaf_ready_fn ready, void *user)
{
	clg_tensor *g = grad;
	clg_status st;

	if (!root)
		return clg_last_status() ? clg_last_status() : clg_fail(CLG_ERR_INVALID, "backward: NULL tensor");
	if (!root->requires_grad)
		return clg_fail(CLG_ERR_STATE, "backward: the tensor does not require grad (no input had requires_grad set)");
	if (!g) {
		if (clg_view_numel(&root->v) != 1)
			return clg_fail(CLG_ERR_SHAPE, "backward: without a gradient the tensor must have one element, not %lld",
					(long long)clg_view_numel(&root->v));
		g = clg_ones(root->v.buf->backend, root->v.dtype, root->v.ndim, root->v.shape);
		if (!g)
			return clg_last_status();
		fe_own(g);
	} else {
		if (!fe_check_inputs("backward", 2, (clg_tensor *[]){root, grad}))
			return clg_last_status();
		grad->refs++;
	}
	st = run_backward(1, &root, &g, retain_graph, ready, user);
	fe_release(g);
	return st;
}

clg_status fe_backward_roots(int nr, clg_tensor *const *roots, clg_tensor *const *grads)
{
	char s0[96], s1[96];

	if (nr < 1 || nr > CLG_MAX_SRC)
		return clg_fail(CLG_ERR_INVALID, "backward: %d roots (1 to %d)", nr, CLG_MAX_SRC);
	for (int k = 0; k < nr; k++) {
		if (!fe_check_inputs("backward", 2, (clg_tensor *[]){roots[k], grads[k]}))
			return clg_last_status();
		if (roots[k]->v.ndim != grads[k]->v.ndim ||
		    memcmp(roots[k]->v.shape, grads[k]->v.shape, sizeof(int64_t) * (size_t)roots[k]->v.ndim))
			return clg_fail(CLG_ERR_SHAPE, "backward: gradient of shape %s for root %d of shape %s",
					clg_shape_str(&grads[k]->v, s0, sizeof(s0)), k, clg_shape_str(&roots[k]->v, s1, sizeof(s1)));
	}
	return run_backward(nr, roots, grads, 0, NULL, NULL);
}

clg_status clg_backward_ex(clg_tensor *root, clg_tensor *grad, int retain_graph)
{
	return backward(root, grad, retain_graph, NULL, NULL);
}

clg_status clg_backward(clg_tensor *root) { return backward(root, NULL, 0, NULL, NULL); }

clg_status clg_backward_overlap(clg_tensor *root, clg_leaf_ready_fn ready, void *user)
{
	return backward(root, NULL, 0, ready, user);
}
