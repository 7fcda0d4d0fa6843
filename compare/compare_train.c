/* compare section: train. Short identical training runs of the three `clgrad train` models on
 * the device: same seed, same batches (Fashion-MNIST; the transformer on a text file), the same
 * model code (models.c, transformer.c) and the same loop as cmd_train.c (Adam, lr 1e-3, cross
 * entropy). Each run is done twice to check that it repeats bit for bit. The workload depends on
 * the mode only, never on the device, so the driver can hold every device's losses against the
 * reference backend's (which is 20-100x slower: hence the small sizes). A simulator (o->tiny, which the
 * worker sets for a device named like Oclgrind) runs only the first step of each quick run, once: the same first
 * batch, so its loss still compares with the reference device's first quick step. */
#include "compare.h"
#include <clgrad_train.h>

#include <clgrad.h>
#include <clgrad_data.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_IMAGES "/usr/share/datasets/fashion-mnist"
#define DEFAULT_TEXT "/usr/share/common-licenses/GPL-3"
#define TRAIN_SEED 1

typedef struct {
	clg_model_config model;
	int64_t steps, batch;
	int64_t sim_steps;  /* steps on a simulator (the first ones of the quick run); 0: skipped there */
} run_spec;

/* Sized so that the reference backend does the quick section in about 20 s and the full one in
 * under 2 minutes (both runs of each model included). Oclgrind did an 8x784x512 GEMM in 50 s:
 * one MLP or CNN step would take minutes there, the quick transformer's first steps a few
 * seconds each. */
static const run_spec quick_runs[] = {
	{{.name = "mlp"}, 8, 32, 0},
	{{.name = "cnn"}, 3, 8, 0},
	{{.name = "transformer", .seq_len = 16, .dim = 16, .heads = 2, .layers = 1}, 4, 4, 2},
};
static const run_spec full_runs[] = {
	{{.name = "mlp"}, 20, 64, 0},
	{{.name = "cnn"}, 6, 16, 0},
	{{.name = "transformer", .seq_len = 64, .dim = 64, .heads = 4, .layers = 2}, 8, 8, 0},
};

typedef struct {
	clg_dataset images;  /* Fashion-MNIST training split, normalised as `clgrad train` does */
	clg_text text;
	clg_dataset windows; /* text windows for the transformer's seq_len */
	int have_images, have_text;
	char images_error[256], text_error[256];
} train_data;

typedef struct {
	double *losses;  /* one per step */
	double *step_s;  /* wall time of each step, the loss read back included */
	int64_t done;    /* steps completed */
	int64_t params;
	char error[512];
} run_result;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void load_images(train_data *d, const char *dir)
{
	float mean, sd;
	clg_status st = clg_dataset_load_idx(dir, "train", &d->images);
	if (!st)
		st = clg_dataset_channel_stats(&d->images, 1, &mean, &sd);
	if (!st)
		st = clg_dataset_normalize(&d->images, 1, &mean, &sd);
	if (st)
		snprintf(d->images_error, sizeof(d->images_error), "Fashion-MNIST from %s: %s", dir, clg_last_error());
	d->have_images = !st;
}

static void load_text(train_data *d, int64_t seq_len)
{
	clg_status st = clg_text_load(DEFAULT_TEXT, 0.1, &d->text);
	if (!st)
		st = clg_text_windows(&d->text, 0, seq_len, seq_len, &d->windows);
	if (st)
		snprintf(d->text_error, sizeof(d->text_error), "text %s: %s", DEFAULT_TEXT, clg_last_error());
	d->have_text = !st;
}

/* Per-step losses and times of a compare run, gathered from the trainer's callbacks. */
typedef struct {
	run_result *r;
	double last;      /* clg_now() at the previous step's end (or the run's start) */
} run_watch;

static int every_step(void *user, int64_t step) { return (void)user, (void)step, 1; }

static void record_step(void *user, const clg_step_info *s)
{
	run_watch *w = user;
	double now = clg_now(); /* the loss was read: the device has done the step */
	w->r->losses[w->r->done] = s->step_loss;
	w->r->step_s[w->r->done] = now - w->last;
	w->r->done++;
	w->last = now;
}

