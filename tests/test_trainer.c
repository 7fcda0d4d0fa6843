/* The library's trainer (clgrad_train.h): callbacks, max_steps and stop_after, a checkpoint
 * resumed to the same parameters as an uninterrupted run, the reference and every device giving
 * the same curve, and bad configurations refused before any work. A small synthetic problem: 8
 * features, 3 classes, a linear-ReLU-linear model of the test's own. Tasks: regression (float
 * targets, RMSE), reconstruction (PSNR, MSE; also in data parallel), a task of one's own
 * (transform, loss, metric), clg_evaluate against clg_trainer_evaluate, datasets a task refuses. */
#include "test_util.h"

#include <clgrad_train.h>
#include <math.h>
#include <string.h>

#define NFEAT 8
#define NCLASS 3

static clg_module *build_small(clg_backend *be, uint64_t seed, void *user)
{
	clg_module *m[] = {clg_nn_linear(be, NFEAT, 16, 1, CLG_INIT_DEFAULT, seed), clg_nn_relu(),
			   clg_nn_linear(be, 16, NCLASS, 1, CLG_INIT_DEFAULT, seed + 1)};
	(void)user;
	return clg_nn_sequential(m, 3);
}

/* n samples whose class is the argmax of three fixed projections of the features */
static void make_data(clg_dataset *ds, int64_t n, unsigned seed)
{
	int64_t shape[1] = {NFEAT};
	CHECK_OK(clg_dataset_init(ds, n, 1, shape, CLG_F32, 1));
	ds->num_classes = NCLASS;
	t_fill_uniform(ds->x, (size_t)(n * NFEAT), seed, -1, 1);
	for (int64_t i = 0; i < n; i++) {
		const float *x = ds->x + i * NFEAT;
		float s[NCLASS] = {x[0] + x[1], x[2] - x[3], x[4] * 0.5f - x[5]};
		ds->y[i] = s[0] > s[1] ? (s[0] > s[2] ? 0 : 2) : (s[1] > s[2] ? 1 : 2);
	}
}

typedef struct {
	int begins, steps, ends, losses_read;
	double last_epoch_loss, first_test_loss, last_test_loss;
	int stop_at_end; /* epoch_end fails at this epoch (0: never) */
} counts;

static void c_begin(void *u, int64_t e, int64_t n, int64_t s) { (void)e, (void)n, (void)s, ((counts *)u)->begins++; }
static int c_due(void *u, int64_t step) { return (void)u, step % 2 == 0; }
static void c_step(void *u, const clg_step_info *s)
{
	counts *c = u;
	c->steps++;
	c->losses_read += !isnan(s->loss);
	CHECK(isnan(s->loss) == (s->step % 2 != 0), "loss read at step %lld only when asked", (long long)s->step);
	CHECK(isnan(s->step_loss) == isnan(s->loss), "step loss read with the running loss");
}
static clg_status c_end(void *u, const clg_epoch_info *e)
{
	counts *c = u;
	c->ends++;
	c->last_epoch_loss = e->train_loss;
	if (c->ends == 1)
		c->first_test_loss = e->test_loss;
	c->last_test_loss = e->test_loss;
	CHECK(e->first == (c->ends == 1), "first flag on the run's first epoch only");
	CHECK(e->first_step_done >= e->first_step_begun && e->first_step_begun > 0, "first step timed");
	if (c->stop_at_end && c->ends == c->stop_at_end)
		return clg_fail(CLG_ERR_STATE, "test: stop requested");
	return CLG_OK;
}

/* step_begin: fails before step stop_step of the second epoch (an interrupt between two steps) */
static clg_status c_step_begin(void *u, int64_t step)
{
	counts *c = u;
	if (c->ends == 1 && step == c->stop_at_end)
		return clg_fail(CLG_ERR_STATE, "test: interrupted");
	return CLG_OK;
}

static clg_train_config small_config(void)
{
	clg_train_config c = clg_train_config_default();
	c.model.name = "small";
	c.build = build_small;
	c.batch = 32;
	c.epochs = 4;
	c.optim.lr = 1e-2;
	c.schedule = CLG_LR_COSINE;
	c.seed = 7;
	return c;
}

