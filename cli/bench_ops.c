/* clgrad bench ops [--reps R] [--json] [--device SPEC] [--rows]: op micro-benchmarks at the sizes training
 * uses, on the selected device next to the reference backend (plain C loops) in the same process.
 * Per op: median time per call (clg_run + clg_synchronize) after a warm-up (which builds the
 * kernel), and the effective bandwidth: bytes of every operand read or written, once, per second.
 * The kernel shape each op runs in on the device (family=cpu|gpu, backend/kernel_shape.c) is
 * printed beside it: CLGRAD_KERNEL_SHAPE=row=gpu and row=cpu compare the two. --rows: the row
 * kernels in both shapes against a copy of the same bytes (cli/bench_rows.c). */
#include "cli.h"
#include "json_write.h"
#include "opts.h"
#include "progress.h"

#include <clg_measure.h>

#include <clgrad.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int bench_ops(int argc, char **argv);
int bench_rows(clg_backend *be, int reps, int json); /* cli/bench_rows.c */

#define MAXOPS 7 /* dst + up to 6 sources */

typedef struct {
	const char *name, *what;
	clg_op op;
	int nops;                          /* dst first */
	int nd[MAXOPS];
	int64_t shape[MAXOPS][4];
	int rw;                            /* operands also written in place besides the dst (adam: m, v) */
	double f[8];
	int64_t i[8];
	float lo;                          /* inputs uniform in [lo, 1) */
	int64_t stride[MAXOPS][4];         /* an operand's strides when [k][0] != 0, else contiguous */
} op_bench;

static const op_bench benches[] = {
	{"add", "conv1 activation + bias (128, 32, 28, 28)", CLG_OP_ADD, 3,
	 {4, 4, 4}, {{128, 32, 28, 28}, {128, 32, 28, 28}, {128, 32, 28, 28}}, 0, {0}, {0}, -1},
	{"relu", "conv1 activation (128, 32, 28, 28)", CLG_OP_RELU, 2,
	 {4, 4}, {{128, 32, 28, 28}, {128, 32, 28, 28}}, 0, {0}, {0}, -1},
	{"sum", "rows of (128, 25088) to (128)", CLG_OP_SUM, 2, {1, 2}, {{128}, {128, 25088}}, 0, {0}, {0}, -1},
	{"max", "rows of (128, 25088) to (128)", CLG_OP_MAX, 2, {1, 2}, {{128}, {128, 25088}}, 0, {0}, {0}, -1},
	{"softmax", "attention rows (4096, 64)", CLG_OP_SOFTMAX, 2, {2, 2}, {{4096, 64}, {4096, 64}}, 0, {0}, {0}, -1},
	{"softmax_bwd", "attention rows (4096, 64)", CLG_OP_SOFTMAX_BACKWARD, 3,
	 {2, 2, 2}, {{4096, 64}, {4096, 64}, {4096, 64}}, 0, {0}, {0}, -1},
	{"layer_norm", "transformer rows (1024, 64)", CLG_OP_LAYER_NORM, 2,
	 {2, 2}, {{1024, 64}, {1024, 64}}, 0, {1e-5}, {0}, -1},
	{"ln_bwd", "transformer rows (1024, 64)", CLG_OP_LAYER_NORM_BACKWARD, 3,
	 {2, 2, 2}, {{1024, 64}, {1024, 64}, {1024, 64}}, 0, {1e-5}, {0}, -1},
	/* one op for the residual add, the norm and gamma, beta (and its backward with their gradients) */
	{"add_ln", "transformer residual + layer norm (1024, 64)", CLG_OP_ADD_LAYER_NORM, 6,
	 {2, 2, 2, 1, 1, 2}, {{1024, 64}, {1024, 64}, {1024, 64}, {64}, {64}, {1024, 64}}, 0, {1e-5}, {1}, -1},
	{"add_ln_bwd", "transformer residual + layer norm (1024, 64)", CLG_OP_ADD_LAYER_NORM_BACKWARD, 7,
	 {2, 2, 2, 1, 1, 1, 2}, {{1024, 64}, {1024, 64}, {1024, 64}, {64}, {64}, {64}, {1024, 64}}, 0, {1e-5}, {1}, -1},
	{"xent", "softmax cross-entropy, logits (4096, 64)", CLG_OP_SOFTMAX_XENT, 4,
	 {1, 2, 2, 2}, {{1}, {4096, 64}, {4096, 64}, {4096, 2}}, 0, {1.0 / 4096}, {0}, -1},
	{"im2col", "conv2 input (128, 32, 14, 14), 3x3 pad 1", CLG_OP_IM2COL, 2,
	 {3, 4}, {{128, 288, 196}, {128, 32, 14, 14}}, 0, {0}, {3, 3, 1, 1, 1, 1, 1, 1}, -1},
	{"max_pool2d", "conv1 output (128, 32, 28, 28), 2x2 stride 2", CLG_OP_MAXPOOL2D, 2,
	 {4, 4}, {{128, 32, 14, 14}, {128, 32, 28, 28}}, 0, {0}, {2, 2, 2, 2, 0, 0, 1, 1}, -1},
	{"adam_step", "fc1 weight (512, 784)", CLG_OP_ADAM_STEP, 5,
	 {2, 2, 2, 2, 2}, {{512, 784}, {512, 784}, {512, 784}, {512, 784}, {512, 784}}, 2,
	 {1e-3, 0.9, 0.999, 1e-8, 0, 0.19, 0.002}, {0}, 0},
	/* the GPU shapes of issue 17 (CLGRAD_KERNEL_SHAPE=cpu|gpu compares them) */
	{"bias_act_backward", "fc1 (128, 512), relu, and its bias gradient", CLG_OP_BIAS_ACT_BACKWARD, 4,
	 {2, 2, 2, 1}, {{128, 512}, {128, 512}, {128, 512}, {512}}, 1, {0}, {1}, -1},
	{"sum_cols", "bias gradient: (128, 512) summed over the rows", CLG_OP_SUM, 2,
	 {1, 2}, {{512}, {512, 128}}, 0, {0}, {0}, -1, {{0}, {1, 512}}},
};

