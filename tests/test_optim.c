/* Optimizers against the PyTorch update rules computed on the host in double: SGD (momentum,
 * Nesterov, weight decay), Adam and AdamW over several steps on every device; gradient clipping
 * by global norm; learning-rate schedules. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 37, STEPS = 4 };

/* The gradient's scale at step t: G * (t + 1); decreasing for amsgrad, whose running max of the
 * second moment then differs from the moment itself (with a small beta2). */
static float gmul(const clg_opt_config *c, int t) { return c->amsgrad ? (float)(STEPS - t) : (float)(t + 1); }

/* p <- update(p, g) for STEPS steps, PyTorch's formulas, gradient g_t = G * gmul(t). */
static void host_reference(const clg_opt_config *c, const float *p0, const float *G, double *p)
{
	double m[N] = {0}, v[N] = {0}, vmax[N] = {0}, b1 = c->beta1 ? c->beta1 : 0.9, b2 = c->beta2 ? c->beta2 : 0.999;
	double eps = c->eps ? c->eps : 1e-8;
	for (int i = 0; i < N; i++)
		p[i] = p0[i];
	for (int t = 0; t < STEPS; t++) {
		for (int i = 0; i < N; i++) {
			double g = G[i] * gmul(c, t);
			if (c->kind == CLG_OPT_SGD) {
				g += c->weight_decay * p[i];
				if (c->momentum != 0) {
					m[i] = t == 0 ? g : c->momentum * m[i] + (1 - c->dampening) * g;
					g = c->nesterov ? g + c->momentum * m[i] : m[i];
				}
				p[i] -= c->lr * g;
			} else {
				if (c->kind == CLG_OPT_ADAMW)
					p[i] *= 1 - c->lr * c->weight_decay;
				else
					g += c->weight_decay * p[i];
				m[i] = b1 * m[i] + (1 - b1) * g;
				v[i] = b2 * v[i] + (1 - b2) * g * g;
				vmax[i] = fmax(vmax[i], v[i]);
				double mh = m[i] / (1 - pow(b1, t + 1)), vh = (c->amsgrad ? vmax[i] : v[i]) / (1 - pow(b2, t + 1));
				p[i] -= c->lr * mh / (sqrt(vh) + eps);
			}
		}
	}
}

static void check_optimizer(clg_backend *be, const clg_opt_config *cfg, const char *name)
{
	float p0[N], G[N], got[N];
	double want[N], worst = 0;
	clg_tensor *p;
	clg_optimizer *opt;

	t_fill_uniform(p0, N, 1, -1, 1);
	t_fill_uniform(G, N, 2, -1, 1);
	host_reference(cfg, p0, G, want);
	clg_scope_begin();
	p = clg_from_host(be, CLG_F32, CLG_SHAPE(N), p0);
	clg_set_requires_grad(p, 1);
	opt = clg_optimizer_new(cfg, &p, 1);
	CHECK(opt != NULL, "%s: optimizer_new: %s", name, clg_last_error());
	for (int t = 0; opt && t < STEPS; t++) {
		/* loss = sum(p * G * gmul(t)) so the gradient is G * gmul(t) */
		float gt[N];
		for (int i = 0; i < N; i++)
			gt[i] = G[i] * gmul(cfg, t);
		clg_scope_begin();
		clg_tensor *gw = clg_from_host(be, CLG_F32, CLG_SHAPE(N), gt);
		clg_optimizer_zero_grad(opt);
		CHECK_OK(clg_backward(clg_sum(clg_mul(p, gw), 0, NULL, 0)));
		CHECK_OK(clg_optimizer_step(opt));
		clg_scope_end();
	}
	CHECK_OK(clg_to_host(p, got, sizeof(got)));
	for (int i = 0; i < N; i++)
		worst = fmax(worst, fabs(got[i] - want[i]) / (1 + fabs(want[i])));
	CHECK(worst < 1e-5, "%s on %s: parameters differ from PyTorch's rule by %.3g", name, be->info.name, worst);
	CHECK(opt && clg_optimizer_steps(opt) == STEPS, "%s: step count", name);
	printf("  %-24s %-28s max relative difference from the host rule %.2g\n", name, be->info.name, worst);
	clg_optimizer_free(opt);
	clg_scope_end();
}

