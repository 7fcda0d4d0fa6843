/* Activation checkpointing (clg_checkpoint, as torch.utils.checkpoint): a function run without
 * recording, one node standing for it, and a backward that runs it again with recording on and
 * backpropagates through that run.
 *
 * The graph of one call: a core node C whose inputs are the call's (non-NULL) inputs, made the
 * grad_fn of a hidden tensor tc (a view, no memory of its own); each output i has a node O_i whose
 * one input is tc. O_i's backward only stashes output i's gradient in C's state and marks C as
 * reached; the backward order runs C after every O_i (they all consume tc), so C re-runs the
 * function once, with every output's gradient at hand (NULL: none reached that output). */
#include "fe_internal.h"

#include <stdlib.h>

#define CKPT_MAX 8

typedef struct {
	clg_checkpoint_fn fn;
	void *user;
	void (*user_free)(void *); /* called with user as the state goes (clg_checkpoint_ex) */
	int nin, nout;
	int slot[CKPT_MAX];         /* input k is the node's input slot[k], or -1 for a NULL input */
	clg_tensor *g[CKPT_MAX];    /* the outputs' gradients, stashed by the O_i (owned) */
	clg_dtype autocast;         /* the first run's autocast dtype (CLG_F32: off) */
	fe_rand_log log;            /* the first run's random draws */
} ckpt_state;

static void ckpt_free(void *p)
{
	ckpt_state *s = p;
	if (!s)
		return;
	for (int i = 0; i < s->nout; i++)
		fe_release(s->g[i]);
	fe_rand_log_free(&s->log);
	if (s->user_free)
		s->user_free(s->user);
	free(s);
}

/* fn on in, in a scope of its own: *out the results with a reference of ours (fn's are its scope's,
 * or inputs passed through); intermediates not held by a graph are freed as the scope ends. */
static clg_status run_fn(ckpt_state *s, clg_tensor *const *in, clg_tensor **out)
{
	clg_status st;

	for (int i = 0; i < s->nout; i++)
		out[i] = NULL;
	clg_scope_begin();
	st = s->fn(s->user, in, out);
	for (int i = 0; i < s->nout; i++) {
		if (!st && !out[i])
			st = clg_last_status() ? clg_last_status()
					       : clg_fail(CLG_ERR_INVALID, "checkpoint: the function left output %d unset", i);
		if (out[i])
			out[i]->refs++;
	}
	clg_scope_end();
	if (st)
		for (int i = 0; i < s->nout; i++) {
			fe_release(out[i]);
			out[i] = NULL;
		}
	return st;
}

/* O_i: output i's gradient kept for C; C is reached (its gout set: C ignores the value). */
static clg_status output_backward(clg_node *n, clg_tensor *g)
{
	clg_node *core = n->in[0]->grad_fn;
	ckpt_state *s = core->ctx;
	int i = (int)n->i[0];

	if (s->g[i]) { /* reached twice (retain_graph): add */
		clg_tensor *sum = fe_own(fe_ew(CLG_OP_ADD, s->g[i], g, 0, 0));
		if (!sum)
			return clg_last_status();
		fe_release(s->g[i]);
		s->g[i] = sum;
	} else {
		g->refs++;
		s->g[i] = g;
	}
	if (!core->gout) {
		g->refs++;
		core->gout = g;
	}
	return CLG_OK;
}

/* C: the function again on detached copies of the inputs (leaves of a graph of its own), backward
 * through it from the outputs that got a gradient, the inputs' gradients passed on. */
static clg_status core_backward(clg_node *n, clg_tensor *unused)
{
	ckpt_state *s = n->ctx;
	clg_tensor *in[CKPT_MAX] = {0}, *out[CKPT_MAX] = {0}, *roots[CKPT_MAX], *grads[CKPT_MAX];
	fe_replay_saved saved;
	int nr = 0;
	clg_status st = CLG_OK;

	(void)unused;
	for (int k = 0; k < s->nin && !st; k++) {
		clg_tensor *x = s->slot[k] >= 0 ? n->in[s->slot[k]] : NULL;
		if (!x)
			continue;
		in[k] = fe_own(fe_view_of(x, &x->v));
		if (!in[k])
			st = clg_last_status();
		else
			in[k]->requires_grad = x->requires_grad;
	}
	if (!st) {
		fe_replay_begin(&saved, &s->log);
		clg_autocast_begin(s->autocast);
		st = run_fn(s, in, out);
		clg_autocast_end();
		if (!st && s->log.at != s->log.n)
			st = clg_fail(CLG_ERR_STATE, "checkpoint: the function drew random numbers %d time(s) on its re-run, "
				      "%d on its first run (it must make the same calls both times)", s->log.at, s->log.n);
		fe_replay_end(&saved);
	}
	for (int i = 0; i < s->nout && !st; i++)
		if (s->g[i] && out[i]->requires_grad) {
			roots[nr] = out[i];
			grads[nr++] = s->g[i];
		}
	if (!st && nr)
		st = fe_backward_roots(nr, roots, grads);
	for (int k = 0; k < s->nin && !st; k++)
		if (in[k] && in[k]->grad)
			st = fe_accumulate(n->in[s->slot[k]], in[k]->grad);
	for (int i = 0; i < s->nout; i++) {
		fe_release(out[i]);
		fe_release(s->g[i]);
		s->g[i] = NULL;
	}
	for (int k = 0; k < s->nin; k++)
		fe_release(in[k]);
	return st;
}

