/* The tensor API: values of views and broadcasting, device copies, scopes, no-grad, and the
 * errors a user meets (mismatched shapes, dtypes, devices, backward twice, bad reshape); float16
 * tensors on every device, and the host's half <-> float conversions. */
#include "test_util.h"

#include <clgrad_index.h>

#include <math.h>
#include <string.h>

static void expect_values(clg_tensor *t, const float *want, int n, const char *what)
{
	float got[64];
	CHECK(clg_numel(t) == n, "%s: %lld elements, want %d", what, (long long)clg_numel(t), n);
	if (clg_numel(t) != n || clg_to_host(t, got, sizeof(float) * (size_t)n) != CLG_OK)
		return;
	for (int i = 0; i < n; i++)
		CHECK(fabsf(got[i] - want[i]) < 1e-5f, "%s[%d] = %g, want %g", what, i, got[i], want[i]);
}

static void test_device(clg_backend *be, clg_backend *other)
{
	const float a6[] = {1, 2, 3, 4, 5, 6};
	clg_tensor *a, *t, *s, *e, *b, *y;

	clg_scope_begin();
	a = clg_from_host(be, CLG_F32, CLG_SHAPE(2, 3), a6);
	/* transpose + contiguous: (3, 2) */
	t = clg_contiguous(clg_transpose(a, 0, 1));
	expect_values(t, (float[]){1, 4, 2, 5, 3, 6}, 6, "transpose");
	/* slice with a step: columns 0 and 2 */
	s = clg_contiguous(clg_slice(a, 1, 0, 3, 2));
	expect_values(s, (float[]){1, 3, 4, 6}, 4, "slice");
	/* broadcasting add: (2, 3) + (3) */
	b = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){10, 20, 30});
	expect_values(clg_add(a, b), (float[]){11, 22, 33, 14, 25, 36}, 6, "broadcast add");
	/* (2, 1) * (1, 3) -> outer product */
	e = clg_mul(clg_reshape(clg_arange(be, CLG_F32, 2), CLG_SHAPE(2, 1)), clg_reshape(b, CLG_SHAPE(1, 3)));
	expect_values(e, (float[]){0, 0, 0, 10, 20, 30}, 6, "outer product");
	/* reductions */
	expect_values(clg_sum(a, 1, (int[]){0}, 0), (float[]){5, 7, 9}, 3, "sum axis 0");
	expect_values(clg_mean(a, 1, (int[]){-1}, 1), (float[]){2, 5}, 2, "mean axis -1 keepdim");
	CHECK(clg_ndim(clg_mean(a, 1, (int[]){-1}, 1)) == 2, "keepdim keeps the rank");
	/* reshape with -1 */
	y = clg_reshape(a, CLG_SHAPE(-1, 2));
	CHECK(y && clg_shape(y)[0] == 3 && clg_shape(y)[1] == 2, "reshape -1 inferred");
	/* copy to another device and back */
	if (other) {
		clg_tensor *o = clg_to_device(t, other);
		CHECK(o && clg_device_of(o) == other, "to_device lands on the other device");
		expect_values(o, (float[]){1, 4, 2, 5, 3, 6}, 6, "to_device");
		/* ops across devices are refused with a clear message */
		CHECK(clg_add(o, t) == NULL && clg_last_status() == CLG_ERR_DEVICE, "cross-device add refused");
		CHECK(strstr(clg_last_error(), "different devices") != NULL, "message: %s", clg_last_error());
	}
	/* int32 tensors (indices) are copied and filled exactly, beyond float's 2^24 */
	{
		int32_t ids[6] = {1, 2, 3, 16777217, 5, -6}, got[6];
		clg_tensor *it = clg_from_host(be, CLG_I32, CLG_SHAPE(2, 3), ids);
		clg_tensor *tc = clg_contiguous(clg_transpose(it, 0, 1));
		CHECK(tc && clg_to_host(tc, got, sizeof(got)) == CLG_OK && got[1] == 16777217 && got[5] == -6,
		      "int32 transpose copy on %s: %s", be->info.name, clg_last_error());
		clg_tensor *f = clg_full(be, CLG_I32, CLG_SHAPE(3), 7);
		CHECK(f && clg_to_host(f, got, 3 * sizeof(int32_t)) == CLG_OK && got[0] == 7 && got[2] == 7,
		      "int32 fill on %s", be->info.name);
	}
	/* errors: shapes that do not broadcast, dtype mix, bad reshape, bad axis */
	CHECK(clg_add(a, clg_ones(be, CLG_F32, CLG_SHAPE(4))) == NULL && clg_last_status() == CLG_ERR_SHAPE,
	      "(2,3) + (4) refused");
	CHECK(strstr(clg_last_error(), "add") && strstr(clg_last_error(), "(2, 3)") && strstr(clg_last_error(), "(4,)") &&
	      strstr(clg_last_error(), be->info.name), "message names op, shapes and device: %s", clg_last_error());
	if (be->info.has_fp64) { /* two float dtypes: computed in the wider */
		clg_tensor *w = clg_add(a, clg_ones(be, CLG_F64, CLG_SHAPE(3)));
		CHECK(w && clg_dtype_of(w) == CLG_F64, "float32 + float64 is float64: %s", clg_last_error());
	}
	CHECK(clg_reshape(a, CLG_SHAPE(4, 2)) == NULL && clg_last_status() == CLG_ERR_SHAPE, "bad reshape refused");
	CHECK(clg_sum(a, 1, (int[]){5}, 0) == NULL && clg_last_status() == CLG_ERR_INVALID, "bad axis refused");
	CHECK(clg_matmul(a, a) == NULL && clg_last_status() == CLG_ERR_SHAPE, "(2,3) @ (2,3) refused");
	/* a NULL input propagates without replacing the first error */
	CHECK(clg_relu(clg_reshape(a, CLG_SHAPE(5))) == NULL && strstr(clg_last_error(), "reshape"),
	      "first error kept: %s", clg_last_error());
	clg_scope_end();
}

