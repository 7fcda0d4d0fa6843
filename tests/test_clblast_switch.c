/* CLBlast's switch between its GEMM paths (backend/opencl/cl_clblast.c) on every OpenCL device:
 *   - the value in force is read back as set (probe and override agree);
 *   - the self-test's run of the GEMM cases on the indirect path (cl_selftest.c) leaves the
 *     switch where it was (CLBlast's settings outlive a backend: they are per device, per process);
 *   - $CLGRAD_GEMM_MIN_INDIRECT reaches CLBlast at the first GEMM;
 *   - GEMMs on the indirect path (switch at 1) and on the direct one (switch high) give the
 *     reference's result, transposed operands and offsets included;
 *   - with --tune (first OpenCL device only): a `clgrad tune` that fails after CLBlast's search
 *     leaves the switch as it was (cl_tune.c, clblast_restore).
 * Needs CLGRAD_CACHE_DIR (a folder of its own: the self-test must run cold). */
#include "test_util.h"

#include "cl_tune.h"

#include <clg_selftest.h>
#include <clg_tune.h>

#include <math.h>
#include <string.h>

/* C (m, n) = A @ B with A (m, k) stored transposed at offset 3, B (k, n) at offset 5, on dev
 * with CLBlast forced; compared with the host product. */
static void gemm_check(clg_backend *be, const char *what)
{
	enum { M = 67, N = 45, K = 39, OA = 3, OB = 5 };
	float ha[OA + K * M], hb[OB + K * N], hc[M * N];
	clg_buffer *a = NULL, *b = NULL, *c = NULL;
	clg_op_call g = {.op = CLG_OP_GEMM, .f = {1.0, 0.0}};
	double worst = 0;

	t_fill_uniform(ha, OA + K * M, 1, -1, 1);
	t_fill_uniform(hb, OB + K * N, 2, -1, 1);
	CHECK_OK(clg_buffer_alloc(be, sizeof(ha), &a));
	CHECK_OK(clg_buffer_alloc(be, sizeof(hb), &b));
	CHECK_OK(clg_buffer_alloc(be, sizeof(hc), &c));
	if (!a || !b || !c)
		goto out;
	CHECK_OK(clg_buffer_upload(a, 0, ha, sizeof(ha)));
	CHECK_OK(clg_buffer_upload(b, 0, hb, sizeof(hb)));
	clg_view_contiguous(&g.src[0], a, CLG_F32, 2, (int64_t[]){M, K});
	g.src[0].offset = OA, g.src[0].stride[0] = 1, g.src[0].stride[1] = M; /* A stored (K, M) */
	clg_view_contiguous(&g.src[1], b, CLG_F32, 2, (int64_t[]){K, N});
	g.src[1].offset = OB;
	clg_view_contiguous(&g.dst, c, CLG_F32, 2, (int64_t[]){M, N});
	CHECK_OK(clg_run(be, &g));
	CHECK_OK(clg_buffer_download(c, 0, hc, sizeof(hc)));
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double r = 0;
			for (int k = 0; k < K; k++)
				r += (double)ha[OA + k * M + i] * (double)hb[OB + k * N + j];
			if (!(fabs(hc[i * N + j] - r) <= worst))
				worst = fabs(hc[i * N + j] - r);
		}
	CHECK(worst < 1e-4, "%s on '%s': max error %g", what, be->info.name, worst);
out:
	clg_buffer_free(a);
	clg_buffer_free(b);
	clg_buffer_free(c);
}

