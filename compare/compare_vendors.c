/* clgrad compare: which vendor's OpenCL stack each row is, and the findings grouped per vendor.
 * Two stacks on one CPU (PoCL and Intel's runtime, say) name the same chip, so a device's label
 * is "platform · device · driver"; the findings of each platform's devices (one group per driver
 * version of a platform: PoCL 3.1 and PoCL 6 are two stacks) are listed together:
 * failed (op cases, gradient checks, program builds), routed (ops the self-test or known-bad
 * list marked unsupported) and fallback (ops sent to another implementation). */
#include "compare_internal.h"

#include <math.h>
#include <string.h>

enum { F_FAILED, F_ROUTED, F_FALLBACK, F_KINDS };
static const char *kind_names[F_KINDS] = {"failed", "routed", "fallback"};

/* one finding; the strings point into the device's document */
typedef struct {
	const cmp_device *d;
	const char *what;         /* op, gradient case or program */
	const char *why;          /* routed / fallback: the reason; failed: "" */
	char detail[96];          /* failed: "3 of 40 cases", "gradient", "build" */
} finding;

#define MAX_FINDINGS 256

static int collect(const cmp_device *d, int kind, finding *out, int n, int max)
{
	if (kind == F_FAILED) {
		const jv *ops = jv_path(d->sections, "ops.ops"), *grad = jv_path(d->sections, "ops.grad");
		const jv *progs = jv_path(d->sections, "compile.programs");
		for (int k = 0; k < jv_len(ops) && n < max; k++) {
			const jv *o = jv_at(ops, k);
			double fail = jv_num(jv_get(o, "fail"));
			if (!(fail > 0))
				continue;
			out[n] = (finding){d, jv_str(jv_get(o, "op"), "?"), "", ""};
			snprintf(out[n++].detail, sizeof(out[0].detail), "%.0f of %.0f cases", fail,
				 fail + jv_num(jv_get(o, "pass")));
		}
		for (int k = 0; k < jv_len(grad) && n < max; k++)
			if (jv_bool(jv_get(jv_at(grad, k), "ok")) == 0)
				out[n++] = (finding){d, jv_str(jv_get(jv_at(grad, k), "case"), "?"), "", "gradient"};
		for (int k = 0; k < jv_len(progs) && n < max; k++)
			if (jv_bool(jv_get(jv_at(progs, k), "ok")) == 0)
				out[n++] = (finding){d, jv_str(jv_get(jv_at(progs, k), "name"), "?"), "", "build"};
		return n;
	}
	const jv *routed = jv_path(d->sections, "ops.routed");
	for (int k = 0; k < jv_len(routed) && n < max; k++) {
		const jv *o = jv_at(routed, k);
		const char *action = jv_str(jv_get(o, "action"), "");
		if (!strcmp(action, kind == F_FALLBACK ? "fallback" : "unsupported"))
			out[n++] = (finding){d, jv_str(jv_get(o, "op"), "?"), jv_str(jv_get(o, "why"), ""), ""};
	}
	return n;
}

static int vendor_findings(const cmp_run *r, const cmp_vendor *v, int kind, finding *out)
{
	int n = 0;
	for (int i = 0; i < v->n; i++)
		n = collect(&r->dev[v->dev[i]], kind, out, n, MAX_FINDINGS);
	return n;
}

/* A platform as a chart label shows it: its usual short name where it has one, else the name
 * without (R) and (TM) */
static void short_platform(const char *plat, char *buf, size_t len)
{
	static const char *const known[][2] = {
		{"Portable Computing Language", "PoCL"},
		{"AMD Accelerated Parallel Processing", "AMD APP"},
		{"Intel(R) OpenCL Graphics", "Intel GPU"},
		{"Intel(R) OpenCL", "Intel"},
		{"NVIDIA CUDA", "NVIDIA"},
	};
	size_t used = 0;

	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
		if (!strcmp(plat, known[k][0])) {
			snprintf(buf, len, "%s", known[k][1]);
			return;
		}
	for (const char *p = plat; *p && used + 1 < len; p++) {
		if (!strncmp(p, "(R)", 3) || !strncmp(p, "(TM)", 4)) {
			p += p[1] == 'R' ? 2 : 3;
			continue;
		}
		buf[used++] = *p;
	}
	buf[used] = 0;
}

/* The driver's version as a label shows it: its first two numbers ("3.1+debian" -> "3.1",
 * "Oclgrind 21.10" -> "21.10", "2026.22.10.0.01_160000" -> "2026.22"), "" when it has none */
static void short_version(const char *driver, char *buf, size_t len)
{
	const char *p = driver;
	size_t n = 0;
	int dots = 0;

	while (*p && (*p < '0' || *p > '9'))
		p++;
	while (n + 1 < len && ((p[n] >= '0' && p[n] <= '9') || (p[n] == '.' && dots++ == 0 && p[n + 1] >= '0' && p[n + 1] <= '9')))
		n++;
	snprintf(buf, len, "%.*s", (int)n, p);
}

