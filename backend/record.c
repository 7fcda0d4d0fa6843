/* The launch recorder (clg_record.h): records and the op-level bytes / FLOPs estimates. */
#include "clg_record.h"
#include "clg_backend_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void clg_backend_set_recorder(clg_backend *be, clg_recorder *r)
{
	if (be)
		be->recorder = r;
}

void clg_recorder_clear(clg_recorder *r)
{
	free(r->rec);
	memset(r, 0, sizeof(*r));
}

static clg_launch_record *push(clg_recorder *r)
{
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 256;
		clg_launch_record *p = realloc(r->rec, (size_t)cap * sizeof(*p));
		if (!p) {
			r->dropped++;
			return NULL;
		}
		r->rec = p;
		r->cap = cap;
	}
	memset(&r->rec[r->n], 0, sizeof(r->rec[0]));
	snprintf(r->rec[r->n].op, sizeof(r->rec[0].op), "%s", r->op ? clg_op_name(r->op->op) : "-");
	return &r->rec[r->n++];
}

void clg_record_launch(clg_backend *be, const char *kernel, int dims, const size_t *global, const size_t *local)
{
	clg_launch_record *l = be->recorder ? push(be->recorder) : NULL;

	if (!l)
		return;
	snprintf(l->kernel, sizeof(l->kernel), "%s", kernel ? kernel : "?");
	l->dims = dims;
	l->items = l->groups = 1;
	for (int d = 0; d < dims && d < 3; d++) {
		l->global[d] = global[d];
		l->local[d] = local ? local[d] : 0;
		l->items *= (int64_t)global[d];
		l->groups *= local && local[d] ? (int64_t)((global[d] + local[d] - 1) / local[d]) : 0;
	}
}

void clg_record_library(clg_backend *be, const char *what, int64_t m, int64_t n, int64_t k, int64_t batch)
{
	clg_launch_record *l = be->recorder ? push(be->recorder) : NULL;

	if (!l)
		return;
	snprintf(l->kernel, sizeof(l->kernel), "%s", what);
	l->library = 1;
	l->m = m;
	l->n = n;
	l->k = k;
	l->batch = batch;
}

void clg_record_combine(clg_backend *be, int64_t work)
{
	clg_recorder *r = be->recorder;

	if (!r || !r->n)
		return;
	r->rec[r->n - 1].combine = 1;
	r->rec[r->n - 1].elems = work; /* kept by clg_record_op_done */
}

static double view_bytes(const clg_view *v)
{
	return (double)clg_view_numel(v) * (double)clg_dtype_size(v->dtype);
}

void clg_record_op_done(clg_recorder *r, const clg_op_call *c, int first)
{
	int nsrc = clg_op_nsrc(c->op), todo = 0, last = -1;
	int gemm = c->op == CLG_OP_GEMM || c->op == CLG_OP_GEMM_BIAS_ACT;
	double bytes = view_bytes(&c->dst), flops = (double)clg_view_numel(&c->dst);
	int64_t m = 0, n = 0, k = 0, batch = 1, elems = clg_view_numel(&c->dst);

	for (int s = 0; s < nsrc; s++) {
		bytes += view_bytes(&c->src[s]);
		if (clg_view_numel(&c->src[s]) > elems)
			elems = clg_view_numel(&c->src[s]);
	}
	flops = (double)elems;
	if (gemm && c->dst.ndim >= 2 && c->src[0].ndim >= 2) {
		m = c->dst.shape[c->dst.ndim - 2];
		n = c->dst.shape[c->dst.ndim - 1];
		k = c->src[0].shape[c->src[0].ndim - 1];
		for (int d = 0; d < c->dst.ndim - 2; d++)
			batch *= c->dst.shape[d];
		flops = 2.0 * (double)m * (double)n * (double)k * (double)batch;
	} else if (c->op == CLG_OP_IM2COL || c->op == CLG_OP_COL2IM) {
		flops = 0; /* data movement */
	}
	for (int i = first; i < r->n; i++)
		if (!r->rec[i].estimated) {
			todo++;
			if (!r->rec[i].combine)
				last = i;
		}
	for (int i = first; i < r->n; i++) {
		clg_launch_record *l = &r->rec[i];
		if (l->estimated)
			continue;
		l->estimated = 1;
		if (!l->combine)
			l->elems = elems;
		l->bytes = bytes / todo;
		l->flops = gemm ? (i == last ? flops : 0) : flops / todo;
		if (gemm && !l->m) {
			l->m = m;
			l->n = n;
			l->k = k;
			l->batch = batch;
		}
	}
}
