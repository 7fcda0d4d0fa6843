/* The FFT frontend and the OpenCL paths (backend/opencl/cl_ops_fft.c), on the reference and every
 * OpenCL device: values numpy gives for small signals under each norm, ifft(fft(x)) == x and
 * irfft(rfft(x), n) == x at lengths clFFT does and does not do, the path each length takes
 * (clFFT for radices 2..13, the own kernels for 17; CLGRAD_FFT=clfft refusing 17 with
 * CLG_ERR_UNSUPPORTED, CLGRAD_FFT=own taking 1024), plans cached per key, and the errors for bad
 * shapes and dtypes, and conv1d_fft against conv2d on rows of height 1. Prints each device's
 * plans with the path they run on. */
#include "test_util.h"

#include "cl_internal.h"

#include <clg_fft.h>

#include <math.h>
#include <string.h>

static void expect_close(clg_tensor *t, const float *want, int n, float tol, const char *what, const char *dev)
{
	float got[64];
	CHECK(t != NULL, "%s on %s: %s", what, dev, clg_last_error());
	if (!t)
		return;
	CHECK(clg_numel(t) == n, "%s on %s: %lld elements, want %d", what, dev, (long long)clg_numel(t), n);
	if (clg_numel(t) != n || clg_to_host(t, got, sizeof(float) * (size_t)n) != CLG_OK)
		return;
	for (int i = 0; i < n; i++)
		CHECK(fabsf(got[i] - want[i]) <= tol, "%s on %s: [%d] = %g, want %g", what, dev, i, got[i], want[i]);
}

/* numpy.fft on [1, 2, 3, 4] */
static void known_values(clg_backend *be)
{
	const char *dev = be->info.name;
	clg_tensor *x, *r;

	clg_scope_begin();
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(4, 2), (float[]){1, 0, 2, 0, 3, 0, 4, 0});
	expect_close(clg_fft(x, CLG_FFT_NORM_BACKWARD), (float[]){10, 0, -2, 2, -2, 0, -2, -2}, 8, 1e-5f, "fft", dev);
	expect_close(clg_fft(x, CLG_FFT_NORM_ORTHO), (float[]){5, 0, -1, 1, -1, 0, -1, -1}, 8, 1e-5f, "fft ortho", dev);
	expect_close(clg_fft(x, CLG_FFT_NORM_FORWARD), (float[]){2.5f, 0, -.5f, .5f, -.5f, 0, -.5f, -.5f}, 8, 1e-6f,
		     "fft forward", dev);
	expect_close(clg_ifft(x, CLG_FFT_NORM_BACKWARD), (float[]){2.5f, 0, -.5f, -.5f, -.5f, 0, -.5f, .5f}, 8, 1e-6f,
		     "ifft", dev);
	r = clg_from_host(be, CLG_F32, CLG_SHAPE(4), (float[]){1, 2, 3, 4});
	expect_close(clg_rfft(r, CLG_FFT_NORM_BACKWARD), (float[]){10, 0, -2, 2, -2, 0}, 6, 1e-5f, "rfft", dev);
	/* irfft ignores the imaginary parts of DC and Nyquist (9 and 7 here), as numpy does */
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(3, 2), (float[]){10, 9, -2, 2, -2, 7});
	expect_close(clg_irfft(x, 0, CLG_FFT_NORM_BACKWARD), (float[]){1, 2, 3, 4}, 4, 1e-5f, "irfft", dev);
	/* n = 3 from 3 bins: the spectrum is cut to 2 */
	expect_close(clg_irfft(x, 3, CLG_FFT_NORM_BACKWARD), (float[]){2, 2.8452995f, 5.1547005f}, 3, 1e-5f, "irfft n=3", dev);
	expect_close(clg_complex_mul(x, x, 1), (float[]){181, 0, 8, 0, 53, 0}, 6, 1e-4f, "complex_mul conj", dev);
	clg_scope_end();
}

/* float64 where the device has it (clFFT's double plans, the own kernels in double): numpy's
 * values for [1, 2, 3, 4] and a round trip of length 17 to 1e-12. */
