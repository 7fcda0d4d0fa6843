/* Data parallel training: a replica of the model per device (and per process, with a comm). Each
 * replica runs forward and backward on its rows of the global batch with its loss weighted by its
 * share of the rows, so that the summed gradients are those of the whole batch. Every contributor
 * (a replica, or a rank) packs its gradients into one wire buffer (float32, or int8 blocks with
 * error feedback); the root (replica 0 of rank 0) sums the buffers in contributor order, so a run
 * is reproducible, steps its optimizer and sends the parameters back to every replica: replicas
 * are identical by construction, and a checksum per epoch checks it (trainer_exchange_epoch.c).
 * Across ranks, trainer_collective.c holds the exchanges without a root (all-reduce, sharded). */
#include "exchange_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes per bucket of the gradient gather between ranks (CLGRAD_DP_BUCKET_KB, default 1024). */
size_t clg_ex_bucket_bytes(void)
{
	return (size_t)clg_cfg_int(CLG_CFG_DP_BUCKET_KB) * 1024;
}

/* Consecutive parameters grouped into buckets of about want bytes each. */
clg_status clg_ex_make_buckets(clg_exchange *e, size_t want)
{
	size_t acc = 0;

	e->bucket_first = calloc((size_t)e->nparam + 2, sizeof(int));
	e->reqs = calloc((size_t)e->nparam + 1, sizeof(void *));
	if (!e->bucket_first || !e->reqs)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
	e->nbucket = 0;
	for (int p = 0; p < e->nparam; p++) {
		if (p == 0 || acc >= want) {
			e->bucket_first[e->nbucket++] = p;
			acc = 0;
		}
		acc += (p + 1 < e->nparam ? e->offset[p + 1] : e->wire) - e->offset[p];
	}
	e->bucket_first[e->nbucket] = e->nparam;
	return CLG_OK;
}


static size_t tensor_wire(const clg_trainer *t, int64_t n)
{
	if (t->cfg.compress == CLG_COMPRESS_INT8) /* scales, then the bytes padded to 4 */
		return sizeof(float) * (size_t)((n + INT8_BLOCK - 1) / INT8_BLOCK) + (((size_t)n + 3) & ~(size_t)3);
	return sizeof(float) * (size_t)n;
}