/* The kernel family whose shape a bench runs in (-1: the op has one shape): the row family for
 * the row ops; a column reduction is the reduce family's where that family's shape is gpu (else
 * the row kernels take it); bias+activation backward the fused family's. */
static int family_of(clg_backend *be, const op_bench *b)
{
	switch (b->op) {
	case CLG_OP_SUM: case CLG_OP_MAX: case CLG_OP_MIN:
		if (strstr(b->name, "_cols") && clg_backend_kernel_shape(be, CLG_KFAM_REDUCE, NULL) == CLG_SHAPE_GPU)
			return CLG_KFAM_REDUCE;
		return CLG_KFAM_ROW;
	case CLG_OP_ARGMAX:
	case CLG_OP_SOFTMAX: case CLG_OP_LOG_SOFTMAX: case CLG_OP_SOFTMAX_BACKWARD: case CLG_OP_LOG_SOFTMAX_BACKWARD:
	case CLG_OP_LAYER_NORM: case CLG_OP_LAYER_NORM_BACKWARD: case CLG_OP_SOFTMAX_XENT: case CLG_OP_SOFTMAX_XENT_BACKWARD:
	case CLG_OP_ADD_LAYER_NORM: case CLG_OP_ADD_LAYER_NORM_BACKWARD:
		return CLG_KFAM_ROW;
	case CLG_OP_BIAS_ACT_BACKWARD:
		return CLG_KFAM_FUSED;
	default:
		return -1;
	}
}

