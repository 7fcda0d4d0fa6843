/* Mixed precision (clg_cast, autocast, train --precision mixed) on the reference and every device:
 *   - clg_cast: values rounded to half, the gradient back in the source's dtype; binary ops on
 *     float16 and float32 compute in float32, each operand getting its gradient in its dtype;
 *   - gradients through the mixed path: a two-layer MLP's loss and gradients under autocast
 *     (float16 GEMMs, float32 loss) against float32, within half-precision tolerance; masters'
 *     gradients are float32; a backward run inside autocast does not autocast;
 *   - conv2d under autocast (float16 columns, GEMMs and output) against float32;
 *   - batch norm (float32 statistics), max and average pooling and the fused linear epilogue on
 *     float16 activations under autocast, against float32; attention on float16 q, k, v under
 *     autocast (the fused kernels in float32) against float32;
 *   - the trainer: mixed reaches the float32 run's losses within a small tolerance, with the loss
 *     scaler on; a mixed checkpoint resumes in float32 and ends near the straight mixed run;
 *   - bad precision values refused, names parsed. */
#include "test_util.h"

#include <clgrad_train.h>
#include <math.h>
#include <string.h>

#define NFEAT 8
#define NHID 16
#define NCLASS 3
#define NROWS 32

static double max_abs(const float *x, int64_t n)
{
	double m = 0;
	for (int64_t i = 0; i < n; i++)
		m = fabs(x[i]) > m ? fabs(x[i]) : m;
	return m;
}

/* max |a - b| / max |b| */
static double rel_diff(const float *a, const float *b, int64_t n)
{
	double d = 0;
	for (int64_t i = 0; i < n; i++)
		d = fabs((double)a[i] - b[i]) > d || isnan(a[i]) ? fabs((double)a[i] - b[i]) : d;
	return d / (max_abs(b, n) > 0 ? max_abs(b, n) : 1);
}

static void test_cast(clg_backend *be)
{
	float x0[5] = {0.1f, -2.5f, 3.14159f, 1e-3f, 7.0f}, g[5], y[5];
	int64_t sh[1] = {5};
	uint16_t h[5];

	clg_scope_begin();
	clg_tensor *x = clg_from_host(be, CLG_F32, 1, sh, x0);
	clg_set_requires_grad(x, 1);
	clg_tensor *xh = clg_cast(x, CLG_F16);
	CHECK(xh && clg_dtype_of(xh) == CLG_F16, "cast to float16 on %s: %s", be->info.name, clg_last_error());
	CHECK_OK(clg_to_host(xh, h, sizeof(h)));
	for (int i = 0; i < 5; i++)
		CHECK(h[i] == clg_float_to_half(x0[i]), "%s: cast rounds %g to half 0x%04x, not 0x%04x", be->info.name,
		      x0[i], clg_float_to_half(x0[i]), h[i]);
	/* loss = sum(float32(xh * xh)): d/dx = 2 xh, arriving in float32 */
	clg_tensor *l = clg_sum(clg_cast(clg_mul(xh, xh), CLG_F32), 0, NULL, 0);
	CHECK_OK(clg_backward(l));
	CHECK(clg_grad(x) && clg_dtype_of(clg_grad(x)) == CLG_F32, "%s: the gradient of a float32 tensor is float32",
	      be->info.name);
	CHECK_OK(clg_to_host(clg_grad(x), g, sizeof(g)));
	for (int i = 0; i < 5; i++)
		CHECK(fabs(g[i] - 2 * clg_half_to_float(h[i])) <= 2e-3 * fabs(g[i]) + 1e-6, "%s: d/dx %g vs %g",
		      be->info.name, g[i], 2 * clg_half_to_float(h[i]));
	/* promotion: float16 + float32 computes in float32; each operand's gradient in its dtype */
	clg_tensor *a = clg_cast(clg_detach(x), CLG_F16);
	clg_set_requires_grad(a, 1);
	clg_zero_grad(x);
	clg_tensor *s = clg_add(a, x);
	CHECK(s && clg_dtype_of(s) == CLG_F32, "%s: float16 + float32 is float32", be->info.name);
	CHECK_OK(clg_backward(clg_sum(s, 0, NULL, 0)));
	CHECK(clg_grad(a) && clg_dtype_of(clg_grad(a)) == CLG_F16 && clg_dtype_of(clg_grad(x)) == CLG_F32,
	      "%s: gradients in each operand's dtype", be->info.name);
	CHECK_OK(clg_to_host(s, y, sizeof(y)));
	for (int i = 0; i < 5; i++)
		CHECK(y[i] == clg_half_to_float(h[i]) + x0[i], "%s: promoted sum %g", be->info.name, y[i]);
	CHECK(clg_cast(clg_detach(x), CLG_I32) == NULL && clg_last_status() == CLG_ERR_DTYPE, "cast to int32 refused");
	clg_scope_end();
}

