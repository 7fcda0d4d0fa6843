/* clgrad compare: report.html, one self-contained file (inline CSS and SVG, no scripts, nothing
 * fetched): summary and scores, bars per workload across devices, a log-log roofline per device
 * and the op-coverage matrix. */
#define _GNU_SOURCE
#include "compare_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948", "#9c755f"};

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static const char *status_class(const char *status)
{
	return !strcmp(status, "ok") ? "ok" : !strcmp(status, "partial") ? "warn" : "bad";
}

/* a number for display: 3 significant digits, "-" when missing */
static const char *num(char *buf, double x)
{
	if (!isfinite(x))
		return "-";
	if (fabs(x) >= 1000)
		snprintf(buf, 32, "%.0f", x);
	else
		snprintf(buf, 32, "%.3g", x);
	return buf;
}

static void score_cell(FILE *f, double s)
{
	char b[32];
	if (!isfinite(s)) {
		fputs("<td class=\"na\">-</td>", f);
		return;
	}
	/* red (0) to green (100) through yellow */
	int hue = (int)(1.2 * s);
	fprintf(f, "<td style=\"background:hsl(%d,70%%,80%%)\">%s</td>", hue, num(b, round(s)));
}

/* ---- horizontal bars, one per device ------------------------------------------------------- */

static void bar_chart(FILE *f, const cmp_run *r, const char *title, const double *v, int lower_is_better)
{
	const int w = 580, label_w = 310, row_h = 22, top = 26; /* label_w: 40 characters of short_label */
	double max = 0;
	char b[32];
	int any = 0;

	for (int i = 0; i < r->n; i++)
		if (isfinite(v[i]) && v[i] > 0) {
			max = fmax(max, v[i]);
			any = 1;
		}
	fprintf(f, "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
		w, top + r->n * row_h + 6, w, top + r->n * row_h + 6);
	fprintf(f, "<text x=\"0\" y=\"16\" class=\"t\">");
	esc(f, title);
	fprintf(f, "%s</text>\n", lower_is_better ? " (lower is better)" : "");
	for (int i = 0; i < r->n; i++) {
		int y = top + i * row_h;
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"l\" text-anchor=\"end\">%d: ", label_w - 6, y + 15, r->dev[i].index);
		/* "PoCL 3.1 · device": which stack, cut to the label area's 40 characters (the whole label on hover) */
		esc(f, r->dev[i].short_label);
		fprintf(f, "<title>");
		esc(f, r->dev[i].label);
		fprintf(f, "</title></text>\n");
		if (!any || !isfinite(v[i]) || v[i] <= 0) {
			fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"na\">no data</text>\n", label_w + 4, y + 15);
			continue;
		}
		double len = (w - label_w - 70) * v[i] / max;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s</title></rect>\n",
			label_w, y + 3, fmax(len, 1), row_h - 6, palette[i % 8], num(b, v[i]));
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"v\">%s</text>\n", label_w + fmax(len, 1) + 4, y + 15, num(b, v[i]));
	}
	fprintf(f, "</svg>\n");
}

static void bars_from_path(FILE *f, const cmp_run *r, const char *title, const char *path, int lower)
{
	double v[CMP_MAX_DEVICES];
	for (int i = 0; i < r->n; i++)
		v[i] = cmp_sec_num(&r->dev[i], path);
	bar_chart(f, r, title, v, lower);
}

/* ---- roofline: log-log, FLOP/byte against GFLOP/s ------------------------------------------ */

