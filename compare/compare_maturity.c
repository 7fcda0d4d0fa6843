/* clgrad compare: the maturity reading, per OpenCL stack, from the sections' data alone: what fails
 * (op cases, gradient checks, program builds, training runs, the worker's status), what is routed
 * (the known-bad list and the self-test, each with its reason and, for a known-bad entry, the
 * folder of its evidence in docs/known-bad/), what is slow against the device's own measured peak
 * (roofline points below CMP_SLOW_FRACTION of min(fp32 peak, intensity x bandwidth)), and, for a
 * platform seen with two driver versions (PoCL 3.1 and PoCL 6, say), what changed between them:
 * ops that pass, fail or are routed differently, and the speed ratio of every workload. */
#define _GNU_SOURCE /* strverscmp */
#include "compare_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define CMP_SLOW_FRACTION 0.10 /* a workload below 10 % of its own roofline bound is "slow" */
#define CMP_SLOW_MEDIAN 0.20   /* a stack whose median workload is below 20 % of its bound is slow */
#define MAX_ITEMS 64
#define MAX_SLOW 4

/* one finding of a stack; the strings point into the device's document or into text */
typedef struct {
	const char *what, *why;
	char text[128];
	char evidence[96]; /* "docs/known-bad/NAME" named in a known-bad reason, else "" */
} item;

typedef struct {
	const cmp_device *d;
	int n_failed, n_routed, n_slow, n_slow_all; /* n_slow of the n_slow_all slow ones are listed */
	item failed[MAX_ITEMS], routed[MAX_ITEMS];
	const jv *slow[MAX_SLOW];  /* roofline points, slowest first */
	double median_fraction;    /* of the roofline points, NAN without any */
	int n_points;
	char verdict[200];
} stack;

static int is_stack(const cmp_device *d) { return strcmp(d->type, "ref") != 0; }

/* "docs/known-bad/NAME" where a reason names its evidence folder */
static void evidence_of(const char *why, char *buf, size_t len)
{
	const char *p = strstr(why ? why : "", "docs/known-bad/");
	size_t n = 0;
	if (!p) {
		buf[0] = 0;
		return;
	}
	while (p[n] && p[n] != ' ' && p[n] != ')' && p[n] != ',' && p[n] != ';')
		n++;
	snprintf(buf, len, "%.*s", (int)n, p);
}

static int by_fraction(const void *a, const void *b)
{
	double x = jv_num(jv_get(*(const jv *const *)a, "fraction_of_peak"));
	double y = jv_num(jv_get(*(const jv *const *)b, "fraction_of_peak"));
	return (x > y) - (x < y);
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* a finding; fmt (NULL: no text) and its arguments make its detail */
__attribute__((format(printf, 5, 6))) static void add(item *list, int *n, const char *what, const char *why,
						   const char *fmt, ...)
{
	item *it;
	va_list ap;
	if (*n == MAX_ITEMS)
		return;
	it = &list[(*n)++];
	memset(it, 0, sizeof(*it));
	it->what = what;
	it->why = why ? why : "";
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(it->text, sizeof(it->text), fmt, ap);
		va_end(ap);
	}
	evidence_of(it->why, it->evidence, sizeof(it->evidence));
}

