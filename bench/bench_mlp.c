/* One forward + backward of the MLP 784-512-512-10 (ReLU, cross-entropy), batch 128, on the
 * reference backend and on an OpenCL device, side by side.
 * usage: bench_mlp [--device SPEC] [--reps R] */
#include <clgrad.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { B = 128, IN = 784, H = 512, OUT = 10 };

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

/* Median seconds of one forward+backward over reps (after one warm-up step). */
static double time_steps(clg_backend *be, int reps, double *loss_out)
{
	float *x = randn_host((size_t)B * IN, 1, 1), *w1 = randn_host((size_t)H * IN, 2, 0.1f),
	      *w2 = randn_host((size_t)H * H, 3, 0.1f), *w3 = randn_host((size_t)OUT * H, 4, 0.1f);
	float *y = calloc((size_t)B * OUT, sizeof(float)), b0[H] = {0};
	double *times = calloc((size_t)reps + 1, sizeof(double)), med;
	clg_tensor *X, *Y, *W1, *W2, *W3, *B1, *B2, *B3;

	for (int i = 0; i < B; i++)
		y[i * OUT + i % OUT] = 1;
	clg_scope_begin();
	X = clg_from_host(be, CLG_F32, CLG_SHAPE(B, IN), x);
	Y = clg_from_host(be, CLG_F32, CLG_SHAPE(B, OUT), y);
	W1 = clg_from_host(be, CLG_F32, CLG_SHAPE(H, IN), w1);
	W2 = clg_from_host(be, CLG_F32, CLG_SHAPE(H, H), w2);
	W3 = clg_from_host(be, CLG_F32, CLG_SHAPE(OUT, H), w3);
	B1 = clg_from_host(be, CLG_F32, CLG_SHAPE(H), b0);
	B2 = clg_from_host(be, CLG_F32, CLG_SHAPE(H), b0);
	B3 = clg_from_host(be, CLG_F32, CLG_SHAPE(OUT), b0);
	clg_tensor *params[] = {W1, W2, W3, B1, B2, B3};
	for (int p = 0; p < 6; p++)
		clg_set_requires_grad(params[p], 1);
	for (int r = 0; r <= reps; r++) {
		double t0 = now();
		clg_scope_begin();
		clg_tensor *h1 = clg_relu(clg_linear(X, W1, B1));
		clg_tensor *h2 = clg_relu(clg_linear(h1, W2, B2));
		clg_tensor *loss = clg_cross_entropy(clg_linear(h2, W3, B3), Y, 0);
		if (clg_backward(loss) != CLG_OK || clg_synchronize(be) != CLG_OK) {
			fprintf(stderr, "bench_mlp on %s: %s\n", be->info.name, clg_last_error());
			exit(1);
		}
		times[r] = now() - t0;
		clg_item(loss, loss_out);
		clg_scope_end();
		for (int p = 0; p < 6; p++)
			clg_zero_grad(params[p]);
	}
	clg_scope_end();
	/* median of the timed reps (times[0] is the warm-up) */
	for (int i = 1; i <= reps; i++)
		for (int j = i + 1; j <= reps; j++)
			if (times[j] < times[i]) {
				double t = times[i];
				times[i] = times[j];
				times[j] = t;
			}
	med = times[1 + reps / 2];
	free(x), free(w1), free(w2), free(w3), free(y), free(times);
	return med;
}

int main(int argc, char **argv)
{
	const char *spec = NULL;
	int reps = 10, idx;
	clg_backend *ref = NULL, *dev = NULL;
	double lr, ld, tr, td;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < argc)
			spec = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
	}
	if (clg_device_select(spec, &idx) || clg_backend_open(0, &ref) || clg_backend_open(idx, &dev)) {
		fprintf(stderr, "bench_mlp: %s\n", clg_last_error());
		return 1;
	}
	tr = time_steps(ref, reps < 3 ? reps : 3, &lr);
	td = time_steps(dev, reps, &ld);
	printf("MLP %d-%d-%d-%d, batch %d, one forward+backward (median):\n", IN, H, H, OUT, B);
	printf("  %-30s %9.2f ms  loss %.6f\n", ref->info.name, 1e3 * tr, lr);
	printf("  %-30s %9.2f ms  loss %.6f\n", dev->info.name, 1e3 * td, ld);
	printf("  speed-up of the device over the reference: %.1fx\n", tr / td);
	clg_backend_close(dev);
	clg_backend_close(ref);
	return 0;
}
