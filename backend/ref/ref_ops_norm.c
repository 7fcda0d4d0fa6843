/* Reference implementations of the norm family (ROW ops, see clg_ops.def), in double:
 *   LAYER_NORM           dst = (x - mean) * rstd,  rstd = 1 / sqrt(var + eps)     (src0 = x)
 *   LAYER_NORM_BACKWARD  dst = rstd * (g - mean(g) - xhat * mean(g * xhat))     (src0 = g, src1 = x)
 * over each row (the last dim) of strided views; var is the biased variance, eps is f[0], and
 * xhat = (x - mean) * rstd. Each row is read whole before it is written, so dst may alias a
 * source. */
#include "ref_internal.h"

#include <math.h>

#define load clg_ref_load
#define store clg_ref_store

/* Mean and 1 / sqrt(biased variance + eps) of a row of C elements (two passes). */
static void row_stats(const clg_view *x, int64_t o, int64_t cs, int64_t C, double eps, double *mean, double *rstd)
{
	double s = 0, v = 0;
	for (int64_t j = 0; j < C; j++)
		s += load(x, o + j * cs);
	s /= (double)C;
	for (int64_t j = 0; j < C; j++) {
		double t = load(x, o + j * cs) - s;
		v += t * t;
	}
	*mean = s;
	*rstd = 1.0 / sqrt(v / (double)C + eps);
}

/* One row; o[k] is operand k's row offset (dst, src0, src1), cs[k] its stride along the row. */
static void norm_row(clg_op op, const clg_view *const *v, const int64_t *o, const int64_t *cs, int64_t C, double eps)
{
	double mean, rstd, sg = 0, sgx = 0;
	int64_t j;

	if (op == CLG_OP_LAYER_NORM) {
		row_stats(v[1], o[1], cs[1], C, eps, &mean, &rstd);
		for (j = 0; j < C; j++)
			store(v[0], o[0] + j * cs[0], (load(v[1], o[1] + j * cs[1]) - mean) * rstd);
		return;
	}
	/* LAYER_NORM_BACKWARD: g = v[1], x = v[2] */
	row_stats(v[2], o[2], cs[2], C, eps, &mean, &rstd);
	for (j = 0; j < C; j++) {
		double g = load(v[1], o[1] + j * cs[1]), xh = (load(v[2], o[2] + j * cs[2]) - mean) * rstd;
		sg += g;
		sgx += g * xh;
	}
	sg /= (double)C;
	sgx /= (double)C;
	for (j = 0; j < C; j++) {
		double g = load(v[1], o[1] + j * cs[1]), xh = (load(v[2], o[2] + j * cs[2]) - mean) * rstd;
		store(v[0], o[0] + j * cs[0], rstd * (g - sg - xh * sgx));
	}
}

static void norm_row_of(const clg_op_call *c, const clg_view *const *v, const int64_t *off, const int64_t *cs, int64_t C)
{
	norm_row(c->op, v, off, cs, C, c->f[0]);
}

static clg_status ref_norm_row(clg_backend *be, const clg_op_call *c)
{
	(void)be;
	return clg_ref_each_row(c, norm_row_of);
}

void clg_ref_register_norm(clg_backend *be)
{
	be->ops[CLG_OP_LAYER_NORM] = ref_norm_row;
	be->ops[CLG_OP_LAYER_NORM_BACKWARD] = ref_norm_row;
}