static void read_stack(const cmp_device *d, stack *s)
{
	const jv *ops = jv_path(d->sections, "ops.ops"), *grad = jv_path(d->sections, "ops.grad");
	const jv *progs = jv_path(d->sections, "compile.programs"), *routed = jv_path(d->sections, "ops.routed");
	const jv *runs = jv_path(d->sections, "train.runs"), *points = jv_path(d->sections, "roofline.points");
	const jv *sorted[256];
	double fr[256];
	int np = 0;

	memset(s, 0, sizeof(*s));
	s->d = d;
	for (int k = 0; k < jv_len(ops); k++) {
		const jv *o = jv_at(ops, k);
		double fail = jv_num(jv_get(o, "fail"));
		if (fail > 0)
			add(s->failed, &s->n_failed, jv_str(jv_get(o, "op"), "?"), NULL, "%.0f of %.0f cases", fail,
			    fail + jv_num(jv_get(o, "pass")));
	}
	for (int k = 0; k < jv_len(grad); k++)
		if (jv_bool(jv_get(jv_at(grad, k), "ok")) == 0)
			add(s->failed, &s->n_failed, jv_str(jv_get(jv_at(grad, k), "case"), "?"), NULL, "gradient check");
	for (int k = 0; k < jv_len(progs); k++)
		if (jv_bool(jv_get(jv_at(progs, k), "ok")) == 0)
			add(s->failed, &s->n_failed, jv_str(jv_get(jv_at(progs, k), "name"), "?"), NULL, "program build");
	for (int k = 0; k < jv_len(runs); k++) {
		const jv *run = jv_at(runs, k);
		const char *model = jv_str(jv_get(run, "model"), "?");
		if (jv_kind(jv_get(run, "error")) == JV_STR)
			add(s->failed, &s->n_failed, model, jv_str(jv_get(run, "error"), ""), "training run");
		else if (jv_bool(jv_get(run, "repeat_identical")) == 0)
			add(s->failed, &s->n_failed, model, NULL, "training not bit-identical when repeated");
	}
	for (int k = 0; k < jv_len(routed); k++) {
		const jv *o = jv_at(routed, k);
		add(s->routed, &s->n_routed, jv_str(jv_get(o, "op"), "?"), jv_str(jv_get(o, "why"), ""), "%s",
		    jv_str(jv_get(o, "action"), "?"));
	}
	for (int k = 0; k < jv_len(points) && np < 256; k++) {
		const jv *p = jv_at(points, k);
		double f = jv_num(jv_get(p, "fraction_of_peak"));
		if (!isfinite(f))
			continue;
		sorted[np] = p;
		fr[np++] = fmin(fmax(f, 0), 1);
	}
	s->n_points = np;
	s->median_fraction = NAN;
	if (np) {
		qsort(fr, np, sizeof(fr[0]), by_double);
		s->median_fraction = np % 2 ? fr[np / 2] : (fr[np / 2 - 1] + fr[np / 2]) / 2;
		qsort(sorted, np, sizeof(sorted[0]), by_fraction);
		for (int k = 0; k < np; k++)
			if (jv_num(jv_get(sorted[k], "fraction_of_peak")) < CMP_SLOW_FRACTION) {
				s->n_slow_all++;
				if (s->n_slow < MAX_SLOW)
					s->slow[s->n_slow++] = sorted[k];
			}
	}
	/* one line a person can act on: can it be used, and with what caveat */
	const char *state = strcmp(d->status, "ok") ? "not usable as run" : s->n_failed ? "gives wrong results" :
			    s->n_routed ? "usable, with ops routed away" :
			    s->median_fraction < CMP_SLOW_MEDIAN ? "usable, slow against its own peak" : "usable";
	char speed[96] = "no roofline data", st[32] = "";
	if (np)
		snprintf(speed, sizeof(speed), "%d of %d workloads slow, median %.0f%% of its own peak", s->n_slow_all, np,
			 100 * s->median_fraction);
	if (strcmp(d->status, "ok"))
		snprintf(st, sizeof(st), " (%s)", d->status);
	snprintf(s->verdict, sizeof(s->verdict), "%s%s: %d failing, %d routed, %s", state, st, s->n_failed, s->n_routed,
		 speed);
}

/* ---- driver generations: two driver versions of one platform ------------------------------- */

typedef struct {
	const cmp_device *old, *new_;
} generation;

static int generations(const cmp_run *r, generation *out, int max)
{
	int n = 0;
	for (int a = 0; a < r->n_vendors; a++)
		for (int b = 0; b < r->n_vendors && n < max; b++) {
			const cmp_vendor *va = &r->vendors[a], *vb = &r->vendors[b];
			if (!va->n || !vb->n || strcmp(va->platform, vb->platform) ||
			    strverscmp(va->driver, vb->driver) >= 0)
				continue;
			out[n++] = (generation){&r->dev[va->dev[0]], &r->dev[vb->dev[0]]};
		}
	return n;
}

