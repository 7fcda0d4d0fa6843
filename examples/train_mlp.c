/* Train a two-layer MLP of one's own on Fashion-MNIST with the clgrad library alone: the program
 * to copy. The trainer (clgrad_train.h) runs the loop that `clgrad train` runs.
 *   cc train_mlp.c $(pkg-config --cflags --libs --static clgrad) -o train_mlp && ./train_mlp [DIR]
 * Runs on the default device (CLGRAD_DEVICE picks another: an index, ref, cpu, gpu or a name). */
#include <clgrad/clgrad_train.h>
#include <math.h>
#include <stdio.h>

#define TRY(expr)                                                           \
	do {                                                                \
		if ((expr) != CLG_OK) {                                     \
			fprintf(stderr, "%s: %s\n", #expr, clg_last_error()); \
			return 1;                                           \
		}                                                           \
	} while (0)

/* 784 -> 256 -> 10, initialised from seed */
static clg_module *build_mlp(clg_backend *be, uint64_t seed, void *user)
{
	clg_module *layers[] = {clg_nn_flatten(), clg_nn_linear(be, 784, 256, 1, CLG_INIT_DEFAULT, seed),
				clg_nn_relu(), clg_nn_linear(be, 256, 10, 1, CLG_INIT_DEFAULT, seed + 1)};
	(void)user;
	return clg_nn_sequential(layers, 4);
}

/* read the running loss every 100 steps: reading a value waits for the device, so do it rarely */
static int every_100(void *user, int64_t step) { return (void)user, step % 100 == 0; }

static void show_step(void *user, const clg_step_info *s)
{
	(void)user;
	if (!isnan(s->loss))
		printf("step %4lld  loss %.4f\n", (long long)s->step, s->loss);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
	clg_dataset train, test;
	clg_backend *be;
	clg_trainer *trainer;
	float mean, std;
	int dev;
	double acc, loss;

	/* data: images scaled to [0, 1], then standardised with the training set's statistics */
	TRY(clg_dataset_load_idx(dir, "train", &train));
	TRY(clg_dataset_load_idx(dir, "t10k", &test));
	TRY(clg_dataset_channel_stats(&train, 1, &mean, &std));
	TRY(clg_dataset_normalize(&train, 1, &mean, &std));
	TRY(clg_dataset_normalize(&test, 1, &mean, &std));

	TRY(clg_device_select(NULL, &dev));
	TRY(clg_backend_open(dev, &be));
	printf("training on %s\n", clg_backend_info(be)->name);

	/* one epoch of shuffled batches of 128, Adam lr 1e-3 */
	clg_train_config cfg = clg_train_config_default();
	cfg.model.name = "my-mlp";
	cfg.build = build_mlp;
	cfg.epochs = 1;
	cfg.seed = 42;
	clg_train_callbacks cb = {.loss_due = every_100, .step_end = show_step};
	TRY(clg_trainer_new(be, &cfg, &train, NULL, &trainer));
	TRY(clg_trainer_run(trainer, &cb));
	TRY(clg_trainer_evaluate(trainer, &test, &acc, &loss));
	printf("test accuracy %.4f\n", acc);

	clg_trainer_free(trainer);
	clg_backend_close(be);
	clg_dataset_free(&train);
	clg_dataset_free(&test);
	return 0;
}