/* "[machine: ]platform version · device", cut to the chart label's room (40 characters) with
 * "..." (the version keeps two drivers of one platform apart: PoCL 3.1, PoCL 6.0) */
static void short_label(cmp_device *d)
{
	char plat[64], full[300], ver[16], name[80];
	size_t room = 40, cut = 0, chars = 0;

	short_platform(d->platform, name, sizeof(name));
	short_version(d->driver, ver, sizeof(ver));
	if (ver[0] && name[0] && !strstr(name, ver))
		snprintf(plat, sizeof(plat), "%.40s %s", name, ver);
	else
		snprintf(plat, sizeof(plat), "%.60s", name);
	snprintf(full, sizeof(full), "%.20s%s%.20s%s%s", d->machine, d->machine[0] ? ": " : "", plat,
		 plat[0] ? " \u00b7 " : "", d->name);
	for (size_t i = 0; full[i]; i++) /* count characters, not UTF-8 bytes */
		if (((unsigned char)full[i] & 0xC0) != 0x80 && ++chars == room - 2)
			cut = i;
	if (chars > room)
		snprintf(d->short_label, sizeof(d->short_label), "%.*s...", (int)cut, full);
	else
		snprintf(d->short_label, sizeof(d->short_label), "%.60s", full);
}

void cmp_label_devices(cmp_run *r)
{
	r->n_vendors = 0;
	for (int i = 0; i < r->n; i++) {
		cmp_device *d = &r->dev[i];
		const jv *caps = cmp_section(d, "capabilities"), *dev = jv_get(d->doc, "device");
		const char *plat = jv_str(jv_get(caps, "platform"), jv_str(jv_get(dev, "platform"), ""));
		const char *pv = jv_str(jv_get(caps, "platform_vendor"), "");
		cmp_vendor *v = NULL;

		snprintf(d->platform, sizeof(d->platform), "%s", plat);
		snprintf(d->driver, sizeof(d->driver), "%s", jv_str(jv_get(caps, "driver_version"), ""));
		if (d->machine[0]) { /* --merge: the machine first, then as below */
			char rest[300];
			snprintf(rest, sizeof(rest), "%s%s%s%s%s", d->platform, d->platform[0] ? " \u00b7 " : "", d->name,
				 d->driver[0] ? " \u00b7 " : "", d->driver);
			snprintf(d->label, sizeof(d->label), "%.50s: %s", d->machine, rest);
		} else if (d->platform[0] && d->driver[0])
			snprintf(d->label, sizeof(d->label), "%s \u00b7 %s \u00b7 %s", d->platform, d->name, d->driver);
		else if (d->platform[0])
			snprintf(d->label, sizeof(d->label), "%s \u00b7 %s", d->platform, d->name);
		else
			snprintf(d->label, sizeof(d->label), "%s", d->name);

		short_label(d);

		for (int k = 0; k < r->n_vendors && !v; k++)
			if (!strcmp(r->vendors[k].platform, d->platform[0] ? d->platform : "unknown") &&
			    !strcmp(r->vendors[k].driver, d->driver))
				v = &r->vendors[k];
		if (!v) {
			v = &r->vendors[r->n_vendors++];
			memset(v, 0, sizeof(*v));
			snprintf(v->platform, sizeof(v->platform), "%s", d->platform[0] ? d->platform : "unknown");
			snprintf(v->driver, sizeof(v->driver), "%s", d->driver);
		}
		if (!v->platform_vendor[0])
			snprintf(v->platform_vendor, sizeof(v->platform_vendor), "%s", pv);
		v->dev[v->n++] = i;
	}
	for (int k = 0; k < r->n_vendors; k++)
		for (int j = 0; j < r->n_vendors; j++)
			r->vendors[k].shared |= j != k && !strcmp(r->vendors[k].platform, r->vendors[j].platform);
}

/* "device 1 (AMD EPYC, driver 2026.x), device 2 (...)" */
static void device_list(const cmp_run *r, const cmp_vendor *v, FILE *f)
{
	for (int i = 0; i < v->n; i++) {
		const cmp_device *d = &r->dev[v->dev[i]];
		fprintf(f, "%sdevice %d (%s%s%s%s%s)", i ? ", " : "", d->index, d->machine, d->machine[0] ? ": " : "",
			d->name, d->driver[0] ? ", driver " : "", d->driver);
	}
}

