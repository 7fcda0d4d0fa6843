/* Gradient-check cases of fused attention (see tests/test_grad.h): the fused ops where the device
 * has them (ATTENTION_FWD / ATTENTION_BWD), at T = 7 over several heads, causal and not, more keys
 * than queries and fewer, T = 33 (across the CPU shape's blocks of rows), q, k, v as the permuted views a model makes; and
 * the composite (CLGRAD_FUSED off for the call) on the same shapes, which stays the reference; the
 * options of clg_scaled_dot_product_attention_ex: an explicit scale (fused), boolean and additive
 * masks broadcast over (B, H, Tq, Tk) (checked against a host computation too), dropout of a seed
 * (the same mask on every device), and dropout through the packed projection. */
#include "test_grad.h"

#include <math.h>

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

/* ---- the options (clg_attention_opts): scale, masks, dropout ---- */

static clg_tensor *with_opts(clg_tensor **x, clg_attention_opts *o)
{
	return clg_scaled_dot_product_attention_ex(x[0], x[1], x[2], o);
}

/* an explicit scale on the fused path, causal */
static clg_tensor *f_scale(clg_tensor **x)
{
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;
	o.causal = 1, o.scale = 0.3;
	return with_opts(x, &o);
}

/* q (1, 2, 3, 4), k and v (1, 2, 5, 4); the mask's values (3, 5): key j of query i excluded where
 * (i + 2 j) % 3 == 0 (each query keeps some key) */
enum { MQ = 3, MK = 5, MD = 4, MH = 2 };
static int masked(int i, int j) { return (i + 2 * j) % 3 == 0; }

/* softmax(scale q k^T [excluded: -inf]) v on the host, for head h: out (MQ, MD) */
static void host_attention(const double *q, const double *k, const double *v, int h, double scale, double *out)
{
	for (int i = 0; i < MQ; i++) {
		double s[MK], mx = -INFINITY, z = 0;
		for (int j = 0; j < MK; j++) {
			s[j] = 0;
			for (int d = 0; d < MD; d++)
				s[j] += q[(h * MQ + i) * MD + d] * k[(h * MK + j) * MD + d];
			s[j] = masked(i, j) ? -INFINITY : s[j] * scale;
			mx = fmax(mx, s[j]);
		}
		for (int j = 0; j < MK; j++)
			z += s[j] = exp(s[j] - mx);
		for (int d = 0; d < MD; d++) {
			out[i * MD + d] = 0;
			for (int j = 0; j < MK; j++)
				out[i * MD + d] += s[j] / z * v[(h * MK + j) * MD + d];
		}
	}
}

/* y against the host computation of the same mask and scale */
static void check_masked(clg_tensor **x, clg_tensor *y, double scale)
{
	double q[MH * MQ * MD], k[MH * MK * MD], v[MH * MK * MD], got[MH * MQ * MD], want[MQ * MD];
	if (!y || !grad_read_doubles(x[0], q, MH * MQ * MD) || !grad_read_doubles(x[1], k, MH * MK * MD) ||
	    !grad_read_doubles(x[2], v, MH * MK * MD) || !grad_read_doubles(y, got, MH * MQ * MD))
		return;
	for (int h = 0; h < MH; h++) {
		host_attention(q, k, v, h, scale, want);
		for (int i = 0; i < MQ * MD; i++)
			CHECK(fabs(got[h * MQ * MD + i] - want[i]) < 1e-4, "masked attention head %d [%d]: %g, host %g", h, i,
			      got[h * MQ * MD + i], want[i]);
	}
}

/* a boolean (int32) mask (1, 1, MQ, MK), broadcast over the heads: nonzero attends (7 and -2 too) */
static clg_tensor *f_mask_bool(clg_tensor **x)
{
	int32_t m[MQ * MK];
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;
	clg_tensor *y;
	for (int i = 0; i < MQ; i++)
		for (int j = 0; j < MK; j++)
			m[i * MK + j] = masked(i, j) ? 0 : (j % 2 ? 7 : -2);
	o.attn_mask = clg_from_host(clg_device_of(x[0]), CLG_I32, CLG_SHAPE(1, 1, MQ, MK), m);
	o.scale = 0.7;
	y = with_opts(x, &o);
	check_masked(x, y, 0.7);
	clg_free(o.attn_mask);
	return y;
}

/* an additive float mask (MQ, MK) of -inf and finite offsets that cancel in the softmax of a row */
static clg_tensor *f_mask_float(clg_tensor **x)
{
	double m[MQ * MK];
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;
	clg_tensor *y;
	for (int i = 0; i < MQ; i++)
		for (int j = 0; j < MK; j++)
			m[i * MK + j] = masked(i, j) ? -INFINITY : 0.0;
	/* in the inputs' dtype (the suite runs float32 and float64) */
	if (clg_dtype_of(x[0]) == CLG_F64) {
		o.attn_mask = clg_from_host(clg_device_of(x[0]), CLG_F64, CLG_SHAPE(MQ, MK), m);
	} else {
		float mf[MQ * MK];
		for (int i = 0; i < MQ * MK; i++)
			mf[i] = (float)m[i];
		o.attn_mask = clg_from_host(clg_device_of(x[0]), CLG_F32, CLG_SHAPE(MQ, MK), mf);
	}
	y = with_opts(x, &o);
	check_masked(x, y, 1.0 / sqrt((double)MD));
	clg_free(o.attn_mask);
	return y;
}

/* dropout 0.25 of a fixed seed: the same mask on every device, a fixed function of q, k, v */
static clg_tensor *f_dropout(clg_tensor **x)
{
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;
	o.causal = 1, o.dropout_p = 0.25, o.seed = 1234;
	return with_opts(x, &o);
}

/* the packed projection with dropout (the gpt model's training path) */
static clg_tensor *f_qkv_dropout(clg_tensor **x)
{
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;
	o.causal = 1, o.dropout_p = 0.2, o.seed = 99;
	return clg_attention_qkv_ex(x[0], 2, &o);
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
	{"attn_scale", 3, {4, 4, 4}, {{2, 2, 7, 8}, {2, 2, 7, 8}, {2, 2, 7, 8}}, -1, 1, f_scale},
	{"attn_mask_bool", 3, {4, 4, 4}, {{1, MH, MQ, MD}, {1, MH, MK, MD}, {1, MH, MK, MD}}, -1, 1, f_mask_bool},
	{"attn_mask_float", 3, {4, 4, 4}, {{1, MH, MQ, MD}, {1, MH, MK, MD}, {1, MH, MK, MD}}, -1, 1, f_mask_float},
	{"attn_dropout", 3, {4, 4, 4}, {{2, 2, 6, 4}, {2, 2, 6, 4}, {2, 2, 6, 4}}, -1, 1, f_dropout},
	{"attn_qkv_dropout", 1, {3}, {{2, 5, 12}}, -1, 1, f_qkv_dropout},
};

const gcase *grad_cases_attention(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