typedef struct {
	float loss;
	float grad[4][NHID * NFEAT];
	int64_t n[4];
	clg_dtype grad_dt[4], hidden_dt, loss_dt;
} mlp_result;

/* loss = cross_entropy(linear(relu(linear(x, w1, b1)), w2, b2), y) and the parameters' gradients;
 * autocast: forward under autocast to float16; backward_inside: backward called inside it too. */
static void mlp_run(clg_backend *be, int autocast, int backward_inside, mlp_result *r)
{
	float x[NROWS * NFEAT], y[NROWS * NCLASS] = {0}, w1[NHID * NFEAT], b1[NHID], w2[NCLASS * NHID], b2[NCLASS];
	clg_tensor *p[4];

	t_fill_uniform(x, NROWS * NFEAT, 1, -1, 1);
	t_fill_uniform(w1, NHID * NFEAT, 2, -0.5f, 0.5f);
	t_fill_uniform(b1, NHID, 3, -0.1f, 0.1f);
	t_fill_uniform(w2, NCLASS * NHID, 4, -0.5f, 0.5f);
	t_fill_uniform(b2, NCLASS, 5, -0.1f, 0.1f);
	for (int i = 0; i < NROWS; i++)
		y[i * NCLASS + i % NCLASS] = 1;
	clg_scope_begin();
	p[0] = clg_from_host(be, CLG_F32, 2, (int64_t[]){NHID, NFEAT}, w1);
	p[1] = clg_from_host(be, CLG_F32, 1, (int64_t[]){NHID}, b1);
	p[2] = clg_from_host(be, CLG_F32, 2, (int64_t[]){NCLASS, NHID}, w2);
	p[3] = clg_from_host(be, CLG_F32, 1, (int64_t[]){NCLASS}, b2);
	for (int i = 0; i < 4; i++)
		clg_set_requires_grad(p[i], 1);
	if (autocast)
		clg_autocast_begin(CLG_F16);
	clg_tensor *xt = clg_from_host(be, CLG_F32, 2, (int64_t[]){NROWS, NFEAT}, x);
	clg_tensor *h = clg_linear_act(xt, p[0], p[1], CLG_ACT_RELU);
	clg_tensor *o = clg_linear(h, p[2], p[3]);
	clg_tensor *l = clg_cross_entropy(o, clg_from_host(be, CLG_F32, 2, (int64_t[]){NROWS, NCLASS}, y), 0.0);
	if (autocast && !backward_inside)
		clg_autocast_end();
	if (!autocast && backward_inside)
		clg_autocast_begin(CLG_F16);
	r->hidden_dt = h ? clg_dtype_of(h) : CLG_I32;
	r->loss_dt = l ? clg_dtype_of(l) : CLG_I32;
	CHECK_OK(clg_backward(l));
	if (backward_inside)
		clg_autocast_end();
	{
		double v = NAN;
		CHECK_OK(clg_item(l, &v));
		r->loss = (float)v;
	}
	for (int i = 0; i < 4; i++) {
		r->n[i] = clg_numel(p[i]);
		r->grad_dt[i] = clg_grad(p[i]) ? clg_dtype_of(clg_grad(p[i])) : CLG_I32;
		CHECK_OK(clg_to_host(clg_grad(p[i]), r->grad[i], sizeof(float) * (size_t)r->n[i]));
	}
	clg_scope_end();
	CHECK(clg_autocast_dtype() == CLG_F32, "autocast off after end");
}

