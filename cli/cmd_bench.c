/* clgrad bench: benchmarks of the selected device, each next to a peer run in the same process.
 *   clgrad bench gemm --m M --n N --k K [--transa] [--transb] [--dtype f32|f16] [--reps R] [--json] [--device SPEC]
 *                     [--impl auto|own|clblast]
 *   clgrad bench sweep [--json] [--reps R] [--device SPEC] [--impl auto|own|clblast]
 *   clgrad bench ops [--json] [--reps R] [--device SPEC] [--rows] (cli/bench_ops.c)
 *   clgrad bench fft [--device SPEC] [--lengths N,...] [--batches B,...] [--reps R] [--real] [--2d] [--conv] [--json]  (cli/bench_fft.c)
 *   clgrad bench step --model mlp|cnn|transformer [--gpu h100|mi300x|a770|rx7900] [--batch N] [--json]
 *                     (cli/bench_step.c: one training step's launches, modelled on a GPU)
 *   clgrad bench train --model mlp|cnn|transformer [--precision fp32|mixed|both] [--batch N] [--steps S]
 *                     (cli/bench_train.c: samples/s and peak device memory a step, fp32 against mixed)
 *   clgrad bench tokenizer [--data FILE|DIR] [--vocab N] [--repeat R] [--json]
 *                     (cli/cmd_tokenize.c: MB/s of BPE learning, encoding, decoding; host only)
 * GEMM: float32 row-major C = op(A) @ op(B) through clg_run (the implementation the backend picks,
 * tune result included; --impl forces one through $CLGRAD_GEMM), median of R timed calls after a
 * warm-up, each call followed by clg_synchronize; the peer is OpenBLAS cblas_sgemm on the host
 * (when configure found it, cli/openblas.cmake), one warm-up and the median of R, every core
 * unless $OPENBLAS_NUM_THREADS says otherwise. Results are compared: max |C - C_openblas| / max |C_openblas|.
 * --dtype f16: float16 operands and result (the peer gets the same half-rounded inputs; 2e-3).
 * Exit status: 0, 1 when a result disagrees (> 1e-4) or a run failed, 2 on usage errors. */
#include "cli.h"
#include "device_auto.h"
#include "json_write.h"
#include "opts.h"
#include "progress.h"

#include <clg_measure.h>

#include <clg_tune.h>
#include <clgrad.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef CLG_HAVE_OPENBLAS
#include <cblas.h>
#endif

int bench_ops(int argc, char **argv); /* cli/bench_ops.c */
int bench_fft(int argc, char **argv); /* cli/bench_fft.c */
int bench_step(int argc, char **argv); /* cli/bench_step.c */

#define TOLERANCE 1e-4
/* float16: the peer multiplies the same half-rounded inputs, so the difference is the half
 * rounding of each result (2^-11 relative) and float32 summation order */
#define TOLERANCE_F16 2e-3

typedef struct {
	const char *label;
	long m, n, k, batch;
	int ta, tb, shared_a, cols_b;
	int f16;         /* --dtype f16: float16 operands (float32 accumulation, kernels_cl/gemm_half.cl) */
} gshape;

typedef struct {
	double first_s, median_s, gflops;
	double ob_median_s, ob_gflops; /* < 0 without OpenBLAS */
	double max_rel_err;            /* < 0 without OpenBLAS */
	double cpu_s;                  /* the process's CPU time a timed call (every thread of the runtime) */
	char impl[96];
} gresult;

static double flops(const gshape *s)
{
	return 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)s->batch;
}