clg_status clg_exchange_new(clg_trainer *t)
{
	clg_replica *r0 = &t->rep[0];
	clg_exchange *e = calloc(1, sizeof(*e));
	clg_status st = CLG_OK;

	if (!e)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
	t->ex = e;
	e->nparam = r0->params.n;
	e->contributors = t->cfg.comm ? t->cfg.comm->size : t->nrep;
	e->kind = !t->cfg.comm ? CLG_EX_DEVICES
		: t->cfg.shard_optimizer ? CLG_EX_SHARDED
		: t->cfg.exchange == CLG_EXCHANGE_ALLREDUCE || (t->cfg.exchange == CLG_EXCHANGE_AUTO && e->contributors >= 3)
			? CLG_EX_ALLREDUCE : CLG_EX_ROOT;
	e->numel = calloc((size_t)e->nparam + 1, sizeof(*e->numel));
	e->offset = calloc((size_t)e->nparam + 1, sizeof(*e->offset));
	if (!e->numel || !e->offset)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
	e->wire = sizeof(float); /* the contributor's weighted loss */
	for (int p = 0; p < e->nparam; p++) {
		e->numel[p] = clg_numel(r0->params.tensors[p]);
		e->offset[p] = e->wire;
		e->wire += tensor_wire(t, e->numel[p]);
		e->total += e->numel[p];
	}
	for (int i = 0; i < r0->state.n; i++)
		e->state_total += clg_numel(r0->state.tensors[i]);
	e->send = malloc(e->wire * (size_t)t->nrep);
	/* the root of a gather; every rank of an int8 all-gather */
	int want_recv = (e->kind == CLG_EX_ROOT && clg_ex_is_root(t)) ||
			(e->kind == CLG_EX_ALLREDUCE && t->cfg.compress == CLG_COMPRESS_INT8);
	e->recv = want_recv ? malloc(e->wire * (size_t)e->contributors) : NULL;
	e->sum = malloc(sizeof(float) * (size_t)e->total);
	e->state = malloc(sizeof(float) * (size_t)(e->state_total + 2)); /* + the step's loss and loss scale */
	e->reads = calloc((size_t)t->nrep * (size_t)e->nparam * 2 + 1, sizeof(*e->reads));
	e->started = calloc((size_t)t->nrep * (size_t)e->nparam + 1, 1);
	/* CLGRAD_DP_OVERLAP=0 reads the gradients only after the whole backward pass (to compare) */
	e->overlap = clg_cfg_bool(CLG_CFG_DP_OVERLAP);
	if (!e->send || (want_recv && !e->recv) || !e->sum || !e->state || !e->reads || !e->started)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory for the gradient exchange (%lld values)",
				(long long)e->total);
	for (int i = 0; !st && i < t->nrep && t->cfg.compress == CLG_COMPRESS_INT8; i++) {
		clg_replica *r = &t->rep[i];
		r->residual = calloc((size_t)e->nparam + 1, sizeof(*r->residual));
		if (!r->residual)
			return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
		for (int p = 0; !st && p < e->nparam; p++) {
			r->residual[p] = clg_zeros(r->be, CLG_F32, clg_ndim(r->params.tensors[p]), clg_shape(r->params.tensors[p]));
			if (!r->residual[p])
				st = clg_last_status();
		}
	}
	if (!st && e->kind == CLG_EX_ROOT && t->cfg.comm->gather_start && t->cfg.comm->wait && e->nparam > 0)
		st = clg_ex_make_buckets(e, clg_ex_bucket_bytes());
	if (!st && (e->kind == CLG_EX_ALLREDUCE || e->kind == CLG_EX_SHARDED))
		st = clg_ex_collective_new(t);
	if (!st)
		st = clg_loader_new(t->train, t->cfg.batch, 0, t->task->one_hot ? CLG_LOADER_ONE_HOT : 0, &e->calib);
	for (int i = 0; i < t->nrep; i++) /* equal to start with; a rank's part of the batch with a comm */
		t->rep[i].share = t->cfg.comm ? t->cfg.batch / t->cfg.comm->size + (t->cfg.comm->rank < t->cfg.batch % t->cfg.comm->size)
					      : t->cfg.batch / t->nrep + (i < t->cfg.batch % t->nrep);
	return st;
}

void clg_exchange_free(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	if (!e)
		return;
	for (int i = 0; i < t->nrep; i++) {
		for (int p = 0; t->rep[i].residual && p < e->nparam; p++)
			clg_free(t->rep[i].residual[p]);
		free(t->rep[i].residual);
		t->rep[i].residual = NULL;
	}
	clg_loader_free(e->calib);
	free(e->numel);
	free(e->offset);
	free(e->send);
	free(e->recv);
	free(e->sum);
	free(e->state);
	free(e->reads);
	free(e->started);
	free(e->bucket_first);
	free(e->reqs);
	clg_ex_collective_free(e);
	free(e);
	t->ex = NULL;
}

/* Splits n rows in proportion to weights w (largest remainder; every part at least 1 when n allows). */
static void split_rows(int64_t n, const double *w, int parts, int64_t *out)
{
	double total = 0, rem[CLG_TRAIN_MAX_DEVICES];
	int64_t given = 0;

	for (int i = 0; i < parts; i++)
		total += w[i] > 0 ? w[i] : 0;
	for (int i = 0; i < parts; i++) {
		double exact = total > 0 ? (double)n * (w[i] > 0 ? w[i] : 0) / total : (double)n / parts;
		out[i] = (int64_t)floor(exact);
		if (out[i] < 1 && n >= parts)
			out[i] = 1;
		rem[i] = exact - (double)out[i];
		given += out[i];
	}
	while (given > n) { /* the minimum of 1 over-gave: take from the largest */
		int big = 0;
		for (int i = 1; i < parts; i++)
			big = out[i] > out[big] ? i : big;
		out[big]--, given--;
	}
	while (given < n) {
		int best = 0;
		for (int i = 1; i < parts; i++)
			best = rem[i] > rem[best] ? i : best;
		out[best]++, given++;
		rem[best] -= 1;
	}
}

static clg_status start_reads(clg_trainer *t, int i, int p);

typedef struct {
	clg_trainer *t;
	int i;
	clg_status st;
} ready_ctx;

/* Backward has finished a gradient: replica i's parameter's reads start now, behind the ops that
 * made it, while the rest of the backward pass is queued and runs (DDP's overlap, per tensor). */
