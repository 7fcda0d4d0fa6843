/* Random numbers and dropout on every device:
 *  - an independent Philox-4x32-10 here matches Random123's known-answer vectors, and every
 *    device's uniform numbers match it bit for bit (seeds and offsets across 32-bit boundaries);
 *  - the same seed gives the same numbers on the reference and on every OpenCL device (uniform:
 *    bit-exact; normal: within NORMAL_MAX_ULPS, the log/sqrt/cos differences allowed);
 *  - different seeds differ; a generator's successive draws differ and join into one stream;
 *  - uniform and normal moments of 1e5 samples lie within 5 standard errors;
 *  - dropout masks are identical on every device, keep about 1 - p, scale by 1 / (1 - p), and
 *    backward uses the same mask.
 * The index family's frontend ops (gather, index_select, embedding, concat) are checked against
 * host loops here as well, with the edges the op suite cannot draw (negative indices, errors).
 * usage: test_random [--device SUBSTRING] */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenCL allows log 3 ulp, sqrt 3 ulp, cos 4 ulp: their effect on z = sqrt(-2 log u1) cos(2 pi u2)
 * and on mean + std * z stays within a few ulps; anything beyond this bound is a bug. */
#define NORMAL_MAX_ULPS 16
#define NSTAT 100000

/* ---- an independent Philox-4x32-10 ---- */

static void philox(uint32_t x[4], uint32_t k0, uint32_t k1)
{
	for (int r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)0xD2511F53u * x[0], p1 = (uint64_t)0xCD9E8D57u * x[2];
		uint32_t y[4];
		if (r) {
			k0 += 0x9E3779B9u;
			k1 += 0xBB67AE85u;
		}
		y[0] = (uint32_t)(p1 >> 32) ^ x[1] ^ k0;
		y[1] = (uint32_t)p1;
		y[2] = (uint32_t)(p0 >> 32) ^ x[3] ^ k1;
		y[3] = (uint32_t)p0;
		memcpy(x, y, sizeof(y));
	}
}

