/* Reference residual add + layer norm with gamma and beta (ADD_LAYER_NORM and its backward, see
 * clg_ops.def): plain loops in double, a row at a time; the backward's column sums over the rows
 * in order. */
#include "ref_internal.h"
#include "../clg_addnorm_internal.h"

#include <math.h>
#include <stdlib.h>

static int is_2d(const clg_view *v, int64_t n, int64_t c) { return v->ndim == 2 && v->shape[0] == n && v->shape[1] == c; }
static int is_1d(const clg_view *v, int64_t n) { return v->ndim == 1 && v->shape[0] == n; }

clg_status clg_addnorm_check(clg_backend *be, const clg_op_call *c)
{
	const clg_view *d = &c->dst, *s = c->src;
	int64_t N = d->ndim == 2 ? d->shape[0] : 0, C = d->ndim == 2 ? d->shape[1] : 0;
	char s0[96], s1[96];
	int ok = d->ndim == 2 && is_2d(&s[0], N, C) && is_1d(&s[2], C);

	if (c->op == CLG_OP_ADD_LAYER_NORM)
		ok = ok && is_1d(&s[3], C) && (!c->i[0] || (is_2d(&s[1], N, C) && is_2d(&s[4], N, C)));
	else
		ok = ok && is_2d(&s[1], N, C) && is_1d(&s[3], C) && is_1d(&s[4], C) && (!c->i[0] || is_2d(&s[5], N, C));
	if (!ok)
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': shapes do not fit: dst %s, src0 %s (see clg_ops.def)",
				clg_op_name(c->op), be->info.name, clg_shape_str(d, s0, sizeof(s0)),
				clg_shape_str(&s[0], s1, sizeof(s1)));
	if (c->i[0] != 0 && c->i[0] != 1)
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': flag i[0] %lld (0 or 1)", clg_op_name(c->op),
				be->info.name, (long long)c->i[0]);
	if (!(c->f[0] >= 0))
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': eps %g must be >= 0", clg_op_name(c->op),
				be->info.name, c->f[0]);
	return CLG_OK;
}

#define AT(v, n, c) ((v)->offset + (n) * (v)->stride[0] + (c) * (v)->stride[1])
#define AT1(v, n) ((v)->offset + (n) * (v)->stride[0])

/* mean and 1 / sqrt(biased variance + eps) of row n of s (two passes) */
static void row_stats(const clg_view *s, int64_t n, double eps, double *mean, double *rstd)
{
	int64_t C = s->shape[1];
	double m = 0, v = 0;
	for (int64_t j = 0; j < C; j++)
		m += clg_ref_load(s, AT(s, n, j));
	m /= (double)C;
	for (int64_t j = 0; j < C; j++) {
		double t = clg_ref_load(s, AT(s, n, j)) - m;
		v += t * t;
	}
	*mean = m;
	*rstd = 1.0 / sqrt(v / (double)C + eps);
}

/* y (N, C) = xhat * gamma + beta, xhat of s = x + r (written to src4) or of x */
static clg_status ref_add_layer_norm(clg_backend *be, const clg_op_call *c)
{
	const clg_view *y = &c->dst, *x = &c->src[0], *r = &c->src[1], *ga = &c->src[2], *bt = &c->src[3];
	const clg_view *s = c->i[0] ? &c->src[4] : x;
	clg_status st = clg_addnorm_check(be, c);

	for (int64_t n = 0; !st && n < y->shape[0]; n++) {
		double mean, rstd;
		if (c->i[0])
			for (int64_t j = 0; j < y->shape[1]; j++)
				clg_ref_store(s, AT(s, n, j), clg_ref_load(x, AT(x, n, j)) + clg_ref_load(r, AT(r, n, j)));
		/* the statistics of s as stored (rounded to its dtype), as the backward sees it */
		row_stats(s, n, c->f[0], &mean, &rstd);
		for (int64_t j = 0; j < y->shape[1]; j++) {
			double xh = (clg_ref_load(s, AT(s, n, j)) - mean) * rstd;
			clg_ref_store(y, AT(y, n, j), xh * clg_ref_load(ga, AT1(ga, j)) + clg_ref_load(bt, AT1(bt, j)));
		}
	}
	return st;
}

/* dx (N, C) [+ the earlier gradient], and dgamma, dbeta (C) in place */
static clg_status ref_add_layer_norm_backward(clg_backend *be, const clg_op_call *c)
{
	const clg_view *dx = &c->dst, *g = &c->src[0], *s = &c->src[1], *ga = &c->src[2], *dg = &c->src[3],
		       *db = &c->src[4];
	clg_status st = clg_addnorm_check(be, c);
	int64_t N = st ? 0 : dx->shape[0], C = st ? 0 : dx->shape[1];
	double *stats = st ? NULL : malloc((size_t)(N > 0 ? N : 1) * 2 * sizeof(double)); /* mean, rstd a row */

	if (!st && !stats)
		return clg_fail(CLG_ERR_OOM, "op '%s' on device '%s': out of host memory", clg_op_name(c->op), be->info.name);
	for (int64_t n = 0; n < N; n++)
		row_stats(s, n, c->f[0], &stats[2 * n], &stats[2 * n + 1]);
	for (int64_t j = 0; j < C; j++) { /* the column sums, rows in order */
		double sg = 0, sb = 0;
		for (int64_t n = 0; n < N; n++) {
			double gv = clg_ref_load(g, AT(g, n, j));
			sg += gv * (clg_ref_load(s, AT(s, n, j)) - stats[2 * n]) * stats[2 * n + 1];
			sb += gv;
		}
		if (c->f[1] != 0)
			sg += c->f[1] * clg_ref_load(dg, AT1(dg, j));
		if (c->f[2] != 0)
			sb += c->f[2] * clg_ref_load(db, AT1(db, j));
		clg_ref_store(dg, AT1(dg, j), sg);
		clg_ref_store(db, AT1(db, j), sb);
	}
	for (int64_t n = 0; n < N; n++) {
		double mean = stats[2 * n], rstd = stats[2 * n + 1], mh = 0, mhx = 0;
		for (int64_t j = 0; j < C; j++) {
			double h = clg_ref_load(g, AT(g, n, j)) * clg_ref_load(ga, AT1(ga, j));
			double xh = (clg_ref_load(s, AT(s, n, j)) - mean) * rstd;
			mh += h;
			mhx += h * xh;
		}
		mh /= (double)C;
		mhx /= (double)C;
		for (int64_t j = 0; j < C; j++) {
			double h = clg_ref_load(g, AT(g, n, j)) * clg_ref_load(ga, AT1(ga, j));
			double xh = (clg_ref_load(s, AT(s, n, j)) - mean) * rstd;
			double d = rstd * (h - mh - xh * mhx);
			clg_ref_store(dx, AT(dx, n, j), c->i[0] ? d + clg_ref_load(&c->src[5], AT(&c->src[5], n, j)) : d);
		}
	}
	free(stats);
	return st;
}

void clg_ref_register_addnorm(clg_backend *be)
{
	be->ops[CLG_OP_ADD_LAYER_NORM] = ref_add_layer_norm;
	be->ops[CLG_OP_ADD_LAYER_NORM_BACKWARD] = ref_add_layer_norm_backward;
}