static void test_mixed_grads(clg_backend *be)
{
	static mlp_result f32, mix, inside;

	mlp_run(be, 0, 0, &f32);
	mlp_run(be, 1, 0, &mix);
	mlp_run(be, 0, 1, &inside);
	CHECK(f32.hidden_dt == CLG_F32 && mix.hidden_dt == CLG_F16 && mix.loss_dt == CLG_F32,
	      "%s: autocast hidden %s, loss %s", be->info.name, clg_dtype_name(mix.hidden_dt), clg_dtype_name(mix.loss_dt));
	CHECK(fabs(mix.loss - f32.loss) <= 2e-3 * fabs(f32.loss), "%s: mixed loss %.6f vs float32 %.6f", be->info.name,
	      mix.loss, f32.loss);
	for (int i = 0; i < 4; i++) {
		double d = rel_diff(mix.grad[i], f32.grad[i], f32.n[i]);
		CHECK(mix.grad_dt[i] == CLG_F32, "%s: master %d's gradient is float32", be->info.name, i);
		/* float16 has 11 bits: a few of its ulps relative to the largest gradient */
		CHECK(d <= 1e-2, "%s: parameter %d's mixed gradient %.3g from float32 (relative to its max)", be->info.name,
		      i, d);
		CHECK(max_abs(mix.grad[i], mix.n[i]) > 0, "%s: parameter %d has a gradient", be->info.name, i);
		CHECK(!memcmp(inside.grad[i], f32.grad[i], sizeof(float) * (size_t)f32.n[i]),
		      "%s: a backward inside autocast does not autocast (parameter %d)", be->info.name, i);
	}
	printf("%s: mixed loss %.6f, float32 %.6f; gradients within %.2g, %.2g, %.2g, %.2g\n", be->info.name, mix.loss,
	       f32.loss, rel_diff(mix.grad[0], f32.grad[0], f32.n[0]), rel_diff(mix.grad[1], f32.grad[1], f32.n[1]),
	       rel_diff(mix.grad[2], f32.grad[2], f32.n[2]), rel_diff(mix.grad[3], f32.grad[3], f32.n[3]));
}

/* conv2d under autocast (in float16: columns, GEMMs with float32 accumulation, output) against float32: loss and the
 * gradients of x, w and b */
static void conv_run(clg_backend *be, int autocast, float *loss, float *gx, float *gw, float *gb, clg_dtype *out_dt)
{
	float x[2 * 3 * 6 * 6], w[4 * 3 * 3 * 3], b[4];
	clg_tensor *p[3];
	double v = NAN;

	t_fill_uniform(x, 2 * 3 * 6 * 6, 11, -1, 1);
	t_fill_uniform(w, 4 * 3 * 3 * 3, 12, -0.3f, 0.3f);
	t_fill_uniform(b, 4, 13, -0.1f, 0.1f);
	clg_scope_begin();
	p[0] = clg_from_host(be, CLG_F32, 4, (int64_t[]){2, 3, 6, 6}, x);
	p[1] = clg_from_host(be, CLG_F32, 4, (int64_t[]){4, 3, 3, 3}, w);
	p[2] = clg_from_host(be, CLG_F32, 1, (int64_t[]){4}, b);
	for (int i = 0; i < 3; i++)
		clg_set_requires_grad(p[i], 1);
	if (autocast)
		clg_autocast_begin(CLG_F16);
	clg_tensor *y = clg_conv2d(p[0], p[1], p[2], 1, 1, 1, 1, 1, 1, 1);
	clg_tensor *l = clg_mean(clg_mul(y, y), 0, NULL, 0);
	if (autocast)
		clg_autocast_end();
	*out_dt = y ? clg_dtype_of(y) : CLG_I32;
	CHECK_OK(clg_backward(l));
	CHECK_OK(clg_item(l, &v));
	*loss = (float)v;
	CHECK_OK(clg_to_host(clg_grad(p[0]), gx, sizeof(x)));
	CHECK_OK(clg_to_host(clg_grad(p[1]), gw, sizeof(w)));
	CHECK_OK(clg_to_host(clg_grad(p[2]), gb, sizeof(b)));
	clg_scope_end();
}

