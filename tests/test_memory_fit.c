/* The memory check before the first step (clg_trainer_new, frontend/memory_fit.c):
 *   - the estimate of a transformer's step (D 128, T 128; on the reference D 64, T 64) stays within
 *     25% of the allocator's measured peak, with and without recompute, on the reference and every
 *     device;
 *   - on every OpenCL device, a transformer whose activations cannot fit (16 blocks, 32 windows of
 *     8192 tokens a batch: tens of GiB) is refused by clg_trainer_new, before any step, with a message
 *     that gives the size and names --batch, --seq-len, --recompute and --accum-steps; with
 *     CLGRAD_FIT_CHECK=0 the same configuration is built (the check, not the build, refused it). */
#include "test_util.h"

#include <clgrad_train.h>
#include <string.h>

static uint64_t peak;

static clg_status on_epoch(void *u, const clg_epoch_info *e)
{
	(void)u;
	peak = e->peak_bytes[0];
	return CLG_OK;
}

static void lm_set(clg_dataset *ds, int64_t n, int64_t T)
{
	int64_t shape[1] = {T};
	CHECK_OK(clg_dataset_init(ds, n, 1, shape, CLG_I32, T));
	ds->num_classes = 64;
	for (int64_t i = 0; i < n * T; i++) {
		ds->xi[i] = (int32_t)((i * 5 + i / 3) % 64);
		ds->y[i] = (int32_t)((i * 5 + 5 + (i + 1) / 3) % 64);
	}
}

static clg_train_config lm_config(int64_t T, int64_t dim, int64_t layers, int64_t batch, int recompute)
{
	clg_train_config c = clg_train_config_default();
	c.model = (clg_model_config){.name = "transformer", .vocab = 64, .seq_len = T, .dim = dim, .heads = 4,
				     .layers = layers, .recompute = recompute};
	c.batch = batch;
	c.epochs = 1;
	return c;
}

/* D 128 on the devices; D 64, T 64 on the reference (plain loops: 8x less work) */
static void test_estimate(clg_backend *be, const clg_dataset *ds, int ref)
{
	for (int r = 0; r < 2; r++) {
		clg_train_config c = lm_config(ref ? 64 : 128, ref ? 64 : 128, 4, 8, r);
		clg_train_callbacks cb = {.epoch_end = on_epoch};
		clg_memory_estimate e;
		clg_trainer *t = NULL;
		double ratio;

		CHECK_OK(clg_trainer_new(be, &c, ds, NULL, &t));
		if (!t)
			continue;
		peak = 0;
		CHECK_OK(clg_trainer_run(t, &cb));
		CHECK_OK(clg_train_memory_estimate(&c, be, clg_module_num_params(clg_trainer_model(t)), 8, &e));
		ratio = peak ? (double)e.total / (double)peak : 0;
		CHECK(e.exact && ratio > 0.75 && ratio < 1.25, "%s: recompute %d: estimated %.2f MiB a step, measured %.2f MiB",
		      be->info.name, r, e.total / 1048576.0, peak / 1048576.0);
		printf("%s: transformer D%lld L4 T%lld batch 8%s: estimated %.2f MiB a step, measured peak %.2f MiB (%.2fx)\n",
		       be->info.name, (long long)c.model.dim, (long long)c.model.seq_len, r ? " recompute" : "",
		       e.total / 1048576.0, peak / 1048576.0, ratio);
		clg_trainer_free(t);
	}
}

static void test_refusal(clg_backend *be, const clg_dataset *big)
{
	clg_train_config c = lm_config(8192, 128, 16, 32, 0);
	clg_trainer *t = NULL;
	clg_status st = clg_trainer_new(be, &c, big, NULL, &t);
	const char *msg = clg_last_error();

	CHECK(st == CLG_ERR_OOM && !t, "%s: 16 blocks, 32 windows of 8192 tokens a batch: %s (%s)", be->info.name, clg_status_name(st),
	      msg);
	CHECK(st && strstr(msg, "needs about") && strstr(msg, "MiB") && strstr(msg, "--batch") && strstr(msg, "--seq-len") &&
		      strstr(msg, "--recompute") && strstr(msg, "--accum-steps"),
	      "%s: the message names the size and what to change: %s", be->info.name, msg);
	printf("%s: refused: %s\n", be->info.name, msg);
	clg_trainer_free(t);
	t = NULL;
	CHECK_OK(clg_config_set("FIT_CHECK", "0"));
	CHECK_OK(clg_trainer_new(be, &c, big, NULL, &t));
	CHECK_OK(clg_config_set("FIT_CHECK", "1"));
	clg_trainer_free(t);
}

int main(void)
{
	clg_dataset small, small64, big;

	lm_set(&small, 16, 128); /* two steps: the optimizer state lives from the second on */
	lm_set(&small64, 16, 64);
	lm_set(&big, 32, 8192);
	for (int d = 0; d <= t_opencl_count(); d++) {
		clg_backend *be;
		if (clg_backend_open(d, &be)) {
			CHECK(0, "device %d: %s", d, clg_last_error());
			continue;
		}
		test_estimate(be, d ? &small : &small64, d == 0);
		if (be->info.global_mem)
			test_refusal(be, &big);
		clg_backend_close(be);
	}
	clg_dataset_free(&small);
	clg_dataset_free(&small64);
	clg_dataset_free(&big);
	return t_finish("test_memory_fit");
}
