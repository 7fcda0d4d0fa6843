/* Fast start (clg_precompile) and the fused ops' plumbing:
 *   1. on an empty kernel cache, clg_precompile builds the usual programs (in parallel threads,
 *      which checks that the driver takes concurrent clBuildProgram calls), and a linear_act
 *      afterwards builds GEMM's program only;
 *   2. a new backend on the same cache gets every program of the workload from the disk (the
 *      workload's list now holds what step 1 used), builds nothing, and the list names no program
 *      twice;
 *   3. the reference backend has nothing to precompile;
 *   4. clg_set_fused_ops(0) and (1) give the same MLP loss and gradients (the fused and the
 *      composite paths agree) on every device.
 * With --timing it also reports the cold precompile with 1 thread against the default.
 * usage: test_fast_start [--timing] */
#include "test_util.h"

#include <math.h>
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

/* a BIAS_ACT through the frontend: linear_act on tiny tensors */
static void run_fused_op(clg_backend *be)
{
	float x[6] = {1, -2, 3, -4, 5, -6}, w[6] = {0.5f, 0.25f, -1, 2, 1, 1}, b[2] = {0.1f, -0.1f}, y[4];
	clg_scope_begin();
	clg_tensor *X = clg_from_host(be, CLG_F32, CLG_SHAPE(2, 3), x), *W = clg_from_host(be, CLG_F32, CLG_SHAPE(2, 3), w);
	clg_tensor *B = clg_from_host(be, CLG_F32, CLG_SHAPE(2), b), *Y = clg_linear_act(X, W, B, CLG_ACT_RELU);
	CHECK(Y != NULL, "linear_act on %s: %s", be->info.name, clg_last_error());
	if (Y) {
		CHECK_OK(clg_to_host(Y, y, sizeof(y)));
		/* row 0: x . w0 = 0.5 - 0.5 - 3 = -3, + 0.1 -> relu 0; x . w1 = 2 - 2 + 3 = 3, - 0.1 = 2.9 */
		CHECK(y[0] == 0 && fabsf(y[1] - 2.9f) < 1e-6f, "linear_act on %s: got %g %g, want 0 2.9", be->info.name,
		      (double)y[0], (double)y[1]);
	}
	clg_scope_end();
}

/* Precompile on an empty cache folder; returns the seconds it took. */
static double cold_precompile(int dev, const char *threads, int check)
{
	char *dir = t_tmpdir();
	clg_backend *be = NULL;
	clg_stats s0, s1;
	double t = 0;
	int n = 0;

	clg_config_set("CACHE_DIR", dir);
	clg_config_set("PRECOMPILE_THREADS", threads);
	CHECK_OK(clg_backend_open(dev, &be));
	if (!be)
		goto out;
	clg_backend_stats(be, &s0);
	t = now();
	CHECK_OK(clg_precompile(be, "test mlp", CLG_F32, &n));
	t = now() - t;
	clg_backend_stats(be, &s1);
	if (check) {
		CHECK(n >= 4 && s1.n_build - s0.n_build == (uint64_t)n,
		      "cold precompile on %s: %d programs ready, %llu built (want >= 4, all built)", be->info.name, n,
		      (unsigned long long)(s1.n_build - s0.n_build));
		run_fused_op(be);
		clg_backend_stats(be, &s0);
		/* only GEMM's program may be new: its options (the tile) are known to the GEMM code alone */
		CHECK(s0.n_build - s1.n_build <= 1, "the fused op on %s built %llu programs after precompile", be->info.name,
		      (unsigned long long)(s0.n_build - s1.n_build));
		clg_backend_close(be);
		be = NULL;
		/* a new process on a warm cache: everything from the disk, nothing built */
		CHECK_OK(clg_backend_open(dev, &be));
		if (be) {
			char path[4200], line[1024];
			FILE *f;
			int lines = 0, dup = 0;
			clg_backend_stats(be, &s0);
			CHECK_OK(clg_precompile(be, "test mlp", CLG_F32, &n));
			clg_backend_stats(be, &s1);
			CHECK(s1.n_build == s0.n_build && s1.n_disk_load - s0.n_disk_load == (uint64_t)n && n >= 5,
			      "warm precompile on %s: %d ready, %llu built, %llu loaded", be->info.name, n,
			      (unsigned long long)(s1.n_build - s0.n_build), (unsigned long long)(s1.n_disk_load - s0.n_disk_load));
			/* the workload's list: n lines, none twice */
			snprintf(path, sizeof(path), "cat %s/programs-*.txt | sort | uniq -d | wc -l > %s/dups", dir, dir);
			CHECK(system(path) == 0, "cannot list %s", dir);
			snprintf(path, sizeof(path), "%s/dups", dir);
			f = fopen(path, "r");
			CHECK(f && fgets(line, sizeof(line), f), "cannot read %s", path);
			if (f) {
				dup = atoi(line);
				fclose(f);
			}
			snprintf(path, sizeof(path), "cat %s/programs-*.txt | wc -l > %s/lines", dir, dir);
			CHECK(system(path) == 0, "cannot count %s", dir);
			snprintf(path, sizeof(path), "%s/lines", dir);
			f = fopen(path, "r");
			if (f && fgets(line, sizeof(line), f))
				lines = atoi(line);
			if (f)
				fclose(f);
			CHECK(dup == 0 && lines == n, "program lists in %s: %d lines, %d repeated (want %d, 0)", dir, lines, dup, n);
		}
	}
out:
	clg_backend_close(be);
	t_rmtree(dir);
	free(dir);
	return t;
}

