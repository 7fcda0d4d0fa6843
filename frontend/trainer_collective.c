/* The exchanges across ranks without a root (clg_train_config.exchange ALLREDUCE, shard_optimizer).
 *
 * All-reduce: each bucket of the wire (the loss, then the float32 gradients, the last layers'
 * first) is summed by the comm's all-reduce as soon as its reads are done, and every rank steps its
 * own optimizer on the same sums, so that the replicas stay identical without a broadcast (the
 * per-epoch checksum checks it; ranks on different kinds of device may round an optimizer step
 * differently, which it would show). With int8 compression the quantized buckets are all-gathered
 * (sums of bytes are not what MPI's reductions do) and each rank sums every rank's dequantized
 * gradients on its device, in rank order.
 *
 * Sharded optimizer (ZeRO stage 1): the wire's floats are cut into one contiguous part per rank;
 * a reduce-scatter gives each rank the sums of its part, it steps the optimizer over its part only
 * (1-D "pieces", one per parameter the part touches, so that the optimizer state it keeps is about
 * 1/N of the whole), and an all-gather gives every rank every part's new parameters. Checkpoints
 * hold the whole state (gathered at the root), so a run resumes with any number of ranks. */
#include "exchange_internal.h"
#include "fe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

clg_tensor *clg_ex_wire_dequantize(clg_backend *be, const unsigned char *src, int64_t n)
{
	int64_t nb = (n + INT8_BLOCK - 1) / INT8_BLOCK;
	clg_tensor *scales = clg_from_host(be, CLG_F32, 1, (int64_t[]){nb}, src);
	clg_tensor *q = scales ? clg_from_host(be, CLG_I32, 1, (int64_t[]){(n + 3) / 4}, src + sizeof(float) * (size_t)nb)
			       : NULL;
	return q ? clg_int8_dequantize(q, scales, n, INT8_BLOCK) : NULL;
}

static int64_t param_first_float(const clg_exchange *e, int p) { return e->first[p]; }

/* The wire's 1 + total floats cut into size nearly equal parts, in rank order. */
static void cut_parts(int64_t floats, int size, int *counts)
{
	for (int r = 0; r < size; r++)
		counts[r] = (int)(floats / size + (r < floats % size));
}

/* This rank's part as pieces of parameters, each a 1-D leaf; the optimizer over them. */
static clg_status make_pieces(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	clg_replica *r0 = &t->rep[0];
	int64_t lo, hi;
	int *ndim;
	clg_status st = CLG_OK;

	e->lo = 0;
	for (int r = 0; r < c->rank; r++)
		e->lo += e->counts[r];
	lo = e->lo, hi = e->lo + e->counts[c->rank];
	e->pieces = calloc((size_t)e->nparam + 1, sizeof(*e->pieces));
	e->piece_param = calloc((size_t)e->nparam + 1, sizeof(int));
	e->piece_at = calloc((size_t)e->nparam + 1, sizeof(int64_t));
	ndim = calloc((size_t)e->nparam + 1, sizeof(int));
	if (!e->pieces || !e->piece_param || !e->piece_at || !ndim) {
		free(ndim);
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
	}
	for (int p = 0; !st && p < e->nparam; p++) {
		int64_t a = param_first_float(e, p), b = a + e->numel[p];
		int64_t from = a > lo ? a : lo, to = b < hi ? b : hi;
		clg_tensor *piece;
		if (from >= to)
			continue;
		piece = clg_zeros(r0->be, CLG_F32, 1, (int64_t[]){to - from});
		if (!piece) {
			st = clg_last_status();
			break;
		}
		clg_set_requires_grad(piece, 1);
		e->piece_param[e->npiece] = p;
		e->piece_at[e->npiece] = from - a;
		ndim[e->npiece] = clg_ndim(r0->params.tensors[p]); /* the parameter's weight decay group */
		e->pieces[e->npiece++] = piece;
	}
	if (!st && e->npiece > 0) {
		e->shard_opt = clg_trainer_make_optimizer(&t->cfg, e->pieces, ndim, e->npiece);
		if (!e->shard_opt)
			st = clg_last_status();
	}
	free(ndim);
	e->pieces_stale = 1;
	return st;
}