static void float64(clg_backend *be)
{
	const char *dev = be->info.name;
	double got[34], h[34];
	clg_tensor *x, *y;

	if (be->info.index > 0 && !be->info.has_fp64)
		return;
	clg_scope_begin();
	x = clg_from_host(be, CLG_F64, CLG_SHAPE(4, 2), (double[]){1, 0, 2, 0, 3, 0, 4, 0});
	y = clg_fft(x, CLG_FFT_NORM_BACKWARD);
	CHECK(y && clg_to_host(y, got, sizeof(double) * 8) == CLG_OK, "float64 fft on %s: %s", dev, clg_last_error());
	for (int i = 0; y && i < 8; i++)
		CHECK(fabs(got[i] - (double[]){10, 0, -2, 2, -2, 0, -2, -2}[i]) < 1e-12, "float64 fft on %s: [%d] = %.17g", dev,
		      i, got[i]);
	for (int i = 0; i < 34; i++)
		h[i] = sin(1.0 + i * i);
	x = clg_from_host(be, CLG_F64, CLG_SHAPE(17, 2), h);
	y = clg_ifft(clg_fft(x, CLG_FFT_NORM_ORTHO), CLG_FFT_NORM_ORTHO);
	CHECK(y && clg_to_host(y, got, sizeof(double) * 34) == CLG_OK, "float64 round trip on %s: %s", dev, clg_last_error());
	for (int i = 0; y && i < 34; i++)
		CHECK(fabs(got[i] - h[i]) < 1e-12, "float64 round trip of 17 on %s: [%d] off by %g", dev, i, got[i] - h[i]);
	/* lengths clFFT does (radices 3, 5, 7) under each norm, whose scales (1/5, 1/sqrt(12), ...) a
	 * float cannot hold: clFFT's plans take a cl_float scale, once 1.5e-8 off here */
	for (int64_t n = 5; n <= 12; n += (n == 7 ? 5 : 1)) {
		for (int norm = CLG_FFT_NORM_BACKWARD; norm <= CLG_FFT_NORM_FORWARD; norm++) {
			double worst = 0, worst_r = 0;
			x = clg_from_host(be, CLG_F64, CLG_SHAPE(n, 2), h);
			y = clg_ifft(clg_fft(x, (clg_fft_norm)norm), (clg_fft_norm)norm);
			CHECK(y && clg_to_host(y, got, sizeof(double) * 2 * (size_t)n) == CLG_OK, "float64 ifft(fft) of %lld on %s: %s",
			      (long long)n, dev, clg_last_error());
			for (int i = 0; y && i < 2 * n; i++)
				worst = fmax(worst, fabs(got[i] - h[i]));
			x = clg_from_host(be, CLG_F64, CLG_SHAPE(n), h);
			y = clg_irfft(clg_rfft(x, (clg_fft_norm)norm), n, (clg_fft_norm)norm);
			CHECK(y && clg_to_host(y, got, sizeof(double) * (size_t)n) == CLG_OK, "float64 irfft(rfft) of %lld on %s: %s",
			      (long long)n, dev, clg_last_error());
			for (int i = 0; y && i < n; i++)
				worst_r = fmax(worst_r, fabs(got[i] - h[i]));
			CHECK(worst < 1e-12 && worst_r < 1e-12, "float64 round trips of %lld, norm %d on %s: off by %g (complex), %g (real)",
			      (long long)n, norm, dev, worst, worst_r);
		}
	}
	clg_scope_end();
}

/* ifft(fft(x)) and irfft(rfft(x), n) give x back, batch 3, under each norm. */
static void round_trips(clg_backend *be, int64_t n)
{
	const char *dev = be->info.name;
	float *h = malloc(sizeof(float) * 6 * (size_t)n), *got = malloc(sizeof(float) * 6 * (size_t)n);

	for (int norm = 0; h && got && norm < 3; norm++) {
		clg_tensor *x, *y, *r, *ry;
		double err = 0, rerr = 0;
		clg_scope_begin();
		t_fill_uniform(h, 6 * (size_t)n, 5u + (unsigned)n, -1, 1);
		x = clg_from_host(be, CLG_F32, CLG_SHAPE(3, n, 2), h);
		y = clg_ifft(clg_fft(x, (clg_fft_norm)norm), (clg_fft_norm)norm);
		r = clg_from_host(be, CLG_F32, CLG_SHAPE(3, n), h);
		ry = clg_irfft(clg_rfft(r, (clg_fft_norm)norm), n, (clg_fft_norm)norm);
		CHECK(y && ry, "round trip of length %lld on %s: %s", (long long)n, dev, clg_last_error());
		if (y && clg_to_host(y, got, sizeof(float) * 6 * (size_t)n) == CLG_OK)
			for (int64_t i = 0; i < 6 * n; i++)
				err = fmax(err, fabs(got[i] - h[i]));
		if (ry && clg_to_host(ry, got, sizeof(float) * 3 * (size_t)n) == CLG_OK)
			for (int64_t i = 0; i < 3 * n; i++)
				rerr = fmax(rerr, fabs(got[i] - h[i]));
		CHECK(y && ry && err < 1e-5 && rerr < 1e-5, "round trips of length %lld, norm %d on %s: off by %g (complex), %g (real)",
		      (long long)n, norm, dev, err, rerr);
		clg_scope_end();
	}
	free(h);
	free(got);
}

