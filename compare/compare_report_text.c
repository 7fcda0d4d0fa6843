/* clgrad compare: the terminal summary table and report.md. */
#include "compare_internal.h"

#include <math.h>
#include <string.h>

static const char *section_names[] = {"capabilities", "peaks", "compile", "roofline", "ops", "train"};

static double max_divergence(const cmp_device *d)
{
	double worst = NAN;
	for (int k = 0; k < d->n_train; k++)
		if (isfinite(d->train_div[k]))
			worst = isfinite(worst) ? fmax(worst, d->train_div[k]) : d->train_div[k];
	return worst;
}

static void counts(char *buf, size_t len, const cmp_device *d, const char *a, const char *b, const char *c)
{
	char pa[64], pb[64], pc[64];
	double x, y, z;
	snprintf(pa, sizeof(pa), "ops.totals.%s", a);
	snprintf(pb, sizeof(pb), "ops.totals.%s", b);
	x = cmp_sec_num(d, pa);
	y = cmp_sec_num(d, pb);
	if (!isfinite(x) || !isfinite(y)) {
		snprintf(buf, len, "-");
		return;
	}
	if (!c) {
		snprintf(buf, len, "%.0f/%.0f", x, y);
		return;
	}
	snprintf(pc, sizeof(pc), "ops.totals.%s", c);
	z = cmp_sec_num(d, pc);
	snprintf(buf, len, "%.0f/%.0f/%.0f", x, y, isfinite(z) ? z : 0);
}

/* the summary row's cells, shared by the terminal and markdown tables (the label is the widest) */
#define CELL 360
enum { COL_IDX, COL_NAME, COL_STATUS, COL_OPS, COL_GRAD, COL_GFLOPS, COL_GBS, COL_COMPILE, COL_TRAIN,
       COL_DIV, COL_FEAT, COL_COMP, COL_CORR, COL_PERF, COL_STAB, COL_ALL, NCOL };
static const char *headers[NCOL] = {"idx", "device", "status", "ops p/f/u", "grad p/f", "fp32 GF/s",
				    "GB/s", "compile s", "mlp smp/s", "diverg.", "feat", "comp", "corr",
				    "perf", "stab", "overall"};

static void row(const cmp_device *d, char cells[NCOL][CELL])
{
	const cmp_scores *s = &d->scores;
	snprintf(cells[COL_IDX], CELL, "%d", d->index);
	snprintf(cells[COL_NAME], CELL, "%s", d->label);
	snprintf(cells[COL_STATUS], CELL, "%s", d->status);
	counts(cells[COL_OPS], CELL, d, "pass", "fail", "unsupported");
	counts(cells[COL_GRAD], CELL, d, "grad_pass", "grad_fail", NULL);
	cmp_fmt(cells[COL_GFLOPS], CELL, cmp_sec_num(d, "peaks.fp32_gflops"), -1);
	cmp_fmt(cells[COL_GBS], CELL, cmp_sec_num(d, "peaks.bandwidth_gbs"), -1);
	cmp_fmt(cells[COL_COMPILE], CELL, cmp_sec_num(d, "compile.total_cold_s"), 2);
	cmp_fmt(cells[COL_TRAIN], CELL, cmp_train_samples(d, "mlp"), 0);
	if (isfinite(max_divergence(d)))
		snprintf(cells[COL_DIV], CELL, "%.1e", max_divergence(d));
	else
		snprintf(cells[COL_DIV], CELL, "-");
	cmp_fmt(cells[COL_FEAT], CELL, s->features, 0);
	cmp_fmt(cells[COL_COMP], CELL, s->compile, 0);
	cmp_fmt(cells[COL_CORR], CELL, s->correctness, 0);
	cmp_fmt(cells[COL_PERF], CELL, s->performance, 0);
	cmp_fmt(cells[COL_STAB], CELL, s->stability, 0);
	cmp_fmt(cells[COL_ALL], CELL, s->overall, 0);
}

