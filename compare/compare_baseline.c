/* clgrad compare --baseline OLD.json: what changed against an earlier report, device by device
 * (matched by name, then by index). Rates move with machine noise, so they count as changed only
 * beyond 5%; counts, statuses and scores (by a point or more) always do. */
#include "compare_internal.h"

#include <math.h>
#include <string.h>

#define MAX_CHANGES 64

typedef struct {
	char what[64];
	double old, now;       /* NAN: text change, see olds/nows */
	char olds[48], nows[48];
} change;

static const struct {
	const char *label, *path;
	int rate;               /* noisy: report beyond 5% only */
} metrics[] = {
	{"fp32 GFLOP/s", "peaks.fp32_gflops", 1},
	{"fp16 GFLOP/s", "peaks.fp16_gflops", 1},
	{"bandwidth GB/s", "peaks.bandwidth_gbs", 1},
	{"launch latency us", "peaks.launch_latency_us", 1},
	{"cold compile s", "compile.total_cold_s", 1},
	{"op cases passing", "ops.totals.pass", 0},
	{"op cases failing", "ops.totals.fail", 0},
	{"op cases unsupported", "ops.totals.unsupported", 0},
	{"gradient cases failing", "ops.totals.grad_fail", 0},
};
static const char *score_names[] = {"features", "compile", "correctness", "performance", "stability", "overall"};
static const char *models[] = {"mlp", "cnn", "transformer"};

static const jv *old_device(const cmp_run *r, const cmp_device *d)
{
	const jv *devs = jv_get(r->baseline, "devices");
	for (int i = 0; i < jv_len(devs); i++)
		if (!strcmp(jv_str(jv_get(jv_at(devs, i), "name"), ""), d->name))
			return jv_at(devs, i);
	for (int i = 0; i < jv_len(devs); i++)
		if (jv_num(jv_get(jv_at(devs, i), "index")) == d->index)
			return jv_at(devs, i);
	return NULL;
}

static void num_change(change *c, int *n, const char *what, double old, double now, int rate)
{
	int differ;
	if (!isfinite(old) && !isfinite(now))
		return;
	if (!isfinite(old) || !isfinite(now))
		differ = 1;
	else if (rate > 0)
		differ = fabs(now - old) > 0.05 * fmax(fabs(old), 1e-12);
	else
		differ = fabs(now - old) >= (rate < 0 ? 1 : 0.5);
	if (!differ || *n == MAX_CHANGES)
		return;
	snprintf(c[*n].what, sizeof(c[0].what), "%s", what);
	c[*n].old = old;
	c[*n].now = now;
	c[*n].olds[0] = c[*n].nows[0] = 0;
	(*n)++;
}

static void text_change(change *c, int *n, const char *what, const char *old, const char *now)
{
	if (!strcmp(old, now) || *n == MAX_CHANGES)
		return;
	snprintf(c[*n].what, sizeof(c[0].what), "%s", what);
	c[*n].old = c[*n].now = NAN;
	snprintf(c[*n].olds, sizeof(c[0].olds), "%s", old);
	snprintf(c[*n].nows, sizeof(c[0].nows), "%s", now);
	(*n)++;
}

static double old_train(const jv *sections, const char *model)
{
	const jv *runs = jv_path(sections, "train.runs");
	for (int i = 0; i < jv_len(runs); i++)
		if (!strcmp(jv_str(jv_get(jv_at(runs, i), "model"), ""), model))
			return jv_num(jv_get(jv_at(runs, i), "samples_per_s"));
	return NAN;
}

/* ops whose failing count went from 0 to more (dir 1) or back to 0 (dir -1) */
static void op_flips(const jv *old_s, const cmp_device *d, change *c, int *n)
{
	const jv *now = jv_path(d->sections, "ops.ops"), *was = jv_path(old_s, "ops.ops");
	for (int i = 0; i < jv_len(now); i++) {
		const char *op = jv_str(jv_get(jv_at(now, i), "op"), "?");
		double f_now = jv_num(jv_get(jv_at(now, i), "fail"));
		for (int k = 0; k < jv_len(was); k++) {
			double f_old;
			char what[64];
			if (strcmp(jv_str(jv_get(jv_at(was, k), "op"), ""), op))
				continue;
			f_old = jv_num(jv_get(jv_at(was, k), "fail"));
			snprintf(what, sizeof(what), "op %s", op);
			if ((f_old > 0) != (f_now > 0))
				text_change(c, n, what, f_old > 0 ? "failing" : "passing", f_now > 0 ? "failing" : "passing");
		}
	}
}

