/* clgrad compare: what a run measured, so that --merge puts side by side only devices that ran
 * the same workload with the same clgrad.
 *
 * report.json holds "clgrad_version" and "workload":
 *   { "fingerprint": 16 hex digits, "mode": "quick"|"full", "suites": [...],
 *     "train_seed", "train": [{"model", "steps", "batch" (+ "seq_len", "dim", "heads", "layers")}]
 *       (with the train suite),
 *     "op_cases", "op_cases_hash", "grad_cases" (with the ops suite) }
 * Those members decide what every section runs (the per-device variants, such as the reference's
 * subset or a simulator's smallest sizes, follow from the device, not from the run). The
 * fingerprint is FNV-1a (64 bits) of the other members written compactly in that order. A run
 * writes them; --render-only and --merge copy what the reports recorded (nothing where they
 * recorded nothing: a re-rendered old run cannot be merged, rather than be passed off as this
 * build's workload). */
#define _GNU_SOURCE
#include "compare_internal.h"

#include "grad_suite.h"
#include "op_suite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

void cmp_suites_json(int bits, json_writer *w)
{
	char suites[64];

	cmp_suite_str(bits, suites, sizeof(suites));
	json_begin_array(w);
	for (char *s = suites, *c; *s; s = c + (*c == ',')) {
		char one[16];
		c = s + strcspn(s, ",");
		snprintf(one, sizeof(one), "%.*s", (int)(c - s), s);
		json_str(w, one);
	}
	json_end_array(w);
}

static void members(const cmp_opts *o, json_writer *w)
{
	char hash[24];

	json_key_str(w, "mode", o->quick ? "quick" : "full");
	json_key(w, "suites");
	cmp_suites_json(o->suites, w);
	if (o->suites & CMP_TRAIN)
		compare_train_workload(o->quick, w);
	if (o->suites & CMP_OPS) {
		snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)op_suite_case_hash());
		json_key_int(w, "op_cases", op_suite_case_count());
		json_key_str(w, "op_cases_hash", hash);
		json_key_int(w, "grad_cases", grad_suite_case_count());
	}
}

void cmp_workload_json(const cmp_run *r, json_writer *w)
{
	const jv *src = r->n_merged ? r->merged[0] : r->source;
	char *buf = NULL, hex[24] = "";
	size_t len = 0;
	json_writer mw;
	FILE *f;

	if (r->n_merged || r->from_dir) { /* what the run recorded, or nothing */
		if (jv_get(src, "clgrad_version")) {
			json_key(w, "clgrad_version");
			jv_write(w, jv_get(src, "clgrad_version"));
		}
		if (jv_get(src, "workload")) {
			json_key(w, "workload");
			jv_write(w, jv_get(src, "workload"));
		}
		return;
	}
	if ((f = open_memstream(&buf, &len))) {
		json_init(&mw, f, 0);
		json_begin_object(&mw);
		members(&r->opt, &mw);
		json_end_object(&mw);
		if (fclose(f) == 0)
			snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)fnv1a(buf, len));
		free(buf);
	}
	json_key_str(w, "clgrad_version", CLGRAD_VERSION);
	json_key(w, "workload");
	json_begin_object(w);
	json_key_str(w, "fingerprint", hex[0] ? hex : NULL);
	members(&r->opt, w);
	json_end_object(w);
}