/* Three parameters, in one launch (CLGRAD_OPTIM_LAUNCH unset: the parameters and gradients in
 * arenas) and one launch each (=per-tensor), for STEPS steps; at step 1 the third has no gradient
 * (that step goes parameter by parameter, skipping it). Both ways give the same parameters, the
 * first also PyTorch's rule; a step with every gradient takes 1 launch, not 3. */
static void check_multi(clg_backend *be, const clg_opt_config *cfg, const char *name)
{
	enum { N1 = 35, N2 = 1 };
	float p0[N + N1 + N2], G[N + N1 + N2], got[2][N + N1 + N2], g0[N];
	double want[N], worst = 0, diff = 0;
	uint64_t launches[2] = {0, 0};

	t_fill_uniform(p0, N + N1 + N2, 3, -1, 1);
	t_fill_uniform(G, N + N1 + N2, 4, -1, 1);
	host_reference(cfg, p0, G, want);
	for (int mode = 0; mode < 2; mode++) {
		clg_tensor *p[3];
		clg_optimizer *opt;
		if (mode)
			clg_config_set("OPTIM_LAUNCH", "per-tensor");
		else
			clg_config_set("OPTIM_LAUNCH", NULL);
		clg_scope_begin();
		p[0] = clg_from_host(be, CLG_F32, CLG_SHAPE(N), p0);
		p[1] = clg_from_host(be, CLG_F32, CLG_SHAPE(5, 7), p0 + N);
		p[2] = clg_from_host(be, CLG_F32, CLG_SHAPE(N2), p0 + N + N1);
		for (int i = 0; i < 3; i++)
			clg_set_requires_grad(p[i], 1);
		opt = clg_optimizer_new(cfg, p, 3);
		CHECK(opt != NULL, "%s: optimizer_new: %s", name, clg_last_error());
		for (int t = 0; opt && t < STEPS; t++) {
			float gt[N + N1 + N2];
			clg_stats a, b;
			for (int i = 0; i < N + N1 + N2; i++)
				gt[i] = G[i] * gmul(cfg, t);
			clg_scope_begin();
			clg_tensor *l = clg_sum(clg_mul(p[0], clg_from_host(be, CLG_F32, CLG_SHAPE(N), gt)), 0, NULL, 0);
			l = clg_add(l, clg_sum(clg_mul(p[1], clg_from_host(be, CLG_F32, CLG_SHAPE(5, 7), gt + N)), 0, NULL, 0));
			if (t != 1)
				l = clg_add(l, clg_sum(clg_mul(p[2], clg_from_host(be, CLG_F32, CLG_SHAPE(N2), gt + N + N1)), 0, NULL, 0));
			clg_optimizer_zero_grad(opt);
			CHECK_OK(clg_backward(l));
			clg_backend_stats(be, &a);
			CHECK_OK(clg_optimizer_step(opt));
			clg_backend_stats(be, &b);
			if (t == STEPS - 1)
				launches[mode] = b.n_launch - a.n_launch;
			clg_scope_end();
		}
		for (int i = 0; i < 3; i++)
			CHECK_OK(clg_to_host(p[i], got[mode] + (i ? N + (i - 1) * N1 : 0), (size_t)(i == 0 ? N : i == 1 ? N1 : N2) * sizeof(float)));
		/* the last step's gradient of the first parameter, read through its slot in the arena */
		CHECK_OK(clg_to_host(clg_grad(p[0]), g0, sizeof(g0)));
		for (int i = 0; i < N; i++)
			CHECK(fabsf(g0[i] - G[i] * gmul(cfg, STEPS - 1)) <= 1e-6f * (1 + fabsf(G[i] * gmul(cfg, STEPS - 1))),
			      "%s (%s): gradient %d is %g, want %g", name, mode ? "per-tensor" : "one launch", i, g0[i],
			      G[i] * gmul(cfg, STEPS - 1));
		clg_optimizer_free(opt);
		clg_scope_end();
	}
	clg_config_set("OPTIM_LAUNCH", NULL);
	for (int i = 0; i < N; i++)
		worst = fmax(worst, fabs(got[0][i] - want[i]) / (1 + fabs(want[i])));
	for (int i = 0; i < N + N1 + N2; i++)
		diff = fmax(diff, fabs((double)got[0][i] - got[1][i]) / (1 + fabs(got[1][i])));
	CHECK(worst < 1e-5, "%s in one launch on %s: differs from PyTorch's rule by %.3g", name, be->info.name, worst);
	CHECK(diff < 1e-6, "%s on %s: one launch and per-tensor launches differ by %.3g", name, be->info.name, diff);
	if (be->info.type != CLG_DEV_REF)
		CHECK(launches[0] == 1 && launches[1] == 3, "%s on %s: a step took %llu launches in one launch, %llu per tensor (want 1, 3)",
		      name, be->info.name, (unsigned long long)launches[0], (unsigned long long)launches[1]);
	printf("  %-24s %-28s 3 parameters: %llu launch vs %llu per tensor, difference %.2g\n", name, be->info.name,
	       (unsigned long long)launches[0], (unsigned long long)launches[1], diff);
}

