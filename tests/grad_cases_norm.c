/* Gradient-check cases of the norm family (see tests/test_grad.h): layer_norm (with and without
 * gamma / beta), batch_norm (training, 2-D and 4-D; evaluation), scaled dot-product attention
 * (3-D and 4-D, causal or not) and a tiny transformer block.
 *
 * The batch_norm builders also check values the gradient check cannot see, against host
 * formulas in double: the running statistics after a training step (biased variance normalises,
 * unbiased variance updates running_var) and the outputs of training and evaluation mode. They
 * check on float32 calls only, i.e. once per device in the analytic pass (the reference's
 * central differences run in float64), and report through CHECK like the harness does. */
#include "test_grad.h"

#include <math.h>
#include <string.h>

#define BN_EPS 1e-5
#define BN_MOMENTUM 0.3

/* ---- layer norm ---- */

static clg_tensor *f_layer_norm(clg_tensor **x) { return clg_layer_norm(x[0], x[1], x[2], 1e-5); }
static clg_tensor *f_layer_norm_plain(clg_tensor **x) { return clg_layer_norm(x[0], NULL, NULL, 1e-5); }
static clg_tensor *f_layer_norm_gamma(clg_tensor **x) { return clg_layer_norm(x[0], x[1], NULL, 1e-3); }

static clg_tensor *f_layer_norm_strided(clg_tensor **x)
{
	/* rows of a transposed view: the fused ops at a non-unit row stride, forward and backward */
	clg_tensor *t = clg_transpose(x[0], 0, 1), *y = clg_layer_norm(t, NULL, x[1], 1e-5);
	clg_free(t);
	return y;
}

/* ---- batch norm ---- */