/* A member as the refusal shows it: the runs as "mlp 8x32" (steps x batch), lists joined. */
static void describe(const char *key, const jv *v, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	if (!v) {
		snprintf(buf, len, "none");
	} else if (jv_kind(v) == JV_STR) {
		snprintf(buf, len, "%s", jv_str(v, ""));
	} else if (jv_kind(v) == JV_NUM) {
		snprintf(buf, len, "%.17g", jv_num(v));
	} else if (!strcmp(key, "train")) {
		for (int i = 0; i < jv_len(v) && used < len; i++) {
			const jv *run = jv_at(v, i);
			used += (size_t)snprintf(buf + used, len - used, "%s%s %.0fx%.0f", i ? ", " : "",
						 jv_str(jv_get(run, "model"), "?"), jv_num(jv_get(run, "steps")),
						 jv_num(jv_get(run, "batch")));
			if (used < len && jv_get(run, "dim"))
				used += (size_t)snprintf(buf + used, len - used, " t%.0f d%.0f h%.0f l%.0f",
							 jv_num(jv_get(run, "seq_len")), jv_num(jv_get(run, "dim")),
							 jv_num(jv_get(run, "heads")), jv_num(jv_get(run, "layers")));
		}
	} else if (jv_kind(v) == JV_ARR) {
		for (int i = 0; i < jv_len(v) && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "", jv_str(jv_at(v, i), "?"));
	} else {
		snprintf(buf, len, "(a %s)", jv_kind(v) == JV_OBJ ? "object" : "value");
	}
}

int cmp_workload_check(const jv *a, const char *afile, const jv *b, const char *bfile)
{
	static const char *const keys[] = {"mode", "suites", "train_seed", "train", "op_cases", "op_cases_hash",
					   "grad_cases"};
	const char *va = jv_str(jv_get(a, "clgrad_version"), NULL), *vb = jv_str(jv_get(b, "clgrad_version"), NULL);
	const jv *wa = jv_get(a, "workload"), *wb = jv_get(b, "workload");
	char diff[1024] = "", x[300], y[300];
	size_t used = 0;
	int members_differ = 0;

	if (!va || !vb || jv_kind(wa) != JV_OBJ || jv_kind(wb) != JV_OBJ) {
		clg_fail(CLG_ERR_INVALID, "--merge refused: %s and %s differ: %s records no clgrad version or "
			"workload (made before clgrad compare wrote them): run clgrad compare there again", afile, bfile,
			!va || jv_kind(wa) != JV_OBJ ? afile : bfile);
		return -1;
	}
	if (strcmp(va, vb))
		used += (size_t)snprintf(diff, sizeof(diff), "clgrad version %s vs %s", va, vb);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && used < sizeof(diff); k++) {
		describe(keys[k], jv_get(wa, keys[k]), x, sizeof(x));
		describe(keys[k], jv_get(wb, keys[k]), y, sizeof(y));
		if (strcmp(x, y)) {
			members_differ = 1;
			if (k > 1 && (!strcmp(x, "none") || !strcmp(y, "none")))
				continue; /* a suite's members, present on one side: the suites said it */
			used += (size_t)snprintf(diff + used, sizeof(diff) - used, "%s%s %s vs %s", used ? "; " : "",
						 !strcmp(keys[k], "train") ? "train runs" : keys[k], x, y);
		}
	}
	/* the fingerprint alone: a member this build does not know about differs */
	describe("fingerprint", jv_get(wa, "fingerprint"), x, sizeof(x));
	describe("fingerprint", jv_get(wb, "fingerprint"), y, sizeof(y));
	if (!members_differ && strcmp(x, y) && used < sizeof(diff))
		used += (size_t)snprintf(diff + used, sizeof(diff) - used, "%sworkload fingerprint %s vs %s",
					 used ? "; " : "", x, y);
	if (!used)
		return 0;
	clg_fail(CLG_ERR_INVALID, "--merge refused: %s and %s differ: %s (every machine must run the same "
		 "clgrad version with the same --quick and --suite)", afile, bfile, diff);
	return -1;
}

/* --merge: one row per report (machine): its hostname, CPU, OS, when it ran and which devices
 * (positions in the merged run) came from it. Each device row keeps its own driver in its label. */
