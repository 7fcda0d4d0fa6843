/* clgrad train / clgrad eval: train a model on real data on any device, with progress, a JSON
 * log, checkpoints and resume; evaluate a saved checkpoint. */
#define _GNU_SOURCE /* realpath */
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
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void usage_text(char *buf, size_t len, const char *cmd)
{
	snprintf(buf, len,
		"usage: clgrad %s [--model mlp|cnn|transformer|gpt|gfnet] [--data DIR|FILE] [--epochs N] [--batch N]\n"
		"       [--lr X] [--optimizer sgd|adam|adamw] [--momentum X] [--weight-decay X] [--weight-decay-all]\n"
		"           (weight decay: L2 for sgd and adam, decoupled for adamw; default 0, adamw 0.01 as PyTorch;\n"
		"            biases and norm weights (tensors of 1 dim) are not decayed unless --weight-decay-all)\n"
		"       [--schedule constant|cosine|step] [--warmup STEPS] [--clip NORM] [--device SPEC|auto]\n"
		"       [--seed N] [--save FILE] [--resume FILE] [--log FILE] [--limit SAMPLES]\n"
		"       [--stop-after EPOCHS]   (end early, as if interrupted; --resume continues the same run)\n"
		"       [--profile]   (each epoch: kernel launches, transfers and host time a step)\n"
		"       [--profile-top N]   (--profile whose op table lists the N longest ops, default 12; 0: every op)\n"
		"       [--precision fp32|mixed]   (mixed: float16 forward/backward of the GEMM-like ops on float32\n"
		"                                  master weights, dynamic loss scaling; resumes in either)\n"
		"       [--devices SPEC,SPEC,...|all] [--shares measured|equal] [--compress none|int8]   (data parallel)\n"
		"       [--mpi] [--mpi-timeout S]   (under mpirun: one device per rank, chosen by the local rank among\n"
		"                                  --devices; a rank gives up after S s without an answer, default 120)\n"
		"       [--seq-len T] [--dim D] [--heads H] [--layers L]     (transformer, gpt; gfnet: --dim, --layers)\n"
		"       [--preset tiny|gpt2-small|gpt2-medium]   (gpt: the dims (tiny: T 256, D 128, 4 heads, 4 layers, the\n"
		"                                  default; gpt2-small: 1024, 768, 12, 12; gpt2-medium: 1024, 1024, 16, 24),\n"
		"                                  which the dims given override)\n"
		"       [--dropout P]   (gpt: embedding, attention and residual dropout while training, default 0)\n"
		"       [--tokenizer chars|bytes|bpe:N|FILE]   (transformer, gpt; default chars: the set of bytes in the text;\n"
		"                                  bytes: all 256; bpe:N: N tokens learned from the training part;\n"
		"                                  FILE: what clgrad tokenize wrote; stored in the checkpoints)\n"
		"       [--recompute]   (transformer, gpt: keep no activations inside a block, re-run its forward in\n"
		"                        backward: less memory for a second forward's time)\n"
		"       [--accum-steps N]   (gradient accumulation: an optimizer step every N batches of --batch rows,\n"
		"                            as one batch of N times the rows in one batch's memory; default 1)\n"
		"       clgrad eval --checkpoint FILE [--data DIR|FILE] [--device SPEC|auto] [--batch N]\n"
		"Options take --opt VALUE or --opt=VALUE; a value out of range is refused (exit status 2).\n"
		"defaults: mlp on Fashion-MNIST (%s), 5 epochs, batch 128, Adam lr 1e-3;\n"
		"gfnet: width 64, 2 blocks, Adam lr 2e-3, 200 warmup steps, cosine schedule;\n"
		"the transformer trains on a text file or a folder of them, e.g. /usr/share/games/fortunes (default %s)\n",
		cmd, DEFAULT_IMAGES, DEFAULT_TEXT);
}

/* The options given by name (--optimizer adam), mapped to the configuration's enums after parsing. */
typedef struct {
	const char *optimizer, *schedule, *shares, *compress, *precision;
} train_strs;

/* The option table, its entries pointing into o and s; returns the number of entries. */
#define TRAIN_MAX_OPTS 48
static int train_table(train_opts *o, train_strs *s, cli_opt *t)
{
	clg_train_config *c = &o->cfg;
	clg_model_config *m = &c->model;
	const cli_opt table[] = {
		CLI_OPT_STR("model", &m->name),
		CLI_OPT_STR("data", &o->data),
		CLI_OPT_I64("epochs", &c->epochs, 1, 1000000),
		CLI_OPT_I64("batch", &c->batch, 1, 1048576),
		CLI_OPT_POS("lr", &c->optim.lr, 1e3),
		CLI_OPT_CHOICE("optimizer", &s->optimizer, "sgd|adam|adamw"),
		CLI_OPT_REAL("momentum", &c->optim.momentum, 0, 1),
		CLI_OPT_REAL("weight-decay", &c->optim.weight_decay, 0, 1e3),
		CLI_OPT_FLAG("weight-decay-all", &c->weight_decay_all),
		CLI_OPT_CHOICE("schedule", &s->schedule, "constant|cosine|step"),
		CLI_OPT_I64("warmup", &c->warmup, 0, INT64_C(1000000000000)),
		CLI_OPT_REAL("clip", &c->clip, 0, 1e9),
		CLI_OPT_STR("device", &o->device),
		CLI_OPT_STR("devices", &o->devices),
		CLI_OPT_FLAG("mpi", &o->mpi),
		CLI_OPT_FLAG("profile", &o->profile),
		CLI_OPT_I32("profile-top", &o->profile_top, 0, 1000000),
		CLI_OPT_POS("mpi-timeout", &o->mpi_timeout, 1e6),
		CLI_OPT_CHOICE("shares", &s->shares, "measured|equal"),
		CLI_OPT_CHOICE("compress", &s->compress, "none|int8"),
		CLI_OPT_CHOICE("precision", &s->precision, "fp32|mixed"),
		CLI_OPT_U64("seed", &c->seed),
		CLI_OPT_STR("save", &c->save),
		CLI_OPT_STR("resume", &o->resume),
		CLI_OPT_STR("log", &o->log),
		CLI_OPT_I64("limit", &o->limit, 1, INT64_C(1000000000000)),
		CLI_OPT_I64("stop-after", &c->stop_after, 1, 1000000),
		CLI_OPT_STR("checkpoint", &o->checkpoint),
		CLI_OPT_I64("seq-len", &m->seq_len, 1, 65536),
		CLI_OPT_I64("dim", &m->dim, 1, 65536),
		CLI_OPT_I64("heads", &m->heads, 1, 1024),
		CLI_OPT_I64("layers", &m->layers, 1, 1024),
		CLI_OPT_STR("tokenizer", &o->tokenizer),
		CLI_OPT_CHOICE("preset", &o->preset, "tiny|gpt2-small|gpt2-medium"),
		CLI_OPT_REAL("dropout", &m->dropout, 0, 0.99),
		CLI_OPT_FLAG("recompute", &m->recompute),
		CLI_OPT_I64("accum-steps", &c->accum_steps, 1, 1000000),
	};
	_Static_assert(CLI_N(table) <= TRAIN_MAX_OPTS, "train option table");
	memcpy(t, table, sizeof(table));
	return CLI_N(table);
}

