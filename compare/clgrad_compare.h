/* clgrad's comparison mode as a library: identical workloads (peaks, kernel compiles, the op
 * suite, short training runs) on every device, each device in a child process of its own with a
 * watchdog, then reports side by side (docs/COMPARE.md). `clgrad compare` and the Python
 * package's clgrad.compare() are shells over these calls.
 *
 *     clg_compare_options o = clg_compare_defaults();
 *     o.out_dir = "cmp"; o.quick = 1;
 *     clg_compare_result res;
 *     if (clg_compare_run(&o, &res) == CLG_OK)   // cmp/report.json, report.md, report.html
 *             printf("%d of %d devices ok\n", res.ok, res.devices);
 *
 * Errors: CLG_ERR_INVALID for what the caller gave (a device spec, a suite name, a baseline or a
 * report to merge that is not one, reports whose workloads differ), CLG_ERR_IO for folders and
 * files, with the message in clg_last_error(). A device that fails, crashes or hangs is not an
 * error: its row says so (status "error", "crashed", "timeout") and res.ok counts the others. */
#ifndef CLGRAD_COMPARE_API_H
#define CLGRAD_COMPARE_API_H

#include <clgrad.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	const char *out_dir;   /* required: the run's folder (made when missing) */
	const char *devices;   /* "all" (NULL) or comma-separated specs as clg_device_select takes */
	const char *suites;    /* comma-separated of peak, compile, ops, train (NULL or "all": all) */
	int quick;             /* the short workloads: the whole run in about 2 minutes */
	double timeout_s;      /* watchdog per device; 0: 240 s with quick, 600 s without */
	const char *baseline;  /* an earlier report.json to diff against, or NULL */
	const char *data_dir;  /* Fashion-MNIST for the train section; NULL: the CLGRAD_DATA option's */
	const char *worker;    /* the clgrad program a child runs as `WORKER compare --worker I ...`;
	                        * NULL: this process's own program (/proc/self/exe: the clgrad command) */
	const char *command;   /* the command line the report records; NULL: "clgrad compare" */
	FILE *log;             /* progress: a line as each device starts and ends; NULL: quiet */
	FILE *table;           /* at the end, the table of devices (and the baseline's diff); NULL: none */
} clg_compare_options;

typedef struct {
	int devices;           /* devices in the report */
	int ok;                /* of which finished every section ("ok") */
	int interrupted;       /* SIGINT or SIGTERM stopped the run (the worker was killed, no report) */
	char report[1100];     /* out_dir/report.json */
} clg_compare_result;

clg_compare_options clg_compare_defaults(void);
/* Runs the selected devices one after the other and writes out_dir/report.{json,md,html}. While it
 * runs, SIGINT and SIGTERM kill the running child and end the run (res->interrupted); the
 * caller's handlers are restored before it returns. */
clg_status clg_compare_run(const clg_compare_options *o, clg_compare_result *res);
/* The reports again from the device files already in out_dir (after an edit of the renderer). */
clg_status clg_compare_render(const clg_compare_options *o, clg_compare_result *res);
/* The devices of n report.json files (other machines', say) side by side in out_dir; refused
 * (CLG_ERR_INVALID, one line naming both files and what differs) when the clgrad versions or the
 * workloads differ, or a file is not a well-formed report. */
clg_status clg_compare_merge(const clg_compare_options *o, const char *const *reports, int n,
			     clg_compare_result *res);
/* One device's child: runs the sections on device_index and writes out_dir/device-I.json. Returns
 * the child's exit status: 0, 4 (some section could not run), 1 or 2. For the clgrad command. */
int clg_compare_worker(const clg_compare_options *o, int device_index);

#ifdef __cplusplus
}
#endif
#endif
