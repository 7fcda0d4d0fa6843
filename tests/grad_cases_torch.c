/* Gradient-check cases of the ops PyTorch users reach for (issue 31, item 3; see tests/test_grad.h):
 * clamp with tensor bounds; conv_transpose2d; interpolate (nearest, linear, bilinear); pooling's ceil_mode and count_include_pad; GroupNorm and RMSNorm; matmul over several batch dims with broadcasting and 1-D operands. The forward loss of each case is checked against the reference in
 * double too, so these cases hold the composed ops' values on every device as well. */
#include "test_grad.h"

#include <math.h>
#include <string.h>

/* ---- clamp with tensor bounds ---- */

/* x (3, 4) within broadcast bounds lo (4) and hi (3, 1); lo is pushed below hi by a margin so that
 * the central differences do not step across a crossing (the crossed case has its own) */
static clg_tensor *f_clamp_tensor(clg_tensor **x)
{
	clg_tensor *lo = clg_affine(x[1], 0.5, -0.6), *hi = clg_affine(x[2], 0.5, 0.6);
	clg_tensor *y = clg_clamp_tensor(x[0], lo, hi);
	clg_free(lo);
	clg_free(hi);
	return y;
}
static clg_tensor *f_clamp_tensor_min(clg_tensor **x) { return clg_clamp_tensor(x[0], x[1], NULL); }
static clg_tensor *f_clamp_tensor_max(clg_tensor **x) { return clg_clamp_tensor(x[0], NULL, x[1]); }
/* lo above hi everywhere: the result is hi, all of the gradient goes to hi */
static clg_tensor *f_clamp_tensor_crossed(clg_tensor **x)
{
	clg_tensor *lo = clg_affine(x[1], 0.2, 2.0), *y = clg_clamp_tensor(x[0], lo, x[2]);
	clg_free(lo);
	return y;
}

/* ---- matmul as torch.matmul ---- */

static clg_tensor *f_matmul(clg_tensor **x) { return clg_matmul(x[0], x[1]); }
/* attention's shapes: q (B, H, T, D) a permuted view of (B, T, H, D) (its batch dims do not
 * merge: copied), k^T (B, H, D, T) the transpose of a contiguous k (folded as a view) */
static clg_tensor *f_matmul_heads(clg_tensor **x)
{
	clg_tensor *q = clg_permute(x[0], (int[]){0, 2, 1, 3}), *k = clg_transpose(x[1], -1, -2);
	clg_tensor *y = q && k ? clg_matmul(q, k) : NULL;
	clg_free(q);
	clg_free(k);
	return y;
}

/* ---- pooling's ceil_mode and count_include_pad ---- */

/* 5x5 in 3x3 windows of stride 2: ceil_mode adds a window overhanging the last column and row */
static clg_tensor *f_max_pool_ceil(clg_tensor **x) { return clg_max_pool2d_ex(x[0], 3, 3, 2, 2, 0, 1, 1, 1, 1); }
static clg_tensor *f_max_pool_dil_ceil(clg_tensor **x) { return clg_max_pool2d_ex(x[0], 2, 2, 2, 2, 1, 1, 2, 2, 1); }
static clg_tensor *f_avg_pool_ceil(clg_tensor **x) { return clg_avg_pool2d_ex(x[0], 3, 3, 2, 2, 1, 1, 1, 1); }
static clg_tensor *f_avg_pool_nopad(clg_tensor **x) { return clg_avg_pool2d_ex(x[0], 3, 2, 2, 1, 1, 1, 0, 0); }
static clg_tensor *f_avg_pool_ceil_nopad(clg_tensor **x) { return clg_avg_pool2d_ex(x[0], 2, 3, 3, 2, 1, 1, 1, 0); }

/* ---- conv_transpose2d ---- */

static clg_tensor *f_convt(clg_tensor **x) { return clg_conv_transpose2d(x[0], x[1], x[2], 2, 2, 1, 1, 1, 1, 1, 1, 1); }
static clg_tensor *f_convt_groups(clg_tensor **x) { return clg_conv_transpose2d(x[0], x[1], NULL, 1, 2, 0, 1, 0, 1, 1, 1, 2); }
static clg_tensor *f_convt_dilation(clg_tensor **x) { return clg_conv_transpose2d(x[0], x[1], x[2], 3, 1, 2, 0, 2, 0, 2, 1, 1); }

/* ---- interpolate ---- */

static clg_tensor *f_up_nearest2(clg_tensor **x) { return clg_interpolate(x[0], NULL, (double[]){2, 2}, CLG_INTERP_NEAREST, 0); }
static clg_tensor *f_up_nearest_size(clg_tensor **x) { return clg_interpolate(x[0], (int64_t[]){5, 3}, NULL, CLG_INTERP_NEAREST, 0); }
static clg_tensor *f_up_bilinear(clg_tensor **x) { return clg_interpolate(x[0], (int64_t[]){7, 5}, NULL, CLG_INTERP_LINEAR, 0); }
static clg_tensor *f_up_bilinear_ac(clg_tensor **x) { return clg_interpolate(x[0], NULL, (double[]){2, 1.5}, CLG_INTERP_LINEAR, 1); }
static clg_tensor *f_up_linear_1d(clg_tensor **x) { return clg_interpolate(x[0], NULL, (double[]){1.5}, CLG_INTERP_LINEAR, 0); }
static clg_tensor *f_down_bilinear(clg_tensor **x) { return clg_interpolate(x[0], (int64_t[]){3, 2}, NULL, CLG_INTERP_LINEAR, 0); }

/* ---- GroupNorm, RMSNorm ---- */

