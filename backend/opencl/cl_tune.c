/* GEMM tuning (backend/clg_tune.h): the search (shapes, timing and checking one configuration,
 * the own kernels' tiles) and the driver, clg_tune_run. The tune file and applying it are in
 * cl_tune_file.c, the search over CLBlast's parameters in cl_tune_clblast.c. */
#include "cl_tune_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* a choice other than the device's default needs to be this much faster */
#define TUNE_MARGIN 0.95

/* ---- the search ----------------------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double clg_cl_tune_elapsed(const tuner *t)
{
	return now_s() - t->t0;
}

void clg_cl_tune_say(tuner *t, const char *fmt, ...)
{
	char line[512];
	int p;
	va_list ap;

	if (!t->o->progress)
		return;
	p = snprintf(line, sizeof(line), "[%6.1fs] ", clg_cl_tune_elapsed(t));
	va_start(ap, fmt);
	vsnprintf(line + p, sizeof(line) - (size_t)p, fmt, ap);
	va_end(ap);
	t->o->progress(t->o->user, line);
}

unsigned clg_cl_tune_rnd(tuner *t, unsigned n)
{
	t->rng = t->rng * 1664525u + 1013904223u;
	return (t->rng >> 8) % n;
}

double clg_cl_tune_gflops_of(const clg_tune_shape *s, double secs)
{
	return secs > 0 ? 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)s->batch / secs * 1e-9 : 0.0;
}

static int add_shape(tuner *t, const char *label, int64_t m, int64_t n, int64_t k, int64_t batch, int ta, int tb,
		     int shared_a, int cols_b)
{
	clg_tune_shape *r;
	if (t->n == CLG_TUNE_MAX_SHAPES)
		return -1;
	r = &t->r->shape[t->n];
	memset(r, 0, sizeof(*r));
	snprintf(r->label, sizeof(r->label), "%s", label);
	r->m = m, r->n = n, r->k = k, r->batch = batch, r->ta = ta, r->tb = tb;
	r->shared_a = shared_a && batch > 1;
	r->cols_b = cols_b && batch > 1 && !tb;
	t->s[t->n].r = r;
	t->n++;
	return 0;
}

/* The products one training step of the MLP (784-512-512-10) and the CNN (conv 32, conv 64, fc
 * 128, fc 10) makes at batch 128, in the layouts training uses (linear layers keep W as
 * (out, in): forward x @ W^T, dx = g @ W, dW = g^T @ x; convolutions multiply shared weights by
 * im2col's columns), and square shapes. */
static void shape_set(tuner *t, clg_tune_shapes which)
{
	if (which == CLG_TUNE_SHAPES_SMALL) {
		add_shape(t, "small", 64, 64, 64, 1, 0, 0, 0, 0);
		add_shape(t, "small Bt", 100, 70, 50, 1, 0, 1, 0, 0);
		add_shape(t, "small At", 64, 48, 80, 1, 1, 0, 0, 0);
		add_shape(t, "small batch A0 Bc", 16, 40, 9, 4, 0, 0, 1, 1);
		return;
	}
	if (which & CLG_TUNE_SHAPES_TRAINING) {
		add_shape(t, "mlp fc1 forward", 128, 512, 784, 1, 0, 1, 0, 0);
		add_shape(t, "mlp fc1 dx", 128, 784, 512, 1, 0, 0, 0, 0);
		add_shape(t, "mlp fc1 dW", 512, 784, 128, 1, 1, 0, 0, 0);
		add_shape(t, "mlp fc2 forward", 128, 512, 512, 1, 0, 1, 0, 0);
		add_shape(t, "mlp fc2 dx", 128, 512, 512, 1, 0, 0, 0, 0);
		add_shape(t, "mlp fc2 dW", 512, 512, 128, 1, 1, 0, 0, 0);
		add_shape(t, "mlp fc3 forward", 128, 10, 512, 1, 0, 1, 0, 0);
		add_shape(t, "mlp fc3 dx", 128, 512, 10, 1, 0, 0, 0, 0);
		add_shape(t, "mlp fc3 dW", 10, 512, 128, 1, 1, 0, 0, 0);
		add_shape(t, "cnn conv1 forward", 32, 784, 9, 128, 0, 0, 1, 1);
		add_shape(t, "cnn conv1 dW", 32, 9, 100352, 1, 0, 1, 0, 0);
		add_shape(t, "cnn conv2 forward", 64, 196, 288, 128, 0, 0, 1, 1);
		add_shape(t, "cnn conv2 dW", 64, 288, 25088, 1, 0, 1, 0, 0);
		add_shape(t, "cnn conv2 dcols", 288, 196, 64, 128, 1, 0, 1, 1);
		add_shape(t, "cnn fc1 forward", 128, 128, 3136, 1, 0, 1, 0, 0);
		add_shape(t, "cnn fc1 dx", 128, 3136, 128, 1, 0, 0, 0, 0);
		add_shape(t, "cnn fc1 dW", 128, 3136, 128, 1, 1, 0, 0, 0);
	}
	if (which & CLG_TUNE_SHAPES_SQUARE) {
		add_shape(t, "square", 256, 256, 256, 1, 0, 0, 0, 0);
		add_shape(t, "square", 512, 512, 512, 1, 0, 0, 0, 0);
		add_shape(t, "square", 1024, 1024, 1024, 1, 0, 0, 0, 0);
	}
}

