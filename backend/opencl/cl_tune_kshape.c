/* `clgrad tune`'s kernel shapes: per family that has both shapes (backend/kernel_shape.c), one or
 * two representative ops at training sizes are run under the CPU and under the GPU shape (set with
 * clg_backend_set_kernel_shape), each result compared with the reference backend's, and the
 * median time of a few calls after a warm-up taken, the shapes alternating call by call. The shape
 * faster over the family's cases together that computes right is kept (a `kshape` line of the tune
 * file, with the summed times, applied at device open). Two sizes where one alone is launch-latency
 * bound on a GPU: on an H100 the (128, 512) column sum took 12 us in the CPU shape and 16 in the
 * GPU shape, both within a few us of one launch, and the row ops at (4096, 64) tied, while at
 * (1024, 512) the GPU shape was 1.5-2.9x faster. Each family is measured under the shapes already
 * picked for the families before it (the row family's shape decides where a column sum runs under
 * the cpu shape of "reduce"). */
#include "cl_tune_internal.h"

#include <clg_measure.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KS_MAXOPS 5
#define KS_REPS 7
#define KS_MARGIN 0.9

typedef struct {
	clg_kernel_family fam;
	const char *what;
	clg_op op;
	int nops;                      /* dst first */
	int nd[KS_MAXOPS];
	int64_t shape[KS_MAXOPS][4];
	int64_t stride[KS_MAXOPS][4];  /* [k][0] != 0: the operand's strides, else contiguous */
	unsigned check;                /* bit k: operand k (0: dst) is compared with the reference */
	double f[2];
	int64_t i[8];
} kcase;

/* the sizes `clgrad bench ops` and the transformer use; a family's cases next to each other */
static const kcase cases[] = {
	{CLG_KFAM_ROW, "softmax (4096, 64)", CLG_OP_SOFTMAX, 2, {2, 2}, {{4096, 64}, {4096, 64}}, {{0}}, 1, {0}, {0}},
	{CLG_KFAM_ROW, "softmax (1024, 512)", CLG_OP_SOFTMAX, 2, {2, 2}, {{1024, 512}, {1024, 512}}, {{0}}, 1, {0}, {0}},
	{CLG_KFAM_REDUCE, "sum of (128, 512) over rows", CLG_OP_SUM, 2, {1, 2}, {{512}, {512, 128}}, {{0}, {1, 512}},
	 1, {0}, {0}},
	{CLG_KFAM_REDUCE, "sum of (8192, 256) over rows", CLG_OP_SUM, 2, {1, 2}, {{256}, {256, 8192}}, {{0}, {1, 256}},
	 1, {0}, {0}},
	{CLG_KFAM_FUSED, "bias+relu backward (128, 512)", CLG_OP_BIAS_ACT_BACKWARD, 4, {2, 2, 2, 1},
	 {{128, 512}, {128, 512}, {128, 512}, {512}}, {{0}}, 1 | 1 << 3, {0}, {1}},
	{CLG_KFAM_CONV, "im2col (128, 32, 14, 14) 3x3", CLG_OP_IM2COL, 2, {3, 4}, {{128, 288, 196}, {128, 32, 14, 14}},
	 {{0}}, 1, {0}, {3, 3, 1, 1, 1, 1, 1, 1}},
	{CLG_KFAM_ATTENTION, "attention fwd (16, 4, 64, 16) causal", CLG_OP_ATTENTION_FWD, 5, {4, 4, 4, 4, 3},
	 {{16, 4, 64, 16}, {16, 4, 64, 16}, {16, 4, 64, 16}, {16, 4, 64, 16}, {16, 4, 64}}, {{0}}, 1 | 1 << 4,
	 {0.25}, {1}},
};

static int64_t numel(const kcase *c, int k)
{
	int64_t n = 1;
	for (int d = 0; d < c->nd[k]; d++)
		n *= c->shape[k][d];
	return n;
}

/* One case's operands on one backend, with the same inputs everywhere. */
typedef struct {
	clg_buffer *buf[KS_MAXOPS];
	clg_op_call call;
} kops;

static void kops_free(kops *o)
{
	for (int k = 0; k < KS_MAXOPS; k++)
		clg_buffer_free(o->buf[k]);
	memset(o, 0, sizeof(*o));
}