static void check_kat(void)
{
	/* Random123 tests/kat_vectors, philox4x32 10 rounds */
	static const uint32_t kat[3][10] = {
		{0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
		{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e,
		 0xa20bc7c6, 0x6d5451fd},
		{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb,
		 0x5001e420, 0x24126ea1},
	};
	for (int k = 0; k < 3; k++) {
		uint32_t x[4] = {kat[k][0], kat[k][1], kat[k][2], kat[k][3]};
		philox(x, kat[k][4], kat[k][5]);
		CHECK(memcmp(x, &kat[k][6], sizeof(x)) == 0, "Philox known-answer vector %d: %08x %08x %08x %08x", k,
		      (unsigned)x[0], (unsigned)x[1], (unsigned)x[2], (unsigned)x[3]);
	}
}

/* The documented numbers of element k of a draw at (seed, offset) (see kernels_cl/random.cl). */
static void block(uint64_t seed, uint64_t offset, uint64_t k, uint32_t x[4])
{
	uint64_t c = offset + k;
	x[0] = (uint32_t)c, x[1] = (uint32_t)(c >> 32), x[2] = x[3] = 0;
	philox(x, (uint32_t)seed, (uint32_t)(seed >> 32));
}

static float expected_uniform(uint64_t seed, uint64_t offset, uint64_t k)
{
	uint32_t x[4];
	block(seed, offset, k, x);
	return (float)(x[0] >> 8) * 5.9604644775390625e-8f;
}

static float expected_normal(uint64_t seed, uint64_t offset, uint64_t k)
{
	uint32_t x[4];
	float u1, u2, r, z;
	block(seed, offset, k, x);
	u1 = (float)((x[0] >> 8) + 1u) * 5.9604644775390625e-8f;
	u2 = (float)(x[1] >> 8) * 5.9604644775390625e-8f;
	r = sqrtf(-2.0f * logf(u1));
	z = r * cosf(6.28318530717958647692f * u2);
	return z;
}

/* Distance in units in the last place (floats of either sign). */
static int64_t ulps(float a, float b)
{
	int32_t ia, ib;
	memcpy(&ia, &a, 4);
	memcpy(&ib, &b, 4);
	if (ia < 0)
		ia = INT32_MIN - ia;
	if (ib < 0)
		ib = INT32_MIN - ib;
	return ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia;
}

static float *host_of(clg_tensor *t, int64_t n)
{
	float *h = malloc(sizeof(float) * (size_t)n);
	if (h && (!t || clg_to_host(t, h, sizeof(float) * (size_t)n) != CLG_OK)) {
		CHECK(0, "reading a tensor back failed: %s", clg_last_error());
		free(h);
		return NULL;
	}
	return h;
}

/* ---- the numbers themselves, on one device ---- */

static void check_against_spec(clg_backend *be)
{
	/* seeds with high bits, offsets whose low word wraps inside the draw */
	static const uint64_t streams[][2] = {{0, 0}, {0x123456789abcdefULL, 0}, {7, 0xffffff00ULL},
					      {0xffffffffffffffffULL, 0x1fffffff0ULL}};
	const int64_t n = 1000;
	for (size_t s = 0; s < sizeof(streams) / sizeof(streams[0]); s++) {
		clg_rng g = {streams[s][0], streams[s][1]};
		clg_tensor *u = clg_rng_uniform(&g, be, CLG_F32, CLG_SHAPE(n), 0, 1);
		clg_tensor *z = clg_rng_normal(&g, be, CLG_F32, CLG_SHAPE(n), 0, 1);
		float *hu = host_of(u, n), *hz = host_of(z, n);
		int64_t bad_u = 0, worst_z = 0;
		CHECK(g.offset == streams[s][1] + 2 * (uint64_t)n, "%s: the generator advanced to %llu", be->info.name,
		      (unsigned long long)g.offset);
		for (int64_t k = 0; hu && hz && k < n; k++) {
			float eu = expected_uniform(streams[s][0], streams[s][1], (uint64_t)k);
			float ez = expected_normal(streams[s][0], streams[s][1] + (uint64_t)n, (uint64_t)k);
			bad_u += memcmp(&eu, &hu[k], 4) != 0;
			if (ulps(ez, hz[k]) > worst_z)
				worst_z = ulps(ez, hz[k]);
		}
		CHECK(hu && bad_u == 0, "%s stream %zu: %lld uniform numbers differ from the specification",
		      be->info.name, s, (long long)bad_u);
		/* the reference uses the host libm, as this test does: bit-exact there */
		CHECK(hz && worst_z <= (be->info.type == CLG_DEV_REF ? 0 : NORMAL_MAX_ULPS),
		      "%s stream %zu: normal numbers up to %lld ulps from the specification", be->info.name, s,
		      (long long)worst_z);
		free(hu);
		free(hz);
		clg_free(u);
		clg_free(z);
	}
	/* a strided destination draws k in row-major order of the view: a (7, 5) view of a (5, 7)
	 * buffer (transposed) gets element (a, b) = number a * 5 + b at buffer position a + 7 b */
	{
		clg_buffer *buf = NULL;
		clg_op_call c = {.op = CLG_OP_RAND_UNIFORM};
		float h[35];
		int bad = 0;
		CHECK_OK(clg_buffer_alloc(be, sizeof(h), &buf));
		if (buf) {
			clg_view_contiguous(&c.dst, buf, CLG_F32, 2, (int64_t[]){7, 5});
			c.dst.stride[0] = 1, c.dst.stride[1] = 7;
			c.i[0] = 3;
			c.f[1] = 1;
			CHECK_OK(clg_run(be, &c));
			CHECK_OK(clg_buffer_download(buf, 0, h, sizeof(h)));
			for (int a = 0; a < 7; a++)
				for (int b = 0; b < 5; b++) {
					float e = expected_uniform(3, 0, (uint64_t)(a * 5 + b));
					bad += memcmp(&e, &h[a + 7 * b], 4) != 0;
				}
			clg_buffer_free(buf);
		}
		CHECK(bad == 0, "%s: %d numbers of a transposed destination are wrong", be->info.name, bad);
	}
	/* float64 tensors hold the same (float32) numbers */
	if (be->info.has_fp64 || be->info.type == CLG_DEV_REF) {
		double h[100];
		clg_tensor *t = clg_rand(be, CLG_F64, CLG_SHAPE(100), 11);
		int bad = 0;
		CHECK_OK(clg_to_host(t, h, sizeof(h)));
		for (int k = 0; k < 100; k++)
			bad += h[k] != (double)expected_uniform(11, 0, (uint64_t)k);
		CHECK(bad == 0, "%s: %d float64 uniform numbers differ", be->info.name, bad);
		clg_free(t);
	}
}

/* ---- the same numbers on every device ---- */

static void check_same_everywhere(clg_backend *ref, clg_backend *be)
{
	const int64_t n = NSTAT;
	clg_tensor *ru = clg_rand(ref, CLG_F32, CLG_SHAPE(n), 2024), *du = clg_rand(be, CLG_F32, CLG_SHAPE(n), 2024);
	clg_tensor *rz = clg_randn(ref, CLG_F32, CLG_SHAPE(100, 1000), 2024);
	clg_tensor *dz = clg_randn(be, CLG_F32, CLG_SHAPE(100, 1000), 2024);
	float *hru = host_of(ru, n), *hdu = host_of(du, n), *hrz = host_of(rz, n), *hdz = host_of(dz, n);
	int64_t worst = 0, ndiff = 0;

	CHECK(hru && hdu && memcmp(hru, hdu, sizeof(float) * (size_t)n) == 0,
	      "uniform numbers of seed 2024 differ between '%s' and '%s'", ref->info.name, be->info.name);
	for (int64_t k = 0; hrz && hdz && k < n; k++) {
		int64_t d = ulps(hrz[k], hdz[k]);
		ndiff += d != 0;
		if (d > worst)
			worst = d;
	}
	CHECK(hrz && hdz && worst <= NORMAL_MAX_ULPS, "normal numbers differ by up to %lld ulps between '%s' and '%s'",
	      (long long)worst, ref->info.name, be->info.name);
	printf("  %-28s uniform bit-identical to the reference; normal: %lld of %lld differ, by at most %lld ulp\n",
	       be->info.name, (long long)ndiff, (long long)n, (long long)worst);
	free(hru);
	free(hdu);
	free(hrz);
	free(hdz);
	clg_free(ru);
	clg_free(du);
	clg_free(rz);
	clg_free(dz);
}

/* ---- streams ---- */

static double frac_equal(const float *a, const float *b, int64_t n)
{
	int64_t e = 0;
	for (int64_t k = 0; k < n; k++)
		e += a[k] == b[k];
	return (double)e / (double)n;
}

static void check_streams(clg_backend *be)
{
	const int64_t n = 4096;
	clg_rng g = clg_rng_init(77);
	clg_tensor *a = clg_rand(be, CLG_F32, CLG_SHAPE(n), 1), *b = clg_rand(be, CLG_F32, CLG_SHAPE(n), 2);
	clg_tensor *g1 = clg_rng_uniform(&g, be, CLG_F32, CLG_SHAPE(n), 0, 1);
	clg_tensor *g2 = clg_rng_uniform(&g, be, CLG_F32, CLG_SHAPE(n), 0, 1);
	clg_tensor *both = clg_rand(be, CLG_F32, CLG_SHAPE(2 * n), 77);
	clg_tensor *za = clg_randn(be, CLG_F32, CLG_SHAPE(n), 1), *zb = clg_randn(be, CLG_F32, CLG_SHAPE(n), 2);
	float *ha = host_of(a, n), *hb = host_of(b, n), *h1 = host_of(g1, n), *h2 = host_of(g2, n);
	float *hboth = host_of(both, 2 * n), *hza = host_of(za, n), *hzb = host_of(zb, n);

	if (ha && hb && h1 && h2 && hboth && hza && hzb) {
		/* two independent streams of 2^24 values agree by chance at about n / 2^24 places */
		CHECK(frac_equal(ha, hb, n) < 0.01, "%s: seeds 1 and 2 give %.3f equal uniform numbers", be->info.name,
		      frac_equal(ha, hb, n));
		CHECK(frac_equal(hza, hzb, n) < 0.01, "%s: seeds 1 and 2 give %.3f equal normal numbers", be->info.name,
		      frac_equal(hza, hzb, n));
		CHECK(frac_equal(h1, h2, n) < 0.01, "%s: successive generator draws agree at %.3f of the places",
		      be->info.name, frac_equal(h1, h2, n));
		CHECK(memcmp(h1, hboth, sizeof(float) * (size_t)n) == 0 &&
			      memcmp(h2, hboth + n, sizeof(float) * (size_t)n) == 0,
		      "%s: two generator draws do not join into the single draw of seed 77", be->info.name);
	}
	CHECK(g.offset == 2 * (uint64_t)n, "%s: generator offset %llu after two draws of %lld", be->info.name,
	      (unsigned long long)g.offset, (long long)n);
	free(ha), free(hb), free(h1), free(h2), free(hboth), free(hza), free(hzb);
	clg_free(a), clg_free(b), clg_free(g1), clg_free(g2), clg_free(both), clg_free(za), clg_free(zb);
}

/* ---- statistics (5 standard errors: a correct generator fails about once in 10^6 runs, and the
 * numbers are fixed by the seed anyway) ---- */

static void moments(const float *x, int64_t n, double *mean, double *var)
{
	double s = 0, v = 0;
	for (int64_t k = 0; k < n; k++)
		s += x[k];
	s /= (double)n;
	for (int64_t k = 0; k < n; k++)
		v += (x[k] - s) * (x[k] - s);
	*mean = s;
	*var = v / (double)(n - 1);
}

static void check_statistics(clg_backend *be)
{
	const int64_t n = NSTAT;
	const double dn = (double)n;
	clg_rng g = clg_rng_init(31337);
	clg_tensor *u = clg_rand(be, CLG_F32, CLG_SHAPE(n), 9), *r = clg_rng_uniform(&g, be, CLG_F32, CLG_SHAPE(n), -2.5, 0.75);
	clg_tensor *z = clg_randn(be, CLG_F32, CLG_SHAPE(n), 9), *w = clg_rng_normal(&g, be, CLG_F32, CLG_SHAPE(n), 3, 0.5);
	float *hu = host_of(u, n), *hr = host_of(r, n), *hz = host_of(z, n), *hw = host_of(w, n);
	double mean, var;
	int64_t bins[10] = {0}, out = 0, tails = 0;

	if (!hu || !hr || !hz || !hw)
		goto done;
	/* uniform [0, 1): mean 1/2 (se sqrt(1/12n)), variance 1/12 (se sqrt(1/180n)), flat histogram */
	moments(hu, n, &mean, &var);
	CHECK(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12 / dn), "%s: uniform mean %.5f", be->info.name, mean);
	CHECK(fabs(var - 1.0 / 12) < 5 * sqrt(1.0 / 180 / dn), "%s: uniform variance %.5f", be->info.name, var);
	for (int64_t k = 0; k < n; k++) {
		out += !(hu[k] >= 0 && hu[k] < 1);
		if (hu[k] >= 0 && hu[k] < 1)
			bins[(int)(hu[k] * 10)]++;
	}
	CHECK(out == 0, "%s: %lld uniform numbers outside [0, 1)", be->info.name, (long long)out);
	for (int b = 0; b < 10; b++)
		CHECK(fabs((double)bins[b] - dn / 10) < 5 * sqrt(dn * 0.1 * 0.9), "%s: uniform histogram bin %d holds %lld",
		      be->info.name, b, (long long)bins[b]);
	/* uniform [-2.5, 0.75) */
	moments(hr, n, &mean, &var);
	out = 0;
	for (int64_t k = 0; k < n; k++)
		out += !(hr[k] >= -2.5f && hr[k] < 0.75f);
	CHECK(out == 0, "%s: %lld numbers outside [-2.5, 0.75)", be->info.name, (long long)out);
	CHECK(fabs(mean + 0.875) < 5 * 3.25 * sqrt(1.0 / 12 / dn), "%s: uniform [-2.5, 0.75) mean %.5f", be->info.name, mean);
	/* standard normal: mean 0 (se 1/sqrt(n)), variance 1 (se sqrt(2/n)), 5% beyond 1.96 */
	moments(hz, n, &mean, &var);
	for (int64_t k = 0; k < n; k++)
		tails += fabsf(hz[k]) > 1.959964f;
	CHECK(fabs(mean) < 5 / sqrt(dn), "%s: normal mean %.5f", be->info.name, mean);
	CHECK(fabs(var - 1) < 5 * sqrt(2 / dn), "%s: normal variance %.5f", be->info.name, var);
	CHECK(fabs((double)tails / dn - 0.05) < 5 * sqrt(0.05 * 0.95 / dn), "%s: %.4f of normal numbers beyond 1.96",
	      be->info.name, (double)tails / dn);
	/* normal(3, 0.5) */
	moments(hw, n, &mean, &var);
	CHECK(fabs(mean - 3) < 5 * 0.5 / sqrt(dn), "%s: normal(3, 0.5) mean %.5f", be->info.name, mean);
	CHECK(fabs(sqrt(var) - 0.5) < 5 * 0.5 * sqrt(0.5 / dn), "%s: normal(3, 0.5) std %.5f", be->info.name, sqrt(var));
done:
	free(hu), free(hr), free(hz), free(hw);
	clg_free(u), clg_free(r), clg_free(z), clg_free(w);
}