static void fill_random(float *x, size_t n, uint32_t seed)
{
	uint32_t st = seed * 2654435761u + 12345u;
	for (size_t i = 0; i < n; i++) {
		st = st * 1664525u + 1013904223u;
		x[i] = (float)((st >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
	}
}

void clg_gemm_operand_view(clg_view *v, clg_buffer *buf, int64_t batch, int64_t rows, int64_t cols, int trans,
			   int64_t batch_stride, int64_t ld)
{
	int o;
	memset(v, 0, sizeof(*v));
	v->buf = buf;
	v->dtype = CLG_F32;
	v->ndim = batch > 1 ? 3 : 2;
	o = v->ndim - 2;
	v->shape[o] = rows, v->shape[o + 1] = cols;
	v->stride[o] = trans ? 1 : ld > 0 ? ld : cols, v->stride[o + 1] = trans ? rows : 1;
	if (o) {
		v->shape[0] = batch;
		v->stride[0] = batch_stride;
	}
}

/* A(b, i, kk) and B(b, kk, j) of a shape, from the host copies. */
static float elem_a(const tshape *x, int64_t b, int64_t i, int64_t kk)
{
	const clg_tune_shape *s = x->r;
	int64_t base = s->shared_a ? 0 : b * s->m * s->k;
	return x->ha[base + (s->ta ? kk * s->m + i : i * s->k + kk)];
}

static float elem_b(const tshape *x, int64_t b, int64_t kk, int64_t j)
{
	const clg_tune_shape *s = x->r;
	if (s->tb)
		return x->hb[b * s->n * s->k + j * s->k + kk];
	if (s->cols_b)
		return x->hb[kk * s->batch * s->n + b * s->n + j];
	return x->hb[b * s->k * s->n + kk * s->n + j];
}

static clg_status shape_setup(tuner *t, tshape *x)
{
	const clg_tune_shape *s = x->r;
	clg_backend *be = t->be;
	clg_status st;

	x->na = (size_t)(s->m * s->k * (s->shared_a ? 1 : s->batch));
	x->nb = (size_t)(s->k * s->n * s->batch);
	x->nc = (size_t)(s->m * s->n * s->batch);
	x->ha = malloc(x->na * sizeof(float));
	x->hb = malloc(x->nb * sizeof(float));
	x->ref = malloc(x->nc * sizeof(float));
	if (!x->ha || !x->hb || !x->ref)
		return clg_fail(CLG_ERR_OOM, "tune: out of host memory");
	fill_random(x->ha, x->na, 1);
	fill_random(x->hb, x->nb, 2);
	if ((st = clg_buffer_alloc(be, x->na * sizeof(float), &x->a)) ||
	    (st = clg_buffer_alloc(be, x->nb * sizeof(float), &x->b)) ||
	    (st = clg_buffer_alloc(be, x->nc * sizeof(float), &x->c)) ||
	    (st = clg_buffer_upload(x->a, 0, x->ha, x->na * sizeof(float))) ||
	    (st = clg_buffer_upload(x->b, 0, x->hb, x->nb * sizeof(float))) || (st = clg_synchronize(be)))
		return st;
	memset(&x->call, 0, sizeof(x->call));
	x->call.op = CLG_OP_GEMM;
	clg_gemm_operand_view(&x->call.src[0], x->a, s->batch, s->m, s->k, s->ta, s->shared_a ? 0 : s->m * s->k, 0);
	clg_gemm_operand_view(&x->call.src[1], x->b, s->batch, s->k, s->n, s->tb, s->cols_b ? s->n : s->k * s->n,
		     s->cols_b ? s->n * s->batch : 0);
	clg_gemm_operand_view(&x->call.dst, x->c, s->batch, s->m, s->n, 0, s->m * s->n, 0);
	x->call.f[0] = 1.0;
	x->call.f[1] = 0.0;
	x->dot = s->tb && !s->ta && !clg_cl_gemm_op_for_bt(s->m, s->n, s->k);
	return CLG_OK;
}

static void shape_release(tshape *x)
{
	clg_buffer_free(x->a);
	clg_buffer_free(x->b);
	clg_buffer_free(x->c);
	free(x->ha);
	free(x->hb);
	free(x->ref);
	x->a = x->b = x->c = NULL;
	x->ha = x->hb = x->ref = NULL;
}

/* Checks c at a sample of entries (corners and pseudo-random ones) against a float64 host
 * product: |c - exact| <= 1e-4 * sum_k |a b| + 1e-30. */
static int host_check(tuner *t, const tshape *x, const float *c)
{
	const clg_tune_shape *s = x->r;
	for (int q = 0; q < 96; q++) {
		int64_t b, i, j;
		double exact = 0, mag = 0;
		if (q < 4) {
			b = q & 1 ? s->batch - 1 : 0;
			i = q & 1 ? s->m - 1 : 0;
			j = q & 2 ? s->n - 1 : 0;
		} else {
			b = clg_cl_tune_rnd(t, (unsigned)s->batch);
			i = clg_cl_tune_rnd(t, (unsigned)s->m);
			j = clg_cl_tune_rnd(t, (unsigned)s->n);
		}
		for (int64_t kk = 0; kk < s->k; kk++) {
			double p = (double)elem_a(x, b, i, kk) * (double)elem_b(x, b, kk, j);
			exact += p;
			mag += fabs(p);
		}
		if (!(fabs((double)c[(b * s->m + i) * s->n + j] - exact) <= 1e-4 * mag + 1e-30))
			return 0;
	}
	return 1;
}

/* max |c - ref| / max |ref| <= 1e-4 (NaN fails). */
static int matches_ref(const tshape *x, const float *c)
{
	double maxref = 0, maxdiff = 0;
	for (size_t i = 0; i < x->nc; i++) {
		double d = fabs((double)c[i] - (double)x->ref[i]), a = fabs((double)x->ref[i]);
		if (!(d <= maxdiff))
			maxdiff = d == d ? d : INFINITY;
		if (a > maxref)
			maxref = a;
	}
	return maxdiff <= 1e-4 * maxref;
}

static clg_status poison_c(tuner *t, tshape *x)
{
	clg_op_call f = {.op = CLG_OP_FILL, .dst = x->call.dst, .f = {NAN}};
	return clg_run(t->be, &f);
}

/* Device seconds from marker a to marker b (both complete), or 0 where the queue cannot say. */
static double marker_secs(cl_event a, cl_event b)
{
	cl_ulong ta = 0, tb = 0;

	if (!a || !b || clGetEventProfilingInfo(a, CL_PROFILING_COMMAND_END, sizeof(ta), &ta, NULL) != CL_SUCCESS ||
	    clGetEventProfilingInfo(b, CL_PROFILING_COMMAND_END, sizeof(tb), &tb, NULL) != CL_SUCCESS || tb <= ta)
		return 0;
	return 1e-9 * (double)(tb - ta);
}

/* One timed call: on a profiling queue (t->saved_queue set) the device's time between a marker
 * before and one after the call (all of CLBlast's kernels and the gaps between them, but not the
 * host's launch and wait), else, or where the driver gives no times, the wall time to a clFinish. */
static clg_status timed_call(tuner *t, tshape *x, clg_cl_gemm_impl impl, const clg_cl_gemm_tile *tile, double *secs)
{
	cl_command_queue q = clg_cl_of(t->be)->queue;
	cl_event e0 = NULL, e1 = NULL;
	double w0 = now_s(), dev;
	clg_status st;

	if (t->saved_queue && clEnqueueMarkerWithWaitList(q, 0, NULL, &e0) != CL_SUCCESS)
		e0 = NULL;
	st = clg_cl_gemm_forced(t->be, &x->call, impl, tile);
	if (!st && e0 && clEnqueueMarkerWithWaitList(q, 0, NULL, &e1) != CL_SUCCESS)
		e1 = NULL;
	if (!st)
		st = clg_synchronize(t->be);
	*secs = now_s() - w0;
	dev = st ? 0 : marker_secs(e0, e1);
	if (dev > 0)
		*secs = dev;
	if (e0)
		clReleaseEvent(e0);
	if (e1)
		clReleaseEvent(e1);
	return st;
}

/* Times one configuration on one shape: a warm-up (which builds kernels), then repetitions for
 * about 0.3 s (3 to 15), median. When the first timed run is over abort_over seconds (> 0),
 * stops there. Checks the result against the reference (or, for the reference itself, on the
 * host). *secs = 0 when the run failed or was wrong (and says why). */
void clg_cl_tune_measure(tuner *t, tshape *x, clg_cl_gemm_impl impl, const clg_cl_gemm_tile *tile, double abort_over,
			 double *secs, const char **why)
{
	double times[15];
	int reps = 1;
	float *c = NULL;
	clg_status st;

	*secs = 0;
	*why = NULL;
	if ((st = poison_c(t, x)) || (st = clg_cl_gemm_forced(t->be, &x->call, impl, tile)) ||
	    (st = clg_synchronize(t->be)))
		goto failed;
	if ((st = timed_call(t, x, impl, tile, &times[0])))
		goto failed;
	if (!(abort_over > 0 && times[0] > abort_over)) {
		int want = times[0] > 0 ? (int)(0.3 / times[0]) : 15;
		want = want < 3 ? 3 : want > 15 ? 15 : want;
		for (; reps < want; reps++)
			if ((st = timed_call(t, x, impl, tile, &times[reps])))
				goto failed;
	}
	for (int i = 1; i < reps; i++) /* insertion sort for the median */
		for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
			double tmp = times[j];
			times[j] = times[j - 1];
			times[j - 1] = tmp;
		}
	c = malloc(x->nc * sizeof(float));
	if (!c) {
		*why = "out of host memory";
		return;
	}
	if ((st = clg_buffer_download(x->c, 0, c, x->nc * sizeof(float))))
		goto failed;
	if (x->usable ? !matches_ref(x, c) : !host_check(t, x, c)) {
		*why = "wrong result";
		goto out;
	}
	if (!x->usable) {
		memcpy(x->ref, c, x->nc * sizeof(float));
		x->usable = 1;
	}
	*secs = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
	goto out;
failed:
	*why = clg_last_error();
out:
	free(c);
}

/* Seconds one own-tile candidate takes: a build of the gemm program, then per shape a warm-up
 * and about 0.3 s of repetitions. */
static double own_time_est(const tuner *t)
{
	double s = 2.0;
	for (int i = 0; i < t->n; i++)
		if (t->s[i].usable)
			s += 0.3 + 2 * t->s[i].t_own_def;
	return s;
}

/* ---- own tiles ---- */

/* Tile candidates near the default: gemm_op (tm, tn = nv * vw) and gemm_dot (dm, dn), ordered by
 * distance from the default, within the vector register file (16 registers, 32 with 16-wide
 * vectors: accumulators + one row of V + a broadcast). */
static int own_candidates(const tuner *t, clg_cl_gemm_tile *out, int max)
{
	const clg_cl_gemm_tile *d = &t->def_tile;
	int regs = d->vw >= 16 ? 32 : 16, n = 0, nv0 = d->tn / d->vw;

	for (int dist = 1; dist <= 8 && n < max; dist++) {
		for (int nv = 1; nv <= 4; nv++)
			for (int tm = 1; tm <= 12; tm++) {
				int acc = tm * nv;
				if (abs(tm - d->tm) + abs(nv - nv0) != dist || acc < 4 || acc + nv + 1 > regs || n >= max)
					continue;
				out[n] = *d;
				out[n].tm = tm;
				out[n].tn = nv * d->vw;
				n++;
			}
		for (int dm = 1; dm <= 8; dm++)
			for (int dn = 1; dn <= 8; dn++) {
				int acc = dm * dn;
				if (abs(dm - d->dm) + abs(dn - d->dn) != dist || acc < 4 || acc + dm + dn > regs || n >= max)
					continue;
				out[n] = *d;
				out[n].dm = dm;
				out[n].dn = dn;
				n++;
			}
	}
	return n;
}

static void search_own(tuner *t, double until)
{
	clg_cl_gemm_tile cand[64];
	int nc = own_candidates(t, cand, 64);
	double times[CLG_TUNE_MAX_SHAPES];
	char ts[48];

	for (int ci = 0; ci < nc; ci++) {
		int dot_tile = cand[ci].dm != t->def_tile.dm || cand[ci].dn != t->def_tile.dn;
		double gsum = 0, t_start = clg_cl_tune_elapsed(t);
		int ng = 0, bad = 0;
		const char *why = NULL;

		for (int i = 0; i < t->n; i++)
			ng += t->s[i].usable && t->s[i].dot == dot_tile;
		if (!ng)
			continue; /* no shape runs the kernel this candidate changes */
		ng = 0;
		if (clg_cl_tune_elapsed(t) + own_time_est(t) > until)
			break;
		for (int i = 0; i < t->n && !bad; i++) {
			tshape *x = &t->s[i];
			times[i] = 0;
			if (!x->usable || x->dot != dot_tile)
				continue;
			clg_cl_tune_measure(t, x, CLG_CL_GEMM_OWN, &cand[ci], 3 * x->t_own, &times[i], &why);
			bad = !times[i];
			if (!bad) {
				gsum += log(x->t_own_def / times[i]);
				ng++;
			}
		}
		t->r->candidates++;
		clg_cl_tune_tile_str(&cand[ci], ts, sizeof(ts));
		if (bad) {
			t->r->rejected++;
			clg_cl_tune_say(t, "own %s: rejected (%s)", ts, why ? why : "failed");
			continue;
		}
		for (int i = 0; i < t->n; i++) {
			tshape *x = &t->s[i];
			if (times[i] > 0 && times[i] < x->t_own) {
				x->t_own = times[i];
				x->own_tile = cand[ci];
			}
		}
		clg_cl_tune_say(t, "own %s (%s): %.2fx the default tile over %d shapes (%.1f s)", ts, dot_tile ? "gemm_dot" : "gemm_op",
		    ng ? exp(gsum / ng) : 0.0, ng, clg_cl_tune_elapsed(t) - t_start);
	}
}

static const char *shape_name(const clg_tune_shape *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s %lldx%lldx%lld%s%s", r->label, (long long)r->m, (long long)r->n, (long long)r->k,
		 r->ta ? " At" : "", r->tb ? " Bt" : "");
	return buf;
}