/* characters on screen: UTF-8 continuation bytes take no column (the label's middle dots) */
static int cols(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

static void cell(FILE *f, const char *s, int width, int left, int last)
{
	int pad = width - cols(s);
	if (!left)
		fprintf(f, "%*s", pad > 0 ? pad : 0, "");
	fputs(s, f);
	if (left && !last)
		fprintf(f, "%*s", pad > 0 ? pad : 0, "");
	fputs(last ? "\n" : "  ", f);
}

void cmp_print_table(const cmp_run *r, FILE *f)
{
	static char cells[CMP_MAX_DEVICES][NCOL][CELL];
	int width[NCOL];

	for (int c = 0; c < NCOL; c++)
		width[c] = cols(headers[c]);
	for (int i = 0; i < r->n; i++) {
		row(&r->dev[i], cells[i]);
		for (int c = 0; c < NCOL; c++)
			if (cols(cells[i][c]) > width[c])
				width[c] = cols(cells[i][c]);
	}
	fputc('\n', f);
	for (int c = 0; c < NCOL; c++)
		cell(f, headers[c], width[c], 1, c + 1 == NCOL);
	for (int i = 0; i < r->n; i++)
		for (int c = 0; c < NCOL; c++)
			cell(f, cells[i][c], width[c], c <= COL_STATUS, c + 1 == NCOL);
	for (int i = 0; i < r->n; i++) {
		const cmp_device *d = &r->dev[i];
		if (d->detail[0])
			fprintf(f, "device %d: %s: %s\n", d->index, d->status, d->detail);
		for (int s = 0; s < 6; s++) {
			const jv *sec = cmp_section(d, section_names[s]);
			if (sec && !cmp_section_ok(d, section_names[s]))
				fprintf(f, "device %d: section %s could not run: %s\n", d->index, section_names[s],
					jv_str(jv_get(sec, "error"), "(no message)"));
		}
		const jv *progs = jv_path(d->sections, "compile.programs");
		for (int k = 0; k < jv_len(progs); k++)
			if (jv_bool(jv_get(jv_at(progs, k), "ok")) == 0)
				fprintf(f, "device %d: kernel program %s failed to build (build log in report.md)\n",
					d->index, jv_str(jv_get(jv_at(progs, k), "name"), "?"));
	}
	cmp_machines_print(r, f, 0);
	cmp_vendors_print(r, f, 0);
	cmp_maturity_print(r, f, 0);
	fprintf(f, "scores 0..100 (docs/COMPARE.md): feat features, comp compile, corr correctness, perf "
		   "performance vs own peak, stab stability\n");
}

/* ---- report.md -------------------------------------------------------------------------------- */

static void md_num(FILE *f, double x, int digits)
{
	char b[64];
	cmp_fmt(b, sizeof(b), x, digits);
	fprintf(f, " %s |", b);
}

static void md_head(FILE *f, const cmp_run *r, const char *first)
{
	fprintf(f, "| %s |", first);
	for (int i = 0; i < r->n; i++)
		fprintf(f, " %d: %s |", r->dev[i].index, r->dev[i].label);
	fprintf(f, "\n|---|");
	for (int i = 0; i < r->n; i++)
		fprintf(f, "---|");
	fputc('\n', f);
}

static void md_row_num(FILE *f, const cmp_run *r, const char *label, const char *path, int digits)
{
	fprintf(f, "| %s |", label);
	for (int i = 0; i < r->n; i++)
		md_num(f, cmp_sec_num(&r->dev[i], path), digits);
	fputc('\n', f);
}

static void md_row_json(FILE *f, const cmp_run *r, const char *label, const char *path)
{
	fprintf(f, "| %s |", label);
	for (int i = 0; i < r->n; i++) {
		const jv *v = jv_path(r->dev[i].sections, path);
		if (jv_kind(v) == JV_NULL)
			fprintf(f, " - |");
		else if (jv_kind(v) == JV_BOOL)
			fprintf(f, " %s |", jv_bool(v) ? "yes" : "no");
		else if (jv_kind(v) == JV_STR)
			fprintf(f, " %s |", jv_str(v, ""));
		else if (jv_kind(v) == JV_NUM)
			md_num(f, jv_num(v), -1);
		else
			fprintf(f, " (%d) |", jv_len(v));
	}
	fputc('\n', f);
}

static void md_section_errors(FILE *f, const cmp_run *r, const char *name)
{
	for (int i = 0; i < r->n; i++) {
		const jv *sec = cmp_section(&r->dev[i], name);
		if (!sec)
			fprintf(f, "- device %d: no data (%s)\n", r->dev[i].index,
				strcmp(r->dev[i].status, "ok") && strcmp(r->dev[i].status, "partial") ?
				r->dev[i].status : "section not run");
		else if (!cmp_section_ok(&r->dev[i], name))
			fprintf(f, "- device %d: could not run: %s\n", r->dev[i].index,
				jv_str(jv_get(sec, "error"), "(no message)"));
		else if (jv_kind(jv_get(sec, "note")) == JV_STR)
			fprintf(f, "- device %d: note: %s\n", r->dev[i].index, jv_str(jv_get(sec, "note"), ""));
	}
	fputc('\n', f);
}

static void md_compile(FILE *f, const cmp_run *r)
{
	/* programs of the first device that has them, as rows */
	const jv *names = NULL;
	for (int i = 0; i < r->n && !names; i++)
		if (jv_len(jv_path(r->dev[i].sections, "compile.programs")))
			names = jv_path(r->dev[i].sections, "compile.programs");
	md_head(f, r, "program: cold s / warm s");
	for (int p = 0; p < jv_len(names); p++) {
		const char *name = jv_str(jv_get(jv_at(names, p), "name"), "?");
		fprintf(f, "| %s |", name);
		for (int i = 0; i < r->n; i++) {
			const jv *progs = jv_path(r->dev[i].sections, "compile.programs"), *hit = NULL;
			char c[32], w[32];
			for (int k = 0; k < jv_len(progs) && !hit; k++)
				if (!strcmp(jv_str(jv_get(jv_at(progs, k), "name"), ""), name))
					hit = jv_at(progs, k);
			if (!hit) {
				fprintf(f, " - |");
				continue;
			}
			cmp_fmt(c, sizeof(c), jv_num(jv_get(hit, "cold_s")), 3);
			cmp_fmt(w, sizeof(w), jv_num(jv_get(hit, "warm_s")), 3);
			fprintf(f, " %s%s / %s |", jv_bool(jv_get(hit, "ok")) == 0 ? "**FAILED** " : "", c, w);
		}
		fputc('\n', f);
	}
	md_row_num(f, r, "total cold s", "compile.total_cold_s", 2);
	md_row_num(f, r, "total warm s", "compile.total_warm_s", 3);
	md_row_json(f, r, "driver cache disabled", "compile.driver_cache_disabled");
	fputc('\n', f);
	for (int i = 0; i < r->n; i++) {
		const jv *progs = jv_path(r->dev[i].sections, "compile.programs");
		for (int k = 0; k < jv_len(progs); k++) {
			const jv *p = jv_at(progs, k);
			const char *log = jv_str(jv_get(p, "log"), "(no build log)");
			if (jv_bool(jv_get(p, "ok")) != 0)
				continue;
			fprintf(f, "Device %d, `%s` failed to build:\n\n```\n%.2000s\n```\n\n", r->dev[i].index,
				jv_str(jv_get(p, "name"), "?"), log);
		}
	}
}

static void md_ops(FILE *f, const cmp_run *r)
{
	for (int i = 0; i < r->n; i++) {
		const cmp_device *d = &r->dev[i];
		const jv *ops = jv_path(d->sections, "ops.ops"), *grad = jv_path(d->sections, "ops.grad");
		const jv *routed = jv_path(d->sections, "ops.routed");
		int shown = 0;
		if (!cmp_section(d, "ops"))
			continue;
		fprintf(f, "**device %d (%s)**: %.0f op cases pass, %.0f fail, %.0f unsupported; %.0f gradient cases pass, "
			   "%.0f fail. ", d->index, d->label, cmp_sec_num(d, "ops.totals.pass"), cmp_sec_num(d, "ops.totals.fail"),
			cmp_sec_num(d, "ops.totals.unsupported"), cmp_sec_num(d, "ops.totals.grad_pass"),
			cmp_sec_num(d, "ops.totals.grad_fail"));
		for (int k = 0; k < jv_len(ops); k++) {
			const jv *o = jv_at(ops, k);
			if (jv_num(jv_get(o, "fail")) > 0)
				fprintf(f, "%s `%s` (%g of %g, worst error %.3g, threshold %.3g)", shown++ ? "; failing" : "Failing",
					jv_str(jv_get(o, "op"), "?"), jv_num(jv_get(o, "fail")),
					jv_num(jv_get(o, "pass")) + jv_num(jv_get(o, "fail")),
					jv_num(jv_get(o, "worst_err")), jv_num(jv_get(o, "threshold")));
		}
		for (int k = 0; k < jv_len(grad); k++) {
			const jv *g = jv_at(grad, k);
			if (jv_bool(jv_get(g, "ok")) == 0)
				fprintf(f, "%s `%s` off (rel. error %.3g, tolerance %.3g)", shown++ ? "; gradient" : "Gradient",
					jv_str(jv_get(g, "case"), "?"), jv_num(jv_get(g, "worst_rel_err")),
					jv_num(jv_get(g, "tol")));
		}
		if (!shown)
			fprintf(f, "%s", jv_len(ops) ? "Every supported case passes" : "No cases");
		fprintf(f, ".\n");
		if (!jv_len(routed))
			fprintf(f, "- routed: none (no op sent to a fallback or marked unsupported by the self-test or "
				   "known-bad list)\n");
		for (int k = 0; k < jv_len(routed); k++) {
			const jv *o = jv_at(routed, k);
			fprintf(f, "- routed: `%s` -> %s: %s\n", jv_str(jv_get(o, "op"), "?"),
				jv_str(jv_get(o, "action"), "?"), jv_str(jv_get(o, "why"), ""));
		}
		fputc('\n', f);
	}
}

static void md_train(FILE *f, const cmp_run *r)
{
	fprintf(f, "| device | model | steps | batch | samples/s | step ms (median) | divergence vs ref | "
		   "repeat identical | error |\n|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < r->n; i++) {
		const cmp_device *d = &r->dev[i];
		const jv *runs = jv_path(d->sections, "train.runs");
		for (int k = 0; k < jv_len(runs); k++) {
			const jv *run = jv_at(runs, k);
			int rep = jv_bool(jv_get(run, "repeat_identical"));
			fprintf(f, "| %d | %s |", d->index, jv_str(jv_get(run, "model"), "?"));
			md_num(f, jv_num(jv_get(run, "steps")), 0);
			md_num(f, jv_num(jv_get(run, "batch")), 0);
			md_num(f, jv_num(jv_get(run, "samples_per_s")), -1); /* 3 significant digits */
			md_num(f, jv_num(jv_get(run, "step_ms_median")), 2);
			if (k < d->n_train && isfinite(d->train_div[k]))
				fprintf(f, " %.2e |", d->train_div[k]);
			else
				fprintf(f, " - |");
			fprintf(f, " %s | %s |\n", rep < 0 ? "-" : rep ? "yes" : "**no**",
				jv_str(jv_get(run, "error"), ""));
		}
	}
	fputc('\n', f);
}

static void md_roofline(FILE *f, const cmp_run *r)
{
	for (int i = 0; i < r->n; i++) {
		const jv *pts = jv_path(r->dev[i].sections, "roofline.points");
		if (!jv_len(pts))
			continue;
		fprintf(f, "**device %d (%s)**\n\n| workload | kind | GFLOP/s | GB/s | FLOP/byte | of roofline |\n"
			   "|---|---|---|---|---|---|\n", r->dev[i].index, r->dev[i].label);
		for (int k = 0; k < jv_len(pts); k++) {
			const jv *p = jv_at(pts, k);
			fprintf(f, "| %s | %s |", jv_str(jv_get(p, "name"), "?"), jv_str(jv_get(p, "kind"), "?"));
			md_num(f, jv_num(jv_get(p, "gflops")), -1);
			md_num(f, jv_num(jv_get(p, "gbs")), -1);
			md_num(f, jv_num(jv_get(p, "intensity")), -1);
			md_num(f, 100 * jv_num(jv_get(p, "fraction_of_peak")), 0);
			fputc('\n', f);
		}
		fputc('\n', f);
	}
}

int cmp_write_markdown(const cmp_run *r, const char *path)
{
	static char cells[CMP_MAX_DEVICES][NCOL][CELL];
	char tmp[1200], suites[64];
	FILE *f = cmp_open_atomic(path, tmp, sizeof(tmp));

	if (!f)
		return -1;
	cmp_suite_str(r->opt.suites, suites, sizeof(suites));
	fprintf(f, "# clgrad compare\n\n`%s`, %s, suites %s%s. Scores are 0..100; the rules are in "
		   "docs/COMPARE.md.\n\n", r->opt.command, r->created, suites, r->opt.quick ? " (quick)" : "");
	fprintf(f, "## Summary\n\n|");
	for (int c = 0; c < NCOL; c++)
		fprintf(f, " %s |", headers[c]);
	fprintf(f, "\n|");
	for (int c = 0; c < NCOL; c++)
		fprintf(f, "---|");
	fputc('\n', f);
	for (int i = 0; i < r->n; i++) {
		row(&r->dev[i], cells[i]);
		fputc('|', f);
		for (int c = 0; c < NCOL; c++)
			fprintf(f, " %s |", cells[i][c]);
		fputc('\n', f);
	}
	fputc('\n', f);
	for (int i = 0; i < r->n; i++)
		if (r->dev[i].detail[0])
			fprintf(f, "- device %d is **%s**: %s (log: %s)\n", r->dev[i].index, r->dev[i].status,
				r->dev[i].detail, r->dev[i].log);

	fputc('\n', f);
	cmp_maturity_print(r, f, 1);
	cmp_machines_print(r, f, 1);
	cmp_vendors_print(r, f, 1);
	fprintf(f, "## Capabilities\n\n");
	md_section_errors(f, r, "capabilities");
	md_head(f, r, "");
	md_row_json(f, r, "platform", "capabilities.platform");
	md_row_json(f, r, "platform vendor", "capabilities.platform_vendor");
	md_row_json(f, r, "platform version", "capabilities.platform_version");
	md_row_json(f, r, "device vendor", "capabilities.vendor");
	md_row_json(f, r, "OpenCL", "capabilities.cl_version");
	md_row_json(f, r, "driver", "capabilities.driver_version");
	md_row_json(f, r, "compute units", "capabilities.compute_units");
	md_row_json(f, r, "clock MHz", "capabilities.clock_mhz");
	md_row_json(f, r, "global memory", "capabilities.global_mem");
	md_row_json(f, r, "max alloc / global", "capabilities.max_alloc_ratio");
	md_row_json(f, r, "fp16", "capabilities.has_fp16");
	md_row_json(f, r, "fp64", "capabilities.has_fp64");
	md_row_json(f, r, "subgroups", "capabilities.has_subgroups");
	md_row_json(f, r, "integer dot product", "capabilities.has_int_dot");
	md_row_json(f, r, "IL (SPIR-V)", "capabilities.has_il");
	md_row_json(f, r, "program binary round trip", "capabilities.binary_roundtrip");

	fprintf(f, "\n## Peaks\n\n");
	md_section_errors(f, r, "peaks");
	md_head(f, r, "");
	md_row_num(f, r, "fp32 GFLOP/s", "peaks.fp32_gflops", -1);
	md_row_num(f, r, "fp16 GFLOP/s", "peaks.fp16_gflops", -1);
	md_row_num(f, r, "fp64 GFLOP/s", "peaks.fp64_gflops", -1);
	md_row_num(f, r, "bandwidth GB/s", "peaks.bandwidth_gbs", -1);
	md_row_num(f, r, "host to device GB/s", "peaks.h2d_gbs", -1);
	md_row_num(f, r, "device to host GB/s", "peaks.d2h_gbs", -1);
	md_row_num(f, r, "launch latency us", "peaks.launch_latency_us", -1);
	md_row_num(f, r, "fft GFLOP/s (c2c 1024)", "peaks.fft_gflops", -1);
	md_row_json(f, r, "fft path", "peaks.fft_path");
	md_row_json(f, r, "timings rejected", "peaks.rejected");

	fprintf(f, "\n## Compile\n\n");
	md_section_errors(f, r, "compile");
	md_compile(f, r);

	fprintf(f, "## Roofline\n\n");
	md_section_errors(f, r, "roofline");
	md_roofline(f, r);

	fprintf(f, "## Ops\n\n");
	md_section_errors(f, r, "ops");
	md_ops(f, r);

	fprintf(f, "## Train\n\n");
	md_section_errors(f, r, "train");
	md_train(f, r);

	fprintf(f, "## Scores\n\n| device | features | compile | correctness | performance | stability | overall |\n"
		   "|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < r->n; i++) {
		const cmp_scores *s = &r->dev[i].scores;
		fprintf(f, "| %d: %s |", r->dev[i].index, r->dev[i].label);
		md_num(f, s->features, 0);
		md_num(f, s->compile, 0);
		md_num(f, s->correctness, 0);
		md_num(f, s->performance, 0);
		md_num(f, s->stability, 0);
		md_num(f, s->overall, 0);
		fputc('\n', f);
	}
	if (r->baseline) {
		fprintf(f, "\n## Changes against the baseline\n\n");
		cmp_baseline_print(r, f, 1);
	}
	return cmp_commit(f, tmp, path);
}
