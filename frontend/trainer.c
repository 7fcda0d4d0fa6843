/* The training loop (clgrad_train.h): epochs of shuffled batches, the task's forward and loss
 * (tasks.c; cross-entropy by default), backward, clipping, a scheduled optimizer step; evaluation
 * and a checkpoint after each epoch. */
#include "trainer_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The optimizer over a replica's parameters. With weight decay, tensors of fewer than 2 dims
 * (biases, norm weights and shifts) form a group without it unless cfg->weight_decay_all, as
 * common practice for AdamW has it (decay shrinks weights that multiply, not offsets and scales). */
clg_optimizer *clg_trainer_make_optimizer(const clg_train_config *cfg, clg_tensor *const *tensors, const int *ndim,
					  int n)
{
	clg_tensor **sorted = calloc((size_t)n + 1, sizeof(*sorted));
	clg_opt_group g[2] = {{.lr = cfg->optim.lr, .weight_decay = cfg->optim.weight_decay},
			      {.lr = cfg->optim.lr, .weight_decay = 0}};
	int nd = 0, split = cfg->optim.weight_decay > 0 && !cfg->weight_decay_all;
	clg_optimizer *o;

	if (!sorted) {
		clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
		return NULL;
	}
	for (int i = 0; i < n; i++) /* the decaying group first, each in module order */
		if (!split || ndim[i] >= 2)
			sorted[nd++] = tensors[i];
	g[0].n = nd;
	for (int i = 0; split && i < n; i++)
		if (ndim[i] < 2)
			sorted[nd++] = tensors[i];
	g[0].params = sorted;
	g[1].params = sorted + g[0].n;
	g[1].n = nd - g[0].n;
	o = clg_optimizer_new_groups(&cfg->optim, g, g[1].n ? 2 : 1);
	free(sorted);
	return o;
}

static clg_optimizer *make_optimizer(const clg_train_config *cfg, const clg_named_tensors *p)
{
	int *ndim = calloc((size_t)p->n + 1, sizeof(int));
	clg_optimizer *o = NULL;

	if (!ndim) {
		clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
		return NULL;
	}
	for (int i = 0; i < p->n; i++)
		ndim[i] = clg_ndim(p->tensors[i]);
	o = clg_trainer_make_optimizer(cfg, p->tensors, ndim, p->n);
	free(ndim);
	return o;
}

double clg_optimizer_state_bytes(clg_optimizer *o)
{
	double bytes = 0;
	for (int i = 0; o && i < clg_optimizer_count(o); i++)
		for (int slot = 0; slot < CLG_OPT_STATE_SLOTS; slot++) {
			clg_tensor *s = clg_optimizer_state(o, i, slot);
			bytes += s ? (double)clg_numel(s) * (double)clg_dtype_size(clg_dtype_of(s)) : 0;
		}
	return bytes;
}

static const char *const opt_names[] = {[CLG_OPT_SGD] = "sgd", [CLG_OPT_ADAM] = "adam", [CLG_OPT_ADAMW] = "adamw"};
static const char *const precision_names[] = {[CLG_PRECISION_FP32] = "fp32", [CLG_PRECISION_MIXED] = "mixed"};
static const char *const lr_names[] = {[CLG_LR_CONSTANT] = "constant", [CLG_LR_STEP] = "step", [CLG_LR_COSINE] = "cosine"};

const char *clg_opt_kind_name(clg_opt_kind k) { return k >= 0 && k <= CLG_OPT_ADAMW ? opt_names[k] : "?"; }
const char *clg_lr_kind_name(clg_lr_kind k) { return k >= 0 && k <= CLG_LR_COSINE ? lr_names[k] : "?"; }

const char *clg_precision_name(clg_precision p)
{
	return p >= 0 && p <= CLG_PRECISION_MIXED ? precision_names[p] : "?";
}

static int parse_name(const char *const *names, int n, const char *name, int *out)
{
	for (int i = 0; name && i < n; i++)
		if (!strcmp(name, names[i]))
			return *out = i, 0;
	return -1;
}

