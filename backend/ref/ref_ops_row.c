/* Reference ROW ops (softmax family): each row (the last dim) of a strided view is one unit, in
 * double. Every op reads a whole row before writing it, so dst may be one of the sources. */
#include "ref_internal.h"

#include <math.h>

#define load clg_ref_load
#define store clg_ref_store

/* One row of C elements; o[k] is operand k's offset (dst, src0, src1), cs[k] its row stride. */
static void row_apply(clg_op op, const clg_view *const *v, const int64_t *o, const int64_t *cs, int64_t C)
{
	double m = -INFINITY, s = 0;
	int64_t j;

	switch (op) {
	case CLG_OP_SOFTMAX:
	case CLG_OP_LOG_SOFTMAX:
		/* subtract the row max so exp never overflows; a NaN anywhere makes the row NaN */
		for (j = 0; j < C; j++) {
			double x = load(v[1], o[1] + j * cs[1]);
			if (x > m)
				m = x;
		}
		for (j = 0; j < C; j++)
			s += exp(load(v[1], o[1] + j * cs[1]) - m);
		for (j = 0; j < C; j++) {
			double t = load(v[1], o[1] + j * cs[1]) - m;
			store(v[0], o[0] + j * cs[0], op == CLG_OP_SOFTMAX ? exp(t) / s : t - log(s));
		}
		break;
	case CLG_OP_SOFTMAX_BACKWARD: /* y * (g - sum(g * y)) */
		for (j = 0; j < C; j++)
			s += load(v[1], o[1] + j * cs[1]) * load(v[2], o[2] + j * cs[2]);
		for (j = 0; j < C; j++) {
			double g = load(v[1], o[1] + j * cs[1]), y = load(v[2], o[2] + j * cs[2]);
			store(v[0], o[0] + j * cs[0], y * (g - s));
		}
		break;
	case CLG_OP_LOG_SOFTMAX_BACKWARD: /* g - exp(y) * sum(g) */
		for (j = 0; j < C; j++)
			s += load(v[1], o[1] + j * cs[1]);
		for (j = 0; j < C; j++) {
			double g = load(v[1], o[1] + j * cs[1]), y = load(v[2], o[2] + j * cs[2]);
			store(v[0], o[0] + j * cs[0], g - exp(y) * s);
		}
		break;
	default:
		break;
	}
}

clg_status clg_ref_each_row(const clg_op_call *c, clg_ref_row_fn fn)
{
	const clg_view *v[3] = {&c->dst, &c->src[0], &c->src[1]};
	int nv = 1 + clg_op_nsrc(c->op), nd = c->dst.ndim;
	int64_t idx[CLG_MAX_DIMS] = {0}, off[3] = {0, 0, 0}, cs[3] = {0, 0, 0};
	/* a 0-d view is one row of one element */
	int64_t C = nd > 0 ? c->dst.shape[nd - 1] : 1;

	if (clg_view_numel(&c->dst) == 0)
		return CLG_OK;
	for (int k = 0; k < nv; k++) {
		off[k] = v[k]->offset;
		cs[k] = nd > 0 ? v[k]->stride[nd - 1] : 0;
	}
	/* iterate over the leading (row index) dims */
	do
		fn(c, v, off, cs, C);
	while (nd > 1 && clg_ref_next_index(nd - 1, c->dst.shape, idx, v, nv, off));
	return CLG_OK;
}

static void softmax_row(const clg_op_call *c, const clg_view *const *v, const int64_t *off, const int64_t *cs, int64_t C)
{
	row_apply(c->op, v, off, cs, C);
}

clg_status clg_ref_row(clg_backend *be, const clg_op_call *c)
{
	(void)be;
	return clg_ref_each_row(c, softmax_row);
}