/* Two parameter groups (their own lr and weight decay) step as two optimizers of those settings
 * would, bit for bit, one launch a group; set_lr scales every group alike; a parameter given twice
 * is refused; amsgrad moves the parameters differently than plain Adam here (the test can fail). */
static void check_groups(clg_backend *be)
{
	float p0[N + 35], G[N + 35], got[2][N + 35];
	clg_opt_config cfg = clg_opt_config_default(CLG_OPT_ADAMW);
	uint64_t launches = 0;

	t_fill_uniform(p0, N + 35, 5, -1, 1);
	t_fill_uniform(G, N + 35, 6, -1, 1);
	CHECK(cfg.weight_decay == 0.01 && cfg.lr == 1e-3 && cfg.beta2 == 0.999, "AdamW's defaults: wd %g", cfg.weight_decay);
	cfg.lr = 0.1;
	for (int mode = 0; mode < 2; mode++) {
		clg_tensor *p[2];
		clg_optimizer *o[2] = {NULL, NULL};
		clg_scope_begin();
		p[0] = clg_from_host(be, CLG_F32, CLG_SHAPE(N), p0);
		p[1] = clg_from_host(be, CLG_F32, CLG_SHAPE(5, 7), p0 + N);
		clg_set_requires_grad(p[0], 1);
		clg_set_requires_grad(p[1], 1);
		if (mode == 0) {
			clg_opt_group g[2] = {{p, 1, 0.1, 0.05}, {p + 1, 1, 0.02, 0.0}};
			o[0] = clg_optimizer_new_groups(&cfg, g, 2);
			CHECK(o[0] && clg_optimizer_group_count(o[0]) == 2 && clg_optimizer_index_of(o[0], p[1]) == 1,
			      "groups: %s", clg_last_error());
		} else {
			clg_opt_config a = cfg, b = cfg;
			a.lr = 0.1, a.weight_decay = 0.05, b.lr = 0.02, b.weight_decay = 0.0;
			o[0] = clg_optimizer_new(&a, p, 1);
			o[1] = clg_optimizer_new(&b, p + 1, 1);
		}
		for (int t = 0; o[0] && t < STEPS; t++) {
			clg_stats s0, s1;
			clg_scope_begin();
			clg_tensor *l = clg_sum(clg_mul(p[0], clg_from_host(be, CLG_F32, CLG_SHAPE(N), G)), 0, NULL, 0);
			l = clg_add(l, clg_sum(clg_mul(p[1], clg_from_host(be, CLG_F32, CLG_SHAPE(5, 7), G + N)), 0, NULL, 0));
			clg_optimizer_zero_grad(o[0]);
			if (o[1])
				clg_optimizer_zero_grad(o[1]);
			CHECK_OK(clg_backward(l));
			clg_backend_stats(be, &s0);
			CHECK_OK(clg_optimizer_step(o[0]));
			if (o[1])
				CHECK_OK(clg_optimizer_step(o[1]));
			clg_backend_stats(be, &s1);
			launches = s1.n_launch - s0.n_launch;
			clg_scope_end();
		}
		CHECK_OK(clg_to_host(p[0], got[mode], N * sizeof(float)));
		CHECK_OK(clg_to_host(p[1], got[mode] + N, 35 * sizeof(float)));
		if (mode == 0 && o[0]) {
			clg_optimizer_set_lr(o[0], 0.05);
			CHECK(fabs(clg_optimizer_group_lr(o[0], 0) - 0.05) < 1e-15 && fabs(clg_optimizer_group_lr(o[0], 1) - 0.01) < 1e-15,
			      "set_lr scales the groups: %g %g", clg_optimizer_group_lr(o[0], 0), clg_optimizer_group_lr(o[0], 1));
			if (be->info.type != CLG_DEV_REF)
				CHECK(launches == 2, "groups on %s: %llu launches a step, want 2 (one a group)", be->info.name,
				      (unsigned long long)launches);
		}
		clg_optimizer_free(o[0]);
		clg_optimizer_free(o[1]);
		clg_scope_end();
	}
	CHECK(!memcmp(got[0], got[1], sizeof(got[0])), "groups on %s differ from separate optimizers", be->info.name);
	{
		clg_scope_begin();
		clg_tensor *x = clg_ones(be, CLG_F32, CLG_SHAPE(3));
		clg_set_requires_grad(x, 1);
		clg_opt_group g[2] = {{&x, 1, 0.1, 0}, {&x, 1, 0.1, 0}};
		CHECK(clg_optimizer_new_groups(&cfg, g, 2) == NULL && clg_last_status() == CLG_ERR_INVALID &&
			      strstr(clg_last_error(), "again"),
		      "a parameter in two groups: %s", clg_last_error());
		clg_scope_end();
	}
}

