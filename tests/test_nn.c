/* The module mechanics (clgrad_nn.h) on the reference backend and every OpenCL device: any number
 * of tensors, names copied, named children (a sequential's "0", "1", ... unchanged), refused
 * names, clg_module_find, a forward over several tensors (the recurrent cells), load_state (one
 * error naming every missing, unexpected and mis-shaped tensor; nothing loaded then; dtype and
 * device converted) and clg_module_to (values, sharing and requires_grad kept, a training step
 * after the move). The cells' values and gradients are checked in tests/grad_cases_rnn.c. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#define NT 20 /* more tensors than the old fixed limit (8) */

static clg_tensor *many_forward(clg_module *m, clg_tensor *x)
{
	clg_tensor *y = clg_add(x, m->tensors[0]);
	for (int i = 1; i < m->ntensors && y; i++) {
		clg_tensor *z = clg_add(y, m->tensors[i]);
		clg_free(y);
		y = z;
	}
	return y;
}

static const clg_module_ops many_ops = {"many", many_forward, NULL, NULL};

/* A module of NT (4) tensors named "p0" .. "p19" from a reused buffer, t[i] = i + 1. */
static clg_module *make_many(clg_backend *be)
{
	clg_module *m = clg_module_new(&many_ops);
	char name[16];
	for (int i = 0; m && i < NT; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		CHECK_OK(clg_module_add_tensor(m, name, clg_full(be, CLG_F32, CLG_SHAPE(4), i + 1.0), i % 2 == 0));
		memset(name, 'x', sizeof(name) - 1); /* the module must have kept its own copy */
	}
	return m;
}

static double first_value(clg_tensor *t)
{
	float v[64] = {0};
	if (!t || clg_numel(t) > 64 || clg_to_host(t, v, sizeof(float) * (size_t)clg_numel(t)))
		return NAN;
	return v[0];
}

static void test_mechanics(clg_backend *be)
{
	clg_named_tensors l = {0};
	clg_module *m = make_many(be), *parent = clg_module_new(&many_ops), *seq;
	clg_module *layers[3] = {clg_nn_linear(be, 3, 4, 1, CLG_INIT_DEFAULT, 1), clg_nn_relu(),
				 clg_nn_linear(be, 4, 2, 1, CLG_INIT_DEFAULT, 2)};

	CHECK(m && m->ntensors == NT, "%d tensors", m ? m->ntensors : -1);
	CHECK_OK(clg_module_state(m, 1, &l));
	CHECK(l.n == NT && !strcmp(l.names[0], "p0") && !strcmp(l.names[NT - 1], "p19"), "names copied: %s .. %s",
	      l.n ? l.names[0] : "", l.n ? l.names[l.n - 1] : "");
	clg_named_tensors_free(&l);
	CHECK(clg_module_num_params(m) == 4 * NT / 2, "params only: %lld", (long long)clg_module_num_params(m));
	/* refused names; the tensor is released (LeakSanitizer would see it otherwise) */
	CHECK(clg_module_add_tensor(m, "p3", clg_zeros(be, CLG_F32, CLG_SHAPE(1)), 1) == CLG_ERR_INVALID &&
		      strstr(clg_last_error(), "'p3'") && strstr(clg_last_error(), "already"),
	      "duplicate refused: %s", clg_last_error());
	CHECK(clg_module_add_tensor(m, "a.b", clg_zeros(be, CLG_F32, CLG_SHAPE(1)), 1) == CLG_ERR_INVALID, "a dot refused");
	CHECK(clg_module_add_tensor(m, "", clg_zeros(be, CLG_F32, CLG_SHAPE(1)), 1) == CLG_ERR_INVALID, "empty refused");

	/* named children, and the default positional names */
	seq = clg_nn_sequential(layers, 3);
	CHECK_OK(clg_module_add_child(parent, "enc", m));
	CHECK_OK(clg_module_add_child(parent, NULL, seq));
	CHECK(clg_module_add_child(parent, "enc", clg_nn_relu()) == CLG_ERR_INVALID, "duplicate child refused");
	CHECK(clg_module_add_child(parent, "x.y", clg_nn_relu()) == CLG_ERR_INVALID, "child name with a dot refused");
	CHECK_OK(clg_module_state(parent, 0, &l));
	CHECK(l.n == NT / 2 + 4 && !strcmp(l.names[0], "enc.p0") && !strcmp(l.names[NT / 2], "1.0.weight") &&
		      !strcmp(l.names[l.n - 1], "1.2.bias"),
	      "state names: %d, %s, %s", l.n, l.n ? l.names[0] : "", l.n > NT / 2 ? l.names[NT / 2] : "");
	clg_named_tensors_free(&l);
	CHECK(clg_module_find(parent, "enc.p7") == m->tensors[7], "find enc.p7");
	CHECK(clg_module_find(parent, "1.2.bias") == seq->children[2]->tensors[1], "find 1.2.bias");
	CHECK(!clg_module_find(parent, "1.1.weight") && !clg_module_find(parent, "enc") && !clg_module_find(parent, "zz.p0"),
	      "find misses");

	/* forward: one tensor through many, and forward_n of a one-in one-out module */
	clg_scope_begin();
	clg_tensor *x = clg_zeros(be, CLG_F32, CLG_SHAPE(4)), *y = NULL, *two[2] = {x, x};
	CHECK_OK(clg_module_forward_n(m, 1, &x, 1, &y));
	CHECK(first_value(y) == NT * (NT + 1) / 2, "sum of the %d tensors: %g", NT, first_value(y));
	CHECK(clg_module_forward_n(m, 2, two, 1, &y) == CLG_ERR_INVALID && y == NULL && strstr(clg_last_error(), "'many'"),
	      "two inputs refused: %s", clg_last_error());
	clg_scope_end();
	clg_module_free(parent);
}