static void fill_random(float *x, size_t n, uint32_t seed)
{
	uint32_t st = seed * 2654435761u + 12345u;
	for (size_t i = 0; i < n; i++) {
		st = st * 1664525u + 1013904223u;
		x[i] = (float)((st >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
	}
}

static void ob_setup(void)
{
#ifdef CLG_HAVE_OPENBLAS
	const char *env = clg_config_foreign("OPENBLAS_NUM_THREADS");
	if (!(env && atoi(env) > 0)) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		openblas_set_num_threads(cores > 0 ? (int)cores : 1);
	}
#endif
}

static int ob_threads(void)
{
#ifdef CLG_HAVE_OPENBLAS
	return openblas_get_num_threads();
#else
	return 0;
#endif
}

/* User + system CPU time of the process so far: on a CPU device the runtime's threads do the work,
 * so CPU time a call measures a kernel where other processes share the cores and wall time does not. */
static double cpu_seconds(void)
{
	struct rusage u;

	if (getrusage(RUSAGE_SELF, &u))
		return 0;
	return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/* One shape: OpenBLAS first (its result is the reference), then clgrad. */
static int run_gemm(clg_backend *be, const gshape *s, int reps, gresult *r)
{
	size_t na = (size_t)(s->m * s->k * (s->shared_a ? 1 : s->batch)), nb = (size_t)(s->k * s->n * s->batch);
	size_t nc = (size_t)(s->m * s->n * s->batch);
	float *A = malloc(na * sizeof(float)), *B = malloc(nb * sizeof(float));
	float *C = calloc(nc, sizeof(float)), *R = calloc(nc, sizeof(float));
	double *t = malloc((size_t)reps * sizeof(double)), t0, cpu0;
	clg_buffer *bA = NULL, *bB = NULL, *bC = NULL;
	clg_op_call call;
	size_t es = s->f16 ? sizeof(uint16_t) : sizeof(float);
	int rc = 1;

	memset(r, 0, sizeof(*r));
	r->ob_median_s = r->ob_gflops = r->max_rel_err = -1;
	if (!A || !B || !C || !R || !t) {
		fprintf(stderr, "clgrad bench: out of host memory\n");
		goto out;
	}
	fill_random(A, na, 1);
	fill_random(B, nb, 2);
	if (s->f16) { /* the values float16 holds, on both sides */
		for (size_t i = 0; i < na; i++)
			A[i] = clg_half_to_float(clg_float_to_half(A[i]));
		for (size_t i = 0; i < nb; i++)
			B[i] = clg_half_to_float(clg_float_to_half(B[i]));
	}
#ifdef CLG_HAVE_OPENBLAS
	for (int rep = -1; rep < reps; rep++) {
		t0 = clg_now();
		for (long b = 0; b < s->batch; b++)
			cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans,
				    (int)s->m, (int)s->n, (int)s->k, 1.0f, A + (s->shared_a ? 0 : b * s->m * s->k),
				    (int)(s->ta ? s->m : s->k), B + (s->cols_b ? b * s->n : b * s->k * s->n),
				    (int)(s->tb ? s->k : s->cols_b ? s->n * s->batch : s->n), 0.0f, R + b * s->m * s->n,
				    (int)s->n);
		if (rep >= 0)
			t[rep] = clg_now() - t0;
	}
	r->ob_median_s = clg_measure_median(t, reps);
	r->ob_gflops = flops(s) / r->ob_median_s * 1e-9;
	/* OpenBLAS's threads spin a while after a call: let them sleep before timing the device */
	{
		struct timespec ts = {0, 300000000L};
		nanosleep(&ts, NULL);
	}
#endif
	if (s->f16) { /* half bits in place, in the front half of each array */
		uint16_t *h[3] = {(uint16_t *)A, (uint16_t *)B, (uint16_t *)C};
		float *f[3] = {A, B, C};
		size_t cnt[3] = {na, nb, nc};
		for (int a = 0; a < 3; a++)
			for (size_t i = 0; i < cnt[a]; i++)
				h[a][i] = clg_float_to_half(f[a][i]);
	}
	if (clg_buffer_alloc(be, na * es, &bA) || clg_buffer_alloc(be, nb * es, &bB) ||
	    clg_buffer_alloc(be, nc * es, &bC) || clg_buffer_upload(bA, 0, A, na * es) ||
	    clg_buffer_upload(bB, 0, B, nb * es) || clg_buffer_upload(bC, 0, C, nc * es) ||
	    clg_synchronize(be)) {
		report_error("bench");
		goto out;
	}
	memset(&call, 0, sizeof(call));
	call.op = CLG_OP_GEMM;
	clg_gemm_operand_view(&call.src[0], bA, s->batch, s->m, s->k, s->ta, s->shared_a ? 0 : s->m * s->k, 0);
	clg_gemm_operand_view(&call.src[1], bB, s->batch, s->k, s->n, s->tb, s->cols_b ? s->n : s->k * s->n, s->cols_b ? s->n * s->batch : 0);
	clg_gemm_operand_view(&call.dst, bC, s->batch, s->m, s->n, 0, s->m * s->n, 0);
	call.f[0] = 1.0;
	clg_tune_gemm_choice(be, s->m, s->n, s->k, s->batch, s->ta, s->tb, r->impl, sizeof(r->impl));
	if (s->f16) {
		call.src[0].dtype = call.src[1].dtype = call.dst.dtype = CLG_F16;
		int staged = clg_cfg_is(CLG_CFG_GEMM_HALF, "auto") ? be->info.type == CLG_DEV_CPU && !clg_half_native(&be->info)
								     : clg_cfg_is(CLG_CFG_GEMM_HALF, "staged");
		snprintf(r->impl, sizeof(r->impl), "%s", staged ? "float16 widened to float32, float32 GEMM, rounded back"
								: "gemm_half.cl, float32 accumulation");
	}
	t0 = clg_now();
	if (clg_run(be, &call) || clg_synchronize(be)) {
		report_error("bench");
		goto out;
	}
	r->first_s = clg_now() - t0;
	cpu0 = cpu_seconds();
	for (int i = 0; i < reps; i++) {
		t0 = clg_now();
		if (clg_run(be, &call) || clg_synchronize(be)) {
			report_error("bench");
			goto out;
		}
		t[i] = clg_now() - t0;
	}
	r->cpu_s = (cpu_seconds() - cpu0) / reps;
	r->median_s = clg_measure_median(t, reps);
	r->gflops = flops(s) / r->median_s * 1e-9;
	if (clg_buffer_download(bC, 0, C, nc * es)) {
		report_error("bench");
		goto out;
	}
	for (size_t i = nc; s->f16 && i-- > 0;) /* back to float, from the end (in place) */
		C[i] = clg_half_to_float(((uint16_t *)C)[i]);
#ifdef CLG_HAVE_OPENBLAS
	{
		double maxref = 0, maxdiff = 0;
		for (size_t i = 0; i < nc; i++) {
			double d = fabs((double)C[i] - (double)R[i]), a = fabs((double)R[i]);
			if (!(d <= maxdiff))
				maxdiff = d == d ? d : INFINITY;
			if (a > maxref)
				maxref = a;
		}
		r->max_rel_err = maxref > 0 ? maxdiff / maxref : maxdiff;
	}
#endif
	rc = r->max_rel_err > (s->f16 ? TOLERANCE_F16 : TOLERANCE) ? 1 : 0;
out:
	clg_buffer_free(bA);
	clg_buffer_free(bB);
	clg_buffer_free(bC);
	free(A);
	free(B);
	free(C);
	free(R);
	free(t);
	return rc;
}

static void shape_dims(const gshape *s, char *buf, size_t len)
{
	snprintf(buf, len, "%ldx%ldx%ld%s%s", s->m, s->n, s->k, s->ta ? " At" : "", s->tb ? " Bt" : "");
	if (s->batch > 1)
		snprintf(buf + strlen(buf), len - strlen(buf), " b%ld%s%s", s->batch, s->shared_a ? " A0" : "",
			 s->cols_b ? " Bc" : "");
}

static void json_device(json_writer *w, clg_backend *be)
{
	json_key(w, "device");
	json_begin_object(w);
	json_key_int(w, "index", be->info.index);
	json_key_str(w, "name", be->info.name);
	json_key_str(w, "type", clg_device_type_name(be->info.type));
	json_key_str(w, "driver", be->info.driver_version);
	json_end_object(w);
}

static void json_result(json_writer *w, const gshape *s, const gresult *r)
{
	json_key_int(w, "m", s->m);
	json_key_int(w, "n", s->n);
	json_key_int(w, "k", s->k);
	json_key_int(w, "batch", s->batch);
	json_key_bool(w, "transa", s->ta);
	json_key_bool(w, "transb", s->tb);
	json_key_str(w, "impl", r->impl);
	json_key_str(w, "dtype", s->f16 ? "float16" : "float32");
	json_key_num(w, "first_call_s", r->first_s);
	json_key_num(w, "median_s", r->median_s);
	json_key_num(w, "gflops", r->gflops);
	if (r->ob_gflops > 0) {
		json_key_num(w, "openblas_median_s", r->ob_median_s);
		json_key_num(w, "openblas_gflops", r->ob_gflops);
		json_key_num(w, "ratio", r->gflops / r->ob_gflops);
		json_key_num(w, "max_rel_err", r->max_rel_err);
	} else {
		json_key(w, "openblas_gflops");
		json_null(w);
		json_key(w, "ratio");
		json_null(w);
		json_key(w, "max_rel_err");
		json_null(w);
	}
}

typedef struct {
	const char *spec;
	int json, reps;
	gshape s;
} gopts;

static const char usage_gemm[] =
	"usage: clgrad bench gemm --m M --n N --k K [--transa] [--transb] [--dtype f32|f16] [--reps R] [--json]\n"
	"                         [--device SPEC|auto] [--impl auto|own|clblast]\n"
	"  M, N, K in [1, 65536] (default 1024), R in [1, 10000] (default 10)\n";
static const char usage_sweep[] =
	"usage: clgrad bench sweep [--reps R] [--json] [--device SPEC|auto] [--impl auto|own|clblast]\n";

/* Options of bench gemm (shape: the shape's too) and bench sweep; -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, gopts *o, int shape)
{
	int64_t m = o->s.m, n = o->s.n, k = o->s.k;
	const char *impl = NULL, *dtype = NULL;
	const cli_opt opts[] = {
		CLI_OPT_FLAG("json", &o->json),
		CLI_OPT_STR("device", &o->spec),
		CLI_OPT_CHOICE("impl", &impl, "auto|own|clblast"),
		CLI_OPT_I32("reps", &o->reps, 1, 10000),
		CLI_OPT_FLAG("transa", &o->s.ta), /* the shape's, from here on */
		CLI_OPT_FLAG("transb", &o->s.tb),
		CLI_OPT_CHOICE("dtype", &dtype, "f32|f16"),
		CLI_OPT_I64("m", &m, 1, 65536),
		CLI_OPT_I64("n", &n, 1, 65536),
		CLI_OPT_I64("k", &k, 1, 65536),
	};
	cli_spec spec = {.cmd = shape ? "bench gemm" : "bench sweep", .usage = shape ? usage_gemm : usage_sweep,
			 .opts = opts, .n = shape ? CLI_N(opts) : 4};
	int rc = cli_parse(&spec, argc, argv);

	if (rc >= 0)
		return rc;
	o->s.m = (long)m;
	o->s.n = (long)n;
	o->s.k = (long)k;
	if (impl && clg_config_set("GEMM", impl)) {
		fprintf(stderr, "clgrad bench: --impl: %s\n", clg_last_error());
		return 2;
	}
	o->s.f16 = dtype && !strcmp(dtype, "f16");
	return -1;
}

