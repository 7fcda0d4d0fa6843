/* clgrad sweep: each run's result file, and the results table (terminal, markdown, JSON) and the
 * HTML page with the loss curves as inline SVG. */
#define _GNU_SOURCE
#include "compare_internal.h" /* cmp_open_atomic, cmp_commit */
#include "json_read.h"
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void run_path(const sweep *s, const sweep_run *r, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/runs/%s/%s", s->out, r->id, name);
}

static void add_epoch(sweep_run *r, const jv *line)
{
	const jv *val = jv_get(line, "val_loss");
	int epoch = (int)jv_num(jv_get(line, "epoch")), k;

	if (!(epoch >= 1 && epoch <= SWEEP_MAX_EPOCHS))
		return;
	for (k = 0; k < r->n_epochs && r->ep[k].epoch != epoch; k++)
		;
	if (k == r->n_epochs) {
		if (k == SWEEP_MAX_EPOCHS)
			return;
		r->n_epochs++;
	}
	r->lm = val != NULL;
	r->ep[k] = (sweep_epoch){.epoch = epoch, .train_loss = jv_num(jv_get(line, "train_loss")),
				 .test_loss = val ? jv_num(val) : jv_num(jv_get(line, "test_loss")),
				 .test_acc = val ? NAN : jv_num(jv_get(line, "test_acc"))};
}

void sweep_read_log(const sweep *s, sweep_run *r)
{
	char path[4200], line[8192], err[64];
	FILE *f;

	r->n_epochs = 0;
	run_path(s, r, "log.jsonl", path, sizeof(path));
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		jv *v = jv_parse(line, err, sizeof(err));
		if (v)
			add_epoch(r, v);
		jv_free(v);
	}
	fclose(f);
}

static void write_epochs(json_writer *w, const sweep_run *r)
{
	json_key(w, "epochs");
	json_begin_array(w);
	for (int e = 0; e < r->n_epochs; e++) {
		json_begin_object(w);
		json_key_int(w, "epoch", r->ep[e].epoch);
		json_key_num(w, "train_loss", r->ep[e].train_loss);
		json_key_num(w, r->lm ? "val_loss" : "test_loss", r->ep[e].test_loss);
		if (!r->lm)
			json_key_num(w, "test_acc", r->ep[e].test_acc);
		json_end_object(w);
	}
	json_end_array(w);
}

static void write_run(json_writer *w, const sweep_run *r)
{
	json_begin_object(w);
	json_key_str(w, "id", r->id);
	json_key_str(w, "label", r->label);
	json_key(w, "args");
	json_begin_array(w);
	for (int k = 0; k < r->argc; k++)
		json_str(w, r->argv[k]);
	json_end_array(w);
	json_key_str(w, "status", r->status);
	json_key_str(w, "detail", r->detail);
	json_key_int(w, "device", r->device);
	json_key_str(w, "device_name", r->device_name);
	json_key_num(w, "seconds", r->seconds);
	json_key_bool(w, "language_model", r->lm);
	write_epochs(w, r);
	json_end_object(w);
}

int sweep_write_result(const sweep *s, const sweep_run *r)
{
	char path[4200], tmp[4300];
	json_writer w;
	FILE *f;

	run_path(s, r, "result.json", path, sizeof(path));
	if (!(f = cmp_open_atomic(path, tmp, sizeof(tmp))))
		return -1;
	json_init(&w, f, 1);
	write_run(&w, r);
	fputc('\n', f);
	return cmp_commit(f, tmp, path);
}