int clg_opt_kind_parse(const char *name, clg_opt_kind *out)
{
	int k;
	if (parse_name(opt_names, 3, name, &k))
		return -1;
	*out = (clg_opt_kind)k;
	return 0;
}

int clg_precision_parse(const char *name, clg_precision *out)
{
	int k;
	if (parse_name(precision_names, 2, name, &k))
		return -1;
	*out = (clg_precision)k;
	return 0;
}

int clg_lr_kind_parse(const char *name, clg_lr_kind *out)
{
	int k;
	if (parse_name(lr_names, 3, name, &k))
		return -1;
	*out = (clg_lr_kind)k;
	return 0;
}

clg_train_config clg_train_config_default(void)
{
	return (clg_train_config){.model = {.name = "mlp", .seq_len = 64, .dim = 64, .heads = 4, .layers = 2},
				  .optim = {.kind = CLG_OPT_ADAM, .lr = 1e-3}, .schedule = CLG_LR_CONSTANT,
				  .epochs = 5, .batch = 128, .seed = 1};
}

clg_status clg_train_config_from_meta(const clg_ckpt_meta *m, clg_train_config *cfg)
{
	clg_train_config d = clg_train_config_default();
	clg_lr_kind sched = CLG_LR_CONSTANT;

	if (clg_opt_kind_parse(m->optimizer, &d.optim.kind))
		return clg_fail(CLG_ERR_FORMAT, "checkpoint: unknown optimizer '%s' (expected sgd, adam or adamw)",
				m->optimizer);
	if (m->schedule[0] && clg_lr_kind_parse(m->schedule, &sched))
		return clg_fail(CLG_ERR_FORMAT, "checkpoint: unknown schedule '%s' (expected constant, step or cosine)",
				m->schedule);
	d.model = m->model;
	d.model.name = m->model_name;
	d.seed = m->seed;
	d.schedule = sched;
	d.optim.lr = m->lr > 0 ? m->lr : d.optim.lr;
	d.optim.momentum = m->momentum;
	d.optim.weight_decay = m->weight_decay;
	d.clip = m->clip;
	d.batch = m->batch > 0 ? m->batch : d.batch;
	d.warmup = m->warmup;
	/* what the caller chose for the run's length and outputs stays */
	d.epochs = cfg->epochs;
	d.save = cfg->save;
	d.stop_after = cfg->stop_after;
	d.accum_steps = cfg->accum_steps;
	d.model.recompute = cfg->model.recompute;
	d.precision = cfg->precision;
	d.loss_scale = cfg->loss_scale;
	d.tokenizer = cfg->tokenizer;
	d.data = cfg->data;
	d.data_path = cfg->data_path;
	*cfg = d;
	return CLG_OK;
}

static clg_status check_config(const clg_train_config *c)
{
	if (c->epochs < 1 || c->batch < 1 || !(c->optim.lr > 0) || !isfinite(c->optim.lr) || c->warmup < 0 ||
	    !(c->clip >= 0) || c->stop_after < 0 || c->max_steps < 0 || !(c->loss_scale >= 0) ||
	    c->accum_steps < 0 || c->accum_steps > 1000000 ||
	    (c->precision != CLG_PRECISION_FP32 && c->precision != CLG_PRECISION_MIXED))
		return clg_fail(CLG_ERR_INVALID,
				"trainer: bad configuration (epochs %lld >= 1, batch %lld >= 1, lr %g > 0, warmup %lld >= 0, "
				"clip %g >= 0, stop_after %lld >= 0, loss_scale %g >= 0, accum_steps %lld in [0, 1000000], "
				"precision %d fp32 or mixed)",
				(long long)c->epochs, (long long)c->batch, c->optim.lr, (long long)c->warmup, c->clip,
				(long long)c->stop_after, c->loss_scale, (long long)c->accum_steps, (int)c->precision);
	return CLG_OK;
}

