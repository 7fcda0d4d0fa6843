/* clgrad train / clgrad eval: train a model on real data on any device, with progress, a JSON
 * log, checkpoints and resume; evaluate a saved checkpoint. */
#include "checkpoint.h"
#include "cli.h"
#include "models.h"
#include "progress.h"

#include <clgrad.h>
#include <data.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_IMAGES "/usr/share/datasets/fashion-mnist"
#define DEFAULT_TEXT "/usr/share/common-licenses/GPL-3"

typedef struct {
	clg_model_config model;
	const char *data, *device, *save, *resume, *log, *optimizer, *schedule, *checkpoint;
	int64_t epochs, batch, limit, warmup, stop_after;
	double lr, momentum, weight_decay, clip;
	uint64_t seed;
} train_opts;

typedef struct {
	clg_dataset train, test;
	clg_text text;
	int lm;
	double unigram;  /* language model: validation loss of the training text's unigram model */
} data_sets;

static int usage_to(FILE *f, const char *cmd)
{
	fprintf(f,
		"usage: clgrad %s [--model mlp|cnn|transformer] [--data DIR|FILE] [--epochs N] [--batch N]\n"
		"       [--lr X] [--optimizer sgd|adam|adamw] [--momentum X] [--weight-decay X]\n"
		"       [--schedule constant|cosine|step] [--warmup STEPS] [--clip NORM] [--device SPEC]\n"
		"       [--seed N] [--save FILE] [--resume FILE] [--log FILE] [--limit SAMPLES]\n"
		"       [--stop-after EPOCHS]   (end early, as if interrupted; --resume continues the same run)\n"
		"       [--seq-len T] [--dim D] [--heads H] [--layers L]     (transformer)\n"
		"       clgrad eval --checkpoint FILE [--data DIR|FILE] [--device SPEC] [--batch N]\n"
		"defaults: mlp on Fashion-MNIST (%s), 5 epochs, batch 128, Adam lr 1e-3;\n"
		"the transformer trains on a text file (default %s)\n",
		cmd, DEFAULT_IMAGES, DEFAULT_TEXT);
	return 2;
}

static int usage(const char *cmd) { return usage_to(stderr, cmd); }

static int wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	return 0;
}

static int parse(int argc, char **argv, train_opts *o)
{
	*o = (train_opts){.model = {.name = "mlp", .seq_len = 64, .dim = 64, .heads = 4, .layers = 2},
			  .epochs = 5, .batch = 128, .lr = 1e-3, .optimizer = "adam", .schedule = "constant", .seed = 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			return -1;
		i++;
		if (!strcmp(a, "--model"))
			o->model.name = v;
		else if (!strcmp(a, "--data"))
			o->data = v;
		else if (!strcmp(a, "--epochs"))
			o->epochs = atoll(v);
		else if (!strcmp(a, "--batch"))
			o->batch = atoll(v);
		else if (!strcmp(a, "--lr"))
			o->lr = atof(v);
		else if (!strcmp(a, "--optimizer"))
			o->optimizer = v;
		else if (!strcmp(a, "--momentum"))
			o->momentum = atof(v);
		else if (!strcmp(a, "--weight-decay"))
			o->weight_decay = atof(v);
		else if (!strcmp(a, "--schedule"))
			o->schedule = v;
		else if (!strcmp(a, "--warmup"))
			o->warmup = atoll(v);
		else if (!strcmp(a, "--clip"))
			o->clip = atof(v);
		else if (!strcmp(a, "--device"))
			o->device = v;
		else if (!strcmp(a, "--seed"))
			o->seed = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--save"))
			o->save = v;
		else if (!strcmp(a, "--resume"))
			o->resume = v;
		else if (!strcmp(a, "--log"))
			o->log = v;
		else if (!strcmp(a, "--limit"))
			o->limit = atoll(v);
		else if (!strcmp(a, "--stop-after"))
			o->stop_after = atoll(v);
		else if (!strcmp(a, "--checkpoint"))
			o->checkpoint = v;
		else if (!strcmp(a, "--seq-len"))
			o->model.seq_len = atoll(v);
		else if (!strcmp(a, "--dim"))
			o->model.dim = atoll(v);
		else if (!strcmp(a, "--heads"))
			o->model.heads = atoll(v);
		else if (!strcmp(a, "--layers"))
			o->model.layers = atoll(v);
		else
			return -1;
	}
	if (o->epochs < 1 || o->batch < 1 || !(o->lr > 0))
		return -1;
	return 0;
}