/* One training run through the library's trainer, as `clgrad train` runs it: a fresh model and
 * loader from the same seed, Adam 1e-3, the loss read after every step. */
static void train_run(clg_backend *dev, const run_spec *spec, const clg_dataset *ds, run_result *r)
{
	clg_train_config cfg = clg_train_config_default();
	clg_trainer *t = NULL;
	run_watch w = {.r = r};
	clg_train_callbacks cb = {.user = &w, .loss_due = every_step, .step_end = record_step};
	clg_status st;

	r->done = 0;
	r->error[0] = 0;
	cfg.model = spec->model;
	cfg.seed = TRAIN_SEED;
	cfg.batch = spec->batch;
	cfg.epochs = 1;
	cfg.max_steps = spec->steps;
	st = clg_trainer_new(dev, &cfg, ds, NULL, &t);
	if (st) {
		snprintf(r->error, sizeof(r->error), "cannot build model '%s': %s", cfg.model.name, clg_last_error());
		return;
	}
	r->params = clg_module_num_params(clg_trainer_model(t));
	if (clg_trainer_steps_per_epoch(t) < spec->steps)
		st = clg_fail(CLG_ERR_INVALID, "the data ran out after %lld steps", (long long)clg_trainer_steps_per_epoch(t));
	w.last = clg_now();
	if (!st)
		st = clg_trainer_run(t, &cb);
	if (st)
		snprintf(r->error, sizeof(r->error), "step %lld: %s", (long long)r->done + 1, clg_last_error());
	clg_trainer_free(t);
}

/* b: the repeat (NULL when not repeated: repeat_identical is then null). */
static void write_run(json_writer *w, const run_spec *spec, const run_result *a, const run_result *b,
		      double seconds, const char *skipped)
{
	const char *error = a->error[0] ? a->error : b && b->error[0] ? b->error : NULL;
	int64_t nb = b ? b->done : 0, n = 0;
	double med = 0, *sorted = malloc(sizeof(double) * (size_t)(a->done + nb + 1));
	int identical = b && !error && a->done == b->done &&
			!memcmp(a->losses, b->losses, sizeof(double) * (size_t)a->done);

	json_begin_object(w);
	json_key_str(w, "model", spec->model.name);
	json_key_int(w, "steps", spec->steps);
	json_key_int(w, "batch", spec->batch);
	json_key(w, "losses");
	json_begin_array(w);
	for (int64_t s = 0; s < a->done; s++)
		json_num(w, a->losses[s]);
	json_end_array(w);
	/* median over both runs' steps: the first step of the first run also compiles kernels */
	for (int64_t s = 0; sorted && s < a->done; s++)
		sorted[n++] = a->step_s[s];
	for (int64_t s = 0; sorted && s < nb; s++)
		sorted[n++] = b->step_s[s];
	if (n > 0) {
		qsort(sorted, (size_t)n, sizeof(double), cmp_double);
		med = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
	}
	free(sorted);
	json_key_num(w, "step_ms_median", med > 0 ? 1e3 * med : NAN); /* NaN is written as null */
	json_key_num(w, "samples_per_s", med > 0 ? (double)spec->batch / med : NAN);
	json_key(w, "repeat_identical");
	if (b && !error)
		json_bool(w, identical);
	else
		json_null(w);
	json_key_str(w, "error", error);
	/* extra members: what the run was and what it cost */
	json_key_int(w, "params", a->params);
	json_key_num(w, "first_step_ms", a->done ? 1e3 * a->step_s[0] : 0);
	json_key_num(w, "seconds", seconds);
	if (skipped)
		json_key_str(w, "skipped", skipped);
	if (!strcmp(spec->model.name, "transformer")) {
		json_key_int(w, "seq_len", spec->model.seq_len);
		json_key_int(w, "dim", spec->model.dim);
		json_key_int(w, "heads", spec->model.heads);
		json_key_int(w, "layers", spec->model.layers);
	}
	if (b && !error && !identical) {
		int64_t s = 0;
		while (s < a->done && s < b->done && a->losses[s] == b->losses[s])
			s++;
		json_key_int(w, "repeat_first_difference_step", s + 1);
	}
	json_end_object(w);
}

