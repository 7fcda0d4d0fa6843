/* The sharded optimizer's exchange with int8 compression (--shard-optimizer --compress int8).
 * Each rank quantizes, on its device, every other rank's part of its gradients in blocks of 256
 * (block-wise absmax with error feedback, as the root exchange does: the residual of each
 * parameter keeps what the quantization lost, slice by slice), and one all-to-all sends each part
 * to its owner: (N - 1) / N of the int8 gradients each way per link, where the float32 sharded
 * exchange sends (N - 1) / N of the float32 ones. The owner dequantizes and sums the N copies of
 * its part on its device, in rank order, then steps and all-gathers its parameters (float32) as
 * the float32 sharded exchange does. The blocks start at each slice's start (the root's at each
 * tensor's), so the quantization, not the arithmetic, differs from the root exchange's. */
#include "exchange_internal.h"
#include "fe_internal.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of a slice of n values on the wire: scales, then the bytes padded to 4. */
static size_t slice_wire(int64_t n)
{
	return sizeof(float) * (size_t)((n + INT8_BLOCK - 1) / INT8_BLOCK) + (((size_t)n + 3) & ~(size_t)3);
}

/* The k-th slice (in parameter order) of rank r's part: parameter *p, values [*at, *at + *n) of
 * it; 0 when r's part has no k-th slice. */
static int part_slice(const clg_exchange *e, int r, int k, int *p, int64_t *at, int64_t *n)
{
	int64_t lo = 0, hi;
	for (int q = 0; q < r; q++)
		lo += e->counts[q];
	hi = lo + e->counts[r];
	for (int q = 0; q < e->nparam; q++) {
		int64_t a = e->first[q], b = a + e->numel[q];
		int64_t from = a > lo ? a : lo, to = b < hi ? b : hi;
		if (from >= to || k-- > 0)
			continue;
		*p = q, *at = from - a, *n = to - from;
		return 1;
	}
	return 0;
}

static size_t part_wire(const clg_exchange *e, int r)
{
	size_t bytes = 0;
	int p;
	int64_t at, n;
	for (int k = 0; part_slice(e, r, k, &p, &at, &n); k++)
		bytes += slice_wire(n);
	return bytes;
}

clg_status clg_ex_sharded_int8_new(clg_trainer *t)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	size_t send = 0, mine = part_wire(e, c->rank);

	e->overlap = 0; /* the slices are quantized after backward, not each tensor as it is done */
	e->q8sendcounts = calloc((size_t)c->size * 2, sizeof(int));
	if (!e->q8sendcounts)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
	e->q8recvcounts = e->q8sendcounts + c->size;
	for (int r = 0; r < c->size; r++) {
		size_t b = part_wire(e, r);
		if (b > 0x7fffffff || mine * (size_t)c->size > 0x7fffffff)
			return clg_fail(CLG_ERR_UNSUPPORTED, "trainer: int8 parts of %zu bytes: over 2 GiB", b);
		e->q8sendcounts[r] = (int)b;
		e->q8recvcounts[r] = (int)mine;
		send += b;
	}
	e->q8send = malloc(send + 1);
	e->q8recv = malloc(mine * (size_t)c->size + 1);
	if (!e->q8send || !e->q8recv)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory for the int8 parts (%zu bytes)", send);
	e->wire = send; /* what this rank sends a step (its exchange_bytes) */
	return CLG_OK;
}

void clg_ex_sharded_int8_free(clg_exchange *e)
{
	free(e->q8sendcounts);
	free(e->q8send);
	free(e->q8recv);
}

/* 1-D view of values [at, at + n) of x. */
static clg_tensor *flat_slice(clg_tensor *x, int64_t at, int64_t n)
{
	clg_tensor *flat = clg_reshape(x, 1, (int64_t[]){clg_numel(x)});
	return flat ? clg_slice(flat, 0, at, at + n, 1) : NULL;
}

/* Slice [at, at + n) of parameter p's gradient plus its residual, quantized into dst; the residual
 * keeps what was lost. */