/* The search's timings are noisy (shared machines): a tile that won a shape is measured again,
 * alternating with the default tile, and kept only if it still wins clearly. */
static void confirm_own(tuner *t)
{
	char ts[48], sn[96];

	for (int i = 0; i < t->n; i++) {
		tshape *x = &t->s[i];
		double td = INFINITY, tc = INFINITY, secs;
		const char *why;
		if (!x->usable || !memcmp(&x->own_tile, &t->def_tile, sizeof(t->def_tile)))
			continue;
		for (int round = 0; round < 3; round++) {
			clg_cl_tune_measure(t, x, CLG_CL_GEMM_OWN, &t->def_tile, 0, &secs, &why);
			if (secs > 0 && secs < td)
				td = secs;
			clg_cl_tune_measure(t, x, CLG_CL_GEMM_OWN, &x->own_tile, 0, &secs, &why);
			if (secs > 0 && secs < tc)
				tc = secs;
		}
		clg_cl_tune_tile_str(&x->own_tile, ts, sizeof(ts));
		if (isfinite(td) && tc < TUNE_MARGIN * td) {
			x->t_own = tc;
			x->t_own_def = td;
			clg_cl_tune_say(t, "%s: own %s confirmed, %.2fx the default tile", shape_name(x->r, sn, sizeof(sn)), ts,
			    td / tc);
		} else {
			clg_cl_tune_say(t, "%s: own %s not confirmed (%.2fx the default tile): default kept",
			    shape_name(x->r, sn, sizeof(sn)), ts,
			    isfinite(tc) && isfinite(td) ? td / tc : 0.0);
			x->own_tile = t->def_tile;
			if (isfinite(td))
				x->t_own = x->t_own_def = td;
			else
				x->t_own = x->t_own_def;
		}
	}
}

