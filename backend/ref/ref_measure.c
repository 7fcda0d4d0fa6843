/* Peak rates of the host, as the reference backend's equivalents of a device's peaks (see
 * clg_measure.h), and what every measurement shares: the clock and the rejection rule. */
#include "../clg_measure.h"
#include "ref_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double clg_measure_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double clg_measure_clock_resolution(void)
{
	struct timespec ts;
	if (clock_getres(CLOCK_MONOTONIC, &ts) != 0 || (ts.tv_sec == 0 && ts.tv_nsec == 0))
		return 1e-9;
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int clg_measure_implausible(double seconds, double work, double ceiling, double resolution_s, char *why,
			    size_t len)
{
	if (!(seconds > 0)) {
		snprintf(why, len, "time %.3g s is not positive", seconds);
		return 1;
	}
	if (seconds < 100 * resolution_s) {
		snprintf(why, len, "time %.3g s is under 100 timer resolutions (%.3g s)", seconds, resolution_s);
		return 1;
	}
	if (ceiling > 0 && work / seconds > 1.1 * ceiling) {
		snprintf(why, len, "rate %.4g/s is above 1.1 x the ceiling %.4g/s", work / seconds, ceiling);
		return 1;
	}
	return 0;
}

void clg_measure_reject(clg_peak_result *r, const char *what, double value, const char *why)
{
	if (r->nrejected < CLG_MEASURE_MAX_REJECTED) {
		clg_measure_rejected *x = &r->rejected[r->nrejected];
		snprintf(x->what, sizeof(x->what), "%s", what);
		x->value = value;
		snprintf(x->why, sizeof(x->why), "%s", why);
	}
	r->nrejected++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double clg_measure_median(const double *v, int n)
{
	double *t;
	double m;
	if (n <= 0)
		return 0;
	t = malloc((size_t)n * sizeof(*t));
	if (!t)
		return v[0];
	memcpy(t, v, (size_t)n * sizeof(*t));
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
	free(t);
	return m;
}

static int cmp_desc(const void *a, const void *b) { return cmp_double(b, a); }

double clg_measure_best(clg_peak_result *r, const char *what, const double *secs, int n, double work,
			double unit, double ceiling)
{
	double rates[64], best = 0, ceil = 0;
	int m = n < 64 ? n : 64, nr = 0;

	/* A rate more than twice the next lower one is a lone outlier (a timer glitch), not a peak:
	 * the ceiling is the highest rate that another run corroborates. (On a busy machine runs
	 * spread widely, so the margin is wide.) */
	for (int i = 0; i < m; i++)
		if (secs[i] > 0)
			rates[nr++] = work / secs[i];
	qsort(rates, (size_t)nr, sizeof(*rates), cmp_desc);
	for (int i = 0; i + 1 < nr && !ceil; i++)
		if (rates[i] <= 2 * rates[i + 1])
			ceil = rates[i];
	if (!ceil && nr)
		ceil = rates[nr / 2]; /* nothing corroborated: the median */
	if (nr == 1)
		ceil = 0;
	if (ceiling > 0 && (ceil <= 0 || ceiling < ceil))
		ceil = ceiling;
	for (int i = 0; i < m; i++) {
		char why[160], name[64];
		if (clg_measure_implausible(secs[i], work, ceil, r->resolution_s, why, sizeof(why))) {
			snprintf(name, sizeof(name), "%s rep %d", what, i);
			clg_measure_reject(r, name, secs[i] > 0 ? work / secs[i] * unit : secs[i], why);
			continue;
		}
		if (work / secs[i] * unit > best)
			best = work / secs[i] * unit;
	}
	return best;
}

/* ---- the host equivalents -------------------------------------------------------------------- */

#define HOST_LANES 32
#define LAUNCH_BATCH 100

static volatile double host_sink;

/* x = x * y + z on HOST_LANES independent lanes (the compiler keeps them in vector registers);
 * y < 1 makes every lane converge, so no value overflows or turns subnormal. Returns the time. */
#define HOST_MAD_LOOP(name, type)                                                   \
	static double name(long iters, double *sink)                                \
	{                                                                           \
		type x[HOST_LANES], y = (type)0.999999, z = (type)1e-3, s = 0;      \
		double t0;                                                          \
		for (int j = 0; j < HOST_LANES; j++)                                \
			x[j] = (type)1 + (type)j * (type)1e-3;                      \
		t0 = clg_measure_now();                                             \
		for (long it = 0; it < iters; it++)                                 \
			for (int j = 0; j < HOST_LANES; j++)                        \
				x[j] = x[j] * y + z;                                \
		t0 = clg_measure_now() - t0;                                        \
		for (int j = 0; j < HOST_LANES; j++)                                \
			s += x[j];                                                  \
		*sink += (double)s;                                                 \
		return t0;                                                          \
	}
HOST_MAD_LOOP(host_mad_f32, float)
HOST_MAD_LOOP(host_mad_f64, double)

/* Best multiply-add rate in GFLOP/s: iterations grown until one run lasts target_s, then reps. */
static double host_mad_rate(clg_peak_result *r, const char *what, double (*fn)(long, double *), double target_s,
			    int reps, double *sink)
{
	long iters = 1 << 12;
	double secs[16];

	while (fn(iters, sink) < target_s / 2 && iters < (1L << 40))
		iters *= 2;
	for (int i = 0; i < reps; i++)
		secs[i] = fn(iters, sink);
	return clg_measure_best(r, what, secs, reps, 2.0 * HOST_LANES * (double)iters, 1e-9, 0);
}

/* Reads n bytes as 64-bit words (integer sums vectorize without reordering floats). */
static uint64_t host_read(const uint64_t *p, size_t nwords)
{
	uint64_t s = 0;
	for (size_t i = 0; i < nwords; i++)
		s += p[i];
	return s;
}

clg_status clg_measure_host_peaks(clg_backend *ref, int quick, clg_peak_result *out)
{
	int reps = quick ? 3 : 5, nlat = quick ? 50 : 200;
	size_t n = (size_t)(quick ? 64 : 128) << 20; /* bytes: well above the last-level cache */
	double target = quick ? 0.02 : 0.05, secs[16], *lat = NULL, sink = 0;
	char *a = NULL, *b = NULL;
	clg_buffer *buf = NULL, *x = NULL, *y = NULL, *z = NULL;
	clg_status st = CLG_OK;

	memset(out, 0, sizeof(*out));
	out->resolution_s = clg_measure_clock_resolution();
	out->fp32_width = out->fp64_width = 1;
	out->fp32_gflops = host_mad_rate(out, "fp32", host_mad_f32, target, reps, &sink);
	out->fp64_gflops = host_mad_rate(out, "fp64", host_mad_f64, target, reps, &sink);

	a = malloc(n);
	b = malloc(n);
	lat = malloc((size_t)nlat * sizeof(*lat));
	if (!a || !b || !lat) {
		st = clg_fail(CLG_ERR_OOM, "host peaks: out of host memory for %zu-byte buffers", n);
		goto out_free;
	}
	memset(a, 1, n);
	memset(b, 2, n);
	for (int i = 0; i < reps; i++) {
		double t0 = clg_measure_now();
		memcpy(b, a, n);
		secs[i] = clg_measure_now() - t0;
	}
	out->copy_gbs = clg_measure_best(out, "memcpy", secs, reps, 2.0 * (double)n, 1e-9, 0);
	for (int i = 0; i < reps; i++) {
		double t0 = clg_measure_now();
		sink += (double)host_read((const uint64_t *)a, n / 8);
		secs[i] = clg_measure_now() - t0;
	}
	out->read_gbs = clg_measure_best(out, "read", secs, reps, (double)n, 1e-9, 0);
	out->bandwidth_gbs = out->copy_gbs > out->read_gbs ? out->copy_gbs : out->read_gbs;

	/* host to "device" and back: the reference backend's upload and download (memcpy) */
	if ((st = clg_buffer_alloc(ref, n, &buf)) || (st = clg_buffer_upload(buf, 0, a, n)))
		goto out_free;
	for (int i = 0; i < reps; i++) {
		double t0 = clg_measure_now();
		st = clg_buffer_upload(buf, 0, a, n);
		if (!st)
			st = clg_synchronize(ref);
		secs[i] = clg_measure_now() - t0;
		if (st)
			goto out_free;
	}
	out->h2d_gbs = clg_measure_best(out, "h2d", secs, reps, (double)n, 1e-9, 0);
	for (int i = 0; i < reps; i++) {
		double t0 = clg_measure_now();
		if ((st = clg_buffer_download(buf, 0, b, n)))
			goto out_free;
		secs[i] = clg_measure_now() - t0;
	}
	out->d2h_gbs = clg_measure_best(out, "d2h", secs, reps, (double)n, 1e-9, 0);

	/* launch latency: clg_run of a 1-element add, median */
	{
		int64_t one[1] = {1};
		float v = 1;
		clg_op_call c = {.op = CLG_OP_ADD};
		int nok = 0;
		if ((st = clg_buffer_alloc(ref, 4, &x)) || (st = clg_buffer_alloc(ref, 4, &y)) ||
		    (st = clg_buffer_alloc(ref, 4, &z)) || (st = clg_buffer_upload(x, 0, &v, 4)) ||
		    (st = clg_buffer_upload(y, 0, &v, 4)))
			goto out_free;
		clg_view_contiguous(&c.src[0], x, CLG_F32, 1, one);
		clg_view_contiguous(&c.src[1], y, CLG_F32, 1, one);
		clg_view_contiguous(&c.dst, z, CLG_F32, 1, one);
		/* a launch takes about 0.1 us here: each sample times a batch, so that it lasts well
		 * above 100 timer resolutions */
		for (int i = 0; i < nlat; i++) {
			char why[160];
			double t0 = clg_measure_now();
			for (int j = 0; j < LAUNCH_BATCH; j++)
				if ((st = clg_run(ref, &c)) || (st = clg_synchronize(ref)))
					goto out_free;
			t0 = clg_measure_now() - t0;
			if (clg_measure_implausible(t0, 1, 0, out->resolution_s, why, sizeof(why)))
				clg_measure_reject(out, "launch", t0 / LAUNCH_BATCH * 1e6, why);
			else
				lat[nok++] = t0 / LAUNCH_BATCH;
		}
		out->launch_latency_us = 1e6 * clg_measure_median(lat, nok);
	}
	snprintf(out->note, sizeof(out->note),
		 "host equivalents on one thread (the reference backend): fp32/fp64 = a %d-lane multiply-add loop "
		 "compiled with the project's flags; fp16 not measured (no half arithmetic in C); bandwidth = max of "
		 "memcpy (%zu MiB, read + write bytes) and a 64-bit read loop; h2d/d2h = the reference backend's "
		 "upload/download (memcpy); launch latency = median clg_run of a 1-element add (batches of %d); best of %d runs",
		 HOST_LANES, n >> 20, LAUNCH_BATCH, reps);
	host_sink += sink; /* keeps the loops' results live */
out_free:
	clg_buffer_free(x);
	clg_buffer_free(y);
	clg_buffer_free(z);
	clg_buffer_free(buf);
	free(lat);
	free(a);
	free(b);
	return st;
}