static const char *op_state(const jv *o)
{
	if (!o)
		return "absent";
	if (jv_num(jv_get(o, "fail")) > 0)
		return "fail";
	if (jv_num(jv_get(o, "pass")) > 0)
		return "pass";
	return jv_num(jv_get(o, "unsupported")) > 0 ? "unsupported" : "absent";
}

static const jv *find_named(const jv *list, const char *key, const char *name)
{
	for (int k = 0; k < jv_len(list); k++)
		if (!strcmp(jv_str(jv_get(jv_at(list, k), key), ""), name))
			return jv_at(list, k);
	return NULL;
}

typedef struct {
	const char *what;
	char old[48], new_[48];
} change;

/* the device features (capabilities) whose value differs, then the ops whose state (pass / fail /
 * unsupported), route or gradient check differs */
static int changes(const generation *g, change *out, int max)
{
	static const char *lists[][2] = {{"ops.ops", "op"}, {"ops.routed", "op"}, {"ops.grad", "case"}};
	static const char *caps[] = {"has_fp16", "has_fp64", "has_subgroups", "has_int_dot", "has_il",
				     "clc_version"};
	int n = 0;

	for (size_t k = 0; k < sizeof(caps) / sizeof(caps[0]) && n < max; k++) {
		const jv *a = jv_get(cmp_section(g->old, "capabilities"), caps[k]);
		const jv *b = jv_get(cmp_section(g->new_, "capabilities"), caps[k]);
		char sa[48], sb[48];
		if (jv_kind(a) == JV_STR || jv_kind(b) == JV_STR) {
			snprintf(sa, sizeof(sa), "%s", jv_str(a, "-"));
			snprintf(sb, sizeof(sb), "%s", jv_str(b, "-"));
		} else {
			snprintf(sa, sizeof(sa), "%s", jv_bool(a) == 1 ? "yes" : "no");
			snprintf(sb, sizeof(sb), "%s", jv_bool(b) == 1 ? "yes" : "no");
		}
		if (!strcmp(sa, sb))
			continue;
		out[n].what = caps[k];
		snprintf(out[n].old, sizeof(out[n].old), "%s", sa);
		snprintf(out[n++].new_, sizeof(out[0].new_), "%s", sb);
	}
	for (int l = 0; l < 3; l++)
		for (int side = 0; side < 2; side++) {
			const cmp_device *a = side ? g->new_ : g->old, *b = side ? g->old : g->new_;
			const jv *la = jv_path(a->sections, lists[l][0]), *lb = jv_path(b->sections, lists[l][0]);
			for (int k = 0; k < jv_len(la) && n < max; k++) {
				const char *name = jv_str(jv_get(jv_at(la, k), lists[l][1]), "?");
				const jv *oa = jv_at(la, k), *ob = find_named(lb, lists[l][1], name);
				char sa[48], sb[48];
				if (side && ob)
					continue; /* in both: seen from the old side */
				if (l == 0) {
					snprintf(sa, sizeof(sa), "%s", op_state(oa));
					snprintf(sb, sizeof(sb), "%s", op_state(ob));
				} else if (l == 1) {
					snprintf(sa, sizeof(sa), "routed: %s", jv_str(jv_get(oa, "action"), "?"));
					snprintf(sb, sizeof(sb), ob ? "routed: %s" : "not routed", jv_str(jv_get(ob, "action"), "?"));
				} else {
					int x = jv_bool(jv_get(oa, "ok")), y = ob ? jv_bool(jv_get(ob, "ok")) : -1;
					snprintf(sa, sizeof(sa), "gradient %s", x == 1 ? "ok" : x == 0 ? "fails" : "not run");
					snprintf(sb, sizeof(sb), "gradient %s", y == 1 ? "ok" : y == 0 ? "fails" : "not run");
				}
				if (!strcmp(sa, sb))
					continue;
				out[n].what = name;
				snprintf(side ? out[n].new_ : out[n].old, sizeof(sa), "%s", sa);
				snprintf(side ? out[n].old : out[n].new_, sizeof(sb), "%s", sb);
				n++;
			}
		}
	return n;
}

typedef struct {
	char what[64];
	double old, new_, ratio; /* ratio: the newer driver's speed / the older's (>1: faster) */
	const char *unit;
} speed;