clg_status clg_ex_collective_new(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	int sharded = e->kind == CLG_EX_SHARDED;
	clg_status st;

	int have = sharded ? c->reduce_scatter_start && c->allgatherv_start
		   : t->cfg.compress == CLG_COMPRESS_INT8 ? c->allgather_start != NULL : c->allreduce_start != NULL;

	if (!c->wait || !have)
		return clg_fail(CLG_ERR_UNSUPPORTED, "trainer: the comm has no %s",
				sharded ? "reduce-scatter and all-gather (needed by the sharded optimizer)"
					: "all-reduce or all-gather (needed by the all-reduce exchange)");
	if (!sharded) /* a comm without buckets (CLGRAD_MPI_BUCKETS=0): one all-reduce a step */
		return e->nparam > 0 ? clg_ex_make_buckets(e, c->gather_start ? clg_ex_bucket_bytes() : SIZE_MAX) : CLG_OK;
	if (t->cfg.compress == CLG_COMPRESS_INT8 && (t->cfg.clip > 0 || !c->alltoallv_start || !c->allreduce_start))
		return clg_fail(CLG_ERR_UNSUPPORTED, t->cfg.clip > 0 ? "trainer: the sharded optimizer does not clip "
				"int8-compressed gradients yet (train without --clip, or in float32)"
				: "trainer: the comm has no all-to-all and all-reduce (needed by the sharded optimizer with int8)");
	if (t->cfg.loss_scale > 0)
		return clg_fail(CLG_ERR_UNSUPPORTED, "trainer: the sharded optimizer does not scale the loss yet (the "
				"overflow check needs every rank's part): train in fp32 without loss scaling");
	if (t->cfg.clip > 0 && !c->allreduce_start)
		return clg_fail(CLG_ERR_UNSUPPORTED, "trainer: the comm has no all-reduce (needed to clip sharded gradients)");
	if (1 + e->total < c->size)
		return clg_fail(CLG_ERR_INVALID, "trainer: %lld gradient values cannot be sharded over %d ranks",
				(long long)e->total, c->size);
	e->first = calloc((size_t)e->nparam + 1, sizeof(int64_t));
	for (int p = 0; e->first && p < e->nparam; p++) /* float32 places, also when the wire holds int8 */
		e->first[p] = p ? e->first[p - 1] + e->numel[p - 1] : 1;
	e->counts = calloc((size_t)c->size, sizeof(int));
	e->reqs = calloc(1, sizeof(void *)); /* one collective in flight at a time */
	if (!e->counts || !e->reqs || !e->first)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
	cut_parts(1 + e->total, c->size, e->counts);
	e->part = malloc(sizeof(float) * ((size_t)e->counts[c->rank] + 1));
	e->flat = malloc(sizeof(float) * ((size_t)e->total + 1));
	if (!e->part || !e->flat)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory for the sharded optimizer (%lld values)",
				(long long)e->total);
	st = make_pieces(t);
	if (!st && t->cfg.compress == CLG_COMPRESS_INT8)
		st = clg_ex_sharded_int8_new(t);
	return st;
}

void clg_ex_collective_free(clg_exchange *e)
{
	clg_ex_sharded_int8_free(e);
	clg_optimizer_free(e->shard_opt);
	for (int k = 0; e->pieces && k < e->npiece; k++)
		clg_free(e->pieces[k]);
	free(e->pieces);
	free(e->piece_param);
	free(e->piece_at);
	free(e->counts);
	free(e->first);
	free(e->part);
	free(e->flat);
}

/* Waits for every request (also after a failure: none is left in flight). */
static clg_status wait_all(clg_trainer *t, int nreq, clg_status st)
{
	const clg_train_comm *c = t->cfg.comm;
	for (int k = 0; k < nreq; k++) {
		clg_status w = c->wait(c->user, t->ex->reqs[k]);
		st = st ? st : w;
	}
	return st;
}

/* Bucket b's bytes of the wire: [lo, hi); the first holds the loss. */
static void bucket_span(const clg_exchange *e, int b, size_t *lo, size_t *hi)
{
	*lo = b ? e->offset[e->bucket_first[b]] : 0;
	*hi = b + 1 < e->nbucket ? e->offset[e->bucket_first[b + 1]] : e->wire;
}

/* Replica 0's gradients p0..p1-1 made on its device from every rank's int8 wire buffer in recv:
 * dequantized and summed in rank order (the same order, so the same sums, on every rank). */
static clg_status sum_int8(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	clg_replica *r0 = &t->rep[0];
	clg_status st = CLG_OK;

	for (int p = 0; !st && p < e->nparam; p++) {
		clg_tensor *w = r0->params.tensors[p], *g = clg_grad(w), *acc = NULL;
		int64_t n = e->numel[p];
		if (!g)
			return clg_fail(CLG_ERR_STATE, "trainer: parameter %d of replica 0 has no gradient", p);
		clg_scope_begin();
		for (int c = 0; !st && c < e->contributors; c++) {
			clg_tensor *deq = clg_ex_wire_dequantize(r0->be, e->recv + e->wire * (size_t)c + e->offset[p], n);
			acc = deq ? (acc ? clg_add(acc, deq) : deq) : NULL;
			if (!acc)
				st = clg_last_status();
		}
		if (!st)
			st = clg_assign(g, clg_reshape(acc, clg_ndim(w), clg_shape(w)));
		clg_scope_end();
	}
	return st;
}