static void one_device(int idx)
{
	clg_backend *be = NULL;
	size_t t0 = 0, t = 0;
	clg_selftest_info info;

	/* the switch as CLBlast has it, the self-test off */
	clg_config_set("SELFTEST", "0");
	CHECK_OK(clg_backend_open(idx, &be));
	if (!be)
		return;
	CHECK_OK(clg_cl_clblast_min_indirect(be, CLG_F32, &t0));
	CHECK(t0 > 1, "'%s': CLBlast's switch at %zu^3 (the test wants a device whose default is above 1)",
	      be->info.name, t0);
	/* probe and override agree */
	CHECK_OK(clg_cl_clblast_set_min_indirect(be, CLG_F32, 37));
	CHECK_OK(clg_cl_clblast_min_indirect(be, CLG_F32, &t));
	CHECK(t == 37, "'%s': switch set to 37, read back %zu", be->info.name, t);
	CHECK_OK(clg_cl_clblast_set_min_indirect(be, CLG_F32, 1));
	gemm_check(be, "indirect path");
	CHECK_OK(clg_cl_clblast_set_min_indirect(be, CLG_F32, 100000));
	gemm_check(be, "direct path");
	CHECK_OK(clg_cl_clblast_set_min_indirect(be, CLG_F32, t0));
	clg_backend_close(be);

	/* a cold self-test with CLBlast serving GEMM: its indirect run, then the switch as before */
	clg_config_set("SELFTEST", "1");
	CHECK_OK(clg_backend_open(idx, &be));
	if (!be)
		return;
	CHECK_OK(clg_backend_selftest_info(be, &info));
	CHECK(info.enabled && !info.from_cache && info.cases_run > 0, "'%s': self-test did not run cold (%d cases)",
	      be->info.name, info.cases_run);
	CHECK_OK(clg_cl_clblast_min_indirect(be, CLG_F32, &t));
	CHECK(t == t0, "'%s': after the self-test CLBlast's switch is at %zu^3, was %zu^3", be->info.name,
	      t, t0);
	clg_backend_close(be);

	/* $CLGRAD_GEMM_MIN_INDIRECT, at the first GEMM */
	clg_config_set("SELFTEST", "0");
	clg_config_set("GEMM_MIN_INDIRECT", "5");
	CHECK_OK(clg_backend_open(idx, &be));
	if (be) {
		gemm_check(be, "CLGRAD_GEMM_MIN_INDIRECT=5");
		CHECK_OK(clg_cl_clblast_min_indirect(be, CLG_F32, &t));
		CHECK(t == 5, "'%s': CLGRAD_GEMM_MIN_INDIRECT=5, switch at %zu^3", be->info.name, t);
		CHECK_OK(clg_cl_clblast_set_min_indirect(be, CLG_F32, t0));
		CHECK_OK(clg_cl_clblast_set_min_indirect(be, CLG_F64, t0));
		clg_backend_close(be);
	}
	clg_config_set("GEMM_MIN_INDIRECT", NULL);
}

static void say(void *user, const char *line)
{
	int *n = user;
	if (strstr(line, "clblast Xgemm"))
		(*n)++;
	fprintf(stderr, "  tune: %s\n", line);
}

/* A tune run that fails at its end (no cache folder to store in) after CLBlast's search has set
 * its parameters, the GemmRoutine switch among them: the switch must be back where it was. */
static void tune_fails(int idx)
{
	clg_backend *be = NULL;
	clg_tune_report *r = calloc(1, sizeof(*r));
	int xgemm_lines = 0;
	clg_tune_options o = {.budget_s = 40, .shapes = CLG_TUNE_SHAPES_SMALL, .progress = say, .user = &xgemm_lines};
	size_t t0 = 0, t = 0;
	clg_status st;

	clg_config_set("SELFTEST", "0");
	clg_config_set("GEMM", NULL);
	CHECK_OK(clg_backend_open(idx, &be));
	if (!be || !r)
		goto out;
	CHECK_OK(clg_cl_clblast_min_indirect(be, CLG_F32, &t0));
	clg_config_set("CACHE_DIR", "0");
	st = clg_tune_run(be, &o, r);
	CHECK(st != CLG_OK && strstr(clg_last_error(), "cache"), "tune without a cache folder: %s: %s",
	      clg_status_name(st), clg_last_error());
	CHECK(xgemm_lines > 0, "'%s': CLBlast's Xgemm search did not run (budget too small here?)", be->info.name);
	CHECK_OK(clg_cl_clblast_min_indirect(be, CLG_F32, &t));
	CHECK(t == t0, "'%s': after a failed tune CLBlast's switch is at %zu^3, was %zu^3", be->info.name, t, t0);
out:
	clg_backend_close(be);
	free(r);
}

int main(int argc, char **argv)
{
	const char *dir = clg_config_get("CACHE_DIR");

	if (argc == 2 && !strcmp(argv[1], "--tune")) {
		t_require_opencl();
		tune_fails(1);
		return t_finish("test_clblast_switch --tune");
	}

	if (!dir || !*dir || !strcmp(dir, "0")) {
		fprintf(stderr, "usage: CLGRAD_CACHE_DIR=DIR test_clblast_switch (a folder of its own)\n");
		return 2;
	}
	t_require_opencl();
	clg_config_set("GEMM", "clblast");
	clg_config_set("KNOWN_BAD", NULL);
	for (int idx = 1; idx <= t_opencl_count(); idx++) {
		char cmd[4200];
		/* the self-test's cached results go, so it runs cold */
		snprintf(cmd, sizeof(cmd), "rm -f '%s'/selftest-*.txt", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "test_clblast_switch: could not clear %s\n", dir);
		one_device(idx);
	}
	return t_finish("test_clblast_switch");
}