/* --device auto: the job's rate is the GFLOP/s of its GEMM shape (the square 512 one for a sweep) */
static clg_status auto_gemm_rate(clg_backend *be, void *user, double *rate)
{
	gresult r;
	if (run_gemm(be, user, 3, &r))
		return clg_fail(CLG_ERR_INVALID, "the GEMM did not run or disagreed with OpenBLAS");
	*rate = r.gflops;
	return CLG_OK;
}

static const gshape sweep_auto_shape = {.label = "auto", .m = 512, .n = 512, .k = 512, .batch = 1};

/* the choice is reported on stderr: stdout is the benchmark's (JSON with --json) */
static clg_status select_for_gemm(const char *spec, const gshape *s, int *idx)
{
	char job[96];
	auto_job j = {.job = job, .unit = "GFLOP/s", .rate = auto_gemm_rate, .user = (void *)s, .out = stderr};

	snprintf(job, sizeof(job), "bench gemm %ldx%ldx%ld%s%s", s->m, s->n, s->k, s->ta ? " ta" : "", s->tb ? " tb" : "");
	return device_select_for(spec, &j, idx);
}

int bench_select_device(const char *spec, int *idx)
{
	return select_for_gemm(spec, &sweep_auto_shape, idx);
}

static int open_device(const char *spec, const gshape *s, clg_backend **be)
{
	int idx;
	if (select_for_gemm(spec, s, &idx) || clg_backend_open(idx, be))
		return report_error("bench");
	return 0;
}