/* "row=cpu" or "-" */
static const char *shape_label(clg_backend *be, const op_bench *b, char *buf, size_t len)
{
	int f = family_of(be, b);
	if (f < 0)
		return "-";
	snprintf(buf, len, "%s=%s", clg_kernel_family_name((clg_kernel_family)f),
		 clg_kernel_shape_name(clg_backend_kernel_shape(be, (clg_kernel_family)f, NULL)));
	return buf;
}

static int64_t numel(const op_bench *b, int k)
{
	int64_t n = 1;
	for (int d = 0; d < b->nd[k]; d++)
		n *= b->shape[k][d];
	return n;
}

static double bytes_moved(const op_bench *b)
{
	/* adam_step without amsgrad leaves its last operand (the running max) alone */
	int used = b->op == CLG_OP_ADAM_STEP ? b->nops - 1 : b->nops;
	double s = 0;
	for (int k = 0; k < used; k++)
		s += 4.0 * (double)numel(b, k);
	/* in-place state is read and written */
	for (int k = 0; k < b->rw; k++)
		s += 4.0 * (double)numel(b, used - 1 - k);
	if (b->op == CLG_OP_ADAM_STEP)
		s += 4.0 * (double)numel(b, 0); /* the parameter is read as well */
	return s;
}

/* Median seconds per call of one op on one backend; < 0 on failure (message printed). */
static double time_op(clg_backend *be, const op_bench *b, int reps)
{
	clg_buffer *buf[MAXOPS] = {0};
	clg_op_call c;
	double *t = malloc((size_t)reps * sizeof(double)), res = -1, t0;
	float *host = NULL;

	memset(&c, 0, sizeof(c));
	c.op = b->op;
	memcpy(c.f, b->f, sizeof(c.f));
	memcpy(c.i, b->i, sizeof(c.i));
	for (int k = 0; k < b->nops; k++) {
		int64_t n = numel(b, k);
		uint32_t st = 12345u + 977u * (uint32_t)k;
		clg_view *v = k ? &c.src[k - 1] : &c.dst;
		host = realloc(host, (size_t)n * sizeof(float));
		if (!host || !t)
			goto out;
		for (int64_t i = 0; i < n; i++) {
			st = st * 1664525u + 1013904223u;
			host[i] = b->lo + (1.0f - b->lo) * (float)((st >> 8) * (1.0 / 16777216.0));
		}
		if (clg_buffer_alloc(be, (size_t)n * sizeof(float), &buf[k]) ||
		    clg_buffer_upload(buf[k], 0, host, (size_t)n * sizeof(float)))
			goto fail;
		clg_view_contiguous(v, buf[k], CLG_F32, b->nd[k], b->shape[k]);
		for (int d = 0; b->stride[k][0] && d < b->nd[k]; d++)
			v->stride[d] = b->stride[k][d];
	}
	if (clg_run(be, &c) || clg_synchronize(be))
		goto fail;
	for (int i = 0; i < reps; i++) {
		t0 = clg_now();
		if (clg_run(be, &c) || clg_synchronize(be))
			goto fail;
		t[i] = clg_now() - t0;
	}
	res = clg_measure_median(t, reps);
	goto out;
fail:
	fprintf(stderr, "clgrad bench ops: %s on '%s': %s\n", b->name, be->info.name, clg_last_error());
out:
	for (int k = 0; k < MAXOPS; k++)
		clg_buffer_free(buf[k]);
	free(host);
	free(t);
	return res;
}

