/* Gradient-check cases of the losses with options (see tests/test_grad.h): cross-entropy and NLL
 * with int32 class indices or dense rows, class weights, ignore_index (rows of -100, an in-range
 * ignored class, an index out of range), label smoothing, each reduction, 1-D, 2-D and 3-D logits,
 * a transposed view, and the fused and unfused paths (CLGRAD_FUSED off through
 * clg_set_fused_ops). The reference and the devices run the same frontend formula, so the
 * gradient check alone would pass a wrong formula: each case also compares its loss with a host
 * computation in double of PyTorch's definition (host_loss, written from
 * torch.nn.functional.cross_entropy's definition, independently of frontend/ops_loss.c). */
#include "test_grad.h"

#include <math.h>
#include <string.h>

/* ---- host helpers ---- */

/* a (n) tensor in like's float dtype from doubles */
static clg_tensor *float_tensor(clg_tensor *like, int nd, const int64_t *shape, const double *d, int64_t n)
{
	float f[256];
	if (clg_dtype_of(like) == CLG_F64)
		return clg_from_host(clg_device_of(like), CLG_F64, nd, shape, d);
	for (int64_t i = 0; i < n && i < 256; i++)
		f[i] = (float)d[i];
	return clg_from_host(clg_device_of(like), CLG_F32, nd, shape, f);
}

/* ---- losses ---- */

typedef struct {
	int nd;
	int64_t shape[3];       /* the logits' (as computed; a transposed case stores (C, N)) */
	const int32_t *y;       /* class indices, or NULL: dense soft targets */
	int weighted;
	double eps;
	int64_t ignore;
	clg_reduction red;
	int nll;                /* nll_loss_ex on log_softmax(x) */
	int unfused;            /* with the fused ops off */
	int transposed;         /* the input is (C, N), used as its transpose (a strided view) */
} xspec;

static const double class_w[8] = {0.5, 2.0, 1.0, 0.25, 1.5, 0.75, 1.25, 3.0};

/* soft target row n: positive, summing to 1 */
static void soft_row(int64_t n, int64_t C, double *t)
{
	double s = 0;
	for (int64_t c = 0; c < C; c++)
		s += t[c] = (double)(1 + (n * 7 + c * 3) % 5);
	for (int64_t c = 0; c < C; c++)
		t[c] /= s;
}

/* PyTorch's loss (class dim last) in double: out gets the N row losses (NONE) or one value */
static void host_loss(const xspec *s, const double *x, int64_t N, int64_t C, double *out)
{
	double total = 0, den = 0;
	for (int64_t n = 0; n < N; n++) {
		const double *r = x + n * C;
		double lp[8], m = -INFINITY, se = 0, loss = 0;
		for (int64_t c = 0; c < C; c++)
			m = fmax(m, r[c]);
		for (int64_t c = 0; c < C; c++)
			se += exp(r[c] - m);
		for (int64_t c = 0; c < C; c++)
			lp[c] = r[c] - (m + log(se)); /* the nll cases take log_softmax(x) */
		if (s->y) {
			int32_t y = s->y[n];
			if (y != s->ignore && y >= 0 && y < C) {
				double wy = s->weighted ? class_w[y] : 1, smooth = 0;
				for (int64_t c = 0; c < C; c++)
					smooth -= (s->weighted ? class_w[c] : 1) * lp[c];
				loss = (1 - s->eps) * -wy * lp[y] + s->eps / (double)C * smooth;
				den += wy;
			}
		} else {
			double t[8];
			soft_row(n, C, t);
			for (int64_t c = 0; c < C; c++)
				loss -= (s->weighted ? class_w[c] : 1) * ((1 - s->eps) * t[c] + s->eps / (double)C) * lp[c];
			den += 1;
		}
		if (s->red == CLG_REDUCTION_NONE)
			out[n] = loss;
		total += loss;
	}
	if (s->red == CLG_REDUCTION_SUM)
		out[0] = total;
	else if (s->red == CLG_REDUCTION_MEAN)
		out[0] = total / den;
}

