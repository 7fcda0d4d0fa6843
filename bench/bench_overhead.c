/* Host overhead per op: frontend bookkeeping, clg_run's checks and autograd recording, measured on
 * the reference backend with 1-element tensors (the op's own work is a few nanoseconds), so the
 * time per op is what the library adds around every op on any device.
 * For each op: grad off (clg_no_grad), grad on (inputs require grad: a node is recorded), and grad
 * on plus the backward pass (per forward op). Each figure is the median of R rounds of K ops; the
 * tensors an op makes are freed by a scope around each round, as a training step does.
 * With --device N (an index of `clgrad devices`; 0, the reference, by default) the same ops on that
 * device, where each op is also a kernel launch: the host time per op then includes the runtime's
 * enqueue, given apart (us per launch inside clEnqueueNDRangeKernel, from clg_stats), so what is
 * left is clgrad's own host work per op on that device. The device runs the tiny kernels meanwhile.
 * Besides the chains, "add, each freed": K independent adds of the same two tensors, each result
 * freed at once (no scope), grad off and on: what `a + b` costs in Python, whose result dies when
 * the next one replaces it (bench/bench_python_overhead.py sets the two patterns side by side).
 * usage: bench_overhead [--ops K] [--rounds R] [--device N] [--json] */
#include <clgrad.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

enum { OP_ADD, OP_MUL, OP_RELU, OP_MATMUL, OP_LINEAR_RELU, NOPS };
static const char *const op_names[NOPS] = {"add", "mul", "relu", "matmul", "linear_act"};

static clg_tensor *run_op(int op, clg_tensor *a, clg_tensor *b, clg_tensor *c)
{
	switch (op) {
	case OP_ADD: return clg_add(a, b);
	case OP_MUL: return clg_mul(a, b);
	case OP_RELU: return clg_relu(a);
	case OP_MATMUL: return clg_matmul(a, b);
	default: return clg_linear_act(a, b, c, CLG_ACT_RELU);
	}
}

/* Median microseconds per op over rounds of k ops; mode 0 grad off, 1 grad on, 2 grad on + backward.
 * *enqueue_us: the mean host time a launch spent inside the runtime's enqueue (0 without launches). */
static double per_op(clg_backend *be, int op, int mode, int k, int rounds, double *enqueue_us)
{
	clg_stats s0, s1;
	double *t = calloc((size_t)rounds, sizeof(double)), med;
	float one = 0.5f;
	clg_tensor *a = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(1, 1), &one));
	clg_tensor *b = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(1, 1), &one));
	clg_tensor *c = clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(1), &one));

	if (!t || !a || !b || !c) {
		fprintf(stderr, "bench_overhead: %s\n", clg_last_error());
		exit(1);
	}
	clg_set_requires_grad(a, mode > 0);
	clg_set_requires_grad(b, mode > 0);
	clg_set_requires_grad(c, mode > 0);
	if (mode == 0)
		clg_no_grad_begin();
	clg_backend_stats(be, &s0);
	for (int r = 0; r < rounds; r++) {
		double t0 = now();
		clg_scope_begin();
		/* a chain, so that backward walks k nodes: x_{i+1} = op(x_i, b) */
		clg_tensor *x = a;
		for (int i = 0; i < k && x; i++)
			x = run_op(op, x, b, c);
		if (!x || (mode == 2 && clg_backward(clg_sum(x, 0, NULL, 0)))) {
			fprintf(stderr, "bench_overhead: %s: %s\n", op_names[op], clg_last_error());
			exit(1);
		}
		clg_scope_end();
		t[r] = (now() - t0) / k;
		clg_zero_grad(a);
		clg_zero_grad(b);
		clg_zero_grad(c);
	}
	if (mode == 0)
		clg_no_grad_end();
	clg_backend_stats(be, &s1);
	*enqueue_us = s1.n_launch > s0.n_launch ? 1e6 * (s1.enqueue_seconds - s0.enqueue_seconds) /
							  (double)(s1.n_launch - s0.n_launch)
						: 0;
	qsort(t, (size_t)rounds, sizeof(double), cmp_double);
	med = t[rounds / 2];
	free(t);
	clg_free(a);
	clg_free(b);
	clg_free(c);
	return 1e6 * med;
}

