/* A GRU sequence classifier on Fashion-MNIST: each image is a sequence of its 28 rows (28 pixels
 * a step) read by one GRU cell (clg_nn_gru_cell, PyTorch's GRUCell); the last hidden state goes
 * through a linear layer to the 10 classes. A module of one's own with named children, trained by
 * the trainer on the classification task, checkpointed, reloaded into a fresh model and evaluated
 * with clg_evaluate.
 *   cc train_gru_rows.c $(pkg-config --cflags --libs --static clgrad) -o train_gru_rows
 *   ./train_gru_rows [DIR [STEPS [CHECKPOINT]]]
 * DIR: Fashion-MNIST's IDX files (default /usr/share/datasets/fashion-mnist; exit 77 when absent);
 * STEPS: training steps of 64 images (default 300); CHECKPOINT: where to save (default a file in
 * $TMPDIR or /tmp, removed at the end). Exits 1 unless the test loss falls.
 * Runs on the default device (CLGRAD_DEVICE picks another: an index, ref, cpu, gpu or a name). */
#include <clgrad/clgrad_checkpoint.h>
#include <clgrad/clgrad_train.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ROWS 28
#define HIDDEN 64
#define BATCH 64

#define TRY(expr)                                                                 \
	do {                                                                      \
		if ((expr) != CLG_OK) {                                           \
			fprintf(stderr, "%s: %s\n", #expr, clg_last_error());     \
			goto out;                                                 \
		}                                                                 \
	} while (0)

/* images (B, 1, 28, 28) -> logits (B, 10); children "gru" and "head" */
static clg_tensor *gru_rows_forward(clg_module *m, clg_tensor *img)
{
	clg_module *gru = m->children[0], *head = m->children[1];
	int64_t B = clg_shape(img)[0];
	clg_tensor *out, *h = NULL;
	int ok = 1;

	clg_scope_begin(); /* every step's tensors go at the end (the graph keeps what backward needs) */
	clg_tensor *x = clg_reshape(img, CLG_SHAPE(B, ROWS, ROWS)); /* (B, T, 28) */
	for (int t = 0; t < ROWS && ok; t++) {
		clg_tensor *row = clg_reshape(clg_slice(x, 1, t, t + 1, 1), CLG_SHAPE(B, ROWS)); /* (B, 28) */
		clg_tensor *in[2] = {row, h}, *next;                 /* h NULL at t = 0: zero state */
		ok = clg_module_forward_n(gru, 2, in, 1, &next) == CLG_OK;
		h = next;                                            /* (B, HIDDEN) */
	}
	out = clg_keep(ok ? clg_module_forward(head, h) : NULL); /* NULL: the failure's message stays */
	clg_scope_end();
	return out;
}

static const clg_module_ops gru_rows_ops = {"gru_rows", gru_rows_forward, NULL, NULL};

static clg_module *build_gru_rows(clg_backend *be, uint64_t seed, void *user)
{
	clg_module *m = clg_module_new(&gru_rows_ops);
	(void)user;
	/* state names: gru.weight_ih, gru.weight_hh, gru.bias_ih, gru.bias_hh, head.weight, head.bias */
	if (m && (clg_module_add_child(m, "gru", clg_nn_gru_cell(be, ROWS, HIDDEN, 1, seed)) ||
		  clg_module_add_child(m, "head", clg_nn_linear(be, HIDDEN, 10, 1, CLG_INIT_DEFAULT, seed + 1)))) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

static int every_50(void *user, int64_t step) { return (void)user, step % 50 == 0; }

static void show_step(void *user, const clg_step_info *s)
{
	(void)user;
	if (!isnan(s->loss))
		printf("step %4lld  loss %.4f\n", (long long)s->step, s->loss);
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
	float mean, std;
	int dev, rc = 1;
	double acc0, loss0, acc1, loss1;
	clg_train_config cfg = clg_train_config_default();
	clg_train_callbacks cb = {.loss_due = every_50, .step_end = show_step};

	if (argc > 3)
		snprintf(path, sizeof(path), "%s", argv[3]);
	else
		snprintf(path, sizeof(path), "%s/clgrad_gru_rows_%d.safetensors", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			 (int)getpid());
	if (access(dir, R_OK)) {
		printf("no Fashion-MNIST in %s: skipped\n", dir);
		return 77;
	}
	if (steps < 1)
		steps = 1;
	/* data: steps * 64 training images, 1000 test images, standardised with the training statistics */
	TRY(clg_dataset_load_idx(dir, "train", &full));
	TRY(clg_dataset_load_idx(dir, "t10k", &test_full));
	TRY(clg_dataset_split(&full, steps * BATCH < full.n ? steps * BATCH : full.n, 1, &train, NULL));
	TRY(clg_dataset_subset(&test_full, 0, 1000, &test));
	TRY(clg_dataset_channel_stats(&train, 1, &mean, &std));
	TRY(clg_dataset_normalize(&train, 1, &mean, &std));
	TRY(clg_dataset_normalize(&test, 1, &mean, &std));

	TRY(clg_device_select(NULL, &dev));
	TRY(clg_backend_open(dev, &be));
	printf("training a GRU over image rows on %s: %lld images, %lld steps\n", clg_backend_info(be)->name, (long long)train.n,
	       (long long)((train.n + BATCH - 1) / BATCH));

	cfg.model.name = "gru-rows";
	cfg.build = build_gru_rows;
	cfg.task = clg_task_classification(); /* cross-entropy, accuracy (the default, said here) */
	cfg.batch = BATCH;
	cfg.epochs = 1;
	cfg.optim.lr = 3e-3;
	cfg.clip = 1.0; /* recurrent nets like their gradients clipped */
	cfg.save = path;
	cfg.seed = 3;
	TRY(clg_trainer_new(be, &cfg, &train, NULL, &trainer));
	TRY(clg_trainer_evaluate(trainer, &test, &acc0, &loss0));
	TRY(clg_trainer_run(trainer, &cb)); /* writes the checkpoint after the epoch */

	/* a fresh model from another seed, loaded from the checkpoint, evaluated without the trainer */
	fresh = build_gru_rows(be, 99, NULL);
	if (!fresh) {
		fprintf(stderr, "model: %s\n", clg_last_error());
		goto out;
	}
	TRY(clg_ckpt_load(path, fresh, NULL));
	TRY(clg_evaluate(fresh, be, &test, clg_task_classification(), NULL, 250, &acc1, &loss1));
	printf("test loss %.4f -> %.4f, accuracy %.4f -> %.4f (checkpoint %s)\n", loss0, loss1, acc0, acc1, path);
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