/* ---- float16 ---- */

static int half_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

/* bfloat16 conversions: known values, ties to even, overflow to inf, NaN kept; every bfloat16
 * through float and back; a tensor round trip on every device. */
static void test_bf16(void)
{
	static const struct { uint32_t f; uint16_t b; } known[] = {
		{0x3f800000u, 0x3f80}, /* 1 */
		{0x3f808000u, 0x3f80}, /* halfway, even stays */
		{0x3f818000u, 0x3f82}, /* halfway, odd rounds up */
		{0x3f808001u, 0x3f81}, /* above halfway */
		{0x7f7fffffu, 0x7f80}, /* FLT_MAX rounds to inf */
		{0xff800000u, 0xff80}, /* -inf */
		{0x80000000u, 0x8000}, /* -0 */
		{0x00000001u, 0x0000}, /* the smallest subnormal rounds to 0 */
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		float f;
		memcpy(&f, &known[i].f, sizeof(f));
		CHECK(clg_float_to_bf16(f) == known[i].b, "bf16(0x%08x) = 0x%04x, expected 0x%04x", known[i].f,
		      clg_float_to_bf16(f), known[i].b);
	}
	CHECK(isnan(clg_bf16_to_float(clg_float_to_bf16(NAN))), "NaN stays NaN");
	for (uint32_t b = 0; b < 0x10000u; b++) {
		float f = clg_bf16_to_float((uint16_t)b);
		if (!isnan(f))
			CHECK(clg_float_to_bf16(f) == b, "bf16 0x%04x through float and back", b);
	}
	for (int d = 0; d <= t_opencl_count(); d++) {
		clg_backend *be;
		uint16_t in[5], out[5];
		float v[5] = {1.5f, -3.25f, 65504.0f, 1e30f, -0.0f};
		int64_t shape[1] = {5};
		CHECK_OK(clg_backend_open(d, &be));
		for (int i = 0; i < 5; i++)
			in[i] = clg_float_to_bf16(v[i]);
		clg_tensor *t = clg_from_host(be, CLG_BF16, 1, shape, in), *m = clg_neg(t), *n = clg_neg(m);
		CHECK_OK(clg_to_host(n, out, sizeof(out)));
		CHECK(!memcmp(in, out, sizeof(in)), "device %d: bfloat16 through neg(neg()) unchanged", d);
		clg_free(n);
		clg_free(m);
		clg_free(t);
		clg_backend_close(be);
	}
}

