/* clgrad bench fft [--device SPEC] [--lengths N,...] [--batches B,...] [--reps R] [--real] [--2d] [--conv] [--json]
 * Batched float32 transforms along the last dim through clg_run (FFT_C2C forward, or FFT_R2C with
 * --real) on one device; with --2d, N x N transforms over the last two dims through clg_fft2 (or
 * clg_rfft2), which compose two 1-D passes and the transposing copies between them (lengths 64 and
 * 256, batches 1 and 16 unless given): for each length and batch, the first call (plan creation and baking, or
 * the kernels' build, included) and the median of R warm calls, each followed by clg_synchronize.
 * GFLOP/s counts 5 N log2 N per complex transform (2.5 N log2 N per real one; N = the points of a
 * 2-D plane, so 5 N^2 log2 N^2 for N x N), the usual
 * convention, whatever the algorithm (the own kernels' direct sum does far more work). The path
 * column says which implementation ran (clg_fft.h), "own kernels" included where clFFT's kernels
 * failed on the device; such plans are listed at the end too. Where FFTW was found at configure
 * time (cli/fftw.cmake), fftwf times the same transform in the same run (FFTW_MEASURE, one thread)
 * and the ratio FFTW ms / clgrad ms is printed (above 1: clgrad faster). --json prints the same as
 * one object, schema clgrad-bench-fft/1 (checked by tests/check_bench_fft_json.py). --conv instead times conv1d through
 * the FFT against im2col + GEMM over kernel sizes 3 to 31 (cli/conv_fft_time.c), side by side. */
#include "cli.h"

#include <clg_fft.h>
#include <clgrad.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 32