/* The value of --NAME on the command line (the last one given), or NULL. */
static const char *opt_arg(int argc, char **argv, const char *name)
{
	const char *m = NULL;
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) || strncmp(argv[i] + 2, name, n))
			continue;
		if (!argv[i][2 + n] && i + 1 < argc)
			m = argv[++i];
		else if (argv[i][2 + n] == '=')
			m = argv[i] + 3 + n;
	}
	return m;
}
static const char *model_arg(int argc, char **argv) { return opt_arg(argc, argv, "model"); }

/* gfnet's own defaults, which its options then override: width 64, 2 blocks, lr 2e-3 with
 * 200 warmup steps and cosine decay (tuned for >= 88% in 5 epochs, docs/PERFORMANCE.md). */
static void gfnet_defaults(clg_train_config *c)
{
	c->model.dim = 64;
	c->model.layers = 2;
	c->optim.lr = 2e-3;
	c->warmup = 200;
	c->schedule = CLG_LR_COSINE;
}

/* Returns -1 to go on, else the exit status (--help, --version, a bad option). */
static int parse(int argc, char **argv, train_opts *o, const char *cmd)
{
	static char usage[4096];
	cli_opt table[TRAIN_MAX_OPTS];
	train_strs s = {0};
	cli_spec spec = {.cmd = cmd, .usage = usage, .opts = table};
	clg_train_config *c = &o->cfg;
	int rc;

	*o = (train_opts){.cfg = clg_train_config_default(), .mpi_timeout = 120, .profile_top = -1};
	if (model_arg(argc, argv) && !strcmp(model_arg(argc, argv), "gfnet"))
		gfnet_defaults(c);
	/* gpt: the preset's dims (tiny unless --preset says), which the dims given then override; an
	 * unknown preset is refused by the parse below */
	if (model_arg(argc, argv) && !strcmp(model_arg(argc, argv), "gpt"))
		clg_gpt_preset(opt_arg(argc, argv, "preset") ? opt_arg(argc, argv, "preset") : "tiny", &c->model);
	usage_text(usage, sizeof(usage), cmd);
	spec.n = train_table(o, &s, table);
	c->optim.weight_decay = -1; /* not given: the kind's default, below */
	if ((rc = cli_parse(&spec, argc, argv)) >= 0)
		return rc;
	if ((o->preset || c->model.dropout > 0) && strcmp(c->model.name, "gpt"))
		return cli_error(cmd, "--%s is an option of --model gpt (not %s)", o->preset ? "preset" : "dropout",
				 c->model.name);
	if (o->profile_top >= 0)
		o->profile = 1;
	else
		o->profile_top = PROF_TOP;
	/* the choices were checked against the same names these take */
	if (s.optimizer)
		clg_opt_kind_parse(s.optimizer, &c->optim.kind);
	if (c->optim.weight_decay < 0)
		c->optim.weight_decay = clg_opt_config_default(c->optim.kind).weight_decay;
	if (s.schedule)
		clg_lr_kind_parse(s.schedule, &c->schedule);
	if (s.shares)
		c->fixed_shares = !strcmp(s.shares, "equal");
	if (s.compress)
		c->compress = !strcmp(s.compress, "int8") ? CLG_COMPRESS_INT8 : CLG_COMPRESS_NONE;
	if (s.precision)
		clg_precision_parse(s.precision, &c->precision);
	return -1;
}

int train_check_option(const char *cmd, const char *name, const char *value)
{
	train_opts o;
	train_strs s;
	cli_opt table[TRAIN_MAX_OPTS];
	const cli_opt *opt = cli_find(table, train_table(&o, &s, table), name);
	return opt ? cli_set(cmd, opt, value) : 0;
}

typedef struct {
	const char *dir;
	clg_dataset *ds;
	clg_status st;
	char msg[1024];
} split_job;

static void *split_thread(void *arg)
{
	split_job *j = arg;
	j->st = clg_dataset_load_idx(j->dir, "t10k", j->ds);
	if (j->st)
		snprintf(j->msg, sizeof(j->msg), "%s", clg_last_error());
	return NULL;
}

/* --tokenizer's default: chars for the transformer (what its checkpoints have always read), bytes
 * for a language model of another name. */
static const char *lm_default_tokenizer(const clg_model_config *m)
{
	return !strcmp(m->name, "transformer") ? "chars" : "bytes";
}