/* All-reduce: bucket by bucket from the last, each summed as soon as it is packed. */
static clg_status allreduce_step(clg_trainer *t, clg_tensor *wloss, clg_status st, double *loss)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	int int8 = t->cfg.compress == CLG_COMPRESS_INT8, nreq = 0;

	for (int b = e->nbucket - 1; b >= 0; b--) {
		size_t lo, hi;
		void *req = NULL;
		bucket_span(e, b, &lo, &hi);
		st = clg_ex_pack_params(t, 0, e->bucket_first[b], e->bucket_first[b + 1], st);
		if (!st && b == 0)
			st = clg_ex_pack_loss(t, 0, wloss);
		if (!st)
			st = int8 ? c->allgather_start(c->user, e->send, e->recv, e->wire, lo, hi - lo, &req)
				  : c->allreduce_start(c->user, (float *)(void *)(e->send + lo), (hi - lo) / sizeof(float), &req);
		if (!st)
			e->reqs[nreq++] = req;
	}
	if (e->nbucket == 0 && !st) /* a model without trainable tensors: the loss alone */
		st = clg_ex_pack_loss(t, 0, wloss);
	st = wait_all(t, nreq, st);
	if (st)
		return st;
	if (int8) {
		*loss = 0;
		for (int k = 0; k < e->contributors; k++) {
			float lf;
			memcpy(&lf, e->recv + e->wire * (size_t)k, sizeof(lf));
			*loss += lf;
		}
		st = sum_int8(t);
		return st ? st : clg_ex_local_step(t);
	}
	*loss = clg_ex_accumulate(t, e->send, 1);
	return clg_ex_root_step(t);
}

/* The pieces hold the parameters' values of this rank's part (after the start or a load). */
static clg_status refresh_pieces(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	clg_status st = CLG_OK;

	for (int k = 0; !st && k < e->npiece; k++) {
		clg_tensor *w = t->rep[0].params.tensors[e->piece_param[k]];
		int64_t n = clg_numel(e->pieces[k]);
		clg_tensor *flat = clg_reshape(w, 1, (int64_t[]){clg_numel(w)});
		clg_tensor *part = flat ? clg_slice(flat, 0, e->piece_at[k], e->piece_at[k] + n, 1) : NULL;
		st = part ? clg_assign(e->pieces[k], part) : clg_last_status();
	}
	e->pieces_stale = st != CLG_OK;
	return st;
}

/* Sharded --clip: the global norm from every rank's sum of squares of its part (one all-reduce of
 * one float), and this rank's part scaled by min(1, clip / (norm + 1e-6)) as clg_clip_grad_norm. */
static clg_status clip_part(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	int64_t first = c->rank == 0; /* rank 0's part begins with the loss */
	double sq = 0;
	float total;
	void *req = NULL;
	clg_status st;

	for (int64_t i = first; i < e->counts[c->rank]; i++)
		sq += (double)e->part[i] * (double)e->part[i];
	total = (float)sq;
	st = c->allreduce_start(c->user, &total, 1, &req);
	if (!st) {
		e->reqs[0] = req;
		st = wait_all(t, 1, st);
	}
	if (!st) {
		double scale = t->cfg.clip / (sqrt((double)total) + 1e-6);
		for (int64_t i = first; scale < 1 && i < e->counts[c->rank]; i++)
			e->part[i] = (float)(e->part[i] * scale);
	}
	return st;
}

/* Sharded: reduce-scatter, this rank's optimizer step on its part, all-gather of the parameters. */
static clg_status sharded_step(clg_trainer *t, clg_tensor *wloss, clg_status st, double *loss)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	clg_replica *r0 = &t->rep[0];
	int nreq = 0;
	void *req = NULL;

	if (t->cfg.compress == CLG_COMPRESS_INT8)
		return clg_ex_sharded_int8_step(t, wloss, st, loss);
	st = clg_ex_pack_params(t, 0, 0, e->nparam, st);
	if (!st)
		st = clg_ex_pack_loss(t, 0, wloss);
	if (!st)
		st = c->reduce_scatter_start(c->user, (const float *)(const void *)e->send, e->part, e->counts, &req);
	if (!st)
		e->reqs[nreq++] = req;
	st = wait_all(t, nreq, st);
	if (!st && t->cfg.clip > 0)
		st = clip_part(t);
	/* this rank's summed gradients into its pieces, and its part of the step */
	if (e->shard_opt)
		clg_optimizer_zero_grad(e->shard_opt);
	for (int k = 0; !st && k < e->npiece; k++) {
		int64_t at = param_first_float(e, e->piece_param[k]) + e->piece_at[k] - e->lo;
		clg_tensor *g = clg_from_host(r0->be, CLG_F32, 1, clg_shape(e->pieces[k]), e->part + at);
		st = g ? fe_accumulate(e->pieces[k], g) : clg_last_status();
		clg_free(g);
	}
	return st ? st : clg_ex_shard_finish(t, c->rank == 0 ? e->part[0] : 0, loss);
}