int sweep_load_result(const sweep *s, sweep_run *r)
{
	char path[4200], err[64];
	jv *v;
	const jv *eps;
	const char *status;

	run_path(s, r, "result.json", path, sizeof(path));
	if (!(v = jv_parse_file(path, err, sizeof(err))))
		return -1;
	status = jv_str(jv_get(v, "status"), NULL);
	if (!status || strcmp(jv_str(jv_get(v, "id"), ""), r->id)) {
		jv_free(v);
		return -1;
	}
	r->finished = 1;
	snprintf(r->status, sizeof(r->status), "%s", status);
	snprintf(r->detail, sizeof(r->detail), "%s", jv_str(jv_get(v, "detail"), ""));
	snprintf(r->device_name, sizeof(r->device_name), "%s", jv_str(jv_get(v, "device_name"), ""));
	r->device = (int)jv_num(jv_get(v, "device"));
	r->seconds = jv_num(jv_get(v, "seconds"));
	r->lm = jv_bool(jv_get(v, "language_model")) == 1;
	r->n_epochs = 0;
	eps = jv_get(v, "epochs");
	for (int e = 0; e < jv_len(eps); e++) {
		const jv *x = jv_at(eps, e);
		int epoch = (int)jv_num(jv_get(x, "epoch"));
		if (r->n_epochs == SWEEP_MAX_EPOCHS || !(epoch >= 1))
			break;
		r->ep[r->n_epochs++] = (sweep_epoch){
			.epoch = epoch, .train_loss = jv_num(jv_get(x, "train_loss")),
			.test_loss = jv_num(jv_get(x, r->lm ? "val_loss" : "test_loss")),
			.test_acc = r->lm ? NAN : jv_num(jv_get(x, "test_acc"))};
	}
	jv_free(v);
	return 0;
}

static const sweep_epoch *last_epoch(const sweep_run *r) { return r->n_epochs ? &r->ep[r->n_epochs - 1] : NULL; }

/* The best finished run: highest test accuracy, or lowest validation loss for language models. */
static int best_run(const sweep *s)
{
	int best = -1;
	for (int i = 0; i < s->n_runs; i++) {
		const sweep_epoch *e = last_epoch(&s->runs[i]), *b;
		if (!e || strcmp(s->runs[i].status, "ok"))
			continue;
		b = best >= 0 ? last_epoch(&s->runs[best]) : NULL;
		if (!b || (s->runs[i].lm ? e->test_loss < b->test_loss : e->test_acc > b->test_acc))
			best = i;
	}
	return best;
}

/* One row's cells, shared by the terminal and markdown tables. */
static void cells(const sweep_run *r, char metric[32], char loss[32], char secs[32])
{
	const sweep_epoch *e = last_epoch(r);
	snprintf(metric, 32, "-");
	snprintf(loss, 32, "-");
	snprintf(secs, 32, "%.1f", r->seconds);
	if (!e)
		return;
	if (r->lm)
		snprintf(metric, 32, "val loss %.4f", e->test_loss);
	else
		snprintf(metric, 32, "acc %.4f", e->test_acc);
	snprintf(loss, 32, "%.4f", e->train_loss);
}

void sweep_print_table(const sweep *s, FILE *f)
{
	int best = best_run(s);
	fprintf(f, "%-5s %-40s %-8s %-4s %-6s %-10s %-16s %8s  %s\n", "run", "options", "status", "dev", "epochs", "train loss",
		"result", "seconds", "detail");
	for (int i = 0; i < s->n_runs; i++) {
		const sweep_run *r = &s->runs[i];
		char metric[32], loss[32], secs[32];
		cells(r, metric, loss, secs);
		fprintf(f, "%-5s %-40s %-8s %-4d %-6d %-10s %-16s %8s  %s%s\n", r->id, r->label, r->status, r->device, r->n_epochs,
			loss, metric, secs, i == best ? "(best) " : "", r->detail);
	}
}

static void md_escape(FILE *f, const char *s)
{
	for (; *s; s++)
		fputs(*s == '|' ? "\\|" : (char[2]){*s, 0}, f);
}

