/* clgrad train and eval, the command's parts (cmd_train.c parses and sequences; the rest is
 * train_data.c: the data a model reads; train_view.c: what a run shows and logs, progress, profile;
 * train_devices.c: the devices a run uses, --device auto's measurement, the MPI ranks). */
#ifndef CLGRAD_TRAIN_CMD_H
#define CLGRAD_TRAIN_CMD_H

#include "cli.h"
#include "device_auto.h"
#include "json_write.h"
#include "opts.h"
#include "progress.h"
#include "train_lm.h"
#include "train_mpi.h"
#include <clg_measure.h>
#include <clg_op_timer.h>
#include <clgrad_generate.h>
#include <clgrad_train.h>

#include <stdint.h>
#include <stdio.h>

#define DEFAULT_IMAGES "/usr/share/datasets/fashion-mnist"
#define DEFAULT_TEXT "/usr/share/common-licenses/GPL-3"
#define PROF_TOP 12 /* --profile: rows of the op table unless --profile-top says */

typedef struct {
	clg_train_config cfg;
	const char *data, *device, *devices, *resume, *log, *checkpoint;
	const char *tokenizer;  /* --tokenizer bytes|chars|bpe:N|FILE (language models) */
	const char *preset;     /* --preset tiny|gpt2-small|gpt2-medium (gpt) */
	const char *lm_text;    /* the text when --data is not given: a checkpoint's, else DEFAULT_TEXT */
	const clg_tokenizer *ckpt_tok; /* --resume / eval: the checkpoint's tokenizer, or NULL */
	int64_t limit;
	int mpi;
	int profile;          /* --profile: commands and host time a step, each epoch */
	int32_t profile_top;  /* --profile-top N: the op table's rows (0: every op); implies --profile */
	double mpi_timeout;   /* seconds a rank waits for the others before it gives up */
} train_opts;

typedef struct {
	clg_dataset train, test;
	clg_text text;
	int lm;
	double unigram;  /* language model: validation loss of the training text's unigram model */
	int loaded;      /* already loaded (--device auto measures on the data first) */
	char *tok_str;   /* language model: the tokenizer serialised, and the text's fingerprint and path, */
	char fingerprint[64];  /* for the checkpoints (the configuration points at them) */
	char text_path[4096];
} data_sets;

/* Time to first step: seconds after launch when the first step began and when it was done. */
typedef struct {
	double age0, t0;            /* process age at cmd_train's start (0 if unknown), clg_now() then */
	double opened_s, data_s;      /* launch to the device open, to the data loaded */
	double ready_s, precompile_s; /* launch to programs ready; the precompile call alone */
	double begun_s, done_s;
	int programs, done;
} first_step;

/* load_data on a thread of its own, beside the device's start (fast start: decompressing the
 * images is the longest part of a warm start). The thread's error message is carried back. */
typedef struct {
	train_opts *o;
	data_sets *d;
	clg_status st;
	char msg[1024];
} data_job;

/* What the CLI shows and logs of a run: the progress bar, the epoch lines, the JSON log. */
typedef struct {
	const train_opts *o;
	const data_sets *d;
	const char *device;
	const int *idx;       /* device indices, in replica order */
	FILE *log;
	first_step *fs;
	clg_progress pr;
	char label[64];
	long steps, fault_at;  /* tests: CLGRAD_TEST_TRAIN_FAULT=crash:N|hang:N at this process's Nth step */
	int fault_hang;
	/* --profile: the ops of a few steps an epoch timed on the first device (clg_op_timer.h) */
	clg_backend *prof_be;
	clg_op_timer prof;
	int64_t prof_from, prof_to; /* steps (1-based, this epoch) timed */
} run_view;

/* train_data.c */
/* The datasets of o's model (images, or a text through its tokenizer), into d. */
clg_status train_load_data(train_opts *o, data_sets *d);
void train_free_data(data_sets *d);
/* train_load_data on a thread of its own (a data_job *) */
void *train_data_thread(void *arg);

/* train_view.c: the trainer's callbacks (user: a run_view *), the first step's timing */
double train_process_age(void);
double train_since_launch(const first_step *f);
void train_test_fault_init(run_view *v);
void train_on_epoch_begin(void *user, int64_t epoch, int64_t epochs, int64_t steps);
int train_on_loss_due(void *user, int64_t step);
void train_on_step_end(void *user, const clg_step_info *s);
clg_status train_on_epoch_end(void *user, const clg_epoch_info *e);

/* train_devices.c: --device (auto measures on d's first rows), --devices, open + load, --mpi */
clg_status train_select_device(train_opts *o, data_sets *d, int eval, int *idx);
clg_status train_resolve_devices(const train_opts *o, int *idx, int *n);
clg_status train_open_and_load(train_opts *o, data_sets *d, first_step *fs, const int *idx, int n, clg_backend **be);
clg_status train_start_mpi(int *argc, char ***argv, train_opts *o, clg_train_comm *comm, int *idx, int *n, int *up);

#endif