static clg_status load_data(train_opts *o, data_sets *d)
{
	clg_status st;
	memset(d, 0, sizeof(*d));
	d->lm = clg_model_is_lm(&o->cfg.model);
	if (d->lm) {
		const char *path = o->data ? o->data : o->lm_text ? o->lm_text : DEFAULT_TEXT;
		/* a checkpoint's tokenizer encodes the text unless --tokenizer names one (then compared) */
		st = clg_text_load_tok(path, 0.1, o->tokenizer ? NULL : o->ckpt_tok,
				       o->tokenizer ? o->tokenizer : lm_default_tokenizer(&o->cfg.model), &d->text);
		if (st == CLG_ERR_IO && !o->data && o->lm_text) { /* the checkpoint's text moved or was removed */
			char msg[1024];
			snprintf(msg, sizeof(msg), "%s", clg_last_error());
			st = clg_fail(st, "the text the checkpoint was trained on: %s; give a text with --data", msg);
		} else if (st && o->ckpt_tok && !o->tokenizer) {
			char msg[1024], desc[64];
			snprintf(msg, sizeof(msg), "%s", clg_last_error());
			clg_tokenizer_describe(o->ckpt_tok, desc, sizeof(desc));
			st = clg_fail(st, "the checkpoint's tokenizer (%s) cannot encode the text: %s", desc, msg);
		}
		if (!st)
			st = clg_text_windows(&d->text, 0, o->cfg.model.seq_len, o->cfg.model.seq_len, &d->train);
		if (!st)
			st = clg_text_windows(&d->text, 1, o->cfg.model.seq_len, o->cfg.model.seq_len, &d->test);
		o->cfg.model.vocab = d->text.vocab_size;
		if (!st)
			d->unigram = lm_unigram_loss(&d->text);
		if (!st)
			st = clg_tokenizer_to_string(d->text.tok, &d->tok_str);
		if (!st) {
			clg_ckpt_fingerprint(d->text.bytes, d->text.hash, d->fingerprint, sizeof(d->fingerprint));
			/* absolute: eval finds the text from any folder */
			if (!realpath(path, d->text_path))
				snprintf(d->text_path, sizeof(d->text_path), "%s", path);
			o->cfg.tokenizer = d->tok_str;
			o->cfg.data = d->fingerprint;
			o->cfg.data_path = d->text_path;
		}
	} else {
		const char *dir = o->data ? o->data : DEFAULT_IMAGES;
		float mean, sd;
		/* the two splits decompress at once, one on a thread of its own */
		split_job job = {.dir = dir, .ds = &d->test};
		pthread_t tid;
		int threaded = pthread_create(&tid, NULL, split_thread, &job) == 0;
		if (!threaded)
			split_thread(&job);
		st = clg_dataset_load_idx(dir, "train", &d->train);
		if (threaded)
			pthread_join(tid, NULL);
		if (!st && job.st)
			st = clg_fail(job.st, "%s", job.msg);
		/* normalise both splits with the training split's statistics */
		if (!st)
			st = clg_dataset_channel_stats(&d->train, 1, &mean, &sd);
		if (!st)
			st = clg_dataset_normalize(&d->train, 1, &mean, &sd);
		if (!st)
			st = clg_dataset_normalize(&d->test, 1, &mean, &sd);
	}
	if (!st && o->limit > 0 && o->limit < d->train.n) /* a quick run on the first samples */
		d->train.n = o->limit;
	if (!st && o->limit > 0 && o->limit < d->test.n)
		d->test.n = o->limit;
	return st;
}

static void free_data(data_sets *d)
{
	clg_dataset_free(&d->train);
	clg_dataset_free(&d->test);
	clg_text_free(&d->text);
	free(d->tok_str);
	d->tok_str = NULL;
}

