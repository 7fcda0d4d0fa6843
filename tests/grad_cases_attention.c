/* Gradient-check cases of fused attention (see tests/test_grad.h): the fused ops where the device
 * has them (ATTENTION_FWD / ATTENTION_BWD), at T = 7 over several heads, causal and not, more keys
 * than queries and fewer, T = 33 (across the CPU shape's blocks of rows), q, k, v as the permuted views a model makes; and
 * the composite (CLGRAD_FUSED off for the call) on the same shapes, which stays the reference. */
#include "test_grad.h"

static clg_tensor *f_full(clg_tensor **x) { return clg_scaled_dot_product_attention(x[0], x[1], x[2], 0, 0.0); }
static clg_tensor *f_causal(clg_tensor **x) { return clg_scaled_dot_product_attention(x[0], x[1], x[2], 1, 0.0); }

/* (B, T, H, Dh) inputs seen as (B, H, T, Dh) */
static clg_tensor *f_views(clg_tensor **x)
{
	static const int perm[] = {0, 2, 1, 3};
	clg_tensor *q = clg_permute(x[0], perm), *k = clg_permute(x[1], perm), *v = clg_permute(x[2], perm);
	clg_tensor *y = clg_scaled_dot_product_attention(q, k, v, 1, 0.0);
	clg_free(q);
	clg_free(k);
	clg_free(v);
	return y;
}

/* the composite path on the same case */
static clg_tensor *f_composed_causal(clg_tensor **x)
{
	int on = clg_fused_ops_enabled();
	clg_tensor *y;
	clg_set_fused_ops(0);
	y = clg_scaled_dot_product_attention(x[0], x[1], x[2], 1, 0.0);
	clg_set_fused_ops(on);
	return y;
}

static const gcase cases[] = {
	{"attn_fused_4d", 3, {4, 4, 4}, {{2, 2, 7, 8}, {2, 2, 7, 8}, {2, 2, 7, 8}}, -1, 1, f_full},
	{"attn_fused_4d_causal", 3, {4, 4, 4}, {{2, 2, 7, 8}, {2, 2, 7, 8}, {2, 2, 7, 8}}, -1, 1, f_causal},
	{"attn_fused_3d_causal_tk", 3, {3, 3, 3}, {{3, 5, 4}, {3, 9, 4}, {3, 9, 6}}, -1, 1, f_causal},
	{"attn_fused_3d_causal_tq", 3, {3, 3, 3}, {{2, 9, 4}, {2, 5, 4}, {2, 5, 3}}, -1, 1, f_causal},
	/* the CPU shape's row blocks (16 rows a work-item at these widths): two blocks and a partial
	 * third on both sides, a causal block that starts inside the keys */
	{"attn_fused_4d_causal_t33", 3, {4, 4, 4}, {{1, 2, 33, 4}, {1, 2, 33, 4}, {1, 2, 33, 4}}, -1, 1, f_causal},
	{"attn_fused_heads_view", 3, {4, 4, 4}, {{2, 7, 2, 4}, {2, 7, 2, 4}, {2, 7, 2, 4}}, -1, 1, f_views},
	{"attn_composed_causal", 3, {4, 4, 4}, {{2, 2, 7, 8}, {2, 2, 7, 8}, {2, 2, 7, 8}}, -1, 1, f_composed_causal},
};

const gcase *grad_cases_attention(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