/* final parameters of a trainer, copied to the host */
static float *params_of(clg_trainer *t, int64_t *n)
{
	clg_named_tensors l = {0};
	float *out = NULL;
	int64_t total = 0, at = 0;
	CHECK_OK(clg_module_state(clg_trainer_model(t), 0, &l));
	for (int i = 0; i < l.n; i++)
		total += clg_numel(l.tensors[i]);
	out = malloc(sizeof(float) * (size_t)total);
	for (int i = 0; out && i < l.n; i++) {
		CHECK_OK(clg_to_host(l.tensors[i], out + at, sizeof(float) * (size_t)clg_numel(l.tensors[i])));
		at += clg_numel(l.tensors[i]);
	}
	clg_named_tensors_free(&l);
	*n = total;
	return out;
}

static void test_device(int dev, const clg_dataset *train, const clg_dataset *test, const char *tmp,
			double *curve_out)
{
	clg_backend *be;
	clg_trainer *t = NULL, *r = NULL;
	clg_train_config cfg = small_config();
	counts c = {0};
	clg_train_callbacks cb = {.user = &c, .epoch_begin = c_begin, .loss_due = c_due, .step_end = c_step, .epoch_end = c_end};
	char path[512];
	int64_t n1, n2;

	CHECK_OK(clg_backend_open(dev, &be));
	printf("device %d: %s\n", dev, be->info.name);
	/* the whole run: loss falls, every callback as often as it should be */
	CHECK_OK(clg_trainer_new(be, &cfg, train, test, &t));
	CHECK(clg_trainer_steps_per_epoch(t) == 8, "256 samples in batches of 32: %lld steps", (long long)clg_trainer_steps_per_epoch(t));
	CHECK_OK(clg_trainer_run(t, &cb));
	CHECK(c.begins == 4 && c.ends == 4 && c.steps == 32, "4 epochs of 8 steps: %d begins, %d steps, %d ends", c.begins, c.steps, c.ends);
	CHECK(c.losses_read == 16, "loss read on even steps only: %d", c.losses_read);
	CHECK(c.last_test_loss < c.first_test_loss, "test loss falls: %g -> %g", c.first_test_loss, c.last_test_loss);
	CHECK(clg_trainer_epochs_done(t) == 4, "4 epochs done");
	curve_out[0] = c.first_test_loss;
	curve_out[1] = c.last_test_loss;

	/* interrupted after 2 epochs with a checkpoint, resumed in a new trainer: the same parameters */
	snprintf(path, sizeof(path), "%s/small.safetensors", tmp);
	cfg.save = path;
	cfg.stop_after = 2;
	CHECK_OK(clg_trainer_new(be, &cfg, train, test, &r));
	CHECK_OK(clg_trainer_run(r, NULL));
	CHECK(clg_trainer_epochs_done(r) == 2, "stop_after 2: %lld epochs", (long long)clg_trainer_epochs_done(r));
	clg_trainer_free(r);
	cfg.save = NULL;
	cfg.stop_after = 0;
	CHECK_OK(clg_trainer_new(be, &cfg, train, test, &r));
	CHECK_OK(clg_trainer_load(r, path));
	CHECK(clg_trainer_epochs_done(r) == 2, "the checkpoint says 2 epochs");
	CHECK_OK(clg_trainer_run(r, NULL));
	{
		float *a = params_of(t, &n1), *b = params_of(r, &n2);
		double worst = 0;
		for (int64_t i = 0; a && b && n1 == n2 && i < n1; i++)
			worst = fmax(worst, fabs((double)a[i] - b[i]));
		CHECK(a && b && n1 == n2 && worst <= 1e-6, "resumed run's parameters differ by %g", worst);
		free(a);
		free(b);
	}
	clg_trainer_free(r);

	/* max_steps ends mid-epoch: that epoch is neither counted nor reported */
	c = (counts){0};
	cfg.max_steps = 5;
	CHECK_OK(clg_trainer_new(be, &cfg, train, test, &r));
	CHECK_OK(clg_trainer_run(r, &cb));
	CHECK(c.steps == 5 && c.ends == 0 && clg_trainer_epochs_done(r) == 0, "max_steps 5: %d steps, %d ends", c.steps, c.ends);
	clg_trainer_free(r);
	cfg.max_steps = 0;

	/* a callback's error stops the run with its status */
	c = (counts){.stop_at_end = 1};
	CHECK_OK(clg_trainer_new(be, &cfg, train, test, &r));
	CHECK(clg_trainer_run(r, &cb) == CLG_ERR_STATE && c.ends == 1, "epoch_end's error stops the run");
	CHECK(strstr(clg_last_error(), "stop requested") != NULL, "its message kept: %s", clg_last_error());
	clg_trainer_free(r);

	/* step_begin's error stops the run between two steps: the epoch cut short is not counted, its
	 * checkpoint not written */
	c = (counts){.stop_at_end = 3};
	cb.step_begin = c_step_begin;
	snprintf(path, sizeof(path), "%s/stopped.safetensors", tmp);
	cfg.save = path;
	CHECK_OK(clg_trainer_new(be, &cfg, train, test, &r));
	CHECK(clg_trainer_run(r, &cb) == CLG_ERR_STATE && c.ends == 1 && c.steps == 8 + 2,
	      "step_begin's error stops the run before step 3 of epoch 2 (%d ends, %d steps)", c.ends, c.steps);
	CHECK(strstr(clg_last_error(), "interrupted") != NULL, "its message kept: %s", clg_last_error());
	CHECK(clg_trainer_epochs_done(r) == 1, "1 epoch done, not %lld", (long long)clg_trainer_epochs_done(r));
	clg_trainer_free(r);
	{
		clg_ckpt_meta meta;
		CHECK_OK(clg_ckpt_read_meta(path, &meta));
		CHECK(meta.epochs_done == 1, "the checkpoint is epoch 1's (%lld)", (long long)meta.epochs_done);
	}
	cb.step_begin = NULL;
	cfg.save = NULL;

	/* a checkpoint folder that does not exist: refused before the first step */
	c = (counts){0};
	cfg.save = "/nonexistent-clgrad-dir/x.safetensors";
	CHECK_OK(clg_trainer_new(be, &cfg, train, test, &r));
	CHECK(clg_trainer_run(r, &cb) == CLG_ERR_IO && c.steps == 0, "unwritable save refused up front (%d steps)", c.steps);
	CHECK(strstr(clg_last_error(), "/nonexistent-clgrad-dir") != NULL, "message names the folder: %s", clg_last_error());
	clg_trainer_free(r);
	/* loading a checkpoint of another model is refused */
	cfg = clg_train_config_default();
	cfg.build = build_small;
	cfg.model.name = "other";
	CHECK_OK(clg_trainer_new(be, &cfg, train, test, &r));
	CHECK(clg_trainer_load(r, path) == CLG_ERR_INVALID, "a checkpoint of model 'small' into 'other' is refused");
	clg_trainer_free(r);

	clg_trainer_free(t);
	clg_backend_close(be);
}

