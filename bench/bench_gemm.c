/* bench_gemm: GEMM through clgrad against OpenBLAS on the host, in the same process. Each shape is
 * run through both of clgrad's OpenCL implementations (CLBlast, and our own kernels from
 * kernels_cl/gemm.cl; chosen per call by setting $CLGRAD_GEMM) and through cblas_sgemm.
 *
 *   bench_gemm [--device SPEC] [--m M --n N --k K] [--ta] [--tb] [--batch B] [--shared-a]
 *              [--cols-b] [--impl LIST] [--reps R] [--threads T] [--sweep] [--quick] [--json]
 *
 * float32, row-major C (B?, M, N) = op(A) @ op(B): --ta stores A as a (K, M) matrix used
 * transposed, --tb stores B as (N, K); --batch B runs B products in one call (a strided-batched
 * GEMM), --shared-a gives A batch stride 0 (one A for the whole batch, as a convolution's weights),
 * --cols-b takes B_b as columns b*N.. of one (K, B*N) matrix (im2col's columns, as a convolution
 * multiplies them).
 * For each shape and implementation: one warm-up clgrad call (the first call of an implementation
 * builds its kernels; its time is reported separately as "first call"), then R timed repetitions,
 * each clg_run followed by clg_synchronize; the median is reported. OpenBLAS: one warm-up, then
 * the median of R; a batch is a loop of cblas_sgemm calls over the same layout. Every clgrad
 * result is compared with OpenBLAS's: max |C_clgrad - C_openblas| / max |C_openblas|.
 * A stored tune result of the device (`clgrad tune`) applies to both columns: CLBlast runs with
 * the tuned parameters and the own kernels with the tuned tiles; CLGRAD_TUNE=0 measures the
 * defaults (CLBlast cannot go back to its defaults inside a process once they are overridden).
 * Exit status: 0 on success, 1 when a result disagrees (> 1e-4), 2 on usage or runtime errors.
 */
#include "clg_backend.h"
#include "clg_config.h"

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
#define NIMPL 2
#define MAXSHAPES 24

static const char *const impl_names[NIMPL] = {"clblast", "own"};

typedef struct {
	long m, n, k, batch;
	int ta, tb, shared_a;
	int cols_b;        /* B_b is columns b*N.. of one (K, batch*N) matrix, as im2col lays them out */
	const char *label; /* where the shape comes from, or NULL */
} shape;

typedef struct {
	shape s;
	int reps;
	int ran[NIMPL];
	double first_s[NIMPL], median_s[NIMPL], max_rel_err[NIMPL]; /* err < 0 without OpenBLAS */
	double ob_median_s;                                          /* < 0 without OpenBLAS */
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
	return secs > 0 ? 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)s->batch / secs * 1e-9 : 0.0;
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

static void shape_name(const shape *s, char *buf, size_t len)
{
	snprintf(buf, len, "%ldx%ldx%ld%s%s%s", s->m, s->n, s->k, s->ta || s->tb ? " " : "", s->ta ? "At" : "",
		 s->tb ? "Bt" : "");
	if (s->batch > 1) {
		size_t p = strlen(buf);
		snprintf(buf + p, len - p, " b%ld%s%s", s->batch, s->shared_a ? " A0" : "", s->cols_b ? " Bc" : "");
	}
}

/* Element counts of the stored operands: A is one matrix when shared, else one per batch. */
static size_t elems_a(const shape *s) { return (size_t)(s->m * s->k * (s->shared_a ? 1 : s->batch)); }
static size_t elems_b(const shape *s) { return (size_t)(s->k * s->n * s->batch); }
static size_t elems_c(const shape *s) { return (size_t)(s->m * s->n * s->batch); }

/* The clgrad view of a stored (rows, cols) operand, transposed (stored (cols, rows)) or not;
 * ld > 0 overrides the row stride of an operand that is not transposed. */
