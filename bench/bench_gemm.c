/* bench_gemm: float32 row-major C = A @ B through clgrad (clg_run GEMM on the selected device,
 * CLBlast on OpenCL devices) against OpenBLAS cblas_sgemm on the host, in the same process.
 *
 *   bench_gemm [--device SPEC] [--m M --n N --k K] [--reps R] [--threads T] [--sweep] [--quick] [--json]
 *
 * For each shape: one warm-up clgrad call (the first GEMM of a process compiles CLBlast's kernels;
 * its time is reported separately as "first call"), then R timed repetitions, each clg_run followed
 * by clg_synchronize; the median is reported. OpenBLAS: one warm-up call, then the median of R.
 * The two results are compared: max |C_clgrad - C_openblas| / max |C_openblas|.
 * Exit status: 0 on success, 1 when a result disagrees (> 1e-4), 2 on usage or runtime errors.
 */
#include "clg_backend.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef CLG_HAVE_OPENBLAS
#include <cblas.h>
#endif

#define TOLERANCE 1e-4

typedef struct {
	long m, n, k;
} shape;

typedef struct {
	shape s;
	int reps;
	double cl_first_s, cl_median_s;
	double ob_median_s;           /* < 0 without OpenBLAS */
	double max_rel_err;           /* < 0 without OpenBLAS */
} result;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double gflops(const shape *s, double secs)
{
	return secs > 0 ? 2.0 * (double)s->m * (double)s->n * (double)s->k / secs * 1e-9 : 0.0;
}