static void test_conv(clg_backend *be)
{
	static float l[2], gx[2][2 * 3 * 6 * 6], gw[2][4 * 3 * 3 * 3], gb[2][4];
	clg_dtype dt[2];

	for (int k = 0; k < 2; k++)
		conv_run(be, k, &l[k], gx[k], gw[k], gb[k], &dt[k]);
	CHECK(dt[1] == CLG_F16, "%s: autocast conv2d output float16 (%s)", be->info.name, clg_dtype_name(dt[1]));
	CHECK(fabs(l[1] - l[0]) <= 2e-3 * fabs(l[0]), "%s: conv loss mixed %.6f vs float32 %.6f", be->info.name, l[1], l[0]);
	CHECK(rel_diff(gx[1], gx[0], 2 * 3 * 6 * 6) <= 1e-2 && rel_diff(gw[1], gw[0], 4 * 3 * 3 * 3) <= 1e-2 &&
	      rel_diff(gb[1], gb[0], 4) <= 1e-2, "%s: conv gradients mixed vs float32: x %.3g, w %.3g, b %.3g",
	      be->info.name, rel_diff(gx[1], gx[0], 2 * 3 * 6 * 6), rel_diff(gw[1], gw[0], 4 * 3 * 3 * 3),
	      rel_diff(gb[1], gb[0], 4));
	CHECK(memcmp(gw[1], gw[0], sizeof(gw[0])) != 0, "%s: autocast changed conv2d's rounding (it ran in float16)",
	      be->info.name);
	printf("%s: conv2d mixed loss %.6f, float32 %.6f; gradients within x %.2g, w %.2g, b %.2g\n", be->info.name, l[1],
	       l[0], rel_diff(gx[1], gx[0], 2 * 3 * 6 * 6), rel_diff(gw[1], gw[0], 4 * 3 * 3 * 3), rel_diff(gb[1], gb[0], 4));
}

/* The 16-bit paths of pooling, batch norm and the fused linear epilogue under autocast, against
 * float32: x (2, 4, 6, 6) cast to float16, batch_norm (float16 out, float32 statistics),
 * max_pool2d + avg_pool2d in float16, linear_act (relu) fused in float16, cross-entropy in
 * float32. Loss and the gradients of x, gamma, beta, w and b. */
#define PN 2
#define PC 4
#define PH 6
#define PO 5
#define PFEAT (PC * (PH / 2) * (PH / 2))
typedef struct {
	float loss;
	float g[5][PN * PC * PH * PH];
	int64_t n[5];
	clg_dtype bn_dt, pool_dt, hid_dt, loss_dt;
} pool_result;