/* Median microseconds per add over rounds of k adds of a and b, each result freed at once (grad
 * on: each records a node, freed with its result). */
static double per_add_each(clg_backend *be, int grad, int k, int rounds)
{
	double *t = calloc((size_t)rounds, sizeof(double)), med;
	float one = 0.5f;
	clg_tensor *a = clg_unscope(clg_from_host(be, CLG_F32, CLG_SHAPE(1, 1), &one));
	clg_tensor *b = clg_unscope(clg_from_host(be, CLG_F32, CLG_SHAPE(1, 1), &one));

	if (!t || !a || !b) {
		fprintf(stderr, "bench_overhead: %s\n", clg_last_error());
		exit(1);
	}
	clg_set_requires_grad(a, grad);
	clg_set_requires_grad(b, grad);
	if (!grad)
		clg_no_grad_begin();
	for (int r = 0; r < rounds; r++) {
		double t0 = now();
		for (int i = 0; i < k; i++) {
			clg_tensor *y = clg_add(a, b);
			if (!y) {
				fprintf(stderr, "bench_overhead: add: %s\n", clg_last_error());
				exit(1);
			}
			clg_free(y);
		}
		t[r] = (now() - t0) / k;
	}
	if (!grad)
		clg_no_grad_end();
	qsort(t, (size_t)rounds, sizeof(double), cmp_double);
	med = t[rounds / 2];
	free(t);
	clg_free(a);
	clg_free(b);
	return 1e6 * med;
}

int main(int argc, char **argv)
{
	int k = 1000, rounds = 21, json = 0, dev = 0;
	clg_backend *be;
	double us[NOPS][3], enq[NOPS][3], each[2];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			k = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			dev = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--json"))
			json = 1;
	}
	if (k < 1 || rounds < 1 || dev < 0 || clg_backend_open(dev, &be)) {
		fprintf(stderr, "bench_overhead: %s\n", clg_last_error());
		return 1;
	}
	for (int op = 0; op < NOPS; op++)
		for (int mode = 0; mode < 3; mode++)
			us[op][mode] = per_op(be, op, mode, k, rounds, &enq[op][mode]);
	for (int grad = 0; grad < 2; grad++)
		each[grad] = per_add_each(be, grad, k, rounds);
	if (json) {
		printf("{\"device\": \"%s\", \"ops_per_round\": %d, \"rounds\": %d, \"us_per_op\": {", clg_backend_info(be)->name, k, rounds);
		for (int op = 0; op < NOPS; op++)
			printf("%s\"%s\": {\"grad_off\": %.3f, \"grad_on\": %.3f, \"grad_on_with_backward\": %.3f, "
			       "\"enqueue_us_per_launch\": [%.3f, %.3f, %.3f]}", op ? ", " : "", op_names[op], us[op][0],
			       us[op][1], us[op][2], enq[op][0], enq[op][1], enq[op][2]);
		printf("}, \"add_each_freed\": {\"grad_off\": %.3f, \"grad_on\": %.3f}}\n", each[0], each[1]);
	} else {
		printf("host overhead per op on the %s backend, 1-element tensors (median of %d rounds of %d ops):\n",
		       clg_backend_info(be)->name, rounds, k);
		printf("  %-12s %12s %12s %24s %26s\n", "op", "grad off us", "grad on us", "grad on + backward us",
		       "enqueue us a launch (off)");
		for (int op = 0; op < NOPS; op++)
			printf("  %-12s %12.3f %12.3f %24.3f %26.3f\n", op_names[op], us[op][0], us[op][1], us[op][2],
			       enq[op][0]);
		printf("  %-12s %12.3f %12.3f   (add, each result freed at once: no chain, no scope)\n", "add, each", each[0],
		       each[1]);
	}
	clg_backend_close(be);
	return 0;
}