/* GRU and LSTM cells through forward_n: shapes, state kept between steps, counts refused. */
static void test_cells(clg_backend *be)
{
	clg_module *gru = clg_nn_gru_cell(be, 5, 3, 1, 1), *lstm = clg_nn_lstm_cell(be, 5, 3, 0, 2);
	clg_named_tensors l = {0};

	CHECK(gru && lstm, "cells: %s", clg_last_error());
	if (!gru || !lstm)
		goto out;
	CHECK_OK(clg_module_state(gru, 0, &l));
	CHECK(l.n == 4 && !strcmp(l.names[0], "weight_ih") && !strcmp(l.names[1], "weight_hh") && !strcmp(l.names[2], "bias_ih") &&
		      !strcmp(l.names[3], "bias_hh") && clg_shape(l.tensors[0])[0] == 9 && clg_shape(l.tensors[0])[1] == 5 &&
		      clg_shape(l.tensors[1])[1] == 3,
	      "GRU tensors as PyTorch's");
	/* PyTorch's init: U(-1/sqrt(3), 1/sqrt(3)) */
	float w[45];
	double lo = 1, hi = -1;
	CHECK_OK(clg_to_host(l.tensors[0], w, sizeof(w)));
	for (int i = 0; i < 45; i++)
		lo = fmin(lo, w[i]), hi = fmax(hi, w[i]);
	CHECK(lo >= -1 / sqrt(3.0) && hi <= 1 / sqrt(3.0) && hi - lo > 0.5, "init in U(-1/sqrt(H), 1/sqrt(H)): [%g, %g]", lo, hi);
	clg_named_tensors_free(&l);
	CHECK_OK(clg_module_state(lstm, 0, &l));
	CHECK(l.n == 2 && clg_shape(l.tensors[0])[0] == 12, "LSTM without biases: %d tensors", l.n);
	clg_named_tensors_free(&l);

	clg_scope_begin();
	clg_tensor *x = clg_full(be, CLG_F32, CLG_SHAPE(2, 5), 0.5), *h = NULL, *hc[2] = {0};
	for (int s = 0; s < 3; s++) {
		clg_tensor *in[2] = {x, h}, *h2;
		CHECK_OK(clg_module_forward_n(gru, 2, in, 1, &h2));
		h = h2;
	}
	CHECK(h && clg_ndim(h) == 2 && clg_shape(h)[0] == 2 && clg_shape(h)[1] == 3, "GRU h (2, 3)");
	clg_tensor *lin[3] = {x, NULL, NULL};
	CHECK_OK(clg_module_forward_n(lstm, 3, lin, 2, hc));
	CHECK(hc[0] && hc[1] && clg_shape(hc[1])[1] == 3, "LSTM (h, c)");
	clg_tensor *bad[3] = {x, x, x};
	CHECK(clg_module_forward_n(gru, 3, bad, 1, hc) == CLG_ERR_INVALID && !hc[0], "GRU with 3 inputs refused");
	CHECK(clg_module_forward_n(lstm, 2, bad, 1, hc) != CLG_OK && strstr(clg_last_error(), "lstm_cell"),
	      "LSTM with a (2, 5) state refused: %s", clg_last_error());
	clg_scope_end();
out:
	clg_module_free(gru);
	clg_module_free(lstm);
}

