/* The comparison mode as a library (compare/clgrad_compare.h), as the Python binding calls it:
 * a run on the reference device with the clgrad command as the worker program, the refusals
 * (unknown suite, unknown device, a baseline or a merge input that is not a report), and Ctrl-C:
 * SIGINT during a run stops the worker at once, returns CLG_ERR_STATE with res.interrupted, and
 * leaves the caller's own SIGINT handler in place.
 * usage: test_compare_api CLGRAD_PROGRAM */
#define _GNU_SOURCE
#include "test_util.h"

#include <clgrad_compare.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void callers_handler(int sig) { (void)sig; }

static void *interrupt_soon(void *arg)
{
	(void)arg;
	usleep(700 * 1000);
	kill(getpid(), SIGINT);
	return NULL;
}

int main(int argc, char **argv)
{
	char *dir = t_tmpdir(), out[256], path[300], script[300];
	clg_compare_options o = clg_compare_defaults();
	clg_compare_result res;
	struct sigaction mine = {0}, now;
	clg_status st;
	pthread_t th;
	FILE *f;

	if (argc < 2 || !dir) {
		printf("usage: test_compare_api CLGRAD_PROGRAM\n");
		return 1;
	}
	/* a run: the reference device, the compile section (quick there: it writes null and says why) */
	snprintf(out, sizeof(out), "%s/run", dir);
	o.out_dir = out;
	o.devices = "ref";
	o.suites = "compile";
	o.quick = 1;
	o.worker = argv[1];
	st = clg_compare_run(&o, &res);
	CHECK(st == CLG_OK, "run on ref: %s", clg_last_error());
	CHECK(res.devices == 1 && res.ok == 1 && !res.interrupted, "run: %d devices, %d ok", res.devices, res.ok);
	CHECK(access(res.report, R_OK) == 0, "run: no report at '%s'", res.report);
	/* the same folder rendered again */
	st = clg_compare_render(&o, &res);
	CHECK(st == CLG_OK && res.devices == 1, "render: %s", clg_last_error());

	/* refusals: the caller's mistakes are CLG_ERR_INVALID with a message that names them */
	o.suites = "compile,warp";
	st = clg_compare_run(&o, &res);
	CHECK(st == CLG_ERR_INVALID && strstr(clg_last_error(), "warp"), "unknown suite: %d '%s'", st, clg_last_error());
	o.suites = "compile";
	o.devices = "no-such-device";
	st = clg_compare_run(&o, &res);
	CHECK(st == CLG_ERR_INVALID && strstr(clg_last_error(), "no-such-device"), "unknown device: %d '%s'", st,
	      clg_last_error());
	o.devices = "ref";
	snprintf(path, sizeof(path), "%s/not-a-report.json", dir);
	f = fopen(path, "w");
	fputs("{\"schema\": \"something else\"}\n", f);
	fclose(f);
	o.baseline = path;
	st = clg_compare_run(&o, &res);
	CHECK(st == CLG_ERR_INVALID && strstr(clg_last_error(), "--baseline"), "bad baseline: %d '%s'", st, clg_last_error());
	o.baseline = NULL;
	{
		const char *reports[] = {res.report[0] ? res.report : path, path};
		char merged[300];
		snprintf(merged, sizeof(merged), "%s/merged", dir);
		o.out_dir = merged;
		st = clg_compare_merge(&o, reports, 2, &res);
		CHECK(st != CLG_OK && strstr(clg_last_error(), "not-a-report.json"), "merge of a non-report: %d '%s'", st,
		      clg_last_error());
		o.out_dir = out;
	}
	st = clg_compare_run(&(clg_compare_options){0}, &res);
	CHECK(st == CLG_ERR_INVALID, "no output folder must be refused");

	/* Ctrl-C: a worker that would sleep 60 s; SIGINT after 0.7 s ends the run within a few seconds */
	snprintf(script, sizeof(script), "%s/slow-worker.sh", dir);
	f = fopen(script, "w");
	fputs("#!/bin/sh\nsleep 60\n", f);
	fclose(f);
	chmod(script, 0755);
	mine.sa_handler = callers_handler;
	sigemptyset(&mine.sa_mask);
	sigaction(SIGINT, &mine, NULL);
	o.worker = script;
	double t0 = clg_now();
	pthread_create(&th, NULL, interrupt_soon, NULL);
	st = clg_compare_run(&o, &res);
	pthread_join(th, NULL);
	double took = clg_now() - t0;
	CHECK(st == CLG_ERR_STATE && res.interrupted, "interrupted run: status %d, interrupted %d ('%s')", st,
	      res.interrupted, clg_last_error());
	CHECK(took < 10, "interrupted run took %.1f s: the worker was not stopped", took);
	sigaction(SIGINT, NULL, &now);
	CHECK(now.sa_handler == callers_handler, "the caller's SIGINT handler was not restored");

	t_rmtree(dir);
	free(dir);
	printf("test_compare_api: %s (%d failures)\n", t_failures ? "FAILED" : "ok", t_failures);
	return t_failures ? 1 : 0;
}