static int bench_gemm(int argc, char **argv)
{
	gopts o = {.reps = 10, .s = {.label = NULL, .m = 1024, .n = 1024, .k = 1024, .batch = 1}};
	clg_backend *be = NULL;
	gresult r;
	int rc = parse_opts(argc, argv, &o, 1);

	if (rc >= 0)
		return rc;
	if (open_device(o.spec, &o.s, &be))
		return 1;
	ob_setup();
	rc = run_gemm(be, &o.s, o.reps, &r);
	if (o.json) {
		json_writer w;
		json_init(&w, stdout, 1);
		json_begin_object(&w);
		json_key_str(&w, "schema", "clgrad-bench-gemm/1");
		json_device(&w, be);
		json_key_int(&w, "reps", o.reps);
		json_key_int(&w, "openblas_threads", ob_threads());
		json_result(&w, &o.s, &r);
		json_key_bool(&w, "ok", rc == 0);
		json_end_object(&w);
		printf("\n");
	} else if (r.median_s > 0) {
		char dims[64];
		shape_dims(&o.s, dims, sizeof(dims));
		printf("device: %s (%s)\nGEMM %s %s: %.1f GFLOP/s (median of %d, %.3f ms; first call %.3f s)\n",
		       be->info.name, r.impl, dims, o.s.f16 ? "float16" : "float32", r.gflops, o.reps, r.median_s * 1e3,
		       r.first_s);
		if (r.cpu_s > 0) /* on a shared machine wall time moves with the load; CPU time much less */
			printf("CPU time %.3f ms a call (all threads; %.1f GFLOP per CPU second)\n", r.cpu_s * 1e3,
			       flops(&o.s) / r.cpu_s * 1e-9);
		if (r.ob_gflops > 0)
			printf("OpenBLAS (%d threads): %.1f GFLOP/s (%.3f ms); ratio clgrad / OpenBLAS %.3f; max rel err %.2e\n",
			       ob_threads(), r.ob_gflops, r.ob_median_s * 1e3, r.gflops / r.ob_gflops, r.max_rel_err);
		else
			printf("OpenBLAS: not available (not found at configure time)\n");
	}
	clg_backend_close(be);
	return rc;
}