static void pool_run(clg_backend *be, int autocast, pool_result *r)
{
	float x[PN * PC * PH * PH], gam[PC], bet[PC], w[PO * PFEAT], b[PO], y[PN * PO] = {0};
	clg_tensor *p[5];
	double v = NAN;

	t_fill_uniform(x, PN * PC * PH * PH, 21, -2, 2);
	t_fill_uniform(gam, PC, 22, 0.5f, 1.5f);
	t_fill_uniform(bet, PC, 23, -0.2f, 0.2f);
	t_fill_uniform(w, PO * PFEAT, 24, -0.3f, 0.3f);
	t_fill_uniform(b, PO, 25, -0.1f, 0.1f);
	for (int i = 0; i < PN; i++)
		y[i * PO + (i + 1) % PO] = 1;
	clg_scope_begin();
	p[0] = clg_from_host(be, CLG_F32, CLG_SHAPE(PN, PC, PH, PH), x);
	p[1] = clg_from_host(be, CLG_F32, CLG_SHAPE(PC), gam);
	p[2] = clg_from_host(be, CLG_F32, CLG_SHAPE(PC), bet);
	p[3] = clg_from_host(be, CLG_F32, CLG_SHAPE(PO, PFEAT), w);
	p[4] = clg_from_host(be, CLG_F32, CLG_SHAPE(PO), b);
	for (int i = 0; i < 5; i++)
		clg_set_requires_grad(p[i], 1);
	if (autocast)
		clg_autocast_begin(CLG_F16);
	clg_tensor *xh = autocast ? clg_cast(p[0], CLG_F16) : p[0]; /* as a 16-bit activation arrives */
	clg_tensor *bn = clg_batch_norm(xh, p[1], p[2], NULL, NULL, 0.1, 1e-5, 1);
	clg_tensor *pl = clg_add(clg_max_pool2d(bn, 2, 2, 2, 2, 0, 0), clg_avg_pool2d(bn, 2, 2, 2, 2, 0, 0));
	clg_tensor *h = clg_linear_act(clg_reshape(pl, CLG_SHAPE(PN, PFEAT)), p[3], p[4], CLG_ACT_RELU);
	clg_tensor *l = clg_cross_entropy(h, clg_from_host(be, CLG_F32, CLG_SHAPE(PN, PO), y), 0.0);
	if (autocast)
		clg_autocast_end();
	r->bn_dt = bn ? clg_dtype_of(bn) : CLG_I32;
	r->pool_dt = pl ? clg_dtype_of(pl) : CLG_I32;
	r->hid_dt = h ? clg_dtype_of(h) : CLG_I32;
	r->loss_dt = l ? clg_dtype_of(l) : CLG_I32;
	CHECK_OK(clg_backward(l));
	CHECK_OK(clg_item(l, &v));
	r->loss = (float)v;
	for (int i = 0; i < 5; i++) {
		r->n[i] = clg_numel(p[i]);
		CHECK(clg_grad(p[i]) && clg_dtype_of(clg_grad(p[i])) == CLG_F32, "%s: tensor %d's gradient is float32",
		      be->info.name, i);
		CHECK_OK(clg_to_host(clg_grad(p[i]), r->g[i], sizeof(float) * (size_t)r->n[i]));
	}
	clg_scope_end();
}

static void test_pool_norm(clg_backend *be)
{
	static pool_result f32, mix;
	static const char *names[5] = {"x", "gamma", "beta", "w", "b"};

	pool_run(be, 0, &f32);
	pool_run(be, 1, &mix);
	CHECK(mix.bn_dt == CLG_F16 && mix.pool_dt == CLG_F16 && mix.hid_dt == CLG_F16 && mix.loss_dt == CLG_F32,
	      "%s: autocast dtypes: batch_norm %s, pools %s, linear_act %s, loss %s", be->info.name,
	      clg_dtype_name(mix.bn_dt), clg_dtype_name(mix.pool_dt), clg_dtype_name(mix.hid_dt),
	      clg_dtype_name(mix.loss_dt));
	CHECK(fabs(mix.loss - f32.loss) <= 5e-3 * fabs(f32.loss), "%s: pool/norm mixed loss %.6f vs float32 %.6f",
	      be->info.name, mix.loss, f32.loss);
	for (int i = 0; i < 5; i++) {
		double d = rel_diff(mix.g[i], f32.g[i], f32.n[i]);
		CHECK(d <= 2e-2 && max_abs(mix.g[i], mix.n[i]) > 0, "%s: %s's mixed gradient %.3g from float32",
		      be->info.name, names[i], d);
	}
	printf("%s: batch_norm + pools + linear_act in float16: loss %.6f vs float32 %.6f; gradients within x %.2g, "
	       "gamma %.2g, beta %.2g, w %.2g, b %.2g\n", be->info.name, mix.loss, f32.loss,
	       rel_diff(mix.g[0], f32.g[0], f32.n[0]), rel_diff(mix.g[1], f32.g[1], f32.n[1]),
	       rel_diff(mix.g[2], f32.g[2], f32.n[2]), rel_diff(mix.g[3], f32.g[3], f32.n[3]),
	       rel_diff(mix.g[4], f32.g[4], f32.n[4]));
}