static clg_tensor *f_group_norm(clg_tensor **x) { return clg_group_norm(x[0], 2, x[1], x[2], 1e-5); }
static clg_tensor *f_group_norm_plain(clg_tensor **x) { return clg_group_norm(x[0], 3, NULL, NULL, 1e-3); }
/* a permuted (not contiguous) input, 3-D (N, C, L), one group (a layer norm over C and L) */
static clg_tensor *f_group_norm_view(clg_tensor **x)
{
	clg_tensor *t = clg_transpose(x[0], 1, 2), *y = t ? clg_group_norm(t, 1, x[1], NULL, 1e-5) : NULL;
	clg_free(t);
	return y;
}
static clg_tensor *f_rms_norm(clg_tensor **x) { return clg_rms_norm(x[0], 1, x[1], -1); }
static clg_tensor *f_rms_norm_2d(clg_tensor **x) { return clg_rms_norm(x[0], 2, x[1], 1e-3); }
static clg_tensor *f_rms_norm_plain(clg_tensor **x) { return clg_rms_norm(x[0], 1, NULL, 1e-6); }

static const gcase cases[] = {
	{"interpolate_nearest_x2", 1, {4}, {{1, 2, 3, 4}}, -1, 1, f_up_nearest2},
	{"interpolate_nearest_size", 1, {4}, {{2, 1, 4, 5}}, -1, 1, f_up_nearest_size},
	{"interpolate_bilinear", 1, {4}, {{1, 2, 4, 3}}, -1, 1, f_up_bilinear},
	{"interpolate_bilinear_align_corners", 1, {4}, {{2, 1, 3, 4}}, -1, 1, f_up_bilinear_ac},
	{"interpolate_linear_1d", 1, {3}, {{2, 3, 5}}, -1, 1, f_up_linear_1d},
	{"interpolate_bilinear_down", 1, {4}, {{1, 2, 7, 5}}, -1, 1, f_down_bilinear},
	{"conv_transpose2d", 3, {4, 4, 1}, {{2, 3, 3, 3}, {3, 2, 3, 3}, {2}}, -1, 1, f_convt},
	{"conv_transpose2d_groups", 2, {4, 4}, {{1, 4, 3, 2}, {4, 3, 2, 3}}, -1, 1, f_convt_groups},
	{"conv_transpose2d_dilation", 3, {4, 4, 1}, {{1, 2, 3, 4}, {2, 3, 3, 2}, {3}}, -1, 1, f_convt_dilation},
	{"max_pool2d_ceil", 1, {4}, {{1, 2, 5, 6}}, -1, 1, f_max_pool_ceil},
	{"max_pool2d_dilation_ceil", 1, {4}, {{1, 2, 6, 5}}, -1, 1, f_max_pool_dil_ceil},
	{"avg_pool2d_ceil", 1, {4}, {{2, 1, 6, 5}}, -1, 1, f_avg_pool_ceil},
	{"avg_pool2d_no_pad_count", 1, {4}, {{1, 2, 5, 4}}, -1, 1, f_avg_pool_nopad},
	{"avg_pool2d_ceil_no_pad_count", 1, {4}, {{1, 2, 7, 6}}, -1, 1, f_avg_pool_ceil_nopad},
	{"group_norm", 3, {4, 1, 1}, {{2, 4, 3, 3}, {4}, {4}}, -1, 1, f_group_norm},
	{"group_norm_plain", 1, {3}, {{2, 6, 5}}, -1, 1, f_group_norm_plain},
	{"group_norm_view", 2, {3, 1}, {{2, 5, 3}, {3}}, -1, 1, f_group_norm_view},
	{"rms_norm", 2, {3, 1}, {{2, 3, 6}, {6}}, -1, 1, f_rms_norm},
	{"rms_norm_2d", 2, {3, 2}, {{3, 2, 4}, {2, 4}}, -1, 1, f_rms_norm_2d},
	{"rms_norm_plain", 1, {2}, {{4, 7}}, -1, 1, f_rms_norm_plain},
	{"matmul_4d", 2, {4, 4}, {{2, 3, 4, 5}, {2, 3, 5, 2}}, -1, 1, f_matmul},
	{"matmul_2d_4d", 2, {2, 4}, {{4, 5}, {2, 3, 5, 3}}, -1, 1, f_matmul},
	{"matmul_4d_2d", 2, {4, 2}, {{2, 3, 4, 5}, {5, 3}}, -1, 1, f_matmul},
	{"matmul_broadcast", 2, {4, 3}, {{2, 1, 3, 4}, {3, 4, 2}}, -1, 1, f_matmul},
	{"matmul_heads_views", 2, {4, 4}, {{2, 4, 3, 5}, {2, 3, 6, 5}}, -1, 1, f_matmul_heads},
	{"matmul_vec_mat", 2, {1, 3}, {{4}, {2, 4, 3}}, -1, 1, f_matmul},
	{"matmul_mat_vec", 2, {3, 1}, {{2, 3, 4}, {4}}, -1, 1, f_matmul},
	{"matmul_dot", 2, {1, 1}, {{5}, {5}}, -1, 1, f_matmul},
	{"clamp_tensor", 3, {2, 1, 2}, {{3, 4}, {4}, {3, 1}}, -1.5, 1.5, f_clamp_tensor},
	{"clamp_tensor_min", 2, {2, 2}, {{3, 5}, {3, 5}}, -1, 1, f_clamp_tensor_min},
	{"clamp_tensor_max", 2, {3, 1}, {{2, 3, 4}, {4}}, -1, 1, f_clamp_tensor_max},
	{"clamp_tensor_crossed", 3, {2, 2, 2}, {{3, 4}, {3, 4}, {1, 4}}, -1, 1, f_clamp_tensor_crossed},
};

const gcase *grad_cases_torch(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