static void on_grad_ready(void *user, clg_tensor *leaf)
{
	ready_ctx *c = user;
	clg_replica *r = &c->t->rep[c->i];
	for (int p = 0; !c->st && p < r->params.n; p++)
		if (r->params.tensors[p] == leaf) {
			c->st = start_reads(c->t, c->i, p);
			return;
		}
}

/* Replica i's forward and backward on x, y with its loss weighted by w; *wloss the weighted loss.
 * With overlap, each gradient's reads start as soon as it is final (a step's pack waits for them);
 * without (speed calibration), nothing is read. */
static clg_status replica_backward(clg_trainer *t, int i, clg_tensor *x, clg_tensor *y, double w, int overlap,
				   clg_tensor **wloss)
{
	clg_replica *r = &t->rep[i];
	clg_tensor *out, *target, *loss;
	ready_ctx ctx = {.t = t, .i = i};
	clg_status st = clg_task_forward(t->task, t->cfg.task_user, r->model, x, y, 1, &out, &target, &loss);

	*wloss = st ? NULL : clg_affine(loss, w, 0.0);
	if (i == 0)
		clg_optimizer_zero_grad(t->opt);
	else
		for (int p = 0; p < r->params.n; p++)
			clg_zero_grad(r->params.tensors[p]);
	if (!*wloss)
		return clg_last_status();
	st = overlap ? clg_backward_overlap(*wloss, on_grad_ready, &ctx) : clg_backward(*wloss);
	return st ? st : ctx.st;
}

clg_status clg_exchange_balance(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	double w[CLG_TRAIN_MAX_DEVICES];
	int64_t shares[CLG_TRAIN_MAX_DEVICES];
	clg_loader_state first = {0};
	clg_tensor *x, *y;
	clg_status st = CLG_OK;

	e->bytes = e->seconds = 0;
	e->steps = 0;
	if (t->cfg.fixed_shares || t->nrep == 1)
		return CLG_OK; /* set once, equal (clg_exchange_new) */
	clg_scope_begin();
	st = clg_loader_set_state(e->calib, &first);
	if (!st)
		st = clg_loader_next(e->calib, t->rep[0].be, &x, &y);
	for (int i = 0; !st && x && i < t->nrep; i++) {
		clg_replica *r = &t->rep[i];
		int64_t rows = clg_shape(x)[0] / t->nrep;
		clg_tensor *xi = clg_slice(x, 0, 0, rows, 1), *yi = clg_slice(y, 0, 0, rows, 1), *wl;
		double best = INFINITY;
		if (i > 0) {
			xi = clg_to_device(xi, r->be);
			yi = clg_to_device(yi, r->be);
		}
		for (int rep = 0; !st && rep < 3; rep++) { /* the first also builds kernels: not counted */
			double t0 = clg_now();
			st = replica_backward(t, i, xi, yi, 1.0, 0, &wl);
			if (!st)
				st = clg_synchronize(r->be);
			if (!st && rep > 0)
				best = fmin(best, clg_now() - t0);
		}
		r->rate = (double)rows / best;
		w[i] = r->rate;
	}
	clg_scope_end();
	if (st)
		return st;
	split_rows(t->cfg.batch, w, t->nrep, shares);
	for (int i = 0; i < t->nrep; i++)
		t->rep[i].share = shares[i];
	return CLG_OK;
}

/* ---- int8 blocks ---------------------------------------------------------------------------- */

static float int8_value(const float *scales, const signed char *q, int64_t k) { return scales[k / INT8_BLOCK] * (float)q[k]; }

/* ---- one step --------------------------------------------------------------------------------- */

/* Starts the reads of replica i's gradient p into its wire buffer (once per step); with int8, the
 * residual of error feedback is added first, on the device, and then keeps what the quantization
 * lost. */