static clg_tensor *run_xent(clg_tensor *in, const xspec *s)
{
	clg_backend *be = clg_device_of(in);
	clg_loss_opts o = CLG_LOSS_OPTS_INIT;
	clg_tensor *x = s->transposed ? clg_transpose(in, 0, 1) : clg_retain(in), *t = NULL, *w = NULL, *lp = NULL, *y = NULL;
	int64_t C = s->shape[s->nd - 1], N = 1;
	double xs[256], want[64], got[64], td[256];
	int fused = clg_fused_ops_enabled();

	for (int d = 0; d < s->nd - 1; d++)
		N *= s->shape[d];
	if (s->y) {
		t = clg_from_host(be, CLG_I32, s->nd - 1, s->shape, s->y);
	} else {
		for (int64_t n = 0; n < N; n++)
			soft_row(n, C, td + n * C);
		t = float_tensor(in, s->nd, s->shape, td, N * C);
	}
	if (s->weighted)
		w = float_tensor(in, 1, &C, class_w, C);
	o.weight = w;
	o.label_smoothing = s->eps;
	o.ignore_index = s->ignore;
	o.reduction = s->red;
	if (s->unfused)
		clg_set_fused_ops(0);
	if (s->nll) {
		lp = clg_log_softmax(x);
		y = clg_nll_loss_ex(lp, t, &o);
	} else {
		y = clg_cross_entropy_ex(x, t, &o);
	}
	clg_set_fused_ops(fused);
	CHECK(y != NULL, "loss failed: %s", clg_last_error());
	if (y) {
		int64_t ny = s->red == CLG_REDUCTION_NONE ? N : 1;
		CHECK(clg_numel(y) == ny && clg_ndim(y) == (s->red == CLG_REDUCTION_NONE ? s->nd - 1 : 0),
		      "loss has %d dims, %lld elements", clg_ndim(y), (long long)clg_numel(y));
		if (clg_numel(y) == ny && grad_read_doubles(x, xs, N * C) && grad_read_doubles(y, got, ny)) {
			host_loss(s, xs, N, C, want);
			for (int64_t i = 0; i < ny; i++)
				CHECK(fabs(got[i] - want[i]) <= 2e-5 * (1 + fabs(want[i])), "loss[%lld] %.9g, PyTorch's definition %.9g",
				      (long long)i, got[i], want[i]);
		}
	}
	clg_free(lp);
	clg_free(w);
	clg_free(t);
	clg_free(x);
	return y;
}

/* (N = 6, C = 5) rows: a row of -100 (ignored by default); with an index out of range */
static const int32_t y6[6] = {3, -100, 0, 4, 2, 1};
static const int32_t y6_oor[6] = {3, 7, 0, 4, -100, 1};
/* (2, 3) of C = 5 with class 2 ignored: three rows */
static const int32_t y23[6] = {1, 2, 2, 0, 4, 2};
static const int32_t y1[1] = {3};
static const int32_t y_none[4] = {-100, -100, -100, -100};

#define MEAN CLG_REDUCTION_MEAN
#define SUM CLG_REDUCTION_SUM
#define NONE CLG_REDUCTION_NONE

