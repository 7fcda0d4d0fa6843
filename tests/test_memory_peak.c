/* Peak device memory (the allocator's high-water mark, clg_backend_reset_peak) on the reference and
 * every device:
 *   - the mark: the most bytes in use at once since the last reset; a reset restarts it at the
 *     bytes in use now, not at zero;
 *   - the trainer's per-step peak (clg_epoch_info.peak_bytes, reset as each step begins): above 0,
 *     at least the parameters' bytes, at least what lives between steps; in float32 and mixed;
 *   - a model whose activations dominate (an MLP at batch 1024, 128 wide: activations 1024 x 128,
 *     weights 128 x 128; a small CNN at batch 64) needs less memory a step in mixed precision
 *     (16-bit activations, and the conv's 16-bit columns) than in float32. */
#include "test_util.h"

#include <clgrad_train.h>
#include <string.h>

#define NFEAT 16
#define NHID 128
#define NCLASS 4
#define NBATCH 1024

static void test_mark(clg_backend *be)
{
	clg_buffer *a = NULL, *b = NULL, *c = NULL;
	clg_stats s0, s;

	clg_backend_stats(be, &s0);
	CHECK_OK(clg_buffer_alloc(be, 1 << 20, &a));
	CHECK_OK(clg_buffer_alloc(be, 1 << 18, &b));
	clg_buffer_free(b);
	clg_backend_stats(be, &s);
	CHECK(s.bytes_peak >= s0.bytes_in_use + (1 << 20) + (1 << 18), "%s: peak %llu after 1 MiB + 256 KiB (in use before %llu)",
	      be->info.name, (unsigned long long)s.bytes_peak, (unsigned long long)s0.bytes_in_use);
	clg_backend_reset_peak(be);
	clg_backend_stats(be, &s);
	CHECK(s.bytes_peak == s.bytes_in_use, "%s: reset: peak %llu, in use %llu", be->info.name,
	      (unsigned long long)s.bytes_peak, (unsigned long long)s.bytes_in_use);
	CHECK_OK(clg_buffer_alloc(be, 1 << 16, &c));
	clg_backend_stats(be, &s);
	CHECK(s.bytes_peak == s.bytes_in_use && s.bytes_peak < s0.bytes_in_use + (1 << 20) + (1 << 18),
	      "%s: after the reset the mark follows the new allocation (%llu)", be->info.name,
	      (unsigned long long)s.bytes_peak);
	clg_buffer_free(c);
	clg_buffer_free(a);
}

static clg_module *build_wide(clg_backend *be, uint64_t seed, void *user)
{
	clg_module *m[] = {clg_nn_linear(be, NFEAT, NHID, 1, CLG_INIT_DEFAULT, seed), clg_nn_relu(),
			   clg_nn_linear(be, NHID, NHID, 1, CLG_INIT_DEFAULT, seed + 1), clg_nn_relu(),
			   clg_nn_linear(be, NHID, NHID, 1, CLG_INIT_DEFAULT, seed + 2), clg_nn_relu(),
			   clg_nn_linear(be, NHID, NCLASS, 1, CLG_INIT_DEFAULT, seed + 3)};
	(void)user;
	return clg_nn_sequential(m, 7);
}

/* a CNN on 1x16x16 images: conv 3x3 (16 channels), relu, 2x2 max pool, linear (activations of
 * 64 x 16 x 16 x 16 values against 2.6 k parameters) */
static clg_module *build_conv(clg_backend *be, uint64_t seed, void *user)
{
	clg_module *m[] = {clg_nn_conv2d(be, 1, 16, 3, 1, 1, 1, 1, CLG_INIT_DEFAULT, seed), clg_nn_relu(),
			   clg_nn_max_pool2d(2, 2, 0), clg_nn_flatten(),
			   clg_nn_linear(be, 16 * 8 * 8, NCLASS, 1, CLG_INIT_DEFAULT, seed + 1)};
	(void)user;
	return clg_nn_sequential(m, 5);
}

typedef struct {
	uint64_t peak, live;
	int n;
} mem_log;

static clg_status log_end(void *u, const clg_epoch_info *e)
{
	mem_log *l = u;
	l->peak = e->peak_bytes[0]; /* the last epoch's: the optimizer state exists from the first step on */
	l->live = e->live_bytes[0];
	l->n++;
	return CLG_OK;
}