static clg_status start_reads(clg_trainer *t, int i, int p)
{
	clg_exchange *e = t->ex;
	clg_replica *r = &t->rep[i];
	clg_tensor *g = clg_grad(r->params.tensors[p]);
	unsigned char *dst = e->send + e->wire * (size_t)i + e->offset[p];
	clg_read *rd = &e->reads[((size_t)i * (size_t)e->nparam + (size_t)p) * 2];
	size_t bytes = sizeof(float) * (size_t)e->numel[p];

	if (e->started[(size_t)i * (size_t)e->nparam + (size_t)p]++)
		return CLG_OK;
	if (t->cfg.compress != CLG_COMPRESS_INT8) {
		if (g)
			return clg_to_host_start(g, dst, bytes, &rd[0]);
		memset(dst, 0, bytes); /* a parameter this step did not reach */
		return CLG_OK;
	}
	int64_t n = e->numel[p], nb = (n + INT8_BLOCK - 1) / INT8_BLOCK;
	clg_tensor *acc = g ? clg_add(g, r->residual[p]) : r->residual[p];
	clg_tensor *scales = acc ? clg_int8_scales(acc, INT8_BLOCK) : NULL;
	clg_tensor *q = scales ? clg_int8_quantize(acc, scales, INT8_BLOCK) : NULL;
	clg_tensor *deq = q ? clg_int8_dequantize(q, scales, n, INT8_BLOCK) : NULL;
	clg_tensor *lost = deq ? clg_sub(acc, clg_reshape(deq, clg_ndim(acc), clg_shape(acc))) : NULL;
	clg_status st = lost ? clg_assign(r->residual[p], lost) : clg_last_status();
	if (!st)
		st = clg_to_host_start(scales, dst, sizeof(float) * (size_t)nb, &rd[0]);
	if (!st)
		st = clg_to_host_start(q, dst + sizeof(float) * (size_t)nb, sizeof(int32_t) * (size_t)((n + 3) / 4), &rd[1]);
	return st;
}

/* Replica i's gradients p0..p1-1 into its wire buffer: the reads not started during backward
 * start now, then every read is waited for (also after a failure: none is left running). */
clg_status clg_ex_pack_params(clg_trainer *t, int i, int p0, int p1, clg_status st)
{
	clg_exchange *e = t->ex;

	for (int p = p0; !st && p < p1; p++)
		st = start_reads(t, i, p);
	for (size_t k = (size_t)p0 * 2; k < (size_t)p1 * 2; k++) {
		clg_status w = clg_read_wait(&e->reads[(size_t)i * (size_t)e->nparam * 2 + k]);
		st = st ? st : w;
	}
	memset(e->started + (size_t)i * (size_t)e->nparam + p0, 0, (size_t)(p1 - p0));
	return st;
}

/* Replica i's weighted loss (unscaled) at the head of its wire buffer. */
clg_status clg_ex_pack_loss(clg_trainer *t, int i, clg_tensor *wloss)
{
	double lv = 0;
	float lf;
	clg_status st = wloss ? clg_item(wloss, &lv) : CLG_OK;

	lf = (float)(t->cfg.loss_scale > 0 ? lv / t->scaler.scale : lv);
	memcpy(t->ex->send + t->ex->wire * (size_t)i, &lf, sizeof(lf));
	return st;
}

static clg_status pack(clg_trainer *t, int i, clg_tensor *wloss, clg_status st)
{
	st = clg_ex_pack_params(t, i, 0, t->ex->nparam, st);
	return st ? st : clg_ex_pack_loss(t, i, wloss);
}

/* This rank's gradients to the root in buckets: from the last (backward makes its gradients first)
 * to the first, each bucket's gather started as soon as its reads are done, so that the network
 * carries one bucket while the device still computes the next; the loss goes with the first. */
static clg_status pack_and_gather(clg_trainer *t, clg_tensor *wloss, clg_status st)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	int nreq = 0;

	for (int b = e->nbucket - 1; b >= 0; b--) {
		size_t lo = b ? e->offset[e->bucket_first[b]] : 0;
		size_t hi = b + 1 < e->nbucket ? e->offset[e->bucket_first[b + 1]] : e->wire;
		void *req = NULL;
		st = clg_ex_pack_params(t, 0, e->bucket_first[b], e->bucket_first[b + 1], st);
		if (!st && b == 0)
			st = clg_ex_pack_loss(t, 0, wloss);
		if (!st)
			st = c->gather_start(c->user, e->send, e->recv, e->wire, lo, hi - lo, &req);
		if (!st)
			e->reqs[nreq++] = req;
	}
	for (int k = 0; k < nreq; k++) { /* all of them, also after a failure */
		clg_status w = c->wait(c->user, e->reqs[k]);
		st = st ? st : w;
	}
	return st;
}