static const xspec s_idx_mean = {2, {6, 5}, y6, 0, 0, -100, MEAN, 0, 0, 0};
static const xspec s_idx_w_mean = {2, {6, 5}, y6, 1, 0, -100, MEAN, 0, 0, 0};
static const xspec s_idx_w_sum = {2, {6, 5}, y6, 1, 0, -100, SUM, 0, 0, 0};
static const xspec s_idx_w_none = {2, {6, 5}, y6, 1, 0, -100, NONE, 0, 0, 0};
static const xspec s_idx_ls_w_mean = {2, {6, 5}, y6, 1, 0.2, -100, MEAN, 0, 0, 0};
static const xspec s_idx_ls_sum = {2, {6, 5}, y6, 0, 0.3, -100, SUM, 0, 0, 0};
static const xspec s_idx_ls_none = {2, {6, 5}, y6_oor, 0, 0.3, -100, NONE, 0, 0, 0};
static const xspec s_idx_3d = {3, {2, 3, 5}, y23, 1, 0.1, 2, MEAN, 0, 0, 0};
static const xspec s_idx_3d_none = {3, {2, 3, 5}, y23, 1, 0.1, 2, NONE, 0, 0, 0};
static const xspec s_idx_oor_sum = {2, {6, 5}, y6_oor, 1, 0, 0, SUM, 0, 0, 0};
static const xspec s_idx_w_mean_u = {2, {6, 5}, y6, 1, 0, -100, MEAN, 0, 1, 0};
static const xspec s_idx_ls_w_mean_u = {2, {6, 5}, y6, 1, 0.2, -100, MEAN, 0, 1, 0};
static const xspec s_idx_3d_u = {3, {2, 3, 5}, y23, 1, 0.1, 2, MEAN, 0, 1, 0};
static const xspec s_idx_oor_sum_u = {2, {6, 5}, y6_oor, 1, 0.2, 0, SUM, 0, 1, 0};
static const xspec s_idx_transposed = {2, {6, 5}, y6, 1, 0.1, -100, MEAN, 0, 0, 1};
static const xspec s_idx_1d = {1, {5}, y1, 1, 0.1, -100, MEAN, 0, 0, 0};
static const xspec s_idx_1d_none = {1, {5}, y1, 1, 0.1, -100, NONE, 0, 0, 0};
static const xspec s_idx_all_ignored = {2, {4, 5}, y_none, 1, 0.1, -100, SUM, 0, 0, 0};
static const xspec s_dense_ls_w_mean = {2, {6, 5}, NULL, 1, 0.2, -100, MEAN, 0, 0, 0};
static const xspec s_dense_3d_none = {3, {2, 3, 4}, NULL, 1, 0, -100, NONE, 0, 0, 0};
static const xspec s_dense_w_sum_u = {2, {6, 5}, NULL, 1, 0.1, -100, SUM, 0, 1, 0};
static const xspec s_dense_3d_mean = {3, {2, 3, 4}, NULL, 1, 0.1, -100, MEAN, 0, 0, 0};
static const xspec s_nll_w_mean = {2, {6, 5}, y6, 1, 0, -100, MEAN, 1, 0, 0};
static const xspec s_nll_3d_none = {3, {2, 3, 5}, y23, 1, 0, 2, NONE, 1, 0, 0};
static const xspec s_nll_oor_sum = {2, {6, 5}, y6_oor, 0, 0, -100, SUM, 1, 0, 0};
static const xspec s_nll_dense_w_mean = {2, {6, 5}, NULL, 1, 0, -100, MEAN, 1, 0, 0};

#define XCASE(fn, spec) \
	static clg_tensor *fn(clg_tensor **x) { return run_xent(x[0], &spec); }
XCASE(f_idx_mean, s_idx_mean)
XCASE(f_idx_w_mean, s_idx_w_mean)
XCASE(f_idx_w_sum, s_idx_w_sum)
XCASE(f_idx_w_none, s_idx_w_none)
XCASE(f_idx_ls_w_mean, s_idx_ls_w_mean)
XCASE(f_idx_ls_sum, s_idx_ls_sum)
XCASE(f_idx_ls_none, s_idx_ls_none)
XCASE(f_idx_3d, s_idx_3d)
XCASE(f_idx_3d_none, s_idx_3d_none)
XCASE(f_idx_oor_sum, s_idx_oor_sum)
XCASE(f_idx_w_mean_u, s_idx_w_mean_u)
XCASE(f_idx_ls_w_mean_u, s_idx_ls_w_mean_u)
XCASE(f_idx_3d_u, s_idx_3d_u)
XCASE(f_idx_oor_sum_u, s_idx_oor_sum_u)
XCASE(f_idx_transposed, s_idx_transposed)
XCASE(f_idx_1d, s_idx_1d)
XCASE(f_idx_1d_none, s_idx_1d_none)
XCASE(f_idx_all_ignored, s_idx_all_ignored)
XCASE(f_dense_ls_w_mean, s_dense_ls_w_mean)
XCASE(f_dense_3d_none, s_dense_3d_none)
XCASE(f_dense_w_sum_u, s_dense_w_sum_u)
XCASE(f_dense_3d_mean, s_dense_3d_mean)
XCASE(f_nll_w_mean, s_nll_w_mean)
XCASE(f_nll_3d_none, s_nll_3d_none)
XCASE(f_nll_oor_sum, s_nll_oor_sum)
XCASE(f_nll_dense_w_mean, s_nll_dense_w_mean)