/* every workload both ran: roofline points, training runs, the peaks and the cold compile */
static int speeds(const generation *g, speed *out, int max)
{
	static const struct { const char *path, *what, *unit; int time; } peaks[] = {
		{"peaks.fp32_gflops", "peak fp32", "GFLOP/s", 0}, {"peaks.bandwidth_gbs", "peak bandwidth", "GB/s", 0},
		{"peaks.launch_latency_us", "launch latency", "us", 1}, {"peaks.fft_gflops", "fft c2c 1024", "GFLOP/s", 0},
		{"compile.total_cold_s", "cold compile", "s", 1},
	};
	const jv *po = jv_path(g->old->sections, "roofline.points"), *pn = jv_path(g->new_->sections, "roofline.points");
	const jv *ro = jv_path(g->old->sections, "train.runs"), *rn = jv_path(g->new_->sections, "train.runs");
	int n = 0;

	for (size_t k = 0; k < sizeof(peaks) / sizeof(peaks[0]) && n < max; k++) {
		double a = cmp_sec_num(g->old, peaks[k].path), b = cmp_sec_num(g->new_, peaks[k].path);
		if (!(a > 0 && b > 0))
			continue;
		out[n] = (speed){"", a, b, peaks[k].time ? a / b : b / a, peaks[k].unit};
		snprintf(out[n++].what, sizeof(out[0].what), "%s", peaks[k].what);
	}
	for (int k = 0; k < jv_len(ro) && n < max; k++) {
		const char *model = jv_str(jv_get(jv_at(ro, k), "model"), "?");
		double a = jv_num(jv_get(jv_at(ro, k), "samples_per_s"));
		double b = jv_num(jv_get(find_named(rn, "model", model), "samples_per_s"));
		if (!(a > 0 && b > 0))
			continue;
		out[n] = (speed){"", a, b, b / a, "samples/s"};
		snprintf(out[n++].what, sizeof(out[0].what), "train %s", model);
	}
	for (int k = 0; k < jv_len(po) && n < max; k++) {
		const char *name = jv_str(jv_get(jv_at(po, k), "name"), "?");
		double a = jv_num(jv_get(jv_at(po, k), "gflops"));
		double b = jv_num(jv_get(find_named(pn, "name", name), "gflops"));
		if (!(a > 0 && b > 0))
			continue;
		out[n] = (speed){"", a, b, b / a, "GFLOP/s"};
		snprintf(out[n++].what, sizeof(out[0].what), "%s", name);
	}
	return n;
}

/* ---- output -------------------------------------------------------------------------------- */

#define MAX_GEN 8
#define MAX_CHANGES 128
#define MAX_SPEEDS 64