/* The host copy of a float32 tensor, widened to double (malloc'd; NULL on failure). */
static double *host_f64(clg_tensor *t)
{
	int64_t n = clg_numel(t);
	float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
	double *d = malloc(sizeof(double) * (size_t)(n ? n : 1));
	if (!f || !d || clg_to_host(t, f, sizeof(float) * (size_t)n) != CLG_OK) {
		free(f);
		free(d);
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
		d[i] = f[i];
	free(f);
	return d;
}

/* Largest |a - b| / (1 + |b|) over n values. */
static double max_rel_diff(const double *a, const double *b, int64_t n)
{
	double e = 0;
	for (int64_t i = 0; i < n; i++)
		e = fmax(e, fabs(a[i] - b[i]) / (1 + fabs(b[i])));
	return e;
}

/* Fixed running statistics of C channels (not derived from the inputs, so that they are constants
 * for the central differences). */
static clg_tensor *running_stat(clg_tensor *like, int64_t C, int var)
{
	double d[16];
	float f[16];
	for (int64_t c = 0; c < C && c < 16; c++) {
		d[c] = var ? 0.5 + 0.25 * (double)c : 0.1 * (double)c - 0.15;
		f[c] = (float)d[c];
	}
	return clg_dtype_of(like) == CLG_F64 ? clg_from_host(clg_device_of(like), CLG_F64, CLG_SHAPE(C), d)
					      : clg_from_host(clg_device_of(like), CLG_F32, CLG_SHAPE(C), f);
}

/* Host batch norm of x (N, C, S) (S = H*W, 1 for 2-D input): the expected output with batch
 * statistics (training) or the running ones (rm, rv), and the expected running statistics after
 * one training step from rm, rv. */
static void host_batch_norm(const double *x, const double *gamma, const double *beta, const double *rm,
			    const double *rv, int64_t N, int64_t C, int64_t S, int training, double *y,
			    double *rm_new, double *rv_new)
{
	int64_t M = N * S;
	for (int64_t c = 0; c < C; c++) {
		double mean = 0, var = 0, m, rstd;
		for (int64_t n = 0; n < N; n++)
			for (int64_t s = 0; s < S; s++)
				mean += x[(n * C + c) * S + s];
		mean /= (double)M;
		for (int64_t n = 0; n < N; n++)
			for (int64_t s = 0; s < S; s++) {
				double t = x[(n * C + c) * S + s] - mean;
				var += t * t;
			}
		rm_new[c] = (1 - BN_MOMENTUM) * rm[c] + BN_MOMENTUM * mean;
		rv_new[c] = (1 - BN_MOMENTUM) * rv[c] + BN_MOMENTUM * var / (double)(M - 1);
		var /= (double)M;
		m = training ? mean : rm[c];
		rstd = 1 / sqrt((training ? var : rv[c]) + BN_EPS);
		for (int64_t n = 0; n < N; n++)
			for (int64_t s = 0; s < S; s++) {
				int64_t i = (n * C + c) * S + s;
				y[i] = (x[i] - m) * rstd * gamma[c] + beta[c];
			}
	}
}

/* Runs batch_norm in the given mode on fresh copies of the fixed running statistics and checks
 * its output, and (training) the updated statistics, against host_batch_norm. float32 only. */
static void check_batch_norm(clg_tensor **in, int training)
{
	clg_tensor *x = in[0], *rm, *rv, *y;
	int64_t N = clg_shape(x)[0], C = clg_shape(x)[1], S = clg_numel(x) / (N * C), n = clg_numel(x);
	double *hx, *hg, *hb, *hrm, *hrv, *hy, *ey, *erm, *erv, *nrm, *nrv;
	const char *dev = clg_device_of(x)->info.name;

	if (clg_dtype_of(x) != CLG_F32)
		return;
	clg_no_grad_begin();
	rm = running_stat(x, C, 0);
	rv = running_stat(x, C, 1);
	hrm = host_f64(rm);
	hrv = host_f64(rv);
	y = clg_batch_norm(x, in[1], in[2], rm, rv, BN_MOMENTUM, BN_EPS, training);
	CHECK(y != NULL, "batch_norm (%s) on %s failed: %s", training ? "training" : "evaluation", dev, clg_last_error());
	hx = host_f64(x);
	hg = host_f64(in[1]);
	hb = host_f64(in[2]);
	hy = y ? host_f64(y) : NULL;
	nrm = host_f64(rm);
	nrv = host_f64(rv);
	ey = malloc(sizeof(double) * (size_t)n);
	erm = malloc(sizeof(double) * (size_t)C);
	erv = malloc(sizeof(double) * (size_t)C);
	if (hx && hg && hb && hy && hrm && hrv && nrm && nrv && ey && erm && erv) {
		host_batch_norm(hx, hg, hb, hrm, hrv, N, C, S, training, ey, erm, erv);
		CHECK(max_rel_diff(hy, ey, n) < 1e-5, "batch_norm (%s) on %s: output off by %.3g",
		      training ? "training" : "evaluation", dev, max_rel_diff(hy, ey, n));
		if (training) {
			CHECK(max_rel_diff(nrm, erm, C) < 1e-6, "batch_norm on %s: running_mean off by %.3g", dev,
			      max_rel_diff(nrm, erm, C));
			CHECK(max_rel_diff(nrv, erv, C) < 1e-6, "batch_norm on %s: running_var off by %.3g (unbiased variance expected)",
			      dev, max_rel_diff(nrv, erv, C));
		} else {
			CHECK(max_rel_diff(nrm, hrm, C) == 0 && max_rel_diff(nrv, hrv, C) == 0,
			      "batch_norm evaluation on %s changed the running statistics", dev);
		}
	} else {
		CHECK(0, "batch_norm check on %s: could not read results: %s", dev, clg_last_error());
	}
	free(hx), free(hg), free(hb), free(hy), free(hrm), free(hrv), free(nrm), free(nrv), free(ey), free(erm), free(erv);
	clg_free(y);
	clg_free(rm);
	clg_free(rv);
	clg_no_grad_end();
}

/* Training mode: batch statistics; the running statistics (updated in place) play no part in the
 * output, so the gradient is that of the batch normalisation. */
static clg_tensor *f_batch_norm_train(clg_tensor **in)
{
	clg_tensor *rm, *rv, *y;
	check_batch_norm(in, 1);
	rm = running_stat(in[0], clg_shape(in[0])[1], 0);
	rv = running_stat(in[0], clg_shape(in[0])[1], 1);
	y = clg_batch_norm(in[0], in[1], in[2], rm, rv, BN_MOMENTUM, BN_EPS, 1);
	clg_free(rm);
	clg_free(rv);
	return y;
}

/* Training mode without running statistics and without gamma: only x is differentiated through
 * the normalisation (beta still gets its gradient). */
static clg_tensor *f_batch_norm_train_bare(clg_tensor **in) { return clg_batch_norm(in[0], NULL, in[1], NULL, NULL, 0.1, BN_EPS, 1); }

/* Evaluation mode: the fixed running statistics normalise. */
static clg_tensor *f_batch_norm_eval(clg_tensor **in)
{
	clg_tensor *rm, *rv, *y;
	check_batch_norm(in, 0);
	rm = running_stat(in[0], clg_shape(in[0])[1], 0);
	rv = running_stat(in[0], clg_shape(in[0])[1], 1);
	y = clg_batch_norm(in[0], in[1], in[2], rm, rv, BN_MOMENTUM, BN_EPS, 0);
	clg_free(rm);
	clg_free(rv);
	return y;
}

/* ---- attention ---- */

static clg_tensor *f_attention(clg_tensor **x) { return clg_scaled_dot_product_attention(x[0], x[1], x[2], 0, 0.0); }
static clg_tensor *f_attention_causal(clg_tensor **x)
{
	return clg_scaled_dot_product_attention(x[0], x[1], x[2], 1, 0.0);
}

/* q, k, v as permuted (non-contiguous) views of (B, T, H, Dh) inputs, as a model makes them */
static clg_tensor *f_attention_heads_view(clg_tensor **x)
{
	static const int perm[] = {0, 2, 1, 3};
	clg_tensor *q = clg_permute(x[0], perm), *k = clg_permute(x[1], perm), *v = clg_permute(x[2], perm);
	clg_tensor *y = clg_scaled_dot_product_attention(q, k, v, 1, 0.0);
	clg_free(q);
	clg_free(k);
	clg_free(v);
	return y;
}

/* ---- a tiny transformer block ---- */

/* x (B*T, D) = (8, 6), gamma (6), w (4*D, D) = (24, 6) holding Wq, Wk, Wv, Wo:
 * h = layer_norm(x) * gamma; q, k, v = h Wq^T, h Wk^T, h Wv^T split into 2 heads of 3;
 * a = causal attention; out = (x + a) Wo^T. */
static clg_tensor *f_block(clg_tensor **in)
{
	static const int to_heads[] = {0, 2, 1, 3}; /* (B, T, H, Dh) <-> (B, H, T, Dh) */
	const int64_t B = 2, T = 4, H = 2, Dh = 3, D = H * Dh;
	clg_tensor *t[24] = {0}, *y;
	int n = 0;
	clg_tensor *h = t[n++] = clg_layer_norm(in[0], in[1], NULL, 1e-5);
	clg_tensor *w[4], *qkv[3];
	for (int i = 0; i < 4; i++)
		w[i] = t[n++] = clg_slice(in[2], 0, i * D, (i + 1) * D, 1);
	for (int i = 0; i < 3; i++) {
		clg_tensor *p = t[n++] = clg_linear(h, w[i], NULL);
		clg_tensor *r = t[n++] = clg_reshape(p, CLG_SHAPE(B, T, H, Dh));
		qkv[i] = t[n++] = clg_permute(r, to_heads);
	}
	clg_tensor *a = t[n++] = clg_scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], 1, 0.0);
	clg_tensor *ap = t[n++] = clg_permute(a, to_heads);
	clg_tensor *a2 = t[n++] = clg_reshape(ap, CLG_SHAPE(B * T, D));
	clg_tensor *res = t[n++] = clg_add(in[0], a2);
	y = clg_linear(res, w[3], NULL);
	for (int i = 0; i < n; i++)
		clg_free(t[i]);
	return y;
}