/* Builds replica i's model from the configuration's seed (so every replica starts the same). */
static clg_status build_replica(clg_trainer *t, int i, clg_backend *be)
{
	clg_replica *r = &t->rep[i];
	clg_status st;

	r->be = be;
	r->model = t->cfg.build ? t->cfg.build(be, t->cfg.seed, t->cfg.build_user)
				: clg_model_build(be, &t->cfg.model, t->cfg.seed);
	if (!r->model)
		return clg_fail(CLG_ERR_INVALID, "trainer: cannot build model '%s' on device '%s': %s", t->model_name,
				be->info.name, clg_last_error());
	st = clg_module_state(r->model, 0, &r->params);
	if (!st)
		st = clg_module_state(r->model, 1, &r->state);
	return st;
}

clg_status clg_trainer_new_multi(clg_backend *const *bes, int n, const clg_train_config *cfg,
				 const clg_dataset *train, const clg_dataset *test, clg_trainer **out)
{
	clg_trainer *t;
	clg_status st;

	*out = NULL;
	st = check_config(cfg);
	if (!st && (n < 1 || n > CLG_TRAIN_MAX_DEVICES || (cfg->comm && n != 1)))
		st = clg_fail(CLG_ERR_INVALID, "trainer: %d devices (expected 1 to %d%s)", n, CLG_TRAIN_MAX_DEVICES,
			      cfg->comm ? "; with several processes, one device per process" : "");
	for (int i = 0; !st && i < n; i++)
		for (int j = 0; j < i; j++)
			if (bes[i] == bes[j] || bes[i]->info.index == bes[j]->info.index)
				st = clg_fail(CLG_ERR_INVALID, "trainer: device %d ('%s') given twice", bes[i]->info.index,
					      bes[i]->info.name);
	if (!st && cfg->accum_steps > 1 && (n > 1 || cfg->comm))
		st = clg_fail(CLG_ERR_UNSUPPORTED, "trainer: gradient accumulation (accum_steps %lld) with data parallel "
			      "training is not implemented: use one device, or a larger batch split over the devices",
			      (long long)cfg->accum_steps);
	if (!st && n * (cfg->comm ? cfg->comm->size : 1) > cfg->batch)
		st = clg_fail(CLG_ERR_INVALID, "trainer: batch %lld cannot be split over %d devices", (long long)cfg->batch,
			      n * (cfg->comm ? cfg->comm->size : 1));
	if (st)
		return st;
	t = calloc(1, sizeof(*t));
	if (!t)
		return clg_fail(CLG_ERR_OOM, "trainer: out of host memory");
	t->cfg = *cfg;
	if (t->cfg.precision == CLG_PRECISION_MIXED && !(t->cfg.loss_scale > 0))
		t->cfg.loss_scale = 65536; /* float16 gradients need the scaler */
	snprintf(t->model_name, sizeof(t->model_name), "%s", cfg->model.name ? cfg->model.name : "");
	t->cfg.model.name = t->model_name;
	t->train = train;
	t->test = test;
	t->task = cfg->task ? cfg->task : clg_model_is_lm(&t->cfg.model) ? clg_task_language_model() : clg_task_classification();
	t->cfg.task = t->task;
	st = clg_task_check(t->task, train, "trainer (training set)");
	if (!st && test)
		st = clg_task_check(t->task, test, "trainer (test set)");
	for (int i = 0; !st && i < n; i++, t->nrep++)
		st = build_replica(t, i, bes[i]);
	if (!st)
		st = clg_trainer_check_fit(t);
	if (st)
		goto err;
	t->opt = make_optimizer(&t->cfg, &t->rep[0].params);
	if (!t->opt) {
		st = clg_last_status();
		goto err;
	}
	st = clg_loader_new(train, cfg->batch, cfg->seed, CLG_LOADER_SHUFFLE | (t->task->one_hot ? CLG_LOADER_ONE_HOT : 0),
			    &t->loader);
	if (!st && clg_trainer_parallel(t))
		st = clg_exchange_new(t);
	if (st)
		goto err;
	t->accum = t->cfg.accum_steps > 1 ? t->cfg.accum_steps : 1;
	t->steps_per_epoch = (clg_loader_batches_per_epoch(t->loader) + t->accum - 1) / t->accum;
	clg_grad_scaler_init(&t->scaler, t->cfg.loss_scale);
	t->sched = (clg_lr_schedule){.kind = cfg->schedule, .base_lr = cfg->optim.lr, .warmup_steps = cfg->warmup,
				     .step_size = t->steps_per_epoch, .gamma = 0.5,
				     .total_steps = t->steps_per_epoch * cfg->epochs};
	*out = t;
	return CLG_OK;
err:
	clg_trainer_free(t);
	return st;
}