/* Square shapes and the products one training step of the MLP and the CNN makes at batch 128,
 * in the layouts training uses (as clgrad tune measures them). */
static const gshape sweep_shapes[] = {
	{"square", 128, 128, 128, 1, 0, 0, 0, 0},
	{"square", 256, 256, 256, 1, 0, 0, 0, 0},
	{"square", 512, 512, 512, 1, 0, 0, 0, 0},
	{"square", 1024, 1024, 1024, 1, 0, 0, 0, 0},
	{"square", 2048, 2048, 2048, 1, 0, 0, 0, 0},
	{"mlp fc1 forward", 128, 512, 784, 1, 0, 1, 0, 0},
	{"mlp fc1 dx", 128, 784, 512, 1, 0, 0, 0, 0},
	{"mlp fc1 dW", 512, 784, 128, 1, 1, 0, 0, 0},
	{"mlp fc2 forward", 128, 512, 512, 1, 0, 1, 0, 0},
	{"mlp fc2 dx", 128, 512, 512, 1, 0, 0, 0, 0},
	{"mlp fc2 dW", 512, 512, 128, 1, 1, 0, 0, 0},
	{"mlp fc3 forward", 128, 10, 512, 1, 0, 1, 0, 0},
	{"mlp fc3 dx", 128, 512, 10, 1, 0, 0, 0, 0},
	{"mlp fc3 dW", 10, 512, 128, 1, 1, 0, 0, 0},
	{"cnn conv1 forward", 32, 784, 9, 128, 0, 0, 1, 1},
	{"cnn conv1 dW", 32, 9, 100352, 1, 0, 1, 0, 0},
	{"cnn conv2 forward", 64, 196, 288, 128, 0, 0, 1, 1},
	{"cnn conv2 dW", 64, 288, 25088, 1, 0, 1, 0, 0},
	{"cnn conv2 dcols", 288, 196, 64, 128, 1, 0, 1, 1},
	{"cnn fc1 forward", 128, 128, 3136, 1, 0, 1, 0, 0},
	{"cnn fc1 dx", 128, 3136, 128, 1, 0, 0, 0, 0},
	{"cnn fc1 dW", 128, 3136, 128, 1, 1, 0, 0, 0},
};