static void check_clipping(clg_backend *be)
{
	float a[3] = {3, 0, 0}, b[2] = {0, 4};
	clg_tensor *pa, *pb, *norm = NULL, *ps[2];
	double nv;
	float ga[3], gb[2];

	clg_scope_begin();
	pa = clg_from_host(be, CLG_F32, CLG_SHAPE(3), a);
	pb = clg_from_host(be, CLG_F32, CLG_SHAPE(2), b);
	clg_set_requires_grad(pa, 1);
	clg_set_requires_grad(pb, 1);
	/* loss = 0.5 * (|pa|^2 + |pb|^2): gradients are pa and pb, global norm 5 */
	CHECK_OK(clg_backward(clg_affine(clg_add(clg_sum(clg_mul(pa, pa), 0, NULL, 0), clg_sum(clg_mul(pb, pb), 0, NULL, 0)), 0.5, 0)));
	ps[0] = pa, ps[1] = pb;
	CHECK_OK(clg_clip_grad_norm(ps, 2, 1.0, &norm));
	CHECK_OK(clg_item(norm, &nv));
	CHECK(fabs(nv - 5) < 1e-5, "clip on %s: norm before clipping %g, want 5", be->info.name, nv);
	CHECK_OK(clg_to_host(clg_grad(pa), ga, sizeof(ga)));
	CHECK_OK(clg_to_host(clg_grad(pb), gb, sizeof(gb)));
	CHECK(fabsf(ga[0] - 0.6f) < 1e-5f && fabsf(gb[1] - 0.8f) < 1e-5f, "clip on %s: gradients (%g, %g), want (0.6, 0.8)",
	      be->info.name, ga[0], gb[1]);
	clg_free(norm);
	/* below the limit nothing changes */
	CHECK_OK(clg_clip_grad_norm(ps, 2, 10.0, NULL));
	CHECK_OK(clg_to_host(clg_grad(pa), ga, sizeof(ga)));
	CHECK(fabsf(ga[0] - 0.6f) < 1e-5f, "clip below the limit changed the gradient to %g", ga[0]);
	clg_scope_end();
}