static void paths(clg_backend *be)
{
	const char *why = "", *dev = be->info.name;
	clg_tensor *x;
	char plans[4096];
	int before;

	CHECK(clg_cl_fft_path_of(be, 1024, &why) == CLG_CL_FFT_CLFFT, "length 1024 on %s: not clFFT (%s)", dev, why);
	CHECK(clg_cl_fft_path_of(be, 17, &why) == CLG_CL_FFT_OWN, "length 17 on %s: not the own kernels (%s)", dev, why);
	CHECK(clg_cl_fft_path_of(be, 2 * 3 * 5 * 7 * 11 * 13, &why) == CLG_CL_FFT_CLFFT, "length 30030 on %s: not clFFT", dev);
	/* beyond 13, the direct sum or Bluestein by the work n^2 batch */
	CHECK(clg_cl_fft_path_batch(be, 17, 64, &why) == CLG_CL_FFT_OWN, "17 x 64 rows on %s: not the direct sum (%s)", dev, why);
	CHECK(clg_cl_fft_path_batch(be, 257, 4, &why) == CLG_CL_FFT_BLUESTEIN, "257 x 4 rows on %s: not Bluestein (%s)", dev, why);
	CHECK(clg_cl_fft_path_of(be, 4099, &why) == CLG_CL_FFT_BLUESTEIN, "length 4099 on %s: not Bluestein (%s)", dev, why);
	CHECK(!strcmp(clg_fft_path_batch(be, CLG_OP_FFT_R2C, 1031, 8, NULL), "Bluestein"), "1031 x 8 rows on %s: %s", dev,
	      clg_fft_path_batch(be, CLG_OP_FFT_R2C, 1031, 8, NULL));
	clg_config_set("FFT", "own");
	CHECK(clg_cl_fft_path_of(be, 1024, &why) == CLG_CL_FFT_OWN, "CLGRAD_FFT=own, 1024 on %s: not the own kernels", dev);
	clg_config_set("FFT", "clfft");
	clg_scope_begin();
	x = clg_zeros(be, CLG_F32, CLG_SHAPE(2, 17, 2));
	CHECK(clg_fft(x, CLG_FFT_NORM_BACKWARD) == NULL && clg_last_status() == CLG_ERR_UNSUPPORTED,
	      "CLGRAD_FFT=clfft, length 17 on %s: not refused", dev);
	CHECK(strstr(clg_last_error(), "fft_c2c") && strstr(clg_last_error(), dev) && strstr(clg_last_error(), "prime factor") &&
	      strstr(clg_last_error(), "(2, 17, 2)"), "the refusal names op, device, shape and the reason: %s", clg_last_error());
	clg_scope_end();
	clg_config_set("FFT", NULL);
	/* one plan per key: the same transform twice adds none, another batch adds one */
	clg_scope_begin();
	before = clg_cl_fft_plans(be, plans, sizeof(plans));
	x = clg_zeros(be, CLG_F32, CLG_SHAPE(5, 60, 2));
	CHECK(clg_fft(x, CLG_FFT_NORM_ORTHO) && clg_fft(x, CLG_FFT_NORM_ORTHO), "fft of 60 on %s: %s", dev, clg_last_error());
	CHECK(clg_cl_fft_plans(be, plans, sizeof(plans)) == before + 1, "two equal ffts on %s made %d plans", dev,
	      clg_cl_fft_plans(be, plans, sizeof(plans)) - before);
	x = clg_zeros(be, CLG_F32, CLG_SHAPE(4, 60, 2));
	CHECK(clg_fft(x, CLG_FFT_NORM_ORTHO) != NULL, "fft of 60 on %s: %s", dev, clg_last_error());
	CHECK(clg_cl_fft_plans(be, plans, sizeof(plans)) == before + 2, "another batch on %s made %d plans", dev,
	      clg_cl_fft_plans(be, plans, sizeof(plans)) - before);
	clg_scope_end();
	clg_cl_fft_plans(be, plans, sizeof(plans));
	printf("fft plans on %s (length 17 and others with prime factors above 13: own kernels):\n%s", dev, plans);
	/* the path of each length after the round trips ran (a failed clFFT plan shows as own kernels) */
	CHECK(!strcmp(clg_fft_path(be, CLG_OP_FFT_C2C, 17, NULL), "own kernels"), "length 17 on %s: %s", dev,
	      clg_fft_path(be, CLG_OP_FFT_C2C, 17, NULL));
	for (int op = 0; op < 3; op++) {
		static const int64_t ns[] = {8, 17, 1000, 1024};
		clg_op o = op == 0 ? CLG_OP_FFT_C2C : op == 1 ? CLG_OP_FFT_R2C : CLG_OP_FFT_C2R;
		printf("fft paths on %s, %s:", dev, clg_op_name(o));
		for (int k = 0; k < 4; k++) {
			const char *path = clg_fft_path(be, o, ns[k], &why);
			printf(" %lld %s (%s);", (long long)ns[k], path, why);
		}
		printf("\n");
	}
}