static int write_markdown(const sweep *s, const char *path)
{
	char tmp[4300];
	FILE *f = cmp_open_atomic(path, tmp, sizeof(tmp));
	int best = best_run(s);

	if (!f)
		return -1;
	fprintf(f, "# clgrad sweep: %d runs\n\n| run | options | status | device | epochs | train loss | result | seconds | "
		   "detail |\n|---|---|---|---|---|---|---|---|---|\n", s->n_runs);
	for (int i = 0; i < s->n_runs; i++) {
		const sweep_run *r = &s->runs[i];
		char metric[32], loss[32], secs[32];
		cells(r, metric, loss, secs);
		fprintf(f, "| %s | %s | %s | %d | %d | %s | %s | %s | %s", r->id, r->label, r->status, r->device, r->n_epochs, loss,
			metric, secs, i == best ? "**best** " : "");
		md_escape(f, r->detail);
		fprintf(f, " |\n");
	}
	return cmp_commit(f, tmp, path);
}

static int write_json(const sweep *s, const char *path)
{
	char tmp[4300];
	json_writer w;
	FILE *f = cmp_open_atomic(path, tmp, sizeof(tmp));
	int best = best_run(s);

	if (!f)
		return -1;
	json_init(&w, f, 1);
	json_begin_object(&w);
	json_key_str(&w, "schema", "clgrad-sweep/1");
	json_key_int(&w, "n_runs", s->n_runs);
	json_key_str(&w, "best", best >= 0 ? s->runs[best].id : NULL);
	json_key(&w, "runs");
	json_begin_array(&w);
	for (int i = 0; i < s->n_runs; i++)
		write_run(&w, &s->runs[i]);
	json_end_array(&w);
	json_end_object(&w);
	fputc('\n', f);
	return cmp_commit(f, tmp, path);
}

static void html_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputs(*s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" : *s == '"' ? "&quot;" : (char[2]){*s, 0}, f);
}

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
				      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

/* One chart: a metric against the epoch, a line per run (runs without epochs are left out). */
static void svg_chart(FILE *f, const sweep *s, const char *title, int which)
{
	const int W = 560, H = 300, L = 56, R = 16, T = 28, B = 36;
	double lo = INFINITY, hi = -INFINITY;
	int max_epoch = 1;

	for (int i = 0; i < s->n_runs; i++)
		for (int e = 0; e < s->runs[i].n_epochs; e++) {
			double y = which ? s->runs[i].ep[e].test_loss : s->runs[i].ep[e].train_loss;
			if (isfinite(y)) {
				lo = fmin(lo, y);
				hi = fmax(hi, y);
			}
			if (s->runs[i].ep[e].epoch > max_epoch)
				max_epoch = s->runs[i].ep[e].epoch;
		}
	fprintf(f, "<figure><svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"18\" class=\"t\">%s</text>\n", L, title);
	fprintf(f, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", L, T, W - L - R, H - T - B);
	if (!(hi >= lo)) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"na\">no finished epoch</text></svg></figure>\n", L + 10, H / 2);
		return;
	}
	if (hi - lo < 1e-9)
		hi = lo + 1e-3;
	for (int k = 0; k <= 4; k++) { /* horizontal grid with values */
		double v = lo + (hi - lo) * k / 4, y = H - B - (double)(H - T - B) * k / 4;
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/><text class=\"ax\" x=\"%d\" "
			   "y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", L, W - R, y, y, L - 4, y + 4, v);
	}
	for (int e = 1; e <= max_epoch; e++) {
		double x = L + (max_epoch == 1 ? 0.5 : (double)(e - 1) / (max_epoch - 1)) * (W - L - R);
		if (max_epoch <= 20 || e % 5 == 0 || e == 1)
			fprintf(f, "<text class=\"ax\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", x, H - B + 14, e);
	}
	fprintf(f, "<text class=\"ax\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">epoch</text>\n", (L + W - R) / 2, H - 6);
	for (int i = 0; i < s->n_runs; i++) {
		const sweep_run *r = &s->runs[i];
		const char *color = palette[i % (int)(sizeof(palette) / sizeof(palette[0]))];
		if (!r->n_epochs)
			continue;
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", color,
			strcmp(r->status, "ok") ? " stroke-dasharray=\"4 3\"" : "");
		for (int e = 0; e < r->n_epochs; e++) {
			double y = which ? r->ep[e].test_loss : r->ep[e].train_loss;
			double px = L + (max_epoch == 1 ? 0.5 : (double)(r->ep[e].epoch - 1) / (max_epoch - 1)) * (W - L - R);
			if (isfinite(y))
				fprintf(f, "%.1f,%.1f ", px, H - B - (y - lo) / (hi - lo) * (H - T - B));
		}
		fprintf(f, "\"><title>");
		html_text(f, r->id);
		fputc(' ', f);
		html_text(f, r->label);
		fprintf(f, "</title></polyline>\n");
	}
	fprintf(f, "</svg></figure>\n");
}

