/* The data-parallel exchange per epoch: the checksum that proves the replicas identical (and
 * resynchronizes an all-reduce's that are not), and what the epoch's exchange cost. */
#include "exchange_internal.h"

#include <stdlib.h>

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t k = 0; k < n; k++)
		h = (h ^ p[k]) * 0x100000001b3ULL;
	return h;
}

clg_status clg_exchange_checksum(clg_trainer *t, uint64_t *sum, int *identical)
{
	clg_exchange *e = t->ex;
	uint64_t mine[CLG_TRAIN_MAX_DEVICES], *all = NULL;
	int same = 1;
	clg_status st = CLG_OK;

	for (int i = 0; !st && i < t->nrep; i++) {
		st = clg_ex_read_state(t, i, e->state);
		mine[i] = fnv1a(0xcbf29ce484222325ULL, e->state, sizeof(float) * (size_t)e->state_total);
		same &= mine[i] == mine[0];
	}
	if (!st && t->cfg.comm) { /* every rank's checksum at the root, the verdict back to all */
		int32_t verdict;
		all = malloc(sizeof(uint64_t) * (size_t)t->cfg.comm->size);
		if (!all)
			return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
		st = t->cfg.comm->gather(t->cfg.comm->user, &mine[0], clg_ex_is_root(t) ? all : NULL, sizeof(uint64_t));
		for (int r = 0; !st && clg_ex_is_root(t) && r < t->cfg.comm->size; r++)
			same &= all[r] == mine[0];
		verdict = same;
		if (!st)
			st = t->cfg.comm->broadcast(t->cfg.comm->user, &verdict, sizeof(verdict));
		same = verdict;
		free(all);
	}
	/* all-reduce over ranks on different kinds of device: their optimizer steps may round apart;
	 * rank 0's parameters then go to every rank, so that the drift does not grow epoch after epoch
	 * (replicas_identical still says this epoch's were not) */
	if (!st && !same && e->kind == CLG_EX_ALLREDUCE)
		st = clg_exchange_broadcast_params(t);
	*sum = mine[0];
	*identical = same;
	return st;
}

void clg_exchange_stats(clg_trainer *t, clg_epoch_info *info)
{
	static const char *const names[] = {[CLG_EX_DEVICES] = "devices", [CLG_EX_ROOT] = "root",
					     [CLG_EX_ALLREDUCE] = "allreduce", [CLG_EX_SHARDED] = "sharded"};
	clg_exchange *e = t->ex;
	double n = e->contributors, s = e->steps ? e->bytes / (double)e->steps : (double)e->wire;
	double state = sizeof(float) * (double)(e->state_total + 2);

	info->exchange_buckets = e->nbucket > 0 ? e->nbucket : 1;
	info->exchange_bytes = s;
	info->exchange_seconds = e->seconds;
	info->exchange = names[e->kind];
	info->optimizer_state_bytes = clg_ex_optimizer_bytes(t);
	/* what this rank's link carries a step, both ways: the root receives n - 1 gradients and sends
	 * n - 1 states; a ring all-reduce (reduce-scatter + all-gather) moves 2 (n - 1) / n of the
	 * gradients each way; an all-gather of int8 buckets, n - 1 of them each way */
	if (e->kind == CLG_EX_ROOT)
		info->link_bytes = clg_ex_is_root(t) ? (n - 1) * (s + state) : s + state;
	else if (e->kind == CLG_EX_ALLREDUCE && t->cfg.compress == CLG_COMPRESS_INT8)
		info->link_bytes = 2 * (n - 1) * s;
	else if (e->kind == CLG_EX_SHARDED && t->cfg.compress == CLG_COMPRESS_INT8) /* int8 parts, float32 back */
		info->link_bytes = 2 * (n - 1) / n * (s + sizeof(float) * (double)(e->total + 1));
	else if (e->kind == CLG_EX_ALLREDUCE || e->kind == CLG_EX_SHARDED)
		info->link_bytes = 4 * (n - 1) / n * s;
	else
		info->link_bytes = 0; /* one process: no link */
}
