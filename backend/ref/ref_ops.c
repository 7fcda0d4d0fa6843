/* Reference implementations: straightforward loops over strided views, computed in double. */
#include "ref_internal.h"

#include <math.h>
#include <string.h>

static double load(const clg_view *v, int64_t off)
{
	const void *p = v->buf->handle;
	switch (v->dtype) {
	case CLG_F64: return ((const double *)p)[off];
	case CLG_I32: return ((const int32_t *)p)[off];
	default: return ((const float *)p)[off];
	}
}

static void store(const clg_view *v, int64_t off, double x)
{
	void *p = v->buf->handle;
	switch (v->dtype) {
	case CLG_F64: ((double *)p)[off] = x; break;
	case CLG_I32: ((int32_t *)p)[off] = (int32_t)x; break;
	default: ((float *)p)[off] = (float)x; break;
	}
}

/* Steps a multi-index over `shape`, keeping each operand's element offset; returns 0 at the end. */
static int next_index(int ndim, const int64_t *shape, int64_t *idx, const clg_view *const *v, int nv, int64_t *off)
{
	for (int d = ndim - 1; d >= 0; d--) {
		if (++idx[d] < shape[d]) {
			for (int k = 0; k < nv; k++)
				off[k] += v[k]->stride[d];
			return 1;
		}
		idx[d] = 0;
		for (int k = 0; k < nv; k++)
			off[k] -= v[k]->stride[d] * (shape[d] - 1);
	}
	return 0;
}

static double ew_apply(clg_op op, double x, double y, const double *f)
{
	switch (op) {
	case CLG_OP_COPY: return x;
	case CLG_OP_FILL: return f[0];
	case CLG_OP_ADD: return x + y;
	case CLG_OP_SUB: return x - y;
	case CLG_OP_MUL: return x * y;
	case CLG_OP_DIV: return x / y;
	case CLG_OP_NEG: return -x;
	case CLG_OP_EXP: return exp(x);
	case CLG_OP_LOG: return log(x);
	case CLG_OP_TANH: return tanh(x);
	case CLG_OP_RELU: return x > 0 ? x : 0;
	case CLG_OP_RELU_BACKWARD: return y > 0 ? x : 0;
	case CLG_OP_SCALE: return f[0] * x + f[1];
	default: return NAN;
	}
}

static clg_status ref_elementwise(clg_backend *be, const clg_op_call *c)
{
	const clg_view *v[3] = {&c->dst, &c->src[0], &c->src[1]};
	int nsrc = clg_op_nsrc(c->op), nv = 1 + nsrc;
	int64_t idx[CLG_MAX_DIMS] = {0}, off[3];

	(void)be;
	if (clg_view_numel(&c->dst) == 0)
		return CLG_OK;
	for (int k = 0; k < nv; k++)
		off[k] = v[k]->offset;
	do {
		double x = nsrc > 0 ? load(v[1], off[1]) : 0, y = nsrc > 1 ? load(v[2], off[2]) : 0;
		store(v[0], off[0], ew_apply(c->op, x, y, c->f));
	} while (next_index(c->dst.ndim, c->dst.shape, idx, v, nv, off));
	return CLG_OK;
}

static clg_status ref_sum(clg_backend *be, const clg_op_call *c)
{
	const clg_view *s = &c->src[0], *d = &c->dst;
	int nout = d->ndim, nred = s->ndim - d->ndim;
	int64_t oidx[CLG_MAX_DIMS] = {0}, ridx[CLG_MAX_DIMS] = {0}, off[2];
	const clg_view *ov[2] = {d, s};

	(void)be;
	if (clg_view_numel(d) == 0)
		return CLG_OK;
	off[0] = d->offset;
	off[1] = s->offset;
	do {
		/* a view of the src's reduced dims, starting at this output's row */
		clg_view red = *s;
		const clg_view *rv[1] = {&red};
		int64_t roff[1] = {off[1]};
		double acc = 0;
		red.ndim = nred;
		for (int k = 0; k < nred; k++) {
			red.shape[k] = s->shape[nout + k];
			red.stride[k] = s->stride[nout + k];
			ridx[k] = 0;
		}
		if (clg_view_numel(&red) > 0) {
			do
				acc += load(s, roff[0]);
			while (next_index(nred, red.shape, ridx, rv, 1, roff));
		}
		store(d, off[0], acc);
	} while (next_index(nout, d->shape, oidx, ov, 2, off));
	return CLG_OK;
}

static clg_status ref_gemm(clg_backend *be, const clg_op_call *c)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst;
	int nd = C->ndim;
	int64_t batch = nd == 3 ? C->shape[0] : 1;
	int64_t M = C->shape[nd - 2], N = C->shape[nd - 1], K = A->shape[nd - 1];
	double alpha = c->f[0], beta = c->f[1];

	(void)be;
	for (int64_t b = 0; b < batch; b++) {
		int64_t ao = A->offset + (nd == 3 ? b * A->stride[0] : 0);
		int64_t bo = B->offset + (nd == 3 ? b * B->stride[0] : 0);
		int64_t co = C->offset + (nd == 3 ? b * C->stride[0] : 0);
		for (int64_t i = 0; i < M; i++) {
			for (int64_t j = 0; j < N; j++) {
				double acc = 0;
				int64_t cij = co + i * C->stride[nd - 2] + j * C->stride[nd - 1];
				for (int64_t k = 0; k < K; k++)
					acc += load(A, ao + i * A->stride[nd - 2] + k * A->stride[nd - 1]) *
					       load(B, bo + k * B->stride[nd - 2] + j * B->stride[nd - 1]);
				/* beta == 0 ignores C's old contents, even NaN, as BLAS does */
				store(C, cij, alpha * acc + (beta != 0 ? beta * load(C, cij) : 0));
			}
		}
	}
	return CLG_OK;
}

void clg_ref_register_ops(clg_backend *be)
{
	for (int op = 0; op < CLG_OP_COUNT; op++)
		if (clg_op_is_elementwise((clg_op)op))
			be->ops[op] = ref_elementwise;
	be->ops[CLG_OP_SUM] = ref_sum;
	be->ops[CLG_OP_GEMM] = ref_gemm;
}