/* The conversion helpers: edge cases, every half through float and back, and float -> half
 * being the nearest half (ties to even) over a sweep of float bit patterns. */
static void test_half_conversions(void)
{
	static const struct {
		float f;
		uint16_t h;
	} to_half[] = {
		{0.0f, 0x0000}, {-0.0f, 0x8000}, {1.0f, 0x3c00}, {-2.0f, 0xc000}, {0.5f, 0x3800},
		{65504.0f, 0x7bff}, {65519.99f, 0x7bff}, {65520.0f, 0x7c00}, {-65520.0f, 0xfc00}, {1e10f, 0x7c00},
		{0x1p-24f, 0x0001}, {0x1p-25f, 0x0000}, {0x1.8p-25f, 0x0001}, {0x1.000002p-25f, 0x0001},
		{0x1p-26f, 0x0000}, {-0x1p-24f, 0x8001}, {0x1p-14f, 0x0400}, {0x1.ff8p-15f, 0x03ff},
		{0x1.ffcp-15f, 0x0400}, /* halfway between the largest subnormal and 2^-14: to even */
		{1.0f + 0x1p-11f, 0x3c00}, {1.0f + 3 * 0x1p-11f, 0x3c02}, /* ties to even */
		{0x1.002002p+0f, 0x3c01},                                 /* just above the tie at 1 + 2^-11 */
		{0x1p-149f, 0x0000}, {INFINITY, 0x7c00}, {-INFINITY, 0xfc00},
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(to_half) / sizeof(to_half[0]); i++) {
		uint16_t h = clg_float_to_half(to_half[i].f);
		CHECK(h == to_half[i].h, "float_to_half(%a) = 0x%04x, want 0x%04x", (double)to_half[i].f, h, to_half[i].h);
	}
	CHECK(half_is_nan(clg_float_to_half(NAN)) && half_is_nan(clg_float_to_half(-NAN)), "NaN stays NaN");
	CHECK(clg_half_to_float(0x0001) == 0x1p-24f, "smallest subnormal: %a", (double)clg_half_to_float(0x0001));
	CHECK(clg_half_to_float(0x03ff) == 1023 * 0x1p-24f, "largest subnormal");
	CHECK(clg_half_to_float(0x7bff) == 65504.0f, "largest half");
	CHECK(clg_half_to_float(0x7c00) == INFINITY && clg_half_to_float(0xfc00) == -INFINITY, "infinities");
	CHECK(isnan(clg_half_to_float(0x7e00)) && isnan(clg_half_to_float(0xfc01)), "NaN");
	CHECK(clg_half_to_float(0x8000) == 0 && signbit(clg_half_to_float(0x8000)), "-0");
	/* every half goes through float and back unchanged (NaN: stays NaN) */
	for (uint32_t h = 0; h < 0x10000u; h++) {
		float f = clg_half_to_float((uint16_t)h);
		uint16_t back = clg_float_to_half(f);
		bad += half_is_nan((uint16_t)h) ? !(isnan(f) && half_is_nan(back)) : back != h;
	}
	CHECK(bad == 0, "%d halves do not survive half -> float -> half", bad);
	/* float -> half gives the nearest half, ties to the even one (about a million floats) */
	bad = 0;
	for (uint64_t u = 0; u < 0x100000000ull; u += 4093) {
		uint32_t bits = (uint32_t)u;
		float f;
		memcpy(&f, &bits, sizeof(f));
		uint16_t h = clg_float_to_half(f), mag = h & 0x7fffu;
		if (isnan(f)) {
			bad += !half_is_nan(h);
			continue;
		}
		if (fabsf(f) >= 65520.0f) {
			bad += mag != 0x7c00u || (h >> 15) != (bits >> 31);
			continue;
		}
		double d = fabs((double)f - clg_half_to_float(h));
		for (int step = -1; step <= 1; step += 2) {
			int nm = (int)mag + step;
			if (nm < 0 || nm > 0x7bff)
				continue;
			double dn = fabs((double)f - clg_half_to_float((uint16_t)((h & 0x8000u) | (uint16_t)nm)));
			bad += dn < d || (dn == d && (mag & 1u));
		}
		bad += mag != 0 && (h >> 15) != (bits >> 31);
	}
	CHECK(bad == 0, "%d floats not rounded to the nearest half (ties to even)", bad);
}