/* The runs of a mode, as report.json's workload lists them: what --merge requires to be equal. */
void compare_train_workload(int quick, json_writer *w)
{
	const run_spec *runs = quick ? quick_runs : full_runs;
	int nruns = (int)(quick ? sizeof(quick_runs) / sizeof(quick_runs[0]) : sizeof(full_runs) / sizeof(full_runs[0]));

	json_key_int(w, "train_seed", TRAIN_SEED);
	json_key(w, "train");
	json_begin_array(w);
	for (int k = 0; k < nruns; k++) {
		const run_spec *spec = &runs[k];
		json_begin_object(w);
		json_key_str(w, "model", spec->model.name);
		json_key_int(w, "steps", spec->steps);
		json_key_int(w, "batch", spec->batch);
		if (clg_model_is_lm(&spec->model)) {
			json_key_int(w, "seq_len", spec->model.seq_len);
			json_key_int(w, "dim", spec->model.dim);
			json_key_int(w, "heads", spec->model.heads);
			json_key_int(w, "layers", spec->model.layers);
		}
		json_end_object(w);
	}
	json_end_array(w);
}

int compare_train(clg_backend *ref, clg_backend *dev, const compare_opts *o, json_writer *w)
{
	int tiny = o->tiny; /* the worker sets it for a simulator */
	int quick = o->quick || tiny;
	const run_spec *runs = quick ? quick_runs : full_runs;
	int nruns = (int)(quick ? sizeof(quick_runs) / sizeof(quick_runs[0]) : sizeof(full_runs) / sizeof(full_runs[0]));
	const char *dir = o->data_dir && *o->data_dir ? o->data_dir : DEFAULT_IMAGES;
	train_data d;

	(void)ref; /* the driver compares with the reference device's own section */
	memset(&d, 0, sizeof(d));
	json_key_str(w, "mode", tiny ? "tiny" : quick ? "quick" : "full");
	if (tiny)
		json_key_str(w, "note", "a simulator: only the first steps of the quick transformer run (same seed and "
					"batches, so they compare with the reference device's quick run); mlp and cnn "
					"skipped (one step would take minutes)");
	json_key_str(w, "data_dir", dir);
	json_key(w, "runs");
	json_begin_array(w);
	for (int k = 0; k < nruns; k++) {
		const run_spec *spec = &runs[k];
		int lm = clg_model_is_lm(&spec->model);
		run_result res[2];
		run_spec s = *spec;
		const clg_dataset *ds;
		const char *data_error;
		double t0 = clg_now();

		memset(res, 0, sizeof(res));
		if (tiny)
			s.steps = spec->sim_steps;
		if (s.steps == 0) {
			write_run(w, &s, &res[0], NULL, 0, "a simulator: one step would take minutes");
			continue;
		}
		if (lm && !d.have_text && !d.text_error[0])
			load_text(&d, spec->model.seq_len);
		if (!lm && !d.have_images && !d.images_error[0])
			load_images(&d, dir);
		ds = lm ? &d.windows : &d.images;
		data_error = lm ? (d.have_text ? NULL : d.text_error) : (d.have_images ? NULL : d.images_error);
		if (lm)
			s.model.vocab = d.text.vocab_size;
		for (int i = 0; i < 2; i++) {
			res[i].losses = calloc((size_t)s.steps, sizeof(double));
			res[i].step_s = calloc((size_t)s.steps, sizeof(double));
			if (!res[i].losses || !res[i].step_s)
				snprintf(res[i].error, sizeof(res[i].error), "out of host memory");
			else if (data_error)
				snprintf(res[i].error, sizeof(res[i].error), "%s", data_error);
			else
				train_run(dev, &s, ds, &res[i]);
		}
		write_run(w, &s, &res[0], &res[1], clg_now() - t0, NULL);
		for (int i = 0; i < 2; i++) {
			free(res[i].losses);
			free(res[i].step_s);
		}
	}
	json_end_array(w);
	clg_dataset_free(&d.images);
	clg_dataset_free(&d.windows);
	clg_text_free(&d.text);
	return 0;
}