static int parse_list(const char *s, int64_t *out, int *n)
{
	char *end;
	*n = 0;
	while (*s && *n < MAX_LIST) {
		long long v = strtoll(s, &end, 10);
		if (end == s || v < 1)
			return -1;
		out[(*n)++] = v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return *n ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* n inputs of the timed transforms, in [-1, 1) */
static void test_signal(float *h, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		h[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
}

/* fn(ctx) once and then reps times, each waited for: the first call's seconds (plan creation and
 * baking, or kernel builds, included) and the median of the others; 0 on success */
static int time_calls(clg_backend *be, int (*fn)(void *ctx), void *ctx, int reps, double *first, double *median)
{
	double *t = malloc(sizeof(double) * (size_t)reps);
	int rc = -1;

	for (int r = -1; t && r < reps; r++) {
		double t0 = clg_now();
		if (fn(ctx) || clg_synchronize(be))
			goto out;
		if (r < 0)
			*first = clg_now() - t0;
		else
			t[r] = clg_now() - t0;
	}
	if (t) {
		qsort(t, (size_t)reps, sizeof(double), cmp_double);
		*median = t[reps / 2];
		rc = 0;
	}
out:
	free(t);
	return rc;
}

typedef struct {
	clg_backend *be;
	clg_op_call c;
} op_ctx;

static int run_op(void *ctx) { return clg_run(((op_ctx *)ctx)->be, &((op_ctx *)ctx)->c) != CLG_OK; }

/* first and median warm seconds of one transform of (batch, n) through clg_run; 0 on success */
static int time_one(clg_backend *be, int real, int64_t n, int64_t batch, int reps, double *first, double *median)
{
	int64_t bins = real ? n / 2 + 1 : n, in_elems = batch * (real ? n : 2 * n), out_elems = batch * 2 * bins;
	clg_buffer *in = NULL, *out = NULL;
	float *h = malloc(sizeof(float) * (size_t)in_elems);
	op_ctx o = {.be = be, .c = {.op = real ? CLG_OP_FFT_R2C : CLG_OP_FFT_C2C}};
	int rc = -1;

	if (!h || clg_buffer_alloc(be, sizeof(float) * (size_t)in_elems, &in) ||
	    clg_buffer_alloc(be, sizeof(float) * (size_t)out_elems, &out))
		goto out;
	test_signal(h, in_elems);
	if (clg_buffer_upload(in, 0, h, sizeof(float) * (size_t)in_elems) || clg_synchronize(be))
		goto out;
	if (real)
		clg_view_contiguous(&o.c.src[0], in, CLG_F32, 2, (int64_t[]){batch, n});
	else
		clg_view_contiguous(&o.c.src[0], in, CLG_F32, 3, (int64_t[]){batch, n, 2});
	clg_view_contiguous(&o.c.dst, out, CLG_F32, 3, (int64_t[]){batch, bins, 2});
	o.c.f[0] = 1;
	rc = time_calls(be, run_op, &o, reps, first, median);
out:
	clg_buffer_free(in);
	clg_buffer_free(out);
	free(h);
	return rc;
}

typedef struct {
	clg_tensor *x;
	int real;
} fft2_ctx;

static int run_fft2(void *ctx)
{
	fft2_ctx *f = ctx;
	clg_tensor *y = f->real ? clg_rfft2(f->x, CLG_FFT_NORM_BACKWARD) : clg_fft2(f->x, CLG_FFT_NORM_BACKWARD);
	clg_free(y);
	return !y;
}

/* the same for one N x N transform over the last two dims of (batch, N, N[, 2]), through the frontend */
static int time_2d(clg_backend *be, int real, int64_t n, int64_t batch, int reps, double *first, double *median)
{
	int64_t in_elems = batch * n * n * (real ? 1 : 2);
	float *h = malloc(sizeof(float) * (size_t)in_elems);
	fft2_ctx f = {.real = real};
	int rc = -1;

	clg_no_grad_begin();
	if (!h)
		goto out;
	test_signal(h, in_elems);
	f.x = real ? clg_from_host(be, CLG_F32, CLG_SHAPE(batch, n, n), h) : clg_from_host(be, CLG_F32, CLG_SHAPE(batch, n, n, 2), h);
	if (f.x && !clg_synchronize(be))
		rc = time_calls(be, run_fft2, &f, reps, first, median);
out:
	clg_free(f.x);
	clg_no_grad_end();
	free(h);
	return rc;
}

/* FFT conv against im2col conv over kernel sizes 3 to 31, and which one conv1d runs with */
static int bench_conv(clg_backend *be, int reps)
{
	int64_t k[CONV_FFT_NK];
	double f[CONV_FFT_NK], i[CONV_FFT_NK];
	const char *why;
	int n = conv_fft_sweep(be, reps, stdout, k, f, i), from;

	if (n < 0) {
		if (clg_last_status())
			report_error("bench fft --conv");
		return 1;
	}
	from = conv_fft_crossover(k, f, i, n);
	if (from)
		printf("measured here: the FFT is faster from K = %d on\n", from);
	else
		printf("measured here: im2col is faster at every K\n");
	from = clg_conv1d_fft_from(be, &why);
	printf("conv1d on this device runs through the FFT from K = %d (%s; 0: never)\n", from, why);
	return 0;
}

int bench_fft(int argc, char **argv)
{
	int64_t lengths[MAX_LIST] = {64, 256, 1000, 1024, 4096, 17, 257}, batches[MAX_LIST] = {1, 16, 256, 1024};
	int nl = 7, nb = 4, reps = 10, real = 0, two = 0, given_l = 0, given_b = 0, conv = 0, json = 0, idx, rc = 0;
	const char *spec = NULL, *fftw = bench_fftw_version();
	clg_backend *be = NULL;
	json_writer w;
	char plans[16384];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--real")) {
			real = 1;
		} else if (!strcmp(a, "--2d")) {
			two = 1;
		} else if (!strcmp(a, "--conv")) {
			conv = 1;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--device") && v) {
			spec = v, i++;
		} else if (!strcmp(a, "--reps") && v && atoi(v) > 0) {
			reps = atoi(v), i++;
		} else if (!strcmp(a, "--lengths") && v && !parse_list(v, lengths, &nl)) {
			i++, given_l = 1;
		} else if (!strcmp(a, "--batches") && v && !parse_list(v, batches, &nb)) {
			i++, given_b = 1;
		} else {
			fprintf(stderr, "clgrad bench fft: bad argument '%s'\nusage: clgrad bench fft [--device SPEC] "
				"[--lengths N,...] [--batches B,...] [--reps R] [--real] [--2d] [--conv] [--json]\n", a);
			return 2;
		}
	}
	if (two && !given_l)
		lengths[0] = 64, lengths[1] = 256, nl = 2;
	if (two && !given_b)
		batches[0] = 1, batches[1] = 16, nb = 2;
	if (clg_device_select(spec, &idx) || clg_backend_open(idx, &be))
		return report_error("bench fft");
	if (conv) {
		rc = bench_conv(be, reps);
		clg_backend_close(be);
		return rc;
	}
	if (json) {
		json_init(&w, stdout, 1);
		json_begin_object(&w);
		json_key_str(&w, "schema", "clgrad-bench-fft/1");
		json_key_str(&w, "device", be->info.name);
		json_key_str(&w, "transform", real ? "r2c" : "c2c");
		json_key_int(&w, "dims", two ? 2 : 1);
		json_key_str(&w, "dtype", "float32");
		json_key_int(&w, "reps", reps);
		json_key_num(&w, "flops_per_point", real ? 2.5 : 5.0);
		json_key_str(&w, "fftw", fftw);
		json_key(&w, "rows");
		json_begin_array(&w);
	} else {
		printf("fft on %s: float32 %s%s, forward; GFLOP/s as %s N log2 N per transform%s; median of %d warm calls\n",
		       be->info.name, real ? "real-to-complex (rfft)" : "complex-to-complex", two ? ", 2-D (length x length)" : "",
		       real ? "2.5" : "5", two ? " of N = length^2 points" : "", reps);
		if (fftw)
			printf("FFTW %s: fftwf, FFTW_MEASURE, one thread, same transform; ratio = FFTW ms / clgrad ms\n", fftw);
		else
			printf("FFTW: not built in (install libfftw3-dev and reconfigure)\n");
		printf("%8s %7s  %-12s %12s %12s %10s %12s %8s\n", "length", "batch", "path", "first ms", "warm ms", "GFLOP/s",
		       "FFTW ms", "ratio");
	}
	for (int l = 0; l < nl; l++) {
		for (int b = 0; b < nb; b++) {
			double first = 0, warm = 0, tw = 0, n = (double)lengths[l] * (two ? (double)lengths[l] : 1);
			double fl = (real ? 2.5 : 5.0) * n * (n > 1 ? log2(n) : 0) * (double)batches[b];
			int have_fftw;
			if ((two ? time_2d : time_one)(be, real, lengths[l], batches[b], reps, &first, &warm)) {
				fprintf(stderr, "clgrad bench fft: length %lld batch %lld: %s\n", (long long)lengths[l],
					(long long)batches[b], clg_last_error());
				rc = 1;
				continue;
			}
			have_fftw = fftw && !bench_fftw_time(real, two ? 2 : 1, lengths[l], batches[b], reps, &tw) && tw > 0;
			/* asked after the run: a clFFT plan that failed on the device ran on the own kernels */
			const char *path = clg_fft_path_batch(be, real ? CLG_OP_FFT_R2C : CLG_OP_FFT_C2C, lengths[l],
							 batches[b] * (two ? lengths[l] : 1), NULL);
			if (json) {
				json_begin_object(&w);
				json_key_int(&w, "length", lengths[l]);
				json_key_int(&w, "batch", batches[b]);
				json_key_str(&w, "path", path);
				json_key_num(&w, "first_ms", first * 1e3);
				json_key_num(&w, "warm_ms", warm * 1e3);
				json_key_num(&w, "gflops", warm > 0 ? fl / warm * 1e-9 : 0.0);
				json_key(&w, "fftw_ms");
				if (have_fftw)
					json_num(&w, tw * 1e3);
				else
					json_null(&w);
				json_key(&w, "ratio_to_fftw");
				if (have_fftw && warm > 0)
					json_num(&w, tw / warm);
				else
					json_null(&w);
				json_end_object(&w);
			} else {
				printf("%8lld %7lld  %-12s %12.3f %12.4f %10.2f", (long long)lengths[l], (long long)batches[b], path,
				       first * 1e3, warm * 1e3, warm > 0 ? fl / warm * 1e-9 : 0.0);
				if (have_fftw)
					printf(" %12.4f %7.2fx\n", tw * 1e3, warm > 0 ? tw / warm : 0.0);
				else
					printf(" %12s %8s\n", "-", "-");
				fflush(stdout);
			}
		}
	}
	if (json) {
		json_end_array(&w);
		json_key(&w, "failed_plans");
		json_begin_array(&w);
		if (clg_fft_plans(be, plans, sizeof(plans)) > 0)
			for (char *line = plans, *nl_ = NULL; *line; line = nl_ + 1) {
				nl_ = strchr(line, '\n');
				if (!nl_)
					break;
				*nl_ = 0;
				if (strstr(line, "failed on this device"))
					json_str(&w, line);
			}
		json_end_array(&w);
		json_end_object(&w);
		printf("\n");
	} else if (clg_fft_plans(be, plans, sizeof(plans)) > 0 && strstr(plans, "failed on this device")) {
		printf("clFFT plans (those that failed on this device ran planar or on the own kernels):\n%s", plans);
	}
	clg_backend_close(be);
	return rc;
}