/* ---- driver ---------------------------------------------------------------------------------------- */

/* Per shape: the own kernels' best tile when clearly faster than their default tile, then the
 * faster implementation, leaving the device's default implementation only for a clear gain. */
static void choose(tuner *t, tune_data *d)
{
	const int cpu = t->be->info.type == CLG_DEV_CPU;

	d->ne = 0;
	for (int i = 0; i < t->n; i++) {
		tshape *x = &t->s[i];
		clg_tune_shape *r = x->r;
		tune_entry *e;
		double t_cb = x->t_cb > 0 ? x->t_cb : x->t_cb_default, t_own = x->t_own;
		int own;

		if (!x->usable)
			continue;
		if (!(x->t_own < TUNE_MARGIN * x->t_own_def)) {
			x->own_tile = t->def_tile;
			t_own = x->t_own_def;
		}
		if (cpu)
			own = !(t_cb > 0 && t_cb < TUNE_MARGIN * t_own);
		else
			own = !(t_cb > 0) || t_own < TUNE_MARGIN * t_cb;
		r->own_gflops = clg_cl_tune_gflops_of(r, t_own);
		r->clblast_default_gflops = clg_cl_tune_gflops_of(r, x->t_cb_default);
		r->clblast_gflops = clg_cl_tune_gflops_of(r, x->t_cb);
		r->tuned_gflops = clg_cl_tune_gflops_of(r, own ? t_own : t_cb);
		snprintf(r->choice, sizeof(r->choice), "%s", own ? "own" : "clblast");
		clg_cl_tune_tile_str(&x->own_tile, r->tile, sizeof(r->tile));
		/* the default configuration kept: the same thing as the default column */
		r->is_default = own == cpu && (!own || !memcmp(&x->own_tile, &t->def_tile, sizeof(t->def_tile))) &&
				(own || !x->t_cb);
		if (r->is_default)
			r->tuned_gflops = r->default_gflops;
		e = &d->e[d->ne++];
		e->ta = r->ta, e->tb = r->tb, e->m = r->m, e->n = r->n, e->k = r->k, e->batch = r->batch;
		e->impl = own ? CLG_CL_GEMM_OWN : CLG_CL_GEMM_CLBLAST;
		e->tile = x->own_tile;
		e->default_gflops = r->default_gflops;
		e->tuned_gflops = r->tuned_gflops;
		snprintf(e->label, sizeof(e->label), "%s", r->label);
	}
}

