/* Gradient-check cases of max / min / argmax / argmin over any dim (see tests/test_grad.h): dims
 * other than the last, negative dims, keepdim both ways, ties (a tensor concatenated with itself:
 * the gradient goes to the first copy only), and argmax_dim / argmin_dim through gather. Each
 * case checks the indices against a host search (the first extreme element) and against
 * clg_argmax_dim / clg_argmin_dim. */
#include "test_grad.h"

#include <string.h>

/* ---- max / min over any dim ---- */

/* idx (a's shape without dim, or with it as 1) against the first extreme element of a along dim */
static void check_indices(clg_tensor *a, int dim, clg_tensor *idx, int is_max)
{
	const int64_t *sh = clg_shape(a);
	int nd = clg_ndim(a);
	int64_t P = 1, Q = 1, C = sh[dim];
	double av[256], iv[256];

	for (int d = 0; d < dim; d++)
		P *= sh[d];
	for (int d = dim + 1; d < nd; d++)
		Q *= sh[d];
	CHECK(idx && clg_dtype_of(idx) == CLG_I32 && clg_numel(idx) == P * Q, "indices missing or of the wrong size");
	if (!idx || clg_numel(idx) != P * Q || !grad_read_doubles(a, av, P * C * Q) || !grad_read_doubles(idx, iv, P * Q))
		return;
	for (int64_t p = 0; p < P; p++)
		for (int64_t q = 0; q < Q; q++) {
			int64_t best = 0;
			for (int64_t c = 1; c < C; c++) {
				double v = av[(p * C + c) * Q + q], b = av[(p * C + best) * Q + q];
				if (is_max ? v > b : v < b)
					best = c;
			}
			CHECK(iv[p * Q + q] == (double)best, "index at (%lld, %lld): %g, the first %s is at %lld", (long long)p,
			      (long long)q, iv[p * Q + q], is_max ? "max" : "min", (long long)best);
		}
}

/* max_dim / min_dim of a, their indices checked (and against argmax_dim / argmin_dim) */
static clg_tensor *maxmin_checked(clg_tensor *a, int dim, int keepdim, int is_max)
{
	clg_tensor *idx = NULL, *arg, *y = is_max ? clg_max_dim(a, dim, keepdim, &idx) : clg_min_dim(a, dim, keepdim, &idx);
	int nd = clg_ndim(a), d = dim < 0 ? dim + nd : dim;
	double i1[256], i2[256];

	CHECK(y != NULL, "max/min failed: %s", clg_last_error());
	if (y) {
		CHECK(clg_ndim(y) == (keepdim ? nd : nd - 1) && idx && clg_ndim(idx) == clg_ndim(y),
		      "values have %d dims, indices %d", clg_ndim(y), idx ? clg_ndim(idx) : -1);
		check_indices(a, d, idx, is_max);
		arg = is_max ? clg_argmax_dim(a, dim, keepdim) : clg_argmin_dim(a, dim, keepdim);
		CHECK(arg && idx && clg_ndim(arg) == clg_ndim(idx) && grad_read_doubles(arg, i1, clg_numel(arg)) &&
		      grad_read_doubles(idx, i2, clg_numel(idx)) && !memcmp(i1, i2, sizeof(double) * (size_t)clg_numel(idx)),
		      "argmax_dim / argmin_dim differ from the indices of max_dim / min_dim");
		clg_free(arg);
	}
	clg_free(idx);
	return y;
}

static clg_tensor *f_max_dim0(clg_tensor **x) { return maxmin_checked(x[0], 0, 0, 1); }
static clg_tensor *f_max_dim1_keep(clg_tensor **x) { return maxmin_checked(x[0], 1, 1, 1); }
static clg_tensor *f_min_dim0_keep(clg_tensor **x) { return maxmin_checked(x[0], 0, 1, 0); }
static clg_tensor *f_min_dim_m2(clg_tensor **x) { return maxmin_checked(x[0], -2, 0, 0); }
static clg_tensor *f_max_last_keep(clg_tensor **x) { return maxmin_checked(x[0], -1, 1, 1); }

/* ties: x joined with itself along dim, reduced along dim: the gradient reaches the first copy only */
static clg_tensor *maxmin_ties(clg_tensor *x, int dim, int keepdim, int is_max)
{
	clg_tensor *xx = clg_concat((clg_tensor *[]){x, x}, 2, dim), *y = xx ? maxmin_checked(xx, dim, keepdim, is_max) : NULL;
	clg_free(xx);
	return y;
}

static clg_tensor *f_max_dim0_ties(clg_tensor **x) { return maxmin_ties(x[0], 0, 0, 1); }
static clg_tensor *f_min_dim1_ties_keep(clg_tensor **x) { return maxmin_ties(x[0], 1, 1, 0); }

/* values through the indices: gather(a, dim, argmax_dim(a, dim, keepdim 1)) equals max_dim's */
static clg_tensor *arg_gather(clg_tensor *a, int dim, int is_max)
{
	clg_tensor *i = is_max ? clg_argmax_dim(a, dim, 1) : clg_argmin_dim(a, dim, 1), *y = i ? clg_gather(a, dim, i) : NULL;
	clg_tensor *m = y ? (is_max ? clg_max_dim(a, dim, 1, NULL) : clg_min_dim(a, dim, 1, NULL)) : NULL;
	double v1[256], v2[256];
	CHECK(m && grad_read_doubles(y, v1, clg_numel(y)) && grad_read_doubles(m, v2, clg_numel(m)) &&
	      !memcmp(v1, v2, sizeof(double) * (size_t)clg_numel(m)), "gather at argmax/argmin differs from max/min");
	clg_free(m);
	clg_free(i);
	return y;
}

static clg_tensor *f_argmax_dim1_gather(clg_tensor **x) { return arg_gather(x[0], 1, 1); }
static clg_tensor *f_argmin_dim0_gather(clg_tensor **x) { return arg_gather(x[0], 0, 0); }

static const gcase cases[] = {
	{"max_dim0", 1, {3}, {{4, 3, 5}}, -1, 1, f_max_dim0},
	{"max_dim1_keepdim", 1, {3}, {{3, 4, 5}}, -1, 1, f_max_dim1_keep},
	{"min_dim0_keepdim", 1, {3}, {{4, 3, 5}}, -1, 1, f_min_dim0_keep},
	{"min_dim_minus2", 1, {3}, {{3, 4, 5}}, -1, 1, f_min_dim_m2},
	{"max_lastdim_keepdim", 1, {2}, {{3, 6}}, -1, 1, f_max_last_keep},
	{"max_dim0_ties", 1, {2}, {{3, 4}}, -1, 1, f_max_dim0_ties},
	{"min_dim1_ties_keepdim", 1, {3}, {{2, 3, 4}}, -1, 1, f_min_dim1_ties_keep},
	{"argmax_dim1_gather", 1, {3}, {{3, 4, 5}}, -1, 1, f_argmax_dim1_gather},
	{"argmin_dim0_gather", 1, {3}, {{4, 3, 5}}, -1, 1, f_argmin_dim0_gather},
};

const gcase *grad_cases_reduce(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