/* ---- dropout ---- */

/* The dropout of ones (shape (n)): the mask itself, as host floats. */
static float *dropout_mask(clg_backend *be, int64_t n, double p, uint64_t seed)
{
	clg_tensor *x = clg_ones(be, CLG_F32, CLG_SHAPE(n)), *y = clg_dropout(x, p, seed, 1);
	float *h = host_of(y, n);
	clg_free(x);
	clg_free(y);
	return h;
}

static void check_dropout(clg_backend *ref, clg_backend *be)
{
	const int64_t n = NSTAT;
	const double p = 0.3;
	float *mr = dropout_mask(ref, n, p, 5), *md = dropout_mask(be, n, p, 5), scale = (float)(1.0 / (1.0 - p));
	int64_t kept = 0, odd = 0;

	if (mr && md) {
		CHECK(memcmp(mr, md, sizeof(float) * (size_t)n) == 0, "dropout masks differ between '%s' and '%s'",
		      ref->info.name, be->info.name);
		for (int64_t k = 0; k < n; k++) {
			kept += md[k] != 0;
			odd += md[k] != 0 && md[k] != scale;
		}
		CHECK(fabs((double)kept / (double)n - (1 - p)) < 5 * sqrt(p * (1 - p) / (double)n),
		      "%s: dropout kept %.4f of the elements, expected %.2f", be->info.name, (double)kept / (double)n, 1 - p);
		CHECK(odd == 0, "%s: %lld kept elements not scaled by 1 / (1 - p)", be->info.name, (long long)odd);
		/* the mask is the draw: dropped exactly where the uniform number of (seed, 0) is below p */
		for (int64_t k = 0, bad = 0; k < n; k++) {
			bad += (md[k] != 0) != (expected_uniform(5, 0, (uint64_t)k) >= (float)p);
			if (k == n - 1)
				CHECK(bad == 0, "%s: %lld dropout decisions differ from u >= p", be->info.name, (long long)bad);
		}
	}
	free(mr);
	free(md);

	/* backward multiplies by the same mask; eval mode is the identity; p = 0 and p = 1 */
	{
		const int64_t m = 1000;
		float xs[1000], hy[1000], hg[1000], he[1000];
		clg_tensor *x, *y, *s, *e, *y0, *y1;
		int bad = 0;
		kept = 0;
		t_fill_uniform(xs, (size_t)m, 3, -1, 1);
		x = clg_from_host(be, CLG_F32, CLG_SHAPE(m), xs);
		clg_set_requires_grad(x, 1);
		y = clg_dropout(x, 0.5, 8, 1);
		s = clg_sum(y, 0, NULL, 0);
		CHECK_OK(clg_backward(s));
		CHECK_OK(clg_to_host(y, hy, sizeof(hy)));
		CHECK_OK(clg_to_host(clg_grad(x), hg, sizeof(hg)));
		for (int64_t k = 0; k < m; k++) {
			bad += (hg[k] != 0 && hg[k] != 2) || hy[k] != xs[k] * hg[k];
			kept += hg[k] != 0;
		}
		CHECK(bad == 0, "%s: %d dropout gradients do not follow the forward mask", be->info.name, bad);
		CHECK(kept > 400 && kept < 600, "%s: dropout(p = 0.5) kept %lld of 1000", be->info.name, (long long)kept);
		e = clg_dropout(x, 0.5, 8, 0);
		CHECK_OK(clg_to_host(e, he, sizeof(he)));
		CHECK(memcmp(he, xs, sizeof(xs)) == 0, "%s: dropout in eval mode changed its input", be->info.name);
		y0 = clg_dropout(x, 0, 8, 1);
		y1 = clg_dropout(x, 1, 8, 1);
		CHECK_OK(clg_to_host(y0, he, sizeof(he)));
		CHECK(memcmp(he, xs, sizeof(xs)) == 0, "%s: dropout with p = 0 changed its input", be->info.name);
		CHECK_OK(clg_to_host(y1, he, sizeof(he)));
		bad = 0;
		for (int64_t k = 0; k < m; k++)
			bad += he[k] != 0;
		CHECK(bad == 0, "%s: dropout with p = 1 kept %d elements", be->info.name, bad);
		CHECK(clg_dropout(x, 1.5, 8, 1) == NULL && clg_last_status() == CLG_ERR_INVALID,
		      "%s: dropout with p = 1.5 was accepted", be->info.name);
		clg_free(x), clg_free(y), clg_free(s), clg_free(e), clg_free(y0), clg_free(y1);
	}
	/* successive generator draws drop different elements */
	{
		clg_rng g = clg_rng_init(4);
		clg_tensor *x = clg_ones(be, CLG_F32, CLG_SHAPE(4096));
		clg_tensor *a = clg_dropout_rng(x, 0.5, &g, 1), *b = clg_dropout_rng(x, 0.5, &g, 1);
		float *ha = host_of(a, 4096), *hb = host_of(b, 4096);
		CHECK(ha && hb && frac_equal(ha, hb, 4096) < 0.6, "%s: successive dropout masks agree at %.3f of the places",
		      be->info.name, ha && hb ? frac_equal(ha, hb, 4096) : 1.0);
		CHECK(g.offset == 2 * 4096, "%s: dropout_rng advanced the generator to %llu", be->info.name,
		      (unsigned long long)g.offset);
		free(ha), free(hb);
		clg_free(x), clg_free(a), clg_free(b);
	}
}