static const gcase cases[] = {
	{"xent_idx_mean", 1, {2}, {{6, 5}}, -2, 2, f_idx_mean},
	{"xent_idx_weight_mean", 1, {2}, {{6, 5}}, -2, 2, f_idx_w_mean},
	{"xent_idx_weight_sum", 1, {2}, {{6, 5}}, -2, 2, f_idx_w_sum},
	{"xent_idx_weight_none", 1, {2}, {{6, 5}}, -2, 2, f_idx_w_none},
	{"xent_idx_smooth_weight_mean", 1, {2}, {{6, 5}}, -2, 2, f_idx_ls_w_mean},
	{"xent_idx_smooth_sum", 1, {2}, {{6, 5}}, -2, 2, f_idx_ls_sum},
	{"xent_idx_smooth_none_out_of_range", 1, {2}, {{6, 5}}, -2, 2, f_idx_ls_none},
	{"xent_idx_3d_ignore2_weight_smooth_mean", 1, {3}, {{2, 3, 5}}, -2, 2, f_idx_3d},
	{"xent_idx_3d_ignore2_none", 1, {3}, {{2, 3, 5}}, -2, 2, f_idx_3d_none},
	{"xent_idx_ignore0_out_of_range_sum", 1, {2}, {{6, 5}}, -2, 2, f_idx_oor_sum},
	{"xent_idx_weight_mean_unfused", 1, {2}, {{6, 5}}, -2, 2, f_idx_w_mean_u},
	{"xent_idx_smooth_weight_mean_unfused", 1, {2}, {{6, 5}}, -2, 2, f_idx_ls_w_mean_u},
	{"xent_idx_3d_unfused", 1, {3}, {{2, 3, 5}}, -2, 2, f_idx_3d_u},
	{"xent_idx_ignore0_smooth_sum_unfused", 1, {2}, {{6, 5}}, -2, 2, f_idx_oor_sum_u},
	{"xent_idx_transposed", 1, {2}, {{5, 6}}, -2, 2, f_idx_transposed},
	{"xent_idx_1d", 1, {1}, {{5}}, -2, 2, f_idx_1d},
	{"xent_idx_1d_none", 1, {1}, {{5}}, -2, 2, f_idx_1d_none},
	{"xent_idx_all_ignored_sum", 1, {2}, {{4, 5}}, -2, 2, f_idx_all_ignored},
	{"xent_dense_weight_smooth_mean", 1, {2}, {{6, 5}}, -2, 2, f_dense_ls_w_mean},
	{"xent_dense_3d_none", 1, {3}, {{2, 3, 4}}, -2, 2, f_dense_3d_none},
	{"xent_dense_weight_sum_unfused", 1, {2}, {{6, 5}}, -2, 2, f_dense_w_sum_u},
	{"xent_dense_3d_mean", 1, {3}, {{2, 3, 4}}, -2, 2, f_dense_3d_mean},
	{"nll_idx_weight_mean", 1, {2}, {{6, 5}}, -2, 2, f_nll_w_mean},
	{"nll_idx_3d_ignore2_none", 1, {3}, {{2, 3, 5}}, -2, 2, f_nll_3d_none},
	{"nll_idx_out_of_range_sum", 1, {2}, {{6, 5}}, -2, 2, f_nll_oor_sum},
	{"nll_dense_weight_mean", 1, {2}, {{6, 5}}, -2, 2, f_nll_dense_w_mean},
};

const gcase *grad_cases_loss(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
