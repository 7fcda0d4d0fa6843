/* A convolutional autoencoder on Fashion-MNIST: two strided convolutions squeeze a 28x28 image to
 * 32 maps of 7x7, two nearest-neighbour upsamplings and convolutions bring it back, a sigmoid puts
 * it in [0, 1]. Trained by the trainer on the reconstruction task (MSE of the output against the
 * input; metric PSNR, peak 1), checkpointed, reloaded into a fresh model and evaluated with
 * clg_evaluate. Two modules of one's own (upsample, sigmoid) among built-in ones in a sequential.
 *   cc train_conv_autoencoder.c $(pkg-config --cflags --libs --static clgrad) -o train_conv_autoencoder
 *   ./train_conv_autoencoder [DIR [STEPS [CHECKPOINT]]]
 * DIR: Fashion-MNIST's IDX files (default /usr/share/datasets/fashion-mnist; exit 77 when absent);
 * STEPS: training steps of 32 images (default 300); CHECKPOINT: where to save (default a file in
 * $TMPDIR or /tmp, removed at the end). Exits 1 unless the test loss falls.
 * Runs on the default device (CLGRAD_DEVICE picks another: an index, ref, cpu, gpu or a name). */
#include <clgrad/clgrad_checkpoint.h>
#include <clgrad/clgrad_train.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BATCH 32

