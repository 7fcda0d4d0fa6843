/* Reference optimizer updates (see clg_ops.def): plain loops in double. */
#include "ref_internal.h"

#include <math.h>

static clg_status ref_sgd(clg_backend *be, const clg_op_call *c)
{
	const clg_view *p = &c->dst, *g = &c->src[0], *b = &c->src[1];
	double lr = c->f[0], mom = c->f[1], wd = c->f[2], damp = c->f[3];
	int64_t n = clg_view_numel(p);

	(void)be;
	for (int64_t i = 0; i < n; i++) {
		double x = clg_ref_load(p, p->offset + i);
		double d = clg_ref_load(g, g->offset + i) + wd * x;
		if (mom != 0) {
			double v = c->i[1] ? d : mom * clg_ref_load(b, b->offset + i) + (1 - damp) * d;
			clg_ref_store(b, b->offset + i, v);
			d = c->i[0] ? d + mom * v : v;
		}
		clg_ref_store(p, p->offset + i, x - lr * d);
	}
	return CLG_OK;
}

static clg_status ref_adam(clg_backend *be, const clg_op_call *c)
{
	const clg_view *p = &c->dst, *g = &c->src[0], *m = &c->src[1], *v = &c->src[2], *vmax = &c->src[3];
	double lr = c->f[0], b1 = c->f[1], b2 = c->f[2], eps = c->f[3], wd = c->f[4], bc1 = c->f[5], bc2 = c->f[6];
	int64_t n = clg_view_numel(p);

	(void)be;
	for (int64_t i = 0; i < n; i++) {
		double x = clg_ref_load(p, p->offset + i), d = clg_ref_load(g, g->offset + i);
		if (c->i[0])
			x *= 1 - lr * wd;
		else
			d += wd * x;
		/* the state is stored in the tensors' dtype, as on the devices */
		clg_ref_store(m, m->offset + i, b1 * clg_ref_load(m, m->offset + i) + (1 - b1) * d);
		clg_ref_store(v, v->offset + i, b2 * clg_ref_load(v, v->offset + i) + (1 - b2) * d * d);
		double m1 = clg_ref_load(m, m->offset + i), v1 = clg_ref_load(v, v->offset + i);
		if (c->i[1]) { /* amsgrad: the largest second moment so far */
			double vm = clg_ref_load(vmax, vmax->offset + i);
			clg_ref_store(vmax, vmax->offset + i, v1 > vm ? v1 : vm);
			v1 = clg_ref_load(vmax, vmax->offset + i);
		}
		clg_ref_store(p, p->offset + i, x - lr * (m1 / bc1) / (sqrt(v1 / bc2) + eps));
	}
	return CLG_OK;
}

void clg_ref_register_optim(clg_backend *be)
{
	be->ops[CLG_OP_SGD_STEP] = ref_sgd;
	be->ops[CLG_OP_ADAM_STEP] = ref_adam;
}
