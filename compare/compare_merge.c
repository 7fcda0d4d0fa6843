/* clgrad compare: reading the workers' files (or an earlier run's folder for --render-only), the
 * loss divergence from the reference device, and report.json. */
#define _GNU_SOURCE
#include "compare_internal.h"

#include <clg_internal.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

FILE *cmp_open_atomic(const char *path, char *tmp, size_t tmplen)
{
	clg_remove_stale_temps(path); /* what a killed run left */
	snprintf(tmp, tmplen, "%s.tmp.%d", path, (int)getpid());
	return fopen(tmp, "w");
}

int cmp_commit(FILE *f, const char *tmp, const char *path)
{
	int bad = ferror(f);
	bad |= fflush(f) != 0;
	bad |= fsync(fileno(f)) != 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

void cmp_fmt(char *buf, size_t len, double x, int digits)
{
	if (!isfinite(x))
		snprintf(buf, len, "-");
	else if (digits < 0 && fabs(x) >= 1000) /* 3 significant digits, no exponent */
		snprintf(buf, len, "%.0f", x);
	else if (digits < 0)
		snprintf(buf, len, "%.3g", x);
	else
		snprintf(buf, len, "%.*f", digits, x);
}

const jv *cmp_section(const cmp_device *d, const char *name) { return jv_get(d->sections, name); }

double cmp_sec_num(const cmp_device *d, const char *path) { return jv_num(jv_path(d->sections, path)); }

int cmp_section_ok(const cmp_device *d, const char *name)
{
	const jv *s = cmp_section(d, name);
	return s && jv_is_null(jv_get(s, "error")) && jv_bool(jv_get(s, "ok")) != 0;
}

const cmp_device *cmp_reference(const cmp_run *r)
{
	for (int i = 0; i < r->n; i++)
		if (r->dev[i].index == 0 && r->dev[i].sections)
			return &r->dev[i];
	return NULL;
}

static const jv *train_run(const cmp_device *d, const char *model)
{
	const jv *runs = jv_path(d->sections, "train.runs");
	for (int i = 0; i < jv_len(runs); i++)
		if (!strcmp(jv_str(jv_get(jv_at(runs, i), "model"), ""), model))
			return jv_at(runs, i);
	return NULL;
}

double cmp_train_samples(const cmp_device *d, const char *model)
{
	return jv_num(jv_get(train_run(d, model), "samples_per_s"));
}

int cmp_load_device(cmp_run *r, cmp_device *d, const char *dir, int partial)
{
	char path[1100], err[256];
	const jv *dev;

	(void)r;
	snprintf(path, sizeof(path), "%s/device-%d%s.json", dir, d->index, partial ? ".partial" : "");
	jv_free(d->doc);
	d->sections = NULL;
	d->salvaged = 0;
	if (!(d->doc = jv_parse_file(path, err, sizeof(err)))) {
		if (access(path, F_OK) == 0 && r->opt.log)
			fprintf(r->opt.log, "compare: %s: %s\n", path, err);
		return -1;
	}
	if (strcmp(jv_str(jv_get(d->doc, "schema"), ""), CMP_DEVICE_SCHEMA)) {
		if (r->opt.log)
			fprintf(r->opt.log, "compare: %s: not a %s file\n", path, CMP_DEVICE_SCHEMA);
		jv_free(d->doc);
		d->doc = NULL;
		return -1;
	}
	d->sections = jv_get(d->doc, "sections");
	d->salvaged = partial;
	dev = jv_get(d->doc, "device");
	if (!d->name[0])
		snprintf(d->name, sizeof(d->name), "%s", jv_str(jv_get(dev, "name"), "?"));
	if (!d->type[0])
		snprintf(d->type, sizeof(d->type), "%s", jv_str(jv_get(dev, "type"), "?"));
	if (!d->detail[0] && jv_get(d->doc, "error"))
		snprintf(d->detail, sizeof(d->detail), "%s", jv_str(jv_get(d->doc, "error"), ""));
	return 0;
}

static int by_index(const void *a, const void *b)
{
	return ((const cmp_device *)a)->index - ((const cmp_device *)b)->index;
}

static cmp_device *find_or_add(cmp_run *r, int index)
{
	for (int i = 0; i < r->n; i++)
		if (r->dev[i].index == index)
			return &r->dev[i];
	if (r->n == CMP_MAX_DEVICES)
		return NULL;
	memset(&r->dev[r->n], 0, sizeof(r->dev[0]));
	r->dev[r->n].index = index;
	r->dev[r->n].exit_code = -1;
	return &r->dev[r->n++];
}

/* --render-only DIR: statuses from DIR/report.json when there is one, sections from each
 * device-N.json; a device-N.log without its JSON is a device whose worker did not finish. */
clg_status cmp_load_dir(cmp_run *r, const char *dir)
{
	char path[1100], err[256];
	struct dirent *e;
	jv *prev;
	DIR *dp;

	snprintf(path, sizeof(path), "%s/report.json", dir);
	if ((prev = jv_parse_file(path, err, sizeof(err)))) {
		const jv *devs = jv_get(prev, "devices"), *suites = jv_get(prev, "suites");
		char list[128] = "";
		size_t used = 0;
		r->opt.quick = jv_bool(jv_get(prev, "quick")) == 1;
		for (int i = 0; i < jv_len(suites) && used < sizeof(list); i++)
			used += snprintf(list + used, sizeof(list) - used, "%s%s", i ? "," : "",
					 jv_str(jv_at(suites, i), ""));
		if (used)
			cmp_suite_parse(list, &r->opt.suites);
		r->source = prev; /* its workload is the report's (cmp_workload_json) */
		for (int i = 0; i < jv_len(devs); i++) {
			const jv *o = jv_at(devs, i);
			cmp_device *d = find_or_add(r, (int)jv_num(jv_get(o, "index")));
			if (!d)
				break;
			snprintf(d->name, sizeof(d->name), "%s", jv_str(jv_get(o, "name"), ""));
			snprintf(d->type, sizeof(d->type), "%s", jv_str(jv_get(o, "type"), ""));
			snprintf(d->status, sizeof(d->status), "%s", jv_str(jv_get(o, "status"), "error"));
			snprintf(d->detail, sizeof(d->detail), "%s", jv_str(jv_get(o, "detail"), ""));
			snprintf(d->log, sizeof(d->log), "%s", jv_str(jv_get(o, "log"), ""));
			d->exit_code = isfinite(jv_num(jv_get(o, "exit"))) ? (int)jv_num(jv_get(o, "exit")) : -1;
			d->elapsed_s = jv_num(jv_get(o, "elapsed_s"));
		}
	}
	r->from_dir = 1;
	if (!(dp = opendir(dir))) {
		return clg_fail(CLG_ERR_IO, "cannot open %s: %s", dir, strerror(errno));
	}
	while ((e = readdir(dp))) {
		int index, len;
		const char *rest;
		if (sscanf(e->d_name, "device-%d%n", &index, &len) != 1 || index < 0)
			continue;
		rest = e->d_name + len;
		if (strcmp(rest, ".json") && strcmp(rest, ".log") && strcmp(rest, ".partial.json"))
			continue;
		cmp_device *d = find_or_add(r, index);
		if (d && !strcmp(rest, ".log") && !d->log[0])
			snprintf(d->log, sizeof(d->log), "%s", e->d_name);
	}
	closedir(dp);
	qsort(r->dev, r->n, sizeof(r->dev[0]), by_index);
	for (int i = 0; i < r->n; i++) {
		cmp_device *d = &r->dev[i];
		int loaded = cmp_load_device(r, d, dir, 0) == 0 || cmp_load_device(r, d, dir, 1) == 0;
		if (d->status[0])
			continue;
		if (!loaded || d->salvaged) {
			snprintf(d->status, sizeof(d->status), "error");
			snprintf(d->detail, sizeof(d->detail), "no valid device-%d.json%s", d->index,
				 d->salvaged ? "; sections salvaged from its partial file" : "");
			if (!d->name[0])
				snprintf(d->name, sizeof(d->name), "device %d", d->index);
		} else {
			int failed = (int)jv_num(jv_get(d->doc, "sections_failed"));
			snprintf(d->status, sizeof(d->status), "%s", jv_get(d->doc, "error") ? "error" :
				 failed > 0 ? "partial" : "ok");
		}
		d->elapsed_s = jv_num(jv_get(d->doc, "elapsed_s"));
	}
	if (r->n == 0) {
		return clg_fail(CLG_ERR_INVALID, "no device-N.json in %s", dir);
	}
	return 0;
}

/* NULL when rep has the shape a report needs (a known schema_version, devices a non-empty list of
 * objects), else what is wrong. */
static const char *report_shape_problem(const jv *rep, char *buf, size_t len)
{
	const jv *devs = jv_get(rep, "devices");
	double v = jv_num(jv_get(rep, "schema_version"));

	if (jv_kind(jv_get(rep, "schema_version")) != JV_NUM || !(v >= 1 && v <= CMP_SCHEMA_VERSION) || v != (int)v) {
		snprintf(buf, len, "schema_version %.17g is not one this clgrad reads (1..%d)", v, CMP_SCHEMA_VERSION);
		return buf;
	}
	if (jv_kind(devs) != JV_ARR || jv_len(devs) < 1)
		return "its \"devices\" is not a non-empty list";
	for (int i = 0; i < jv_len(devs); i++)
		if (jv_kind(jv_at(devs, i)) != JV_OBJ) {
			snprintf(buf, len, "device %d of its \"devices\" is not an object", i);
			return buf;
		}
	return NULL;
}

/* The machine a merged report's devices are tagged with: its hostname, and where another report
 * has the same one (a chroot, a container: same host, other OS) "/" and its os_id ("vm/debian13"),
 * else its position, so that every report's rows stay apart. */
static void machine_tag(const cmp_run *r, int k, char *buf, size_t len)
{
	const jv *m = jv_get(r->merged[k], "machine");
	const char *host = jv_str(jv_get(m, "hostname"), "?"), *os = jv_str(jv_get(m, "os_id"), "");
	int same_host = 0, same_os = 0;

	for (int j = 0; j < r->n_merged; j++) {
		const jv *o = jv_get(r->merged[j], "machine");
		if (j == k || strcmp(jv_str(jv_get(o, "hostname"), "?"), host))
			continue;
		same_host = 1;
		same_os |= !strcmp(jv_str(jv_get(o, "os_id"), ""), os);
	}
	if (!same_host)
		snprintf(buf, len, "%s", host);
	else if (os[0] && !same_os)
		snprintf(buf, len, "%s/%s", host, os);
	else
		snprintf(buf, len, "%s/%d", host, k + 1);
}

int cmp_load_reports(cmp_run *r, char *const *paths, int n)
{
	char err[256];
	const char *why;
	int from[CMP_MAX_DEVICES]; /* the report each device came from */

	for (int k = 0; k < n; k++) {
		jv *rep = jv_parse_file(paths[k], err, sizeof(err));
		const jv *devs;
		if (!rep || strcmp(jv_str(jv_get(rep, "schema"), ""), CMP_SCHEMA)) {
			clg_fail(CLG_ERR_INVALID, "--merge %s: %s", paths[k],
				 rep ? "not a clgrad compare report.json (schema)" : err);
			jv_free(rep);
			return -1;
		}
		if ((why = report_shape_problem(rep, err, sizeof(err)))) {
			clg_fail(CLG_ERR_INVALID, "--merge %s: a malformed report: %s", paths[k], why);
			jv_free(rep);
			return -2;
		}
		if (k > 0 && cmp_workload_check(r->merged[0], r->merged_files[0], rep, paths[k])) {
			jv_free(rep);
			return -2;
		}
		if (r->n_merged == CMP_MAX_DEVICES) {
			jv_free(rep);
			break;
		}
		r->merged[r->n_merged] = rep;
		r->merged_files[r->n_merged++] = paths[k];
		if (k == 0) { /* the first report's mode and suites describe the whole */
			const jv *suites = jv_get(rep, "suites");
			char list[128] = "";
			size_t used = 0;
			r->opt.quick = jv_bool(jv_get(rep, "quick")) == 1;
			for (int i = 0; i < jv_len(suites) && used < sizeof(list); i++)
				used += snprintf(list + used, sizeof(list) - used, "%s%s", i ? "," : "",
						 jv_str(jv_at(suites, i), ""));
			if (!used || cmp_suite_parse(list, &r->opt.suites))
				r->opt.suites = CMP_ALL;
		}
		devs = jv_get(rep, "devices");
		for (int i = 0; i < jv_len(devs); i++) {
			const jv *o = jv_at(devs, i);
			cmp_device *d;
			if (r->n == CMP_MAX_DEVICES) {
				if (r->opt.log)
					fprintf(r->opt.log, "compare: --merge: more than %d devices; the rest left out\n",
						CMP_MAX_DEVICES);
				goto tags;
			}
			d = &r->dev[r->n];
			memset(d, 0, sizeof(*d));
			d->index = r->n++;
			snprintf(d->name, sizeof(d->name), "%s", jv_str(jv_get(o, "name"), "?"));
			snprintf(d->type, sizeof(d->type), "%s", jv_str(jv_get(o, "type"), "?"));
			snprintf(d->status, sizeof(d->status), "%s", jv_str(jv_get(o, "status"), "error"));
			snprintf(d->detail, sizeof(d->detail), "%s", jv_str(jv_get(o, "detail"), ""));
			snprintf(d->log, sizeof(d->log), "%s", jv_str(jv_get(o, "log"), ""));
			d->exit_code = isfinite(jv_num(jv_get(o, "exit"))) ? (int)jv_num(jv_get(o, "exit")) : -1;
			d->elapsed_s = jv_num(jv_get(o, "elapsed_s"));
			d->salvaged = jv_bool(jv_get(o, "salvaged")) == 1;
			d->sections = jv_get(o, "sections"); /* owned by r->merged */
			from[d->index] = r->n_merged - 1;
		}
	}
tags:
	for (int i = 0; i < r->n; i++)
		machine_tag(r, from[i], r->dev[i].machine, sizeof(r->dev[i].machine));
	return r->n ? 0 : -1;
}

/* max over the steps of |loss - ref| / max(|ref|, 1e-6); 1e6 where a loss is not finite */
static double divergence(const jv *run, const jv *ref_run)
{
	const jv *a = jv_get(run, "losses"), *b = jv_get(ref_run, "losses");
	int n = jv_len(a) < jv_len(b) ? jv_len(a) : jv_len(b);
	double worst = 0;

	if (n == 0)
		return NAN;
	for (int i = 0; i < n; i++) {
		double x = jv_num(jv_at(a, i)), y = jv_num(jv_at(b, i)), rel;
		if (!isfinite(y))
			continue;
		rel = isfinite(x) ? fabs(x - y) / fmax(fabs(y), 1e-6) : 1e6;
		worst = fmax(worst, fmin(rel, 1e6));
	}
	return worst;
}

void cmp_merge(cmp_run *r)
{
	const cmp_device *ref = cmp_reference(r);
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(r->created, sizeof(r->created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cmp_label_devices(r);
	for (int i = 0; i < r->n; i++) {
		cmp_device *d = &r->dev[i];
		const jv *runs = jv_path(d->sections, "train.runs");
		d->n_train = 0;
		for (int k = 0; k < jv_len(runs) && d->n_train < CMP_MAX_TRAIN; k++) {
			const jv *run = jv_at(runs, k);
			const char *model = jv_str(jv_get(run, "model"), NULL);
			if (!model)
				continue;
			snprintf(d->train_model[d->n_train], sizeof(d->train_model[0]), "%s", model);
			d->train_div[d->n_train++] = ref ? divergence(run, train_run(ref, model)) : NAN;
		}
		cmp_score_device(r, d);
	}
}

static void cpu_model(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (!strncmp(line, "model name", 10) && colon) {
			colon += 1 + (colon[1] == ' ');
			colon[strcspn(colon, "\n")] = 0;
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

/* /etc/os-release: PRETTY_NAME ("Debian GNU/Linux 13 (trixie)") and ID with VERSION_ID
 * ("debian13"): a chroot or container reports the host's hostname and kernel, not its own OS */
static void os_release(char *pretty, size_t plen, char *id, size_t ilen)
{
	char line[512], name[64] = "", ver[32] = "";
	FILE *f = fopen("/etc/os-release", "r");

	snprintf(pretty, plen, "unknown");
	id[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, '=');
		size_t n;
		if (!v)
			continue;
		*v++ = 0;
		v += *v == '"';
		n = strcspn(v, "\"\n");
		v[n] = 0;
		if (!strcmp(line, "PRETTY_NAME"))
			snprintf(pretty, plen, "%s", v);
		else if (!strcmp(line, "ID"))
			snprintf(name, sizeof(name), "%s", v);
		else if (!strcmp(line, "VERSION_ID"))
			snprintf(ver, sizeof(ver), "%s", v);
	}
	fclose(f);
	snprintf(id, ilen, "%s%s", name, ver);
}

static void write_scores(json_writer *w, const cmp_scores *s)
{
	json_begin_object(w);
	json_key_num(w, "features", s->features);
	json_key_num(w, "compile", s->compile);
	json_key_num(w, "correctness", s->correctness);
	json_key_num(w, "performance", s->performance);
	json_key_num(w, "stability", s->stability);
	json_key_num(w, "overall", s->overall);
	json_end_object(w);
}

int cmp_write_json(const cmp_run *r, const char *path)
{
	char tmp[1200], host[256] = "", cpu[256], os[160], os_id[64];
	struct utsname u;
	json_writer w;
	FILE *f = cmp_open_atomic(path, tmp, sizeof(tmp));

	if (!f)
		return -1;
	gethostname(host, sizeof(host) - 1);
	cpu_model(cpu, sizeof(cpu));
	json_init(&w, f, 1);
	json_begin_object(&w);
	json_key_str(&w, "schema", CMP_SCHEMA);
	json_key_int(&w, "schema_version", CMP_SCHEMA_VERSION);
	json_key_str(&w, "created", r->created);
	json_key_str(&w, "command", r->opt.command);
	cmp_workload_json(r, &w);
	json_key(&w, "machine");
	json_begin_object(&w);
	json_key_str(&w, "hostname", host);
	if (uname(&u) == 0) {
		char un[600];
		snprintf(un, sizeof(un), "%s %s %s", u.sysname, u.release, u.machine);
		json_key_str(&w, "uname", un);
	}
	json_key_str(&w, "cpu", cpu);
	json_key_int(&w, "cpus", sysconf(_SC_NPROCESSORS_ONLN));
	os_release(os, sizeof(os), os_id, sizeof(os_id));
	json_key_str(&w, "os", os);
	json_key_str(&w, "os_id", os_id);
	json_end_object(&w);
	json_key_bool(&w, "quick", r->opt.quick);
	json_key(&w, "suites");
	cmp_suites_json(r->opt.suites, &w);
	json_key(&w, "devices");
	json_begin_array(&w);
	for (int i = 0; i < r->n; i++) {
		const cmp_device *d = &r->dev[i];
		json_begin_object(&w);
		json_key_int(&w, "index", d->index);
		json_key_str(&w, "name", d->name);
		json_key_str(&w, "type", d->type);
		json_key_str(&w, "platform", d->platform);
		json_key_str(&w, "driver", d->driver);
		json_key_str(&w, "label", d->label);
		if (d->machine[0])
			json_key_str(&w, "machine", d->machine);
		json_key_str(&w, "status", d->status);
		json_key_str(&w, "detail", d->detail);
		json_key(&w, "exit");
		if (d->exit_code >= 0)
			json_int(&w, d->exit_code);
		else
			json_null(&w);
		json_key_num(&w, "elapsed_s", d->elapsed_s);
		json_key_str(&w, "log", d->log);
		json_key_bool(&w, "salvaged", d->salvaged);
		json_key(&w, "sections");
		if (d->sections) {
			jv_write(&w, d->sections);
		} else {
			json_begin_object(&w);
			json_end_object(&w);
		}
		json_key(&w, "train_divergence");
		json_begin_object(&w);
		for (int k = 0; k < d->n_train; k++)
			json_key_num(&w, d->train_model[k], d->train_div[k]);
		json_end_object(&w);
		json_key(&w, "scores");
		write_scores(&w, &d->scores);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_key(&w, "vendors");
	cmp_vendors_json(r, &w);
	json_key(&w, "maturity");
	cmp_maturity_json(r, &w);
	if (r->n_merged) { /* --merge: where each part came from */
		json_key(&w, "merged_from");
		json_begin_array(&w);
		for (int k = 0; k < r->n_merged; k++) {
			json_begin_object(&w);
			json_key_str(&w, "file", r->merged_files[k]);
			json_key_str(&w, "created", jv_str(jv_get(r->merged[k], "created"), ""));
			json_key(&w, "machine");
			if (jv_get(r->merged[k], "machine"))
				jv_write(&w, jv_get(r->merged[k], "machine"));
			else
				json_null(&w);
			json_end_object(&w);
		}
		json_end_array(&w);
	}
	json_key(&w, "baseline");
	if (r->baseline)
		cmp_baseline_json(r, &w);
	else
		json_null(&w);
	json_end_object(&w);
	return cmp_commit(f, tmp, path);
}

void cmp_free(cmp_run *r)
{
	for (int i = 0; i < r->n; i++) {
		jv_free(r->dev[i].doc);
		r->dev[i].doc = NULL;
		r->dev[i].sections = NULL;
	}
	jv_free(r->baseline);
	r->baseline = NULL;
	for (int k = 0; k < r->n_merged; k++)
		jv_free(r->merged[k]);
	r->n_merged = 0;
	jv_free(r->source);
	r->source = NULL;
}
