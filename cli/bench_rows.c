/* clgrad bench ops --rows: the row kernels (softmax, log-softmax, their backwards, layer norm and its
 * backward, row sum and max, softmax cross-entropy and its backward) at (4096, 64) and (1024, 512)
 * rows, in both kernel shapes of family "row", each against a copy of the same number of bytes in
 * the same run. Bytes are every operand read or written once (the floor of what the op must move).
 * Each repetition times one copy call and one op call back to back (clg_run + clg_synchronize,
 * medians), so the launch cost and the machine's load are the same for both: the op's fraction
 * of that copy is what issue 12's floor (>= 50%) is measured against. A 64 MiB copy, timed the
 * same way, gives the device's copy bandwidth without the launch cost, and a copy of 64 bytes the
 * cost of a launch alone, for context; an elementwise exp of the same elements (row "exp", in
 * neither shape) what one exp per element costs on the device. */
#include "cli.h"
#include "json_write.h"

#include <clg_measure.h>

#include <clgrad.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_rows(clg_backend *be, int reps, int json);

#define NOPS 5 /* dst + up to 4 sources */

/* an operand's extent: (R, C), (R), (1) or (R, 2) (cross-entropy's row statistics) */
enum { RC, R1, ONE, R2 };

typedef struct {
	const char *name, *dir;
	clg_op op;
	int nops, ext[NOPS];
	double f0;    /* f[0]: eps, or the loss scale (times 1 / R) */
	float lo;     /* inputs uniform in [lo, 1) */
} row_bench;

static const row_bench rbs[] = {
	{"softmax", "fwd", CLG_OP_SOFTMAX, 2, {RC, RC}, 0, -1},
	{"softmax", "bwd", CLG_OP_SOFTMAX_BACKWARD, 3, {RC, RC, RC}, 0, -1},
	{"log_softmax", "fwd", CLG_OP_LOG_SOFTMAX, 2, {RC, RC}, 0, -1},
	{"log_softmax", "bwd", CLG_OP_LOG_SOFTMAX_BACKWARD, 3, {RC, RC, RC}, 0, -1},
	{"layer_norm", "fwd", CLG_OP_LAYER_NORM, 2, {RC, RC}, 1e-5, -1},
	{"layer_norm", "bwd", CLG_OP_LAYER_NORM_BACKWARD, 3, {RC, RC, RC}, 1e-5, -1},
	{"sum", "fwd", CLG_OP_SUM, 2, {R1, RC}, 0, -1},
	{"max", "fwd", CLG_OP_MAX, 2, {R1, RC}, 0, -1},
	{"softmax_xent", "fwd", CLG_OP_SOFTMAX_XENT, 4, {ONE, RC, RC, R2}, 1, 0},
	{"softmax_xent", "bwd", CLG_OP_SOFTMAX_XENT_BACKWARD, 5, {RC, RC, RC, R2, ONE}, 1, 0},
	/* not a row op: the elementwise exp (the builtin) over the same elements, once per size, for the
	 * ops whose cost is one exp per element (softmax, log-softmax's forward, cross-entropy) */
	{"exp", "ew", CLG_OP_EXP, 2, {RC, RC}, 0, -1},
};

static const int64_t sizes[][2] = {{4096, 64}, {1024, 512}};

static int64_t ext_numel(int e, int64_t R, int64_t C) { return e == RC ? R * C : e == R2 ? 2 * R : e == R1 ? R : 1; }

/* one call's operands, allocated and filled; the buffers are freed by call_free */
typedef struct {
	clg_op_call c;
	clg_buffer *buf[NOPS];
} call;

static void call_free(call *k)
{
	for (int i = 0; i < NOPS; i++)
		clg_buffer_free(k->buf[i]);
	memset(k, 0, sizeof(*k));
}

static clg_status call_make(clg_backend *be, clg_op op, int nops, const int64_t *n, const int64_t (*shape)[2],
			    const int *nd, double f0, float lo, call *k)
{
	float *host = NULL;
	clg_status st = CLG_OK;

	memset(k, 0, sizeof(*k));
	k->c.op = op;
	k->c.f[0] = f0;
	for (int j = 0; j < nops && !st; j++) {
		uint32_t s = 4242u + 131u * (uint32_t)j;
		float *h = realloc(host, (size_t)n[j] * sizeof(float));
		if (!h) {
			st = clg_fail(CLG_ERR_OOM, "bench ops --rows: host buffer of %lld floats", (long long)n[j]);
			break;
		}
		host = h;
		for (int64_t i = 0; i < n[j]; i++) {
			s = s * 1664525u + 1013904223u;
			host[i] = lo + (1.0f - lo) * (float)((s >> 8) * (1.0 / 16777216.0));
		}
		st = clg_buffer_alloc(be, (size_t)n[j] * sizeof(float), &k->buf[j]);
		if (!st)
			st = clg_buffer_upload(k->buf[j], 0, host, (size_t)n[j] * sizeof(float));
		if (!st)
			clg_view_contiguous(j ? &k->c.src[j - 1] : &k->c.dst, k->buf[j], CLG_F32, nd[j], shape[j]);
	}
	free(host);
	if (st)
		call_free(k);
	return st;
}