static clg_status quantize_slice(clg_trainer *t, int p, int64_t at, int64_t n, unsigned char *dst)
{
	clg_replica *r0 = &t->rep[0];
	clg_tensor *g = clg_grad(r0->params.tensors[p]);
	int64_t nb = (n + INT8_BLOCK - 1) / INT8_BLOCK;
	clg_tensor *res = flat_slice(r0->residual[p], at, n);
	clg_tensor *gs = g && res ? flat_slice(g, at, n) : NULL;
	clg_tensor *acc = !res ? NULL : g ? (gs ? clg_add(gs, res) : NULL) : res;
	clg_tensor *scales = acc ? clg_int8_scales(acc, INT8_BLOCK) : NULL;
	clg_tensor *q = scales ? clg_int8_quantize(acc, scales, INT8_BLOCK) : NULL;
	clg_tensor *deq = q ? clg_int8_dequantize(q, scales, n, INT8_BLOCK) : NULL;
	clg_tensor *lost = deq ? clg_sub(acc, deq) : NULL;
	clg_status st = lost ? clg_assign(res, lost) : clg_last_status();

	if (!st)
		st = clg_to_host(scales, dst, sizeof(float) * (size_t)nb);
	if (!st)
		st = clg_to_host(q, dst + sizeof(float) * (size_t)nb, sizeof(int32_t) * (size_t)((n + 3) / 4));
	return st;
}

clg_status clg_ex_sharded_int8_step(clg_trainer *t, clg_tensor *wloss, clg_status st, double *loss)
{
	clg_exchange *e = t->ex;
	const clg_train_comm *c = t->cfg.comm;
	clg_replica *r0 = &t->rep[0];
	unsigned char *out = e->q8send;
	size_t mine = (size_t)e->q8recvcounts[0], off = 0;
	float lf = 0;
	void *req = NULL;
	int p, nreq = 0;
	int64_t at, n;

	/* every rank's part of this rank's gradients, quantized, in rank order */
	for (int r = 0; !st && r < c->size; r++)
		for (int k = 0; !st && part_slice(e, r, k, &p, &at, &n); k++) {
			st = quantize_slice(t, p, at, n, out);
			out += slice_wire(n);
		}
	if (!st)
		st = clg_ex_pack_loss(t, 0, wloss);
	if (!st) {
		memcpy(&lf, e->send, sizeof(lf));
		st = c->allreduce_start(c->user, &lf, 1, &req);
	}
	if (!st)
		e->reqs[nreq++] = req;
	for (int k = 0; k < nreq; k++) { /* one at a time: e->reqs holds one */
		clg_status w = c->wait(c->user, e->reqs[k]);
		st = st ? st : w;
	}
	nreq = 0;
	if (!st)
		st = c->alltoallv_start(c->user, e->q8send, e->q8sendcounts, e->q8recv, e->q8recvcounts, &req);
	if (!st) {
		clg_status w = c->wait(c->user, req);
		st = st ? st : w;
	}
	/* this rank's part: every rank's copy dequantized and summed on the device, in rank order */
	if (e->shard_opt)
		clg_optimizer_zero_grad(e->shard_opt);
	for (int k = 0; !st && part_slice(e, c->rank, k, &p, &at, &n); k++) {
		clg_tensor *acc = NULL;
		clg_scope_begin();
		for (int s = 0; !st && s < c->size; s++) {
			clg_tensor *deq = clg_ex_wire_dequantize(r0->be, e->q8recv + mine * (size_t)s + off, n);
			acc = deq ? (acc ? clg_add(acc, deq) : deq) : NULL;
			if (!acc)
				st = clg_last_status();
		}
		if (!st)
			st = fe_accumulate(e->pieces[k], clg_reshape(acc, 1, (int64_t[]){n}));
		clg_scope_end();
		off += slice_wire(n);
	}
	return st ? st : clg_ex_shard_finish(t, lf, loss);
}