/* conv1d_fft against conv2d (im2col + GEMM) on rows of height 1: the same cross-correlation. */
static void conv1d_against_conv2d(clg_backend *be, int64_t N, int64_t C, int64_t L, int64_t OC, int64_t K, int64_t pad)
{
	const char *dev = be->info.name;
	int64_t nx = N * C * L, nw = OC * C * K, Lout = L + 2 * pad - K + 1, ny = N * OC * Lout;
	float *h = malloc(sizeof(float) * (size_t)(nx + nw + OC)), *a = malloc(sizeof(float) * (size_t)ny),
	      *r = malloc(sizeof(float) * (size_t)ny);
	clg_tensor *x, *w, *b, *y1, *y2;
	double err = 0, scale = 0;

	clg_scope_begin();
	if (!h || !a || !r)
		goto out;
	t_fill_uniform(h, (size_t)(nx + nw + OC), 11, -1, 1);
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(N, C, L), h);
	w = clg_from_host(be, CLG_F32, CLG_SHAPE(OC, C, K), h + nx);
	b = clg_from_host(be, CLG_F32, CLG_SHAPE(OC), h + nx + nw);
	y1 = clg_conv1d_fft(x, w, b, pad);
	y2 = clg_conv1d_im2col(x, w, b, pad); /* conv2d of rows, kept to im2col whatever the crossover */
	CHECK(y1 && y2, "conv1d_fft / conv2d on %s: %s", dev, clg_last_error());
	if (!y1 || !y2 || clg_to_host(y1, a, sizeof(float) * (size_t)ny) || clg_to_host(y2, r, sizeof(float) * (size_t)ny))
		goto out;
	CHECK(clg_ndim(y1) == 3 && clg_shape(y1)[2] == Lout, "conv1d_fft on %s: output length %lld, want %lld", dev,
	      (long long)clg_shape(y1)[2], (long long)Lout);
	for (int64_t i = 0; i < ny; i++) {
		err = fmax(err, fabs(a[i] - r[i]));
		scale = fmax(scale, fabs(r[i]));
	}
	CHECK(err <= 1e-5 * (scale + 1), "conv1d_fft (%lld, %lld, %lld) * (%lld, %lld, %lld) pad %lld on %s: off conv2d by %g (scale %g)",
	      (long long)N, (long long)C, (long long)L, (long long)OC, (long long)C, (long long)K, (long long)pad, dev, err, scale);
out:
	clg_scope_end();
	free(h);
	free(a);
	free(r);
}

/* FFT_C2C with the dst the very view of the source (in place), against the same transform done
 * out of place on the reference. */