/* ---- tasks other than classification ---- */

/* n samples of NFEAT features with two float targets: fixed linear functions of them */
static void make_regression(clg_dataset *ds, int64_t n, unsigned seed)
{
	int64_t shape[1] = {NFEAT};
	CHECK_OK(clg_dataset_init_ex(ds, n, 1, shape, CLG_F32, 2, CLG_F32));
	t_fill_uniform(ds->x, (size_t)(n * NFEAT), seed, -1, 1);
	for (int64_t i = 0; i < n; i++) {
		const float *x = ds->x + i * NFEAT;
		ds->yf[2 * i] = x[0] - 0.5f * x[3] + 0.25f;
		ds->yf[2 * i + 1] = x[1] + x[2] - x[7];
	}
}

static clg_module *build_regressor(clg_backend *be, uint64_t seed, void *user)
{
	clg_module *m[] = {clg_nn_linear(be, NFEAT, 16, 1, CLG_INIT_DEFAULT, seed), clg_nn_tanh(),
			   clg_nn_linear(be, 16, 2, 1, CLG_INIT_DEFAULT, seed + 1)};
	(void)user;
	return clg_nn_sequential(m, 3);
}

/* an autoencoder through a bottleneck of 4 */
static clg_module *build_autoencoder(clg_backend *be, uint64_t seed, void *user)
{
	clg_module *m[] = {clg_nn_linear(be, NFEAT, 4, 1, CLG_INIT_DEFAULT, seed), clg_nn_tanh(),
			   clg_nn_linear(be, 4, NFEAT, 1, CLG_INIT_DEFAULT, seed + 1)};
	(void)user;
	return clg_nn_sequential(m, 3);
}