/* Allocates (when not yet) and uploads the inputs: uniform in [-1, 1), seeded per operand. */
static clg_status kops_fill(clg_backend *be, const kcase *c, kops *o)
{
	clg_status st = CLG_OK;
	float *host = NULL;

	o->call.op = c->op;
	o->call.f[0] = c->f[0], o->call.f[1] = c->f[1];
	memcpy(o->call.i, c->i, sizeof(c->i));
	for (int k = 0; k < c->nops && !st; k++) {
		int64_t n = numel(c, k);
		uint32_t s = 12345u + 977u * (uint32_t)k;
		clg_view *v = k ? &o->call.src[k - 1] : &o->call.dst;
		float *h = realloc(host, (size_t)n * sizeof(float));
		if (!h) {
			st = clg_fail(CLG_ERR_OOM, "tune: out of host memory");
			break;
		}
		host = h;
		for (int64_t i = 0; i < n; i++) {
			s = s * 1664525u + 1013904223u;
			host[i] = -1.0f + 2.0f * (float)((s >> 8) * (1.0 / 16777216.0));
		}
		if (!o->buf[k] && (st = clg_buffer_alloc(be, (size_t)n * sizeof(float), &o->buf[k])))
			break;
		if ((st = clg_buffer_upload(o->buf[k], 0, host, (size_t)n * sizeof(float))))
			break;
		clg_view_contiguous(v, o->buf[k], CLG_F32, c->nd[k], c->shape[k]);
		for (int d = 0; c->stride[k][0] && d < c->nd[k]; d++)
			v->stride[d] = c->stride[k][d];
	}
	if (!st)
		st = clg_synchronize(be);
	free(host);
	return st;
}

/* The checked operands of one run, concatenated, into *out (malloc'd). */
static clg_status kops_read(const kcase *c, kops *o, float **out, size_t *n)
{
	size_t tot = 0, p = 0;
	clg_status st = CLG_OK;

	for (int k = 0; k < c->nops; k++)
		if (c->check >> k & 1)
			tot += (size_t)numel(c, k);
	*out = malloc(tot * sizeof(float));
	if (!*out)
		return clg_fail(CLG_ERR_OOM, "tune: out of host memory");
	for (int k = 0; k < c->nops && !st; k++)
		if (c->check >> k & 1) {
			st = clg_buffer_download(o->buf[k], 0, *out + p, (size_t)numel(c, k) * sizeof(float));
			p += (size_t)numel(c, k);
		}
	*n = tot;
	return st;
}

/* Whether got matches want (float32 sums in another order); -inf equal to -inf. */
static int close_enough(const float *got, const float *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (got[i] == want[i])
			continue;
		if (!(fabsf(got[i] - want[i]) <= 1e-4f + 1e-3f * fabsf(want[i])))
			return 0;
	}
	return 1;
}

/* Runs the case once on fresh inputs under the shape in force and compares with want: NULL, or
 * why the shape is not usable. A second call warms up. */
static const char *check_shape(clg_backend *be, const kcase *c, kops *o, const float *want, size_t nwant)
{
	const char *why = NULL;
	float *got = NULL;
	size_t n = 0;

	if (kops_fill(be, c, o) || clg_run(be, &o->call) || clg_synchronize(be) || kops_read(c, o, &got, &n))
		why = "failed";
	else if (n != nwant || !close_enough(got, want, n))
		why = "wrong result";
	else if (clg_run(be, &o->call) || clg_synchronize(be))
		why = "failed";
	if (why)
		clg_clear_error();
	free(got);
	return why;
}

/* Median microseconds per call of each shape, the two interleaved call by call (so a slow spell
 * of a shared machine, or a runtime's threads waking, favours neither); 0 on a failure. */
static void time_shapes(clg_backend *be, clg_kernel_family fam, kops *o, double us[2])
{
	double t[2][KS_REPS];

	us[0] = us[1] = 0;
	for (int r = 0; r < KS_REPS; r++)
		for (int s = 0; s < 2; s++) {
			double t0;
			clg_backend_set_kernel_shape(be, fam, (clg_kernel_shape)s, "clgrad tune (measuring)");
			t0 = clg_now();
			if (clg_run(be, &o->call) || clg_synchronize(be)) {
				clg_clear_error();
				return;
			}
			t[s][r] = clg_now() - t0;
		}
	for (int s = 0; s < 2; s++) {
		us[s] = clg_measure_median(t[s], KS_REPS) * 1e6;
		if (!(us[s] > 0))
			us[s] = 0.1; /* below the clock's resolution */
	}
}

