/* Train a two-layer MLP on Fashion-MNIST with the clgrad library alone: the program to copy.
 *   cc train_mlp.c $(pkg-config --cflags --libs --static clgrad) -o train_mlp && ./train_mlp [DIR]
 * Runs on the default device (CLGRAD_DEVICE picks another: an index, ref, cpu, gpu or a name). */
#include <clgrad.h>
#include <data.h>
#include <stdio.h>

#define TRY(expr)                                                           \
	do {                                                                \
		if ((expr) != CLG_OK) {                                     \
			fprintf(stderr, "%s: %s\n", #expr, clg_last_error()); \
			return 1;                                           \
		}                                                           \
	} while (0)

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
	clg_dataset train, test;
	clg_backend *be;
	clg_loader *loader;
	clg_named_tensors params;
	float mean, std;
	int dev;

	/* data: images scaled to [0, 1], then standardised with the training set's statistics */
	TRY(clg_dataset_load_idx(dir, "train", &train));
	TRY(clg_dataset_load_idx(dir, "t10k", &test));
	TRY(clg_dataset_channel_stats(&train, 1, &mean, &std));
	TRY(clg_dataset_normalize(&train, 1, &mean, &std));
	TRY(clg_dataset_normalize(&test, 1, &mean, &std));

	/* device and model: 784 -> 256 -> 10 */
	TRY(clg_device_select(NULL, &dev));
	TRY(clg_backend_open(dev, &be));
	clg_module *layers[] = {clg_nn_flatten(), clg_nn_linear(be, 784, 256, 1, CLG_INIT_DEFAULT, 1), clg_nn_relu(),
				clg_nn_linear(be, 256, 10, 1, CLG_INIT_DEFAULT, 2)};
	clg_module *model = clg_nn_sequential(layers, 4);
	TRY(model ? clg_module_state(model, 0, &params) : clg_last_status());
	clg_opt_config cfg = {.kind = CLG_OPT_ADAM, .lr = 1e-3};
	clg_optimizer *opt = clg_optimizer_new(&cfg, params.tensors, params.n);
	printf("training on %s\n", be->info.name);

	/* one epoch: shuffled batches of 128 with one-hot targets */
	TRY(clg_loader_new(&train, 128, 42, CLG_LOADER_SHUFFLE | CLG_LOADER_ONE_HOT, &loader));
	for (int step = 0;; step++) {
		clg_tensor *x, *y;
		double loss_value;
		clg_scope_begin(); /* everything made in a step is freed at its end */
		TRY(clg_loader_next(loader, be, &x, &y));
		if (!x) {
			clg_scope_end();
			break;
		}
		clg_tensor *loss = clg_cross_entropy(clg_module_forward(model, x), y, 0.0);
		clg_optimizer_zero_grad(opt);
		TRY(clg_backward(loss));
		TRY(clg_optimizer_step(opt));
		if (step % 100 == 0) { /* reading a value waits for the device: do it rarely */
			TRY(clg_item(loss, &loss_value));
			printf("step %4d  loss %.4f\n", step, loss_value);
		}
		clg_scope_end();
	}
	clg_loader_free(loader);

	/* test accuracy, without recording a graph */
	clg_loader *tl;
	int64_t correct = 0;
	TRY(clg_loader_new(&test, 1000, 0, 0, &tl));
	clg_no_grad_begin();
	for (;;) {
		clg_tensor *x, *y;
		int32_t pred[1000], label[1000];
		clg_scope_begin();
		TRY(clg_loader_next(tl, be, &x, &y));
		if (!x) {
			clg_scope_end();
			break;
		}
		int64_t n = clg_shape(x)[0];
		TRY(clg_to_host(clg_argmax(clg_module_forward(model, x)), pred, sizeof(int32_t) * (size_t)n));
		TRY(clg_to_host(y, label, sizeof(int32_t) * (size_t)n));
		for (int64_t i = 0; i < n; i++)
			correct += pred[i] == label[i];
		clg_scope_end();
	}
	clg_no_grad_end();
	printf("test accuracy %.4f\n", (double)correct / (double)test.n);

	clg_loader_free(tl);
	clg_optimizer_free(opt);
	clg_named_tensors_free(&params);
	clg_module_free(model);
	clg_backend_close(be);
	clg_dataset_free(&train);
	clg_dataset_free(&test);
	return 0;
}