/* load_state: one message naming everything wrong, then nothing loaded; conversions. */
/* The modules of issue 31's ops: PyTorch's state names, shapes, init bounds and output shapes (their
 * values are the functions', checked in tests/grad_cases_torch.c and python/tests/test_torch_ops.py). */
static void test_torch_modules(clg_backend *be)
{
	clg_module *gn = clg_nn_group_norm(be, 2, 6, 1e-5, 1), *gn0 = clg_nn_group_norm(be, 3, 6, 1e-5, 0);
	clg_module *rms = clg_nn_rms_norm(be, 2, (int64_t[]){3, 4}, -1, 1);
	clg_module *ct = clg_nn_conv_transpose2d(be, 4, 6, 3, 2, 1, 1, 2, 1, 1, 7);
	clg_named_tensors l = {0};
	clg_tensor *x, *y;

	CHECK(gn && gn0 && rms && ct, "modules: %s", clg_last_error());
	CHECK(!clg_nn_group_norm(be, 4, 6, 1e-5, 1) && clg_last_status() == CLG_ERR_INVALID, "6 channels in 4 groups refused");
	if (!gn || !gn0 || !rms || !ct)
		goto done;
	CHECK(clg_module_state(gn, 1, &l) == CLG_OK && l.n == 2 && !strcmp(l.names[0], "weight") &&
	      !strcmp(l.names[1], "bias") && clg_shape(l.tensors[0])[0] == 6, "GroupNorm weight, bias (6)");
	clg_named_tensors_free(&l);
	CHECK(clg_module_num_params(gn0) == 0, "GroupNorm without affine: no parameters");
	CHECK(clg_module_state(rms, 1, &l) == CLG_OK && l.n == 1 && !strcmp(l.names[0], "weight") &&
	      clg_ndim(l.tensors[0]) == 2 && clg_shape(l.tensors[0])[1] == 4, "RMSNorm weight (3, 4)");
	clg_named_tensors_free(&l);
	CHECK(clg_module_state(ct, 1, &l) == CLG_OK && l.n == 2 && !strcmp(l.names[0], "weight") &&
	      clg_shape(l.tensors[0])[0] == 4 && clg_shape(l.tensors[0])[1] == 3 && clg_shape(l.tensors[1])[0] == 6,
	      "ConvTranspose2d weight (4, 3, 3, 3), bias (6)");
	if (l.n == 2) {
		float f[108];
		int in = clg_to_host(l.tensors[0], f, sizeof(f)) == CLG_OK;
		for (int i = 0; in && i < 108; i++)
			in = fabs(f[i]) <= 1 / sqrt(27.0);
		CHECK(in, "ConvTranspose2d init within 1 / sqrt(out / groups * k * k)");
	}
	clg_named_tensors_free(&l);
	x = clg_ones(be, CLG_F32, CLG_SHAPE(2, 4, 5, 5));
	y = clg_module_forward(ct, x);
	CHECK(y && clg_shape(y)[1] == 6 && clg_shape(y)[2] == 10 && clg_shape(y)[3] == 10, "ConvTranspose2d (2, 6, 10, 10): %s",
	      y ? "" : clg_last_error());
	clg_free(y);
	clg_free(x);
	x = clg_ones(be, CLG_F32, CLG_SHAPE(1, 6, 2, 2));
	y = clg_module_forward(gn, x);
	CHECK(y && clg_ndim(y) == 4 && first_value(y) == 0, "GroupNorm of ones is 0");
	clg_free(y);
	clg_free(x);
	x = clg_full(be, CLG_F32, CLG_SHAPE(2, 3, 4), 3.0);
	y = clg_module_forward(rms, x);
	CHECK(y && fabs(first_value(y) - 1) < 1e-6, "RMSNorm of a constant row is 1");
	clg_free(y);
	clg_free(x);
	{
		clg_module *up = clg_nn_upsample(2, NULL, (double[]){2, 1.5}, CLG_INTERP_LINEAR, 1);
		x = clg_full(be, CLG_F32, CLG_SHAPE(1, 2, 2, 4), 2.0);
		y = up ? clg_module_forward(up, x) : NULL;
		CHECK(y && clg_shape(y)[2] == 4 && clg_shape(y)[3] == 6 && first_value(y) == 2, "Upsample (1, 2, 4, 6) of 2s: %s",
		      y ? "" : clg_last_error());
		clg_free(y);
		clg_free(x);
		clg_module_free(up);
		CHECK(!clg_nn_upsample(2, NULL, NULL, CLG_INTERP_NEAREST, 0), "Upsample without size or scale refused");
	}
done:
	clg_module_free(gn);
	clg_module_free(gn0);
	clg_module_free(rms);
	clg_module_free(ct);
}