/* sum += contributor's gradients, decoded; returns its loss */
double clg_ex_accumulate(const clg_trainer *t, const unsigned char *buf, int first)
{
	const clg_exchange *e = t->ex;
	float lf, *sum = e->sum;

	memcpy(&lf, buf, sizeof(lf));
	for (int p = 0; p < e->nparam; p++) {
		const unsigned char *src = buf + e->offset[p];
		int64_t n = e->numel[p];
		if (t->cfg.compress == CLG_COMPRESS_INT8) {
			const float *scales = (const float *)(const void *)src;
			const signed char *q = (const signed char *)(src + sizeof(float) * (size_t)((n + INT8_BLOCK - 1) / INT8_BLOCK));
			for (int64_t k = 0; k < n; k++)
				sum[k] = (first ? 0.0f : sum[k]) + int8_value(scales, q, k);
		} else {
			const float *g = (const float *)(const void *)src;
			for (int64_t k = 0; k < n; k++)
				sum[k] = first ? g[k] : sum[k] + g[k];
		}
		sum += n;
	}
	return lf;
}

/* Root: the summed gradients into replica 0's, clipping, the scheduled optimizer step. */
clg_status clg_ex_root_step(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	clg_replica *r0 = &t->rep[0];
	const float *sum = e->sum;
	clg_status st = CLG_OK;

	for (int p = 0; !st && p < e->nparam; p++) {
		clg_tensor *w = r0->params.tensors[p], *g = clg_grad(w);
		clg_tensor *v = clg_from_host(r0->be, CLG_F32, clg_ndim(w), clg_shape(w), sum);
		sum += e->numel[p];
		if (!v)
			return clg_last_status();
		if (!g) { /* replica 0 had no rows reaching it: give it the gradient through a dummy use */
			clg_free(v);
			return clg_fail(CLG_ERR_STATE, "trainer: parameter %d of replica 0 has no gradient", p);
		}
		st = clg_assign(g, v);
		clg_free(v);
	}
	return st ? st : clg_ex_local_step(t);
}

clg_status clg_ex_local_step(clg_trainer *t)
{
	clg_replica *r0 = &t->rep[0];
	clg_status st = CLG_OK;
	int ok = 1;
	if (!st && t->cfg.loss_scale > 0) /* the summed gradients unscaled, or the step skipped */
		st = clg_grad_scaler_unscale(&t->scaler, r0->params.tensors, r0->params.n, &ok);
	if (!st && ok && t->cfg.clip > 0)
		st = clg_clip_grad_norm(r0->params.tensors, r0->params.n, t->cfg.clip, NULL);
	clg_optimizer_set_lr(t->opt, clg_lr_at(&t->sched, clg_optimizer_steps(t->opt)));
	if (!st && ok)
		st = clg_optimizer_step(t->opt);
	return st;
}

/* Replica 0's parameters and buffers, flat, into e->state (loss after them). */
clg_status clg_ex_read_state(clg_trainer *t, int i, float *out)
{
	clg_named_tensors *s = &t->rep[i].state;
	clg_status st = CLG_OK;
	for (int k = 0; !st && k < s->n; k++) {
		st = clg_to_host(s->tensors[k], out, sizeof(float) * (size_t)clg_numel(s->tensors[k]));
		out += clg_numel(s->tensors[k]);
	}
	return st;
}

static clg_status write_state(clg_trainer *t, int i, const float *in)
{
	clg_named_tensors *s = &t->rep[i].state;
	clg_status st = CLG_OK;
	for (int k = 0; !st && k < s->n; k++) {
		clg_tensor *v = clg_from_host(t->rep[i].be, CLG_F32, clg_ndim(s->tensors[k]), clg_shape(s->tensors[k]), in);
		st = v ? clg_assign(s->tensors[k], v) : clg_last_status();
		clg_free(v);
		in += clg_numel(s->tensors[k]);
	}
	return st;
}

/* The root's state to every replica of every rank; *loss travels with it. */
static clg_status broadcast_state(clg_trainer *t, double *loss)
{
	clg_exchange *e = t->ex;
	clg_status st = CLG_OK;

	if (clg_ex_is_root(t)) {
		st = clg_ex_read_state(t, 0, e->state);
		e->state[e->state_total] = (float)*loss;
		e->state[e->state_total + 1] = (float)t->scaler.scale; /* a power of two: exact in float */
	}
	if (!st && t->cfg.comm)
		st = t->cfg.comm->broadcast(t->cfg.comm->user, e->state, sizeof(float) * (size_t)(e->state_total + 2));
	t->scaler.scale = e->state[e->state_total + 1];
	if (!st && !clg_ex_is_root(t))
		st = write_state(t, 0, e->state);
	for (int i = 1; !st && i < t->nrep; i++)
		st = write_state(t, i, e->state);
	*loss = e->state[e->state_total];
	return st;
}