static void fill_random(float *x, size_t n, uint32_t seed)
{
	uint32_t st = seed * 2654435761u + 12345u;
	for (size_t i = 0; i < n; i++) {
		st = st * 1664525u + 1013904223u;
		x[i] = (float)((st >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f; /* [-1, 1) */
	}
}

static void sleep_s(double s) __attribute__((unused));
static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

static int fail_clg(clg_status st, const char *what)
{
	fprintf(stderr, "bench_gemm: %s failed: %s: %s\n", what, clg_status_name(st), clg_last_error());
	return 2;
}

static int run_shape(clg_backend *be, shape s, int reps, result *r)
{
	size_t na = (size_t)(s.m * s.k), nb = (size_t)(s.k * s.n), nc = (size_t)(s.m * s.n);
	float *A = malloc(na * sizeof(float)), *B = malloc(nb * sizeof(float));
	float *Ccl = calloc(nc, sizeof(float)), *Cob = calloc(nc, sizeof(float));
	double *t = malloc((size_t)reps * sizeof(double));
	clg_buffer *bA = NULL, *bB = NULL, *bC = NULL;
	clg_op_call call;
	clg_status st = CLG_OK;
	int rc = 2;
	double t0;

	memset(r, 0, sizeof(*r));
	r->s = s;
	r->reps = reps;
	r->ob_median_s = r->max_rel_err = -1.0;
	if (!A || !B || !Ccl || !Cob || !t) {
		fprintf(stderr, "bench_gemm: out of host memory for %ldx%ldx%ld\n", s.m, s.n, s.k);
		goto out;
	}
	fill_random(A, na, 1);
	fill_random(B, nb, 2);

	/* ---- clgrad ---- */
	if ((st = clg_buffer_alloc(be, na * sizeof(float), &bA)) || (st = clg_buffer_alloc(be, nb * sizeof(float), &bB)) ||
	    (st = clg_buffer_alloc(be, nc * sizeof(float), &bC))) {
		rc = fail_clg(st, "clg_buffer_alloc");
		goto out;
	}
	if ((st = clg_buffer_upload(bA, 0, A, na * sizeof(float))) || (st = clg_buffer_upload(bB, 0, B, nb * sizeof(float))) ||
	    (st = clg_buffer_upload(bC, 0, Ccl, nc * sizeof(float))) || (st = clg_synchronize(be))) {
		rc = fail_clg(st, "upload");
		goto out;
	}
	memset(&call, 0, sizeof(call));
	call.op = CLG_OP_GEMM;
	clg_view_contiguous(&call.src[0], bA, CLG_F32, 2, (int64_t[]){s.m, s.k});
	clg_view_contiguous(&call.src[1], bB, CLG_F32, 2, (int64_t[]){s.k, s.n});
	clg_view_contiguous(&call.dst, bC, CLG_F32, 2, (int64_t[]){s.m, s.n});
	call.f[0] = 1.0; /* alpha */
	call.f[1] = 0.0; /* beta */

	t0 = now_s();
	if ((st = clg_run(be, &call)) || (st = clg_synchronize(be))) {
		rc = fail_clg(st, "clg_run(gemm) warm-up");
		goto out;
	}
	r->cl_first_s = now_s() - t0;
	for (int i = 0; i < reps; i++) {
		t0 = now_s();
		if ((st = clg_run(be, &call)) || (st = clg_synchronize(be))) {
			rc = fail_clg(st, "clg_run(gemm)");
			goto out;
		}
		t[i] = now_s() - t0;
	}
	r->cl_median_s = median(t, reps);
	if ((st = clg_buffer_download(bC, 0, Ccl, nc * sizeof(float)))) {
		rc = fail_clg(st, "download");
		goto out;
	}

#ifdef CLG_HAVE_OPENBLAS
	/* ---- OpenBLAS ---- */
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s.m, (int)s.n, (int)s.k, 1.0f, A, (int)s.k, B,
		    (int)s.n, 0.0f, Cob, (int)s.n);
	for (int i = 0; i < reps; i++) {
		t0 = now_s();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s.m, (int)s.n, (int)s.k, 1.0f, A, (int)s.k,
			    B, (int)s.n, 0.0f, Cob, (int)s.n);
		t[i] = now_s() - t0;
	}
	r->ob_median_s = median(t, reps);
	/* OpenBLAS's worker threads spin for a while after a call: let them go to sleep before the
	 * next clgrad measurement so they do not steal the cores PoCL runs on. */
	sleep_s(0.5);
	{
		double maxref = 0.0, maxdiff = 0.0;
		for (size_t i = 0; i < nc; i++) {
			double d = fabs((double)Ccl[i] - (double)Cob[i]), a = fabs((double)Cob[i]);
			if (d > maxdiff || d != d)
				maxdiff = d != d ? INFINITY : d;
			if (a > maxref)
				maxref = a;
		}
		r->max_rel_err = maxref > 0 ? maxdiff / maxref : maxdiff;
	}
#endif
	rc = 0;
out:
	clg_buffer_free(bA);
	clg_buffer_free(bB);
	clg_buffer_free(bC);
	free(A);
	free(B);
	free(Ccl);
	free(Cob);
	free(t);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_gemm [--device SPEC] [--m M --n N --k K] [--reps R] [--threads T]\n"
		"                  [--sweep] [--quick] [--json]\n"
		"  float32 row-major C = A @ B: clgrad (clg_run GEMM) vs OpenBLAS cblas_sgemm.\n"
		"  --device SPEC  index, ref, cpu, gpu or a name substring (default: $CLGRAD_DEVICE, else\n"
		"                 the first GPU, else the first OpenCL CPU device, else ref)\n"
		"  --m/--n/--k    shape (default 1024 x 1024 x 1024)\n"
		"  --reps R       timed repetitions, median reported (default 10; 3 under --quick)\n"
		"  --threads T    OpenBLAS threads (default: $OPENBLAS_NUM_THREADS, else every online core)\n"
		"  --sweep        1024^3, 128x512x784, 128x784x512, 512x784x128, 2048^3 (M x N x K)\n"
		"  --quick        fewer repetitions; the sweep skips 2048^3\n"
		"  --json         one JSON document on stdout instead of the table\n");
}

