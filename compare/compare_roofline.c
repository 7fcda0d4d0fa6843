/* compare section "roofline": GEMM at several shapes, the CNN's second convolution, a large
 * elementwise add and a batched FFT (float32 C2C of length 1024, 5 N log2 N flops), run through
 * the frontend (clgrad.h) and timed after a warm-up, each with a synchronize. Each point gets its flops, bytes (what must cross memory at least: operands read
 * once, the result written once), rates, intensity and fraction of the roofline bound
 * min(fp32 peak, intensity x bandwidth) from the peaks section. A point above 1.1 x its bound is
 * a measurement error: listed under "rejected", not among the points. */
#include "compare.h"

#include "clg_measure.h"
#include "clgrad_conv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum { P_GEMM, P_CONV, P_EW, P_FFT } point_kind;

typedef struct {
	point_kind kind;
	int64_t a, b, c; /* gemm: M, N, K; conv: N (batch), C, OC (14 x 14 images, 3 x 3, pad 1); ew: n;
			  * fft: length, rows (float32 complex-to-complex, forward) */
	int64_t hw;      /* conv: image side */
} point;

static const char *const kind_names[] = {"gemm", "conv", "ew", "fft"};

/* Full, quick and tiny (simulator) sets. The MLP (784-512-512-10, batch 128) trains on
 * 128x512x784 (layer 1 forward), 128x784x512 (its input gradient), 784x512x128 (its weight
 * gradient) and 128x512x512 (layer 2). */
static const point full_set[] = {
	{P_GEMM, 256, 256, 256, 0},   {P_GEMM, 512, 512, 512, 0},   {P_GEMM, 1024, 1024, 1024, 0},
	{P_GEMM, 128, 512, 784, 0},   {P_GEMM, 128, 784, 512, 0},   {P_GEMM, 784, 512, 128, 0},
	{P_GEMM, 128, 512, 512, 0},   {P_CONV, 128, 32, 64, 14},    {P_EW, 1 << 24, 0, 0, 0},
	{P_FFT, 1024, 256, 0, 0},
};
static const point quick_set[] = {
	{P_GEMM, 256, 256, 256, 0}, {P_GEMM, 512, 512, 512, 0}, {P_GEMM, 128, 512, 784, 0},
	{P_CONV, 16, 32, 64, 14},   {P_EW, 1 << 22, 0, 0, 0},   {P_FFT, 1024, 64, 0, 0},
};
static const point tiny_set[] = {
	{P_GEMM, 32, 32, 32, 0},
	{P_CONV, 1, 4, 8, 8},
	{P_EW, 4096, 0, 0, 0},
	{P_FFT, 64, 4, 0, 0},
};

static void point_name(const point *p, char *buf, size_t len)
{
	if (p->kind == P_GEMM)
		snprintf(buf, len, "gemm %lldx%lldx%lld", (long long)p->a, (long long)p->b, (long long)p->c);
	else if (p->kind == P_CONV)
		snprintf(buf, len, "conv2d N=%lld C=%lld->%lld %lldx%lld 3x3 pad 1", (long long)p->a, (long long)p->b,
			 (long long)p->c, (long long)p->hw, (long long)p->hw);
	else if (p->kind == P_FFT)
		snprintf(buf, len, "fft c2c %lld x %lld rows", (long long)p->a, (long long)p->b);
	else
		snprintf(buf, len, "add %lld floats", (long long)p->a);
}

static void point_work(const point *p, double *flops, double *bytes)
{
	if (p->kind == P_GEMM) {
		double M = (double)p->a, N = (double)p->b, K = (double)p->c;
		*flops = 2 * M * N * K;
		*bytes = 4 * (M * K + K * N + M * N);
	} else if (p->kind == P_CONV) {
		double n = (double)p->a, c = (double)p->b, oc = (double)p->c, hw = (double)(p->hw * p->hw);
		*flops = 2 * n * oc * hw * c * 9 + n * oc * hw; /* + bias */
		*bytes = 4 * (n * c * hw + oc * c * 9 + oc + n * oc * hw);
	} else if (p->kind == P_FFT) { /* the 5 N log2 N convention; complex float32 read and written once */
		*flops = 5 * (double)p->a * log2((double)p->a) * (double)p->b;
		*bytes = 16 * (double)p->a * (double)p->b;
	} else {
		*flops = (double)p->a;
		*bytes = 12 * (double)p->a;
	}
}