typedef struct {
	int epochs;
	double test_loss[8], bytes, sps[2];
	int identical[8];
	int64_t shares[2];
} dp_log;

static clg_status dp_end(void *u, const clg_epoch_info *e)
{
	dp_log *l = u;
	l->test_loss[l->epochs] = e->test_loss;
	l->identical[l->epochs++] = e->replicas_identical;
	l->bytes = e->exchange_bytes;
	l->shares[0] = e->shares[0], l->shares[1] = e->shares[1];
	l->sps[0] = e->samples_per_s[0], l->sps[1] = e->samples_per_s[1];
	return CLG_OK;
}

/* Data parallel over two devices: the same curve as one device with the same global batch, replicas
 * identical every epoch; balanced shares add up to the batch; int8 compression sends about a
 * quarter of the bytes and still learns. */
static void test_data_parallel(int d0, int d1, const clg_dataset *train, const clg_dataset *test)
{
	clg_backend *bes[2];
	clg_trainer *t;
	clg_train_config cfg = small_config();
	dp_log one = {0}, two = {0}, bal = {0}, q8 = {0};
	clg_train_callbacks cb = {.epoch_end = dp_end};

	CHECK_OK(clg_backend_open(d0, &bes[0]));
	CHECK_OK(clg_backend_open(d1, &bes[1]));
	printf("data parallel over %s + %s\n", bes[0]->info.name, bes[1]->info.name);
	cb.user = &one;
	CHECK_OK(clg_trainer_new(bes[0], &cfg, train, test, &t));
	CHECK_OK(clg_trainer_run(t, &cb));
	clg_trainer_free(t);

	cfg.fixed_shares = 1;
	cb.user = &two;
	CHECK_OK(clg_trainer_new_multi(bes, 2, &cfg, train, test, &t));
	CHECK_OK(clg_trainer_run(t, &cb));
	clg_trainer_free(t);
	for (int e = 0; e < 4; e++) {
		CHECK(fabs(two.test_loss[e] - one.test_loss[e]) <= 1e-4 * fabs(one.test_loss[e]),
		      "epoch %d: two devices %.8f vs one %.8f", e + 1, two.test_loss[e], one.test_loss[e]);
		CHECK(two.identical[e], "epoch %d: replicas identical", e + 1);
	}
	CHECK(two.shares[0] == 16 && two.shares[1] == 16, "fixed shares 16 + 16: %lld + %lld", (long long)two.shares[0], (long long)two.shares[1]);

	cfg.fixed_shares = 0;
	cb.user = &bal;
	CHECK_OK(clg_trainer_new_multi(bes, 2, &cfg, train, test, &t));
	CHECK_OK(clg_trainer_run(t, &cb));
	clg_trainer_free(t);
	CHECK(bal.shares[0] + bal.shares[1] == 32 && bal.shares[0] >= 1 && bal.shares[1] >= 1 && bal.sps[0] > 0 && bal.sps[1] > 0,
	      "balanced shares %lld + %lld (%.0f, %.0f samples/s)", (long long)bal.shares[0], (long long)bal.shares[1], bal.sps[0], bal.sps[1]);
	CHECK(fabs(bal.test_loss[3] - one.test_loss[3]) <= 1e-4 * fabs(one.test_loss[3]), "balanced: %.8f vs %.8f", bal.test_loss[3], one.test_loss[3]);
	printf("balanced shares %lld + %lld (%.0f and %.0f samples/s)\n", (long long)bal.shares[0], (long long)bal.shares[1], bal.sps[0], bal.sps[1]);

	{ /* loss scaling in data parallel: the scaled sum is unscaled once, at the root */
		dp_log ls = {0};
		cfg.fixed_shares = 1;
		cfg.loss_scale = 4096;
		cb.user = &ls;
		CHECK_OK(clg_trainer_new_multi(bes, 2, &cfg, train, test, &t));
		CHECK_OK(clg_trainer_run(t, &cb));
		clg_trainer_free(t);
		CHECK(fabs(ls.test_loss[3] - two.test_loss[3]) <= 1e-6 * fabs(two.test_loss[3]), "loss-scaled data parallel %.9f vs %.9f",
		      ls.test_loss[3], two.test_loss[3]);
		cfg.loss_scale = 0;
		cfg.fixed_shares = 0;
	}
	{ /* another task in data parallel: each replica transforms and scores its own rows */
		dp_log r1 = {0}, r2 = {0};
		clg_dataset rtrain, rtest;
		clg_train_config rc = small_config();
		make_regression(&rtrain, 256, 3);
		make_regression(&rtest, 128, 4);
		rc.task = clg_task_reconstruction_mse();
		rc.build = build_autoencoder;
		cb.user = &r1;
		CHECK_OK(clg_trainer_new(bes[0], &rc, &rtrain, &rtest, &t));
		CHECK_OK(clg_trainer_run(t, &cb));
		clg_trainer_free(t);
		rc.fixed_shares = 1;
		cb.user = &r2;
		CHECK_OK(clg_trainer_new_multi(bes, 2, &rc, &rtrain, &rtest, &t));
		CHECK_OK(clg_trainer_run(t, &cb));
		clg_trainer_free(t);
		CHECK(r2.test_loss[3] < r2.test_loss[0] && fabs(r2.test_loss[3] - r1.test_loss[3]) <= 1e-4 * r1.test_loss[3],
		      "reconstruction in data parallel: %.8f vs one device %.8f", r2.test_loss[3], r1.test_loss[3]);
		clg_dataset_free(&rtrain);
		clg_dataset_free(&rtest);
	}
	cfg.compress = CLG_COMPRESS_INT8;
	cb.user = &q8;
	CHECK_OK(clg_trainer_new_multi(bes, 2, &cfg, train, test, &t));
	CHECK_OK(clg_trainer_run(t, &cb));
	clg_trainer_free(t);
	CHECK(q8.bytes < 0.3 * two.bytes, "int8 sends %g bytes a step against %g", q8.bytes, two.bytes);
	CHECK(q8.test_loss[3] < q8.test_loss[0] && fabs(q8.test_loss[3] - one.test_loss[3]) < 0.05 * one.test_loss[3],
	      "int8 learns: %.5f (uncompressed %.5f)", q8.test_loss[3], one.test_loss[3]);
	CHECK(q8.identical[3], "int8: replicas identical");
	printf("bytes per step: float32 %.0f, int8 %.0f (%.2fx less); final test loss %.5f, int8 %.5f\n", two.bytes, q8.bytes,
	       two.bytes / q8.bytes, one.test_loss[3], q8.test_loss[3]);

	/* the same device twice is refused */
	{
		clg_backend *twice[2] = {bes[0], bes[0]};
		CHECK(clg_trainer_new_multi(twice, 2, &cfg, train, test, &t) == CLG_ERR_INVALID && strstr(clg_last_error(), "twice"),
		      "one device twice refused: %s", clg_last_error());
	}
	clg_backend_close(bes[0]);
	clg_backend_close(bes[1]);
}

