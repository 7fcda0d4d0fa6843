/* End to end: a small MLP trained for a few steps with Adam on the reference backend and on every
 * OpenCL device from the same seed; the losses must fall and agree across devices. */
#include "test_util.h"

#include <math.h>
#include <string.h>

enum { B = 32, IN = 20, H = 32, C = 4, STEPS = 30 };

/* A learnable synthetic task: the class is the index of the largest of the first C features. */
static void make_data(float *x, float *onehot)
{
	t_fill_uniform(x, (size_t)B * IN, 11, -1, 1);
	memset(onehot, 0, sizeof(float) * B * C);
	for (int i = 0; i < B; i++) {
		int best = 0;
		for (int c = 1; c < C; c++)
			if (x[i * IN + c] > x[i * IN + best])
				best = c;
		onehot[i * C + best] = 1;
	}
}

static void train(clg_backend *be, double *losses)
{
	float x[B * IN], y[B * C];
	clg_module *layers[3], *model;
	clg_named_tensors params;
	clg_optimizer *opt;
	clg_opt_config cfg = {.kind = CLG_OPT_ADAM, .lr = 1e-2};

	make_data(x, y);
	layers[0] = clg_nn_linear(be, IN, H, 1, CLG_INIT_DEFAULT, 1);
	layers[1] = clg_nn_relu();
	layers[2] = clg_nn_linear(be, H, C, 1, CLG_INIT_DEFAULT, 2);
	model = clg_nn_sequential(layers, 3);
	CHECK(model != NULL, "model: %s", clg_last_error());
	if (!model)
		return;
	CHECK_OK(clg_module_state(model, 0, &params));
	CHECK(params.n == 4 && !strcmp(params.names[0], "0.weight") && !strcmp(params.names[3], "2.bias"),
	      "parameter names follow PyTorch's (%d: %s ...)", params.n, params.n ? params.names[0] : "");
	opt = clg_optimizer_new(&cfg, params.tensors, params.n);
	clg_scope_begin();
	clg_tensor *X = clg_from_host(be, CLG_F32, CLG_SHAPE(B, IN), x), *Y = clg_from_host(be, CLG_F32, CLG_SHAPE(B, C), y);
	for (int s = 0; s < STEPS; s++) {
		clg_scope_begin();
		clg_tensor *loss = clg_cross_entropy(clg_module_forward(model, X), Y, 0.0);
		clg_optimizer_zero_grad(opt);
		CHECK_OK(clg_backward(loss));
		CHECK_OK(clg_optimizer_step(opt));
		CHECK_OK(clg_item(loss, &losses[s]));
		clg_scope_end();
	}
	clg_scope_end();
	clg_optimizer_free(opt);
	clg_named_tensors_free(&params);
	clg_module_free(model);
}

int main(void)
{
	const clg_device_info *list;
	double ref[STEPS], dev[STEPS];
	clg_backend *be = NULL;
	int n;

	t_require_opencl();
	CHECK_OK(clg_devices(&list, &n));
	CHECK_OK(clg_backend_open(0, &be));
	train(be, ref);
	clg_backend_close(be);
	printf("reference: loss %.4f -> %.4f\n", ref[0], ref[STEPS - 1]);
	CHECK(ref[STEPS - 1] < 0.5 * ref[0], "the loss falls on the reference: %.4f -> %.4f", ref[0], ref[STEPS - 1]);
	for (int d = 1; d < n; d++) {
		double worst = 0;
		CHECK_OK(clg_backend_open(d, &be));
		if (!be)
			continue;
		train(be, dev);
		for (int s = 0; s < STEPS; s++)
			worst = fmax(worst, fabs(dev[s] - ref[s]) / fabs(ref[s]));
		printf("%s: loss %.4f -> %.4f, largest relative difference from the reference %.2g\n", list[d].name, dev[0],
		       dev[STEPS - 1], worst);
		CHECK(worst < 1e-3, "%s: loss curve departs from the reference by %.3g", list[d].name, worst);
		clg_backend_close(be);
	}
	return t_finish("test_train");
}
