/* Scaled dot-product attention, fused (ATTENTION_FWD / ATTENTION_BWD) against the composite of
 * GEMM, scale, mask and softmax (clg_set_fused_ops(0), as CLGRAD_FUSED=0), causal, float32:
 * median milliseconds of the forward (no graph) and of forward + backward, per T. With --ops, then
 * the fused ops alone (clg_op_timer: the device waited for before and after each op), ms a call.
 * --fused skips the composed runs (their columns print 0), for timing the fused kernels by CPU time.
 * usage: bench_attention [--device N] [--B 16] [--H 4] [--Dh 16] [--reps 10] [--ops] [--fused] [T ...]
 *        (T: 64 128 256) */
#include <clgrad.h>
#include <clg_op_timer.h>

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

static clg_tensor *input(clg_backend *be, int64_t B, int64_t H, int64_t T, int64_t D, unsigned seed)
{
	size_t n = (size_t)(B * H * T * D);
	float *x = malloc(n * sizeof(float));
	clg_tensor *t;
	for (size_t i = 0; x && i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		x[i] = (float)(seed >> 8) * (2.0f / 16777216.0f) - 1.0f;
	}
	t = x ? clg_keep(clg_from_host(be, CLG_F32, CLG_SHAPE(B, H, T, D), x)) : NULL;
	free(x);
	return t;
}

/* median ms of reps runs: forward only (bwd 0) or forward + backward */
static double run(clg_backend *be, clg_tensor **qkv, int bwd, int reps)
{
	double *t = calloc((size_t)reps + 1, sizeof(double)), med;
	for (int r = -1; r < reps; r++) { /* r = -1: warm-up (kernel builds) */
		double t0 = now();
		clg_scope_begin();
		if (!bwd)
			clg_no_grad_begin();
		clg_tensor *y = clg_scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], 1, 0.0);
		if (!bwd)
			clg_no_grad_end();
		if (!y || (bwd && clg_backward(clg_sum(y, 0, NULL, 0))) || clg_synchronize(be)) {
			fprintf(stderr, "bench_attention: %s\n", clg_last_error());
			exit(1);
		}
		clg_scope_end();
		for (int i = 0; i < 3; i++)
			clg_zero_grad(qkv[i]);
		if (r >= 0)
			t[r] = (now() - t0) * 1e3;
	}
	qsort(t, (size_t)reps, sizeof(double), cmp_double);
	med = t[reps / 2];
	free(t);
	return med;
}

int main(int argc, char **argv)
{
	int dev = 0, reps = 10, nT = 0, ops = 0, fused_only = 0;
	int64_t B = 16, H = 4, Dh = 16, Ts[16];
	clg_backend *be;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < argc)
			dev = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--B") && i + 1 < argc)
			B = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--H") && i + 1 < argc)
			H = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--Dh") && i + 1 < argc)
			Dh = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--ops"))
			ops = 1;
		else if (!strcmp(argv[i], "--fused"))
			fused_only = 1;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (nT < 16 && atoll(argv[i]) > 0)
			Ts[nT++] = atoll(argv[i]);
	}
	if (!nT)
		Ts[0] = 64, Ts[1] = 128, Ts[2] = 256, nT = 3;
	if (reps < 1 || clg_backend_open(dev, &be)) {
		fprintf(stderr, "bench_attention: %s\n", clg_last_error());
		return 1;
	}
	printf("device %s, causal, float32, B %lld H %lld Dh %lld, median of %d (ms)\n", clg_backend_info(be)->name, (long long)B,
	       (long long)H, (long long)Dh, reps);
	printf("%6s %12s %12s %12s %12s\n", "T", "fwd fused", "fwd composed", "f+b fused", "f+b composed");
	for (int ti = 0; ti < nT; ti++) {
		clg_tensor *qkv[3];
		double ms[4];
		for (int i = 0; i < 3; i++) {
			qkv[i] = input(be, B, H, Ts[ti], Dh, 7u + (unsigned)i);
			if (!qkv[i]) {
				fprintf(stderr, "bench_attention: %s\n", clg_last_error());
				return 1;
			}
			clg_set_requires_grad(qkv[i], 1);
		}
		for (int m = 0; m < 4; m++) {
			clg_set_fused_ops(!(m & 1));
			ms[m] = fused_only && (m & 1) ? 0.0 : run(be, qkv, m >= 2, reps);
		}
		printf("%6lld %12.3f %12.3f %12.3f %12.3f\n", (long long)Ts[ti], ms[0], ms[1], ms[2], ms[3]);
		if (ops) { /* the fused forward and backward op calls alone */
			clg_op_timer tm = {0};
			clg_set_fused_ops(1);
			clg_backend_set_op_timer(be, &tm);
			run(be, qkv, 1, reps);
			clg_backend_set_op_timer(be, NULL);
			for (int e = 0; e < tm.n; e++)
				if (!strncmp(tm.e[e].key, "attention", 9))
					printf("       %-40s %8.3f ms a call (%lld calls)\n", tm.e[e].key,
					       1e3 * tm.e[e].seconds / (double)tm.e[e].calls, (long long)tm.e[e].calls);
			clg_op_timer_clear(&tm);
		}
		for (int i = 0; i < 3; i++)
			clg_free(qkv[i]);
	}
	clg_backend_close(be);
	return 0;
}
