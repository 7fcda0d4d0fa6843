/* clgrad sweep: a grid of training runs spread over devices, one process per run, at most one
 * run per device at a time; a crashed or hung run is recorded and the rest go on; an interrupted
 * sweep resumes without re-running finished runs. Files under --out DIR:
 *   sweep.json               the plan (every run's train options); a resume must match it
 *   runs/<id>/train.log      the run's output;  runs/<id>/log.jsonl  its epoch log
 *   runs/<id>/model.safetensors  its checkpoint (an interrupted run resumes from it)
 *   runs/<id>/result.json    written when the run ends (its presence marks it finished)
 *   results.{json,md,html}   the table of every run, and the loss curves (inline SVG) */
#ifndef CLGRAD_SWEEP_H
#define CLGRAD_SWEEP_H

#include <stdio.h>

#define SWEEP_MAX_AXES 8
#define SWEEP_MAX_VALUES 32
#define SWEEP_MAX_FIXED 24
#define SWEEP_MAX_RUNS 512
#define SWEEP_MAX_ARGS (2 * (SWEEP_MAX_AXES + SWEEP_MAX_FIXED))
#define SWEEP_MAX_EPOCHS 200
#define SWEEP_MAX_DEVICES 16

typedef struct {
	const char *opt;                    /* train option without dashes: "lr" */
	int n;
	char *values[SWEEP_MAX_VALUES];
} sweep_axis;

typedef struct {
	int epoch;
	double train_loss, test_loss, test_acc; /* test_acc NAN for a language model */
} sweep_epoch;

typedef struct {
	char id[16];                        /* "r007" */
	char label[160];                    /* the axes' values: "model=mlp lr=1e-3" */
	int argc;
	const char *argv[SWEEP_MAX_ARGS];   /* train options of this run (no device, log, save) */
	/* result */
	int finished;                       /* result.json present */
	int earlier;                        /* finished by an earlier invocation */
	char status[16];                    /* ok, error, crashed, timeout */
	char detail[256];
	int device;
	char device_name[128];
	double seconds;
	int lm;                             /* language model: test_loss is the validation loss */
	int n_epochs;
	sweep_epoch ep[SWEEP_MAX_EPOCHS];
} sweep_run;

typedef struct {
	const char *out;
	double timeout_s;                   /* per run; 0: none */
	int retry_failed, dry_run;
	int devices[SWEEP_MAX_DEVICES], n_devices;
	sweep_axis axes[SWEEP_MAX_AXES];
	int n_axes;
	const char *fixed[2 * SWEEP_MAX_FIXED]; /* option, value pairs common to every run */
	int n_fixed;
	sweep_run *runs;
	int n_runs;
} sweep;

/* sweep_exec.c: runs every unfinished run; returns 0, or 130 when interrupted. */
int sweep_execute(sweep *s);

/* sweep_report.c */
/* Reads runs/<id>/log.jsonl into r->ep (the last line of each epoch wins). */
void sweep_read_log(const sweep *s, sweep_run *r);
int sweep_write_result(const sweep *s, const sweep_run *r);
/* 0 and r filled when runs/<id>/result.json holds a result; -1 when absent or unreadable. */
int sweep_load_result(const sweep *s, sweep_run *r);
void sweep_print_table(const sweep *s, FILE *f);
int sweep_write_reports(const sweep *s);

#endif