/* ---- the index family's edges ---- */

static void check_index_edges(clg_backend *be)
{
	static const float table[4 * 2] = {1, 2, 3, 4, 5, 6, 7, 8};
	static const int32_t ix[5] = {-1, 2, 4, -2147483647 - 1, 0};
	static const float want[5 * 2] = {0, 0, 5, 6, 0, 0, 0, 0, 1, 2};
	float got[10];
	clg_tensor *t = clg_from_host(be, CLG_F32, CLG_SHAPE(4, 2), table);
	clg_tensor *i = clg_from_host(be, CLG_I32, CLG_SHAPE(5), ix), *y, *fi;

	/* negative and too-large indices give zero rows (the op suite draws only [0, idx_hi)) */
	y = clg_embedding(t, i);
	CHECK_OK(clg_to_host(y, got, sizeof(got)));
	CHECK(memcmp(got, want, sizeof(want)) == 0, "%s: embedding with out-of-range indices", be->info.name);
	clg_free(y);
	/* ... and add nowhere in backward */
	clg_set_requires_grad(t, 1);
	y = clg_embedding(t, i);
	{
		clg_tensor *s = clg_sum(y, 0, NULL, 0);
		static const float gw[8] = {1, 1, 0, 0, 1, 1, 0, 0};
		CHECK_OK(clg_backward(s));
		CHECK_OK(clg_to_host(clg_grad(t), got, sizeof(float) * 8));
		CHECK(memcmp(got, gw, sizeof(gw)) == 0, "%s: embedding gradient with out-of-range indices", be->info.name);
		clg_free(s);
	}
	clg_free(y);
	/* wrong shapes and dtypes are reported with the op, the device and the shapes */
	{
		clg_buffer *b[3] = {NULL, NULL, NULL};
		clg_op_call c = {.op = CLG_OP_INDEX_SELECT};
		for (int k = 0; k < 3; k++)
			CHECK_OK(clg_buffer_alloc(be, 64, &b[k]));
		if (b[0] && b[1] && b[2]) {
			clg_view_contiguous(&c.dst, b[0], CLG_F32, 2, (int64_t[]){4, 2}); /* cannot hold 5 rows */
			clg_view_contiguous(&c.src[0], b[1], CLG_F32, 2, (int64_t[]){4, 2});
			clg_view_contiguous(&c.src[1], b[2], CLG_I32, 1, (int64_t[]){5});
			CHECK(clg_run(be, &c) == CLG_ERR_SHAPE && strstr(clg_last_error(), "index_select") &&
				      strstr(clg_last_error(), be->info.name) && strstr(clg_last_error(), "(5,)"),
			      "%s: a wrong index_select shape gave: %s", be->info.name, clg_last_error());
			c.op = CLG_OP_INDEX_ADD;
			c.src[0] = c.dst;
			c.src[1].dtype = CLG_F32; /* float indices */
			CHECK(clg_run(be, &c) == CLG_ERR_DTYPE && strstr(clg_last_error(), "index_add"),
			      "%s: float indices for index_add gave: %s", be->info.name, clg_last_error());
		}
		for (int k = 0; k < 3; k++)
			clg_buffer_free(b[k]);
	}
	fi = clg_zeros(be, CLG_F32, CLG_SHAPE(5));
	CHECK(clg_embedding(t, fi) == NULL && clg_last_status() == CLG_ERR_DTYPE, "%s: float indices were accepted",
	      be->info.name);
	CHECK(clg_gather(t, 1, i) == NULL && clg_last_status() == CLG_ERR_SHAPE, "%s: 1-D indices gathered from 2-D",
	      be->info.name);
	CHECK(clg_rand(be, CLG_I32, CLG_SHAPE(3), 1) == NULL && clg_last_status() == CLG_ERR_DTYPE,
	      "%s: int32 random numbers were drawn", be->info.name);
	{
		clg_rng g = clg_rng_init(1);
		CHECK(clg_rng_uniform(&g, be, CLG_F32, CLG_SHAPE(3), 1, 1) == NULL && clg_last_status() == CLG_ERR_INVALID &&
			      g.offset == 0,
		      "%s: an empty uniform range was accepted (or advanced the generator)", be->info.name);
	}
	clg_free(fi);
	clg_free(t);
	clg_free(i);
}