clg_status clg_ex_shard_finish(clg_trainer *t, float loss0, double *loss)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	clg_replica *r0 = &t->rep[0];
	int64_t steps = clg_optimizer_steps(t->opt);
	int nreq = 0;
	void *req = NULL;
	clg_status st = e->pieces_stale ? refresh_pieces(t) : CLG_OK;

	if (!st && e->shard_opt) {
		clg_optimizer_set_lr(e->shard_opt, clg_lr_at(&t->sched, steps));
		clg_optimizer_set_steps(e->shard_opt, steps);
		st = clg_optimizer_step(e->shard_opt);
	}
	clg_optimizer_set_steps(t->opt, steps + 1); /* the schedule and the checkpoints count on it */
	clg_optimizer_set_lr(t->opt, clg_lr_at(&t->sched, steps));
	/* the new values of this rank's part to every rank */
	for (int k = 0; !st && k < e->npiece; k++) {
		int64_t at = param_first_float(e, e->piece_param[k]) + e->piece_at[k];
		st = clg_to_host(e->pieces[k], e->flat + at, sizeof(float) * (size_t)clg_numel(e->pieces[k]));
	}
	if (!st && c->rank == 0)
		e->flat[0] = loss0; /* the summed loss, in rank 0's part */
	if (!st)
		st = c->allgatherv_start(c->user, e->flat, e->counts, &req);
	if (!st)
		e->reqs[nreq++] = req;
	st = wait_all(t, nreq, st);
	for (int p = 0; !st && p < e->nparam; p++) {
		clg_tensor *w = r0->params.tensors[p];
		clg_tensor *v = clg_from_host(r0->be, CLG_F32, clg_ndim(w), clg_shape(w), e->flat + param_first_float(e, p));
		st = v ? clg_assign(w, v) : clg_last_status();
		clg_free(v);
	}
	*loss = e->flat[0];
	return st;
}

/* Whether a state tensor of replica 0 is a trainable parameter (else a buffer). */
static int is_param(const clg_replica *r, const clg_tensor *x)
{
	for (int p = 0; p < r->params.n; p++)
		if (r->params.tensors[p] == x)
			return 1;
	return 0;
}

clg_status clg_ex_sync_buffers(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	clg_replica *r0 = &t->rep[0];
	int64_t n = 0;
	float *at = e->state;
	clg_status st = CLG_OK;

	for (int k = 0; k < r0->state.n; k++)
		n += is_param(r0, r0->state.tensors[k]) ? 0 : clg_numel(r0->state.tensors[k]);
	if (n == 0)
		return CLG_OK;
	for (int k = 0; !st && k < r0->state.n; k++)
		if (!is_param(r0, r0->state.tensors[k])) {
			st = clg_to_host(r0->state.tensors[k], at, sizeof(float) * (size_t)clg_numel(r0->state.tensors[k]));
			at += clg_numel(r0->state.tensors[k]);
		}
	if (!st)
		st = t->cfg.comm->broadcast(t->cfg.comm->user, e->state, sizeof(float) * (size_t)n);
	at = e->state;
	for (int k = 0; !st && k < r0->state.n; k++)
		if (!is_param(r0, r0->state.tensors[k])) {
			clg_tensor *s = r0->state.tensors[k];
			clg_tensor *v = clg_from_host(r0->be, CLG_F32, clg_ndim(s), clg_shape(s), at);
			st = v ? clg_assign(s, v) : clg_last_status();
			clg_free(v);
			at += clg_numel(s);
		}
	return st;
}

clg_status clg_ex_collective_step(clg_trainer *t, clg_tensor *wloss, clg_status st, double *loss)
{
	*loss = 0;
	st = t->ex->kind == CLG_EX_SHARDED ? sharded_step(t, wloss, st, loss) : allreduce_step(t, wloss, st, loss);
	return st ? st : clg_ex_sync_buffers(t);
}