/* Attention on 16-bit q, k, v under autocast (as the transformer's linear layers make them): the
 * fused kernels in float32 (a float32 output), loss and gradients against float32. */
#define AB 2
#define AH 2
#define AT 5
#define AD 4
#define AN (AB * AH * AT * AD)
static void attn_run(clg_backend *be, int autocast, float *loss, float g[3][AN], clg_dtype *out_dt)
{
	float host[3][AN];
	clg_tensor *p[3], *in[3];
	double v = NAN;

	clg_scope_begin();
	for (int i = 0; i < 3; i++) {
		t_fill_uniform(host[i], AN, 31 + (unsigned)i, -1.5f, 1.5f);
		p[i] = clg_from_host(be, CLG_F32, CLG_SHAPE(AB, AH, AT, AD), host[i]);
		clg_set_requires_grad(p[i], 1);
	}
	if (autocast)
		clg_autocast_begin(CLG_F16);
	for (int i = 0; i < 3; i++)
		in[i] = autocast ? clg_cast(p[i], CLG_F16) : p[i];
	clg_tensor *o = clg_scaled_dot_product_attention(in[0], in[1], in[2], 1, 0.0);
	clg_tensor *l = clg_mean(clg_mul(o, o), 0, NULL, 0);
	if (autocast)
		clg_autocast_end();
	*out_dt = o ? clg_dtype_of(o) : CLG_I32;
	CHECK_OK(clg_backward(l));
	CHECK_OK(clg_item(l, &v));
	*loss = (float)v;
	for (int i = 0; i < 3; i++)
		CHECK_OK(clg_to_host(clg_grad(p[i]), g[i], sizeof(float) * AN));
	clg_scope_end();
}

static void test_attention(clg_backend *be)
{
	static float l[2], g[2][3][AN];
	clg_dtype dt[2];
	double d[3];

	for (int k = 0; k < 2; k++)
		attn_run(be, k, &l[k], g[k], &dt[k]);
	for (int i = 0; i < 3; i++)
		d[i] = rel_diff(g[1][i], g[0][i], AN);
	if (clg_fused_ops_enabled() && clg_backend_has_op(be, CLG_OP_ATTENTION_FWD))
		CHECK(dt[1] == CLG_F32, "%s: autocast attention on float16 q, k, v: the fused float32 path (output %s)",
		      be->info.name, clg_dtype_name(dt[1]));
	CHECK(fabs(l[1] - l[0]) <= 5e-3 * fabs(l[0]), "%s: attention mixed loss %.6f vs float32 %.6f", be->info.name,
	      l[1], l[0]);
	CHECK(d[0] <= 2e-2 && d[1] <= 2e-2 && d[2] <= 2e-2, "%s: attention gradients mixed vs float32: q %.3g, k %.3g, v %.3g",
	      be->info.name, d[0], d[1], d[2]);
	printf("%s: attention under autocast (output %s): loss %.6f vs float32 %.6f; gradients within q %.2g, k %.2g, v %.2g\n",
	       be->info.name, clg_dtype_name(dt[1]), l[1], l[0], d[0], d[1], d[2]);
}