/* Seconds since this process started (from /proc, 10 ms resolution), or -1 where unknown. */
static double process_age(void)
{
	char buf[1024], *p;
	double up = -1, start;
	long tck = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/uptime", "r");
	size_t n;

	if (!f)
		return -1;
	if (fscanf(f, "%lf", &up) != 1)
		up = -1;
	fclose(f);
	f = fopen("/proc/self/stat", "r");
	if (!f || up < 0 || tck <= 0) {
		if (f)
			fclose(f);
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* field 22 (starttime, clock ticks after boot), counted after the ")" that ends field 2 */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	start = (double)strtoull(p + 1, NULL, 10) / (double)tck;
	return up >= start ? up - start : -1;
}

/* Time to first step: seconds after launch when the first step began and when it was done. */
typedef struct {
	double age0, t0;            /* process age at cmd_train's start (0 if unknown), clg_now() then */
	double opened_s, data_s;      /* launch to the device open, to the data loaded */
	double ready_s, precompile_s; /* launch to programs ready; the precompile call alone */
	double begun_s, done_s;
	int programs, done;
} first_step;

static double since_launch(const first_step *f) { return f->age0 + (clg_now() - f->t0); }

/* load_data on a thread of its own, beside the device's start (fast start: decompressing the
 * images is the longest part of a warm start). The thread's error message is carried back. */
typedef struct {
	train_opts *o;
	data_sets *d;
	clg_status st;
	char msg[1024];
} data_job;

static void *data_thread(void *arg)
{
	data_job *j = arg;
	if (j->d->loaded)
		return NULL;
	j->st = load_data(j->o, j->d);
	if (j->st)
		snprintf(j->msg, sizeof(j->msg), "%s", clg_last_error());
	return NULL;
}

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

static void test_fault_init(run_view *v)
{
	const char *f = clg_cfg_str(CLG_CFG_TEST_TRAIN_FAULT);
	if (f && (!strncmp(f, "crash:", 6) || !strncmp(f, "hang:", 5))) {
		v->fault_hang = f[0] == 'h';
		v->fault_at = atol(strchr(f, ':') + 1);
	}
}

static void test_fault(run_view *v)
{
	if (!v->fault_at || ++v->steps != v->fault_at)
		return;
	fflush(NULL);
	if (v->fault_hang)
		for (;;)
			pause();
	signal(SIGSEGV, SIG_DFL); /* an OpenCL runtime may have its own handler */
	raise(SIGSEGV);
}

/* --profile times PROF_STEPS steps an epoch op by op, after PROF_SKIP untimed ones (the first
 * builds kernels and allocates); an epoch shorter than that is timed whole. */
#define PROF_SKIP 2
#define PROF_STEPS 3

static void on_epoch_begin(void *user, int64_t epoch, int64_t epochs, int64_t steps)
{
	run_view *v = user;
	snprintf(v->label, sizeof(v->label), "epoch %lld/%lld", (long long)epoch, (long long)epochs);
	if (v->prof_be) {
		v->prof_from = steps >= PROF_SKIP + PROF_STEPS ? PROF_SKIP + 1 : 1;
		v->prof_to = v->prof_from + PROF_STEPS - 1 < steps ? v->prof_from + PROF_STEPS - 1 : steps;
		clg_op_timer_clear(&v->prof);
		clg_backend_set_op_timer(v->prof_be, v->prof_from == 1 ? &v->prof : NULL);
	}
	clg_progress_begin(&v->pr, stdout, v->label, steps);
}

static int on_loss_due(void *user, int64_t step) { return clg_progress_due(&((run_view *)user)->pr, step); }

static void on_step_end(void *user, const clg_step_info *s)
{
	run_view *v = user;
	if (!isnan(s->loss))
		clg_progress_update(&v->pr, s->step, s->samples, s->loss);
	if (v->prof_be && (s->step == v->prof_from - 1 || s->step == v->prof_to))
		clg_backend_set_op_timer(v->prof_be, s->step == v->prof_to ? NULL : &v->prof);
	test_fault(v);
}

/* The op table's rows: --profile-top N (0: every op), else PROF_TOP. */
static int prof_top(const run_view *v)
{
	return v->o->profile_top == 0 ? INT32_MAX : v->o->profile_top;
}

/* A JSON array of n numbers (non-finite ones as null). */
static void json_key_nums(json_writer *w, const char *key, int n, const double *x)
{
	json_key(w, key);
	json_begin_array(w);
	for (int i = 0; i < n; i++)
		json_num(w, x[i]);
	json_end_array(w);
}

/* One line of the JSON log an epoch, through the JSON writer (a NaN loss is null, not nan). */
static void log_epoch(run_view *v, const clg_epoch_info *e, double lr)
{
	json_writer w;
	double per[CLG_TRAIN_MAX_DEVICES], st = e->steps > 0 ? (double)e->steps : 1;
	char sum[32];

	json_init(&w, v->log, 0);
	json_begin_object(&w);
	json_key_int(&w, "epoch", e->epoch);
	json_key_str(&w, "model", v->o->cfg.model.name);
	json_key_str(&w, "device", v->device);
	json_key_num(&w, "train_loss", e->train_loss);
	if (v->d->lm) {
		json_key_num(&w, "val_loss", e->test_loss);
		json_key_num(&w, "unigram_val_loss", v->d->unigram);
		json_key_num(&w, "val_bits_per_byte", e->test_loss * lm_bits_a_byte(&v->d->text));
	} else {
		json_key_num(&w, "test_acc", e->test_acc);
		json_key_num(&w, "test_loss", e->test_loss);
	}
	json_key_num(&w, "epoch_seconds", e->seconds);
	json_key_num(&w, "samples_per_s", (double)e->samples / e->seconds);
	json_key_int(&w, "steps", e->steps);
	json_key_num(&w, "lr", lr);
	if (e->steps > 0) {
		json_key_num(&w, "host_seconds", e->host_seconds);
		json_key_num(&w, "enqueue_seconds", e->enqueue_seconds);
		json_key_num(&w, "launches_per_step", (double)e->launches / st);
		json_key_num(&w, "uploads_per_step", (double)e->uploads / st);
		json_key_num(&w, "downloads_per_step", (double)e->downloads / st);
	}
	for (int i = 0; i < e->replicas; i++)
		per[i] = (double)e->peak_bytes[i];
	json_key_nums(&w, "peak_step_bytes", e->replicas, per);
	for (int i = 0; i < e->replicas; i++)
		per[i] = (double)e->live_bytes[i];
	json_key_nums(&w, "live_bytes", e->replicas, per);
	if (e->replicas > 1 || v->o->cfg.comm) {
		for (int i = 0; i < e->replicas; i++)
			per[i] = v->idx[i];
		json_key_nums(&w, "devices", e->replicas, per);
		for (int i = 0; i < e->replicas; i++)
			per[i] = (double)e->shares[i];
		json_key_nums(&w, "shares", e->replicas, per);
		json_key_nums(&w, "device_samples_per_s", e->replicas, e->samples_per_s);
		json_key_int(&w, "ranks", v->o->cfg.comm ? v->o->cfg.comm->size : 1);
		json_key_str(&w, "compress", v->o->cfg.compress == CLG_COMPRESS_INT8 ? "int8" : "none");
		json_key_num(&w, "exchange_bytes_per_step", e->exchange_bytes);
		json_key_num(&w, "exchange_seconds", e->exchange_seconds);
		json_key_int(&w, "exchange_buckets", e->exchange_buckets);
		snprintf(sum, sizeof(sum), "%016llx", (unsigned long long)e->checksum);
		json_key_str(&w, "checksum", sum);
		json_key_bool(&w, "replicas_identical", e->replicas_identical);
	}
	if (v->prof_be && v->prof.n > 0 && v->prof_to >= v->prof_from) { /* sorted: printed before */
		double steps = (double)(v->prof_to - v->prof_from + 1);
		json_key(&w, "op_profile");
		json_begin_array(&w);
		for (int i = 0; i < v->prof.n && i < prof_top(v); i++) {
			json_begin_object(&w);
			json_key_str(&w, "op", v->prof.e[i].key);
			json_key_num(&w, "calls_per_step", (double)v->prof.e[i].calls / steps);
			json_key_num(&w, "ms_per_step", 1e3 * v->prof.e[i].seconds / steps);
			json_end_object(&w);
		}
		json_end_array(&w);
	}
	if (e->first) { /* this process's start */
		json_key_num(&w, "first_step_begun_s", v->fs->begun_s);
		json_key_num(&w, "first_step_done_s", v->fs->done_s);
		json_key_num(&w, "programs_ready_s", v->fs->ready_s);
	}
	json_end_object(&w);
	fputc('\n', v->log);
	fflush(v->log);
}

/* The ops that took longest in the timed steps, each waited for (a step is slower than untimed). */
static void print_op_profile(run_view *v)
{
	int64_t steps = v->prof_to - v->prof_from + 1;
	const clg_op_timer *t = &v->prof;

	if (!v->prof_be || t->n == 0 || steps < 1)
		return;
	clg_op_timer_sort(&v->prof);
	printf("  ops of %lld step(s) on device %d, each op waited for: %.2f ms a step%s\n", (long long)steps, v->idx[0],
	       1e3 * t->total / (double)steps, t->n > prof_top(v) ? "; the longest:" : "");
	printf("    %-44s %8s %10s %6s\n", "op (dst shape)", "calls", "ms a step", "share");
	for (int i = 0; i < t->n && i < prof_top(v); i++)
		printf("    %-44s %8.1f %10.3f %5.1f%%\n", t->e[i].key, (double)t->e[i].calls / (double)steps,
		       1e3 * t->e[i].seconds / (double)steps, t->total > 0 ? 100 * t->e[i].seconds / t->total : 0);
}

static clg_status on_epoch_end(void *user, const clg_epoch_info *e)
{
	run_view *v = user;
	first_step *fs = v->fs;
	double rate = (double)e->samples / e->seconds;
	char rates[32], toks[32];

	clg_fmt_rate(rates, sizeof(rates), rate);
	clg_fmt_rate(toks, sizeof(toks), rate * (double)v->o->cfg.model.seq_len);
	clg_progress_end(&v->pr);
	if (e->first) {
		fs->begun_s = fs->age0 + (e->first_step_begun - fs->t0);
		fs->done_s = fs->age0 + (e->first_step_done - fs->t0);
		printf("time to first step: began %.3f s after launch, done at %.3f s (device open at %.3f s, %d kernel "
		       "programs ready at %.3f s after %.3f s, data loaded beside them by %.3f s)\n", fs->begun_s, fs->done_s,
		       fs->opened_s, fs->programs, fs->ready_s, fs->precompile_s, fs->data_s);
	}
	if (v->d->lm)
		printf("epoch %lld: train loss %.4f, validation loss %.4f (unigram baseline %.4f; %.3f / %.3f bits a byte), "
		       "%.1f s, %s samples/s (%s tokens/s)\n", (long long)e->epoch, e->train_loss, e->test_loss, v->d->unigram,
		       e->test_loss * lm_bits_a_byte(&v->d->text), v->d->unigram * lm_bits_a_byte(&v->d->text), e->seconds,
		       rates, toks);
	else
		printf("epoch %lld: train loss %.4f, test accuracy %.4f (test loss %.4f), %.1f s, %s samples/s\n",
		       (long long)e->epoch, e->train_loss, e->test_acc, e->test_loss, e->seconds, rates);
	if (e->loss_scale > 0)
		printf("  loss scale %g, %lld step(s) skipped so far\n", e->loss_scale, (long long)e->skipped_steps);
	if (v->o->profile && e->steps > 0) {
		double per = 1e3 / (double)e->steps;
		printf("  profile: %.1f kernel launches, %.1f uploads, %.1f downloads a step; the host queues a step in "
		       "%.2f ms of %.2f ms (%.0f%%%s)\n", (double)e->launches / (double)e->steps,
		       (double)e->uploads / (double)e->steps, (double)e->downloads / (double)e->steps, e->host_seconds * per,
		       e->seconds * per, e->seconds > 0 ? 100 * e->host_seconds / e->seconds : 0,
		       e->replicas > 1 || v->o->cfg.comm ? ", the exchange's waits included" : "; near 100%: the host sets the pace");
		if (e->launches) /* the reference backend launches nothing */
			printf("  host: %.2f ms a step inside the OpenCL runtime's kernel enqueues (CLBlast and clFFT "
			       "calls whole), %.1f us a launch\n", e->enqueue_seconds * per,
			       1e6 * e->enqueue_seconds / (double)e->launches);
		for (int i = 0; i < e->replicas; i++)
			printf("  memory on device %d: peak %.2f MiB in a step (high-water mark reset each step), %.2f MiB live "
			       "between steps\n", v->idx[i], e->peak_bytes[i] / 1048576.0, e->live_bytes[i] / 1048576.0);
		print_op_profile(v);
	}
	if (e->replicas > 1 || v->o->cfg.comm) {
		printf("  data parallel:");
		for (int i = 0; i < e->replicas; i++)
		{
			printf(" device %d %lld rows", v->idx[i], (long long)e->shares[i]);
			if (e->samples_per_s[i] > 0) { /* measured (not with equal shares) */
				clg_fmt_rate(rates, sizeof(rates), e->samples_per_s[i]);
				printf(" (%s samples/s)", rates);
			}
			printf("%s", i + 1 < e->replicas ? "," : ";");
		}
		printf(" exchange %.0f bytes a step per %s in %d part%s, %.2f s; replicas %s (checksum %016llx)\n",
		       e->exchange_bytes, v->o->cfg.comm ? "rank" : "device", e->exchange_buckets,
		       e->exchange_buckets > 1 ? "s" : "", e->exchange_seconds, e->replicas_identical ? "identical" : "DIFFER",
		       (unsigned long long)e->checksum);
	}
	if (v->log)
		log_epoch(v, e, e->lr);
	if (e->saved)
		printf("saved %s\n", e->saved);
	return CLG_OK;
}

/* --device auto: a job's speed on one device, on the first rows of the real data. train: samples/s
 * of the median of steps 2 to 6 of the run's model, batch and optimizer (step 1 builds the
 * kernels; the median, because a busy machine stalls a step now and then); eval: of evaluating up
 * to 6 batches after one. */
#define AUTO_STEPS 6
typedef struct {
	const clg_train_config *cfg;
	const clg_dataset *data;
	int eval;
} auto_train;

typedef struct {
	double t[AUTO_STEPS + 1]; /* clg_now() at the start and after each step */
	int n;                    /* steps done */
} step_clock;

static int auto_every(void *user, int64_t step) { return (void)user, (void)step, 1; }

static void auto_step(void *user, const clg_step_info *s)
{
	step_clock *c = user;
	(void)s;
	if (c->n < AUTO_STEPS)
		c->t[++c->n] = clg_now();
}

static clg_status auto_train_rate(clg_backend *be, void *user, double *rate)
{
	const auto_train *a = user;
	clg_train_config cfg = *a->cfg;
	clg_dataset sub = *a->data; /* the first rows, borrowed */
	clg_trainer *t = NULL;
	step_clock c = {{0}, 0};
	clg_train_callbacks cb = {.user = &c, .loss_due = auto_every, .step_end = auto_step};
	double acc, loss, t0, dt[AUTO_STEPS];
	clg_status st;

	if (sub.n > (AUTO_STEPS + 1) * cfg.batch)
		sub.n = (AUTO_STEPS + 1) * cfg.batch;
	cfg.save = NULL;
	cfg.stop_after = 0;
	cfg.max_steps = AUTO_STEPS;
	cfg.comm = NULL;
	st = clg_trainer_new(be, &cfg, &sub, NULL, &t);
	if (!st && !a->eval) {
		st = clg_trainer_run(t, &cb);
		if (!st && c.n < 2)
			st = clg_fail(CLG_ERR_INVALID, "device auto: fewer than 2 steps of %lld rows in %lld samples",
				      (long long)cfg.batch, (long long)sub.n);
		for (int i = 2; !st && i <= c.n; i++)
			dt[i - 2] = c.t[i] - c.t[i - 1];
		*rate = st ? 0 : (double)cfg.batch / clg_measure_median(dt, c.n - 1);
	} else if (!st) {
		clg_dataset one = sub;
		one.n = sub.n < cfg.batch ? sub.n : cfg.batch;
		st = clg_trainer_evaluate(t, &one, &acc, &loss); /* builds the kernels */
		t0 = clg_now();
		if (!st)
			st = clg_trainer_evaluate(t, &sub, &acc, &loss);
		*rate = st ? 0 : (double)sub.n / (clg_now() - t0);
	}
	clg_trainer_free(t);
	return st;
}

/* One device named by --device, or auto: "--device auto" (or CLGRAD_DEVICE=auto) loads the data
 * first (it is measured on) and picks the fastest; no device named picks from the stored figures
 * without measuring (device_select_for). */
static clg_status select_device(train_opts *o, data_sets *d, int eval, int *idx)
{
	char job[200];
	const char *spec = o->device && *o->device ? o->device : clg_cfg_str(CLG_CFG_DEVICE);
	auto_train a = {.cfg = &o->cfg, .eval = eval};
	auto_job j = {.job = job, .unit = "samples/s", .rate = auto_train_rate, .user = &a};
	clg_status st;

	if (spec && *spec && strcmp(spec, "auto"))
		return clg_device_select(spec, idx);
	device_auto_train_job(job, sizeof(job), &o->cfg, eval);
	if (spec && !strcmp(spec, "auto")) {
		if ((st = load_data(o, d)))
			return st;
		d->loaded = 1;
		a.data = &d->train;
	}
	return device_select_for(spec, &j, idx);
}

/* The devices to train on: --devices (a comma list of specs, or "all" OpenCL devices), else
 * --device (or the default). Each named once. */
static clg_status resolve_devices(const train_opts *o, int *idx, int *n)
{
	const clg_device_info *devs;
	int ndev;
	char spec[64];
	clg_status st = clg_devices(&devs, &ndev);

	*n = 0;
	if (st)
		return st;
	if (!o->devices) {
		*n = 1;
		return clg_device_select(o->device, &idx[0]);
	}
	if (o->device)
		return clg_fail(CLG_ERR_INVALID, "--device and --devices: give one of them");
	if (!strcmp(o->devices, "all")) {
		for (int i = 1; i < ndev && *n < CLG_TRAIN_MAX_DEVICES; i++)
			idx[(*n)++] = i;
		if (*n == 0)
			idx[(*n)++] = 0; /* no OpenCL device: the reference */
		return CLG_OK;
	}
	for (const char *p = o->devices;; p += strcspn(p, ",") + 1) {
		size_t len = strcspn(p, ",");
		if (len == 0 || len >= sizeof(spec))
			return clg_fail(CLG_ERR_INVALID, "--devices '%s': an empty or over-long device in the list", o->devices);
		if (*n == CLG_TRAIN_MAX_DEVICES)
			return clg_fail(CLG_ERR_INVALID, "--devices '%s': more than %d devices", o->devices, CLG_TRAIN_MAX_DEVICES);
		memcpy(spec, p, len);
		spec[len] = 0;
		st = clg_device_select(spec, &idx[*n]);
		if (st)
			return clg_fail(st, "--devices '%s': %s", o->devices, clg_last_error());
		for (int k = 0; k < *n; k++)
			if (idx[k] == idx[*n])
				return clg_fail(CLG_ERR_INVALID, "--devices '%s': device %d ('%s') named twice", o->devices,
						idx[k], devs[idx[k]].name);
		(*n)++;
		if (!p[len])
			return CLG_OK;
	}
}

/* Loads the data on a thread while the devices open and their kernel programs get ready (fast
 * start). */
static clg_status open_and_load(train_opts *o, data_sets *d, first_step *fs, const int *idx, int n, clg_backend **be)
{
	data_job job = {.o = o, .d = d};
	pthread_t tid;
	int threaded = pthread_create(&tid, NULL, data_thread, &job) == 0;
	const clg_device_info *devs;
	int ndev;
	double t = clg_now();
	clg_status st;

	if (!threaded)
		data_thread(&job);
	st = clg_devices(&devs, &ndev);
	for (int i = 0; !st && i < n; i++) {
		char workload[64];
		int programs = 0;
		st = clg_backend_open(idx[i], &be[i]);
		if (st)
			break;
		printf("device %d: %s (%s)\n", idx[i], devs[idx[i]].name, devs[idx[i]].platform);
		fs->opened_s = since_launch(fs);
		/* only a head start: a program that fails here fails again, with its op named, at first use */
		snprintf(workload, sizeof(workload), "train %s", o->cfg.model.name);
		if (clg_precompile(be[i], workload, CLG_F32, &programs))
			fprintf(stderr, "clgrad train: warning: kernel precompile on device %d: %s\n", idx[i], clg_last_error());
		fs->programs += programs;
	}
	fs->precompile_s = clg_now() - t;
	fs->ready_s = since_launch(fs);
	if (threaded)
		pthread_join(tid, NULL);
	if (!st && job.st)
		st = clg_fail(job.st, "%s", job.msg);
	fs->data_s = since_launch(fs);
	return st;
}

/* --mpi: start MPI, and keep only this rank's device (by local rank) of the list. */
static clg_status start_mpi(int *argc, char ***argv, train_opts *o, clg_train_comm *comm, int *idx, int *n, int *up)
{
	int local = 0;
	clg_status st = clg_mpi_start(argc, argv, o->mpi_timeout, comm, &local);

	if (st)
		return st;
	*up = 1;
	if (!o->devices && !o->device)
		o->devices = "all";
	st = resolve_devices(o, idx, n);
	if (st)
		return st;
	idx[0] = idx[local % *n];
	*n = 1;
	o->cfg.comm = comm;
	if (comm->rank != 0) { /* rank 0 logs, shows progress and writes checkpoints */
		o->cfg.save = NULL;
		o->log = NULL;
	}
	printf("mpi rank %d of %d (local rank %d): device %d\n", comm->rank, comm->size, local, idx[0]);
	return CLG_OK;
}

int cmd_train(int argc, char **argv)
{
	train_opts o;
	data_sets d = {0};
	clg_backend *be[CLG_TRAIN_MAX_DEVICES] = {0};
	clg_trainer *t = NULL;
	clg_train_comm comm;
	int idx[CLG_TRAIN_MAX_DEVICES], n = 0, rc = 1, mpi_up = 0;
	first_step fs = {.age0 = process_age(), .t0 = clg_now()};
	run_view view = {.o = &o, .d = &d, .fs = &fs};
	clg_train_callbacks cb = {.user = &view, .epoch_begin = on_epoch_begin, .loss_due = on_loss_due,
				  .step_end = on_step_end, .epoch_end = on_epoch_end};
	static clg_ckpt_meta meta; /* the resumed configuration's strings point into it */
	clg_tokenizer *ckpt_tok = NULL;
	char note[1536];

	if (fs.age0 < 0)
		fs.age0 = 0; /* no /proc: count from here */
	if ((rc = parse(argc, argv, &o, "train")) >= 0)
		return rc;
	rc = 1;
	test_fault_init(&view);
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines show at once, also through a pipe */
	if (o.resume) { /* the checkpoint's model and training configuration win; options that differ are refused */
		if (clg_ckpt_read_meta(o.resume, &meta) || lm_check_model_args(argc, argv, o.resume, &meta) ||
		    clg_train_config_from_meta(&meta, &o.cfg) || clg_ckpt_read_tokenizer(o.resume, &ckpt_tok))
			return report_error("train");
		o.ckpt_tok = ckpt_tok;
		if (meta.data_path[0])
			o.lm_text = meta.data_path; /* the text it was trained on, unless --data says */
	}
	if (o.tokenizer && !clg_model_is_lm(&o.cfg.model)) {
		clg_tokenizer_free(ckpt_tok);
		return cli_error("train", "--tokenizer: only for a language model (--model transformer), not %s",
				 o.cfg.model.name);
	}
	if (!o.mpi && !o.devices) {
		n = 1;
		if (select_device(&o, &d, 0, &idx[0])) {
			rc = report_error("train");
			goto out;
		}
	} else if (o.mpi ? start_mpi(&argc, &argv, &o, &comm, idx, &n, &mpi_up) : resolve_devices(&o, idx, &n)) {
		rc = report_error("train");
		goto out;
	}
	if (o.mpi && comm.rank != 0)
		cb = (clg_train_callbacks){0};
	if (open_and_load(&o, &d, &fs, idx, n, be)) {
		rc = report_error("train");
		goto out;
	}
	if (o.resume && d.lm) {
		if (lm_check_text(o.resume, &meta, ckpt_tok, &d.text, d.text_path, d.fingerprint, 0, note, sizeof(note))) {
			rc = report_error("train");
			goto out;
		}
		if (note[0])
			printf("%s\n", note);
	}
	view.device = be[0]->info.name;
	view.idx = idx;
	if (o.profile)
		view.prof_be = be[0];
	if (clg_trainer_new_multi(be, n, &o.cfg, &d.train, &d.test, &t)) {
		rc = report_error("train");
		goto out;
	}
	if (o.resume) {
		if (clg_trainer_load(t, o.resume)) {
			rc = report_error("train");
			goto out;
		}
		printf("resumed from %s after %lld epoch(s)\n", o.resume, (long long)clg_trainer_epochs_done(t));
	}
	if (o.log && !(view.log = fopen(o.log, o.resume ? "a" : "w"))) {
		fprintf(stderr, "clgrad train: cannot open log '%s': %s\n", o.log, strerror(errno));
		goto out;
	}
	note[0] = 0;
	if (d.lm) { /* what the model reads: the checkpoints hold it */
		char desc[64];
		clg_tokenizer_describe(d.text.tok, desc, sizeof(desc));
		snprintf(note, sizeof(note), "; tokenizer %s, %lld tokens of %lld bytes", desc, (long long)d.text.n,
			 (long long)d.text.bytes);
	}
	printf("model %s: %lld parameters; %lld training samples, %lld test samples, %lld steps per epoch; precision %s%s%s",
	       o.cfg.model.name, (long long)clg_module_num_params(clg_trainer_model(t)), (long long)d.train.n,
	       (long long)d.test.n, (long long)clg_trainer_steps_per_epoch(t), clg_precision_name(o.cfg.precision), note,
	       o.cfg.model.recompute ? "; recompute" : "");
	if (o.cfg.accum_steps > 1)
		printf("; %lld micro-batches of %lld a step", (long long)o.cfg.accum_steps, (long long)o.cfg.batch);
	printf("\n");
	if (o.profile) { /* what the check before the first step estimated, to set beside the measured peak */
		clg_memory_estimate e;
		clg_train_memory_estimate(&o.cfg, be[0], clg_module_num_params(clg_trainer_model(t)),
					  (o.cfg.batch + n - 1) / n, &e);
		printf("  memory estimate on device %d: %.2f MiB a step (parameters %.2f, gradients %.2f, optimizer state "
		       "%.2f, activations %s%.2f MiB)\n", idx[0], e.total / 1048576.0, e.params / 1048576.0,
		       e.grads / 1048576.0, e.optim / 1048576.0, e.exact ? "" : "not estimated for this model: ",
		       e.activations / 1048576.0);
	}
	rc = clg_trainer_run(t, &cb) ? report_error("train") : 0;
out:
	if (view.log)
		fclose(view.log);
	if (view.prof_be)
		clg_backend_set_op_timer(view.prof_be, NULL);
	clg_op_timer_clear(&view.prof);
	clg_trainer_free(t);
	free_data(&d);
	clg_tokenizer_free(ckpt_tok);
	for (int i = 0; i < CLG_TRAIN_MAX_DEVICES; i++)
		clg_backend_close(be[i]);
	if (mpi_up)
		clg_mpi_stop(&comm, rc != 0);
	return rc;
}

int cmd_eval(int argc, char **argv)
{
	train_opts o;
	data_sets d = {0};
	clg_ckpt_meta meta;
	clg_backend *be = NULL;
	clg_trainer *t = NULL;
	clg_tokenizer *ckpt_tok = NULL;
	int idx, rc = 1;
	int64_t batch;
	double acc, loss;
	char note[1536];

	if ((rc = parse(argc, argv, &o, "eval")) >= 0)
		return rc;
	rc = 1;
	if (!o.checkpoint)
		return cli_error("eval", "--checkpoint FILE is required (clgrad eval --help)");
	batch = o.cfg.batch;
	/* the checkpoint's model; options that differ from it are refused */
	if (clg_ckpt_read_meta(o.checkpoint, &meta) || lm_check_model_args(argc, argv, o.checkpoint, &meta) ||
	    clg_train_config_from_meta(&meta, &o.cfg) || clg_ckpt_read_tokenizer(o.checkpoint, &ckpt_tok))
		return report_error("eval");
	o.cfg.batch = batch; /* evaluation's batch is the command line's */
	o.ckpt_tok = ckpt_tok;
	if (meta.data_path[0])
		o.lm_text = meta.data_path; /* without --data: the text it was trained on */
	if (select_device(&o, &d, 1, &idx) ||
	    clg_backend_open(idx, &be)) {
		rc = report_error("eval");
		goto out;
	}
	if (!d.loaded && load_data(&o, &d)) {
		rc = report_error("eval");
		goto out;
	}
	if (d.lm) {
		if (lm_check_text(o.checkpoint, &meta, ckpt_tok, &d.text, d.text_path, d.fingerprint, 1, note, sizeof(note))) {
			rc = report_error("eval");
			goto out;
		}
		if (note[0])
			printf("%s\n", note);
	}
	if (clg_trainer_new(be, &o.cfg, &d.train, &d.test, &t) ||
	    clg_trainer_load(t, o.checkpoint) || clg_trainer_evaluate(t, &d.test, &acc, &loss)) {
		rc = report_error("eval");
		goto out;
	}
	if (d.lm)
		printf("%s (%s, %lld epochs): validation loss %.4f on %s\n", o.checkpoint, o.cfg.model.name,
		       (long long)meta.epochs_done, loss, be->info.name);
	else
		printf("%s (%s, %lld epochs): test accuracy %.4f, test loss %.4f on %s\n", o.checkpoint, o.cfg.model.name,
		       (long long)meta.epochs_done, acc, loss, be->info.name);
	rc = 0;
out:
	clg_trainer_free(t);
	free_data(&d);
	clg_tokenizer_free(ckpt_tok);
	clg_backend_close(be);
	return rc;
}