static int device_changes(const cmp_run *r, const cmp_device *d, const jv *old, change *c)
{
	const jv *os = jv_get(old, "sections");
	const double now_scores[6] = {d->scores.features, d->scores.compile, d->scores.correctness,
				      d->scores.performance, d->scores.stability, d->scores.overall};
	int n = 0;

	text_change(c, &n, "status", jv_str(jv_get(old, "status"), "?"), d->status);
	for (int i = 0; i < 6; i++) {
		char what[64];
		snprintf(what, sizeof(what), "score %s", score_names[i]);
		num_change(c, &n, what, jv_num(jv_get(jv_get(old, "scores"), score_names[i])),
			   now_scores[i], -1);
	}
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		num_change(c, &n, metrics[i].label, jv_num(jv_path(os, metrics[i].path)),
			   cmp_sec_num(d, metrics[i].path), metrics[i].rate);
	for (int i = 0; i < 3; i++) {
		char what[64];
		snprintf(what, sizeof(what), "train %s samples/s", models[i]);
		num_change(c, &n, what, old_train(os, models[i]), cmp_train_samples(d, models[i]), 1);
	}
	op_flips(os, d, c, &n);
	(void)r;
	return n;
}

static void fmt_change(const change *c, char *buf, size_t len)
{
	char a[32], b[32];
	if (c->olds[0] || c->nows[0]) {
		snprintf(buf, len, "%s: %s -> %s", c->what, c->olds, c->nows);
		return;
	}
	cmp_fmt(a, sizeof(a), c->old, -1);
	cmp_fmt(b, sizeof(b), c->now, -1);
	if (isfinite(c->old) && isfinite(c->now) && c->old != 0)
		snprintf(buf, len, "%s: %s -> %s (%+.0f%%)", c->what, a, b, 100 * (c->now - c->old) / fabs(c->old));
	else
		snprintf(buf, len, "%s: %s -> %s", c->what, a, b);
}

void cmp_baseline_print(const cmp_run *r, FILE *f, int markdown)
{
	static change c[MAX_CHANGES];
	const jv *devs = jv_get(r->baseline, "devices");
	char line[256];

	fprintf(f, markdown ? "Against `%s` (%s):\n\n" : "\nchanges against %s (%s):\n", r->opt.baseline,
		jv_str(jv_get(r->baseline, "created"), "?"));
	if (jv_bool(jv_get(r->baseline, "quick")) >= 0 && jv_bool(jv_get(r->baseline, "quick")) != r->opt.quick)
		fprintf(f, "%swarning: one run used --quick and the other not: the workloads differ\n",
			markdown ? "- " : "  ");
	for (int i = 0; i < r->n; i++) {
		const cmp_device *d = &r->dev[i];
		const jv *old = old_device(r, d);
		int n;
		if (!old) {
			fprintf(f, "%sdevice %d (%s): new, not in the baseline\n", markdown ? "- " : "  ", d->index, d->name);
			continue;
		}
		n = device_changes(r, d, old, c);
		if (!n)
			fprintf(f, "%sdevice %d (%s): no change\n", markdown ? "- " : "  ", d->index, d->name);
		for (int k = 0; k < n; k++) {
			fmt_change(&c[k], line, sizeof(line));
			fprintf(f, "%sdevice %d (%s): %s\n", markdown ? "- " : "  ", d->index, d->name, line);
		}
	}
	for (int k = 0; k < jv_len(devs); k++) {
		const char *name = jv_str(jv_get(jv_at(devs, k), "name"), "?");
		int found = 0;
		for (int i = 0; i < r->n; i++)
			found |= old_device(r, &r->dev[i]) == jv_at(devs, k);
		if (!found)
			fprintf(f, "%sdevice %s: in the baseline, not in this run\n", markdown ? "- " : "  ", name);
	}
}

void cmp_baseline_json(const cmp_run *r, json_writer *w)
{
	static change c[MAX_CHANGES];
	json_begin_object(w);
	json_key_str(w, "file", r->opt.baseline);
	json_key_str(w, "created", jv_str(jv_get(r->baseline, "created"), NULL));
	json_key(w, "devices");
	json_begin_array(w);
	for (int i = 0; i < r->n; i++) {
		const cmp_device *d = &r->dev[i];
		const jv *old = old_device(r, d);
		int n = old ? device_changes(r, d, old, c) : 0;
		json_begin_object(w);
		json_key_int(w, "index", d->index);
		json_key_str(w, "name", d->name);
		json_key_bool(w, "in_baseline", old != NULL);
		json_key(w, "changes");
		json_begin_array(w);
		for (int k = 0; k < n; k++) {
			json_begin_object(w);
			json_key_str(w, "what", c[k].what);
			if (c[k].olds[0] || c[k].nows[0]) {
				json_key_str(w, "old", c[k].olds);
				json_key_str(w, "new", c[k].nows);
			} else {
				json_key_num(w, "old", c[k].old);
				json_key_num(w, "new", c[k].now);
			}
			json_end_object(w);
		}
		json_end_array(w);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}
