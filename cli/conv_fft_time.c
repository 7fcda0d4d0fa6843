/* FFT conv against im2col conv (cli.h: conv_fft_time, conv_fft_crossover), for `clgrad tune`
 * (which stores the crossover) and `clgrad bench fft --conv` (which prints both side by side).
 *
 * One step is conv1d forward and backward (gradients of x and w: what training does) of x (N, C, L)
 * with w (C, C, K), padding K / 2, summed to a scalar; clg_conv1d_fft against clg_conv1d_im2col,
 * each checked against the other once, then timed alternating step by step (so a shared machine's
 * slow spell favours neither), each step ending in clg_synchronize; medians. */
#include "cli.h"

#include <clgrad.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One step of path p (1 FFT, 0 im2col); its output to host out (NULL: not read) */
static int step(clg_backend *be, int p, clg_tensor *x, clg_tensor *w, int64_t pad, float *out, size_t n)
{
	int rc = -1;
	clg_scope_begin();
	clg_zero_grad(x);
	clg_zero_grad(w);
	clg_tensor *y = p ? clg_conv1d_fft(x, w, NULL, pad) : clg_conv1d_im2col(x, w, NULL, pad);
	clg_tensor *s = y ? clg_sum(y, 0, NULL, 0) : NULL;
	if (s && !clg_backward(s) && !clg_synchronize(be) && (!out || !clg_to_host(y, out, n * sizeof(float))))
		rc = 0;
	clg_scope_end();
	return rc;
}

int conv_fft_time(clg_backend *be, const conv_fft_shape *sh, int64_t k, int reps, double *us_fft, double *us_im2col)
{
	int64_t nx = sh->n * sh->c * sh->l, nw = sh->c * sh->c * k, pad = k / 2, lout = sh->l + 2 * pad - k + 1;
	size_t ny = (size_t)(sh->n * sh->c * lout);
	float *h = malloc(sizeof(float) * (size_t)(nx + nw)), *a = malloc(sizeof(float) * ny), *b = malloc(sizeof(float) * ny);
	double *t[2] = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps)}, err = 0, scale = 0;
	clg_tensor *x = NULL, *w = NULL;
	int rc = -1;

	if (!h || !a || !b || !t[0] || !t[1])
		goto out;
	for (int64_t i = 0; i < nx + nw; i++)
		h[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(sh->n, sh->c, sh->l), h);
	w = clg_from_host(be, CLG_F32, CLG_SHAPE(sh->c, sh->c, k), h + nx);
	if (!x || !w)
		goto out;
	clg_set_requires_grad(x, 1);
	clg_set_requires_grad(w, 1);
	/* checked (and warmed up: plans, kernel builds) first */
	if (step(be, 1, x, w, pad, a, ny) || step(be, 0, x, w, pad, b, ny))
		goto out;
	for (size_t i = 0; i < ny; i++) {
		err = fmax(err, fabs((double)a[i] - b[i]));
		scale = fmax(scale, fabs((double)b[i]));
	}
	if (!(err <= 1e-4 * (scale + 1))) {
		fprintf(stderr, "conv1d K=%lld: the FFT path is off im2col by %g (scale %g)\n", (long long)k, err, scale);
		goto out;
	}
	for (int r = 0; r < reps; r++)
		for (int p = 0; p < 2; p++) {
			double t0 = clg_now();
			if (step(be, (r + p) % 2, x, w, pad, NULL, 0))
				goto out;
			t[(r + p) % 2][r] = clg_now() - t0;
		}
	for (int p = 0; p < 2; p++)
		qsort(t[p], (size_t)reps, sizeof(double), cmp_double);
	*us_im2col = t[0][reps / 2] * 1e6;
	*us_fft = t[1][reps / 2] * 1e6;
	rc = 0;
out:
	clg_free(x);
	clg_free(w);
	free(h);
	free(a);
	free(b);
	free(t[0]);
	free(t[1]);
	return rc;
}

int conv_fft_crossover(const int64_t *k, const double *us_fft, const double *us_im2col, int n)
{
	int from = 0;
	/* the smallest kernel size from which the FFT wins at every larger size measured */
	for (int i = n - 1; i >= 0 && us_fft[i] < us_im2col[i]; i--)
		from = (int)k[i];
	return from;
}

int conv_fft_sweep(clg_backend *be, int reps, FILE *out, int64_t *k, double *us_fft, double *us_im2col)
{
	const conv_fft_shape sh = CONV_FFT_SHAPE;
	int n = 0;

	if (out) {
		fprintf(out, "conv1d on %s: x (%lld, %lld, %lld), w (%lld, %lld, K), padding K / 2, forward + backward, "
			"median of %d steps\n", be->info.name, (long long)sh.n, (long long)sh.c, (long long)sh.l,
			(long long)sh.c, (long long)sh.c, reps);
		fprintf(out, "%4s %12s %12s %14s\n", "K", "im2col ms", "fft ms", "im2col / fft");
	}
	for (int64_t kk = CONV_FFT_KMIN; kk <= CONV_FFT_KMAX; kk += 2, n++) {
		k[n] = kk;
		if (conv_fft_time(be, &sh, kk, reps, &us_fft[n], &us_im2col[n]))
			return -1;
		if (out) {
			fprintf(out, "%4lld %12.3f %12.3f %13.2fx\n", (long long)kk, us_im2col[n] * 1e-3, us_fft[n] * 1e-3,
				us_im2col[n] / us_fft[n]);
			fflush(out);
		}
	}
	return n;
}