/* The point's inputs, created once. */
typedef struct {
	clg_tensor *x, *y, *z;
} inputs;

static clg_status make_inputs(clg_backend *be, const point *p, inputs *in)
{
	memset(in, 0, sizeof(*in));
	if (p->kind == P_GEMM) {
		in->x = clg_rand(be, CLG_F32, CLG_SHAPE(p->a, p->c), 1);
		in->y = clg_rand(be, CLG_F32, CLG_SHAPE(p->c, p->b), 2);
	} else if (p->kind == P_CONV) {
		in->x = clg_rand(be, CLG_F32, CLG_SHAPE(p->a, p->b, p->hw, p->hw), 1);
		in->y = clg_rand(be, CLG_F32, CLG_SHAPE(p->c, p->b, 3, 3), 2);
		in->z = clg_rand(be, CLG_F32, CLG_SHAPE(p->c), 3);
	} else if (p->kind == P_FFT) {
		in->x = clg_rand(be, CLG_F32, CLG_SHAPE(p->b, p->a, 2), 1);
	} else {
		in->x = clg_rand(be, CLG_F32, CLG_SHAPE(p->a), 1);
		in->y = clg_rand(be, CLG_F32, CLG_SHAPE(p->a), 2);
	}
	if (!in->x || (p->kind != P_FFT && !in->y) || (p->kind == P_CONV && !in->z))
		return clg_last_status();
	return clg_synchronize(be);
}

static void free_inputs(inputs *in)
{
	clg_free(in->x);
	clg_free(in->y);
	clg_free(in->z);
}

/* One run: the op, then a synchronize; *secs its wall time. */
static clg_status run_once(clg_backend *be, const point *p, const inputs *in, double *secs)
{
	double t0 = clg_measure_now();
	clg_tensor *r;
	clg_status st;

	if (p->kind == P_GEMM)
		r = clg_matmul(in->x, in->y);
	else if (p->kind == P_CONV)
		r = clg_conv2d(in->x, in->y, in->z, 1, 1, 1, 1, 1, 1, 1);
	else if (p->kind == P_FFT)
		r = clg_fft(in->x, CLG_FFT_NORM_BACKWARD);
	else
		r = clg_add(in->x, in->y);
	if (!r)
		return clg_last_status();
	st = clg_synchronize(be);
	*secs = clg_measure_now() - t0;
	clg_free(r);
	return st;
}

/* Best time of a few runs after a warm-up (which pays for the driver's code generation). The
 * reference backend generates no code: a run that already took long counts as a measurement. */
static clg_status time_point(clg_backend *be, const point *p, int quick, double *best)
{
	int is_ref = !strcmp(be->iface->kind, "ref"), reps = quick ? 3 : 5;
	double budget = quick ? 0.3 : 1.0, spent = 0, s;
	inputs in;
	clg_status st;

	*best = INFINITY;
	if ((st = make_inputs(be, p, &in)))
		goto out_free;
	if ((st = run_once(be, p, &in, &s)))
		goto out_free;
	if (is_ref && s > budget / 4)
		*best = spent = s;
	for (int i = 0; i < reps && (i == 0 || spent < budget); i++) {
		if (is_ref && spent > 0 && spent + s > budget)
			break;
		if ((st = run_once(be, p, &in, &s)))
			goto out_free;
		spent += s;
		if (s < *best)
			*best = s;
	}
out_free:
	free_inputs(&in);
	return st;
}

