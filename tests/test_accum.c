/* Gradient accumulation (clg_train_config.accum_steps, train --accum-steps) on the reference and
 * every device: an epoch of 40 samples in micro-batches of 8, three a step (steps of 24 and 16
 * rows), leaves the model where batches of 24 leave it (SGD, so that a wrong weighting of the
 * micro-batches shows: Adam would hide a constant factor), within float tolerance; the same for the
 * transformer (two micro-batches of 4 against batches of 8, 20 windows). The steps and the samples
 * counted are the large batch's. */
#include "test_util.h"

#include <clgrad_train.h>
#include <math.h>
#include <string.h>

#define N 40
#define NFEAT 12

typedef struct {
	int64_t steps, samples;
} count;

static clg_module *build_mlp(clg_backend *be, uint64_t seed, void *user)
{
	clg_module *m[] = {clg_nn_linear(be, NFEAT, 32, 1, CLG_INIT_DEFAULT, seed), clg_nn_relu(),
			   clg_nn_linear(be, 32, 10, 1, CLG_INIT_DEFAULT, seed + 1)};
	(void)user;
	return clg_nn_sequential(m, 3);
}

static void on_step(void *u, const clg_step_info *i)
{
	count *c = u;
	c->steps = i->step;
	c->samples = i->samples;
}

/* Trains one epoch (run 0: none); returns the parameters (malloc'd, *n floats). */
static float *train(clg_backend *be, const clg_dataset *ds, int lm, int64_t batch, int64_t accum, int run, int64_t *n,
		    count *c)
{
	clg_train_config cfg = clg_train_config_default();
	clg_train_callbacks cb = {.user = c, .step_end = on_step};
	clg_trainer *t = NULL;
	clg_named_tensors p = {0};
	float *out = NULL;
	int64_t at = 0;

	cfg.optim = clg_opt_config_default(CLG_OPT_SGD);
	cfg.optim.lr = 0.5;
	cfg.epochs = 1;
	cfg.batch = batch;
	cfg.accum_steps = accum;
	if (lm)
		cfg.model = (clg_model_config){.name = "transformer", .vocab = 8, .seq_len = 16, .dim = 32, .heads = 2, .layers = 2};
	else
		cfg.build = build_mlp;
	*n = 0;
	memset(c, 0, sizeof(*c));
	CHECK_OK(clg_trainer_new(be, &cfg, ds, NULL, &t));
	if (!t)
		return NULL;
	if (run)
		CHECK_OK(clg_trainer_run(t, &cb));
	CHECK_OK(clg_module_state(clg_trainer_model(t), 0, &p));
	for (int i = 0; i < p.n; i++)
		*n += clg_numel(p.tensors[i]);
	out = calloc((size_t)*n, sizeof(float));
	for (int i = 0; out && i < p.n; i++) {
		CHECK_OK(clg_to_host(p.tensors[i], out + at, sizeof(float) * (size_t)clg_numel(p.tensors[i])));
		at += clg_numel(p.tensors[i]);
	}
	clg_named_tensors_free(&p);
	clg_trainer_free(t);
	return out;
}

static void compare(clg_backend *be, const clg_dataset *ds, int lm, int64_t micro, int64_t accum)
{
	int64_t na = 0, nb = 0;
	count ca, cb;
	float *a = train(be, ds, lm, micro * accum, 1, 1, &na, &ca);
	float *b = train(be, ds, lm, micro, accum, 1, &nb, &cb);
	float *init = NULL;
	double diff = 0, moved = 0, top = 0;
	int64_t ni = 0;
	count c0;

	/* how far a step moves the parameters: the tolerance is against that, not against their size */
	init = train(be, ds, lm, micro, accum, 0, &ni, &c0);
	CHECK(a && b && init && na == nb && na == ni && na > 0, "%s: parameters %lld and %lld", be->info.name,
	      (long long)na, (long long)nb);
	for (int64_t k = 0; a && b && init && k < na && na == nb && na == ni; k++) {
		diff = fmax(diff, fabs((double)a[k] - b[k]));
		moved = fmax(moved, fabs((double)a[k] - init[k]));
		top = fmax(top, fabs(a[k]));
	}
	CHECK(ca.steps == cb.steps && ca.samples == cb.samples && ca.samples == ds->n,
	      "%s: %lld steps of %lld samples, accumulated %lld of %lld", be->info.name, (long long)ca.steps,
	      (long long)ca.samples, (long long)cb.steps, (long long)cb.samples);
	CHECK(moved > 1e-3, "%s: the parameters hardly moved (%.3g)", be->info.name, moved);
	CHECK(diff <= 1e-5 * fmax(top, 1.0), "%s %s: %lld x %lld accumulated ends %.3g from batch %lld (the steps moved %.3g)",
	      be->info.name, lm ? "transformer" : "mlp", (long long)accum, (long long)micro, diff,
	      (long long)(micro * accum), moved);
	printf("%s: %s, %lld micro-batches of %lld against batch %lld: %lld steps, largest difference %.2g (steps moved "
	       "up to %.2g)\n", be->info.name, lm ? "transformer" : "mlp", (long long)accum, (long long)micro,
	       (long long)(micro * accum), (long long)cb.steps, diff, moved);
	free(a);
	free(b);
	free(init);
}

int main(void)
{
	clg_dataset ds, lm;
	int64_t shape[1] = {NFEAT}, lshape[1] = {16};

	CHECK_OK(clg_dataset_init(&ds, N, 1, shape, CLG_F32, 1));
	ds.num_classes = 10;
	t_fill_uniform(ds.x, (size_t)(N * NFEAT), 3, -1, 1);
	for (int64_t i = 0; i < ds.n; i++)
		ds.y[i] = (int32_t)(i % 10);
	/* 20 windows of 16 tokens (steps of 8, 8 and 4), targets the next token of a pattern */
	CHECK_OK(clg_dataset_init(&lm, 20, 1, lshape, CLG_I32, 16));
	lm.num_classes = 8;
	for (int64_t i = 0; i < 20 * 16; i++) {
		lm.xi[i] = (int32_t)((i * 3 + i / 7) % 8);
		lm.y[i] = (int32_t)((i * 3 + 3 + (i + 1) / 7) % 8);
	}
	for (int d = 0; d <= t_opencl_count(); d++) {
		clg_backend *be;
		if (clg_backend_open(d, &be)) {
			CHECK(0, "device %d: %s", d, clg_last_error());
			continue;
		}
		compare(be, &ds, 0, 8, 3);
		compare(be, &lm, 1, 4, 2);
		clg_backend_close(be);
	}
	clg_dataset_free(&ds);
	clg_dataset_free(&lm);
	return t_finish("test_accum");
}