/* ---- the trainer ---- */

static clg_module *build_small(clg_backend *be, uint64_t seed, void *user)
{
	clg_module *m[] = {clg_nn_linear(be, NFEAT, 32, 1, CLG_INIT_DEFAULT, seed), clg_nn_relu(),
			   clg_nn_linear(be, 32, NCLASS, 1, CLG_INIT_DEFAULT, seed + 1)};
	(void)user;
	return clg_nn_sequential(m, 3);
}

static void make_data(clg_dataset *ds, int64_t n, unsigned seed)
{
	int64_t shape[1] = {NFEAT};
	CHECK_OK(clg_dataset_init(ds, n, 1, shape, CLG_F32, 1));
	ds->num_classes = NCLASS;
	t_fill_uniform(ds->x, (size_t)(n * NFEAT), seed, -1, 1);
	for (int64_t i = 0; i < n; i++) {
		const float *x = ds->x + i * NFEAT;
		float s[NCLASS] = {x[0] + x[1], x[2] - x[3], x[4] * 0.5f - x[5]};
		ds->y[i] = s[0] > s[1] ? (s[0] > s[2] ? 0 : 2) : (s[1] > s[2] ? 1 : 2);
	}
}

typedef struct {
	double train_loss[4], test_loss[4], test_acc[4], scale;
	int n;
} run_log;

static clg_status log_end(void *u, const clg_epoch_info *e)
{
	run_log *l = u;
	if (l->n < 4) {
		l->train_loss[l->n] = e->train_loss;
		l->test_loss[l->n] = e->test_loss;
		l->test_acc[l->n] = e->test_acc;
		l->n++;
	}
	l->scale = e->loss_scale;
	return CLG_OK;
}

static clg_train_config config(clg_precision p)
{
	clg_train_config c = clg_train_config_default();
	c.model.name = "small";
	c.build = build_small;
	c.batch = 32;
	c.epochs = 2;
	c.optim.lr = 1e-2;
	c.seed = 5;
	c.precision = p;
	return c;
}

static void train(clg_backend *be, const clg_train_config *cfg, const char *load, const clg_dataset *tr,
		  const clg_dataset *te, run_log *log)
{
	clg_trainer *t = NULL;
	clg_train_callbacks cb = {.user = log, .epoch_end = log_end};

	CHECK_OK(clg_trainer_new(be, cfg, tr, te, &t));
	if (!t)
		return;
	if (load)
		CHECK_OK(clg_trainer_load(t, load));
	CHECK_OK(clg_trainer_run(t, &cb));
	CHECK(clg_trainer_epochs_done(t) == (cfg->stop_after ? 1 : cfg->epochs), "epochs done");
	clg_trainer_free(t);
}