static int parse_long(const char *opt, const char *v, long lo, long *out)
{
	char *end;
	long x;
	if (!v) {
		fprintf(stderr, "bench_gemm: %s needs a value\n", opt);
		return -1;
	}
	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || *end || x < lo) {
		fprintf(stderr, "bench_gemm: bad value for %s: '%s'\n", opt, v);
		return -1;
	}
	*out = x;
	return 0;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	const char *spec = NULL;
	long m = 1024, n = 1024, k = 1024, reps = -1, threads = -1;
	int sweep = 0, quick = 0, json = 0, idx, ndev, nshapes = 0, rc = 0, ob_threads = 0;
	const clg_device_info *devs;
	clg_backend *be = NULL;
	clg_status st;
	shape shapes[8];
	result res[8];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long *dst = NULL, lo = 1;
		if (!strcmp(a, "--device")) {
			if (!v) {
				fprintf(stderr, "bench_gemm: --device needs a value\n");
				return 2;
			}
			spec = v;
			i++;
			continue;
		} else if (!strcmp(a, "--m")) dst = &m;
		else if (!strcmp(a, "--n")) dst = &n;
		else if (!strcmp(a, "--k")) dst = &k;
		else if (!strcmp(a, "--reps")) dst = &reps;
		else if (!strcmp(a, "--threads")) dst = &threads;
		else if (!strcmp(a, "--sweep")) { sweep = 1; continue; }
		else if (!strcmp(a, "--quick")) { quick = 1; continue; }
		else if (!strcmp(a, "--json")) { json = 1; continue; }
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
		else {
			fprintf(stderr, "bench_gemm: unknown argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
		if (parse_long(a, v, lo, dst))
			return 2;
		i++;
	}
	if (reps < 0)
		reps = quick ? 3 : 10;
	if (sweep) {
		shapes[nshapes++] = (shape){1024, 1024, 1024};
		shapes[nshapes++] = (shape){128, 512, 784};
		shapes[nshapes++] = (shape){128, 784, 512};
		shapes[nshapes++] = (shape){512, 784, 128};
		if (!quick)
			shapes[nshapes++] = (shape){2048, 2048, 2048};
	} else {
		shapes[nshapes++] = (shape){m, n, k};
	}

#ifdef CLG_HAVE_OPENBLAS
	if (threads > 0) {
		openblas_set_num_threads((int)threads);
	} else {
		const char *env = getenv("OPENBLAS_NUM_THREADS");
		if (!(env && atoi(env) > 0)) {
			long cores = sysconf(_SC_NPROCESSORS_ONLN);
			openblas_set_num_threads(cores > 0 ? (int)cores : 1);
		}
	}
	ob_threads = openblas_get_num_threads();
#else
	(void)threads;
	(void)ob_threads;
#endif

	if ((st = clg_device_select(spec, &idx)) || (st = clg_devices(&devs, &ndev)))
		return fail_clg(st, "device selection");
	if ((st = clg_backend_open(idx, &be)))
		return fail_clg(st, "clg_backend_open");

	if (!json) {
		printf("device: [%d] %s (%s, %s; %s, %s)\n", idx, devs[idx].name, clg_device_type_name(devs[idx].type),
		       devs[idx].platform[0] ? devs[idx].platform : "-", devs[idx].platform_version[0] ? devs[idx].platform_version : "-",
		       devs[idx].driver_version[0] ? devs[idx].driver_version : "-");
		printf("POCL_KERNEL_CACHE=%s\n", getenv("POCL_KERNEL_CACHE") ? getenv("POCL_KERNEL_CACHE") : "(unset)");
#ifdef CLG_HAVE_OPENBLAS
		printf("OpenBLAS: %s; threads: %d\n", openblas_get_config(), ob_threads);
#else
		printf("OpenBLAS: not built in (configure found no OpenBLAS)\n");
#endif
		printf("reps: %ld (median reported); GFLOP/s = 2*M*N*K / time; ratio = clgrad GFLOP/s / OpenBLAS GFLOP/s\n", reps);
		printf("first call: the warm-up clgrad GEMM (CLBlast kernel build for a new routine, plus one run)\n\n");
		printf("%-16s %12s %12s %12s %12s %10s %12s\n", "M x N x K", "first call s", "clgrad ms", "clgrad GF/s",
		       "OpenBLAS ms", "OB GF/s", "ratio cl/OB");
		fflush(stdout);
	}
	for (int i = 0; i < nshapes; i++) {
		result *r = &res[i];
		char shp[48];
		if (run_shape(be, shapes[i], (int)reps, r)) {
			rc = 2;
			nshapes = i;
			break;
		}
		if (r->max_rel_err > TOLERANCE || r->max_rel_err != r->max_rel_err)
			rc = rc ? rc : 1;
		if (json)
			continue;
		snprintf(shp, sizeof(shp), "%ldx%ldx%ld", r->s.m, r->s.n, r->s.k);
		if (r->ob_median_s > 0)
			printf("%-16s %12.3f %12.3f %12.1f %12.3f %10.1f %12.3f   max rel err %.2e%s\n", shp, r->cl_first_s,
			       1e3 * r->cl_median_s, gflops(&r->s, r->cl_median_s), 1e3 * r->ob_median_s,
			       gflops(&r->s, r->ob_median_s), r->cl_median_s > 0 ? r->ob_median_s / r->cl_median_s : 0.0,
			       r->max_rel_err, r->max_rel_err > TOLERANCE ? "  MISMATCH" : "");
		else
			printf("%-16s %12.3f %12.3f %12.1f %12s %10s %12s\n", shp, r->cl_first_s, 1e3 * r->cl_median_s,
			       gflops(&r->s, r->cl_median_s), "-", "-", "-");
		fflush(stdout);
	}
	if (json) {
		printf("{\n  \"device\": {\"index\": %d, \"name\": ", idx);
		json_str(devs[idx].name);
		printf(", \"type\": ");
		json_str(clg_device_type_name(devs[idx].type));
		printf(", \"platform\": ");
		json_str(devs[idx].platform);
		printf(", \"platform_version\": ");
		json_str(devs[idx].platform_version);
		printf(", \"driver_version\": ");
		json_str(devs[idx].driver_version);
		printf("},\n  \"openblas\": ");
#ifdef CLG_HAVE_OPENBLAS
		printf("{\"config\": ");
		json_str(openblas_get_config());
		printf(", \"threads\": %d}", ob_threads);
#else
		printf("null");
#endif
		printf(",\n  \"reps\": %ld,\n  \"results\": [", reps);
		for (int i = 0; i < nshapes; i++) {
			const result *r = &res[i];
			printf("%s\n    {\"m\": %ld, \"n\": %ld, \"k\": %ld, \"clgrad_first_call_s\": %.9g, "
			       "\"clgrad_median_s\": %.9g, \"clgrad_gflops\": %.2f",
			       i ? "," : "", r->s.m, r->s.n, r->s.k, r->cl_first_s, r->cl_median_s,
			       gflops(&r->s, r->cl_median_s));
			if (r->ob_median_s > 0)
				printf(", \"openblas_median_s\": %.9g, \"openblas_gflops\": %.2f, \"ratio\": %.4f, "
				       "\"max_rel_err\": %.3e}",
				       r->ob_median_s, gflops(&r->s, r->ob_median_s), r->ob_median_s / r->cl_median_s,
				       r->max_rel_err);
			else
				printf(", \"openblas_median_s\": null, \"openblas_gflops\": null, \"ratio\": null, "
				       "\"max_rel_err\": null}");
		}
		printf("\n  ]\n}\n");
	} else if (rc == 1) {
		printf("\nMISMATCH: a clgrad result differs from OpenBLAS by more than %.0e (relative to max |C|)\n",
		       TOLERANCE);
	}
	clg_backend_close(be);
	return rc;
}