/* One MLP step's loss and the first layer's weight gradient, with the fused ops on or off. */
static void mlp_grads(clg_backend *be, int fused, double *loss, float *gw)
{
	enum { N = 6, I = 5, H = 4, O = 3 };
	float x[N * I], w1[H * I], b1[H], w2[O * H], b2[O], t[N * O] = {0};
	t_fill_uniform(x, N * I, 1, -1, 1);
	t_fill_uniform(w1, H * I, 2, -1, 1);
	t_fill_uniform(b1, H, 3, -1, 1);
	t_fill_uniform(w2, O * H, 4, -1, 1);
	t_fill_uniform(b2, O, 5, -1, 1);
	for (int n = 0; n < N; n++)
		t[n * O + n % O] = 1;
	clg_set_fused_ops(fused);
	clg_scope_begin();
	clg_tensor *X = clg_from_host(be, CLG_F32, CLG_SHAPE(N, I), x), *T = clg_from_host(be, CLG_F32, CLG_SHAPE(N, O), t);
	clg_tensor *W1 = clg_from_host(be, CLG_F32, CLG_SHAPE(H, I), w1), *B1 = clg_from_host(be, CLG_F32, CLG_SHAPE(H), b1);
	clg_tensor *W2 = clg_from_host(be, CLG_F32, CLG_SHAPE(O, H), w2), *B2 = clg_from_host(be, CLG_F32, CLG_SHAPE(O), b2);
	clg_set_requires_grad(W1, 1);
	clg_set_requires_grad(B1, 1);
	clg_tensor *h = clg_linear_act(X, W1, B1, CLG_ACT_GELU), *o = clg_linear(h, W2, B2);
	clg_tensor *l = clg_cross_entropy(o, T, 0.1);
	CHECK_OK(clg_backward(l));
	CHECK_OK(clg_item(l, loss));
	CHECK_OK(clg_to_host(clg_grad(W1), gw, sizeof(float) * H * I));
	clg_scope_end();
	clg_set_fused_ops(1);
}

int main(int argc, char **argv)
{
	int timing = argc > 1 && !strcmp(argv[1], "--timing"), n = -1, ndev;
	const clg_device_info *devs;
	clg_backend *ref = NULL;

	t_require_opencl();
	clg_config_set("SELFTEST", "0"); /* an empty cache would run the open-time self-test first */
	CHECK_OK(clg_devices(&devs, &ndev));
	CHECK_OK(clg_backend_open(0, &ref));
	if (ref) {
		CHECK_OK(clg_precompile(ref, "test mlp", CLG_F32, &n));
		CHECK(n == 0, "precompile on the reference backend readied %d programs, want 0", n);
		clg_backend_close(ref);
	}
	for (int d = 1; d < ndev; d++) {
		cold_precompile(d, "2", 1);
		for (int k = 0; k < 2; k++) {
			clg_backend *be = NULL;
			double l[2];
			float g[2][20];
			CHECK_OK(clg_backend_open(k ? d : 0, &be));
			if (!be)
				continue;
			mlp_grads(be, 0, &l[0], g[0]);
			mlp_grads(be, 1, &l[1], g[1]);
			double e = fabs(l[0] - l[1]);
			for (int i = 0; i < 20; i++)
				e = fmax(e, fabs((double)g[0][i] - (double)g[1][i]));
			CHECK(e < 1e-5, "fused and composite paths on %s differ by %g (loss %g vs %g)", be->info.name, e, l[0], l[1]);
			clg_backend_close(be);
		}
		if (timing) {
			double serial = cold_precompile(d, "1", 0), parallel = cold_precompile(d, "8", 0);
			printf("cold precompile on %s: 1 thread %.2f s, up to 8 threads %.2f s, ratio %.2f\n", devs[d].name, serial,
			       parallel, serial / parallel);
		}
	}
	return t_finish("test_fast_start");
}
