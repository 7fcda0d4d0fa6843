/* Gradient-check cases of residual add + layer norm with gamma and beta (see tests/test_grad.h):
 * clg_add_layer_norm with the sum it returns feeding the result too (so the gradient of s = x + r
 * arrives from two sides, as in a pre-norm block), each of gamma and beta checked, rows of length
 * 1, 63 and 65, more rows than one block of the backward's column sums, a transposed input, and
 * clg_layer_norm with gamma and beta (the same op without the residual); and attention over one
 * packed Q, K, V projection (clg_attention_qkv: the heads strided views of it), with one head and
 * two, T = 1, and a packed input that is itself a strided view. */
#include "test_grad.h"

#include <stdint.h>

/* a fixed (C) vector in like's dtype, 0.5 + (j % 5) / 4: a constant gamma or beta */
static clg_tensor *const_vec(clg_tensor *like, int64_t C)
{
	double d[128];
	float f[128];
	for (int64_t j = 0; j < C && j < 128; j++)
		f[j] = (float)(d[j] = 0.5 + (double)(j % 5) / 4);
	return clg_dtype_of(like) == CLG_F64 ? clg_from_host(clg_device_of(like), CLG_F64, CLG_SHAPE(C), d)
					      : clg_from_host(clg_device_of(like), CLG_F32, CLG_SHAPE(C), f);
}

static int64_t last_dim(clg_tensor *t) { return clg_shape(t)[clg_ndim(t) - 1]; }

/* y * s: both outputs of the op carry gradient */
static clg_tensor *y_times_s(clg_tensor *y, clg_tensor *s)
{
	clg_tensor *o = y && s ? clg_mul(y, s) : NULL;
	clg_free(y);
	clg_free(s);
	return o;
}

/* x, r, gamma; beta constant */
static clg_tensor *f_add_ln_gamma(clg_tensor **x)
{
	clg_tensor *b = const_vec(x[0], last_dim(x[0])), *s = NULL, *y = clg_add_layer_norm(x[0], x[1], x[2], b, 1e-5, &s);
	clg_free(b);
	return y_times_s(y, s);
}

/* x, r, beta; gamma constant */
static clg_tensor *f_add_ln_beta(clg_tensor **x)
{
	clg_tensor *ga = const_vec(x[0], last_dim(x[0])), *s = NULL, *y = clg_add_layer_norm(x[0], x[1], ga, x[2], 1e-5, &s);
	clg_free(ga);
	return y_times_s(y, s);
}

/* the residual a transposed view (rows at stride 1, elements at stride N) */
static clg_tensor *f_add_ln_strided(clg_tensor **x)
{
	clg_tensor *ga = const_vec(x[0], last_dim(x[0])), *rt = clg_transpose(x[1], 0, 1), *s = NULL, *y;
	y = clg_add_layer_norm(x[0], rt, ga, x[2], 1e-3, &s);
	clg_free(ga);
	clg_free(rt);
	return y_times_s(y, s);
}

/* the result only: s's gradient from the norm alone */
static clg_tensor *f_add_ln_plain(clg_tensor **x)
{
	clg_tensor *b = const_vec(x[0], last_dim(x[0])), *y = clg_add_layer_norm(x[0], x[1], x[2], b, 1e-5, NULL);
	clg_free(b);
	return y;
}

static clg_tensor *f_ln_affine(clg_tensor **x) { return clg_layer_norm(x[0], x[1], x[2], 1e-5); }

static clg_tensor *f_qkv_2heads(clg_tensor **x) { return clg_attention_qkv(x[0], 2, 1); }
static clg_tensor *f_qkv_1head(clg_tensor **x) { return clg_attention_qkv(x[0], 1, 1); }
static clg_tensor *f_qkv_open(clg_tensor **x) { return clg_attention_qkv(x[0], 2, 0); }

/* qkv a permuted view (B and T swapped): rows at a stride other than 3 D */
static clg_tensor *f_qkv_strided(clg_tensor **x)
{
	clg_tensor *t = clg_transpose(x[0], 0, 1), *y = clg_attention_qkv(t, 2, 1);
	clg_free(t);
	return y;
}

static const gcase cases[] = {
	{"attention_qkv", 1, {3}, {{2, 3, 12}}, -1, 1, f_qkv_2heads},
	{"attention_qkv_1head", 1, {3}, {{1, 4, 9}}, -1, 1, f_qkv_1head},
	{"attention_qkv_t1", 1, {3}, {{2, 1, 12}}, -1, 1, f_qkv_2heads},
	{"attention_qkv_open", 1, {3}, {{1, 5, 6}}, -1, 1, f_qkv_open},
	{"attention_qkv_strided", 1, {3}, {{3, 2, 12}}, -1, 1, f_qkv_strided},
	{"add_layer_norm_gamma", 3, {2, 2, 1}, {{3, 5}, {3, 5}, {5}}, -1, 1, f_add_ln_gamma},
	{"add_layer_norm_beta", 3, {2, 2, 1}, {{3, 5}, {3, 5}, {5}}, -1, 1, f_add_ln_beta},
	{"add_layer_norm_row63", 3, {2, 2, 1}, {{2, 63}, {2, 63}, {63}}, -1, 1, f_add_ln_gamma},
	{"add_layer_norm_row65", 3, {2, 2, 1}, {{2, 65}, {2, 65}, {65}}, -1, 1, f_add_ln_beta},
	{"add_layer_norm_row1", 3, {2, 2, 1}, {{3, 1}, {3, 1}, {1}}, -1, 1, f_add_ln_beta},
	/* 40 rows: several blocks of rows whose column partials the second kernel adds */
	{"add_layer_norm_tall", 3, {2, 2, 1}, {{40, 4}, {40, 4}, {4}}, -1, 1, f_add_ln_gamma},
	{"add_layer_norm_3d", 3, {3, 3, 1}, {{2, 3, 6}, {2, 3, 6}, {6}}, -1, 1, f_add_ln_plain},
	{"add_layer_norm_strided", 3, {2, 2, 1}, {{4, 6}, {6, 4}, {6}}, -1, 1, f_add_ln_strided},
	{"layer_norm_affine_row63", 3, {2, 1, 1}, {{3, 63}, {63}, {63}}, -1, 1, f_ln_affine},
	{"layer_norm_affine_tall", 3, {2, 1, 1}, {{37, 3}, {3}, {3}}, -1, 1, f_ln_affine},
};

const gcase *grad_cases_addnorm(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