clg_status clg_trainer_new(clg_backend *be, const clg_train_config *cfg, const clg_dataset *train,
			   const clg_dataset *test, clg_trainer **out)
{
	return clg_trainer_new_multi(&be, 1, cfg, train, test, out);
}

void clg_trainer_free(clg_trainer *t)
{
	if (!t)
		return;
	clg_exchange_free(t);
	clg_loader_free(t->loader);
	clg_optimizer_free(t->opt);
	for (int i = 0; i < t->nrep; i++) {
		clg_named_tensors_free(&t->rep[i].params);
		clg_named_tensors_free(&t->rep[i].state);
		clg_module_free(t->rep[i].model);
	}
	free(t);
}

clg_module *clg_trainer_model(clg_trainer *t) { return t->rep[0].model; }
clg_optimizer *clg_trainer_optimizer(clg_trainer *t) { return t->opt; }
const clg_train_config *clg_trainer_config(const clg_trainer *t) { return &t->cfg; }
int64_t clg_trainer_steps_per_epoch(const clg_trainer *t) { return t->steps_per_epoch; }
int64_t clg_trainer_epochs_done(const clg_trainer *t) { return t->epochs_done; }

clg_status clg_trainer_load(clg_trainer *t, const char *path)
{
	clg_ckpt_meta meta;
	clg_status st = clg_ckpt_read_meta(path, &meta);

	if (!st && strcmp(meta.model_name, t->model_name))
		st = clg_fail(CLG_ERR_INVALID, "checkpoint '%s' holds model '%s', not '%s'", path, meta.model_name,
			      t->model_name);
	if (!st && clg_exchange_sharded(t)) {
		/* the whole state, whatever N wrote it, then each rank keeps its part */
		clg_optimizer *full = make_optimizer(&t->cfg, &t->rep[0].params);
		st = full ? clg_ckpt_load(path, t->rep[0].model, full) : clg_last_status();
		if (!st)
			clg_optimizer_set_steps(t->opt, clg_optimizer_steps(full));
		if (!st)
			st = clg_exchange_broadcast_params(t);
		if (!st)
			st = clg_ex_scatter_optimizer(t, full);
		clg_optimizer_free(full);
	} else if (!st) {
		st = clg_ckpt_load(path, t->rep[0].model, t->opt);
		if (!st && clg_trainer_parallel(t)) /* every rank read the same file; replicas copy the root */
			st = clg_exchange_broadcast_params(t);
	}
	if (!st)
		t->epochs_done = meta.epochs_done;
	return st;
}