static void test_trainer(clg_backend *be, const clg_dataset *tr, const clg_dataset *te, const char *tmp)
{
	run_log f32 = {0}, mix = {0}, half1 = {0}, resumed = {0};
	clg_train_config c32 = config(CLG_PRECISION_FP32), cm = config(CLG_PRECISION_MIXED);
	char path[4096];

	train(be, &c32, NULL, tr, te, &f32);
	train(be, &cm, NULL, tr, te, &mix);
	CHECK(f32.n == 2 && mix.n == 2, "%s: two epochs each", be->info.name);
	CHECK(f32.scale == 0 && mix.scale > 0, "%s: the loss scaler is on in mixed only (%g)", be->info.name, mix.scale);
	for (int e = 0; e < 2; e++) {
		CHECK(fabs(mix.train_loss[e] - f32.train_loss[e]) <= 0.01 * f32.train_loss[e],
		      "%s: epoch %d train loss mixed %.5f vs float32 %.5f", be->info.name, e + 1, mix.train_loss[e],
		      f32.train_loss[e]);
		CHECK(fabs(mix.test_loss[e] - f32.test_loss[e]) <= 0.01 * f32.test_loss[e],
		      "%s: epoch %d test loss mixed %.5f vs float32 %.5f", be->info.name, e + 1, mix.test_loss[e],
		      f32.test_loss[e]);
	}
	CHECK(mix.test_loss[1] < mix.test_loss[0], "%s: mixed training lowers the loss", be->info.name);
	printf("%s: trainer, 2 epochs: float32 train %.5f test %.5f, mixed train %.5f test %.5f (scale %g)\n",
	       be->info.name, f32.train_loss[1], f32.test_loss[1], mix.train_loss[1], mix.test_loss[1], mix.scale);

	/* a mixed checkpoint after one epoch, resumed in float32 for the second */
	snprintf(path, sizeof(path), "%s/mixed.safetensors", tmp);
	cm.save = path;
	cm.stop_after = 1;
	train(be, &cm, NULL, tr, te, &half1);
	{
		clg_ckpt_meta meta;
		clg_train_config c = config(CLG_PRECISION_FP32);
		CHECK_OK(clg_ckpt_read_meta(path, &meta));
		CHECK_OK(clg_train_config_from_meta(&meta, &c));
		c.build = build_small;
		CHECK(c.precision == CLG_PRECISION_FP32, "the resumed run keeps the caller's precision");
		train(be, &c, path, tr, te, &resumed);
	}
	CHECK(half1.n == 1 && resumed.n == 1, "%s: one epoch each side of the checkpoint", be->info.name);
	CHECK(fabs(half1.test_loss[0] - mix.test_loss[0]) <= 1e-6 * mix.test_loss[0],
	      "%s: the stopped mixed run's first epoch is the straight run's (%.7f vs %.7f)", be->info.name,
	      half1.test_loss[0], mix.test_loss[0]);
	CHECK(fabs(resumed.test_loss[0] - mix.test_loss[1]) <= 0.01 * mix.test_loss[1],
	      "%s: resumed in float32 %.5f vs straight mixed %.5f", be->info.name, resumed.test_loss[0], mix.test_loss[1]);
	CHECK(resumed.test_loss[0] < half1.test_loss[0], "%s: the resumed epoch lowers the loss", be->info.name);
	remove(path);
}

int main(void)
{
	clg_dataset tr, te;
	clg_precision p;
	char *tmp = t_tmpdir();

	CHECK(!clg_precision_parse("mixed", &p) && p == CLG_PRECISION_MIXED && clg_precision_parse("fp16", &p) == -1 &&
	      !strcmp(clg_precision_name(CLG_PRECISION_FP32), "fp32"), "precision names");
	make_data(&tr, 384, 1);
	make_data(&te, 128, 2);
	for (int d = 0; d <= t_opencl_count(); d++) {
		clg_backend *be;
		if (clg_backend_open(d, &be)) {
			CHECK(0, "device %d: %s", d, clg_last_error());
			continue;
		}
		printf("device %d: %s (fp16: %s)\n", d, be->info.name, clg_half_native(&be->info) ? "native" : "storage only");
		test_cast(be);
		test_mixed_grads(be);
		test_conv(be);
		test_pool_norm(be);
		test_attention(be);
		test_trainer(be, &tr, &te, tmp);
		if (d == 0) { /* a bad precision refused */
			clg_train_config c = config((clg_precision)7);
			clg_trainer *t = (clg_trainer *)1;
			CHECK(clg_trainer_new(be, &c, &tr, NULL, &t) == CLG_ERR_INVALID && !t, "precision 7 refused");
		}
		clg_backend_close(be);
	}
	t_rmtree(tmp);
	free(tmp);
	clg_dataset_free(&tr);
	clg_dataset_free(&te);
	return t_finish("test_mixed");
}
