/* Activation checkpointing (clg_checkpoint, the transformer's recompute) on the reference and every
 * device:
 *   - the transformer's and gpt's (with dropout 0.1) parameter gradients with recompute equal those
 *     without (within 1e-6 of the largest gradient of each tensor; bitwise is typical), and the
 *     step's peak device memory above what lived before it (the activations) falls by at least 2x
 *     (6 blocks, T 64, D 64);
 *   - dropout inside a checkpointed function drops the same elements on the re-run: the input's
 *     gradient equals an ordinary call's, and the module's mask sequence moves on as without
 *     recompute (the next call's output is the same);
 *   - a function that draws more random numbers on its re-run than on its first is refused;
 *   - clg_checkpoint_ex frees its user data once: at return without grad or on a failure, else with
 *     the graph (not before the backward that re-runs the function). */
#include "test_util.h"

#include <clgrad_models.h>
#include <math.h>
#include <string.h>

#define B 4
#define T 64
#define V 16

typedef struct {
	uint64_t act; /* peak above the bytes in use before the forward */
	int n;
	float *g[64];
	int64_t numel[64];
} step_result;

/* One forward and backward of the model (6 blocks, D 64) on fixed ids with loss mean(logits * w). */
static void tf_step(clg_backend *be, const char *model, double dropout, int recompute, step_result *r)
{
	clg_model_config cfg = {.name = model, .vocab = V, .seq_len = T, .dim = 64, .heads = 4, .layers = 6,
				.dropout = dropout, .recompute = recompute};
	clg_module *m = clg_model_build(be, &cfg, 7);
	clg_named_tensors p = {0};
	int32_t ids[B * T];
	float w[B * T * V];
	clg_stats s0, s1;

	memset(r, 0, sizeof(*r));
	CHECK(m != NULL, "%s: build: %s", be->info.name, clg_last_error());
	if (!m)
		return;
	for (int i = 0; i < B * T; i++)
		ids[i] = (int32_t)((i * 7 + i / 5) % V);
	t_fill_uniform(w, B * T * V, 11, -1, 1);
	CHECK_OK(clg_module_state(m, 0, &p));
	clg_scope_begin();
	clg_tensor *x = clg_from_host(be, CLG_I32, 2, (int64_t[]){B, T}, ids);
	clg_tensor *wt = clg_from_host(be, CLG_F32, 2, (int64_t[]){B * T, V}, w);
	CHECK_OK(clg_synchronize(be));
	clg_backend_stats(be, &s0);
	clg_backend_reset_peak(be);
	clg_tensor *loss = clg_mean(clg_mul(clg_module_forward(m, x), wt), 0, NULL, 0);
	CHECK_OK(clg_backward(loss));
	CHECK_OK(clg_synchronize(be));
	clg_backend_stats(be, &s1);
	r->act = s1.bytes_peak - s0.bytes_in_use;
	for (int i = 0; i < p.n && i < 64; i++) {
		clg_tensor *g = clg_grad(p.tensors[i]);
		r->numel[i] = clg_numel(p.tensors[i]);
		r->g[i] = calloc((size_t)r->numel[i], sizeof(float));
		CHECK(g != NULL, "%s: %s has no gradient (recompute %d)", be->info.name, p.names[i], recompute);
		if (g && r->g[i])
			CHECK_OK(clg_to_host(g, r->g[i], (size_t)r->numel[i] * sizeof(float)));
		r->n++;
	}
	clg_scope_end();
	clg_named_tensors_free(&p);
	clg_module_free(m);
}

static void test_model(clg_backend *be, const char *model, double dropout)
{
	step_result a, b;
	int bitwise = 1;
	double worst = 0;

	tf_step(be, model, dropout, 0, &a);
	tf_step(be, model, dropout, 1, &b);
	CHECK(a.n == b.n && a.n > 0, "%s: %d and %d parameters", be->info.name, a.n, b.n);
	for (int i = 0; i < a.n && i < b.n; i++) {
		double top = 0, diff = 0;
		for (int64_t k = 0; a.g[i] && b.g[i] && k < a.numel[i]; k++) {
			top = fmax(top, fabs(a.g[i][k]));
			diff = fmax(diff, fabs((double)a.g[i][k] - b.g[i][k]));
		}
		if (a.g[i] && b.g[i] && memcmp(a.g[i], b.g[i], (size_t)a.numel[i] * sizeof(float)))
			bitwise = 0;
		worst = fmax(worst, top > 0 ? diff / top : diff);
		free(a.g[i]);
		free(b.g[i]);
	}
	CHECK(worst <= 1e-6, "%s %s: gradients with recompute differ by %.3g of the largest", be->info.name, model, worst);
	CHECK(b.act * 2 <= a.act, "%s %s: the step's activations take %.2f MiB with recompute, %.2f MiB without (want 2x less)",
	      be->info.name, model, b.act / 1048576.0, a.act / 1048576.0);
	printf("%s: %s L6 D64 T%d B%d dropout %g: gradients %s (worst %.2g of the largest); activations a step %.2f MiB "
	       "without recompute, %.2f MiB with (%.2fx less)\n", be->info.name, model, T, B, dropout,
	       bitwise ? "bitwise equal" : "equal", worst, a.act / 1048576.0, b.act / 1048576.0,
	       b.act ? (double)a.act / (double)b.act : 0);
}

/* ---- dropout inside a checkpointed function ---- */

typedef struct {
	clg_module *lin, *drop;
	int extra; /* draw once more on the re-run (a function that breaks the rule) */
} drop_fn;

