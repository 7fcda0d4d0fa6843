/* One training step of the Fashion-MNIST CNN of `clgrad train --model cnn` (conv 3x3 32, ReLU,
 * max-pool 2, conv 3x3 64, ReLU, max-pool 2, fc 3136-128, ReLU, fc 128-10; cross-entropy, Adam
 * 1e-3) at batch 128 on a device: forward, backward and optimizer step, timed to the device's
 * completion. Reports the median step and the epoch it projects to (60000 samples).
 *
 * With --profile (or CLGRAD_PROFILE=1) it then runs more steps with every op synchronised and
 * timed on the host, and prints the time per op and dst shape, with each one's share of the
 * profiled step. The timing wraps clg_run at link time (-Wl,--wrap=clg_run, bench/cnn.cmake), so
 * the library itself carries no profiling code; synchronising after every op adds a launch
 * round-trip per op, so the profiled step is slower than the plain one. Next to wall time it gives
 * the process's CPU time (all threads, PoCL's workers included), steadier on a shared machine.
 * usage: bench_cnn [--device SPEC] [--reps R] [--profile] [--prof-reps R] */
#include <clgrad.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { B = 128, NCLASS = 10, EPOCH_SAMPLES = 60000 };

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time of the whole process (every thread, so PoCL's workers too): on a CPU device it counts
 * the work done, and is less disturbed than wall time when other processes share the cores. */
static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- per-op profile, through the link-time wrapper of clg_run ---- */

#define PROF_MAX 128
typedef struct {
	char key[96];
	double secs, cpu;
	long calls;
} prof_entry;

static int prof_on;
static prof_entry prof[PROF_MAX];
static int nprof;

clg_status __real_clg_run(clg_backend *be, const clg_op_call *call);
clg_status __wrap_clg_run(clg_backend *be, const clg_op_call *call);

/* "op dst-shape", e.g. "im2col (128, 288, 196)"; GEMM adds K. */
static void prof_key(const clg_op_call *c, char *buf, size_t len)
{
	size_t p = (size_t)snprintf(buf, len, "%s (", clg_op_name(c->op));
	for (int d = 0; d < c->dst.ndim && p < len; d++)
		p += (size_t)snprintf(buf + p, len - p, d ? ", %lld" : "%lld", (long long)c->dst.shape[d]);
	if (p < len && c->op == CLG_OP_GEMM)
		p += (size_t)snprintf(buf + p, len - p, ") K %lld", (long long)c->src[0].shape[c->src[0].ndim - 1]);
	else if (p < len)
		p += (size_t)snprintf(buf + p, len - p, ")");
}

clg_status __wrap_clg_run(clg_backend *be, const clg_op_call *call)
{
	char key[96];
	double t0, c0;
	clg_status st;
	int i;

	if (!prof_on)
		return __real_clg_run(be, call);
	clg_synchronize(be);
	t0 = now();
	c0 = cpu_now();
	st = __real_clg_run(be, call);
	clg_synchronize(be);
	prof_key(call, key, sizeof(key));
	for (i = 0; i < nprof && strcmp(prof[i].key, key); i++)
		;
	if (i == nprof && nprof < PROF_MAX)
		snprintf(prof[nprof++].key, sizeof(prof[0].key), "%s", key);
	if (i < nprof) {
		prof[i].secs += now() - t0;
		prof[i].cpu += cpu_now() - c0;
		prof[i].calls++;
	}
	return st;
}

static int by_time(const void *a, const void *b)
{
	double d = ((const prof_entry *)b)->secs - ((const prof_entry *)a)->secs;
	return (d > 0) - (d < 0);
}

/* ---- the model and one step ---- */

static float *uniform_host(size_t n, unsigned seed, float lo, float hi)
{
	float *p = malloc(n * sizeof(float));
	srand(seed);
	for (size_t i = 0; i < n && p; i++)
		p[i] = lo + (hi - lo) * ((float)rand() / (float)RAND_MAX);
	return p;
}

static clg_module *cnn(clg_backend *be)
{
	clg_module *m[] = {
		clg_nn_conv2d(be, 1, 32, 3, 1, 1, 1, 1, CLG_INIT_DEFAULT, 2),
		clg_nn_relu(),
		clg_nn_max_pool2d(2, 2, 0),
		clg_nn_conv2d(be, 32, 64, 3, 1, 1, 1, 1, CLG_INIT_DEFAULT, 3),
		clg_nn_relu(),
		clg_nn_max_pool2d(2, 2, 0),
		clg_nn_flatten(),
		clg_nn_linear(be, 64 * 7 * 7, 128, 1, CLG_INIT_DEFAULT, 4),
		clg_nn_relu(),
		clg_nn_linear(be, 128, NCLASS, 1, CLG_INIT_DEFAULT, 5),
	};
	return clg_nn_sequential(m, (int)(sizeof(m) / sizeof(m[0])));
}

/* One forward + backward + Adam step, waited for; the loss in *loss. */
static clg_status step(clg_backend *be, clg_module *model, clg_optimizer *opt, clg_tensor *x, clg_tensor *y,
		       double *loss_out)
{
	clg_status st;
	clg_scope_begin();
	clg_tensor *loss = clg_cross_entropy(clg_module_forward(model, x), y, 0.0);
	clg_optimizer_zero_grad(opt);
	st = loss ? clg_backward(loss) : clg_last_status();
	if (!st)
		st = clg_optimizer_step(opt);
	if (!st)
		st = clg_synchronize(be);
	if (!st && loss_out)
		st = clg_item(loss, loss_out);
	clg_scope_end();
	return st;
}

static int cmp_double(const void *a, const void *b)
{
	double d = *(const double *)a - *(const double *)b;
	return (d > 0) - (d < 0);
}

int main(int argc, char **argv)
{
	const char *spec = NULL;
	int reps = 10, prof_reps = 3, profile = clg_cfg_bool(CLG_CFG_PROFILE), idx, rc = 1;
	clg_backend *be = NULL;
	clg_module *model = NULL;
	clg_optimizer *opt = NULL;
	clg_named_tensors params = {0};
	clg_tensor *x = NULL, *y = NULL;
	float *xh = NULL, *yh = NULL;
	double *times = NULL, *cpus = NULL, loss0 = 0, loss1 = 0, t_first, med, total = 0, total_cpu = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < argc)
			spec = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--prof-reps") && i + 1 < argc)
			prof_reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--profile"))
			profile = 1;
		else {
			fprintf(stderr, "usage: bench_cnn [--device SPEC] [--reps R] [--profile] [--prof-reps R]\n");
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	if (clg_device_select(spec, &idx) || clg_backend_open(idx, &be)) {
		fprintf(stderr, "bench_cnn: %s\n", clg_last_error());
		return 1;
	}
	xh = uniform_host((size_t)B * 28 * 28, 1, -1, 2);
	yh = calloc((size_t)B * NCLASS, sizeof(float));
	times = calloc((size_t)reps, sizeof(double));
	cpus = calloc((size_t)reps, sizeof(double));
	if (!xh || !yh || !times || !cpus)
		goto out;
	for (int i = 0; i < B; i++)
		yh[i * NCLASS + (i * 7) % NCLASS] = 1;
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(B, 1, 28, 28), xh);
	y = clg_from_host(be, CLG_F32, CLG_SHAPE(B, NCLASS), yh);
	model = cnn(be);
	if (!x || !y || !model || clg_module_state(model, 0, &params))
		goto fail;
	opt = clg_optimizer_new(&(clg_opt_config){.kind = CLG_OPT_ADAM, .lr = 1e-3}, params.tensors, params.n);
	if (!opt)
		goto fail;

	/* the first step builds the kernels; the second warms the allocator */
	t_first = now();
	if (step(be, model, opt, x, y, &loss0))
		goto fail;
	t_first = now() - t_first;
	if (step(be, model, opt, x, y, NULL))
		goto fail;
	for (int r = 0; r < reps; r++) {
		double t0 = now(), c0 = cpu_now();
		if (step(be, model, opt, x, y, NULL))
			goto fail;
		times[r] = now() - t0;
		cpus[r] = cpu_now() - c0;
	}
	if (step(be, model, opt, x, y, &loss1))
		goto fail;
	qsort(times, (size_t)reps, sizeof(double), cmp_double);
	qsort(cpus, (size_t)reps, sizeof(double), cmp_double);
	med = times[reps / 2];
	printf("CNN conv32-pool-conv64-pool-fc128-fc10, batch %d, Adam: forward + backward + step on %s\n", B,
	       clg_backend_info(be)->name);
	printf("  first step %.3f s (kernel builds); %d steps: median %.2f ms, min %.2f, max %.2f\n", t_first, reps,
	       1e3 * med, 1e3 * times[0], 1e3 * times[reps - 1]);
	printf("  CPU time of the process per step (all threads): median %.2f ms, min %.2f\n", 1e3 * cpus[reps / 2],
	       1e3 * cpus[0]);
	printf("  projected epoch (%d samples, %d steps): %.1f s\n", EPOCH_SAMPLES, (EPOCH_SAMPLES + B - 1) / B,
	       med * ((EPOCH_SAMPLES + B - 1) / B));
	printf("  loss %.6f at the first step, %.6f after %d steps on the same batch\n", loss0, loss1, reps + 3);

	if (profile) {
		prof_on = 1;
		for (int r = 0; r < prof_reps; r++)
			if (step(be, model, opt, x, y, NULL))
				goto fail;
		prof_on = 0;
		qsort(prof, (size_t)nprof, sizeof(prof[0]), by_time);
		for (int i = 0; i < nprof; i++) {
			total += prof[i].secs;
			total_cpu += prof[i].cpu;
		}
		printf("profile: %d steps, each op synchronised: %.2f ms per step (CPU time %.2f ms)\n", prof_reps,
		       1e3 * total / prof_reps, 1e3 * total_cpu / prof_reps);
		printf("  %-44s %6s %10s %6s %10s %6s\n", "op (dst shape)", "calls", "ms/step", "share", "cpu ms", "share");
		for (int i = 0; i < nprof; i++)
			printf("  %-44s %6ld %10.3f %5.1f%% %10.3f %5.1f%%\n", prof[i].key, prof[i].calls / prof_reps,
			       1e3 * prof[i].secs / prof_reps, 100 * prof[i].secs / total, 1e3 * prof[i].cpu / prof_reps,
			       100 * prof[i].cpu / total_cpu);
	}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bench_cnn on %s: %s\n", clg_backend_info(be)->name, clg_last_error());
out:
	clg_optimizer_free(opt);
	clg_named_tensors_free(&params);
	clg_module_free(model);
	clg_free(x);
	clg_free(y);
	free(xh), free(yh), free(times), free(cpus);
	clg_backend_close(be);
	return rc;
}