/* The loss scaler's rules: unscaling, an overflow skipped with the scale halved, growth after
 * `interval` good steps; and training with a power-of-two loss scale matches training without. */
static void test_grad_scaler(int dev, const clg_dataset *train, const clg_dataset *test)
{
	clg_backend *be;
	clg_grad_scaler s;
	float w0[4] = {1, 2, 3, 4}, x[4] = {0.5f, -1, 2, 0.25f}, big[4] = {1e38f, 1, 1, 1}, g[4];
	int64_t shape[1] = {4};
	int ok = -1;

	CHECK_OK(clg_backend_open(dev, &be));
	clg_grad_scaler_init(&s, 0);
	CHECK(s.scale == 65536 && s.growth == 2 && s.backoff == 0.5 && s.interval == 2000, "GradScaler's defaults");
	s.interval = 3;
	clg_tensor *w = clg_from_host(be, CLG_F32, 1, shape, w0);
	clg_set_requires_grad(w, 1);
	for (int step = 0; step < 3; step++) {
		clg_scope_begin();
		clg_tensor *loss = clg_sum(clg_mul(w, clg_from_host(be, CLG_F32, 1, shape, x)), 0, NULL, 0);
		clg_zero_grad(w);
		CHECK_OK(clg_backward(clg_affine(loss, s.scale, 0)));
		CHECK_OK(clg_grad_scaler_unscale(&s, &w, 1, &ok));
		CHECK_OK(clg_to_host(clg_grad(w), g, sizeof(g)));
		CHECK(ok == 1 && g[0] == 0.5f && g[1] == -1 && g[2] == 2 && g[3] == 0.25f, "step %d: unscaled gradient exact", step);
		clg_scope_end();
	}
	CHECK(s.scale == 131072 && s.good == 0, "grown after 3 good steps: %g", s.scale);
	clg_scope_begin();
	clg_tensor *loss = clg_sum(clg_mul(w, clg_from_host(be, CLG_F32, 1, shape, big)), 0, NULL, 0);
	clg_zero_grad(w);
	CHECK_OK(clg_backward(clg_affine(loss, s.scale, 0))); /* 1e38 * 131072 overflows float */
	CHECK_OK(clg_grad_scaler_unscale(&s, &w, 1, &ok));
	CHECK(ok == 0 && s.scale == 65536 && s.skipped == 1 && s.good == 0, "overflow: skipped, scale halved (%g)", s.scale);
	clg_scope_end();
	clg_free(w);

	/* the trainer with a loss scale of 1024 gives the unscaled run's losses */
	{
		clg_train_config cfg = small_config();
		clg_trainer *t;
		dp_log plain = {0}, scaled = {0};
		clg_train_callbacks cb = {.user = &plain, .epoch_end = dp_end};
		CHECK_OK(clg_trainer_new(be, &cfg, train, test, &t));
		CHECK_OK(clg_trainer_run(t, &cb));
		clg_trainer_free(t);
		cfg.loss_scale = 1024;
		cb.user = &scaled;
		CHECK_OK(clg_trainer_new(be, &cfg, train, test, &t));
		CHECK_OK(clg_trainer_run(t, &cb));
		clg_trainer_free(t);
		for (int e = 0; e < 4; e++)
			CHECK(fabs(scaled.test_loss[e] - plain.test_loss[e]) <= 1e-6 * fabs(plain.test_loss[e]),
			      "epoch %d: loss-scaled %.9f vs %.9f", e + 1, scaled.test_loss[e], plain.test_loss[e]);
	}
	clg_backend_close(be);
}