static int bench_sweep(int argc, char **argv)
{
	gopts o = {.reps = 10};
	clg_backend *be = NULL;
	int rc = parse_opts(argc, argv, &o, 0), n = (int)(sizeof(sweep_shapes) / sizeof(sweep_shapes[0]));
	json_writer w;

	if (rc >= 0)
		return rc;
	rc = 0;
	if (open_device(o.spec, &sweep_auto_shape, &be))
		return 1;
	ob_setup();
	if (o.json) {
		json_init(&w, stdout, 1);
		json_begin_object(&w);
		json_key_str(&w, "schema", "clgrad-bench-sweep/1");
		json_device(&w, be);
		json_key_int(&w, "reps", o.reps);
		json_key_int(&w, "openblas_threads", ob_threads());
		json_key(&w, "rows");
		json_begin_array(&w);
	} else {
		printf("device: %s; OpenBLAS threads: %d\n", be->info.name, ob_threads());
		printf("%-18s %-24s %10s %10s %8s %10s  %s\n", "shape", "M x N x K", "GF/s", "OB GF/s", "ratio", "max err",
		       "implementation");
	}
	for (int i = 0; i < n; i++) {
		const gshape *s = &sweep_shapes[i];
		gresult r;
		int one = run_gemm(be, s, o.reps, &r);
		rc |= one;
		if (o.json) {
			json_begin_object(&w);
			json_key_str(&w, "label", s->label);
			json_result(&w, s, &r);
			json_key_bool(&w, "ok", one == 0);
			json_end_object(&w);
		} else {
			char dims[64];
			shape_dims(s, dims, sizeof(dims));
			printf("%-18s %-24s %10.1f %10.1f %8.3f %10.2e  %s\n", s->label, dims, r.gflops,
			       r.ob_gflops > 0 ? r.ob_gflops : 0.0, r.ob_gflops > 0 ? r.gflops / r.ob_gflops : 0.0,
			       r.max_rel_err, r.impl);
			fflush(stdout);
		}
	}
	if (o.json) {
		json_end_array(&w);
		json_end_object(&w);
		printf("\n");
	}
	clg_backend_close(be);
	return rc;
}

int cmd_bench(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--version"))
		return cli_version();
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout,
			"usage: clgrad bench gemm --m M --n N --k K [--transa] [--transb] [--dtype f32|f16] [--reps R] [--json] [--device SPEC]\n"
			"                         [--impl auto|own|clblast]\n"
			"       clgrad bench sweep [--reps R] [--json] [--device SPEC] [--impl auto|own|clblast]\n"
			"       clgrad bench ops [--reps R] [--json] [--device SPEC] [--rows]\n"
			"       clgrad bench exchange [--devices SPEC,...] [--sizes N,...] [--steps S] [--compress none|int8] [--mpi]\n"
			"       clgrad bench fft [--device SPEC] [--lengths N,...] [--batches B,...] [--reps R] [--real] [--2d] [--conv] [--json]\n"
			"       clgrad bench step --model mlp|cnn|transformer [--gpu h100|mi300x|a770|rx7900] [--batch N] [--json]\n"
			"       clgrad bench train --model mlp|cnn|transformer [--precision fp32|mixed|both] [--batch N] [--steps S] [--json]\n"
			"       clgrad bench tokenizer [--data FILE|DIR] [--vocab N] [--repeat R] [--json]\n"
			"GEMM next to OpenBLAS cblas_sgemm (when built with it); ops next to the reference backend.\n");
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "gemm"))
		return bench_gemm(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sweep"))
		return bench_sweep(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ops"))
		return bench_ops(argc - 1, argv + 1);
	if (!strcmp(argv[1], "exchange"))
		return bench_exchange(argc - 1, argv + 1);
	if (!strcmp(argv[1], "fft"))
		return bench_fft(argc - 1, argv + 1);
	if (!strcmp(argv[1], "step"))
		return bench_step(argc - 1, argv + 1);
	if (!strcmp(argv[1], "train"))
		return bench_train(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tokenizer"))
		return bench_tokenizer(argc - 1, argv + 1);
	fprintf(stderr, "clgrad bench: unknown benchmark '%s' (gemm, sweep, ops, exchange, fft, step, train, tokenizer)\n",
		argv[1]);
	return 2;
}