/* An unknown CLGRAD_INDEX_ADD is refused where it is set, naming the variable and the paths, and
 * the path in force stays. */
static void check_index_add_env(clg_backend *be)
{
	char was[16];

	snprintf(was, sizeof(was), "%s", clg_cfg_str(CLG_CFG_INDEX_ADD)); /* auto, or the test's CLGRAD_INDEX_ADD */
	CHECK(clg_config_set("INDEX_ADD", "atomics") == CLG_ERR_INVALID && strstr(clg_last_error(), "CLGRAD_INDEX_ADD") &&
		      strstr(clg_last_error(), "auto, scan, sort, rank") && clg_cfg_is(CLG_CFG_INDEX_ADD, was),
	      "%s: CLGRAD_INDEX_ADD=atomics gave: %s (in force: %s)", be->info.name, clg_last_error(),
	      clg_cfg_str(CLG_CFG_INDEX_ADD));
}

/* Values of gather, index_select, embedding and concat against host loops (the gradient checks
 * compare devices with the reference, so the reference's meaning is pinned down here). */
static void check_index_semantics(clg_backend *be)
{
	float t[4 * 5], got[64], want[64];
	int bad;
	clg_tensor *x, *i, *y;
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 5; c++)
			t[r * 5 + c] = (float)(10 * r + c);
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(4, 5), t);

	/* gather along dim 1: out[r][k] = t[r][idx[r][k]], idx (3, 2): rows beyond 3 unused */
	{
		static const int32_t ix[6] = {4, 0, 2, 2, 1, 3};
		i = clg_from_host(be, CLG_I32, CLG_SHAPE(3, 2), ix);
		y = clg_gather(x, 1, i);
		CHECK(y && clg_ndim(y) == 2 && clg_shape(y)[0] == 3 && clg_shape(y)[1] == 2, "%s: gather dim 1 shape",
		      be->info.name);
		CHECK_OK(clg_to_host(y, got, sizeof(float) * 6));
		bad = 0;
		for (int r = 0; r < 3; r++)
			for (int k = 0; k < 2; k++)
				bad += got[r * 2 + k] != t[r * 5 + ix[r * 2 + k]];
		CHECK(bad == 0, "%s: gather along dim 1 gave %d wrong values", be->info.name, bad);
		clg_free(y);
		clg_free(i);
	}
	/* gather along dim 0: out[r][c] = t[idx[r][c]][c], idx (2, 3) */
	{
		static const int32_t ix[6] = {3, 0, 1, 2, 2, 0};
		i = clg_from_host(be, CLG_I32, CLG_SHAPE(2, 3), ix);
		y = clg_gather(x, 0, i);
		CHECK_OK(clg_to_host(y, got, sizeof(float) * 6));
		bad = 0;
		for (int r = 0; r < 2; r++)
			for (int c = 0; c < 3; c++)
				bad += got[r * 3 + c] != t[ix[r * 3 + c] * 5 + c];
		CHECK(bad == 0, "%s: gather along dim 0 gave %d wrong values", be->info.name, bad);
		clg_free(y);
		clg_free(i);
	}
	/* index_select along dim 1: out (4, 3) = columns 4, 1, 4 */
	{
		static const int32_t ix[3] = {4, 1, 4};
		i = clg_from_host(be, CLG_I32, CLG_SHAPE(3), ix);
		y = clg_index_select(x, 1, i);
		CHECK(y && clg_shape(y)[0] == 4 && clg_shape(y)[1] == 3, "%s: index_select dim 1 shape", be->info.name);
		CHECK_OK(clg_to_host(y, got, sizeof(float) * 12));
		bad = 0;
		for (int r = 0; r < 4; r++)
			for (int k = 0; k < 3; k++)
				bad += got[r * 3 + k] != t[r * 5 + ix[k]];
		CHECK(bad == 0, "%s: index_select along dim 1 gave %d wrong values", be->info.name, bad);
		clg_free(y);
		clg_free(i);
	}
	/* embedding with (2, 2) indices: (2, 2, 5) */
	{
		static const int32_t ix[4] = {3, 1, 1, 0};
		i = clg_from_host(be, CLG_I32, CLG_SHAPE(2, 2), ix);
		y = clg_embedding(x, i);
		CHECK(y && clg_ndim(y) == 3 && clg_shape(y)[2] == 5, "%s: embedding shape", be->info.name);
		CHECK_OK(clg_to_host(y, got, sizeof(float) * 20));
		bad = 0;
		for (int k = 0; k < 4; k++)
			for (int c = 0; c < 5; c++)
				bad += got[k * 5 + c] != t[ix[k] * 5 + c];
		CHECK(bad == 0, "%s: embedding gave %d wrong values", be->info.name, bad);
		clg_free(y);
		clg_free(i);
	}
	/* concat along dim 1 of x (4, 5) and its first two columns, then along dim 0 */
	{
		clg_tensor *s = clg_slice(x, 1, 0, 2, 1), *parts[2] = {x, s};
		y = clg_concat(parts, 2, 1);
		CHECK(y && clg_shape(y)[0] == 4 && clg_shape(y)[1] == 7, "%s: concat dim 1 shape", be->info.name);
		CHECK_OK(clg_to_host(y, got, sizeof(float) * 28));
		bad = 0;
		for (int r = 0; r < 4; r++)
			for (int c = 0; c < 7; c++)
				bad += got[r * 7 + c] != t[r * 5 + (c < 5 ? c : c - 5)];
		CHECK(bad == 0, "%s: concat along dim 1 gave %d wrong values", be->info.name, bad);
		clg_free(y);
		parts[1] = x;
		y = clg_concat(parts, 2, 0);
		CHECK_OK(clg_to_host(y, got, sizeof(float) * 40));
		memcpy(want, t, sizeof(t));
		memcpy(want + 20, t, sizeof(t));
		CHECK(memcmp(got, want, sizeof(float) * 40) == 0, "%s: concat along dim 0", be->info.name);
		clg_free(y);
		clg_free(s);
	}
	clg_free(x);
}

