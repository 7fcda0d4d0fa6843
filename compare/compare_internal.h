/* clgrad compare, the driver's side (see compare/compare.h for the sections' contract and
 * docs/COMPARE.md for the whole design): options, the per-device records the reports read, and
 * the functions of each file. */
#ifndef CLGRAD_COMPARE_INTERNAL_H
#define CLGRAD_COMPARE_INTERNAL_H

#include "clgrad_compare.h"
#include "compare.h"

#include <clg_backend_impl.h>
#include <clg_config.h>
#include "json_read.h"

#define CMP_MAX_DEVICES 32
#define CMP_SCHEMA "clgrad-compare/1"
#define CMP_SCHEMA_VERSION 2 /* 2: clgrad_version and workload */
#define CMP_DEVICE_SCHEMA "clgrad-compare-device/1"

/* suite bits */
enum { CMP_PEAK = 1, CMP_COMPILE = 2, CMP_OPS = 4, CMP_TRAIN = 8, CMP_ALL = 15 };

typedef struct {
	int suites;               /* CMP_* bits */
	int quick;
	const char *out_dir;
	const char *data_dir;
	const char *devices;      /* "all" or a comma-separated list of specs */
	const char *baseline;     /* earlier report.json, or NULL */
	double timeout_s;         /* per device; 0: the default for quick / full */
	char command[1024];       /* the command line, for the report */
	const char *worker;       /* the program a child execs; NULL: /proc/self/exe */
	FILE *log;                /* progress lines; NULL: quiet */
	FILE *table;              /* the table at the end; NULL: none */
} cmp_opts;

/* the scores of one device, 0..100, NAN where a category has no data */
typedef struct {
	double features, compile, correctness, performance, stability, overall;
} cmp_scores;

#define CMP_MAX_TRAIN 8

/* One device of the run: what the driver saw of its child and what the child wrote. */
typedef struct {
	int index;
	char name[160], type[16];
	char platform[128];       /* capabilities.platform: whose OpenCL stack, "" when unknown */
	char driver[64];          /* capabilities.driver_version */
	char label[360];          /* "platform · device · driver": which stack a row is */
	char short_label[64];     /* "[machine: ]PoCL · device", cut to fit a chart's label */
	char machine[64];         /* --merge: the hostname of the report it came from */
	char status[16];          /* ok, partial, error, crashed, timeout, skipped */
	char detail[160];         /* signal name, exit code or why the JSON was refused */
	int exit_code;            /* the child's exit status; -1 when killed */
	double elapsed_s;
	char log[512];            /* the child's log file (relative to the run folder) */
	jv *doc;                  /* device-INDEX.json, NULL when missing or unreadable */
	int salvaged;             /* doc is the worker's device-INDEX.partial.json: it did not finish */
	const jv *sections;       /* doc's "sections" */
	int n_train;
	char train_model[CMP_MAX_TRAIN][32];
	double train_div[CMP_MAX_TRAIN]; /* max relative loss difference vs the reference, NAN unknown */
	cmp_scores scores;
} cmp_device;

/* The devices of one OpenCL platform (vendor stack), for the findings grouped per vendor. */
typedef struct {
	char platform[128], platform_vendor[128];
	char driver[64];              /* one driver version a group: PoCL 3.1 and PoCL 6 are two stacks */
	int shared;                   /* another group has the same platform (the name then shows the driver) */
	int n, dev[CMP_MAX_DEVICES];  /* positions in cmp_run.dev */
} cmp_vendor;

typedef struct {
	cmp_opts opt;
	int n;
	cmp_device dev[CMP_MAX_DEVICES];
	int n_vendors;
	cmp_vendor vendors[CMP_MAX_DEVICES];
	/* --merge: the reports read (the devices' sections point into them) and their files */
	int n_merged;
	jv *merged[CMP_MAX_DEVICES];
	const char *merged_files[CMP_MAX_DEVICES];
	char created[32];
	jv *baseline;             /* parsed --baseline file */
	int from_dir;             /* --render-only: the run's workload is what its report.json recorded */
	jv *source;               /* --render-only: that report.json, NULL when there was none */
} cmp_run;

/* compare_worker.c: the child; returns its exit code */
int cmp_worker(const cmp_opts *o, int index);
/* compare_driver.c: one child per device, sequentially, with a watchdog; 1 when SIGINT or SIGTERM
 * ended the run (the running child killed), else 0 */