/* CLBlast's search (cl_tune_clblast.c): Xgemm, then XgemmDirect with the best Xgemm in force,
 * until the given time, when its builds fit. */
static void clblast_search(tuner *t, cb_search *xs, cb_search *ds, int cb_fits, double end, double *compile_est)
{
	double rest;

	if (!cb_fits || clg_cl_tune_elapsed(t) + 2 * *compile_est >= end)
		return;
	rest = end - clg_cl_tune_elapsed(t);
	clg_cl_tune_search_clblast_kernel(t, xs, clg_cl_tune_elapsed(t) + 0.6 * rest, compile_est);
	if (xs->have && clg_cl_tune_clblast_set(t->be, "Xgemm", clg_cl_tune_xg_names, xs->best, NX) == CLG_OK)
		clg_cl_tune_search_clblast_kernel(t, ds, end, compile_est);
}

/* CLBlast's parameters as this process is to go on with them, whatever the search did or how it
 * ended: the tune result when it was stored and is now in use, else what was in force before
 * (the earlier tune result's, and the GemmRoutine switch as read at the start). CLBlast 1.5 can
 * neither say nor reset its built-in Xgemm / XgemmDirect parameters: where no tune result had
 * set them, the search's best verified candidate stays in force (never a rejected one). */
static void clblast_restore(tuner *t, const tune_data *now, const tune_data *prev, int have_gr0, size_t gr0,
			    const cb_search *xs, const cb_search *ds)
{
	clg_backend *be = t->be;
	const tune_data *d = t->r->stored && now->has_xg ? now : prev;
	int bad = 0;

	if (d->has_xg)
		bad |= clg_cl_tune_clblast_set(be, "Xgemm", clg_cl_tune_xg_names, d->xg, NX) != CLG_OK;
	else if (xs->touched && xs->have)
		bad |= clg_cl_tune_clblast_set(be, "Xgemm", clg_cl_tune_xg_names, xs->best, NX) != CLG_OK;
	if (d->has_xd)
		bad |= clg_cl_tune_clblast_set(be, "XgemmDirect", clg_cl_tune_xd_names, d->xd, ND) != CLG_OK;
	else if (ds->touched && ds->have)
		bad |= clg_cl_tune_clblast_set(be, "XgemmDirect", clg_cl_tune_xd_names, ds->best, ND) != CLG_OK;
	if (d->has_gr)
		bad |= clg_cl_tune_clblast_set(be, "GemmRoutine", &clg_cl_tune_gr_name, &d->gr, 1) != CLG_OK;
	else if (have_gr0)
		bad |= clg_cl_clblast_set_min_indirect(be, CLG_F32, gr0) != CLG_OK;
	if (bad)
		clg_cl_tune_say(t, "clblast: parameters could not be set back: %s", clg_last_error());
	if (!d->has_xg && ((xs->touched && !xs->have) || (ds->touched && !ds->have)))
		clg_cl_tune_say(t, "clblast: no candidate of a searched kernel passed; its last one stays in force in "
			    "this process (CLBlast cannot restore its built-in parameters)");
}