static void run(clg_backend *be, clg_precision p, const clg_dataset *ds, int conv, mem_log *log, uint64_t *param_bytes)
{
	clg_train_config c = clg_train_config_default();
	clg_train_callbacks cb = {.user = log, .epoch_end = log_end};
	clg_trainer *t = NULL;

	c.model.name = conv ? "conv" : "wide";
	c.build = conv ? build_conv : build_wide;
	c.batch = conv ? 64 : NBATCH;
	c.epochs = 2;
	c.precision = p;
	CHECK_OK(clg_trainer_new(be, &c, ds, NULL, &t));
	if (!t)
		return;
	*param_bytes = (uint64_t)clg_module_num_params(clg_trainer_model(t)) * sizeof(float);
	CHECK_OK(clg_trainer_run(t, &cb));
	clg_trainer_free(t);
}

static void test_trainer(clg_backend *be, const clg_dataset *ds, int conv)
{
	mem_log f32 = {0}, mix = {0};
	uint64_t params = 0;
	const char *model = conv ? "CNN conv3x3x16-pool-linear batch 64" : "MLP 16-128-128-128-4 batch 1024";

	run(be, CLG_PRECISION_FP32, ds, conv, &f32, &params);
	run(be, CLG_PRECISION_MIXED, ds, conv, &mix, &params);
	CHECK(f32.n == 2 && mix.n == 2, "%s: two epochs each", be->info.name);
	for (int i = 0; i < 2; i++) {
		const mem_log *l = i ? &mix : &f32;
		const char *name = i ? "mixed" : "float32";
		CHECK(l->peak > 0, "%s %s: a peak of 0 bytes a step", be->info.name, name);
		CHECK(l->peak >= params, "%s %s: peak %llu below the parameters' %llu bytes", be->info.name, name,
		      (unsigned long long)l->peak, (unsigned long long)params);
		CHECK(l->live >= params && l->peak >= l->live, "%s %s: live %llu between steps, peak %llu, parameters %llu",
		      be->info.name, name, (unsigned long long)l->live, (unsigned long long)l->peak,
		      (unsigned long long)params);
	}
	CHECK(mix.peak < f32.peak, "%s: activations dominate, yet mixed needs %llu bytes a step, float32 %llu",
	      be->info.name, (unsigned long long)mix.peak, (unsigned long long)f32.peak);
	printf("%s: %s: peak a step float32 %.2f MiB, mixed %.2f MiB (%.2fx); live %.2f / %.2f MiB; "
	       "parameters %.2f MiB\n", be->info.name, model, f32.peak / 1048576.0,
	       mix.peak / 1048576.0, (double)mix.peak / (double)f32.peak, f32.live / 1048576.0, mix.live / 1048576.0,
	       params / 1048576.0);
}

int main(void)
{
	clg_dataset ds, img;
	int64_t shape[1] = {NFEAT}, ishape[3] = {1, 16, 16};

	CHECK_OK(clg_dataset_init(&ds, 2 * NBATCH, 1, shape, CLG_F32, 1));
	ds.num_classes = NCLASS;
	t_fill_uniform(ds.x, (size_t)(2 * NBATCH * NFEAT), 3, -1, 1);
	for (int64_t i = 0; i < ds.n; i++)
		ds.y[i] = ds.x[i * NFEAT] > 0 ? (ds.x[i * NFEAT + 1] > 0 ? 0 : 1) : (ds.x[i * NFEAT + 2] > 0 ? 2 : 3);
	CHECK_OK(clg_dataset_init(&img, 128, 3, ishape, CLG_F32, 1));
	img.num_classes = NCLASS;
	t_fill_uniform(img.x, (size_t)(128 * 256), 4, 0, 1);
	for (int64_t i = 0; i < img.n; i++)
		img.y[i] = (int32_t)(i % NCLASS);
	for (int d = 0; d <= t_opencl_count(); d++) {
		clg_backend *be;
		if (clg_backend_open(d, &be)) {
			CHECK(0, "device %d: %s", d, clg_last_error());
			continue;
		}
		test_mark(be);
		test_trainer(be, &ds, 0);
		test_trainer(be, &img, 1);
		clg_backend_close(be);
	}
	clg_dataset_free(&ds);
	clg_dataset_free(&img);
	return t_finish("test_memory_peak");
}
