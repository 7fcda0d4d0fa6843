/* clgrad compare: run identical workloads on every device, each in its own child process, and
 * report what works, how fast and how stable (docs/COMPARE.md). This file parses the command line;
 * the comparison mode is a library (compare/clgrad_compare.h). */
#include "cli.h"
#include "clgrad_compare.h"
#include "opts.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>


static const char usage[] =
	"usage: clgrad compare [--devices all|SPEC,...] [--suite peak,compile,ops,train] [--quick]\n"
	"                      --out DIR [--baseline OLD.json] [--timeout SECONDS] [--data DIR]\n"
	"       clgrad compare --render-only DIR [--baseline OLD.json]\n"
	"       clgrad compare --merge A.json B.json ... --out DIR   (reports of other machines, side by side)\n"
	"Runs every selected device (the reference backend included) in its own child process with a\n"
	"watchdog, then writes DIR/report.json, DIR/report.md and DIR/report.html and prints a table.\n"
	"Exit status: 0 every device ok, 3 the report is complete but some device was not ok\n"
	"(partial, error, crashed, timeout), 1 no report could be written, 2 usage.\n";

/* the exit status of a library call: 0 every device ok, 3 some device not, 2 what the user gave
 * was refused, 1 anything else (after one line on stderr) */
static int exit_status(clg_status st, const clg_compare_result *res)
{
	if (st == CLG_OK)
		return res->ok == res->devices ? 0 : 3;
	fprintf(stderr, "clgrad compare: %s\n", clg_last_error());
	if (res->interrupted) { /* as if the signal had ended us: the shell sees Ctrl-C */
		signal(SIGINT, SIG_DFL);
		raise(SIGINT);
	}
	return st == CLG_ERR_INVALID ? 2 : 1;
}

int cmd_compare(int argc, char **argv)
{
	clg_compare_options o = clg_compare_defaults();
	clg_compare_result res = {0};
	const char *render = NULL, *out = NULL;
	char command[1024], **rest = NULL, **merge = NULL;
	int worker = -1, nmerge = 0, nrest = 0, rc;
	size_t used = 0;

	command[0] = 0;
	for (int i = 0; i < argc && used < sizeof(command) - 2; i++)
		used += snprintf(command + used, sizeof(command) - used, "%s%s", i ? " " : "clgrad ", argv[i]);
	o.command = command;
	o.log = stderr; /* progress on stderr, the table on stdout */
	o.table = stdout;
	const cli_opt opts[] = {
		CLI_OPT_FLAG("quick", &o.quick),
		CLI_OPT_STR("devices", &o.devices),
		CLI_OPT_STR("suite", &o.suites),
		CLI_OPT_STR("out", &out),
		CLI_OPT_STR("baseline", &o.baseline),
		CLI_OPT_STR("data", &o.data_dir),
		CLI_OPT_POS("timeout", &o.timeout_s, 1e6),
		CLI_OPT_STR("render-only", &render),
		CLI_OPT_I32("worker", &worker, 0, 1 << 20), /* internal: the child of one device */
	};
	cli_spec cs = {.cmd = "compare", .usage = usage, .opts = opts, .n = CLI_N(opts)};
	/* --merge A.json B.json ...: the files up to the next option, taken out before the table's
	 * parse (argv keeps them consecutive) */
	if (!(rest = malloc(sizeof(char *) * (size_t)(argc + 1))))
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
	o.out_dir = out;
	if (worker >= 0) /* the child's progress goes to its log (its stdout and stderr) */
		return out ? clg_compare_worker(&o, worker) : cli_error("compare", "--worker needs --out DIR");
	if (merge) {
		if (!out || render)
			return cli_error("compare", "--merge needs --out DIR and no --render-only");
		return exit_status(clg_compare_merge(&o, (const char *const *)merge, nmerge, &res), &res);
	}
	if (render) {
		o.out_dir = render;
		return exit_status(clg_compare_render(&o, &res), &res);
	}
	if (!out)
		return cli_error("compare", "--out DIR is required (clgrad compare --help)");
	return exit_status(clg_compare_run(&o, &res), &res);
}