/* Reads a float16 tensor and compares with want, each within one rounding of a half. */
static void expect_half_values(clg_tensor *t, const float *want, int n, const char *what)
{
	uint16_t got[64];
	CHECK(t && clg_dtype_of(t) == CLG_F16, "%s: not a float16 tensor: %s", what, clg_last_error());
	if (!t || clg_numel(t) != n || clg_to_host(t, got, sizeof(uint16_t) * (size_t)n) != CLG_OK) {
		CHECK(0, "%s: cannot read %d halves: %s", what, n, clg_last_error());
		return;
	}
	for (int i = 0; i < n; i++) {
		float g = clg_half_to_float(got[i]);
		CHECK(fabsf(g - want[i]) <= 0x1p-11f * fabsf(want[i]) + 1e-7f, "%s[%d] = %g, want %g", what, i, g, want[i]);
	}
}

/* float16 tensors on every device: upload half bits, elementwise with broadcasting, reductions,
 * softmax, int32 argmax, reading back; rounding on the device is the host's (an exact product of
 * two halves rounded once); ops without a float16 path refuse it with a clear error. */
static void test_float16(clg_backend *be, clg_backend *other)
{
	const float v6[6] = {1, -2, 3.5f, 0.25f, 1000, -0.125f};
	uint16_t h6[6], h3[3];
	clg_tensor *a, *b, *t;
	double v;

	clg_scope_begin();
	for (int i = 0; i < 6; i++)
		h6[i] = clg_float_to_half(v6[i]);
	for (int i = 0; i < 3; i++)
		h3[i] = clg_float_to_half((float[]){0.5f, 2, -1}[i]);
	a = clg_from_host(be, CLG_F16, CLG_SHAPE(2, 3), h6);
	b = clg_from_host(be, CLG_F16, CLG_SHAPE(3), h3);
	CHECK(a && b, "float16 tensors on '%s': %s", be->info.name, clg_last_error());
	if (!a || !b) {
		clg_scope_end();
		return;
	}
	expect_half_values(a, v6, 6, "float16 round trip");
	expect_half_values(clg_mul(a, b), (float[]){0.5f, -4, -3.5f, 0.125f, 2000, 0.125f}, 6, "float16 broadcast mul");
	expect_half_values(clg_contiguous(clg_transpose(a, 0, 1)), (float[]){1, 0.25f, -2, 1000, 3.5f, -0.125f}, 6,
			   "float16 transpose copy");
	expect_half_values(clg_exp(b), (float[]){1.6487213f, 7.3890561f, 0.36787944f}, 3, "float16 exp");
	/* 1000.125 is no half: the sum, exact in float32, is rounded once (to 1000) */
	expect_half_values(clg_sum(a, 1, (int[]){1}, 0), (float[]){2.5f, 1000}, 2, "float16 sum axis 1");
	expect_half_values(clg_max(a), (float[]){3.5f, 1000}, 2, "float16 max");
	{
		int32_t idx[2] = {-1, -1};
		clg_tensor *am = clg_argmax(a);
		CHECK(am && clg_dtype_of(am) == CLG_I32 && clg_to_host(am, idx, sizeof(idx)) == CLG_OK && idx[0] == 2 &&
		      idx[1] == 1, "float16 argmax: %d %d (%s)", idx[0], idx[1], clg_last_error());
	}
	{ /* softmax of each row, against double on the same half inputs */
		float want[6];
		for (int r = 0; r < 2; r++) {
			double m = -INFINITY, s = 0;
			for (int j = 0; j < 3; j++)
				m = fmax(m, v6[3 * r + j]);
			for (int j = 0; j < 3; j++)
				s += exp(v6[3 * r + j] - m);
			for (int j = 0; j < 3; j++)
				want[3 * r + j] = (float)(exp(v6[3 * r + j] - m) / s);
		}
		expect_half_values(clg_softmax(a), want, 6, "float16 softmax");
	}
	expect_half_values(clg_min(a), (float[]){-2, -0.125f}, 2, "float16 min");
	/* mean = sum (rounded to half: 2.5, 1000) times 1/3 */
	expect_half_values(clg_mean(a, 1, (int[]){1}, 0), (float[]){2.5f / 3, 1000.0f / 3}, 2, "float16 mean");
	{ /* log_softmax and layer norm (with gamma and beta: elementwise) of each row, against double */
		float ls[6], ln[6];
		for (int r = 0; r < 2; r++) {
			double m = -INFINITY, s = 0, mu = 0, var = 0;
			for (int j = 0; j < 3; j++)
				m = fmax(m, v6[3 * r + j]), mu += v6[3 * r + j] / 3.0;
			for (int j = 0; j < 3; j++)
				s += exp(v6[3 * r + j] - m), var += (v6[3 * r + j] - mu) * (v6[3 * r + j] - mu) / 3.0;
			for (int j = 0; j < 3; j++) {
				/* gamma and beta are b: the normalised value is rounded to half before the scale */
				double xh = clg_half_to_float(clg_float_to_half((float)((v6[3 * r + j] - mu) / sqrt(var + 1e-5))));
				float gb = clg_half_to_float(h3[j]);
				ls[3 * r + j] = (float)(v6[3 * r + j] - m - log(s));
				ln[3 * r + j] = clg_half_to_float(clg_float_to_half((float)(xh * gb))) + gb;
			}
		}
		expect_half_values(clg_log_softmax(a), ls, 6, "float16 log_softmax");
		expect_half_values(clg_layer_norm(a, b, b, 1e-5), ln, 6, "float16 layer_norm");
	}
	/* 1002.625 rounds to 1002.5 (ulp 0.5); clg_item reads a float16 scalar */
	CHECK(clg_item(clg_sum(a, 0, NULL, 0), &v) == CLG_OK && v == 1002.5, "float16 item of the sum: %g (%s)", v,
	      clg_last_error());
	expect_half_values(clg_arange(be, CLG_F16, 4), (float[]){0, 1, 2, 3}, 4, "float16 arange");
	expect_half_values(clg_full(be, CLG_F16, CLG_SHAPE(2), 65519.0), (float[]){65504, 65504}, 2, "float16 full 65519");
	/* the device rounds as the host: x * y of two halves is exact in float32, then rounded once;
	 * x runs over every half (subnormal, overflowing and NaN results included) */
	{
		enum { NH = 65536 };
		static const float ys[] = {0.333251953125f, 1.5f, 0x1p-10f, 3.0f, -0.0999755859375f, 1024.0f, 0.5f};
		uint16_t *hx = malloc(NH * sizeof(uint16_t)), *hy = malloc(NH * sizeof(uint16_t)),
			 *hz = malloc(NH * sizeof(uint16_t));
		int bad = 0;
		for (int i = 0; hx && hy && i < NH; i++) {
			hx[i] = (uint16_t)i;
			hy[i] = clg_float_to_half(ys[i % (int)(sizeof(ys) / sizeof(ys[0]))]);
		}
		clg_tensor *z = hx && hy ? clg_mul(clg_from_host(be, CLG_F16, CLG_SHAPE(NH), hx),
						  clg_from_host(be, CLG_F16, CLG_SHAPE(NH), hy))
					 : NULL;
		CHECK(z && hz && clg_to_host(z, hz, NH * sizeof(uint16_t)) == CLG_OK, "float16 mul of every half: %s",
		      clg_last_error());
		for (int i = 0; z && hz && i < NH; i++) {
			uint16_t want = clg_float_to_half(clg_half_to_float(hx[i]) * clg_half_to_float(hy[i]));
			int ok = half_is_nan(want) ? half_is_nan(hz[i]) : hz[i] == want;
			if (!ok && bad++ < 5)
				CHECK(0, "'%s': 0x%04x * 0x%04x = 0x%04x, host rounds to 0x%04x", be->info.name, hx[i], hy[i],
				      hz[i], want);
		}
		CHECK(bad == 0, "'%s': %d float16 products rounded unlike the host", be->info.name, bad);
		free(hx);
		free(hy);
		free(hz);
	}
	/* copies between devices keep the bits */
	if (other)
		expect_half_values(clg_to_device(a, other), v6, 6, "float16 to_device");
	/* matmul in float16 (float32 accumulation, one rounding): a (2, 3) @ b (3, 1); 2000.25 is no
	 * half (2000 is) */
	expect_half_values(clg_matmul(a, clg_reshape(b, CLG_SHAPE(3, 1))), (float[]){-7, 2000.25f}, 2, "float16 matmul");
	/* float16 with float32: computed in float32 */
	t = clg_add(a, clg_ones(be, CLG_F32, CLG_SHAPE(3)));
	CHECK(t && clg_dtype_of(t) == CLG_F32, "float16 + float32 is float32 on '%s': %s", be->info.name, clg_last_error());
	/* refused: ops without a float16 path (the message names the op, the device and float16),
	 * reading into a buffer of the wrong size */
	t = clg_index_select(a, 0, clg_from_host(be, CLG_I32, CLG_SHAPE(1), (int32_t[]){1}));
	CHECK(t == NULL && clg_last_status() == CLG_ERR_DTYPE, "float16 index_select refused on '%s'", be->info.name);
	CHECK(strstr(clg_last_error(), "float16") && strstr(clg_last_error(), "index_select") &&
	      strstr(clg_last_error(), be->info.name), "message: %s", clg_last_error());
	{
		float f6[6];
		CHECK(clg_to_host(a, f6, sizeof(f6)) == CLG_ERR_INVALID, "float16 read into 24 bytes refused");
	}
	clg_scope_end();
}