static void operand_view(clg_view *v, clg_buffer *buf, const shape *s, long rows, long cols, int trans,
			 int64_t batch_stride, long ld)
{
	memset(v, 0, sizeof(*v));
	v->buf = buf;
	v->dtype = CLG_F32;
	v->ndim = s->batch > 1 ? 3 : 2;
	int o = v->ndim - 2;
	v->shape[o] = rows, v->shape[o + 1] = cols;
	v->stride[o] = trans ? 1 : ld > 0 ? ld : cols, v->stride[o + 1] = trans ? rows : 1;
	if (o) {
		v->shape[0] = s->batch;
		v->stride[0] = batch_stride;
	}
}

static double max_rel_err(const float *c, const float *ref, size_t n)
{
	double maxref = 0.0, maxdiff = 0.0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)c[i] - (double)ref[i]), a = fabs((double)ref[i]);
		if (d > maxdiff || d != d)
			maxdiff = d != d ? INFINITY : d;
		if (a > maxref)
			maxref = a;
	}
	return maxref > 0 ? maxdiff / maxref : maxdiff;
}

static int run_shape(clg_backend *be, shape s, int reps, const int *impls, result *r)
{
	size_t na = elems_a(&s), nb = elems_b(&s), nc = elems_c(&s);
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
	r->ob_median_s = -1.0;
	for (int i = 0; i < NIMPL; i++)
		r->max_rel_err[i] = -1.0;
	if (!A || !B || !Ccl || !Cob || !t) {
		fprintf(stderr, "bench_gemm: out of host memory for %ldx%ldx%ld\n", s.m, s.n, s.k);
		goto out;
	}
	fill_random(A, na, 1);
	fill_random(B, nb, 2);

#ifdef CLG_HAVE_OPENBLAS
	/* ---- OpenBLAS: the reference result, and its time ---- */
	for (int rep = -1; rep < reps; rep++) {
		t0 = now_s();
		for (long b = 0; b < s.batch; b++)
			cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans,
				    (int)s.m, (int)s.n, (int)s.k, 1.0f, A + (s.shared_a ? 0 : b * s.m * s.k),
				    (int)(s.ta ? s.m : s.k), B + (s.cols_b ? b * s.n : b * s.k * s.n),
				    (int)(s.tb ? s.k : s.cols_b ? s.n * s.batch : s.n), 0.0f,
				    Cob + b * s.m * s.n, (int)s.n);
		if (rep >= 0)
			t[rep] = now_s() - t0;
	}
	r->ob_median_s = median(t, reps);
	/* OpenBLAS's worker threads spin for a while after a call: let them go to sleep before the
	 * clgrad measurements so they do not steal the cores PoCL runs on. */
	sleep_s(0.5);
#endif

	/* ---- clgrad, once per implementation ---- */
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
	operand_view(&call.src[0], bA, &s, s.m, s.k, s.ta, s.shared_a ? 0 : s.m * s.k, 0);
	operand_view(&call.src[1], bB, &s, s.k, s.n, s.tb, s.cols_b ? s.n : s.k * s.n, s.cols_b ? s.n * s.batch : 0);
	operand_view(&call.dst, bC, &s, s.m, s.n, 0, s.m * s.n, 0);
	call.f[0] = 1.0; /* alpha */
	call.f[1] = 0.0; /* beta */

	for (int im = 0; im < NIMPL; im++) {
		if (!impls[im])
			continue;
		setenv("CLGRAD_GEMM", impl_names[im], 1);
		t0 = now_s();
		if ((st = clg_run(be, &call)) || (st = clg_synchronize(be))) {
			rc = fail_clg(st, "clg_run(gemm) warm-up");
			goto out;
		}
		r->first_s[im] = now_s() - t0;
		for (int i = 0; i < reps; i++) {
			t0 = now_s();
			if ((st = clg_run(be, &call)) || (st = clg_synchronize(be))) {
				rc = fail_clg(st, "clg_run(gemm)");
				goto out;
			}
			t[i] = now_s() - t0;
		}
		r->median_s[im] = median(t, reps);
		r->ran[im] = 1;
		if ((st = clg_buffer_download(bC, 0, Ccl, nc * sizeof(float)))) {
			rc = fail_clg(st, "download");
			goto out;
		}
#ifdef CLG_HAVE_OPENBLAS
		r->max_rel_err[im] = max_rel_err(Ccl, Cob, nc);
#endif
		/* the next implementation must not find this one's result in place */
		memset(Ccl, 0, nc * sizeof(float));
		if ((st = clg_buffer_upload(bC, 0, Ccl, nc * sizeof(float))) || (st = clg_synchronize(be))) {
			rc = fail_clg(st, "upload");
			goto out;
		}
	}
	rc = 0;