static void machine_row(const cmp_run *r, int k, int *first, char *cpu, size_t len, int *last, char *os,
			size_t oslen)
{
	const jv *m = jv_get(r->merged[k], "machine");
	int n = jv_len(jv_get(r->merged[k], "devices"));

	/* the OS release where the report has it (a chroot shares the host's kernel), then the kernel */
	if (jv_get(m, "os"))
		snprintf(os, oslen, "%s, %s", jv_str(jv_get(m, "os"), "?"), jv_str(jv_get(m, "uname"), "?"));
	else
		snprintf(os, oslen, "%s", jv_str(jv_get(m, "uname"), "?"));

	*last = *first + n - 1 < r->n - 1 ? *first + n - 1 : r->n - 1;
	if (isfinite(jv_num(jv_get(m, "cpus"))))
		snprintf(cpu, len, "%s (%.0f CPUs)", jv_str(jv_get(m, "cpu"), "?"), jv_num(jv_get(m, "cpus")));
	else
		snprintf(cpu, len, "%s", jv_str(jv_get(m, "cpu"), "?"));
}

void cmp_machines_print(const cmp_run *r, FILE *f, int markdown)
{
	const jv *w = jv_get(r->merged[0], "workload");
	char cpu[300], os[400];
	int first = 0, last;

	if (!r->n_merged)
		return;
	fprintf(f, markdown ? "## Machines\n\nEvery report ran clgrad %s, workload %s (%s, suites " : "machines (clgrad %s, workload %s, %s, suites ",
		jv_str(jv_get(r->merged[0], "clgrad_version"), "?"), jv_str(jv_get(w, "fingerprint"), "?"),
		jv_str(jv_get(w, "mode"), "?"));
	for (int i = 0; i < jv_len(jv_get(w, "suites")); i++)
		fprintf(f, "%s%s", i ? "," : "", jv_str(jv_at(jv_get(w, "suites"), i), "?"));
	fprintf(f, markdown ? ").\n\n| machine | CPU | OS | devices | report | created |\n|---|---|---|---|---|---|\n" : "):\n");
	for (int k = 0; k < r->n_merged; k++, first = last + 1) {
		machine_row(r, k, &first, cpu, sizeof(cpu), &last, os, sizeof(os));
		fprintf(f, markdown ? "| %s | %s | %s | %d-%d | %s | %s |\n" : "  %s: %s, %s: devices %d-%d (%s, %s)\n",
			r->dev[first < r->n ? first : 0].machine, cpu, os, first, last,
			r->merged_files[k], jv_str(jv_get(r->merged[k], "created"), "?"));
	}
	fputc('\n', f);
}

void cmp_machines_html(const cmp_run *r, FILE *f, void (*esc)(FILE *, const char *))
{
	const jv *w = jv_get(r->merged[0], "workload");
	char cpu[300], os[400];
	int first = 0, last;

	if (!r->n_merged)
		return;
	fprintf(f, "<h2 id=\"machines\">Machines</h2>\n<p class=\"meta\">Every report ran clgrad ");
	esc(f, jv_str(jv_get(r->merged[0], "clgrad_version"), "?"));
	fprintf(f, ", workload <code>");
	esc(f, jv_str(jv_get(w, "fingerprint"), "?"));
	fprintf(f, "</code> (");
	esc(f, jv_str(jv_get(w, "mode"), "?"));
	fprintf(f, "). Each device row keeps its machine's driver in its label.</p>\n<table class=\"text\"><tr><th>machine</th>"
		   "<th>CPU</th><th>OS</th><th>devices</th><th>report</th><th>created</th></tr>\n");
	for (int k = 0; k < r->n_merged; k++, first = last + 1) {
		const char *cells[] = {r->dev[first < r->n ? first : 0].machine, cpu, os, NULL,
				       r->merged_files[k], jv_str(jv_get(r->merged[k], "created"), "?")};
		machine_row(r, k, &first, cpu, sizeof(cpu), &last, os, sizeof(os));
		fprintf(f, "<tr>");
		for (int c = 0; c < 6; c++) {
			fprintf(f, "<td>");
			if (cells[c])
				esc(f, cells[c]);
			else
				fprintf(f, "%d&ndash;%d", first, last);
			fprintf(f, "</td>");
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n");
}