clg_status clg_exchange_broadcast_params(clg_trainer *t)
{
	double loss = 0;
	t->ex->pieces_stale = 1;
	return broadcast_state(t, &loss);
}

/* Rows [lo, hi) of the global batch for local replica i (ranks take equal parts, in rank order). */
static void rows_of(const clg_trainer *t, int i, int64_t batch, int64_t *lo, int64_t *hi)
{
	const clg_train_comm *c = t->cfg.comm;
	double w[CLG_TRAIN_MAX_DEVICES];
	int64_t parts[CLG_TRAIN_MAX_DEVICES];
	int n = c ? c->size : t->nrep, me = c ? c->rank : i;

	for (int k = 0; k < n; k++)
		w[k] = c ? 1.0 : (double)t->rep[k].share;
	split_rows(batch, w, n, parts); /* a short last batch keeps the proportions */
	*lo = 0;
	for (int k = 0; k < me; k++)
		*lo += parts[k];
	*hi = *lo + parts[me];
}

clg_status clg_exchange_step(clg_trainer *t, clg_tensor *x, clg_tensor *y, double *loss)
{
	clg_exchange *e = t->ex;
	int64_t batch = clg_shape(x)[0];
	double t0, total = 0;
	clg_tensor *wl[CLG_TRAIN_MAX_DEVICES] = {0}; /* each replica's weighted loss */
	clg_status st = CLG_OK;

	int nbegun = 0; /* replicas whose backward was queued (their reads may be running) */
	for (int i = 0; !st && i < t->nrep; i++, nbegun++) {
		clg_replica *r = &t->rep[i];
		int64_t lo, hi;
		clg_tensor *xi, *yi;
		rows_of(t, i, batch, &lo, &hi);
		xi = clg_slice(x, 0, lo, hi, 1);
		yi = clg_slice(y, 0, lo, hi, 1);
		if (i > 0) { /* the batch arrives on replica 0's device */
			xi = clg_to_device(xi, r->be);
			yi = clg_to_device(yi, r->be);
		}
		double w = (double)(hi - lo) / (double)batch * (t->cfg.loss_scale > 0 ? t->scaler.scale : 1.0);
		st = hi > lo ? replica_backward(t, i, xi, yi, w, e->overlap, &wl[i])
			     : clg_fail(CLG_ERR_INVALID, "trainer: batch of %lld rows leaves device '%s' none",
					(long long)batch, r->be->info.name);
		/* the devices work on their backward passes at once; packing waits for each in turn */
	}
	t0 = clg_now();
	if (e->kind == CLG_EX_ALLREDUCE || e->kind == CLG_EX_SHARDED) {
		st = clg_ex_collective_step(t, wl[0], st, &total);
		goto done;
	}
	if (e->nbucket > 0) { /* one replica in this process (a rank) */
		st = pack_and_gather(t, wl[0], st);
	} else {
		for (int i = 0; i < nbegun; i++)
			st = pack(t, i, wl[i], st);
		if (!st && t->cfg.comm)
			st = t->cfg.comm->gather(t->cfg.comm->user, e->send, e->recv, e->wire);
	}
	if (!st && clg_ex_is_root(t)) {
		const unsigned char *bufs = t->cfg.comm ? e->recv : e->send;
		for (int c = 0; c < e->contributors; c++)
			total += clg_ex_accumulate(t, bufs + e->wire * (size_t)c, c == 0);
		st = clg_ex_root_step(t);
	} else if (!st) {
		clg_optimizer_set_steps(t->opt, clg_optimizer_steps(t->opt) + 1); /* the schedule moves on */
		clg_optimizer_set_lr(t->opt, clg_lr_at(&t->sched, clg_optimizer_steps(t->opt) - 1));
	}
	if (!st)
		st = broadcast_state(t, &total);
done:
	*loss = total;
	e->seconds += clg_now() - t0;
	e->bytes += (double)e->wire;
	e->steps++;
	return st;
}