void cmp_maturity_json(const cmp_run *r, json_writer *w)
{
	static stack s;
	static change ch[MAX_CHANGES];
	static speed sp[MAX_SPEEDS];
	generation g[MAX_GEN];
	int ng = generations(r, g, MAX_GEN);

	json_begin_object(w);
	json_key_num(w, "slow_fraction", CMP_SLOW_FRACTION);
	json_key(w, "stacks");
	json_begin_array(w);
	for (int i = 0; i < r->n; i++) {
		if (!is_stack(&r->dev[i]))
			continue;
		read_stack(&r->dev[i], &s);
		json_begin_object(w);
		json_key_int(w, "device", s.d->index);
		json_key_str(w, "label", s.d->label);
		json_key_str(w, "status", s.d->status);
		json_key_str(w, "verdict", s.verdict);
		json_key(w, "failed");
		json_begin_array(w);
		for (int k = 0; k < s.n_failed; k++) {
			json_begin_object(w);
			json_key_str(w, "what", s.failed[k].what);
			json_key_str(w, "detail", s.failed[k].text);
			json_end_object(w);
		}
		json_end_array(w);
		json_key(w, "routed");
		json_begin_array(w);
		for (int k = 0; k < s.n_routed; k++) {
			json_begin_object(w);
			json_key_str(w, "op", s.routed[k].what);
			json_key_str(w, "action", s.routed[k].text);
			json_key_str(w, "why", s.routed[k].why);
			json_key_str(w, "evidence", s.routed[k].evidence);
			json_end_object(w);
		}
		json_end_array(w);
		json_key_num(w, "median_fraction_of_peak", s.median_fraction);
		json_key(w, "slow");
		json_begin_array(w);
		for (int k = 0; k < s.n_slow; k++) {
			json_begin_object(w);
			json_key_str(w, "name", jv_str(jv_get(s.slow[k], "name"), "?"));
			json_key_num(w, "fraction_of_peak", jv_num(jv_get(s.slow[k], "fraction_of_peak")));
			json_key_num(w, "gflops", jv_num(jv_get(s.slow[k], "gflops")));
			json_key_num(w, "bound_gflops", jv_num(jv_get(s.slow[k], "bound_gflops")));
			json_end_object(w);
		}
		json_end_array(w);
		json_end_object(w);
	}
	json_end_array(w);
	json_key(w, "generations");
	json_begin_array(w);
	for (int k = 0; k < ng; k++) {
		int nc = changes(&g[k], ch, MAX_CHANGES), ns = speeds(&g[k], sp, MAX_SPEEDS);
		json_begin_object(w);
		json_key_str(w, "platform", g[k].old->platform);
		json_key_int(w, "old_device", g[k].old->index);
		json_key_str(w, "old_driver", g[k].old->driver);
		json_key_int(w, "new_device", g[k].new_->index);
		json_key_str(w, "new_driver", g[k].new_->driver);
		json_key(w, "changed");
		json_begin_array(w);
		for (int c = 0; c < nc; c++) {
			json_begin_object(w);
			json_key_str(w, "what", ch[c].what);
			json_key_str(w, "old", ch[c].old);
			json_key_str(w, "new", ch[c].new_);
			json_end_object(w);
		}
		json_end_array(w);
		json_key(w, "speed");
		json_begin_array(w);
		for (int c = 0; c < ns; c++) {
			json_begin_object(w);
			json_key_str(w, "what", sp[c].what);
			json_key_str(w, "unit", sp[c].unit);
			json_key_num(w, "old", sp[c].old);
			json_key_num(w, "new", sp[c].new_);
			json_key_num(w, "ratio", sp[c].ratio);
			json_end_object(w);
		}
		json_end_array(w);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

/* the geometric mean of the ratios, the one figure of a generation's speed */
static double geomean(const speed *sp, int n)
{
	double s = 0;
	for (int k = 0; k < n; k++)
		s += log(sp[k].ratio);
	return n ? exp(s / n) : NAN;
}

void cmp_maturity_print(const cmp_run *r, FILE *f, int markdown)
{
	static stack s;
	static change ch[MAX_CHANGES];
	static speed sp[MAX_SPEEDS];
	generation g[MAX_GEN];
	int ng = generations(r, g, MAX_GEN);
	const char *q = markdown ? "`" : "";

	fprintf(f, markdown ? "## Maturity\n\nPer stack: what fails, what is routed away (and why; every known-bad entry "
			      "with its minimal kernel and evidence: [docs/known-bad/](../known-bad/README.md)), which workloads "
			      "run below %.0f%% of the device's own roofline bound.\n\n" : "maturity (per stack; slow: below %.0f%% of its own peak):\n",
		100 * CMP_SLOW_FRACTION);
	for (int i = 0; i < r->n; i++) {
		if (!is_stack(&r->dev[i]))
			continue;
		read_stack(&r->dev[i], &s);
		fprintf(f, markdown ? "- **%d: %s**: %s\n" : "  %d: %s: %s\n", s.d->index, s.d->label, s.verdict);
		if (s.n_failed) {
			fprintf(f, markdown ? "  - fails: " : "      fails:  ");
			for (int k = 0; k < s.n_failed; k++)
				fprintf(f, "%s%s%s%s (%s)", k ? ", " : "", q, s.failed[k].what, q, s.failed[k].text);
			fputc('\n', f);
		}
		for (int k = 0; k < s.n_routed; k++)
			fprintf(f, markdown ? "  - routed: `%s` -> %s: %s%s%s%s\n" : "      routed: %s -> %s: %s%s%s%s\n",
				s.routed[k].what, s.routed[k].text, s.routed[k].why, s.routed[k].evidence[0] ? " (evidence: " : "",
				s.routed[k].evidence, s.routed[k].evidence[0] ? ")" : "");
		if (s.n_slow) {
			fprintf(f, markdown ? "  - slow: " : "      slow:   ");
			for (int k = 0; k < s.n_slow; k++)
				fprintf(f, "%s%s %.1f%% (%.3g of %.3g GFLOP/s)", k ? ", " : "", jv_str(jv_get(s.slow[k], "name"), "?"),
					100 * jv_num(jv_get(s.slow[k], "fraction_of_peak")), jv_num(jv_get(s.slow[k], "gflops")),
					jv_num(jv_get(s.slow[k], "bound_gflops")));
			fputc('\n', f);
		}
	}
	for (int k = 0; k < ng; k++) {
		int nc = changes(&g[k], ch, MAX_CHANGES), ns = speeds(&g[k], sp, MAX_SPEEDS);
		fprintf(f, markdown ? "\n### %s %s -> %s (devices %d and %d)\n\n" : "  %s %s -> %s (devices %d -> %d):\n",
			g[k].old->platform, g[k].old->driver, g[k].new_->driver, g[k].old->index, g[k].new_->index);
		fprintf(f, markdown ? "- features and ops that changed: " : "      changed: ");
		if (!nc)
			fprintf(f, "none (the same features; the same cases pass, fail and are routed)");
		for (int c = 0; c < nc; c++)
			fprintf(f, "%s%s%s%s %s -> %s", c ? "; " : "", q, ch[c].what, q, ch[c].old, ch[c].new_);
		fprintf(f, markdown ? "\n- speed, newer / older (>1: the newer driver is faster), geometric mean %.2f:\n\n"
				      "| workload | %s | %s | ratio |\n|---|---|---|---|\n" : "\n      speed new/old (geomean %.2f; %s -> %s): ",
			geomean(sp, ns), g[k].old->driver, g[k].new_->driver);
		for (int c = 0; c < ns; c++) {
			if (markdown)
				fprintf(f, "| %s | %.3g %s | %.3g %s | %.2f |\n", sp[c].what, sp[c].old, sp[c].unit, sp[c].new_,
					sp[c].unit, sp[c].ratio);
			else
				fprintf(f, "%s%s %.2f", c ? ", " : "", sp[c].what, sp[c].ratio);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
}

static void ratio_cell(FILE *f, double x)
{
	/* green where the newer driver is faster by more than 5 %, red where slower */
	fprintf(f, "<td class=\"%s\">%.2f</td>", x > 1.05 ? "ok" : x < 0.95 ? "bad" : "", x);
}

void cmp_maturity_html(const cmp_run *r, FILE *f, void (*esc)(FILE *, const char *))
{
	static stack s;
	static change ch[MAX_CHANGES];
	static speed sp[MAX_SPEEDS];
	generation g[MAX_GEN];
	int ng = generations(r, g, MAX_GEN);

	fprintf(f, "<h2 id=\"maturity\">Maturity</h2>\n<p class=\"meta\">Per stack, from the sections below: op cases, "
		   "gradient checks, builds and training runs that fail; ops the known-bad list or the self-test routed "
		   "away, with why (a known-bad entry links its minimal kernel and evidence: every entry is in "
		   "<a href=\"../known-bad/README.md\">docs/known-bad/</a>); workloads below %.0f%% of the "
		   "device's own roofline bound, min(fp32 peak, intensity &times; bandwidth).</p>\n"
		   "<table class=\"text\"><tr><th>stack</th><th>reading</th><th>fails</th><th>routed (why)</th>"
		   "<th>slow against its own peak</th></tr>\n", 100 * CMP_SLOW_FRACTION);
	for (int i = 0; i < r->n; i++) {
		if (!is_stack(&r->dev[i]))
			continue;
		read_stack(&r->dev[i], &s);
		fprintf(f, "<tr><td>%d: ", s.d->index);
		esc(f, s.d->label);
		fprintf(f, "</td><td class=\"%s\">", strcmp(s.d->status, "ok") || s.n_failed ? "bad" :
			s.n_routed || s.median_fraction < CMP_SLOW_MEDIAN ? "warn" : "ok");
		esc(f, s.verdict);
		fprintf(f, "</td><td>");
		if (!s.n_failed)
			fprintf(f, "none");
		for (int k = 0; k < s.n_failed; k++) {
			fprintf(f, "%s<code>", k ? "<br>" : "");
			esc(f, s.failed[k].what);
			fprintf(f, "</code> (");
			esc(f, s.failed[k].text);
			fprintf(f, ")");
		}
		if (strcmp(s.d->status, "ok")) {
			fprintf(f, "%s<b>%s</b>: ", s.n_failed ? "<br>" : " &middot; ", s.d->status);
			esc(f, s.d->detail);
		}
		fprintf(f, "</td><td>");
		if (!s.n_routed)
			fprintf(f, "none");
		for (int k = 0; k < s.n_routed; k++) {
			fprintf(f, "%s<code>", k ? "<br>" : "");
			esc(f, s.routed[k].what);
			fprintf(f, "</code> &rarr; ");
			esc(f, s.routed[k].text);
			fprintf(f, ": ");
			esc(f, s.routed[k].why);
			if (s.routed[k].evidence[0]) {
				/* the report lives in docs/reports/: the evidence folder is ../known-bad/NAME */
				fprintf(f, " <a href=\"../%s/\">evidence</a>", s.routed[k].evidence + strlen("docs/"));
			}
		}
		fprintf(f, "</td><td>");
		if (isfinite(s.median_fraction))
			fprintf(f, "median %.0f%% of %d workloads", 100 * s.median_fraction, s.n_points);
		else
			fprintf(f, "-");
		for (int k = 0; k < s.n_slow; k++) {
			fprintf(f, "<br><code>");
			esc(f, jv_str(jv_get(s.slow[k], "name"), "?"));
			fprintf(f, "</code> %.1f%% (%.3g of %.3g GFLOP/s)", 100 * jv_num(jv_get(s.slow[k], "fraction_of_peak")),
				jv_num(jv_get(s.slow[k], "gflops")), jv_num(jv_get(s.slow[k], "bound_gflops")));
		}
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
	for (int k = 0; k < ng; k++) {
		int nc = changes(&g[k], ch, MAX_CHANGES), ns = speeds(&g[k], sp, MAX_SPEEDS);
		fprintf(f, "<h3>");
		esc(f, g[k].old->platform);
		fprintf(f, " ");
		esc(f, g[k].old->driver);
		fprintf(f, " &rarr; ");
		esc(f, g[k].new_->driver);
		fprintf(f, " (devices %d and %d)</h3>\n<p>Features, and ops that pass, fail or are routed differently: ", g[k].old->index,
			g[k].new_->index);
		if (!nc)
			fprintf(f, "<span class=\"ok\">none</span> (the same cases pass, fail and are routed).");
		for (int c = 0; c < nc; c++) {
			fprintf(f, "%s<code>", c ? "; " : "");
			esc(f, ch[c].what);
			fprintf(f, "</code> ");
			esc(f, ch[c].old);
			fprintf(f, " &rarr; ");
			esc(f, ch[c].new_);
		}
		fprintf(f, "</p>\n<p class=\"meta\">Speed of the newer driver over the older, per workload (&gt;1: faster; "
			   "times inverted); geometric mean <b>%.2f</b>.</p>\n<table><tr><th>workload</th><th>", geomean(sp, ns));
		esc(f, g[k].old->driver);
		fprintf(f, "</th><th>");
		esc(f, g[k].new_->driver);
		fprintf(f, "</th><th>unit</th><th>newer / older</th></tr>\n");
		for (int c = 0; c < ns; c++) {
			char a[32], b[32];
			cmp_fmt(a, sizeof(a), sp[c].old, -1);
			cmp_fmt(b, sizeof(b), sp[c].new_, -1);
			fprintf(f, "<tr><td>");
			esc(f, sp[c].what);
			fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td>", a, b, sp[c].unit);
			ratio_cell(f, sp[c].ratio);
			fprintf(f, "</tr>\n");
		}
		fprintf(f, "</table>\n");
	}
}