static void test_load_state(clg_backend *be, clg_backend *ref)
{
	clg_module *layers[2] = {clg_nn_linear(be, 3, 4, 1, CLG_INIT_DEFAULT, 1), clg_nn_linear(be, 4, 2, 1, CLG_INIT_DEFAULT, 2)};
	clg_module *m = clg_nn_sequential(layers, 2);
	double w0 = first_value(m->children[0]->tensors[0]);
	double d[12];
	for (int i = 0; i < 12; i++)
		d[i] = 0.25;
	clg_tensor *t[4] = {clg_from_host(ref, CLG_F64, CLG_SHAPE(4, 3), d), clg_zeros(be, CLG_F32, CLG_SHAPE(5)),
			    clg_zeros(be, CLG_F32, CLG_SHAPE(2)), clg_zeros(be, CLG_F32, CLG_SHAPE(1))};
	char *names[4] = {"0.weight", "0.bias", "1.bias", "extra.weight"};
	int isp[4] = {1, 1, 1, 1};
	clg_named_tensors src = {4, names, t, isp};

	/* missing 1.weight, unexpected extra.weight, mis-shaped 0.bias (4 vs 5) */
	CHECK(clg_module_load_state(m, &src, 1) == CLG_ERR_INVALID, "strict load refused");
	const char *e = clg_last_error();
	CHECK(strstr(e, "1 missing: 1.weight") && strstr(e, "1 unexpected: extra.weight") &&
		      strstr(e, "1 mis-shaped: 0.bias (module (4,), given (5,))"),
	      "one message names all three: %s", e);
	CHECK(first_value(m->children[0]->tensors[0]) == w0, "nothing loaded after a refusal");
	CHECK(clg_module_load_state(m, &src, 0) == CLG_ERR_INVALID && strstr(clg_last_error(), "0.bias"),
	      "a mis-shaped tensor is refused without strict too");
	/* without the mis-shaped one: not strict loads what matches, from float64 on the reference */
	names[1] = "1.bias";
	clg_free(t[1]);
	t[1] = t[2];
	t[2] = NULL;
	src.n = 2;
	CHECK(clg_module_load_state(m, &src, 1) == CLG_ERR_INVALID && strstr(clg_last_error(), "2 missing: 0.bias, 1.weight"),
	      "strict names the missing: %s", clg_last_error());
	CHECK_OK(clg_module_load_state(m, &src, 0));
	CHECK(first_value(m->children[0]->tensors[0]) == 0.25 && first_value(m->children[1]->tensors[1]) == 0,
	      "loaded converted: %g", first_value(m->children[0]->tensors[0]));
	CHECK(clg_dtype_of(m->children[0]->tensors[0]) == CLG_F32 && clg_device_of(m->children[0]->tensors[0]) == be,
	      "the module's tensors stay");
	for (int i = 0; i < 4; i++)
		clg_free(t[i]);
	clg_module_free(m);
}