out:
	unsetenv("CLGRAD_GEMM");
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
		"usage: bench_gemm [--device SPEC] [--m M --n N --k K] [--ta] [--tb] [--batch B] [--shared-a]\n"
		"                  [--cols-b] [--impl LIST] [--reps R] [--threads T] [--sweep] [--quick] [--json]\n"
		"  float32 row-major C = op(A) @ op(B): clgrad's GEMM (CLBlast and its own kernels) vs\n"
		"  OpenBLAS cblas_sgemm.\n"
		"  --device SPEC  index, ref, cpu, gpu or a name substring (default: $CLGRAD_DEVICE, else\n"
		"                 the first GPU, else the first OpenCL CPU device, else ref)\n"
		"  --m/--n/--k    shape (default 1024 x 1024 x 1024)\n"
		"  --ta, --tb     A stored (K, M), B stored (N, K), each used transposed\n"
		"  --batch B      B products in one strided-batched call (default 1)\n"
		"  --shared-a     A has batch stride 0 (one A for every product of the batch)\n"
		"  --cols-b       B_b is columns b*N..b*N+N-1 of one (K, B*N) matrix (im2col's layout)\n"
		"  --impl LIST    clgrad implementations, comma-separated: clblast, own (default both)\n"
		"  --reps R       timed repetitions, median reported (default 10; 3 under --quick)\n"
		"  --threads T    OpenBLAS threads (default: $OPENBLAS_NUM_THREADS, else every online core)\n"
		"  --sweep        1024^3, the MLP's shapes (784-512-512-10, batch 128) and the CNN's (conv 32,\n"
		"                 conv 64, fc 128; batch 128) with the transposes training uses, 2048^3\n"
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

static int parse_impls(const char *v, int *impls)
{
	char buf[64], *save = NULL;
	if (!v || strlen(v) >= sizeof(buf)) {
		fprintf(stderr, "bench_gemm: --impl needs a list (clblast,own)\n");
		return -1;
	}
	strcpy(buf, v);
	memset(impls, 0, NIMPL * sizeof(int));
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int found = 0;
		for (int i = 0; i < NIMPL; i++)
			if (!strcmp(tok, impl_names[i]))
				impls[i] = found = 1;
		if (!found) {
			fprintf(stderr, "bench_gemm: unknown implementation '%s' (clblast, own)\n", tok);
			return -1;
		}
	}
	return 0;
}