int main(int argc, char **argv)
{
	const char *dev_filter = NULL;
	const clg_device_info *list;
	clg_backend *ref = NULL;
	int n, tested = 0;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--device") && i + 1 < argc)
			dev_filter = argv[++i];
	t_require_opencl();
	check_kat();
	CHECK_OK(clg_devices(&list, &n));
	CHECK_OK(clg_backend_open(0, &ref));
	if (!ref)
		return t_finish("test_random");
	check_against_spec(ref);
	check_streams(ref);
	check_statistics(ref);
	check_index_edges(ref);
	check_index_semantics(ref);
	for (int i = 1; i < n; i++) {
		clg_backend *be = NULL;
		if (dev_filter && !strstr(list[i].name, dev_filter) && !strstr(list[i].platform, dev_filter))
			continue;
		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		tested++;
		clg_scope_begin();
		check_against_spec(be);
		check_same_everywhere(ref, be);
		check_streams(be);
		check_statistics(be);
		check_dropout(ref, be);
		check_index_edges(be);
		check_index_add_env(be);
		check_index_semantics(be);
		clg_scope_end();
		clg_backend_close(be);
	}
	CHECK(tested > 0, "no device matched --device %s", dev_filter ? dev_filter : "(none)");
	clg_backend_close(ref);
	return t_finish("test_random");
}
