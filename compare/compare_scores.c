/* clgrad compare: the maturity scores. The rules are written out in docs/COMPARE.md ("Scores");
 * change both together. Each category is the weighted mean of the components that have data
 * (a component without data is left out and the weights of the others renormalised); a category
 * with no component at all is null. */
#include "compare_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	double sum, weight;
} mean_acc;

static void add(mean_acc *m, double weight, double value01)
{
	if (!isfinite(value01))
		return;
	m->sum += weight * fmin(fmax(value01, 0), 1);
	m->weight += weight;
}

static double result(const mean_acc *m) { return m->weight > 0 ? 100 * m->sum / m->weight : NAN; }

/* 1 at or below good, 0 at or above bad, linear in log(x) between */
static double log_scale(double x, double good, double bad)
{
	if (!isfinite(x))
		return NAN;
	if (x <= good)
		return 1;
	if (x >= bad)
		return 0;
	return 1 - log(x / good) / log(bad / good);
}

static double ratio(double num, double den) { return den > 0 ? num / den : NAN; }

static double features(const cmp_device *d)
{
	mean_acc m = {0};
	double pass = cmp_sec_num(d, "ops.totals.pass"), fail = cmp_sec_num(d, "ops.totals.fail");
	double uns = cmp_sec_num(d, "ops.totals.unsupported");
	const jv *caps = cmp_section(d, "capabilities");
	static const char *flags[] = {"has_fp16", "has_fp64", "has_subgroups", "has_int_dot", "has_il"};

	add(&m, 60, ratio(pass + fail, pass + fail + uns));
	/* the reference backend has no extensions to offer: the flags are left out there */
	if (caps && cmp_section_ok(d, "capabilities") && strcmp(d->type, "ref")) {
		int have = 0;
		for (int i = 0; i < 5; i++)
			have += jv_bool(jv_get(caps, flags[i])) == 1;
		add(&m, 40, have / 5.0);
	}
	return result(&m);
}

static double compile_score(const cmp_device *d)
{
	mean_acc m = {0};
	const jv *progs = jv_path(d->sections, "compile.programs");
	int ok = 0, rt;

	for (int i = 0; i < jv_len(progs); i++)
		ok += jv_bool(jv_get(jv_at(progs, i), "ok")) == 1;
	if (jv_len(progs))
		add(&m, 60, (double)ok / jv_len(progs));
	add(&m, 20, log_scale(cmp_sec_num(d, "compile.total_cold_s"), 2, 120));
	rt = jv_bool(jv_path(d->sections, "capabilities.binary_roundtrip"));
	if (rt >= 0)
		add(&m, 20, rt);
	return result(&m);
}

static double correctness(const cmp_device *d)
{
	mean_acc m = {0}, div = {0};
	add(&m, 50, ratio(cmp_sec_num(d, "ops.totals.pass"),
			  cmp_sec_num(d, "ops.totals.pass") + cmp_sec_num(d, "ops.totals.fail")));
	add(&m, 30, ratio(cmp_sec_num(d, "ops.totals.grad_pass"),
			  cmp_sec_num(d, "ops.totals.grad_pass") + cmp_sec_num(d, "ops.totals.grad_fail")));
	for (int k = 0; k < d->n_train; k++)
		add(&div, 1, log_scale(d->train_div[k], 1e-4, 1e-1));
	add(&m, 20, div.weight > 0 ? div.sum / div.weight : NAN);
	return result(&m);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* the median fraction of the roofline bound the measured points reach; where the section could
 * not compute a fraction (no bandwidth figure), gemm and conv points count against the fp32 peak */
static double performance(const cmp_device *d)
{
	const jv *pts = jv_path(d->sections, "roofline.points");
	double v[256], peak = cmp_sec_num(d, "peaks.fp32_gflops");
	int n = 0;

	for (int i = 0; i < jv_len(pts) && n < 256; i++) {
		const jv *p = jv_at(pts, i);
		const char *kind = jv_str(jv_get(p, "kind"), "");
		double f = jv_num(jv_get(p, "fraction_of_peak"));
		if (!isfinite(f) && peak > 0 && (!strcmp(kind, "gemm") || !strcmp(kind, "conv")))
			f = jv_num(jv_get(p, "gflops")) / peak;
		if (isfinite(f))
			v[n++] = fmin(fmax(f, 0), 1);
	}
	if (!n)
		return NAN;
	qsort(v, n, sizeof(v[0]), cmp_double);
	return 100 * (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

static double stability(const cmp_device *d)
{
	static const char *names[] = {"capabilities", "peaks", "compile", "roofline", "ops", "train"};
	const jv *runs = jv_path(d->sections, "train.runs");
	double s = 100;
	int rejected = jv_len(jv_path(d->sections, "peaks.rejected"));

	if (strcmp(d->status, "ok") && strcmp(d->status, "partial"))
		return 0;
	for (int i = 0; i < 6; i++)
		if (cmp_section(d, names[i]) && !cmp_section_ok(d, names[i]))
			s -= 20;
	for (int i = 0; i < jv_len(runs); i++) {
		const jv *run = jv_at(runs, i);
		if (jv_bool(jv_get(run, "repeat_identical")) == 0)
			s -= 20;
		if (!jv_is_null(jv_get(run, "error")))
			s -= 10;
	}
	s -= 5 * (rejected > 3 ? 3 : rejected);
	return fmax(s, 0);
}

void cmp_score_device(const cmp_run *r, cmp_device *d)
{
	cmp_scores *s = &d->scores;
	mean_acc m = {0};

	(void)r;
	s->features = features(d);
	s->compile = compile_score(d);
	s->correctness = correctness(d);
	s->performance = performance(d);
	s->stability = stability(d);
	add(&m, 15, s->features / 100);
	add(&m, 15, s->compile / 100);
	add(&m, 35, s->correctness / 100);
	add(&m, 15, s->performance / 100);
	add(&m, 20, s->stability / 100);
	s->overall = result(&m);
}