int compare_roofline(clg_backend *dev, const compare_opts *o, const compare_peak_values *peaks, json_writer *w)
{
	const point *set = o->tiny ? tiny_set : o->quick ? quick_set : full_set;
	int n = o->tiny ? (int)(sizeof(tiny_set) / sizeof(*set))
			: o->quick ? (int)(sizeof(quick_set) / sizeof(*set)) : (int)(sizeof(full_set) / sizeof(*set));
	double peak = peaks ? peaks->fp32_gflops * 1e9 : 0, bw = peaks ? peaks->bandwidth_gbs * 1e9 : 0;
	double res = clg_measure_clock_resolution();
	struct {
		char name[96], why[160];
		double flops, bytes, secs, bound;
		int rejected, failed, skipped;
	} r[16];

	clg_no_grad_begin();
	for (int i = 0; i < n; i++) {
		const point *p = &set[i];
		double in;
		clg_status st;
		point_name(p, r[i].name, sizeof(r[i].name));
		point_work(p, &r[i].flops, &r[i].bytes);
		in = r[i].flops / r[i].bytes;
		r[i].bound = peak > 0 && bw > 0 ? fmin(peak, in * bw) : 0;
		r[i].rejected = r[i].failed = r[i].skipped = 0;
		if (!strcmp(dev->iface->kind, "ref") && r[i].flops > 2e9) {
			/* C loops at well under 1 GFLOP/s: seconds per run, and nothing new to learn */
			r[i].skipped = 1;
			continue;
		}
		st = time_point(dev, p, o->quick || o->tiny, &r[i].secs);
		if (st) {
			r[i].failed = 1;
			snprintf(r[i].why, sizeof(r[i].why), "%s", clg_last_error());
			continue;
		}
		r[i].rejected = clg_measure_implausible(r[i].secs, r[i].flops, r[i].bound, res, r[i].why,
							sizeof(r[i].why));
	}
	clg_no_grad_end();

	json_key(w, "points");
	json_begin_array(w);
	for (int i = 0; i < n; i++) {
		if (r[i].rejected || r[i].failed || r[i].skipped)
			continue;
		json_begin_object(w);
		json_key_str(w, "name", r[i].name);
		json_key_str(w, "kind", kind_names[set[i].kind]);
		json_key_num(w, "flops", r[i].flops);
		json_key_num(w, "bytes", r[i].bytes);
		json_key_num(w, "seconds", r[i].secs);
		json_key_num(w, "gflops", r[i].flops / r[i].secs * 1e-9);
		json_key_num(w, "gbs", r[i].bytes / r[i].secs * 1e-9);
		json_key_num(w, "intensity", r[i].flops / r[i].bytes);
		json_key_num(w, "bound_gflops", r[i].bound > 0 ? r[i].bound * 1e-9 : NAN);
		json_key_num(w, "fraction_of_peak", r[i].bound > 0 ? r[i].flops / r[i].secs / r[i].bound : NAN);
		json_end_object(w);
	}
	json_end_array(w);
	json_key(w, "rejected");
	json_begin_array(w);
	for (int i = 0; i < n; i++) {
		if (!r[i].rejected)
			continue;
		json_begin_object(w);
		json_key_str(w, "what", r[i].name);
		json_key_num(w, "value", r[i].secs > 0 ? r[i].flops / r[i].secs * 1e-9 : r[i].secs);
		json_key_str(w, "why", r[i].why);
		json_end_object(w);
	}
	json_end_array(w);
	json_key(w, "failed");
	json_begin_array(w);
	for (int i = 0; i < n; i++) {
		if (!r[i].failed)
			continue;
		json_begin_object(w);
		json_key_str(w, "name", r[i].name);
		json_key_str(w, "error", r[i].why);
		json_end_object(w);
	}
	json_end_array(w);
	json_key(w, "skipped");
	json_begin_array(w);
	for (int i = 0; i < n; i++)
		if (r[i].skipped)
			json_str(w, r[i].name);
	json_end_array(w);
	json_key_num(w, "peak_gflops", peak > 0 ? peak * 1e-9 : NAN);
	json_key_num(w, "bandwidth_gbs", bw > 0 ? bw * 1e-9 : NAN);
	json_key_str(w, "note",
		     o->tiny ? "tiny shapes (a simulator); float32 through the frontend, best of a few runs after a "
			       "warm-up, each ending in a synchronize; rejected (value in GFLOP/s) = above 1.1 x the bound"
		     : o->quick ? "--quick: three GEMM shapes, conv2d with N=16, add of 4M floats, fft of 64 rows; float32 through the "
				  "frontend, best of up to 3 runs after a warm-up, each ending in a synchronize; rejected "
				  "(value in GFLOP/s) = above 1.1 x the bound"
				: "float32 through the frontend, best of up to 5 runs after a warm-up, each ending in a "
				  "synchronize; bytes = operands read once and the result written once; rejected (value "
				  "in GFLOP/s) = above 1.1 x the bound; skipped = above 2 GFLOP on the reference backend");
	return 0;
}
