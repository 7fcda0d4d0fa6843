/* Gradient-check cases of the conv family (see tests/test_grad.h): conv2d with and without bias,
 * with stride, padding, dilation, a rectangular kernel and groups; max and average pooling; and a
 * small conv -> relu -> max_pool -> linear stack. Inputs are uniform random, so the values in a
 * max-pooling window are far apart compared with the checker's step (no ties within h). */
#include "test_grad.h"

static clg_tensor *f_conv_bias(clg_tensor **x) { return clg_conv2d(x[0], x[1], x[2], 1, 1, 1, 1, 1, 1, 1); }
static clg_tensor *f_conv_s2_p2_d2(clg_tensor **x) { return clg_conv2d(x[0], x[1], NULL, 2, 2, 2, 2, 2, 2, 1); }
static clg_tensor *f_conv_rect(clg_tensor **x) { return clg_conv2d(x[0], x[1], x[2], 2, 1, 0, 1, 1, 2, 1); }
static clg_tensor *f_conv_groups(clg_tensor **x) { return clg_conv2d(x[0], x[1], x[2], 1, 1, 1, 1, 1, 1, 2); }
static clg_tensor *f_maxpool(clg_tensor **x) { return clg_max_pool2d(x[0], 3, 3, 2, 2, 1, 1); }
static clg_tensor *f_maxpool_overlap(clg_tensor **x) { return clg_max_pool2d(x[0], 2, 3, 1, 2, 1, 0); }
static clg_tensor *f_avgpool(clg_tensor **x) { return clg_avg_pool2d(x[0], 3, 3, 2, 2, 1, 1); }
static clg_tensor *f_avgpool_rect(clg_tensor **x) { return clg_avg_pool2d(x[0], 2, 3, 1, 2, 0, 1); }

/* conv (1 -> 3 channels, 3x3, padding 1) -> relu -> 2x2 max pool -> flatten -> linear (27 -> 4) */
static clg_tensor *f_conv_pool_linear(clg_tensor **x)
{
	clg_tensor *c = clg_conv2d(x[0], x[1], NULL, 1, 1, 1, 1, 1, 1, 1), *r = clg_relu(c);
	clg_tensor *p = clg_max_pool2d(r, 2, 2, 2, 2, 0, 0), *f = clg_reshape(p, CLG_SHAPE(2, 27));
	clg_tensor *y = clg_linear(f, x[2], NULL);
	clg_free(c);
	clg_free(r);
	clg_free(p);
	clg_free(f);
	return y;
}

/* strided inputs: conv on every other column of x, max pool on the conv output transposed (H <-> W) */
static clg_tensor *f_conv_pool_strided(clg_tensor **x)
{
	clg_tensor *s = clg_slice(x[0], 3, 0, 8, 2), *c = clg_conv2d(s, x[1], NULL, 1, 1, 1, 0, 1, 1, 1);
	clg_tensor *t = clg_transpose(c, 2, 3), *y = clg_max_pool2d(t, 2, 2, 1, 1, 0, 0);
	clg_free(s);
	clg_free(c);
	clg_free(t);
	return y;
}

/* conv2d -> relu -> max_pool2d as one node (clg_conv2d_relu_max_pool2d): 2x2 pools that tile the
 * output, pools that leave its last row and column out, overlapping padded pools after a strided
 * conv without bias */
static clg_tensor *f_crp(clg_tensor **x) { return clg_conv2d_relu_max_pool2d(x[0], x[1], x[2], 1, 1, 2, 2, 0); }
static clg_tensor *f_crp_odd(clg_tensor **x) { return clg_conv2d_relu_max_pool2d(x[0], x[1], x[2], 1, 0, 2, 2, 0); }
static clg_tensor *f_crp_overlap(clg_tensor **x) { return clg_conv2d_relu_max_pool2d(x[0], x[1], NULL, 2, 1, 3, 2, 1); }

static const gcase cases[] = {
	{"conv2d_bias", 3, {4, 4, 1}, {{2, 3, 5, 5}, {4, 3, 3, 3}, {4}}, -1, 1, f_conv_bias},
	{"conv2d_s2_p2_d2", 2, {4, 4}, {{1, 2, 7, 7}, {3, 2, 3, 3}}, -1, 1, f_conv_s2_p2_d2},
	{"conv2d_rect", 3, {4, 4, 1}, {{2, 2, 6, 5}, {3, 2, 2, 3}, {3}}, -1, 1, f_conv_rect},
	{"conv2d_groups2", 3, {4, 4, 1}, {{1, 4, 6, 5}, {6, 2, 3, 3}, {6}}, -1, 1, f_conv_groups},
	/* N*OH*OW (512) large against the weight gradient's outputs: split-K (4 chunks) on GPU-shaped
	 * devices */
	{"conv2d_splitk", 3, {4, 4, 1}, {{2, 1, 16, 16}, {2, 1, 3, 3}, {2}}, -1, 1, f_conv_bias},
	{"conv2d_splitk_groups", 3, {4, 4, 1}, {{2, 2, 16, 16}, {2, 1, 3, 3}, {2}}, -1, 1, f_conv_groups},
	{"max_pool2d", 1, {4}, {{2, 2, 7, 7}}, -1, 1, f_maxpool},
	{"max_pool2d_overlap", 1, {4}, {{1, 3, 6, 7}}, -1, 1, f_maxpool_overlap},
	{"avg_pool2d", 1, {4}, {{2, 2, 7, 7}}, -1, 1, f_avgpool},
	{"avg_pool2d_rect", 1, {4}, {{1, 3, 6, 7}}, -1, 1, f_avgpool_rect},
	{"conv_pool_strided", 2, {4, 4}, {{1, 2, 5, 8}, {2, 2, 3, 2}}, -1, 1, f_conv_pool_strided},
	{"conv_relu_pool", 3, {4, 4, 1}, {{2, 3, 6, 6}, {4, 3, 3, 3}, {4}}, -1, 1, f_crp},
	{"conv_relu_pool_odd", 3, {4, 4, 1}, {{2, 2, 7, 5}, {3, 2, 3, 3}, {3}}, -1, 1, f_crp_odd},
	{"conv_relu_pool_overlap", 2, {4, 4}, {{1, 2, 9, 9}, {3, 2, 3, 3}}, -1, 1, f_crp_overlap},
	{"conv_pool_linear", 3, {4, 4, 2}, {{2, 1, 6, 6}, {3, 1, 3, 3}, {4, 27}}, -1, 1, f_conv_pool_linear},
};

const gcase *grad_cases_conv(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