clg_status clg_trainer_save(clg_trainer *t, const char *path)
{
	const clg_train_config *c = &t->cfg;
	clg_ckpt_meta meta = {.model = c->model, .epochs_done = t->epochs_done, .seed = c->seed, .lr = c->optim.lr,
			      .momentum = c->optim.momentum, .weight_decay = c->optim.weight_decay, .clip = c->clip,
			      .batch = c->batch, .warmup = c->warmup};
	clg_loader_state next = {.seed = c->seed, .epoch = (uint64_t)t->epochs_done, .pos = 0};

	snprintf(meta.optimizer, sizeof(meta.optimizer), "%s", clg_opt_kind_name(c->optim.kind));
	snprintf(meta.schedule, sizeof(meta.schedule), "%s", clg_lr_kind_name(c->schedule));
	clg_loader_state_format(&next, meta.loader, sizeof(meta.loader));
	meta.tokenizer = c->tokenizer;
	snprintf(meta.data, sizeof(meta.data), "%s", c->data ? c->data : "");
	snprintf(meta.data_path, sizeof(meta.data_path), "%s", c->data_path ? c->data_path : "");
	if (clg_exchange_sharded(t)) { /* every rank sends its part; the root writes */
		clg_optimizer *full = NULL;
		clg_status st = clg_ex_gather_optimizer(t, &full);
		if (!st && full)
			st = clg_ckpt_save(path, t->rep[0].model, full, &meta);
		clg_optimizer_free(full);
		return st;
	}
	if (t->cfg.comm && t->cfg.comm->rank != 0)
		return CLG_OK; /* the root writes */
	return clg_ckpt_save(path, t->rep[0].model, t->opt, &meta);
}

/* Fails unless a file can be created beside path (its folder exists and is writable) and path is
 * not a folder (the rename over it would fail), so that a bad --save is reported before an epoch
 * of work, not after. */
static clg_status check_writable(const char *path)
{
	char dir[4096];
	struct stat sb;
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!*path)
		return clg_fail(CLG_ERR_IO, "checkpoint path is empty");
	if (n >= sizeof(dir))
		return clg_fail(CLG_ERR_IO, "checkpoint '%s': path too long", path);
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (n == 0)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)n, path);
	if (access(dir, W_OK | X_OK))
		return clg_fail(CLG_ERR_IO, "checkpoint '%s': cannot write into folder '%s': %s", path, dir,
				strerror(errno));
	if (!stat(path, &sb) && S_ISDIR(sb.st_mode))
		return clg_fail(CLG_ERR_IO, "checkpoint '%s' is a folder: name a file to save to (e.g. %s%smodel.safetensors)",
				path, path, path[strlen(path) - 1] == '/' ? "" : "/");
	return CLG_OK;
}

/* Mixed precision: the step's forward under autocast to float16 (backward never autocasts; the
 * optimizer and the scaler use no GEMM-like op), the same for one device and data parallel. */
static void autocast_begin(const clg_trainer *t)
{
	if (t->cfg.precision == CLG_PRECISION_MIXED)
		clg_autocast_begin(CLG_F16);
}

static void autocast_end(const clg_trainer *t)
{
	if (t->cfg.precision == CLG_PRECISION_MIXED)
		clg_autocast_end();
}

/* The micro-batches after x of the optimizer step x begins (the loader's next batches, up to
 * accum - 1 of them, fewer at the epoch's end) and the step's rows, x's included. */
static int64_t step_rows(const clg_trainer *t, const clg_tensor *x, int64_t *more)
{
	clg_loader_state ls;
	int64_t left, rows = clg_shape(x)[0];

	clg_loader_get_state(t->loader, &ls);
	left = t->train->n - ls.pos; /* rows still to come this epoch (the trainer keeps the last partial batch) */
	if (left < 0)
		left = 0;
	if (left > (t->accum - 1) * t->cfg.batch)
		left = (t->accum - 1) * t->cfg.batch;
	*more = (left + t->cfg.batch - 1) / t->cfg.batch;
	return rows + left;
}

/* Forward and backward of one micro-batch, its loss weighted by w (and the loss scale); *loss its
 * loss (scope-owned). */
static clg_status micro_step(clg_trainer *t, clg_tensor *x, clg_tensor *y, double w, int first, clg_tensor **loss)
{
	clg_tensor *out, *target;
	clg_status st = clg_task_forward(t->task, t->cfg.task_user, t->rep[0].model, x, y, 1, &out, &target, loss);
	double scale = (t->cfg.loss_scale > 0 ? t->scaler.scale : 1.0) * w;

	if (st)
		return st;
	if (first) /* after the forward, as ever: its temporaries are gone before the gradients come */
		clg_optimizer_zero_grad(t->opt);
	return clg_backward(scale != 1.0 ? clg_affine(*loss, scale, 0.0) : *loss);
}