clg_status clg_checkpoint(clg_checkpoint_fn fn, void *user, int nin, clg_tensor *const *in, int nout, clg_tensor **out)
{
	return clg_checkpoint_ex(fn, user, NULL, nin, in, nout, out);
}

/* user_free(user) exactly once: here where nothing is recorded, else by ckpt_free with the node */
clg_status clg_checkpoint_ex(clg_checkpoint_fn fn, void *user, void (*user_free)(void *), int nin,
			     clg_tensor *const *in, int nout, clg_tensor **out)
{
	clg_tensor *real[CKPT_MAX], *res[CKPT_MAX] = {0}, *tc = NULL;
	fe_rand_log *prev;
	ckpt_state *s;
	clg_node *core;
	int nreal = 0;
	clg_status st;

	if (!fn || nin < 1 || nin > CKPT_MAX || nout < 1 || nout > CKPT_MAX || !in || !out) {
		st = clg_fail(CLG_ERR_INVALID, "checkpoint: %d inputs and %d outputs (1 to %d each, and a function)", nin,
			      nout, CKPT_MAX);
		goto out_user;
	}
	for (int i = 0; i < nout; i++)
		out[i] = NULL;
	for (int k = 0; k < nin; k++)
		if (in[k])
			real[nreal++] = in[k];
	if (!clg_grad_enabled()) { /* nothing to record: an ordinary call */
		st = fn(user, in, out);
		goto out_user;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		st = clg_fail(CLG_ERR_OOM, "checkpoint: out of host memory");
		goto out_user;
	}
	*s = (ckpt_state){.fn = fn, .user = user, .user_free = user_free, .nin = nin, .nout = nout,
			  .autocast = clg_autocast_dtype()};
	for (int k = 0, j = 0; k < nin; k++)
		s->slot[k] = in[k] ? j++ : -1;
	/* the first run: no graph, its draws logged */
	prev = fe_rand_record_swap(&s->log);
	clg_no_grad_begin();
	st = run_fn(s, in, res);
	clg_no_grad_end();
	fe_rand_record_swap(prev);
	if (st)
		goto fail;
	/* each output a new tensor of the current scope over the result's storage */
	for (int i = 0; i < nout && !st; i++)
		if (!(out[i] = fe_view_of(res[i], &res[i]->v)))
			st = clg_last_status();
	if (!st && !(tc = fe_own(fe_view_of(res[0], &res[0]->v))))
		st = clg_last_status();
	if (st)
		goto fail;
	core = fe_record(tc, "checkpoint", core_backward, nreal, real);
	if (!core) {
		st = clg_fail(CLG_ERR_OOM, "checkpoint: out of host memory");
		goto fail;
	}
	core->ctx = s;
	core->ctx_free = ckpt_free;
	s = NULL; /* the node owns it */
	for (int i = 0; i < nout; i++) {
		clg_node *o = fe_record(out[i], "checkpoint output", output_backward, 1, &tc);
		if (!o) {
			st = clg_fail(CLG_ERR_OOM, "checkpoint: out of host memory");
			goto fail;
		}
		o->i[0] = i;
	}
	fe_release(tc);
	for (int i = 0; i < nout; i++)
		fe_release(res[i]);
	return CLG_OK;
fail:
	fe_release(tc);
	for (int i = 0; i < nout; i++) {
		clg_free(out[i]);
		out[i] = NULL;
		fe_release(res[i]);
	}
	ckpt_free(s); /* user_free with it */
	return st;
out_user:
	if (user_free)
		user_free(user);
	return st;
}