static void in_place(clg_backend *be, clg_backend *ref, int64_t n)
{
	float h[2 * 64], want[2 * 64], got[2 * 64];
	clg_buffer *b = NULL, *r0 = NULL, *r1 = NULL;
	clg_op_call c = {.op = CLG_OP_FFT_C2C};

	t_fill_uniform(h, (size_t)(2 * n), 3, -1, 1);
	c.f[0] = 1;
	CHECK_OK(clg_buffer_alloc(ref, sizeof(float) * 2 * (size_t)n, &r0));
	CHECK_OK(clg_buffer_alloc(ref, sizeof(float) * 2 * (size_t)n, &r1));
	CHECK_OK(clg_buffer_alloc(be, sizeof(float) * 2 * (size_t)n, &b));
	if (!b || !r0 || !r1)
		goto out;
	CHECK_OK(clg_buffer_upload(r0, 0, h, sizeof(float) * 2 * (size_t)n));
	clg_view_contiguous(&c.src[0], r0, CLG_F32, 2, (int64_t[]){n, 2});
	clg_view_contiguous(&c.dst, r1, CLG_F32, 2, (int64_t[]){n, 2});
	CHECK_OK(clg_run(ref, &c));
	CHECK_OK(clg_buffer_download(r1, 0, want, sizeof(float) * 2 * (size_t)n));
	CHECK_OK(clg_buffer_upload(b, 0, h, sizeof(float) * 2 * (size_t)n));
	clg_view_contiguous(&c.src[0], b, CLG_F32, 2, (int64_t[]){n, 2});
	c.dst = c.src[0];
	CHECK_OK(clg_run(be, &c));
	CHECK_OK(clg_buffer_download(b, 0, got, sizeof(float) * 2 * (size_t)n));
	for (int64_t i = 0; i < 2 * n; i++)
		CHECK(fabsf(got[i] - want[i]) < 1e-4f, "in-place fft of %lld on %s: [%lld] = %g, want %g", (long long)n,
		      be->info.name, (long long)i, got[i], want[i]);
out:
	clg_buffer_free(b);
	clg_buffer_free(r0);
	clg_buffer_free(r1);
}

static void errors(clg_backend *be)
{
	const char *dev = be->info.name;
	clg_tensor *x;

	clg_scope_begin();
	x = clg_zeros(be, CLG_F32, CLG_SHAPE(4, 3));
	CHECK(clg_fft(x, CLG_FFT_NORM_BACKWARD) == NULL && clg_last_status() == CLG_ERR_SHAPE &&
	      strstr(clg_last_error(), "'fft'") && strstr(clg_last_error(), "(4, 3)"), "fft of (4, 3) on %s: %s", dev,
	      clg_last_error());
	CHECK(clg_irfft(clg_zeros(be, CLG_F32, CLG_SHAPE(1, 2)), 0, CLG_FFT_NORM_BACKWARD) == NULL &&
	      clg_last_status() == CLG_ERR_SHAPE, "irfft of one bin, n = 0, on %s: %s", dev, clg_last_error());
	CHECK(clg_complex_mul(clg_zeros(be, CLG_F32, CLG_SHAPE(3, 2)), clg_zeros(be, CLG_F32, CLG_SHAPE(4, 2)), 0) == NULL &&
	      clg_last_status() == CLG_ERR_SHAPE, "complex_mul of (3, 2) and (4, 2) on %s", dev);
	x = clg_zeros(be, CLG_F16, CLG_SHAPE(4, 2));
	CHECK(x && clg_fft(x, CLG_FFT_NORM_BACKWARD) == NULL && clg_last_status() == CLG_ERR_DTYPE,
	      "fft of float16 on %s: %s", dev, clg_last_error());
	clg_scope_end();
}

int main(void)
{
	int n = t_opencl_count();
	static const int64_t lengths[] = {1, 2, 8, 17, 97, 1000, 1024};

	clg_backend *ref = NULL;

	CHECK_OK(clg_backend_open(0, &ref));
	for (int i = 0; ref && i <= n; i++) {
		clg_backend *be = NULL;
		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		in_place(be, ref, 16);
		in_place(be, ref, 17);
		known_values(be);
		float64(be);
		for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++)
			round_trips(be, lengths[l]);
		errors(be);
		conv1d_against_conv2d(be, 2, 3, 50, 4, 7, 3);
		conv1d_against_conv2d(be, 1, 2, 300, 2, 64, 0);
		conv1d_against_conv2d(be, 3, 1, 17, 2, 17, 8);
		if (i > 0)
			paths(be);
		clg_backend_close(be);
	}
	clg_backend_close(ref);
	return t_finish("test_fft");
}