/* One optimizer step: forward and backward of x, y and of the step's further micro-batches
 * (gradient accumulation), unscaling, clipping, the optimizer. *loss is the step's loss (the mean
 * over its rows; scope-owned); *rows the rows it took. */
static clg_status train_step(clg_trainer *t, clg_tensor *x, clg_tensor *y, clg_tensor **loss, int64_t *rows)
{
	int64_t more = 0, total = t->accum > 1 ? step_rows(t, x, &more) : clg_shape(x)[0];
	int ok = 1;
	clg_status st = micro_step(t, x, y, (double)clg_shape(x)[0] / (double)total, 1, loss);

	*rows = clg_shape(x)[0];
	if (!st && more) /* the step's loss: each micro-batch's, weighted as its gradient was */
		*loss = clg_affine(clg_detach(*loss), (double)clg_shape(x)[0] / (double)total, 0.0);
	for (int64_t k = 0; !st && k < more; k++) {
		clg_tensor *xk, *yk, *lk;
		clg_scope_begin(); /* one micro-batch's tensors at a time */
		st = clg_loader_next(t->loader, t->rep[0].be, &xk, &yk);
		if (!st && !xk)
			st = clg_fail(CLG_ERR_STATE, "trainer: the epoch ended inside an accumulation step");
		if (!st)
			st = micro_step(t, xk, yk, (double)clg_shape(xk)[0] / (double)total, 0, &lk);
		if (!st) {
			*rows += clg_shape(xk)[0];
			*loss = clg_keep(clg_add(*loss, clg_affine(clg_detach(lk), (double)clg_shape(xk)[0] / (double)total, 0.0)));
			if (!*loss)
				st = clg_last_status();
		}
		clg_scope_end();
	}
	if (!st && t->cfg.loss_scale > 0) /* unscaled gradients, or a step skipped for inf/NaN */
		st = clg_grad_scaler_unscale(&t->scaler, t->rep[0].params.tensors, t->rep[0].params.n, &ok);
	if (!st && ok && t->cfg.clip > 0)
		st = clg_clip_grad_norm(t->rep[0].params.tensors, t->rep[0].params.n, t->cfg.clip, NULL);
	clg_optimizer_set_lr(t->opt, clg_lr_at(&t->sched, clg_optimizer_steps(t->opt)));
	if (!st && ok)
		st = clg_optimizer_step(t->opt);
	return st;
}

/* Device memory: a new high-water mark on every device as a step begins, and the step's mark kept
 * if it is the epoch's highest. */
static void memory_step_begin(const clg_trainer *t)
{
	for (int i = 0; i < t->nrep; i++)
		clg_backend_reset_peak(t->rep[i].be);
}

static void memory_step_end(const clg_trainer *t, clg_epoch_info *info)
{
	for (int i = 0; i < t->nrep && i < CLG_TRAIN_MAX_DEVICES; i++) {
		clg_stats s;
		clg_backend_stats(t->rep[i].be, &s);
		if (s.bytes_peak > info->peak_bytes[i])
			info->peak_bytes[i] = s.bytes_peak;
	}
}

/* One epoch of training (no evaluation): info gets the counts, the mean loss and the time. */
/* The epoch's running loss: on the device with one device (read only when asked), on the host in
 * data parallel (whose exchange reads every step's loss anyway). */
typedef struct {
	clg_tensor *sum;
	double host_sum, last;
	int steps;
} loss_meter;

