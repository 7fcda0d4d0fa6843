/* FFTW's single-precision transforms for `clgrad bench fft` (cli.h: bench_fftw_time): the same
 * batched transform as clgrad's (C2C forward, or R2C; rank 1: along the last dim, rank 2: n x n
 * planes), planned once with FFTW_MEASURE (planning not
 * timed), one thread, median of reps calls. Without FFTW at build time (cli/fftw.cmake) it reports
 * "not available". */
#include "cli.h"

#ifdef CLG_HAVE_FFTW
#include <fftw3.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int bench_fftw_time(int real, int rank, int64_t n, int64_t batch, int reps, double *median)
{
	int64_t pts = rank == 2 ? n * n : n, bins = (rank == 2 ? n : 1) * (real ? n / 2 + 1 : n);
	float *in = fftwf_malloc(sizeof(float) * (size_t)(batch * (real ? pts : 2 * pts)));
	fftwf_complex *out = fftwf_malloc(sizeof(fftwf_complex) * (size_t)(batch * bins));
	double *t = malloc(sizeof(double) * (size_t)reps);
	fftwf_plan p = NULL;
	int len[2] = {(int)n, (int)n}, rc = -1;

	if (!in || !out || !t || rank < 1 || rank > 2)
		goto out;
	if (real)
		p = fftwf_plan_many_dft_r2c(rank, len, (int)batch, in, NULL, 1, (int)pts, out, NULL, 1, (int)bins, FFTW_MEASURE);
	else
		p = fftwf_plan_many_dft(rank, len, (int)batch, (fftwf_complex *)in, NULL, 1, (int)pts, out, NULL, 1, (int)pts,
					FFTW_FORWARD, FFTW_MEASURE);
	if (!p)
		goto out;
	for (int64_t i = 0; i < batch * (real ? pts : 2 * pts); i++) /* (planning overwrote the input) */
		in[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
	fftwf_execute(p);
	for (int r = 0; r < reps; r++) {
		double t0 = clg_now();
		fftwf_execute(p);
		t[r] = clg_now() - t0;
	}
	qsort(t, (size_t)reps, sizeof(double), cmp_double);
	*median = t[reps / 2];
	rc = 0;
out:
	if (p)
		fftwf_destroy_plan(p);
	fftwf_free(in);
	fftwf_free(out);
	free(t);
	return rc;
}

const char *bench_fftw_version(void) { return fftwf_version; }
#else
int bench_fftw_time(int real, int rank, int64_t n, int64_t batch, int reps, double *median)
{
	(void)real, (void)rank, (void)n, (void)batch, (void)reps, (void)median;
	return -1;
}

const char *bench_fftw_version(void) { return NULL; }
#endif