/* Cross-entropy (nats) of the validation part under the training part's character frequencies
 * (add-one smoothed): the baseline a language model must beat. */
static double unigram_loss(const clg_text *t)
{
	double count[256] = {0}, total = 0, loss = 0;
	for (int64_t i = 0; i < t->n_train; i++)
		count[t->ids[i]] += 1;
	for (int v = 0; v < t->vocab_size; v++)
		total += count[v] + 1;
	for (int64_t i = t->n_train; i < t->n; i++)
		loss -= log((count[t->ids[i]] + 1) / total);
	return t->n > t->n_train ? loss / (double)(t->n - t->n_train) : NAN;
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

static clg_status load_data(train_opts *o, data_sets *d)
{
	clg_status st;
	memset(d, 0, sizeof(*d));
	d->lm = clg_model_is_lm(&o->model);
	if (d->lm) {
		const char *path = o->data ? o->data : DEFAULT_TEXT;
		st = clg_text_load(path, 0.1, &d->text);
		if (!st)
			st = clg_text_windows(&d->text, 0, o->model.seq_len, o->model.seq_len, &d->train);
		if (!st)
			st = clg_text_windows(&d->text, 1, o->model.seq_len, o->model.seq_len, &d->test);
		o->model.vocab = d->text.vocab_size;
		if (!st)
			d->unigram = unigram_loss(&d->text);
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
}

/* Test accuracy (images) or validation loss (language model), with no graph. */
static clg_status evaluate(clg_backend *be, clg_module *model, const data_sets *d, int64_t batch, double *acc,
			   double *loss)
{
	clg_loader *l = NULL;
	int64_t correct = 0, seen = 0;
	double total = 0;
	int32_t *pred = malloc(sizeof(int32_t) * (size_t)batch);
	int32_t *lab = malloc(sizeof(int32_t) * (size_t)batch);
	clg_status st = pred && lab ? clg_loader_new(&d->test, batch, 0, CLG_LOADER_ONE_HOT, &l) : CLG_ERR_OOM;

	clg_module_train(model, 0);
	clg_no_grad_begin();
	while (!st) {
		clg_tensor *x, *y;
		double v;
		clg_scope_begin();
		st = clg_loader_next(l, be, &x, &y);
		if (st || !x) {
			clg_scope_end();
			break;
		}
		clg_tensor *logits = clg_module_forward(model, x);
		int64_t V = logits ? clg_shape(logits)[1] : 1;
		clg_tensor *y2 = clg_reshape(y, CLG_SHAPE(-1, V));
		clg_tensor *ce = clg_cross_entropy(logits, y2, 0.0);
		st = clg_item(ce, &v);
		int64_t b = clg_shape(x)[0];
		if (!st && !d->lm) {
			clg_tensor *am = clg_argmax(logits), *al = clg_argmax(y2);
			st = clg_to_host(am, pred, sizeof(int32_t) * (size_t)b);
			if (!st)
				st = clg_to_host(al, lab, sizeof(int32_t) * (size_t)b);
			for (int64_t i = 0; !st && i < b; i++)
				correct += pred[i] == lab[i];
		}
		total += v * (double)b; /* a mean over samples, whatever the batch size */
		seen += b;
		clg_scope_end();
	}
	clg_no_grad_end();
	clg_module_train(model, 1);
	clg_loader_free(l);
	free(pred);
	free(lab);
	*acc = seen && !d->lm ? (double)correct / (double)seen : NAN;
	*loss = seen ? total / (double)seen : NAN;
	return st;
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
	j->st = load_data(j->o, j->d);
	if (j->st)
		snprintf(j->msg, sizeof(j->msg), "%s", clg_last_error());
	return NULL;
}

static int schedule_known(const char *s) { return !strcmp(s, "constant") || !strcmp(s, "cosine") || !strcmp(s, "step"); }

static clg_opt_kind opt_kind(const char *name, int *ok)
{
	*ok = 1;
	if (!strcmp(name, "sgd"))
		return CLG_OPT_SGD;
	if (!strcmp(name, "adam"))
		return CLG_OPT_ADAM;
	if (!strcmp(name, "adamw"))
		return CLG_OPT_ADAMW;
	*ok = 0;
	return CLG_OPT_ADAM;
}

int cmd_train(int argc, char **argv)
{
	train_opts o;
	data_sets d;
	clg_backend *be = NULL;
	clg_module *model = NULL;
	clg_optimizer *opt = NULL;
	clg_loader *loader = NULL;
	clg_named_tensors params = {0};
	FILE *log = NULL;
	int idx, rc = 1, kind_ok;
	int64_t start_epoch = 0, steps_per_epoch;
	clg_opt_config ocfg;
	clg_lr_schedule sched;
	const clg_device_info *devs;
	int ndev;
	first_step fs = {.age0 = process_age(), .t0 = clg_now()};

	if (fs.age0 < 0)
		fs.age0 = 0; /* no /proc: count from here */
	if (wants_help(argc, argv))
		return usage_to(stdout, "train"), 0;
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines show at once, also through a pipe */
	if (parse(argc, argv, &o))
		return usage("train");
	if (o.resume) { /* the checkpoint's model and training configuration win */
		clg_ckpt_meta meta;
		static char name[32], opt_name[16], sched_name[16];
		if (clg_ckpt_read_meta(o.resume, &meta))
			return report_error("train");
		snprintf(name, sizeof(name), "%s", meta.model_name);
		o.model = meta.model;
		o.model.name = name;
		start_epoch = meta.epochs_done;
		o.seed = meta.seed;
		/* the same training configuration, so the resumed run continues the same curve */
		snprintf(opt_name, sizeof(opt_name), "%s", meta.optimizer);
		snprintf(sched_name, sizeof(sched_name), "%s", meta.schedule);
		o.optimizer = opt_name;
		o.schedule = sched_name;
		o.lr = meta.lr > 0 ? meta.lr : o.lr;
		o.momentum = meta.momentum;
		o.weight_decay = meta.weight_decay;
		o.clip = meta.clip;
		o.batch = meta.batch > 0 ? meta.batch : o.batch;
		o.warmup = meta.warmup;
	}
	ocfg = (clg_opt_config){.kind = opt_kind(o.optimizer, &kind_ok), .lr = o.lr, .momentum = o.momentum,
				.weight_decay = o.weight_decay};
	if (!kind_ok || !schedule_known(o.schedule))
		return usage("train");
	{
		/* the data loads while the device opens and the kernel programs get ready */
		data_job job = {.o = &o, .d = &d};
		pthread_t tid;
		int threaded = pthread_create(&tid, NULL, data_thread, &job) == 0;
		clg_status st = CLG_OK;
		if (!threaded)
			data_thread(&job);
		st = clg_devices(&devs, &ndev);
		if (!st)
			st = clg_device_select(o.device, &idx);
		if (!st)
			st = clg_backend_open(idx, &be);
		if (!st) {
			printf("device %d: %s (%s)\n", idx, devs[idx].name, devs[idx].platform);
			fs.opened_s = since_launch(&fs);
			/* fast start: the programs a step needs, from the disk cache (or compiled, in parallel) */
			double t = clg_now();
			char workload[64];
			snprintf(workload, sizeof(workload), "train %s", o.model.name);
			/* only a head start: a program that fails here fails again, with its op named, at first use */
			if (clg_precompile(be, workload, CLG_F32, &fs.programs))
				fprintf(stderr, "clgrad train: warning: kernel precompile: %s\n", clg_last_error());
			fs.precompile_s = clg_now() - t;
			fs.ready_s = since_launch(&fs);
		}
		if (threaded)
			pthread_join(tid, NULL);
		if (!st && job.st)
			st = clg_fail(job.st, "%s", job.msg);
		if (st) {
			rc = report_error("train");
			if (!be) {
				free_data(&d);
				return rc;
			}
			goto out;
		}
		fs.data_s = since_launch(&fs);
	}
	model = clg_model_build(be, &o.model, o.seed);
	if (!model || clg_module_state(model, 0, &params)) {
		fprintf(stderr, "clgrad train: cannot build model '%s': %s\n", o.model.name, clg_last_error());
		goto out;
	}
	opt = clg_optimizer_new(&ocfg, params.tensors, params.n);
	if (!opt || clg_loader_new(&d.train, o.batch, o.seed, CLG_LOADER_SHUFFLE | CLG_LOADER_ONE_HOT, &loader)) {
		rc = report_error("train");
		goto out;
	}
	if (o.resume) {
		if (clg_ckpt_load(o.resume, model, opt)) {
			rc = report_error("train");
			goto out;
		}
		printf("resumed from %s after %lld epoch(s)\n", o.resume, (long long)start_epoch);
	}
	if (o.log && !(log = fopen(o.log, start_epoch ? "a" : "w"))) {
		fprintf(stderr, "clgrad train: cannot open log '%s'\n", o.log);
		goto out;
	}
	steps_per_epoch = clg_loader_batches_per_epoch(loader);
	sched = (clg_lr_schedule){.kind = !strcmp(o.schedule, "cosine") ? CLG_LR_COSINE
					: !strcmp(o.schedule, "step") ? CLG_LR_STEP : CLG_LR_CONSTANT,
				  .base_lr = o.lr, .warmup_steps = o.warmup, .step_size = steps_per_epoch, .gamma = 0.5,
				  .total_steps = steps_per_epoch * o.epochs};
	printf("model %s: %lld parameters; %lld training samples, %lld test samples, %lld steps per epoch\n",
	       o.model.name, (long long)clg_module_num_params(model), (long long)d.train.n, (long long)d.test.n,
	       (long long)steps_per_epoch);

	for (int64_t e = start_epoch; e < o.epochs && (!o.stop_after || e < start_epoch + o.stop_after); e++) {
		clg_loader_state ls = {.seed = o.seed, .epoch = (uint64_t)e, .pos = 0};
		clg_tensor *loss_sum = NULL;
		clg_progress pr;
		char label[64];
		int64_t step = 0, samples = 0;
		double t0 = clg_now(), train_loss = NAN, acc, val_loss, secs;
		clg_status st = clg_loader_set_state(loader, &ls);

		snprintf(label, sizeof(label), "epoch %lld/%lld", (long long)e + 1, (long long)o.epochs);
		clg_progress_begin(&pr, stdout, label, steps_per_epoch);
		while (!st) {
			clg_tensor *x, *y;
			if (!fs.done)
				fs.begun_s = since_launch(&fs);
			clg_scope_begin();
			st = clg_loader_next(loader, be, &x, &y);
			if (st || !x) {
				clg_scope_end();
				break;
			}
			clg_tensor *logits = clg_module_forward(model, x);
			clg_tensor *target = logits ? clg_reshape(y, CLG_SHAPE(-1, clg_shape(logits)[1])) : NULL;
			clg_tensor *loss = clg_cross_entropy(logits, target, 0.0);
			clg_optimizer_zero_grad(opt);
			st = clg_backward(loss);
			if (!st && o.clip > 0)
				st = clg_clip_grad_norm(params.tensors, params.n, o.clip, NULL);
			clg_optimizer_set_lr(opt, clg_lr_at(&sched, clg_optimizer_steps(opt)));
			if (!st)
				st = clg_optimizer_step(opt);
			if (!st && !fs.done) { /* the only wait outside the progress bar: once, to time the first step */
				st = clg_synchronize(be);
				fs.done_s = since_launch(&fs);
				fs.done = 1;
			}
			/* the running loss stays on the device; it is read only when the bar is drawn */
			clg_tensor *d_loss = clg_detach(loss), *sum = loss_sum ? clg_add(loss_sum, d_loss) : clg_keep(d_loss);
			clg_free(loss_sum);
			loss_sum = clg_keep(sum);
			step++;
			samples += clg_shape(x)[0];
			if (!st && clg_progress_due(&pr, step)) {
				double s = NAN;
				st = clg_item(loss_sum, &s);
				clg_progress_update(&pr, step, samples, s / (double)step);
				train_loss = s / (double)step;
			}
			clg_scope_end();
		}
		clg_progress_end(&pr);
		clg_free(loss_sum);
		if (!st)
			st = clg_synchronize(be);
		secs = clg_now() - t0;
		if (!st)
			st = evaluate(be, model, &d, o.batch, &acc, &val_loss);
		if (st) {
			rc = report_error("train");
			goto out;
		}
		if (e == start_epoch)
			printf("time to first step: began %.3f s after launch, done at %.3f s (device open at %.3f s, %d kernel "
			       "programs ready at %.3f s after %.3f s, data loaded beside them by %.3f s)\n", fs.begun_s, fs.done_s,
			       fs.opened_s, fs.programs, fs.ready_s, fs.precompile_s, fs.data_s);
		if (d.lm)
			printf("epoch %lld: train loss %.4f, validation loss %.4f (unigram baseline %.4f), %.1f s, %.0f samples/s\n",
			       (long long)e + 1, train_loss, val_loss, d.unigram, secs, (double)samples / secs);
		else
			printf("epoch %lld: train loss %.4f, test accuracy %.4f (test loss %.4f), %.1f s, %.0f samples/s\n",
			       (long long)e + 1, train_loss, acc, val_loss, secs, (double)samples / secs);
		if (log) {
			fprintf(log, "{\"epoch\": %lld, \"model\": \"%s\", \"device\": ", (long long)e + 1, o.model.name);
			json_string(log, devs[idx].name);
			fprintf(log, ", \"train_loss\": %.6f, ", train_loss);
			if (d.lm)
				fprintf(log, "\"val_loss\": %.6f, \"unigram_val_loss\": %.6f", val_loss, d.unigram);
			else
				fprintf(log, "\"test_acc\": %.6f, \"test_loss\": %.6f", acc, val_loss);
			fprintf(log, ", \"epoch_seconds\": %.3f, \"samples_per_s\": %.1f, \"steps\": %lld, \"lr\": %.6g", secs,
				(double)samples / secs, (long long)step, clg_optimizer_lr(opt));
			if (e == start_epoch) /* this process's start */
				fprintf(log, ", \"first_step_begun_s\": %.3f, \"first_step_done_s\": %.3f, \"programs_ready_s\": %.3f",
					fs.begun_s, fs.done_s, fs.ready_s);
			fprintf(log, "}\n");
			fflush(log);
		}
		if (o.save) {
			clg_ckpt_meta meta = {.model = o.model, .epochs_done = e + 1, .seed = o.seed, .lr = o.lr,
					      .momentum = o.momentum, .weight_decay = o.weight_decay, .clip = o.clip,
					      .batch = o.batch, .warmup = o.warmup};
			clg_loader_state next = {.seed = o.seed, .epoch = (uint64_t)e + 1, .pos = 0};
			snprintf(meta.optimizer, sizeof(meta.optimizer), "%s", o.optimizer);
			snprintf(meta.schedule, sizeof(meta.schedule), "%s", o.schedule);
			clg_loader_state_format(&next, meta.loader, sizeof(meta.loader));
			if (clg_ckpt_save(o.save, model, opt, &meta)) {
				rc = report_error("train");
				goto out;
			}
			printf("saved %s\n", o.save);
		}
	}
	rc = 0;
out:
	if (log)
		fclose(log);
	clg_loader_free(loader);
	clg_optimizer_free(opt);
	clg_named_tensors_free(&params);
	clg_module_free(model);
	if (be)
		free_data(&d);
	clg_backend_close(be);
	return rc;
}

int cmd_eval(int argc, char **argv)
{
	train_opts o;
	data_sets d;
	clg_ckpt_meta meta;
	clg_backend *be = NULL;
	clg_module *model = NULL;
	int idx, rc = 1;
	double acc, loss;

	if (wants_help(argc, argv))
		return usage_to(stdout, "eval"), 0;
	if (parse(argc, argv, &o) || !o.checkpoint)
		return usage("eval");
	if (clg_ckpt_read_meta(o.checkpoint, &meta) || clg_device_select(o.device, &idx) || clg_backend_open(idx, &be))
		return report_error("eval");
	o.model = meta.model;
	o.model.name = meta.model_name;
	if (load_data(&o, &d)) {
		rc = report_error("eval");
		goto out_data;
	}
	model = clg_model_build(be, &o.model, meta.seed);
	if (!model || clg_ckpt_load(o.checkpoint, model, NULL) || evaluate(be, model, &d, o.batch, &acc, &loss)) {
		rc = report_error("eval");
		goto out_data;
	}
	if (d.lm)
		printf("%s (%s, %lld epochs): validation loss %.4f on %s\n", o.checkpoint, o.model.name,
		       (long long)meta.epochs_done, loss, be->info.name);
	else
		printf("%s (%s, %lld epochs): test accuracy %.4f, test loss %.4f on %s\n", o.checkpoint, o.model.name,
		       (long long)meta.epochs_done, acc, loss, be->info.name);
	rc = 0;
out_data:
	free_data(&d);
	clg_module_free(model);
	clg_backend_close(be);
	return rc;
}