void cmp_vendors_print(const cmp_run *r, FILE *f, int markdown)
{
	static finding fs[MAX_FINDINGS];

	fprintf(f, markdown ? "## Findings by vendor\n\n" : "findings by vendor (platform):\n");
	for (int k = 0; k < r->n_vendors; k++) {
		const cmp_vendor *v = &r->vendors[k];
		const char *drv = v->shared ? v->driver : "", *sp = v->shared ? " " : "";
		if (markdown)
			fprintf(f, "### %s%s%s%s%s%s\n\n", v->platform, sp, drv, v->platform_vendor[0] ? " (" : "",
				v->platform_vendor, v->platform_vendor[0] ? ")" : "");
		else
			fprintf(f, "  %s%s%s: ", v->platform, sp, drv);
		device_list(r, v, f);
		fprintf(f, markdown ? "\n\n" : "\n");
		for (int kind = 0; kind < F_KINDS; kind++) {
			int n = vendor_findings(r, v, kind, fs);
			fprintf(f, markdown ? "- %s: " : "    %-8s ", kind_names[kind]);
			if (!n)
				fprintf(f, "none");
			for (int i = 0; i < n; i++) {
				const char *q = markdown ? "`" : "";
				fprintf(f, "%s%s%s%s", i ? (markdown ? "; " : ", ") : "", q, fs[i].what, q);
				if (v->n > 1)
					fprintf(f, " on %d", fs[i].d->index);
				if (fs[i].detail[0])
					fprintf(f, " (%s)", fs[i].detail);
				if (markdown && fs[i].why[0])
					fprintf(f, ": %s", fs[i].why);
			}
			fputc('\n', f);
		}
		if (markdown)
			fputc('\n', f);
	}
}

void cmp_vendors_html(const cmp_run *r, FILE *f, void (*esc)(FILE *, const char *))
{
	static finding fs[MAX_FINDINGS];

	fprintf(f, "<h2 id=\"vendors\">Findings by vendor</h2>\n<table class=\"text\"><tr><th>platform</th><th>devices</th>"
		   "<th>failed</th><th>routed (unsupported)</th><th>fallback</th></tr>\n");
	for (int k = 0; k < r->n_vendors; k++) {
		const cmp_vendor *v = &r->vendors[k];
		fprintf(f, "<tr><td>");
		esc(f, v->platform);
		if (v->shared) { /* two drivers of one platform: each group names its own */
			fprintf(f, " ");
			esc(f, v->driver);
		}
		if (v->platform_vendor[0]) {
			fprintf(f, "<br><span class=\"meta\">");
			esc(f, v->platform_vendor);
			fprintf(f, "</span>");
		}
		fprintf(f, "</td><td>");
		for (int i = 0; i < v->n; i++) {
			const cmp_device *d = &r->dev[v->dev[i]];
			char idx[16];
			snprintf(idx, sizeof(idx), "%s%d: ", i ? "<br>" : "", d->index);
			fputs(idx, f);
			esc(f, d->label);
		}
		fprintf(f, "</td>");
		for (int kind = 0; kind < F_KINDS; kind++) {
			int n = vendor_findings(r, v, kind, fs);
			fprintf(f, "<td class=\"%s\">", n && kind == F_FAILED ? "bad" : n ? "warn" : "ok");
			if (!n)
				fprintf(f, "none");
			for (int i = 0; i < n; i++) {
				fprintf(f, "%s<code>", i ? "<br>" : "");
				esc(f, fs[i].what);
				fprintf(f, "</code>");
				if (v->n > 1)
					fprintf(f, " on %d", fs[i].d->index);
				if (fs[i].detail[0] || fs[i].why[0]) {
					fprintf(f, " (");
					esc(f, fs[i].detail[0] ? fs[i].detail : fs[i].why);
					fprintf(f, ")");
				}
			}
			fprintf(f, "</td>");
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n");
}

void cmp_vendors_json(const cmp_run *r, json_writer *w)
{
	static finding fs[MAX_FINDINGS];

	json_begin_array(w);
	for (int k = 0; k < r->n_vendors; k++) {
		const cmp_vendor *v = &r->vendors[k];
		json_begin_object(w);
		json_key_str(w, "platform", v->platform);
		json_key_str(w, "platform_vendor", v->platform_vendor);
		json_key_str(w, "driver", v->driver);
		json_key(w, "devices");
		json_begin_array(w);
		for (int i = 0; i < v->n; i++)
			json_int(w, r->dev[v->dev[i]].index);
		json_end_array(w);
		for (int kind = 0; kind < F_KINDS; kind++) {
			int n = vendor_findings(r, v, kind, fs);
			json_key(w, kind_names[kind]);
			json_begin_array(w);
			for (int i = 0; i < n; i++) {
				json_begin_object(w);
				json_key_int(w, "device", fs[i].d->index);
				json_key_str(w, kind == F_FAILED ? "what" : "op", fs[i].what);
				json_key_str(w, kind == F_FAILED ? "detail" : "why", kind == F_FAILED ? fs[i].detail : fs[i].why);
				json_end_object(w);
			}
			json_end_array(w);
		}
		json_end_object(w);
	}
	json_end_array(w);
}
