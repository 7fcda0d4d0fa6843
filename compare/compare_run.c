/* The comparison mode's entry points (clgrad_compare.h): a run over devices, a re-render of a
 * run's folder, a merge of reports; each ends by writing report.json, report.md and report.html.
 * The command line (cli/cmd_compare.c) and the Python binding call these. */
#include "compare_internal.h"

#include <clg_internal.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

clg_compare_options clg_compare_defaults(void)
{
	return (clg_compare_options){.devices = "all", .suites = "peak,compile,ops,train"};
}

static clg_status mkdir_p(const char *path)
{
	char buf[1024];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(buf))
		return clg_fail(CLG_ERR_INVALID, "output folder '%s': empty or too long", path);
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return clg_fail(CLG_ERR_IO, "cannot create %s: %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0777) && errno != EEXIST)
		return clg_fail(CLG_ERR_IO, "cannot create %s: %s", buf, strerror(errno));
	return CLG_OK;
}

/* "all" or specs separated by commas -> device indices (no duplicates) */
static clg_status resolve_devices(const char *spec, int *idx, int *n)
{
	const clg_device_info *list;
	int count;
	char buf[512], *save = NULL;
	clg_status st;

	*n = 0;
	if ((st = clg_devices(&list, &count)))
		return st;
	if (!spec || !strcmp(spec, "all")) {
		for (int i = 0; i < count && *n < CMP_MAX_DEVICES; i++)
			idx[(*n)++] = i;
		return CLG_OK;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k, dup = 0;
		if (clg_device_select(t, &k))
			return CLG_ERR_INVALID; /* its message names the spec and the ways to name a device */
		for (int j = 0; j < *n; j++)
			dup |= idx[j] == k;
		if (!dup && *n < CMP_MAX_DEVICES)
			idx[(*n)++] = k;
	}
	return *n ? CLG_OK : clg_fail(CLG_ERR_INVALID, "devices '%s': no device named", spec);
}

/* the options into the driver's form; the run's record of them is zeroed first */
static clg_status setup(cmp_run *r, const clg_compare_options *o, clg_compare_result *res)
{
	memset(r, 0, sizeof(*r));
	if (res)
		memset(res, 0, sizeof(*res));
	if (!o || !o->out_dir)
		return clg_fail(CLG_ERR_INVALID, "no output folder (out_dir)");
	if (cmp_suite_parse(o->suites ? o->suites : "all", &r->opt.suites))
		return clg_fail(CLG_ERR_INVALID, "unknown suite in '%s' (peak, compile, ops, train)", o->suites);
	if (!(o->timeout_s >= 0))
		return clg_fail(CLG_ERR_INVALID, "timeout %g s: must be >= 0 (0: the default)", o->timeout_s);
	r->opt.quick = o->quick;
	r->opt.out_dir = o->out_dir;
	r->opt.data_dir = o->data_dir ? o->data_dir : clg_cfg_str(CLG_CFG_DATA);
	r->opt.devices = o->devices ? o->devices : "all";
	r->opt.baseline = o->baseline;
	r->opt.timeout_s = o->timeout_s;
	r->opt.worker = o->worker;
	r->opt.log = o->log;
	r->opt.table = o->table;
	snprintf(r->opt.command, sizeof(r->opt.command), "%s", o->command ? o->command : "clgrad compare");
	if (r->opt.baseline) {
		char err[256];
		r->baseline = jv_parse_file(r->opt.baseline, err, sizeof(err));
		if (!r->baseline || strcmp(jv_str(jv_get(r->baseline, "schema"), ""), CMP_SCHEMA))
			return clg_fail(CLG_ERR_INVALID, "--baseline %s: %s", r->opt.baseline,
					r->baseline ? "not a clgrad compare report (schema)" : err);
	}
	return CLG_OK;
}