typedef struct {
	int transforms_train, transforms_eval, losses, metrics;
} task_calls;

/* a task of one's own: the input scaled by 2 (training and evaluation alike), the targets as
 * given, cross-entropy; its "metric" is the fraction of batches seen (1) times 42 */
static clg_status my_transform(void *user, clg_tensor *x, clg_tensor *y, int training, clg_tensor **in, clg_tensor **tg)
{
	task_calls *c = user;
	if (training)
		c->transforms_train++;
	else
		c->transforms_eval++;
	*in = clg_affine(x, 2.0, 0.0);
	*tg = y;
	return *in ? CLG_OK : clg_last_status();
}

static clg_tensor *my_loss(void *user, clg_tensor *out, clg_tensor *target)
{
	((task_calls *)user)->losses++;
	return clg_cross_entropy(out, target, 0.1);
}

static clg_status my_metric(void *user, clg_tensor *out, clg_tensor *target, double *sum, double *count)
{
	(void)out, (void)target;
	((task_calls *)user)->metrics++;
	*sum += 42;
	*count += 1;
	return CLG_OK;
}

static void test_tasks(int dev, const clg_dataset *cls_train, const clg_dataset *cls_test, double out[3])
{
	clg_backend *be;
	clg_trainer *t = NULL;
	clg_dataset rtrain, rtest;
	clg_train_config cfg = small_config();
	counts c = {0};
	clg_train_callbacks cb = {.user = &c, .epoch_end = c_end};
	double metric, loss, m2, l2, peak = 2.0;

	CHECK_OK(clg_backend_open(dev, &be));
	make_regression(&rtrain, 256, 3);
	make_regression(&rtest, 128, 4);
	/* regression: MSE falls, RMSE is the root of the test loss (the mean over both targets) */
	cfg.task = clg_task_regression();
	cfg.build = build_regressor;
	cfg.epochs = 6;
	CHECK_OK(clg_trainer_new(be, &cfg, &rtrain, &rtest, &t));
	CHECK_OK(clg_trainer_run(t, &cb));
	CHECK(c.last_test_loss < 0.5 * c.first_test_loss, "regression on %s: test MSE falls: %g -> %g", be->info.name,
	      c.first_test_loss, c.last_test_loss);
	CHECK_OK(clg_trainer_evaluate(t, &rtest, &metric, &loss));
	CHECK(fabs(metric * metric - loss) < 1e-4 * loss && loss == c.last_test_loss, "rmse^2 %g = mse %g", metric * metric, loss);
	/* clg_evaluate, without the trainer, in other batches: the same numbers */
	CHECK_OK(clg_evaluate(clg_trainer_model(t), be, &rtest, clg_task_regression(), NULL, 50, &m2, &l2));
	CHECK(fabs(m2 - metric) < 1e-5 * metric && fabs(l2 - loss) < 1e-5 * loss, "clg_evaluate: rmse %g vs %g, loss %g vs %g", m2,
	      metric, l2, loss);
	CHECK(clg_evaluate(clg_trainer_model(t), be, cls_test, clg_task_regression(), NULL, 50, &m2, &l2) == CLG_ERR_DTYPE &&
		      strstr(clg_last_error(), "int32 labels are not float targets"),
	      "regression on labels refused: %s", clg_last_error());
	out[0] = loss;
	clg_trainer_free(t);

	/* reconstruction: the input is the target, PSNR from the MSE with the peak given */
	c = (counts){0};
	cfg.task = clg_task_reconstruction();
	cfg.task_user = &peak;
	cfg.build = build_autoencoder;
	CHECK_OK(clg_trainer_new(be, &cfg, &rtrain, &rtest, &t));
	CHECK_OK(clg_trainer_run(t, &cb));
	CHECK(c.last_test_loss < c.first_test_loss, "reconstruction on %s: test MSE falls: %g -> %g", be->info.name,
	      c.first_test_loss, c.last_test_loss);
	CHECK_OK(clg_trainer_evaluate(t, &rtest, &metric, &loss));
	CHECK(fabs(metric - 10 * log10(4.0 / loss)) < 1e-6, "psnr %g of mse %g, peak 2", metric, loss);
	CHECK_OK(clg_evaluate(clg_trainer_model(t), be, &rtest, clg_task_reconstruction_mse(), NULL, 1000, &m2, &l2));
	CHECK(fabs(m2 - loss) < 1e-6 * loss && fabs(l2 - loss) < 1e-6 * loss, "mse metric %g = loss %g", m2, loss);
	out[1] = loss;
	clg_trainer_free(t);

	/* a task of one's own on the classification data */
	task_calls calls = {0};
	clg_task mine = {.name = "mine", .one_hot = 1, .needs_targets = 1, .transform = my_transform, .loss = my_loss,
			 .metric = my_metric, .metric_name = "answer"};
	c = (counts){0};
	cfg = small_config();
	cfg.task = &mine;
	cfg.task_user = &calls;
	cfg.epochs = 2;
	CHECK_OK(clg_trainer_new(be, &cfg, cls_train, cls_test, &t));
	CHECK(clg_trainer_task(t) == &mine, "the trainer runs the task given");
	CHECK_OK(clg_trainer_run(t, &cb));
	CHECK(calls.transforms_train == 16 && calls.transforms_eval == 2 * 4 && calls.losses == 16 + 8 && calls.metrics == 8,
	      "task calls: %d train transforms, %d eval transforms, %d losses, %d metrics", calls.transforms_train,
	      calls.transforms_eval, calls.losses, calls.metrics);
	CHECK_OK(clg_trainer_evaluate(t, cls_test, &metric, &loss));
	CHECK(metric == 42, "the task's metric: %g", metric);
	CHECK(c.last_test_loss < c.first_test_loss, "own task: loss falls %g -> %g", c.first_test_loss, c.last_test_loss);
	out[2] = loss;
	clg_trainer_free(t);

	/* datasets a task cannot use are refused up front */
	cfg = small_config();
	CHECK(clg_trainer_new(be, &cfg, &rtrain, NULL, &t) == CLG_ERR_INVALID &&
		      strstr(clg_last_error(), "task 'classification' needs class labels, and the dataset has float targets"),
	      "classification of float targets refused: %s", clg_last_error());
	mine.loss = NULL;
	cfg.task = &mine;
	CHECK(clg_trainer_new(be, &cfg, cls_train, NULL, &t) == CLG_ERR_INVALID && strstr(clg_last_error(), "no loss"),
	      "a task without a loss refused: %s", clg_last_error());
	CHECK(clg_task_by_name("regression") == clg_task_regression() && !clg_task_by_name("nope"), "tasks by name");
	clg_dataset_free(&rtrain);
	clg_dataset_free(&rtest);
	clg_backend_close(be);
}