static void roofline(FILE *f, const cmp_device *d)
{
	const jv *pts = jv_path(d->sections, "roofline.points");
	double peak = cmp_sec_num(d, "peaks.fp32_gflops"), bw = cmp_sec_num(d, "peaks.bandwidth_gbs");
	double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
	const int W = 420, H = 300, L = 56, R = 14, T = 28, B = 40;
	char b[32];

	for (int i = 0; i < jv_len(pts); i++) {
		double x = jv_num(jv_get(jv_at(pts, i), "intensity")), y = jv_num(jv_get(jv_at(pts, i), "gflops"));
		if (isfinite(x) && x > 0 && isfinite(y) && y > 0) {
			xmin = fmin(xmin, x), xmax = fmax(xmax, x);
			ymin = fmin(ymin, y), ymax = fmax(ymax, y);
		}
	}
	if (isfinite(peak) && peak > 0) {
		ymax = fmax(ymax, peak);
		ymin = fmin(ymin, peak / 100);
		if (isfinite(bw) && bw > 0)
			xmin = fmin(xmin, peak / bw / 8), xmax = fmax(xmax, peak / bw * 8);
	}
	fprintf(f, "<figure class=\"roof\"><svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H, W, H);
	/* the label cut to the plot's width (the whole one on hover, and in the summary) */
	fprintf(f, "<text x=\"4\" y=\"16\" class=\"t\">%d: ", d->index);
	esc(f, d->short_label);
	fprintf(f, "<title>");
	esc(f, d->label);
	fprintf(f, "</title></text>\n");
	if (!isfinite(xmin) || !isfinite(ymin)) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"na\">no roofline data</text></svg></figure>\n", L, H / 2);
		return;
	}
	/* whole decades around the data, with room so no point sits on the frame */
	double lx0 = floor(log10(xmin) - 0.15), lx1 = ceil(log10(xmax) + 0.15);
	double ly0 = floor(log10(ymin) - 0.15), ly1 = ceil(log10(ymax) + 0.3);
	if (lx1 <= lx0)
		lx1 = lx0 + 1;
	if (ly1 <= ly0)
		ly1 = ly0 + 1;
#define PX(x) (L + (log10(x) - lx0) / (lx1 - lx0) * (W - L - R))
#define PY(y) (H - B - (log10(y) - ly0) / (ly1 - ly0) * (H - T - B))
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", L, T, W - L - R, H - T - B);
	for (double e = lx0; e <= lx1 + 1e-9; e++) {
		double x = PX(pow(10, e));
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>", x, T, x, H - B);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">%g</text>\n", x, H - B + 14, pow(10, e));
	}
	for (double e = ly0; e <= ly1 + 1e-9; e++) {
		double y = PY(pow(10, e));
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>", L, y, W - R, y);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"ax\" text-anchor=\"end\">%g</text>\n", L - 4, y + 4, pow(10, e));
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">FLOP/byte</text>\n", (L + W - R) / 2, H - 6);
	fprintf(f, "<text x=\"12\" y=\"%d\" class=\"ax\" transform=\"rotate(-90 12 %d)\" text-anchor=\"middle\">GFLOP/s</text>\n",
		(T + H - B) / 2, (T + H - B) / 2);
	if (isfinite(peak) && peak > 0) {
		double x0 = pow(10, lx0), x1 = pow(10, lx1), ridge = isfinite(bw) && bw > 0 ? peak / bw : x0;
		ridge = fmin(fmax(ridge, x0), x1);
		if (isfinite(bw) && bw > 0 && bw * x0 < peak) {
			/* the bandwidth slope, clipped to the plot */
			double xs = fmax(x0, pow(10, ly0) / bw);
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"roofline\"><title>bandwidth %s GB/s</title></line>\n",
				PX(xs), PY(bw * xs), PX(ridge), PY(peak), num(b, bw));
		}
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"roofline\"><title>fp32 peak %s GFLOP/s</title></line>\n",
			PX(ridge), PY(peak), PX(x1), PY(peak), num(b, peak));
		/* labels in the top corners, above the ceiling, where no point can be */
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\" text-anchor=\"end\">fp32 peak %s GFLOP/s</text>\n",
			W - R - 6, T + 14, num(b, peak));
		if (isfinite(bw) && bw > 0)
			fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\">%s GB/s</text>\n", L + 6, T + 14, num(b, bw));
		else
			fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"ax\">bandwidth not measured: no slope</text>\n",
				L + 6, T + 14);
	}
	for (int i = 0; i < jv_len(pts); i++) {
		const jv *p = jv_at(pts, i);
		double x = jv_num(jv_get(p, "intensity")), y = jv_num(jv_get(p, "gflops"));
		const char *kind = jv_str(jv_get(p, "kind"), "");
		if (!(isfinite(x) && x > 0 && isfinite(y) && y > 0))
			continue;
		const char *fill = !strcmp(kind, "gemm") ? "#4e79a7" : !strcmp(kind, "conv") ? "#f28e2b" : "#59a14f";
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\" stroke=\"#222\" stroke-width=\"0.6\"><title>",
			PX(x), PY(y), fill);
		esc(f, jv_str(jv_get(p, "name"), "?"));
		fprintf(f, " (%s): %s GFLOP/s, ", kind, num(b, y));
		fprintf(f, "%s FLOP/byte, ", num(b, x));
		fprintf(f, "%s%% of the roofline</title></circle>\n", num(b, 100 * jv_num(jv_get(p, "fraction_of_peak"))));
	}