/* clg_backward_overlap: each leaf with requires_grad is announced once, when its gradient is
 * final: the value read at that moment equals the value after the whole backward pass. */
typedef struct {
	clg_tensor *leaf[4];
	float seen[4][3];
	int calls[4], strangers;
} ready_log;

static void on_ready(void *user, clg_tensor *leaf)
{
	ready_log *r = user;
	for (int i = 0; i < 4; i++)
		if (r->leaf[i] == leaf) {
			r->calls[i]++;
			CHECK_OK(clg_to_host(clg_grad(leaf), r->seen[i], sizeof(r->seen[i])));
			return;
		}
	r->strangers++;
}

static void test_backward_overlap(clg_backend *be)
{
	ready_log r = {0};
	clg_tensor *a, *b, *c, *x, *h, *l;

	clg_scope_begin();
	a = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){1, -2, 3});
	b = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){0.5f, 2, -1});
	c = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){3, 1, 2});
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){4, 5, 6});
	clg_set_requires_grad(a, 1);
	clg_set_requires_grad(b, 1);
	clg_set_requires_grad(c, 1);
	r.leaf[0] = a, r.leaf[1] = b, r.leaf[2] = c, r.leaf[3] = x;
	/* a is used first and last (its gradient has two parts), b in the middle, c once at the end:
	 * l = sum(((a * x) * b + a) * c) */
	h = clg_add(clg_mul(clg_mul(a, x), b), a);
	l = clg_sum(clg_mul(h, c), 0, NULL, 0);
	CHECK_OK(clg_backward_overlap(l, on_ready, &r));
	for (int i = 0; i < 3; i++) {
		float final[3];
		CHECK(r.calls[i] == 1, "leaf %d announced %d times, want once", i, r.calls[i]);
		CHECK_OK(clg_to_host(clg_grad(r.leaf[i]), final, sizeof(final)));
		for (int k = 0; k < 3; k++)
			CHECK(r.seen[i][k] == final[k], "leaf %d [%d]: %g when announced, %g at the end", i, k,
			      r.seen[i][k], final[k]);
	}
	CHECK(r.calls[3] == 0 && r.strangers == 0, "a constant announced (%d, %d)", r.calls[3], r.strangers);
	/* da = (x * b + 1) * c */
	expect_values(clg_grad(a), (float[]){9, 11, -10}, 3, "overlap: grad a");
	clg_scope_end();
}