static clg_status lin_drop(void *user, clg_tensor *const *in, clg_tensor **out)
{
	drop_fn *f = user;
	if (f->extra && clg_recomputing())
		clg_rand(clg_device_of(in[0]), CLG_F32, 1, (int64_t[]){4}, 1);
	out[0] = clg_module_forward(f->drop, clg_module_forward(f->lin, in[0]));
	return out[0] ? CLG_OK : clg_last_status();
}

/* gradient of sum(drop(lin(x)) * w) w.r.t. x, and the next call's output; checkpointed or not */
static void drop_run(clg_backend *be, int ckpt, float *gx, float *next)
{
	drop_fn f = {clg_nn_linear(be, 32, 32, 1, CLG_INIT_DEFAULT, 3), clg_nn_dropout(0.5, 99), 0};
	float xh[8 * 32], wh[8 * 32];

	t_fill_uniform(xh, 8 * 32, 5, -1, 1);
	t_fill_uniform(wh, 8 * 32, 6, -1, 1);
	clg_scope_begin();
	clg_tensor *x = clg_from_host(be, CLG_F32, 2, (int64_t[]){8, 32}, xh), *y = NULL;
	clg_tensor *w = clg_from_host(be, CLG_F32, 2, (int64_t[]){8, 32}, wh);
	clg_set_requires_grad(x, 1);
	if (ckpt)
		CHECK_OK(clg_checkpoint(lin_drop, &f, 1, &x, 1, &y));
	else
		CHECK_OK(lin_drop(&f, &x, &y));
	CHECK_OK(clg_backward(clg_sum(clg_mul(y, w), 0, NULL, 0)));
	if (clg_grad(x))
		CHECK_OK(clg_to_host(clg_grad(x), gx, sizeof(float) * 8 * 32));
	clg_no_grad_begin();
	CHECK_OK(clg_to_host(clg_module_forward(f.drop, x), next, sizeof(float) * 8 * 32));
	clg_no_grad_end();
	/* a function that draws once more on its re-run: refused with a message */
	f.extra = 1;
	y = NULL;
	CHECK_OK(clg_checkpoint(lin_drop, &f, 1, &x, 1, &y));
	clg_status st = clg_backward(clg_sum(y, 0, NULL, 0));
	CHECK(st != CLG_OK && strstr(clg_last_error(), "re-run"), "%s: a re-run that draws more: %s (%s)", be->info.name,
	      clg_status_name(st), clg_last_error());
	clg_scope_end();
	clg_module_free(f.lin);
	clg_module_free(f.drop);
}

static void test_dropout(clg_backend *be)
{
	float g0[8 * 32] = {0}, g1[8 * 32] = {1}, n0[8 * 32], n1[8 * 32];

	drop_run(be, 0, g0, n0);
	drop_run(be, 1, g1, n1);
	CHECK(!memcmp(g0, g1, sizeof(g0)), "%s: dropout's gradient differs with the checkpoint", be->info.name);
	CHECK(!memcmp(n0, n1, sizeof(n0)), "%s: the next dropout call's mask differs after a checkpointed call",
	      be->info.name);
}

static clg_status square_fn(void *user, clg_tensor *const *in, clg_tensor **out)
{
	(void)user;
	out[0] = clg_mul(in[0], in[0]);
	return out[0] ? CLG_OK : clg_last_status();
}

static void count_free(void *user) { (*(int *)user)++; }

static void test_user_free(clg_backend *be)
{
	int freed = 0;
	clg_tensor *y = NULL;

	clg_scope_begin();
	clg_tensor *x = clg_full(be, CLG_F32, 1, (int64_t[]){4}, 3.0);
	clg_set_requires_grad(x, 1);
	CHECK_OK(clg_checkpoint_ex(square_fn, &freed, count_free, 1, &x, 1, &y));
	CHECK(freed == 0, "%s: checkpoint_ex freed its user data before the backward", be->info.name);
	CHECK_OK(clg_backward(clg_sum(y, 0, NULL, 0)));
	double g = 0;
	CHECK_OK(clg_item(clg_slice(clg_grad(x), 0, 0, 1, 1), &g));
	CHECK(g == 6.0, "%s: checkpoint_ex's gradient %g, expected 6", be->info.name, g);
	clg_scope_end(); /* the graph goes with y */
	CHECK(freed == 1, "%s: checkpoint_ex freed its user data %d times after the graph, expected 1", be->info.name, freed);
	clg_no_grad_begin();
	clg_scope_begin();
	x = clg_full(be, CLG_F32, 1, (int64_t[]){4}, 3.0);
	CHECK_OK(clg_checkpoint_ex(square_fn, &freed, count_free, 1, &x, 1, &y));
	CHECK(freed == 2, "%s: checkpoint_ex without grad: user data freed %d times in all, expected 2", be->info.name, freed);
	clg_scope_end();
	clg_no_grad_end();
	CHECK(clg_checkpoint_ex(square_fn, &freed, count_free, 0, &x, 1, &y) != CLG_OK && freed == 3,
	      "%s: checkpoint_ex refusing 0 inputs: user data freed %d times in all, expected 3", be->info.name, freed);
}

int main(void)
{
	for (int d = 0; d <= t_opencl_count(); d++) {
		clg_backend *be;
		if (clg_backend_open(d, &be)) {
			CHECK(0, "device %d: %s", d, clg_last_error());
			continue;
		}
		test_model(be, "transformer", 0);
		test_model(be, "gpt", 0.1); /* dropout on the embeddings, the attention weights and both residuals */
		test_dropout(be);
		test_user_free(be);
		clg_backend_close(be);
	}
	return t_finish("test_recompute");
}