static void test_bad_configs(const clg_dataset *train)
{
	clg_backend *be;
	clg_trainer *t = (clg_trainer *)1;
	clg_train_config bad[5];
	for (int i = 0; i < 5; i++)
		bad[i] = small_config();
	bad[0].batch = 0;
	bad[1].epochs = 0;
	bad[2].optim.lr = NAN;
	bad[3].clip = -1;
	bad[4].warmup = -3;
	CHECK_OK(clg_backend_open(0, &be));
	for (int i = 0; i < 5; i++) {
		CHECK(clg_trainer_new(be, &bad[i], train, NULL, &t) == CLG_ERR_INVALID && t == NULL, "bad config %d refused", i);
		CHECK(strstr(clg_last_error(), "trainer: bad configuration") != NULL, "message: %s", clg_last_error());
	}
	bad[0] = clg_train_config_default();
	bad[0].model.name = "no-such-model";
	CHECK(clg_trainer_new(be, &bad[0], train, NULL, &t) != CLG_OK && strstr(clg_last_error(), "no-such-model"),
	      "unknown model named: %s", clg_last_error());
	/* clg_model_build's NULL for an unknown name sets clg_last_status(), over an earlier failure's */
	clg_scope_begin();
	CHECK(clg_add(clg_zeros(be, CLG_F32, 1, (int64_t[]){2}), clg_zeros(be, CLG_I32, 1, (int64_t[]){2})) == NULL &&
		      clg_last_status() == CLG_ERR_DTYPE,
	      "a dtype error first: %s", clg_status_name(clg_last_status()));
	clg_scope_end();
	CHECK(clg_model_build(be, &bad[0].model, 1) == NULL && clg_last_status() == CLG_ERR_INVALID,
	      "unknown model: last status %s, expected CLG_ERR_INVALID", clg_status_name(clg_last_status()));
	clg_backend_close(be);
}

