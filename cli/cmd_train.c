/* clgrad train / clgrad eval: train a model on real data on any device, with progress, a JSON
 * log, checkpoints and resume; evaluate a saved checkpoint. */
#include "train_cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* eval's own usage: the options it reads (it parses train's table, so that a checkpoint's
 * model options can be compared with the command line's) */
static const char eval_usage[] =
	"usage: clgrad eval --checkpoint FILE [--data DIR|FILE] [--device SPEC|auto] [--batch N]\n"
	"Evaluates a checkpoint that clgrad train wrote: test accuracy and loss of an image model, the\n"
	"validation loss of a language model (its text encoded with the checkpoint's tokenizer).\n"
	"  --data       the data to evaluate on (default: an image model's Fashion-MNIST, a language\n"
	"               model's training text, recorded in the checkpoint); another text is fine when\n"
	"               the checkpoint's tokenizer covers it (a note says so)\n"
	"  --device     the device (default: auto, measured on the data)\n"
	"  --batch      rows per evaluation batch (default 128)\n"
	"  --model, --seq-len, --dim, --heads, --layers, --preset: refused unless equal to the checkpoint's\n"
	"Options take --opt VALUE or --opt=VALUE; a value out of range is refused (exit status 2).\n";

static void usage_text(char *buf, size_t len, const char *cmd)
{
	if (!strcmp(cmd, "eval")) {
		snprintf(buf, len, "%s", eval_usage);
		return;
	}
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
		"       [--exchange auto|root|allreduce]   (--mpi: root gathers at rank 0, sums in rank order, steps and\n"
		"                                  broadcasts (bitwise reproducible); allreduce: MPI's all-reduce, every\n"
		"                                  rank steps; auto: allreduce from 3 ranks on)\n"
		"       [--shard-optimizer]   (--mpi: ZeRO stage 1, each rank keeps 1/N of the optimizer state)\n"
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
		"       clgrad eval --checkpoint FILE ...   (clgrad eval --help)\n"
		"Options take --opt VALUE or --opt=VALUE; a value out of range is refused (exit status 2).\n"
		"defaults: mlp on Fashion-MNIST (%s), 5 epochs, batch 128, Adam lr 1e-3;\n"
		"gfnet: width 64, 2 blocks, Adam lr 2e-3, 200 warmup steps, cosine schedule;\n"
		"the transformer trains on a text file or a folder of them, e.g. /usr/share/games/fortunes (default %s)\n",
		cmd, DEFAULT_IMAGES, DEFAULT_TEXT);
}

/* The options given by name (--optimizer adam), mapped to the configuration's enums after parsing. */
typedef struct {
	const char *optimizer, *schedule, *shares, *compress, *precision, *exchange;
} train_strs;

/* The option table, its entries pointing into o and s; returns the number of entries. */
#define TRAIN_MAX_OPTS 64
static int train_table(train_opts *o, train_strs *s, cli_opt *t)
{
	clg_train_config *c = &o->cfg;
	clg_model_config *m = &c->model;
	const cli_opt table[] = {
		CLI_OPT_CHOICE("model", &m->name, CLG_MODEL_NAMES), /* refused before any device opens */
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
		CLI_OPT_CHOICE("exchange", &s->exchange, "auto|root|allreduce"),
		CLI_OPT_FLAG("shard-optimizer", &c->shard_optimizer),
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
	static char usage[8192];
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
	if (s.exchange)
		c->exchange = !strcmp(s.exchange, "root") ? CLG_EXCHANGE_ROOT
			    : !strcmp(s.exchange, "allreduce") ? CLG_EXCHANGE_ALLREDUCE : CLG_EXCHANGE_AUTO;
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

int cmd_train(int argc, char **argv)
{
	train_opts o;
	data_sets d = {0};
	clg_backend *be[CLG_TRAIN_MAX_DEVICES] = {0};
	clg_trainer *t = NULL;
	clg_train_comm comm;
	int idx[CLG_TRAIN_MAX_DEVICES], n = 0, rc = 1, mpi_up = 0;
	first_step fs = {.age0 = train_process_age(), .t0 = clg_now()};
	run_view view = {.o = &o, .d = &d, .fs = &fs};
	clg_train_callbacks cb = {.user = &view, .epoch_begin = train_on_epoch_begin, .loss_due = train_on_loss_due,
				  .step_end = train_on_step_end, .epoch_end = train_on_epoch_end};
	static clg_ckpt_meta meta; /* the resumed configuration's strings point into it */
	clg_tokenizer *ckpt_tok = NULL;
	char note[1536];

	if (fs.age0 < 0)
		fs.age0 = 0; /* no /proc: count from here */
	if ((rc = parse(argc, argv, &o, "train")) >= 0)
		return rc;
	if (!o.mpi && (o.cfg.shard_optimizer || o.cfg.exchange != CLG_EXCHANGE_AUTO))
		return cli_error("train", "--%s is for ranks of an MPI run: add --mpi (under mpirun)",
				 o.cfg.shard_optimizer ? "shard-optimizer" : "exchange");
	rc = 1;
	train_test_fault_init(&view);
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
		if (train_select_device(&o, &d, 0, &idx[0])) {
			rc = report_error("train");
			goto out;
		}
	} else if (o.mpi ? train_start_mpi(&argc, &argv, &o, &comm, idx, &n, &mpi_up) : train_resolve_devices(&o, idx, &n)) {
		rc = report_error("train");
		goto out;
	}
	if (o.mpi && comm.rank != 0)
		cb = (clg_train_callbacks){0};
	if (train_open_and_load(&o, &d, &fs, idx, n, be)) {
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
	train_free_data(&d);
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
	if (train_select_device(&o, &d, 1, &idx) ||
	    clg_backend_open(idx, &be)) {
		rc = report_error("eval");
		goto out;
	}
	if (!d.loaded && train_load_data(&o, &d)) {
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
	train_free_data(&d);
	clg_tokenizer_free(ckpt_tok);
	clg_backend_close(be);
	return rc;
}