static clg_status meter_add_tensor(loss_meter *m, clg_tensor *loss)
{
	clg_tensor *d = clg_detach(loss), *sum = d && m->sum ? clg_add(m->sum, d) : clg_keep(d);
	if (!sum) /* an add that failed (its allocation, its launch) must stop the epoch, not zero the loss */
		return clg_last_status() ? clg_last_status() : clg_fail(CLG_ERR_INVALID, "trainer: running loss");
	clg_free(m->sum);
	m->sum = clg_keep(sum);
	m->steps++;
	return CLG_OK;
}

/* The mean so far and, when loss is given, that step's own value. */
static clg_status meter_read(loss_meter *m, clg_tensor *loss, double *mean, double *step_loss)
{
	clg_status st = CLG_OK;
	double s = m->host_sum;

	if (m->sum) {
		if (loss && step_loss)
			st = clg_item(loss, step_loss);
		if (!st)
			st = clg_item(m->sum, &s);
	} else if (step_loss) {
		*step_loss = m->last;
	}
	*mean = m->steps ? s / (double)m->steps : NAN;
	return st;
}

/* The commands sent so far to every device of this process, and the host's time enqueuing them. */
static void command_counts(const clg_trainer *t, uint64_t n[3], double *enqueue_seconds)
{
	n[0] = n[1] = n[2] = 0;
	*enqueue_seconds = 0;
	for (int i = 0; i < t->nrep; i++) {
		clg_stats s;
		clg_backend_stats(t->rep[i].be, &s);
		n[0] += s.n_launch;
		n[1] += s.n_upload;
		n[2] += s.n_download;
		*enqueue_seconds += s.enqueue_seconds;
	}
}

/* One epoch of training (no evaluation): info gets the counts, the mean loss and the time. */
static clg_status train_epoch(clg_trainer *t, const clg_train_callbacks *cb, clg_epoch_info *info)
{
	clg_loader_state ls = {.seed = t->cfg.seed, .epoch = (uint64_t)t->epochs_done, .pos = 0};
	clg_step_info si = {.epoch = t->epochs_done + 1, .steps = t->steps_per_epoch};
	loss_meter m = {0};
	int parallel = clg_trainer_parallel(t);
	double t0 = clg_now(), host = 0, enq0, enq1;
	uint64_t cmd0[3], cmd1[3];
	clg_status st = parallel ? clg_exchange_balance(t) : CLG_OK;

	command_counts(t, cmd0, &enq0); /* after the balancing's measurement */

	if (!st)
		st = clg_loader_set_state(t->loader, &ls);
	if (cb->epoch_begin)
		cb->epoch_begin(cb->user, si.epoch, t->cfg.epochs, t->steps_per_epoch);
	while (!st && !(t->cfg.max_steps && t->run_steps >= t->cfg.max_steps)) {
		clg_tensor *x, *y, *loss = NULL;
		int64_t rows = 0;
		double h0;
		if (cb->step_begin && (st = cb->step_begin(cb->user, si.step + 1)) != CLG_OK)
			break;
		h0 = clg_now();
		if (!t->first_timed)
			t->first_begun = h0;
		memory_step_begin(t);
		clg_scope_begin();
		st = clg_loader_next(t->loader, t->rep[0].be, &x, &y);
		if (st || !x) {
			clg_scope_end();
			break;
		}
		autocast_begin(t);
		if (parallel) {
			st = clg_exchange_step(t, x, y, &m.last);
			m.host_sum += m.last;
			m.steps++;
			rows = clg_shape(x)[0];
		} else {
			st = train_step(t, x, y, &loss, &rows);
			if (!st)
				st = meter_add_tensor(&m, loss);
		}
		autocast_end(t);
		host += clg_now() - h0;
		if (!st && !t->first_timed) { /* the only wait besides the loss reads: once, to time the first step */
			st = clg_synchronize(t->rep[0].be);
			t->first_done = clg_now();
			t->first_timed = 1;
		}
		if (!st) {
			si.step++;
			t->run_steps++;
			si.samples += rows;
			si.loss = si.step_loss = NAN;
			if (cb->step_end && cb->loss_due && cb->loss_due(cb->user, si.step))
				st = meter_read(&m, loss, &si.loss, &si.step_loss);
			if (!st && cb->step_end)
				cb->step_end(cb->user, &si);
		}
		clg_scope_end();
		memory_step_end(t, info);
	}
	info->train_loss = NAN;
	if (!st && m.steps)
		st = meter_read(&m, NULL, &info->train_loss, NULL); /* also waits for the epoch's last step */
	clg_free(m.sum);
	info->epoch = si.epoch;
	info->epochs = t->cfg.epochs;
	info->steps = si.step;
	info->samples = si.samples;
	info->seconds = clg_now() - t0;
	info->host_seconds = host;
	command_counts(t, cmd1, &enq1);
	info->enqueue_seconds = enq1 - enq0;
	info->launches = cmd1[0] - cmd0[0];
	info->uploads = cmd1[1] - cmd0[1];
	info->downloads = cmd1[2] - cmd0[2];
	info->lr = clg_optimizer_lr(t->opt);
	info->loss_scale = t->cfg.loss_scale > 0 ? t->scaler.scale : 0;
	info->skipped_steps = t->scaler.skipped;
	info->replicas = t->nrep;
	info->optimizer_state_bytes = clg_optimizer_state_bytes(t->opt);
	for (int i = 0; i < t->nrep; i++) {
		clg_stats s;
		clg_backend_stats(t->rep[i].be, &s);
		info->live_bytes[i] = s.bytes_in_use;
		info->shares[i] = t->rep[i].share;
		info->samples_per_s[i] = t->rep[i].rate;
	}
	if (!st && parallel) {
		clg_exchange_stats(t, info);
		st = clg_exchange_checksum(t, &info->checksum, &info->replicas_identical);
	}
	return st;
}