static void test_autograd(clg_backend *be)
{
	clg_tensor *w, *x, *y, *l, *g;
	double v;

	clg_scope_begin();
	w = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){1, -2, 3});
	clg_set_requires_grad(w, 1);
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){4, 5, 6});
	/* l = sum(w * x): dl/dw = x */
	l = clg_sum(clg_mul(w, x), 0, NULL, 0);
	CHECK_OK(clg_backward(l));
	expect_values(clg_grad(w), (float[]){4, 5, 6}, 3, "grad");
	/* gradients accumulate across backward calls until zeroed */
	l = clg_sum(clg_mul(w, x), 0, NULL, 0);
	CHECK_OK(clg_backward(l));
	expect_values(clg_grad(w), (float[]){8, 10, 12}, 3, "accumulated grad");
	/* backward twice through a freed graph fails cleanly */
	CHECK(clg_backward(l) == CLG_ERR_STATE, "second backward refused");
	CHECK(strstr(clg_last_error(), "retain_graph") != NULL, "message: %s", clg_last_error());
	/* ... unless the graph is retained */
	clg_zero_grad(w);
	l = clg_sum(clg_mul(w, x), 0, NULL, 0);
	CHECK_OK(clg_backward_ex(l, NULL, 1));
	CHECK_OK(clg_backward_ex(l, NULL, 0));
	expect_values(clg_grad(w), (float[]){8, 10, 12}, 3, "retained graph, two backwards");
	/* a tensor without requires_grad, and a non-scalar root without a gradient */
	CHECK(clg_backward(x) == CLG_ERR_STATE, "backward of a constant refused");
	y = clg_mul(w, x);
	CHECK(clg_backward(y) == CLG_ERR_SHAPE, "non-scalar backward without a gradient refused");
	/* no-grad scope records nothing */
	clg_no_grad_begin();
	y = clg_mul(w, x);
	clg_no_grad_end();
	CHECK(!clg_requires_grad(y), "no_grad output does not require grad");
	/* detach cuts the graph but shares values */
	g = clg_detach(w);
	CHECK(!clg_requires_grad(g), "detached tensor does not require grad");
	CHECK_OK(clg_item(clg_sum(g, 0, NULL, 0), &v));
	CHECK(fabs(v - 2.0) < 1e-6, "detached values: sum %g", v);
	/* freeing an input before backward does not break backward */
	clg_zero_grad(w);
	{
		clg_tensor *x2 = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){1, 1, 1});
		clg_tensor *p = clg_mul(w, x2);
		clg_free(x2);
		l = clg_sum(p, 0, NULL, 0);
		clg_free(p);
		CHECK_OK(clg_backward(l));
		expect_values(clg_grad(w), (float[]){1, 1, 1}, 3, "grad after freeing inputs");
	}
	clg_scope_end();
}

