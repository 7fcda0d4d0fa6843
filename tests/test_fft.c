/* The FFT frontend and the OpenCL paths (backend/opencl/cl_ops_fft.c), on the reference and every
 * OpenCL device: values numpy gives for small signals under each norm, ifft(fft(x)) == x and
 * irfft(rfft(x), n) == x at lengths clFFT does and does not do, the path each length takes
 * (clFFT for radices 2..13, the own kernels for 17; CLGRAD_FFT=clfft refusing 17 with
 * CLG_ERR_UNSUPPORTED, CLGRAD_FFT=own taking 1024), plans cached per key, and the errors for bad
 * shapes and dtypes. Prints each device's plans with the path they run on. */
#include "test_util.h"

#include "cl_internal.h"

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
	setenv("CLGRAD_FFT", "own", 1);
	CHECK(clg_cl_fft_path_of(be, 1024, &why) == CLG_CL_FFT_OWN, "CLGRAD_FFT=own, 1024 on %s: not the own kernels", dev);
	setenv("CLGRAD_FFT", "clfft", 1);
	clg_scope_begin();
	x = clg_zeros(be, CLG_F32, CLG_SHAPE(2, 17, 2));
	CHECK(clg_fft(x, CLG_FFT_NORM_BACKWARD) == NULL && clg_last_status() == CLG_ERR_UNSUPPORTED,
	      "CLGRAD_FFT=clfft, length 17 on %s: not refused", dev);
	CHECK(strstr(clg_last_error(), "fft_c2c") && strstr(clg_last_error(), dev) && strstr(clg_last_error(), "prime factor") &&
	      strstr(clg_last_error(), "(2, 17, 2)"), "the refusal names op, device, shape and the reason: %s", clg_last_error());
	clg_scope_end();
	unsetenv("CLGRAD_FFT");
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

	for (int i = 0; i <= n; i++) {
		clg_backend *be = NULL;
		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		known_values(be);
		for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++)
			round_trips(be, lengths[l]);
		errors(be);
		if (i > 0)
			paths(be);
		clg_backend_close(be);
	}
	return t_finish("test_fft");
}