clg_status clg_trainer_run(clg_trainer *t, const clg_train_callbacks *cb)
{
	static const clg_train_callbacks none;
	int64_t start = t->epochs_done, end = t->cfg.epochs;
	clg_status st = CLG_OK;

	if (!cb)
		cb = &none;
	if (t->cfg.stop_after > 0 && start + t->cfg.stop_after < end)
		end = start + t->cfg.stop_after;
	if (t->cfg.save && (!t->cfg.comm || t->cfg.comm->rank == 0)) /* the root writes */
		st = check_writable(t->cfg.save);
	t->run_steps = 0;
	while (!st && t->epochs_done < end && !(t->cfg.max_steps && t->run_steps >= t->cfg.max_steps)) {
		clg_epoch_info info = {.test_acc = NAN, .test_metric = NAN, .test_loss = NAN, .first = t->epochs_done == start,
				       .metric_name = t->task->metric ? t->task->metric_name : NULL};
		st = train_epoch(t, cb, &info);
		if (!st && info.steps < t->steps_per_epoch)
			break; /* cut short by max_steps: not an epoch done, nothing evaluated or saved */
		if (!st && t->test)
			st = clg_trainer_evaluate(t, t->test, &info.test_metric, &info.test_loss);
		if (!st && info.metric_name && !strcmp(info.metric_name, "accuracy"))
			info.test_acc = info.test_metric;
		if (st)
			break;
		t->epochs_done++;
		info.first_step_begun = t->first_begun;
		info.first_step_done = t->first_done;
		if (t->cfg.save) {
			st = clg_trainer_save(t, t->cfg.save);
			info.saved = t->cfg.save;
		}
		if (!st && cb->epoch_end)
			st = cb->epoch_end(cb->user, &info);
	}
	return st;
}

clg_status clg_trainer_evaluate(clg_trainer *t, const clg_dataset *ds, double *acc, double *loss)
{
	return clg_evaluate_on(t->rep[0].model, t->rep[0].be, ds, t->task, t->cfg.task_user, t->cfg.batch,
			       t->cfg.precision == CLG_PRECISION_MIXED ? CLG_F16 : CLG_F32, acc, loss);
}

const clg_task *clg_trainer_task(const clg_trainer *t) { return t->task; }