/* clg_module_to: from the reference to be, values kept, shared tensors stay shared, a step works. */
static void test_to(clg_backend *ref, clg_backend *be)
{
	clg_module *layers[2] = {clg_nn_linear(ref, 3, 4, 1, CLG_INIT_DEFAULT, 1), clg_nn_gru_cell(ref, 4, 2, 1, 3)};
	clg_module *m = clg_nn_sequential(layers, 2), *bn = clg_nn_batch_norm2d(ref, 2, 0.1, 1e-5);
	clg_named_tensors l = {0};
	clg_opt_config oc = {.kind = CLG_OPT_SGD, .lr = 0.1};
	double before[2], after[2];
	float xin[6] = {1, -2, 0.5, 0.25, 3, -1};

	CHECK_OK(clg_module_add_child(m, "bn", bn));
	/* weight tying: the GRU's bias_hh is also a buffer of the parent */
	CHECK_OK(clg_module_add_tensor(m, "tied", clg_retain(layers[1]->tensors[3]), 0));
	clg_scope_begin();
	clg_tensor *x = clg_from_host(ref, CLG_F32, CLG_SHAPE(2, 3), xin);
	clg_tensor *y = clg_module_forward(m->children[1], clg_module_forward(m->children[0], x));
	before[0] = first_value(y);
	CHECK_OK(clg_module_to(m, be));
	CHECK(clg_device_of(layers[1]->tensors[0]) == be && clg_device_of(bn->tensors[3]) == be && clg_device_of(m->tensors[0]) == be,
	      "every tensor on %s", be->info.name);
	CHECK(m->tensors[0] == layers[1]->tensors[3], "a shared tensor stays shared");
	CHECK(clg_requires_grad(layers[0]->tensors[0]) && !clg_requires_grad(bn->tensors[2]), "requires_grad kept");
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(2, 3), xin);
	y = clg_module_forward(m->children[1], clg_module_forward(m->children[0], x));
	after[0] = first_value(y);
	CHECK(fabs(after[0] - before[0]) < 1e-5, "same output after the move: %g vs %g", after[0], before[0]);
	/* an optimizer made after the move trains the moved parameters */
	CHECK_OK(clg_module_state(m, 0, &l));
	clg_optimizer *opt = clg_optimizer_new(&oc, l.tensors, l.n);
	CHECK(opt != NULL, "optimizer: %s", clg_last_error());
	clg_tensor *loss = clg_sum(y, 0, NULL, 0);
	before[1] = first_value(loss);
	CHECK_OK(clg_backward(loss));
	CHECK_OK(clg_optimizer_step(opt));
	y = clg_module_forward(m->children[1], clg_module_forward(m->children[0], x));
	after[1] = first_value(clg_sum(y, 0, NULL, 0));
	CHECK(after[1] < before[1], "a step on %s lowers sum(y): %g -> %g", be->info.name, before[1], after[1]);
	clg_scope_end();
	clg_optimizer_free(opt);
	clg_named_tensors_free(&l);
	clg_module_free(m);
}

int main(void)
{
	clg_backend *ref;
	int n = t_opencl_count();

	if (clg_backend_open(0, &ref)) {
		fprintf(stderr, "reference backend: %s\n", clg_last_error());
		return 1;
	}
	for (int d = 0; d <= n; d++) {
		clg_backend *be = ref;
		if (d > 0 && clg_backend_open(d, &be)) {
			CHECK(0, "device %d: %s", d, clg_last_error());
			continue;
		}
		printf("device %d: %s\n", d, be->info.name);
		test_mechanics(be);
		test_cells(be);
		test_torch_modules(be);
		test_load_state(be, ref);
		test_to(ref, be);
		if (be != ref)
			clg_backend_close(be);
	}
	clg_backend_close(ref);
	return t_finish("test_nn");
}