/* A table cell: x in fmt, or "-" when there is no figure (x <= 0). */
static void fmt_col(char *buf, double x, const char *fmt)
{
	if (x > 0)
		snprintf(buf, 16, fmt, x);
	else
		strcpy(buf, "-");
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

/* The sweep: what one training step of `clgrad train --model mlp|cnn --batch 128` multiplies.
 * Linear layers keep W as (out, in): forward x @ W^T (Bt), dx = g @ W, dW = g^T @ x (At).
 * Convolutions go through im2col: forward W (OC, C*9) @ cols_n (C*9, L) batched over the N
 * images with A shared, dW = g (OC, N*L) @ cols^T (Bt), dcols_n = W^T @ g_n (At, A shared). */
static int sweep_shapes(shape *sh, int quick)
{
	int n = 0;
	sh[n++] = (shape){1024, 1024, 1024, 1, 0, 0, 0, 0, "square"};
	sh[n++] = (shape){128, 512, 784, 1, 0, 0, 0, 0, "plain"};
	sh[n++] = (shape){128, 784, 512, 1, 0, 0, 0, 0, "plain"};
	sh[n++] = (shape){512, 784, 128, 1, 0, 0, 0, 0, "plain"};
	sh[n++] = (shape){128, 512, 784, 1, 0, 1, 0, 0, "mlp fc1 forward"};
	sh[n++] = (shape){128, 512, 512, 1, 0, 0, 0, 0, "mlp fc2 dx"};
	sh[n++] = (shape){512, 784, 128, 1, 1, 0, 0, 0, "mlp fc1 dW"};
	sh[n++] = (shape){32, 784, 9, 128, 0, 0, 1, 1, "cnn conv1 forward"};
	sh[n++] = (shape){32, 9, 100352, 1, 0, 1, 0, 0, "cnn conv1 dW"};
	sh[n++] = (shape){64, 196, 288, 128, 0, 0, 1, 1, "cnn conv2 forward"};
	sh[n++] = (shape){64, 288, 25088, 1, 0, 1, 0, 0, "cnn conv2 dW"};
	sh[n++] = (shape){288, 196, 64, 128, 1, 0, 1, 1, "cnn conv2 dcols"};
	sh[n++] = (shape){128, 128, 3136, 1, 0, 1, 0, 0, "cnn fc1 forward"};
	sh[n++] = (shape){128, 3136, 128, 1, 0, 0, 0, 0, "cnn fc1 dx"};
	sh[n++] = (shape){128, 3136, 128, 1, 1, 0, 0, 0, "cnn fc1 dW"};
	if (!quick)
		sh[n++] = (shape){2048, 2048, 2048, 1, 0, 0, 0, 0, "square"};
	return n;
}

int main(int argc, char **argv)
{
	const char *spec = NULL;
	long m = 1024, n = 1024, k = 1024, reps = -1, threads = -1, batch = 1;
	int sweep = 0, quick = 0, json = 0, ta = 0, tb = 0, shared_a = 0, cols_b = 0, idx, ndev, nshapes = 0, rc = 0;
	int ob_threads = 0, impls[NIMPL] = {1, 1};
	const clg_device_info *devs;
	clg_backend *be = NULL;
	clg_status st;
	shape shapes[MAXSHAPES];
	result res[MAXSHAPES];

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
		} else if (!strcmp(a, "--impl")) {
			if (parse_impls(v, impls))
				return 2;
			i++;
			continue;
		} else if (!strcmp(a, "--m")) dst = &m;
		else if (!strcmp(a, "--n")) dst = &n;
		else if (!strcmp(a, "--k")) dst = &k;
		else if (!strcmp(a, "--batch")) dst = &batch;
		else if (!strcmp(a, "--reps")) dst = &reps;
		else if (!strcmp(a, "--threads")) dst = &threads;
		else if (!strcmp(a, "--ta")) { ta = 1; continue; }
		else if (!strcmp(a, "--tb")) { tb = 1; continue; }
		else if (!strcmp(a, "--shared-a")) { shared_a = 1; continue; }
		else if (!strcmp(a, "--cols-b")) { cols_b = 1; continue; }
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
	if (sweep)
		nshapes = sweep_shapes(shapes, quick);
	else
		shapes[nshapes++] = (shape){m, n, k, batch, ta, tb, shared_a && batch > 1, cols_b && batch > 1 && !tb, NULL};

#ifdef CLG_HAVE_OPENBLAS
	if (threads > 0) {
		openblas_set_num_threads((int)threads);
	} else {
		const char *env = clg_config_foreign("OPENBLAS_NUM_THREADS");
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
		printf("POCL_KERNEL_CACHE=%s\n", clg_config_foreign("POCL_KERNEL_CACHE") ? clg_config_foreign("POCL_KERNEL_CACHE") : "(unset)");
#ifdef CLG_HAVE_OPENBLAS
		printf("OpenBLAS: %s; threads: %d\n", openblas_get_config(), ob_threads);
#else
		printf("OpenBLAS: not built in (configure found no OpenBLAS)\n");
#endif
		printf("reps: %ld (median reported); GF/s = 2*M*N*K*batch / time; /OB = GF/s over OpenBLAS's\n", reps);
		printf("At/Bt: operand stored transposed; bN: batch of N in one call; A0: A shared by the batch;\n"
		       "Bc: B_b = columns b*N.. of one (K, batch*N) matrix (im2col's layout)\n");
		printf("first: the warm-up call of each implementation (kernel builds plus one run), in s\n\n");
		printf("%-26s %8s %8s %8s %8s %8s %8s %8s %8s %9s  %s\n", "M x N x K", "CLB GF/s", "own GF/s", "OB GF/s",
		       "CLB/OB", "own/OB", "own/CLB", "CLB 1st", "own 1st", "max err", "");
		fflush(stdout);
	}
	for (int i = 0; i < nshapes; i++) {
		result *r = &res[i];
		char shp[64], err[32] = "-";
		double g[NIMPL], gob, worst = -1;
		if (run_shape(be, shapes[i], (int)reps, impls, r)) {
			rc = 2;
			nshapes = i;
			break;
		}
		for (int im = 0; im < NIMPL; im++) {
			if (!r->ran[im])
				continue;
			if (r->max_rel_err[im] > TOLERANCE || r->max_rel_err[im] != r->max_rel_err[im])
				rc = rc ? rc : 1;
			if (r->max_rel_err[im] > worst || r->max_rel_err[im] != r->max_rel_err[im])
				worst = r->max_rel_err[im];
		}
		if (json)
			continue;
		shape_name(&r->s, shp, sizeof(shp));
		for (int im = 0; im < NIMPL; im++)
			g[im] = r->ran[im] ? gflops(&r->s, r->median_s[im]) : 0;
		gob = r->ob_median_s > 0 ? gflops(&r->s, r->ob_median_s) : 0;
		if (worst >= 0 || worst != worst)
			snprintf(err, sizeof(err), "%.2e", worst);
		{
			char c[8][16];
			fmt_col(c[0], g[0], "%.1f");
			fmt_col(c[1], g[1], "%.1f");
			fmt_col(c[2], gob, "%.1f");
			fmt_col(c[3], gob > 0 ? g[0] / gob : 0, "%.3f");
			fmt_col(c[4], gob > 0 ? g[1] / gob : 0, "%.3f");
			fmt_col(c[5], g[0] > 0 ? g[1] / g[0] : 0, "%.2f");
			fmt_col(c[6], r->ran[0] ? r->first_s[0] : 0, "%.3f");
			fmt_col(c[7], r->ran[1] ? r->first_s[1] : 0, "%.3f");
			printf("%-26s %8s %8s %8s %8s %8s %8s %8s %8s %9s  %s%s\n", shp, c[0], c[1], c[2], c[3], c[4], c[5],
			       c[6], c[7], err, r->s.label ? r->s.label : "",
			       worst > TOLERANCE || worst != worst ? "  MISMATCH" : "");
		}
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
			printf("%s\n    {\"m\": %ld, \"n\": %ld, \"k\": %ld, \"batch\": %ld, \"trans_a\": %d, \"trans_b\": %d, "
			       "\"shared_a\": %d, \"cols_b\": %d, \"label\": ",
			       i ? "," : "", r->s.m, r->s.n, r->s.k, r->s.batch, r->s.ta, r->s.tb, r->s.shared_a, r->s.cols_b);
			if (r->s.label)
				json_str(r->s.label);
			else
				printf("null");
			if (r->ob_median_s > 0)
				printf(", \"openblas_median_s\": %.9g, \"openblas_gflops\": %.2f", r->ob_median_s,
				       gflops(&r->s, r->ob_median_s));
			else
				printf(", \"openblas_median_s\": null, \"openblas_gflops\": null");
			for (int im = 0; im < NIMPL; im++) {
				const char *nm = impl_names[im];
				if (!r->ran[im]) {
					printf(", \"%s\": null", nm);
					continue;
				}
				printf(", \"%s\": {\"first_call_s\": %.9g, \"median_s\": %.9g, \"gflops\": %.2f", nm,
				       r->first_s[im], r->median_s[im], gflops(&r->s, r->median_s[im]));
				if (r->ob_median_s > 0)
					printf(", \"ratio_openblas\": %.4f, \"max_rel_err\": %.3e}",
					       r->ob_median_s / r->median_s[im], r->max_rel_err[im]);
				else
					printf(", \"ratio_openblas\": null, \"max_rel_err\": null}");
			}
			printf("}");
		}
		printf("\n  ]\n}\n");
	} else if (rc == 1) {
		printf("\nMISMATCH: a clgrad result differs from OpenBLAS by more than %.0e (relative to max |C|)\n",
		       TOLERANCE);
	}
	clg_backend_close(be);
	return rc;
}