static void check_schedules(void)
{
	clg_lr_schedule s = {.kind = CLG_LR_STEP, .base_lr = 0.1, .step_size = 10, .gamma = 0.5};
	CHECK(fabs(clg_lr_at(&s, 0) - 0.1) < 1e-12 && fabs(clg_lr_at(&s, 25) - 0.025) < 1e-12, "step schedule");
	s = (clg_lr_schedule){.kind = CLG_LR_COSINE, .base_lr = 1.0, .total_steps = 100, .min_lr = 0.0};
	CHECK(fabs(clg_lr_at(&s, 0) - 1.0) < 1e-12 && fabs(clg_lr_at(&s, 50) - 0.5) < 1e-12 && fabs(clg_lr_at(&s, 100)) < 1e-12,
	      "cosine schedule: %g %g %g", clg_lr_at(&s, 0), clg_lr_at(&s, 50), clg_lr_at(&s, 100));
	s.warmup_steps = 10;
	CHECK(fabs(clg_lr_at(&s, 0) - 0.1) < 1e-12 && fabs(clg_lr_at(&s, 9) - 1.0) < 1e-12 && fabs(clg_lr_at(&s, 10) - 1.0) < 1e-12,
	      "linear warm-up: %g %g %g", clg_lr_at(&s, 0), clg_lr_at(&s, 9), clg_lr_at(&s, 10));
}

int main(void)
{
	const clg_device_info *list;
	int n;
	const clg_opt_config cfgs[] = {
		{.kind = CLG_OPT_SGD, .lr = 0.1},
		{.kind = CLG_OPT_SGD, .lr = 0.1, .momentum = 0.9, .weight_decay = 1e-2},
		{.kind = CLG_OPT_SGD, .lr = 0.05, .momentum = 0.8, .nesterov = 1, .dampening = 0.0},
		{.kind = CLG_OPT_SGD, .lr = 0.05, .momentum = 0.8, .dampening = 0.3},
		{.kind = CLG_OPT_ADAM, .lr = 1e-2, .weight_decay = 1e-2},
		{.kind = CLG_OPT_ADAMW, .lr = 1e-2, .weight_decay = 0.1, .beta1 = 0.8, .beta2 = 0.99},
		/* beta2 0.5 and falling gradients: the second moment falls at step 3, its running max not */
		{.kind = CLG_OPT_ADAM, .lr = 1e-2, .beta2 = 0.5, .amsgrad = 1},
		{.kind = CLG_OPT_ADAMW, .lr = 1e-2, .weight_decay = 0.1, .beta2 = 0.5, .amsgrad = 1},
	};
	const char *names[] = {"sgd", "sgd momentum wd", "sgd nesterov", "sgd dampening", "adam wd", "adamw",
			       "adam amsgrad", "adamw amsgrad"};

	t_require_opencl();
	CHECK_OK(clg_devices(&list, &n));
	check_schedules();
	for (int d = 0; d < n; d++) {
		clg_backend *be = NULL;
		CHECK_OK(clg_backend_open(d, &be));
		if (!be)
			continue;
		for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++)
			check_optimizer(be, &cfgs[k], names[k]);
		for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++)
			check_multi(be, &cfgs[k], names[k]);
		check_clipping(be);
		check_groups(be);
		/* a parameter that is not a leaf is refused */
		clg_scope_begin();
		clg_tensor *x = clg_ones(be, CLG_F32, CLG_SHAPE(3));
		clg_set_requires_grad(x, 1);
		clg_tensor *y = clg_mul(x, x);
		CHECK(clg_optimizer_new(&cfgs[0], &y, 1) == NULL && clg_last_status() == CLG_ERR_INVALID,
		      "non-leaf parameter refused");
		clg_scope_end();
		clg_backend_close(be);
	}
	return t_finish("test_optim");
}