static const gcase cases[] = {
	{"layer_norm", 3, {3, 1, 1}, {{3, 2, 5}, {5}, {5}}, -1, 1, f_layer_norm},
	{"layer_norm_plain", 1, {2}, {{4, 6}}, -1, 1, f_layer_norm_plain},
	{"layer_norm_gamma", 2, {2, 1}, {{3, 7}, {7}}, -1, 1, f_layer_norm_gamma},
	{"layer_norm_strided", 2, {2, 1}, {{4, 6}, {4}}, -1, 1, f_layer_norm_strided},
	{"batch_norm_train_2d", 3, {2, 1, 1}, {{6, 4}, {4}, {4}}, -1, 1, f_batch_norm_train},
	{"batch_norm_train_4d", 3, {4, 1, 1}, {{3, 2, 2, 3}, {2}, {2}}, -1, 1, f_batch_norm_train},
	{"batch_norm_train_bare", 2, {4, 1}, {{2, 3, 2, 2}, {3}}, -1, 1, f_batch_norm_train_bare},
	{"batch_norm_eval_2d", 3, {2, 1, 1}, {{5, 3}, {3}, {3}}, -1, 1, f_batch_norm_eval},
	{"batch_norm_eval_4d", 3, {4, 1, 1}, {{2, 3, 2, 2}, {3}, {3}}, -1, 1, f_batch_norm_eval},
	{"attention_3d", 3, {3, 3, 3}, {{2, 3, 4}, {2, 5, 4}, {2, 5, 3}}, -1, 1, f_attention},
	{"attention_3d_causal", 3, {3, 3, 3}, {{2, 4, 3}, {2, 4, 3}, {2, 4, 3}}, -1, 1, f_attention_causal},
	{"attention_4d", 3, {4, 4, 4}, {{1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 2}}, -1, 1, f_attention},
	{"attention_4d_causal", 3, {4, 4, 4}, {{2, 2, 4, 3}, {2, 2, 4, 3}, {2, 2, 4, 3}}, -1, 1, f_attention_causal},
	{"attention_heads_view", 3, {4, 4, 4}, {{1, 4, 2, 3}, {1, 4, 2, 3}, {1, 4, 2, 3}}, -1, 1, f_attention_heads_view},
	{"transformer_block", 3, {2, 1, 2}, {{8, 6}, {6}, {24, 6}}, -1, 1, f_block},
};

const gcase *grad_cases_norm(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