static int write_html(const sweep *s, const char *path)
{
	char tmp[4300];
	FILE *f = cmp_open_atomic(path, tmp, sizeof(tmp));
	int best = best_run(s), lm = 0;

	if (!f)
		return -1;
	for (int i = 0; i < s->n_runs; i++)
		lm |= s->runs[i].lm;
	fprintf(f, "<!doctype html><html><head><meta charset=\"utf-8\"><title>clgrad sweep</title><style>"
		   "body{font:14px system-ui,sans-serif;margin:24px}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
		   "padding:3px 8px;text-align:left}tr.bad td{background:#fde2e2}tr.best td{background:#e3f4e1}"
		   ".sw{display:inline-block;width:14px;height:4px;vertical-align:middle}figure{display:inline-block;margin:8px}"
		   "svg text{font:12px system-ui,sans-serif}svg .t{font-weight:600;font-size:13px}svg .na{fill:#999}"
		   "svg .ax{fill:#555;font-size:11px}svg .frame{fill:#fcfcfc;stroke:#bbb}svg .grid{stroke:#e6e6e6}"
		   "</style></head><body>\n<h1>clgrad sweep: %d runs</h1>\n", s->n_runs);
	svg_chart(f, s, "training loss", 0);
	svg_chart(f, s, lm ? "validation / test loss" : "test loss", 1);
	fprintf(f, "<p>Dashed lines: runs that did not finish ok. Green row: the best run (highest test accuracy, or lowest "
		   "validation loss).</p>\n<table><tr><th></th><th>run</th><th>options</th><th>status</th><th>device</th>"
		   "<th>epochs</th><th>train loss</th><th>result</th><th>seconds</th><th>detail</th></tr>\n");
	for (int i = 0; i < s->n_runs; i++) {
		const sweep_run *r = &s->runs[i];
		char metric[32], loss[32], secs[32];
		cells(r, metric, loss, secs);
		fprintf(f, "<tr class=\"%s\"><td><span class=\"sw\" style=\"background:%s\"></span></td><td>%s</td><td>",
			i == best ? "best" : strcmp(r->status, "ok") ? "bad" : "",
			palette[i % (int)(sizeof(palette) / sizeof(palette[0]))], r->id);
		html_text(f, r->label);
		fprintf(f, "</td><td>%s</td><td>%d ", r->status, r->device);
		html_text(f, r->device_name);
		fprintf(f, "</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>", r->n_epochs, loss, metric, secs);
		html_text(f, r->detail);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n</body></html>\n");
	return cmp_commit(f, tmp, path);
}

int sweep_write_reports(const sweep *s)
{
	static const char *const names[] = {"results.json", "results.md", "results.html"};
	int (*writers[])(const sweep *, const char *) = {write_json, write_markdown, write_html};
	char path[4200];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", s->out, names[i]);
		if (writers[i](s, path)) {
			fprintf(stderr, "clgrad sweep: cannot write %s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}