/* max / min over the last dim send each row's gradient to the index torch.max(dim) /
 * torch.min(dim) return: the first extreme element on ties, the first NaN in a row holding one;
 * in float32 and in both 16-bit formats (whose gradients are exact: each is g or 0) */
static void test_maxmin_ties(clg_backend *be)
{
	/* (3, 3): a tie at the max (row 0) and at the min (row 2), NaN twice in row 1 */
	const float xv[] = {1, 1, 0, NAN, 2, NAN, -1, 5, -1};
	const clg_dtype dts[] = {CLG_F32, CLG_F16, CLG_BF16};

	for (int k = 0; k < 3; k++) {
		clg_tensor *x, *l;
		char what[64];

		clg_scope_begin();
		x = clg_cast(clg_from_host(be, CLG_F32, CLG_SHAPE(3, 3), xv), dts[k]);
		clg_set_requires_grad(x, 1);
		l = clg_sum(clg_max(x), 0, NULL, 0);
		CHECK_OK(clg_backward(l));
		snprintf(what, sizeof(what), "%s max backward on ties and NaN", clg_dtype_name(dts[k]));
		CHECK(clg_grad(x) != NULL, "%s: no gradient", what);
		if (clg_grad(x))
			expect_values(clg_cast(clg_grad(x), CLG_F32), (float[]){1, 0, 0, 1, 0, 0, 0, 1, 0}, 9, what);
		clg_zero_grad(x);
		l = clg_sum(clg_min(x), 0, NULL, 0);
		CHECK_OK(clg_backward(l));
		snprintf(what, sizeof(what), "%s min backward on ties and NaN", clg_dtype_name(dts[k]));
		CHECK(clg_grad(x) != NULL, "%s: no gradient", what);
		if (clg_grad(x))
			expect_values(clg_cast(clg_grad(x), CLG_F32), (float[]){0, 0, 1, 1, 0, 0, 1, 0, 0}, 9, what);
		clg_scope_end();
	}
}