#undef PX
#undef PY
	fprintf(f, "</svg><figcaption><span class=\"dot\" style=\"background:#4e79a7\"></span>gemm "
		   "<span class=\"dot\" style=\"background:#f28e2b\"></span>conv "
		   "<span class=\"dot\" style=\"background:#59a14f\"></span>elementwise</figcaption></figure>\n");
}

/* ---- op coverage: ops x devices -------------------------------------------------------------- */

static const jv *find_by(const jv *arr, const char *key, const char *value)
{
	for (int i = 0; i < jv_len(arr); i++)
		if (!strcmp(jv_str(jv_get(jv_at(arr, i), key), ""), value))
			return jv_at(arr, i);
	return NULL;
}

static void op_matrix(FILE *f, const cmp_run *r)
{
	const char *ops[512];
	int n = 0;

	for (int i = 0; i < r->n; i++) {
		const jv *list = jv_path(r->dev[i].sections, "ops.ops");
		for (int k = 0; k < jv_len(list) && n < 512; k++) {
			const char *op = jv_str(jv_get(jv_at(list, k), "op"), NULL);
			int seen = 0;
			for (int j = 0; j < n && op && !seen; j++)
				seen = !strcmp(ops[j], op);
			if (op && !seen)
				ops[n++] = op;
		}
	}
	if (!n) {
		fprintf(f, "<p class=\"na\">No op results (the ops section did not run or could not run on any device).</p>\n");
		return;
	}
	fprintf(f, "<p class=\"legend\"><span class=\"c pass\">pass</span> <span class=\"c fail\">fail</span> "
		   "<span class=\"c uns\">unsupported</span> <span class=\"c routed\">routed (self-test / known-bad list)</span> "
		   "<span class=\"c none\">no data</span>; cells show passing/all cases.</p>\n");
	fprintf(f, "<div class=\"scroll\"><table class=\"matrix\"><tr><th>op</th>");
	for (int i = 0; i < r->n; i++) { /* columns of one width: the short label, the whole one on hover */
		fprintf(f, "<th class=\"c\" title=\"");
		esc(f, r->dev[i].label);
		fprintf(f, "\">%d: ", r->dev[i].index);
		esc(f, r->dev[i].short_label);
		fprintf(f, "</th>");
	}
	fprintf(f, "</tr>\n");
	for (int j = 0; j < n; j++) {
		fprintf(f, "<tr><td class=\"op\">");
		esc(f, ops[j]);
		fprintf(f, "</td>");
		for (int i = 0; i < r->n; i++) {
			const jv *o = find_by(jv_path(r->dev[i].sections, "ops.ops"), "op", ops[j]);
			const jv *rt = find_by(jv_path(r->dev[i].sections, "ops.routed"), "op", ops[j]);
			double p = jv_num(jv_get(o, "pass")), fl = jv_num(jv_get(o, "fail")), u = jv_num(jv_get(o, "unsupported"));
			const char *cls = !o ? "none" : fl > 0 ? "fail" : rt ? "routed" : p > 0 ? "pass" : u > 0 ? "uns" : "none";
			fprintf(f, "<td class=\"c %s\" title=\"", cls);
			if (o)
				fprintf(f, "pass %g, fail %g, unsupported %g, worst error %.3g (threshold %.3g)", p, fl, u,
					jv_num(jv_get(o, "worst_err")), jv_num(jv_get(o, "threshold")));
			if (rt) {
				fprintf(f, "; routed: %s: ", jv_str(jv_get(rt, "action"), "?"));
				esc(f, jv_str(jv_get(rt, "why"), ""));
			}
			fprintf(f, "\">");
			if (o && isfinite(p))
				fprintf(f, "%g/%g", p, p + (isfinite(fl) ? fl : 0) + (isfinite(u) ? u : 0));
			else
				fprintf(f, "-");
			fprintf(f, "</td>");
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table></div>\n");
}

static void section_notes(FILE *f, const cmp_run *r)
{
	static const char *names[] = {"capabilities", "peaks", "compile", "roofline", "ops", "train"};
	int any = 0;
	for (int i = 0; i < r->n; i++) {
		const cmp_device *d = &r->dev[i];
		if (d->detail[0]) {
			fprintf(f, "%s<li><b>device %d</b> %s: ", any++ ? "" : "<ul class=\"notes\">", d->index, d->status);
			esc(f, d->detail);
			fprintf(f, " (log <code>");
			esc(f, d->log);
			fprintf(f, "</code>)</li>\n");
		}
		for (int s = 0; s < 6; s++) {
			const jv *sec = cmp_section(d, names[s]);
			if (sec && !cmp_section_ok(d, names[s])) {
				fprintf(f, "%s<li><b>device %d</b> section %s could not run: ", any++ ? "" : "<ul class=\"notes\">",
					d->index, names[s]);
				esc(f, jv_str(jv_get(sec, "error"), "(no message)"));
				fprintf(f, "</li>\n");
			}
		}
		const jv *progs = jv_path(d->sections, "compile.programs");
		for (int k = 0; k < jv_len(progs); k++) {
			const jv *p = jv_at(progs, k);
			if (jv_bool(jv_get(p, "ok")) != 0)
				continue;
			fprintf(f, "%s<li><b>device %d</b> kernel program <code>", any++ ? "" : "<ul class=\"notes\">", d->index);
			esc(f, jv_str(jv_get(p, "name"), "?"));
			fprintf(f, "</code> failed to build:<pre>");
			esc(f, jv_str(jv_get(p, "log"), "(no build log)"));
			fprintf(f, "</pre></li>\n");
		}
	}
	if (any)
		fprintf(f, "</ul>\n");
}

static const char *css =
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1200px;color:#222;padding:0 16px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}"
	".meta{color:#555;font-size:12px}code{font-size:12px}"
	"table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:3px 7px;text-align:right;font-size:13px}"
	"th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}table.text td,table.text th{text-align:left}"
	".ok{color:#1a7f37;font-weight:600}.warn{color:#b35900;font-weight:600}.bad{color:#c62828;font-weight:600}"
	".na{color:#999}.charts{display:flex;flex-wrap:wrap;gap:8px 28px}"
	"svg text{font:12px system-ui,sans-serif}svg .t{font-weight:600;font-size:13px}svg .na{fill:#999}svg .ax{fill:#555;font-size:11px}"
	"svg .frame{fill:#fcfcfc;stroke:#bbb}svg .grid{stroke:#e6e6e6}svg .roofline{stroke:#c62828;stroke-width:2}"
	".roofs{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0}figcaption{font-size:12px;color:#555;padding-left:56px}"
	".dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin:0 3px 0 8px}"
	".scroll{overflow-x:auto}table.matrix td.c,table.matrix th.c{text-align:center;min-width:90px}td.op{font-family:monospace}"
	".c.pass{background:#c8e6c9}.c.fail{background:#ef9a9a}.c.uns{background:#e0e0e0;color:#666}"
	".c.routed{background:#ffcc80}.c.none{background:#fafafa;color:#aaa}.legend .c{padding:1px 8px;border:1px solid #ddd}"
	"ul.notes li{margin:2px 0}pre{background:#f6f6f6;padding:6px;font-size:12px;overflow-x:auto;max-height:12em}";

int cmp_write_html(const cmp_run *r, const char *path)
{
	char tmp[1200], b[32], suites[64];
	double v[CMP_MAX_DEVICES];
	FILE *f = cmp_open_atomic(path, tmp, sizeof(tmp));
	static const char *models[] = {"mlp", "cnn", "transformer"};

	if (!f)
		return -1;
	cmp_suite_str(r->opt.suites, suites, sizeof(suites));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>clgrad compare</title>\n"
		   "<style>%s</style></head><body>\n<h1>clgrad compare</h1>\n<p class=\"meta\"><code>", css);
	esc(f, r->opt.command);
	fprintf(f, "</code> &middot; %s &middot; suites %s%s</p>\n", r->created, suites, r->opt.quick ? " (quick)" : "");

	fprintf(f, "<h2>Summary</h2>\n<table><tr><th>device</th><th>type</th><th>status</th><th>time s</th>"
		   "<th>ops pass/fail/unsup.</th><th>grad pass/fail</th><th>features</th><th>compile</th>"
		   "<th>correctness</th><th>performance</th><th>stability</th><th>overall</th></tr>\n");
	for (int i = 0; i < r->n; i++) {
		const cmp_device *d = &r->dev[i];
		char b2[32], b3[32];
		fprintf(f, "<tr><td>%d: ", d->index);
		esc(f, d->label);
		fprintf(f, "</td><td>%s</td><td class=\"%s\">%s</td><td>%s</td>", d->type, status_class(d->status),
			d->status, num(b, d->elapsed_s));
		fprintf(f, "<td>%s / %s / %s</td>", num(b, cmp_sec_num(d, "ops.totals.pass")),
			num(b2, cmp_sec_num(d, "ops.totals.fail")), num(b3, cmp_sec_num(d, "ops.totals.unsupported")));
		fprintf(f, "<td>%s / %s</td>", num(b, cmp_sec_num(d, "ops.totals.grad_pass")),
			num(b2, cmp_sec_num(d, "ops.totals.grad_fail")));
		score_cell(f, d->scores.features);
		score_cell(f, d->scores.compile);
		score_cell(f, d->scores.correctness);
		score_cell(f, d->scores.performance);
		score_cell(f, d->scores.stability);
		score_cell(f, d->scores.overall);
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n<p class=\"meta\">Scores 0..100, - where a category has no data; the rules are in "
		   "docs/COMPARE.md.</p>\n");
	section_notes(f, r);
	cmp_maturity_html(r, f, esc);
	cmp_machines_html(r, f, esc);
	cmp_vendors_html(r, f, esc);

	fprintf(f, "<h2 id=\"peaks\">Peaks</h2>\n<div class=\"charts\">\n");
	bars_from_path(f, r, "fp32 GFLOP/s", "peaks.fp32_gflops", 0);
	bars_from_path(f, r, "memory bandwidth GB/s", "peaks.bandwidth_gbs", 0);
	bars_from_path(f, r, "host to device GB/s", "peaks.h2d_gbs", 0);
	bars_from_path(f, r, "device to host GB/s", "peaks.d2h_gbs", 0);
	bars_from_path(f, r, "launch latency us", "peaks.launch_latency_us", 1);
	bars_from_path(f, r, "fft GFLOP/s (c2c 1024)", "peaks.fft_gflops", 0);
	fprintf(f, "</div>\n<h2 id=\"train\">Training</h2>\n<div class=\"charts\">\n");
	for (int m = 0; m < 3; m++) {
		char title[64];
		for (int i = 0; i < r->n; i++)
			v[i] = cmp_train_samples(&r->dev[i], models[m]);
		snprintf(title, sizeof(title), "%s: samples/s", models[m]);
		bar_chart(f, r, title, v, 0);
	}
	fprintf(f, "</div>\n<h2 id=\"compile\">Compile</h2>\n<div class=\"charts\">\n");
	bars_from_path(f, r, "all programs, cold build s", "compile.total_cold_s", 1);
	bars_from_path(f, r, "all programs, from cache s", "compile.total_warm_s", 1);
	fprintf(f, "</div>\n<h2 id=\"roofline\">Roofline</h2>\n<div class=\"roofs\">\n");
	for (int i = 0; i < r->n; i++)
		roofline(f, &r->dev[i]);
	fprintf(f, "</div>\n<h2 id=\"ops\">Op coverage</h2>\n");
	op_matrix(f, r);
	if (r->baseline) {
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		if (mem) {
			cmp_baseline_print(r, mem, 0);
			fclose(mem);
			fprintf(f, "<h2>Changes against the baseline</h2>\n<pre>");
			esc(f, text);
			fprintf(f, "</pre>\n");
			free(text);
		}
	}
	fprintf(f, "<p class=\"meta\">report.json holds every figure; report.md the same in text.</p>\n</body></html>\n");
	return cmp_commit(f, tmp, path);
}