/* report.json, report.md, report.html, then (to o->table) the table and the baseline diff */
static clg_status write_reports(cmp_run *r, clg_compare_result *res)
{
	char path[1100];
	int rc = 0;

	cmp_merge(r);
	snprintf(path, sizeof(path), "%s/report.json", r->opt.out_dir);
	rc |= cmp_write_json(r, path);
	if (res)
		snprintf(res->report, sizeof(res->report), "%s", path);
	snprintf(path, sizeof(path), "%s/report.md", r->opt.out_dir);
	rc |= cmp_write_markdown(r, path);
	snprintf(path, sizeof(path), "%s/report.html", r->opt.out_dir);
	rc |= cmp_write_html(r, path);
	if (r->opt.table) {
		cmp_print_table(r, r->opt.table);
		if (r->baseline)
			cmp_baseline_print(r, r->opt.table, 0);
	}
	if (rc)
		return clg_fail(CLG_ERR_IO, "cannot write the reports in %s", r->opt.out_dir);
	if (r->opt.table)
		fprintf(r->opt.table, "reports: %s/report.{json,md,html}\n", r->opt.out_dir);
	if (res) {
		res->devices = r->n;
		for (int i = 0; i < r->n; i++)
			res->ok += !strcmp(r->dev[i].status, "ok");
	}
	return CLG_OK;
}

/* cmp_run is large (CMP_MAX_DEVICES records): on the heap */
static cmp_run *new_run(void)
{
	cmp_run *r = malloc(sizeof(*r));
	if (!r)
		clg_fail(CLG_ERR_OOM, "out of host memory for a run");
	return r;
}

clg_status clg_compare_run(const clg_compare_options *o, clg_compare_result *res)
{
	int idx[CMP_MAX_DEVICES], n = 0;
	cmp_run *r = new_run();
	clg_status st;

	if (!r)
		return CLG_ERR_OOM;
	if ((st = setup(r, o, res)) || (st = resolve_devices(r->opt.devices, idx, &n)) || (st = mkdir_p(r->opt.out_dir)))
		goto out;
	switch (cmp_run_devices(r, idx, n)) {
	case 0:
		st = write_reports(r, res);
		break;
	case 1:
		if (res)
			res->interrupted = 1;
		st = clg_fail(CLG_ERR_STATE, "interrupted (the running device's worker was stopped; no report)");
		break;
	default: /* the device list could not be read (the message says why) */
		st = CLG_ERR_DEVICE;
	}
out:
	cmp_free(r);
	free(r);
	return st;
}

clg_status clg_compare_render(const clg_compare_options *o, clg_compare_result *res)
{
	cmp_run *r = new_run();
	clg_status st;

	if (!r)
		return CLG_ERR_OOM;
	if (!(st = setup(r, o, res)))
		if (!(st = cmp_load_dir(r, r->opt.out_dir)))
			st = write_reports(r, res);
	cmp_free(r);
	free(r);
	return st;
}

clg_status clg_compare_merge(const clg_compare_options *o, const char *const *reports, int n, clg_compare_result *res)
{
	cmp_run *r = new_run();
	clg_status st;

	if (!r)
		return CLG_ERR_OOM;
	if ((st = setup(r, o, res)))
		goto out;
	if (n < 1 || !reports) {
		st = clg_fail(CLG_ERR_INVALID, "--merge needs the report files to merge (A.json B.json ...)");
		goto out;
	}
	if ((st = mkdir_p(r->opt.out_dir)))
		goto out;
	/* a refusal (-2: workloads or versions differ, a malformed report) is the caller's: INVALID */
	switch (cmp_load_reports(r, (char *const *)reports, n)) {
	case 0:
		st = write_reports(r, res);
		break;
	case -2:
		st = CLG_ERR_INVALID;
		break;
	default:
		st = CLG_ERR_IO; /* a report could not be read: the message names it */
	}
out:
	cmp_free(r);
	free(r);
	return st;
}

int clg_compare_worker(const clg_compare_options *o, int device_index)
{
	cmp_opts co = {0};
	if (!o || !o->out_dir || cmp_suite_parse(o->suites ? o->suites : "all", &co.suites)) {
		fprintf(stderr, "clgrad compare --worker: needs --out DIR and known suites\n");
		return 2;
	}
	co.quick = o->quick;
	co.out_dir = o->out_dir;
	co.data_dir = o->data_dir ? o->data_dir : clg_cfg_str(CLG_CFG_DATA);
	return cmp_worker(&co, device_index);
}