static clg_status run1(clg_backend *be, call *k, double *secs)
{
	double t0 = clg_now();
	clg_status st = clg_run(be, &k->c);

	if (!st)
		st = clg_synchronize(be);
	*secs = clg_now() - t0;
	return st;
}

/* a copy of n floats (1-D) */
static clg_status copy_make(clg_backend *be, int64_t n, call *k)
{
	const int64_t shape[2][2] = {{n, 0}, {n, 0}};
	const int64_t num[2] = {n, n};
	const int nd[2] = {1, 1};
	return call_make(be, CLG_OP_COPY, 2, num, shape, nd, 0, -1, k);
}

/* medians of reps alternated copy and op calls (after one warm-up of each) */
static clg_status time_pair(clg_backend *be, call *op, call *cp, int reps, double *t_op, double *t_cp)
{
	double *a = malloc(2 * (size_t)reps * sizeof(double)), w;
	clg_status st;

	if (!a)
		return clg_fail(CLG_ERR_OOM, "bench ops --rows: %d timings", reps);
	st = run1(be, cp, &w);
	if (!st)
		st = run1(be, op, &w);
	for (int i = 0; i < reps && !st; i++) {
		st = run1(be, cp, &a[reps + i]);
		if (!st)
			st = run1(be, op, &a[i]);
	}
	if (!st) {
		*t_op = clg_measure_median(a, reps);
		*t_cp = clg_measure_median(a + reps, reps);
	}
	free(a);
	return st;
}

/* the median time of reps copies of n floats (after one warm-up) */
static clg_status copy_median(clg_backend *be, int64_t n, int reps, double *median)
{
	double *t = malloc((size_t)reps * sizeof(double)), w;
	call k = {0};
	clg_status st = t ? copy_make(be, n, &k) : clg_fail(CLG_ERR_OOM, "bench ops --rows: %d timings", reps);

	if (!st)
		st = run1(be, &k, &w);
	for (int i = 0; !st && i < reps; i++)
		st = run1(be, &k, &t[i]);
	if (!st)
		*median = clg_measure_median(t, reps);
	free(t);
	call_free(&k);
	return st;
}

/* one row op's bytes (operands read + written once) and the medians of it and of a copy of as many
 * bytes, alternated */
typedef struct {
	double bytes, t_op, t_cp;
} timed;

static clg_status time_row_op(clg_backend *be, const row_bench *rb, int64_t R, int64_t C, int reps, timed *t)
{
	int64_t num[NOPS], shp[NOPS][2];
	int nd[NOPS];
	int xent = rb->op == CLG_OP_SOFTMAX_XENT || rb->op == CLG_OP_SOFTMAX_XENT_BACKWARD;
	call op, cp;
	clg_status st;

	for (int j = 0; j < rb->nops; j++) {
		num[j] = ext_numel(rb->ext[j], R, C);
		nd[j] = rb->ext[j] == RC || rb->ext[j] == R2 ? 2 : 1;
		shp[j][0] = rb->ext[j] == ONE ? 1 : R;
		shp[j][1] = rb->ext[j] == R2 ? 2 : C;
		t->bytes += 4.0 * (double)num[j];
	}
	st = call_make(be, rb->op, rb->nops, num, (const int64_t(*)[2])shp, nd, xent ? rb->f0 / (double)R : rb->f0,
		       rb->lo, &op);
	if (st)
		return st;
	st = copy_make(be, (int64_t)(t->bytes / 8.0), &cp);
	if (!st) {
		st = time_pair(be, &op, &cp, reps, &t->t_op, &t->t_cp);
		call_free(&cp);
	}
	call_free(&op);
	return st;
}

/* one line of the table, or one object of the JSON array (jw) */
static void print_row(json_writer *jw, const row_bench *rb, int64_t R, int64_t C, const char *shape, int dflt,
		      const timed *t, double big_gbs)
{
	double gbs = t->bytes / t->t_op * 1e-9, cgbs = t->bytes / t->t_cp * 1e-9;
	char rows[24];

	if (jw) {
		json_begin_object(jw);
		json_key_str(jw, "op", rb->name);
		json_key_str(jw, "dir", rb->dir);
		json_key_int(jw, "rows", R);
		json_key_int(jw, "cols", C);
		json_key_str(jw, "shape", shape);
		json_key_bool(jw, "default", dflt);
		json_key_num(jw, "bytes", t->bytes);
		json_key_num(jw, "s", t->t_op);
		json_key_num(jw, "gbs", gbs);
		json_key_num(jw, "copy_s", t->t_cp);
		json_key_num(jw, "copy_gbs", cgbs);
		json_key_num(jw, "frac_copy", cgbs > 0 ? gbs / cgbs : NAN);
		json_key_num(jw, "frac_copy_64mib", big_gbs > 0 ? gbs / big_gbs : NAN);
		json_end_object(jw);
		return;
	}
	snprintf(rows, sizeof(rows), "%lldx%lld", (long long)R, (long long)C);
	printf("%-13s %-4s %-11s %-3s%-2s %9.1f %8.2f %9.1f %8.2f %6.0f%% %6.0f%%\n", rb->name, rb->dir, rows, shape,
	       dflt ? " *" : "", t->t_op * 1e6, gbs, t->t_cp * 1e6, cgbs, 100.0 * gbs / cgbs,
	       big_gbs > 0 ? 100.0 * gbs / big_gbs : 0.0);
	fflush(stdout);
}