int cmp_run_devices(cmp_run *r, const int *indices, int n);
int cmp_suite_parse(const char *s, int *bits);
void cmp_suite_str(int bits, char *buf, size_t len);
/* compare_merge.c: read the workers' files, divergence, report.json */
/* device-INDEX.json, or with partial the sections a worker finished before it died */
int cmp_load_device(cmp_run *r, cmp_device *d, const char *dir, int partial);
clg_status cmp_load_dir(cmp_run *r, const char *dir);   /* --render-only */
/* --merge: every device of each report.json (from other machines, say), renumbered in order,
 * side by side in one run; the reports' own reference devices stay in (the first one is the
 * reference for the train divergence). */
int cmp_load_reports(cmp_run *r, char *const *paths, int n);  /* -2: refused (cmp_workload_check) */
void cmp_merge(cmp_run *r);                      /* divergence + scores */
int cmp_write_json(const cmp_run *r, const char *path);
void cmp_free(cmp_run *r);
/* compare_workload.c: report.json's "clgrad_version" and "workload" (computed for a run, copied
 * for --render-only and --merge), and --merge's check that the reports ran the same */
void cmp_workload_json(const cmp_run *r, json_writer *w);
void cmp_suites_json(int bits, json_writer *w);  /* ["peak", "ops", ...] */
/* 0 when report b (file bfile) has a's clgrad version and workload; else -1 with the message (clg_fail) naming
 * both files and what differs */
int cmp_workload_check(const jv *a, const char *afile, const jv *b, const char *bfile);
/* --merge: a table of the machines (hostname, CPU, OS, devices, report) in the terminal, markdown, HTML */
void cmp_machines_print(const cmp_run *r, FILE *f, int markdown);
void cmp_machines_html(const cmp_run *r, FILE *f, void (*esc)(FILE *, const char *));
/* compare_scores.c */
void cmp_score_device(const cmp_run *r, cmp_device *d);
/* compare_report_text.c: terminal table and report.md */
void cmp_print_table(const cmp_run *r, FILE *f);
int cmp_write_markdown(const cmp_run *r, const char *path);
/* compare_report_html.c */
int cmp_write_html(const cmp_run *r, const char *path);
/* compare_baseline.c: what changed against an earlier report.json (printed and in the report) */
void cmp_baseline_print(const cmp_run *r, FILE *f, int markdown);
void cmp_baseline_json(const cmp_run *r, json_writer *w);

/* compare_vendors.c: each device's label and the findings (failed / routed / fallback) grouped
 * per platform, in the terminal, markdown, HTML and report.json */
void cmp_label_devices(cmp_run *r);              /* labels + vendor groups; cmp_merge calls it */
void cmp_vendors_print(const cmp_run *r, FILE *f, int markdown);
void cmp_vendors_html(const cmp_run *r, FILE *f, void (*esc)(FILE *, const char *));
void cmp_vendors_json(const cmp_run *r, json_writer *w);

/* compare_maturity.c: per stack what fails, what is routed (and why, with the known-bad evidence),
 * what is slow against its own peak; per platform with two driver versions what changed */
void cmp_maturity_print(const cmp_run *r, FILE *f, int markdown);
void cmp_maturity_html(const cmp_run *r, FILE *f, void (*esc)(FILE *, const char *));
void cmp_maturity_json(const cmp_run *r, json_writer *w);

/* helpers shared by the report files (compare_merge.c) */
const jv *cmp_section(const cmp_device *d, const char *name);
double cmp_sec_num(const cmp_device *d, const char *path);   /* "peaks.fp32_gflops" */
int cmp_section_ok(const cmp_device *d, const char *name);   /* ran without "error" */
const cmp_device *cmp_reference(const cmp_run *r);           /* index 0 if in the run */
double cmp_train_samples(const cmp_device *d, const char *model);
/* Opens path.tmp for writing; cmp_commit closes it and renames it to path. */
FILE *cmp_open_atomic(const char *path, char *tmp, size_t tmplen);
int cmp_commit(FILE *f, const char *tmp, const char *path);
void cmp_fmt(char *buf, size_t len, double x, int digits); /* "-" for NAN */

#endif