#define TRY(expr)                                                                 \
	do {                                                                      \
		if ((expr) != CLG_OK) {                                           \
			fprintf(stderr, "%s: %s\n", #expr, clg_last_error());     \
			goto out;                                                 \
		}                                                                 \
	} while (0)

/* (B, C, H, W) -> (B, C, 2H, 2W), each value repeated 2x2: a broadcast view, made dense by reshape */
static clg_tensor *upsample_forward(clg_module *m, clg_tensor *x)
{
	const int64_t *s = clg_shape(x);
	int64_t B = s[0], C = s[1], H = s[2], W = s[3];
	clg_tensor *out;
	(void)m;
	clg_scope_begin();
	clg_tensor *e = clg_expand(clg_reshape(x, CLG_SHAPE(B, C, H, 1, W, 1)), CLG_SHAPE(B, C, H, 2, W, 2));
	out = clg_keep(clg_reshape(e, CLG_SHAPE(B, C, 2 * H, 2 * W)));
	clg_scope_end();
	return out;
}

static clg_tensor *sigmoid_forward(clg_module *m, clg_tensor *x) { return (void)m, clg_sigmoid(x); }

static const clg_module_ops upsample_ops = {"upsample2", upsample_forward, NULL, NULL};
static const clg_module_ops sigmoid_ops = {"sigmoid", sigmoid_forward, NULL, NULL};

static clg_module *build_autoencoder(clg_backend *be, uint64_t seed, void *user)
{
	(void)user;
	clg_module *layers[] = {
		/* encoder: (B, 1, 28, 28) -> (B, 16, 14, 14) -> (B, 32, 7, 7) */
		clg_nn_conv2d(be, 1, 16, 3, 2, 1, 1, 1, CLG_INIT_KAIMING_UNIFORM, seed),
		clg_nn_relu(),
		clg_nn_conv2d(be, 16, 32, 3, 2, 1, 1, 1, CLG_INIT_KAIMING_UNIFORM, seed + 1),
		clg_nn_relu(),
		/* decoder: -> (B, 32, 14, 14) -> (B, 16, 14, 14) -> (B, 16, 28, 28) -> (B, 1, 28, 28) */
		clg_module_new(&upsample_ops),
		clg_nn_conv2d(be, 32, 16, 3, 1, 1, 1, 1, CLG_INIT_KAIMING_UNIFORM, seed + 2),
		clg_nn_relu(),
		clg_module_new(&upsample_ops),
		clg_nn_conv2d(be, 16, 1, 3, 1, 1, 1, 1, CLG_INIT_DEFAULT, seed + 3),
		clg_module_new(&sigmoid_ops),
	};
	return clg_nn_sequential(layers, (int)(sizeof(layers) / sizeof(layers[0])));
}

static int every_50(void *user, int64_t step) { return (void)user, step % 50 == 0; }

static void show_step(void *user, const clg_step_info *s)
{
	(void)user;
	if (!isnan(s->loss))
		printf("step %4lld  loss %.5f\n", (long long)s->step, s->loss);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
	int64_t steps = argc > 2 ? atoll(argv[2]) : 300;
	char path[4096];
	clg_dataset full = {0}, test_full = {0}, train = {0}, test = {0};
	clg_backend *be = NULL;
	clg_trainer *trainer = NULL;
	clg_module *fresh = NULL;
	int dev, rc = 1;
	double peak = 1.0; /* pixels in [0, 1]: the PSNR's peak, handed to the task as its user data */
	double psnr0, loss0, psnr1, loss1;
	clg_train_config cfg = clg_train_config_default();
	clg_train_callbacks cb = {.loss_due = every_50, .step_end = show_step};

	if (argc > 3)
		snprintf(path, sizeof(path), "%s", argv[3]);
	else
		snprintf(path, sizeof(path), "%s/clgrad_conv_ae_%d.safetensors", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			 (int)getpid());
	if (access(dir, R_OK)) {
		printf("no Fashion-MNIST in %s: skipped\n", dir);
		return 77;
	}
	if (steps < 1)
		steps = 1;
	/* data in [0, 1] as read (a sigmoid output can match it); labels unused */
	TRY(clg_dataset_load_idx(dir, "train", &full));
	TRY(clg_dataset_load_idx(dir, "t10k", &test_full));
	TRY(clg_dataset_split(&full, steps * BATCH < full.n ? steps * BATCH : full.n, 1, &train, NULL));
	TRY(clg_dataset_subset(&test_full, 0, 500, &test));

	TRY(clg_device_select(NULL, &dev));
	TRY(clg_backend_open(dev, &be));
	printf("training a convolutional autoencoder on %s: %lld images, %lld steps\n", clg_backend_info(be)->name, (long long)train.n,
	       (long long)((train.n + BATCH - 1) / BATCH));

	cfg.model.name = "conv-autoencoder";
	cfg.build = build_autoencoder;
	cfg.task = clg_task_reconstruction(); /* MSE against the input, PSNR */
	cfg.task_user = &peak;
	cfg.batch = BATCH;
	cfg.epochs = 1;
	cfg.optim.lr = 2e-3;
	cfg.save = path;
	cfg.seed = 5;
	TRY(clg_trainer_new(be, &cfg, &train, NULL, &trainer));
	TRY(clg_trainer_evaluate(trainer, &test, &psnr0, &loss0));
	TRY(clg_trainer_run(trainer, &cb)); /* writes the checkpoint after the epoch */

	/* a fresh model from another seed, loaded from the checkpoint, evaluated without the trainer */
	fresh = build_autoencoder(be, 99, NULL);
	if (!fresh) {
		fprintf(stderr, "model: %s\n", clg_last_error());
		goto out;
	}
	TRY(clg_ckpt_load(path, fresh, NULL));
	TRY(clg_evaluate(fresh, be, &test, clg_task_reconstruction(), &peak, 100, &psnr1, &loss1));
	printf("test MSE %.5f -> %.5f, PSNR %.2f -> %.2f dB (checkpoint %s)\n", loss0, loss1, psnr0, psnr1, path);
	if (!(loss1 < loss0)) {
		fprintf(stderr, "the test loss did not fall\n");
		goto out;
	}
	printf("loss falls\n");
	rc = 0;
out:
	if (argc <= 3)
		unlink(path);
	clg_module_free(fresh);
	clg_trainer_free(trainer);
	clg_backend_close(be);
	clg_dataset_free(&train);
	clg_dataset_free(&test);
	clg_dataset_free(&full);
	clg_dataset_free(&test_full);
	return rc;
}