clg_status clg_tune_run(clg_backend *be, const clg_tune_options *opt, clg_tune_report *r)
{
	tuner *t = NULL;
	clg_tune_options defaults = {0};
	tune_data d, prev;
	clg_status st = CLG_OK;
	const int cpu = be && be->info.type == CLG_DEV_CPU;
	size_t gr0 = 0;
	int have_gr0;
	char err[512];
	double compile_est = 10.0; /* CLBlast: first build of its GEMM program, seconds (PoCL: ~7) */
	cb_search xs = {0}, ds = {.direct = 1};
	const char *why;
	int cb_fits, saved_wg = 0;
	double search_end, final_est = 10.0;

	memset(r, 0, sizeof(*r));
	memset(&d, 0, sizeof(d));
	if (!clg_cl_tune_is_opencl(be))
		return clg_fail(CLG_ERR_UNSUPPORTED, "tune: device '%s' is the reference backend: nothing to tune",
				be ? be->info.name : "(none)");
	if (!opt)
		opt = &defaults;
	t = calloc(1, sizeof(*t));
	if (!t)
		return clg_fail(CLG_ERR_OOM, "tune: out of host memory");
	t->be = be;
	t->o = opt;
	t->r = r;
	t->t0 = now_s();
	t->budget = opt->budget_s > 0 ? opt->budget_s : 60;
	t->rng = opt->seed * 2654435761u + 1u;
	clg_cl_tune_limits_of(be, &t->L);
	clg_cl_gemm_default_tile(be, CLG_F32, &t->def_tile);
	/* GPU-type devices: timed by profiling events, on a queue of the same context that profiles
	 * (the backend's does not), swapped in while the tuner runs */
	if (!cpu && clFinish(clg_cl_of(be)->queue) == CL_SUCCESS) {
		cl_int qerr;
		cl_command_queue pq = clCreateCommandQueue(clg_cl_of(be)->context, clg_cl_of(be)->device,
							   CL_QUEUE_PROFILING_ENABLE, &qerr);
		if (qerr == CL_SUCCESS) {
			t->saved_queue = clg_cl_of(be)->queue;
			clg_cl_of(be)->queue = pq;
		}
	}
	clg_cl_tune_say(t, "timing: %s", t->saved_queue ? "device time between profiling markers"
							  : "wall time to a clFinish per call");
	/* what CLBlast runs with before the search, to go back to (clblast_restore) */
	clg_cl_tune_current(be, &prev);
	have_gr0 = clg_cl_clblast_min_indirect(be, CLG_F32, &gr0) == CLG_OK;
	clg_clear_error();
	if (clg_tune_file_path(be, r->path, sizeof(r->path)))
		clg_clear_error();
	shape_set(t, opt->shapes ? opt->shapes : CLG_TUNE_SHAPES_ALL);
	r->nshapes = t->n;
	clg_cl_tune_say(t, "tuning GEMM on '%s' (%s), %d shapes, budget %.0f s", be->info.name, clg_device_type_name(be->info.type),
	    t->n, t->budget);

	/* 0. the kernel shape of each family (a few seconds; a small part of the budget) */
	clg_cl_tune_kernel_shapes(t, 0.4 * t->budget, &d);
	/* step 1 times gemm_op at its untuned width, a group of one (clg_cl_tune_gemm_wg then tries others) */
	saved_wg = clg_cl_of(be)->gemm_wg;
	clg_cl_of(be)->gemm_wg = 0;

	/* 1. the reference result of each shape (own kernels, default tile, checked on the host) and
	 *    the untuned time */
	for (int i = 0; i < t->n; i++) {
		tshape *x = &t->s[i];
		double secs;
		char ts[48];
		if ((st = shape_setup(t, x)))
			goto out;
		x->own_tile = t->def_tile;
		clg_cl_tune_measure(t, x, CLG_CL_GEMM_OWN, &t->def_tile, 0, &secs, &why);
		if (!secs) {
			clg_cl_tune_say(t, "%s %lldx%lldx%lld: own kernels failed (%s): shape skipped", x->r->label,
			    (long long)x->r->m, (long long)x->r->n, (long long)x->r->k, why ? why : "?");
			continue;
		}
		x->t_own = x->t_own_def = secs;
		if (cpu)
			x->t_default = secs;
		clg_cl_tune_tile_str(&t->def_tile, ts, sizeof(ts));
		clg_cl_tune_say(t, "%-18s %5lldx%5lldx%6lld%s%s%s: own %s %.1f GF/s", x->r->label, (long long)x->r->m,
		    (long long)x->r->n, (long long)x->r->k, x->r->ta ? " At" : "", x->r->tb ? " Bt" : "",
		    x->r->batch > 1 ? " batched" : "", ts, clg_cl_tune_gflops_of(x->r, secs));
	}

	/* 1b. gemm_op's work-group width: the searches below run under the one kept */
	clg_cl_tune_gemm_wg(t, 0.5 * t->budget, &d);

	/* 2. CLBlast's defaults: the untuned choice on GPUs, so always measured there */
	if (!cpu || clg_cl_tune_elapsed(t) + compile_est < 0.6 * t->budget) {
		double t_start = clg_cl_tune_elapsed(t);
		for (int i = 0; i < t->n; i++) {
			tshape *x = &t->s[i];
			double secs;
			if (!x->usable)
				continue;
			/* on CPUs, where the own kernels are the default, one timed run tells a much slower
			 * CLBlast (the usual case there) well enough */
			clg_cl_tune_measure(t, x, CLG_CL_GEMM_CLBLAST, NULL, cpu && x->t_own > 0 ? 5 * x->t_own : 0, &secs, &why);
			x->t_cb_default = secs;
			if (!cpu)
				x->t_default = secs > 0 ? secs : x->t_own;
			if (!secs)
				clg_cl_tune_say(t, "%s: CLBlast (default parameters) failed: %s", x->r->label, why ? why : "?");
		}
		compile_est = final_est = clg_cl_tune_elapsed(t) - t_start;
		clg_cl_tune_say(t, "clblast default parameters measured on every shape (%.1f s)", compile_est);
	} else {
		clg_cl_tune_say(t, "clblast: skipped (budget too small for its kernel builds, about %.0f s each)", compile_est);
	}
	for (int i = 0; i < t->n; i++)
		t->s[i].r->default_gflops = clg_cl_tune_gflops_of(t->s[i].r, t->s[i].t_default);

	/* 3. the default implementation's search first: on GPU-type devices CLBlast's (Xgemm then
	 *    XgemmDirect), leaving the own tiles 0.15 of the budget after it; on CPUs the own tiles,
	 *    most of the time, or all of it when CLBlast's builds do not fit (its defaults, two
	 *    kernels' candidates and a final check), then CLBlast. The final check on every shape
	 *    costs about what measuring the defaults did. */
	cb_fits = clg_cl_tune_elapsed(t) + 4 * compile_est < t->budget;
	search_end = t->budget - final_est;
	if (!cpu)
		clblast_search(t, &xs, &ds, cb_fits, search_end - 0.15 * t->budget, &compile_est);
	search_own(t, !cb_fits ? 0.9 * t->budget
			       : cpu ? fmin(0.45 * t->budget, t->budget - 3.2 * compile_est) : search_end);
	confirm_own(t);
	if (cpu)
		clblast_search(t, &xs, &ds, cb_fits, search_end, &compile_est);

	/* 4. CLBlast's best parameters with the switch between its kernels, on all shapes */
	if (xs.have && ds.have) {
		size_t T = clg_cl_tune_pick_threshold(t);
		double gsum_t = 0, gsum_d = 0, score;
		int ng = 0, ok;
		ok = !clg_cl_tune_clblast_set(be, "Xgemm", clg_cl_tune_xg_names, xs.best, NX) && !clg_cl_tune_clblast_set(be, "XgemmDirect", clg_cl_tune_xd_names, ds.best, ND) &&
		     !clg_cl_tune_clblast_set(be, "GemmRoutine", &clg_cl_tune_gr_name, &T, 1);
		clg_cl_tune_say(t, "clblast: final check of the best parameters on every shape (switch to Xgemm at %zu^3)", T);
		score = ok ? clg_cl_tune_clblast_pass(t, offsetof(tshape, t_cb), 1, 0, INFINITY, INFINITY, &why) : 0;
		for (int i = 0; ok && score > 0 && i < t->n; i++) {
			tshape *x = &t->s[i];
			if (x->t_cb > 0 && x->t_cb_default > 0) {
				gsum_t += log(clg_cl_tune_gflops_of(x->r, x->t_cb));
				gsum_d += log(clg_cl_tune_gflops_of(x->r, x->t_cb_default));
				ng++;
			}
		}
		/* keep the parameters when they compute right everywhere and beat the defaults overall
		 * (or the defaults were never measured) */
		if (ok && score > 0 && (ng == 0 || gsum_t > gsum_d)) {
			d.has_xg = d.has_xd = d.has_gr = 1;
			memcpy(d.xg, xs.best, sizeof(d.xg));
			memcpy(d.xd, ds.best, ND * sizeof(size_t));
			d.gr = T;
			r->clblast_tuned = 1;
			r->min_indirect = (unsigned long)T;
			clg_cl_tune_params_str(clg_cl_tune_xg_names, xs.best, NX, r->clblast_xgemm, sizeof(r->clblast_xgemm));
			clg_cl_tune_params_str(clg_cl_tune_xd_names, ds.best, ND, r->clblast_direct, sizeof(r->clblast_direct));
			clg_cl_tune_say(t, "clblast: tuned parameters kept (%.2fx the defaults, geomean over %d shapes)",
			    ng ? exp((gsum_t - gsum_d) / ng) : 0.0, ng);
		} else {
			clg_cl_tune_say(t, "clblast: tuned parameters not kept (%s)",
			    !ok || score <= 0 ? (why ? why : "failed") : "no faster than the defaults");
			for (int i = 0; i < t->n; i++)
				t->s[i].t_cb = 0;
		}
	}
	if (!r->clblast_tuned)
		d.has_xg = d.has_xd = d.has_gr = 0;
	choose(t, &d);
	/* the FFT conv crossover is measured apart (clg_tune_store_fft_conv): kept */
	d.has_fftconv = prev.has_fftconv;
	d.fftconv = prev.fftconv;
	r->elapsed_s = clg_cl_tune_elapsed(t);
	if (!opt->dry_run) {
		if (!r->path[0]) {
			st = clg_fail(CLG_ERR_IO, "tune: no cache folder to store the result in (CLGRAD_CACHE_DIR=0?)");
			goto out;
		}
		if ((st = clg_cl_tune_store_file(be, r->path, &d)))
			goto out;
		r->stored = 1;
		/* this process uses the result from now on */
		clg_cl_tune_use(be, &d, r->path);
	}
out:
	if (st)
		snprintf(err, sizeof(err), "%s", clg_last_error());
	if (!r->stored) /* a dry run or a failure: the width this process had */
		clg_cl_of(be)->gemm_wg = saved_wg;
	clblast_restore(t, &d, &prev, have_gr0, gr0, &xs, &ds);
	for (int i = 0; i < t->n; i++)
		shape_release(&t->s[i]);
	if (t->saved_queue) { /* the backend's own queue back, the profiling one drained first */
		clFinish(clg_cl_of(be)->queue);
		clReleaseCommandQueue(clg_cl_of(be)->queue);
		clg_cl_of(be)->queue = t->saved_queue;
	}
	free(t);
	if (st)
		return clg_fail(st, "%s", err);
	clg_clear_error();
	return st;
}