int main(void)
{
	clg_dataset train, test;
	double ref[2], dev[2];
	char *tmp = t_tmpdir();
	clg_opt_kind k;
	clg_lr_kind l;

	make_data(&train, 256, 1);
	make_data(&test, 128, 2);
	CHECK(!clg_opt_kind_parse("adamw", &k) && k == CLG_OPT_ADAMW && clg_opt_kind_parse("Adam", &k) == -1, "optimizer names");
	CHECK(!clg_lr_kind_parse("cosine", &l) && l == CLG_LR_COSINE && !strcmp(clg_lr_kind_name(CLG_LR_STEP), "step"), "schedule names");
	test_bad_configs(&train);
	test_device(0, &train, &test, tmp, ref);
	for (int d = 1; d <= t_opencl_count(); d++) {
		test_device(d, &train, &test, tmp, dev);
		for (int i = 0; i < 2; i++)
			CHECK(fabs(dev[i] - ref[i]) <= 1e-4 * fabs(ref[i]), "device %d test loss %g vs reference %g", d, dev[i], ref[i]);
	}
	{
		double tref[3], tdev[3];
		test_tasks(0, &train, &test, tref);
		for (int d = 1; d <= t_opencl_count(); d++) {
			test_tasks(d, &train, &test, tdev);
			for (int i = 0; i < 3; i++)
				CHECK(fabs(tdev[i] - tref[i]) <= 1e-4 * fabs(tref[i]), "device %d task %d: test loss %g vs reference %g", d,
				      i, tdev[i], tref[i]);
		}
	}
	test_grad_scaler(t_opencl_count() >= 1 ? 1 : 0, &train, &test);
	/* data parallel: the first two OpenCL devices if there are two, else the reference and one */
	if (t_opencl_count() >= 1)
		test_data_parallel(t_opencl_count() >= 2 ? 1 : 0, t_opencl_count() >= 2 ? 2 : 1, &train, &test);
	t_rmtree(tmp);
	free(tmp);
	clg_dataset_free(&train);
	clg_dataset_free(&test);
	return t_finish("test_trainer");
}
