/* One training step of the MLP 784-512-512-10 (ReLU, cross-entropy, Adam), batch 128, on an
 * OpenCL device with the fused ops off and on (clg_set_fused_ops), interleaved in one process, and
 * once on the reference backend. Reports medians: the whole step (forward + backward + Adam,
 * synchronised once, as training does) and, with --phases, each phase synchronised on its own.
 * usage: bench_mlp [--device SPEC] [--reps R] [--no-ref] [--phases] */
#include <clgrad.h>
/* -DCLG_BENCH_OLD builds this file against a tree from before the fused ops (both columns are
 * then that tree's one path), to compare trees side by side. */
#ifdef CLG_BENCH_OLD
#define clg_set_fused_ops(x) ((void)(x))
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { B = 128, IN = 784, H = 512, OUT = 10, NPHASE = 4 };
static const char *const phase_names[NPHASE] = {"step", "forward", "backward", "adam"};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *randn_host(size_t n, unsigned seed, float scale)
{
	float *p = malloc(n * sizeof(float));
	srand(seed);
	for (size_t i = 0; i < n && p; i++)
		p[i] = scale * ((float)rand() / (float)RAND_MAX - 0.5f);
	return p;
}

typedef struct {
	clg_backend *be;
	clg_tensor *x, *y, *p[6]; /* W1, W2, W3, b1, b2, b3 */
	clg_optimizer *opt;
} mlp;

static void die(clg_backend *be)
{
	fprintf(stderr, "bench_mlp on %s: %s\n", clg_backend_info(be)->name, clg_last_error());
	exit(1);
}

static void mlp_init(mlp *m, clg_backend *be)
{
	float *x = randn_host((size_t)B * IN, 1, 1), *w1 = randn_host((size_t)H * IN, 2, 0.1f),
	      *w2 = randn_host((size_t)H * H, 3, 0.1f), *w3 = randn_host((size_t)OUT * H, 4, 0.1f);
	float *y = calloc((size_t)B * OUT, sizeof(float)), b0[H] = {0};
	clg_opt_config cfg = {.kind = CLG_OPT_ADAM, .lr = 1e-3};

	for (int i = 0; i < B; i++)
		y[i * OUT + i % OUT] = 1;
	m->be = be;
	m->x = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(B, IN), x));
	m->y = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(B, OUT), y));
	m->p[0] = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(H, IN), w1));
	m->p[1] = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(H, H), w2));
	m->p[2] = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(OUT, H), w3));
	m->p[3] = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(H), b0));
	m->p[4] = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(H), b0));
	m->p[5] = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(OUT), b0));
	for (int p = 0; p < 6; p++)
		if (!m->p[p])
			die(be);
	for (int p = 0; p < 6; p++)
		clg_set_requires_grad(m->p[p], 1);
	m->opt = clg_optimizer_new(&cfg, m->p, 6);
	if (!m->opt || !m->x || !m->y)
		die(be);
	free(x), free(w1), free(w2), free(w3), free(y);
}

static void mlp_free(mlp *m)
{
	clg_optimizer_free(m->opt);
	clg_free(m->x);
	clg_free(m->y);
	for (int p = 0; p < 6; p++)
		clg_free(m->p[p]);
}

/* One step; t[0] its time, t[1..3] the phases' when sync_phases. */
static void step(mlp *m, int sync_phases, double *t, double *loss_out)
{
	double t0 = now(), t1, t2;
	clg_scope_begin();
	clg_optimizer_zero_grad(m->opt);
	clg_tensor *h1 = clg_relu(clg_linear(m->x, m->p[0], m->p[3]));
	clg_tensor *h2 = clg_relu(clg_linear(h1, m->p[1], m->p[4]));
	clg_tensor *loss = clg_cross_entropy(clg_linear(h2, m->p[2], m->p[5]), m->y, 0);
	if (!loss || (sync_phases && clg_synchronize(m->be)))
		die(m->be);
	t1 = now();
	if (clg_backward(loss) || (sync_phases && clg_synchronize(m->be)))
		die(m->be);
	t2 = now();
	if (clg_optimizer_step(m->opt) || clg_synchronize(m->be))
		die(m->be);
	t[0] = now() - t0;
	t[1] = t1 - t0, t[2] = t2 - t1, t[3] = now() - t2;
	if (loss_out)
		clg_item(loss, loss_out);
	clg_scope_end();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	const char *spec = NULL;
	int reps = 20, idx, no_ref = 0, phases = 0;
	clg_backend *ref = NULL, *dev = NULL;
	double *times[2][NPHASE], t[NPHASE], loss[2] = {0, 0};
	mlp m;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < argc)
			spec = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-ref"))
			no_ref = 1;
		else if (!strcmp(argv[i], "--phases"))
			phases = 1;
	}
	if (reps < 1)
		reps = 1;
	if (clg_device_select(spec, &idx) || clg_backend_open(idx, &dev)) {
		fprintf(stderr, "bench_mlp: %s\n", clg_last_error());
		return 1;
	}
	for (int f = 0; f < 2; f++)
		for (int p = 0; p < NPHASE; p++)
			times[f][p] = calloc((size_t)reps, sizeof(double));
	printf("MLP %d-%d-%d-%d, batch %d, one training step (forward + backward + Adam), median of %d:\n", IN, H, H,
	       OUT, B, reps);
	/* one warm-up step each (kernel builds), then the two variants alternate step by step */
	mlp_init(&m, dev);
	for (int f = 0; f < 2; f++) {
		clg_set_fused_ops(f);
		step(&m, phases, t, NULL);
	}
	for (int r = 0; r < reps; r++)
		for (int f = 0; f < 2; f++) {
			clg_set_fused_ops(f);
			step(&m, 0, t, r == reps - 1 ? &loss[f] : NULL);
			times[f][0][r] = t[0];
			if (phases) {
				step(&m, 1, t, NULL);
				for (int p = 1; p < NPHASE; p++)
					times[f][p][r] = t[p];
			}
		}
	mlp_free(&m);
	for (int f = 0; f < 2; f++) {
		printf("  %-26s fused %-3s", clg_backend_info(dev)->name, f ? "on" : "off");
		for (int p = 0; p < (phases ? NPHASE : 1); p++)
			printf("  %s %7.2f ms", phase_names[p], 1e3 * median(times[f][p], reps));
		printf("  (loss of the last step %.6f)\n", loss[f]);
	}
	printf("  step time fused off / on: %.2fx\n", median(times[0][0], reps) / median(times[1][0], reps));
	if (!no_ref && !clg_backend_open(0, &ref)) {
		mlp_init(&m, ref);
		step(&m, 0, t, &loss[0]);
		printf("  %-26s fused on   step %7.2f ms  (one step)\n", clg_backend_info(ref)->name, 1e3 * t[0]);
		mlp_free(&m);
		clg_backend_close(ref);
	}
	for (int f = 0; f < 2; f++)
		for (int p = 0; p < NPHASE; p++)
			free(times[f][p]);
	clg_backend_close(dev);
	return 0;
}