void clg_cl_tune_kernel_shapes(tuner *t, double until, tune_data *d)
{
	clg_backend *be = t->be, *ref = NULL;
	clg_kernel_shape saved[CLG_KFAM_COUNT];
	char saved_why[CLG_KFAM_COUNT][64];
	double sum[2] = {0, 0}; /* the family's times so far; < 0: a case of it was not timed */

	for (int f = 0; f < CLG_KFAM_COUNT; f++) {
		const char *w;
		saved[f] = clg_backend_kernel_shape(be, (clg_kernel_family)f, &w);
		snprintf(saved_why[f], sizeof(saved_why[f]), "%s", w);
	}
	if (clg_backend_open(0, &ref)) {
		clg_cl_tune_say(t, "kernel shapes: no reference backend (%s): not measured", clg_last_error());
		clg_clear_error();
		return;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const kcase *c = &cases[i];
		const char *fam = clg_kernel_family_name(c->fam), *forced = NULL;
		kops ro = {0}, o = {0};
		float *want = NULL;
		size_t nwant = 0;
		double us[2];
		const char *why[2];

		int first = i == 0 || cases[i - 1].fam != c->fam, by_env;

		clg_backend_kernel_shape(be, c->fam, &forced);
		by_env = !strcmp(forced, "CLGRAD_KERNEL_SHAPE");
		if (by_env || clg_cl_tune_elapsed(t) > until) {
			if (first || sum[0] >= 0) /* once a family */
				clg_cl_tune_say(t, "kernel shape %s: %s", fam,
						by_env ? "forced by CLGRAD_KERNEL_SHAPE, not measured" : "not measured (budget)");
			sum[0] = sum[1] = -1;
			goto next;
		}
		if (kops_fill(ref, c, &ro) || clg_run(ref, &ro.call) || kops_read(c, &ro, &want, &nwant)) {
			clg_cl_tune_say(t, "kernel shape %s: reference failed (%s)", fam, clg_last_error());
			clg_clear_error();
			sum[0] = sum[1] = -1;
			goto next;
		}
		for (int s = 0; s < 2; s++) {
			clg_backend_set_kernel_shape(be, c->fam, (clg_kernel_shape)s, "clgrad tune (measuring)");
			why[s] = check_shape(be, c, &o, want, nwant);
		}
		us[0] = us[1] = 0;
		if (!why[0] && !why[1])
			time_shapes(be, c->fam, &o, us);
		clg_cl_tune_say(t, "kernel shape %s, %s: cpu %s%.0f us, gpu %s%.0f us", fam, c->what, why[0] ? why[0] : "",
				us[0], why[1] ? why[1] : "", us[1]);
		for (int s = 0; s < 2; s++)
			sum[s] = us[0] > 0 && us[1] > 0 && sum[s] >= 0 ? sum[s] + us[s] : -1;
	next:
		free(want);
		kops_free(&ro);
		kops_free(&o);
		if (i + 1 < sizeof(cases) / sizeof(cases[0]) && cases[i + 1].fam == c->fam)
			continue; /* the family's next case before its verdict */
		if (sum[0] > 0 && sum[1] > 0) {
			d->ks[c->fam].has = 1;
			/* the device type's shape unless the other is clearly faster (noise does not flip it) */
			int gpu = be->info.type == CLG_DEV_CPU ? sum[1] < KS_MARGIN * sum[0] : !(sum[0] < KS_MARGIN * sum[1]);
			d->ks[c->fam].shape = gpu ? CLG_SHAPE_GPU : CLG_SHAPE_CPU;
			d->ks[c->fam].us_cpu = sum[0];
			d->ks[c->fam].us_gpu = sum[1];
		}
		sum[0] = sum[1] = 0;
		/* measuring leaves the family at the gpu shape: put it where the tune file will put it,
		 * so the families after it are measured under it (a column sum under the cpu shape of
		 * "reduce" runs in the row kernels, in the shape of "row": timed under the gpu row shape
		 * left over from measuring "row", it ran 6-7x slower on Intel's CPU runtime than it does) */
		clg_backend_set_kernel_shape(be, c->fam, d->ks[c->fam].has ? d->ks[c->fam].shape : saved[c->fam],
					     d->ks[c->fam].has ? "clgrad tune (measured)" : saved_why[c->fam]);
	}
	/* the GEMM search runs under the shapes the device opened with */
	for (int f = 0; f < CLG_KFAM_COUNT; f++)
		clg_backend_set_kernel_shape(be, (clg_kernel_family)f, saved[f], saved_why[f]);
	clg_backend_close(ref);
}