static void test_scopes(clg_backend *be)
{
	clg_stats before, after;
	clg_tensor *kept;

	clg_backend_stats(be, &before);
	clg_scope_begin();
	clg_scope_begin();
	kept = clg_keep(clg_ones(be, CLG_F32, CLG_SHAPE(1000)));
	for (int i = 0; i < 10; i++)
		clg_add(clg_ones(be, CLG_F32, CLG_SHAPE(1000)), kept);
	clg_scope_end();
	/* the inner scope freed its tensors; kept lives in the outer one */
	double v;
	CHECK_OK(clg_item(clg_sum(kept, 0, NULL, 0), &v));
	CHECK(v == 1000, "kept tensor survives its scope (sum %g)", v);
	clg_scope_end();
	clg_backend_stats(be, &after);
	CHECK(after.bytes_in_use == before.bytes_in_use, "scopes free everything: %llu bytes in use, %llu before",
	      (unsigned long long)after.bytes_in_use, (unsigned long long)before.bytes_in_use);
}

/* A graph far deeper than the stack allows recursion for: x = x + b 300k times, freed at once
 * (the release of each node's inputs used to recurse, and overflowed the stack). */
static void test_deep_graph_free(clg_backend *be)
{
	clg_stats before, after;
	clg_tensor *a = clg_ones(be, CLG_F32, CLG_SHAPE(1)), *b = clg_ones(be, CLG_F32, CLG_SHAPE(1)), *x;
	int i = 0;

	clg_backend_stats(be, &before);
	clg_set_requires_grad(a, 1);
	clg_set_requires_grad(b, 1);
	x = clg_retain(a);
	for (; i < 300000 && x; i++) {
		clg_tensor *y = clg_unscope(clg_add(x, b));
		clg_free(x);
		x = y;
	}
	CHECK(x != NULL, "chain of adds stopped at %d: %s", i, clg_last_error());
	clg_free(x);
	clg_free(a);
	clg_free(b);
	clg_backend_stats(be, &after);
	CHECK(after.bytes_in_use <= before.bytes_in_use, "a deep graph freed: %llu bytes in use, %llu before",
	      (unsigned long long)after.bytes_in_use, (unsigned long long)before.bytes_in_use);
}

int main(void)
{
	const clg_device_info *list;
	clg_backend *ref = NULL;
	int n;

	test_half_conversions();
	test_bf16();
	t_require_opencl();
	CHECK_OK(clg_devices(&list, &n));
	CHECK_OK(clg_backend_open(0, &ref));
	test_deep_graph_free(ref);
	for (int i = 0; i < n; i++) {
		clg_backend *be = NULL;
		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		printf("device %d: %s\n", i, be->info.name);
		test_device(be, i ? ref : NULL);
		test_float16(be, i ? ref : NULL);
		test_autograd(be);
		test_backward_overlap(be);
		test_maxmin_ties(be);
		test_scopes(be);
		clg_backend_close(be);
	}
	clg_backend_close(ref);
	return t_finish("test_tensor");
}