int bench_rows(clg_backend *be, int reps, int json)
{
	const char *why = NULL;
	clg_kernel_shape def = clg_backend_kernel_shape(be, CLG_KFAM_ROW, &why), shapes[2];
	char def_why[96];
	int nshape = 2, rc = 0;
	const int64_t big_n = (int64_t)16 << 20; /* floats of the big copy: 64 MiB each way */
	double big_gbs, t_big = 0, t_launch = 0;
	json_writer jw;

	snprintf(def_why, sizeof(def_why), "%s", why);
	shapes[0] = def;
	shapes[1] = def == CLG_SHAPE_CPU ? CLG_SHAPE_GPU : CLG_SHAPE_CPU;
	if (!strcmp(def_why, "CLGRAD_KERNEL_SHAPE"))
		nshape = 1; /* forced: only that shape */
	/* the device's copy bandwidth without the launch cost (64 MiB each way), and a launch alone (a
	 * copy of 16 floats) */
	if (copy_median(be, big_n, reps, &t_big) || copy_median(be, 16, reps, &t_launch)) {
		fprintf(stderr, "clgrad bench ops --rows: copy on '%s': %s\n", be->info.name, clg_last_error());
		return 1;
	}
	big_gbs = 8.0 * (double)big_n / t_big * 1e-9;
	if (json) {
		json_init(&jw, stdout, 1);
		json_begin_object(&jw);
		json_key_str(&jw, "schema", "clgrad-bench-ops-rows/1");
		json_key_str(&jw, "device", be->info.name);
		json_key_str(&jw, "default_shape", clg_kernel_shape_name(def));
		json_key_str(&jw, "default_shape_why", def_why);
		json_key_int(&jw, "reps", reps);
		json_key_num(&jw, "copy_64mib_gbs", big_gbs);
		json_key_num(&jw, "launch_s", t_launch);
		json_key(&jw, "rows");
		json_begin_array(&jw);
	} else {
		printf("device: %s; row kernels by default: %s (%s)\n", be->info.name, clg_kernel_shape_name(def),
		       def_why);
		printf("copy of 64 MiB (clg_run, median of %d): %.2f GB/s; copy of 64 bytes (a launch): %.1f us\n", reps,
		       big_gbs, t_launch * 1e6);
		printf("bytes: operands read + written once; copy: the same bytes by CLG_OP_COPY, alternated with the op\n");
		printf("%-13s %-4s %-11s %-5s %9s %8s %9s %8s %7s %7s\n", "op", "dir", "rows", "shape", "us", "GB/s",
		       "copy us", "copy GB/s", "%copy", "%64MiB");
	}
	for (int si = 0; si < (int)(sizeof(sizes) / sizeof(sizes[0])); si++) {
		int64_t R = sizes[si][0], C = sizes[si][1];
		for (int h = 0; h < nshape; h++) {
			clg_backend_set_kernel_shape(be, CLG_KFAM_ROW, shapes[h], "bench ops --rows");
			for (int b = 0; b < (int)(sizeof(rbs) / sizeof(rbs[0])); b++) {
				const row_bench *rb = &rbs[b];
				int ew = rb->op == CLG_OP_EXP;
				timed t = {0};
				if (ew && h > 0)
					continue; /* the same kernel in either shape */
				if (time_row_op(be, rb, R, C, reps, &t)) {
					fprintf(stderr, "clgrad bench ops --rows: %s %s (%lld, %lld) on '%s': %s\n", rb->name,
						rb->dir, (long long)R, (long long)C, be->info.name, clg_last_error());
					rc = 1;
					continue;
				}
				print_row(json ? &jw : NULL, rb, R, C, ew ? "-" : clg_kernel_shape_name(shapes[h]),
					  h == 0 && !ew, &t, big_gbs);
			}
		}
	}
	clg_backend_set_kernel_shape(be, CLG_KFAM_ROW, def, def_why);
	if (json) {
		json_end_array(&jw);
		json_end_object(&jw);
		printf("\n");
	} else {
		printf("shape * = the device's default; %%copy = GB/s over the same-bytes copy's\n"
		       "cpu: a work-item per row; at 4096x64, softmax, log_softmax, layer_norm (both ways) and\n"
		       "softmax_xent fwd take sixteen rows a work-item (rows of 16..64), at 1024x512 log_softmax\n"
		       "fwd four (CLGRAD_ROWS16=0: neither)\n");
	}
	return rc;
}
