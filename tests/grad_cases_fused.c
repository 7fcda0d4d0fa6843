/* Gradient-check cases of the fused hot-path ops (see tests/test_grad.h): linear + activation
 * (relu, gelu, none; a strided input), cross-entropy against soft targets, on a strided view
 * of the logits and on logits near 1e4, and a small MLP of fused layers. */
#include "test_grad.h"

#include <stdint.h>

static clg_tensor *f_linear_relu(clg_tensor **x) { return clg_linear_act(x[0], x[1], x[2], CLG_ACT_RELU); }
static clg_tensor *f_linear_gelu(clg_tensor **x) { return clg_linear_act(x[0], x[1], x[2], CLG_ACT_GELU); }
static clg_tensor *f_linear_none(clg_tensor **x) { return clg_linear_act(x[0], x[1], x[2], CLG_ACT_NONE); }
static clg_tensor *f_linear_relu_nobias(clg_tensor **x) { return clg_linear_act(x[0], x[1], NULL, CLG_ACT_RELU); }

static clg_tensor *f_linear_gelu_strided(clg_tensor **x)
{
	/* x stored transposed: the GEMM takes it as it is, the fused ops see strided views of g */
	clg_tensor *xt = clg_transpose(x[0], 0, 1), *y = clg_linear_act(xt, x[1], x[2], CLG_ACT_GELU);
	clg_free(xt);
	return y;
}

/* Fixed soft targets (N, C) (rows of positive weights summing to 1) in x's dtype: constants, not
 * inputs, so the central differences see them unchanged. */
static clg_tensor *soft_targets(clg_tensor *like, int64_t N, int64_t C)
{
	double d[64];
	float f[64];
	for (int64_t n = 0; n < N; n++) {
		double s = 0;
		for (int64_t c = 0; c < C; c++)
			s += d[n * C + c] = (double)(1 + (n * 7 + c * 3) % 5);
		for (int64_t c = 0; c < C; c++)
			f[n * C + c] = (float)(d[n * C + c] /= s);
	}
	return clg_dtype_of(like) == CLG_F64 ? clg_from_host(clg_device_of(like), CLG_F64, CLG_SHAPE(N, C), d)
					      : clg_from_host(clg_device_of(like), CLG_F32, CLG_SHAPE(N, C), f);
}

/* cross-entropy of x[0] (4, 6) against soft targets */
static clg_tensor *f_xent_soft(clg_tensor **x)
{
	clg_tensor *t = soft_targets(x[0], 4, 6), *y;
	y = clg_cross_entropy(x[0], t, 0.0);
	clg_free(t);
	return y;
}

/* the same on a transposed view of the logits, with label smoothing */
static clg_tensor *f_xent_strided(clg_tensor **x)
{
	clg_tensor *t = soft_targets(x[0], 4, 6), *xt, *y;
	xt = clg_transpose(x[0], 0, 1);
	y = clg_cross_entropy(xt, t, 0.2);
	clg_free(t);
	clg_free(xt);
	return y;
}

/* cross-entropy of x[0] (10, 6), logits near 1e4, against soft targets: the fused op keeps each
 * row's max and the log of its sum apart, as a logsumexp rounded to float32 at 1e4 (ulp 2^-10) made
 * exp(x - lse) off by up to 4.9e-4 and the gradient's rows sum to ~4e-4 instead of 0 */
static clg_tensor *f_xent_offset(clg_tensor **x)
{
	clg_tensor *t = soft_targets(x[0], 10, 6), *y;
	y = clg_cross_entropy(x[0], t, 0.0);
	clg_free(t);
	return y;
}

/* linear -> relu -> linear -> gelu -> linear -> cross-entropy, the layers sharing x[1] and x[2] */
static clg_tensor *f_mlp_fused(clg_tensor **x)
{
	clg_tensor *h1 = clg_linear_act(x[0], x[1], x[2], CLG_ACT_RELU);
	clg_tensor *h2 = clg_linear_act(h1, x[1], x[2], CLG_ACT_GELU);
	clg_tensor *o = clg_linear_act(h2, x[1], x[2], CLG_ACT_NONE), *t = soft_targets(x[0], 4, 4), *y;
	y = clg_cross_entropy(o, t, 0.0);
	clg_free(h1);
	clg_free(h2);
	clg_free(o);
	clg_free(t);
	return y;
}

static const gcase cases[] = {
	{"linear_relu", 3, {2, 2, 1}, {{4, 5}, {3, 5}, {3}}, -1, 1, f_linear_relu},
	{"linear_gelu", 3, {2, 2, 1}, {{4, 5}, {3, 5}, {3}}, -1, 1, f_linear_gelu},
	{"linear_act_none", 3, {2, 2, 1}, {{4, 5}, {3, 5}, {3}}, -1, 1, f_linear_none},
	/* 40 rows: the GPU shape of bias_act_backward sums db over several row blocks (a second pass) */
	{"linear_relu_tall", 3, {2, 2, 1}, {{40, 5}, {3, 5}, {3}}, -1, 1, f_linear_relu},
	/* 8 outputs: the CPU shape's four-column vector kernel (bias_act_backward_v4) and its db */
	{"linear_gelu_wide", 3, {2, 2, 1}, {{6, 5}, {8, 5}, {8}}, -1, 1, f_linear_gelu},
	{"linear_relu_wide", 3, {2, 2, 1}, {{6, 5}, {8, 5}, {8}}, -1, 1, f_linear_relu},
	{"linear_relu_nobias", 2, {2, 2}, {{4, 5}, {3, 5}}, -1, 1, f_linear_relu_nobias},
	{"linear_gelu_strided", 3, {2, 2, 1}, {{5, 4}, {3, 5}, {3}}, -1, 1, f_linear_gelu_strided},
	{"xent_soft_targets", 1, {2}, {{4, 6}}, -2, 2, f_xent_soft},
	{"xent_strided_smoothing", 1, {2}, {{6, 4}}, -2, 2, f_xent_strided},
	{"xent_logits_1e4", 1, {2}, {{10, 6}}, 1e4f - 2, 1e4f + 2, f_xent_offset, 2e-5},
	{"mlp_fused", 3, {2, 2, 1}, {{4, 4}, {4, 4}, {4}}, -1, 1, f_mlp_fused},
};

const gcase *grad_cases_fused(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