int bench_ops(int argc, char **argv)
{
	const char *spec = NULL;
	int json = 0, rows = 0, reps = 20, idx, rc = 0, n = (int)(sizeof(benches) / sizeof(benches[0]));
	clg_backend *be = NULL, *ref = NULL;
	json_writer w;

	const cli_opt opts[] = {
		CLI_OPT_FLAG("json", &json),
		CLI_OPT_FLAG("rows", &rows),
		CLI_OPT_STR("device", &spec),
		CLI_OPT_I32("reps", &reps, 1, 10000),
	};
	cli_spec cs = {.cmd = "bench ops", .usage = "usage: clgrad bench ops [--reps R] [--json] [--device SPEC|auto] [--rows]\n"
		       "  R in [1, 10000] (default 20); --rows: the row kernels at (4096, 64) and (1024, 512),\n"
		       "  both kernel shapes, GB/s and the fraction of a copy of the same bytes\n", .opts = opts, .n = CLI_N(opts)};

	if ((rc = cli_parse(&cs, argc, argv)) >= 0)
		return rc;
	rc = 0;
	if (bench_select_device(spec, &idx) || clg_backend_open(idx, &be) || clg_backend_open(0, &ref)) {
		rc = report_error("bench");
		goto out;
	}
	if (rows) {
		rc = bench_rows(be, reps, json);
		goto out;
	}
	if (json) {
		json_init(&w, stdout, 1);
		json_begin_object(&w);
		json_key_str(&w, "schema", "clgrad-bench-ops/1");
		json_key_str(&w, "device", be->info.name);
		json_key_str(&w, "peer", "reference backend (plain C, one thread)");
		json_key_int(&w, "reps", reps);
		json_key(&w, "ops");
		json_begin_array(&w);
	} else {
		const char *why = NULL;
		clg_backend_kernel_shape(be, CLG_KFAM_ROW, &why);
		printf("device: %s; peer: the reference backend (plain C); row kernels: %s (%s)\n", be->info.name,
		       clg_kernel_shape_name(clg_backend_kernel_shape(be, CLG_KFAM_ROW, NULL)), why);
		for (int f = 0; f < CLG_KFAM_COUNT; f++) {
			clg_kernel_shape k = clg_backend_kernel_shape(be, (clg_kernel_family)f, &why);
			printf("kernel shape %s=%s (%s)\n", clg_kernel_family_name((clg_kernel_family)f),
			       clg_kernel_shape_name(k), why);
		}
		printf("%-11s %-44s %-8s %10s %9s %10s %9s %8s\n", "op", "size", "shape", "dev us", "dev GB/s", "ref us",
		       "ref GB/s", "speed-up");
	}
	for (int i = 0; i < n; i++) {
		const op_bench *b = &benches[i];
		double td = time_op(be, b, reps), tr = time_op(ref, b, reps < 5 ? reps : 5), by = bytes_moved(b);
		char sbuf[32];
		const char *shape = shape_label(be, b, sbuf, sizeof(sbuf));
		if (td < 0)
			rc = 1;
		if (json) {
			json_begin_object(&w);
			json_key_str(&w, "op", b->name);
			json_key_str(&w, "size", b->what);
			json_key_str(&w, "shape", shape);
			json_key_num(&w, "bytes", by);
			json_key_num(&w, "device_s", td > 0 ? td : NAN);
			json_key_num(&w, "device_gbs", td > 0 ? by / td * 1e-9 : NAN);
			json_key_num(&w, "ref_s", tr > 0 ? tr : NAN);
			json_key_num(&w, "ref_gbs", tr > 0 ? by / tr * 1e-9 : NAN);
			json_key_num(&w, "speedup", td > 0 && tr > 0 ? tr / td : NAN);
			json_end_object(&w);
		} else {
			printf("%-11s %-44s %-8s %10.1f %9.2f %10.1f %9.2f %8.2f\n", b->name, b->what, shape, td * 1e6,
			       td > 0 ? by / td * 1e-9 : 0.0, tr * 1e6, tr > 0 ? by / tr * 1e-9 : 0.0,
			       td > 0 && tr > 0 ? tr / td : 0.0);
			fflush(stdout);
		}
	}
	if (json) {
		json_end_array(&w);
		json_end_object(&w);
		printf("\n");
	}
out:
	clg_backend_close(be);
	clg_backend_close(ref);
	return rc;
}
