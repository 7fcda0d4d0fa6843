/* clgrad compare: run identical workloads on every device, each in its own child process, and
 * report what works, how fast and how stable (docs/COMPARE.md). This file parses the command line
 * and sequences the run; the parts live in compare_*.c. */
#include "cli.h"
#include "compare_internal.h"
#include "opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


static const char usage[] =
	"usage: clgrad compare [--devices all|SPEC,...] [--suite peak,compile,ops,train] [--quick]\n"
	"                      --out DIR [--baseline OLD.json] [--timeout SECONDS] [--data DIR]\n"
	"       clgrad compare --render-only DIR [--baseline OLD.json]\n"
	"       clgrad compare --merge A.json B.json ... --out DIR   (reports of other machines, side by side)\n"
	"Runs every selected device (the reference backend included) in its own child process with a\n"
	"watchdog, then writes DIR/report.json, DIR/report.md and DIR/report.html and prints a table.\n"
	"Exit status: 0 every device ok, 3 the report is complete but some device was not ok\n"
	"(partial, error, crashed, timeout), 1 no report could be written, 2 usage.\n";

static int mkdir_p(const char *path)
{
	char buf[1024];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

/* "all" or specs separated by commas -> device indices (no duplicates) */
static int resolve_devices(const char *spec, int *idx, int *n)
{
	const clg_device_info *list;
	int count;
	char buf[512], *save = NULL;

	*n = 0;
	if (clg_devices(&list, &count))
		return report_error("compare");
	if (!spec || !strcmp(spec, "all")) {
		for (int i = 0; i < count && *n < CMP_MAX_DEVICES; i++)
			idx[(*n)++] = i;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k, dup = 0;
		if (clg_device_select(t, &k)) {
			fprintf(stderr, "clgrad compare: device '%s': %s\n", t, clg_last_error());
			return 2;
		}
		for (int j = 0; j < *n; j++)
			dup |= idx[j] == k;
		if (!dup && *n < CMP_MAX_DEVICES)
			idx[(*n)++] = k;
	}
	return 0;
}

static int load_baseline(cmp_run *r)
{
	char err[256];
	if (!r->opt.baseline)
		return 0;
	r->baseline = jv_parse_file(r->opt.baseline, err, sizeof(err));
	if (!r->baseline || strcmp(jv_str(jv_get(r->baseline, "schema"), ""), CMP_SCHEMA)) {
		fprintf(stderr, "clgrad compare: --baseline %s: %s\n", r->opt.baseline,
			r->baseline ? "not a clgrad compare report (schema)" : err);
		return 2;
	}
	return 0;
}

/* report.json, report.md, report.html, then the table and the baseline diff on stdout */
static int write_reports(cmp_run *r)
{
	char path[1100];
	int rc = 0;

	cmp_merge(r);
	snprintf(path, sizeof(path), "%s/report.json", r->opt.out_dir);
	rc |= cmp_write_json(r, path);
	snprintf(path, sizeof(path), "%s/report.md", r->opt.out_dir);
	rc |= cmp_write_markdown(r, path);
	snprintf(path, sizeof(path), "%s/report.html", r->opt.out_dir);
	rc |= cmp_write_html(r, path);
	cmp_print_table(r, stdout);
	if (r->baseline)
		cmp_baseline_print(r, stdout, 0);
	if (rc) {
		fprintf(stderr, "clgrad compare: cannot write the reports in %s\n", r->opt.out_dir);
		return 1;
	}
	printf("reports: %s/report.{json,md,html}\n", r->opt.out_dir);
	for (int i = 0; i < r->n; i++)
		if (strcmp(r->dev[i].status, "ok"))
			return 3;
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	static cmp_run run; /* large: keep it off the stack */
	cmp_run *r = &run;
	const char *render = NULL, *suite = "peak,compile,ops,train";
	int worker = -1, idx[CMP_MAX_DEVICES], n, rc, nmerge = 0;
	char **merge = NULL;
	size_t used = 0;

	memset(r, 0, sizeof(*r));
	r->opt.devices = "all";
	r->opt.data_dir = clg_cfg_str(CLG_CFG_DATA);
	for (int i = 0; i < argc && used < sizeof(r->opt.command) - 2; i++)
		used += snprintf(r->opt.command + used, sizeof(r->opt.command) - used, "%s%s", i ? " " : "clgrad ",
				 argv[i]);
	{
		const cli_opt opts[] = {
			CLI_OPT_FLAG("quick", &r->opt.quick),
			CLI_OPT_STR("devices", &r->opt.devices),
			CLI_OPT_STR("suite", &suite),
			CLI_OPT_STR("out", &r->opt.out_dir),
			CLI_OPT_STR("baseline", &r->opt.baseline),
			CLI_OPT_STR("data", &r->opt.data_dir),
			CLI_OPT_POS("timeout", &r->opt.timeout_s, 1e6),
			CLI_OPT_STR("render-only", &render),
			CLI_OPT_I32("worker", &worker, 0, 1 << 20), /* internal: the child of one device */
		};
		cli_spec cs = {.cmd = "compare", .usage = usage, .opts = opts, .n = CLI_N(opts)};
		/* --merge A.json B.json ...: the files up to the next option, taken out before the table's
		 * parse (argv keeps them consecutive) */
		char **rest = malloc(sizeof(char *) * (size_t)(argc + 1));
		int nrest = 0;
		if (!rest)
			return cli_error("compare", "out of host memory");
		for (int i = 0; i < argc; i++) {
			if (i == 0 || strcmp(argv[i], "--merge")) {
				rest[nrest++] = argv[i];
				continue;
			}
			merge = argv + i + 1;
			while (i + 1 < argc && strncmp(argv[i + 1], "--", 2)) {
				i++;
				nmerge++;
			}
			if (!nmerge) {
				free(rest);
				return cli_error("compare", "--merge needs the report files to merge (A.json B.json ...)");
			}
		}
		rest[nrest] = NULL;
		rc = cli_parse(&cs, nrest, rest);
		free(rest);
		if (rc >= 0)
			return rc;
	}
	if (cmp_suite_parse(suite, &r->opt.suites)) {
		fprintf(stderr, "clgrad compare: unknown suite in '%s' (peak, compile, ops, train)\n", suite);
		return 2;
	}
	if (worker >= 0)
		return r->opt.out_dir ? cmp_worker(&r->opt, worker) : cli_error("compare", "--worker needs --out DIR");
	if (merge) {
		if (!r->opt.out_dir || render)
			return cli_error("compare", "--merge needs --out DIR and no --render-only");
		if (mkdir_p(r->opt.out_dir)) {
			fprintf(stderr, "clgrad compare: cannot create %s: %s\n", r->opt.out_dir, strerror(errno));
			return 1;
		}
		if (!(rc = load_baseline(r))) { /* a refusal (workloads or versions differ) is a usage error: 2 */
			rc = cmp_load_reports(r, merge, nmerge);
			rc = rc == -2 ? 2 : rc ? 1 : write_reports(r);
		}
		cmp_free(r);
		return rc;
	}
	if (render) {
		r->opt.out_dir = render;
		if ((rc = load_baseline(r)))
			return rc;
		if (cmp_load_dir(r, render)) {
			cmp_free(r);
			return 1;
		}
		rc = write_reports(r);
		cmp_free(r);
		return rc;
	}
	if (!r->opt.out_dir)
		return cli_error("compare", "--out DIR is required (clgrad compare --help)");
	if ((rc = load_baseline(r)) || (rc = resolve_devices(r->opt.devices, idx, &n)))
		goto free_run;
	if (mkdir_p(r->opt.out_dir)) {
		fprintf(stderr, "clgrad compare: cannot create %s: %s\n", r->opt.out_dir, strerror(errno));
		rc = 1;
		goto free_run;
	}
	if ((rc = cmp_run_devices(r, idx, n)))
		goto free_run;
	rc = write_reports(r);
free_run:
	cmp_free(r);
	return rc;
}