/* ---- the sharded optimizer's state in checkpoints --------------------------------------------- */

int clg_exchange_sharded(const clg_trainer *t) { return t->ex && t->ex->kind == CLG_EX_SHARDED; }

double clg_ex_optimizer_bytes(clg_trainer *t)
{
	return clg_optimizer_state_bytes(clg_exchange_sharded(t) ? t->ex->shard_opt : t->opt);
}

/* The optimizer's slots this run keeps (Adam: 2, or 3 with amsgrad; SGD: 1 with momentum). */
static int slots_kept(const clg_train_config *cfg)
{
	if (cfg->optim.kind == CLG_OPT_SGD)
		return cfg->optim.momentum > 0;
	return cfg->optim.amsgrad ? 3 : 2;
}

/* An optimizer over replica 0's parameters, as the trainer's own, to hold the whole state. */
static clg_status new_full(clg_trainer *t, clg_optimizer **full)
{
	clg_named_tensors *p = &t->rep[0].params;
	int *ndim = calloc((size_t)p->n + 1, sizeof(int));

	if (!ndim)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
	for (int i = 0; i < p->n; i++)
		ndim[i] = clg_ndim(p->tensors[i]);
	*full = clg_trainer_make_optimizer(&t->cfg, p->tensors, ndim, p->n);
	free(ndim);
	return *full ? CLG_OK : clg_last_status();
}

clg_status clg_ex_gather_optimizer(clg_trainer *t, clg_optimizer **full)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	clg_replica *r0 = &t->rep[0];
	int stepped = clg_optimizer_steps(t->opt) > 0;
	clg_status st = CLG_OK;

	*full = NULL;
	if (c->rank == 0)
		st = new_full(t, full);
	for (int slot = 0; !st && stepped && slot < slots_kept(&t->cfg); slot++) {
		void *req = NULL;
		memset(e->flat, 0, sizeof(float) * (size_t)(e->total + 1));
		for (int k = 0; !st && k < e->npiece; k++) {
			clg_tensor *s = clg_optimizer_state(e->shard_opt, clg_optimizer_index_of(e->shard_opt, e->pieces[k]), slot);
			int64_t at = param_first_float(e, e->piece_param[k]) + e->piece_at[k];
			if (s)
				st = clg_to_host(s, e->flat + at, sizeof(float) * (size_t)clg_numel(s));
		}
		if (!st)
			st = c->allgatherv_start(c->user, e->flat, e->counts, &req);
		if (!st) {
			e->reqs[0] = req;
			st = wait_all(t, 1, st);
		}
		for (int p = 0; !st && c->rank == 0 && p < e->nparam; p++) {
			clg_tensor *w = r0->params.tensors[p];
			clg_tensor *v = clg_from_host(r0->be, CLG_F32, clg_ndim(w), clg_shape(w), e->flat + param_first_float(e, p));
			st = v ? clg_optimizer_set_state(*full, clg_optimizer_index_of(*full, w), slot, v) : clg_last_status();
			clg_free(v);
		}
	}
	if (!st && *full)
		clg_optimizer_set_steps(*full, clg_optimizer_steps(t->opt));
	if (st && *full) {
		clg_optimizer_free(*full);
		*full = NULL;
	}
	return st;
}

clg_status clg_ex_scatter_optimizer(clg_trainer *t, clg_optimizer *full)
{
	clg_exchange *e = t->ex;
	clg_status st = CLG_OK;

	for (int k = 0; !st && k < e->npiece; k++) {
		clg_tensor *w = t->rep[0].params.tensors[e->piece_param[k]];
		int i = clg_optimizer_index_of(full, w);
		int64_t n = clg_numel(e->pieces[k]);
		for (int slot = 0; !st && slot < CLG_OPT_STATE_SLOTS; slot++) {
			clg_tensor *s = clg_optimizer_state(full, i, slot);
			if (!s)
				continue;
			clg_scope_begin();
			clg_tensor *flat = clg_reshape(s, 1, (int64_t[]){clg_numel(s)});
			clg_tensor *part = flat ? clg_slice(flat, 0, e->piece_at[k], e->piece_at[k] + n, 1) : NULL;
			st = part ? clg_optimizer_set_state(e->shard_opt, clg_optimizer_index_of(e->shard_opt, e->pieces[k]), slot, part)
				  : clg_last_status();
			clg_scope_end();
		}
	}
	if (e->shard_opt)
		clg_optimizer_set_steps(e->shard_opt, clg_optimizer_steps(full));
	e->pieces_stale = 1;
	return st;
}
