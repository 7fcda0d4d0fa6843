/* Routing at open (backend/opencl/cl_selftest.c) on every OpenCL device:
 *   - the real kernels: no routes; the second open reads the cached result;
 *   - argv[1] (a copy of the kernels with a wrong `add`): add is routed to unsupported, clg_run
 *     fails with CLG_ERR_UNSUPPORTED naming op and device, other ops still compute; the changed
 *     sources were re-tested (not read from the real kernels' cached result);
 *   - CLGRAD_KNOWN_BAD routes as asked (gemm fallback still right; exp unsupported), with
 *     CLGRAD_SELFTEST=0 (which must also leave the wrong add undetected);
 *   - --gemm DIR (a copy with a wrong own GEMM kernel): gemm falls back to the other
 *     implementation and still computes right.
 * The self-test's cached results (selftest-*.txt in $CLGRAD_CACHE_DIR) are removed first, so
 * each run starts cold; program binaries stay (they are what makes a cold self-test slow). */
#include "test_util.h"

#include <clg_selftest.h>
#include <dirent.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Removes the cached self-test results; counts leftover temporary files (must be none). */
static int clear_results(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int tmp = 0;
	char path[4400];

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "selftest-", 9) != 0)
			continue;
		if (strstr(e->d_name, ".tmp"))
			tmp++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	return tmp;
}

static clg_backend *open_dev(int idx, clg_selftest_info *info, double *secs)
{
	clg_backend *be = NULL;
	double t0 = now_s();
	clg_status st = clg_backend_open(idx, &be);

	*secs = now_s() - t0;
	CHECK(st == CLG_OK, "open device %d: %s", idx, clg_last_error());
	if (be)
		CHECK_OK(clg_backend_selftest_info(be, info));
	return be;
}

static const clg_route *route_of(clg_backend *be, clg_op op, int *nroutes)
{
	const clg_route *r;
	int n;
	CHECK_OK(clg_backend_routes(be, &r, &n));
	*nroutes = n;
	for (int k = 0; k < n; k++)
		if (r[k].op == op)
			return &r[k];
	return NULL;
}

/* Runs a binary op (or GEMM) on (rows, cols) inputs; returns the status, *err the max error
 * against want(a, b) computed on the host (GEMM: a (4, 3) @ b (3, 5)). */
static clg_status run_binary(clg_backend *be, clg_op op, double *err)
{
	enum { N = 60 };
	float a[N], b[N], out[N];
	clg_buffer *ba = NULL, *bb = NULL, *bd = NULL;
	clg_op_call c = {.op = op, .f = {1, 0}};
	clg_status st;
	int64_t sh[2] = {3, 20}, sa[2] = {4, 3}, sb[2] = {3, 5}, sd[2] = {4, 5};

	*err = INFINITY;
	t_fill_uniform(a, N, 1, -1, 1);
	t_fill_uniform(b, N, 2, 0.5f, 2);
	if ((st = clg_buffer_alloc(be, sizeof(a), &ba)) || (st = clg_buffer_alloc(be, sizeof(b), &bb)) ||
	    (st = clg_buffer_alloc(be, sizeof(out), &bd)) || (st = clg_buffer_upload(ba, 0, a, sizeof(a))) ||
	    (st = clg_buffer_upload(bb, 0, b, sizeof(b))))
		goto out;
	if (op == CLG_OP_GEMM) {
		clg_view_contiguous(&c.src[0], ba, CLG_F32, 2, sa);
		clg_view_contiguous(&c.src[1], bb, CLG_F32, 2, sb);
		clg_view_contiguous(&c.dst, bd, CLG_F32, 2, sd);
	} else {
		clg_view_contiguous(&c.src[0], ba, CLG_F32, 2, sh);
		clg_view_contiguous(&c.src[1], bb, CLG_F32, 2, sh);
		clg_view_contiguous(&c.dst, bd, CLG_F32, 2, sh);
	}
	if ((st = clg_run(be, &c)) || (st = clg_buffer_download(bd, 0, out, sizeof(out))))
		goto out;
	*err = 0;
	if (op == CLG_OP_GEMM) {
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 5; j++) {
				double s = 0;
				for (int k = 0; k < 3; k++)
					s += (double)a[i * 3 + k] * b[k * 5 + j];
				*err = fmax(*err, fabs(out[i * 5 + j] - s));
			}
	} else {
		for (int i = 0; i < N; i++) {
			double want = op == CLG_OP_ADD ? (double)a[i] + b[i] : op == CLG_OP_MUL ? (double)a[i] * b[i]
				    : (double)a[i] - b[i];
			*err = fmax(*err, fabs(out[i] - want));
		}
	}
out:
	clg_buffer_free(ba);
	clg_buffer_free(bb);
	clg_buffer_free(bd);
	return st;
}

static void expect_works(clg_backend *be, clg_op op, const char *when)
{
	double err;
	clg_status st = run_binary(be, op, &err);
	CHECK(st == CLG_OK && err < 1e-5, "%s: %s on '%s': %s, error %g (%s)", when, clg_op_name(op), be->info.name,
	      clg_status_name(st), err, clg_last_error());
}

static void expect_unsupported(clg_backend *be, clg_op op, const char *when)
{
	double err;
	clg_status st = run_binary(be, op, &err);
	const char *msg = clg_last_error();
	CHECK(st == CLG_ERR_UNSUPPORTED, "%s: %s on '%s' gave %s, want unsupported", when, clg_op_name(op),
	      be->info.name, clg_status_name(st));
	CHECK(strstr(msg, clg_op_name(op)) && strstr(msg, be->info.name), "%s: message '%s' names neither op nor device",
	      when, msg);
}

static void real_and_mutant(int idx, const char *dir, const char *mutant)
{
	clg_selftest_info in;
	clg_backend *be;
	const clg_route *r;
	double cold, warm, mcold, mwarm;
	int n, cold_cases;

	/* real kernels, cold then warm */
	clg_config_set("KERNEL_DIR", NULL);
	if (!(be = open_dev(idx, &in, &cold)))
		return;
	route_of(be, CLG_OP_ADD, &n);
	CHECK(n == 0, "real kernels on '%s': %d routes, want none", be->info.name, n);
	CHECK(in.enabled && !in.from_cache && in.cases_run > 50 && in.cases_failed == 0 && in.cases_error == 0,
	      "real kernels, first open: enabled %d, from cache %d, %d cases, %d wrong, %d errors", in.enabled,
	      in.from_cache, in.cases_run, in.cases_failed, in.cases_error);
	expect_works(be, CLG_OP_ADD, "real kernels");
	cold_cases = in.cases_run;
	clg_backend_close(be);
	if (!(be = open_dev(idx, &in, &warm)))
		return;
	CHECK(in.from_cache && in.cases_run == 0, "real kernels, second open: from cache %d, %d cases", in.from_cache,
	      in.cases_run);
	CHECK(in.seconds < 0.05, "warm self-test added %.3f s to the open (want < 50 ms)", in.seconds);
	printf("  %-28s self-test cold: open %.3f s (self-test %d cases); warm: open %.4f s (cached result %.2f ms)\n",
	       be->info.name, cold, cold_cases, warm, 1e3 * in.seconds);
	clg_backend_close(be);

	/* the wrong add: the changed source is re-tested, add becomes unsupported */
	clg_config_set("KERNEL_DIR", mutant);
	if (!(be = open_dev(idx, &in, &mcold)))
		return;
	CHECK(!in.from_cache && in.cases_failed > 0, "mutant kernels: from cache %d, %d wrong (want a fresh run that fails)",
	      in.from_cache, in.cases_failed);
	r = route_of(be, CLG_OP_ADD, &n);
	CHECK(n == 1 && r && r->action == CLG_ROUTE_UNSUPPORTED && strstr(r->why, "self-test"),
	      "mutant kernels: %d routes, add %s", n, r ? r->why : "not routed");
	expect_unsupported(be, CLG_OP_ADD, "mutant kernels");
	expect_works(be, CLG_OP_MUL, "mutant kernels");
	expect_works(be, CLG_OP_SUB, "mutant kernels");
	expect_works(be, CLG_OP_GEMM, "mutant kernels");
	clg_backend_close(be);
	/* ... and the same from the cache */
	if (!(be = open_dev(idx, &in, &mwarm)))
		return;
	r = route_of(be, CLG_OP_ADD, &n);
	CHECK(in.from_cache && n == 1 && r && r->action == CLG_ROUTE_UNSUPPORTED,
	      "mutant kernels, second open: from cache %d, %d routes", in.from_cache, n);
	expect_unsupported(be, CLG_OP_ADD, "mutant kernels, cached");
	expect_works(be, CLG_OP_MUL, "mutant kernels, cached");
	printf("  %-28s mutant add: routed to unsupported (%s); cold open %.3f s, warm %.4f s\n", be->info.name,
	       r ? r->why : "-", mcold, mwarm);
	clg_backend_close(be);

	/* back to the real kernels: their result is still cached, with no routes */
	clg_config_set("KERNEL_DIR", NULL);
	if (!(be = open_dev(idx, &in, &warm)))
		return;
	route_of(be, CLG_OP_ADD, &n);
	CHECK(in.from_cache && n == 0, "real kernels again: from cache %d, %d routes", in.from_cache, n);
	clg_backend_close(be);
	CHECK(clear_results(dir) == 0, "temporary files left in %s", dir);
}

static void known_bad(int idx, const char *mutant)
{
	clg_selftest_info in;
	clg_backend *be;
	const clg_route *r;
	double secs;
	int n;

	/* CLGRAD_SELFTEST=0: the list applies, no case runs, the wrong add goes unnoticed */
	clg_config_set("SELFTEST", "0");
	clg_config_set("KERNEL_DIR", mutant);
	clg_config_set("KNOWN_BAD", "gemm:fallback:test fallback;exp:unsupported:test exp;nosuchop:unsupported:x;add:sideways:x");
	if (!(be = open_dev(idx, &in, &secs)))
		goto out;
	CHECK(!in.enabled && in.cases_run == 0, "CLGRAD_SELFTEST=0: enabled %d, %d cases", in.enabled, in.cases_run);
	r = route_of(be, CLG_OP_GEMM, &n);
	CHECK(n == 2, "CLGRAD_KNOWN_BAD: %d routes, want 2 (gemm, exp; the malformed entries skipped)", n);
	CHECK(r && r->action == CLG_ROUTE_FALLBACK && strstr(r->why, "test fallback"), "gemm: %s",
	      r ? r->why : "not routed");
	r = route_of(be, CLG_OP_EXP, &n);
	CHECK(r && r->action == CLG_ROUTE_UNSUPPORTED && strstr(r->why, "test exp"), "exp: %s", r ? r->why : "not routed");
	expect_works(be, CLG_OP_GEMM, "gemm routed to its fallback");
	{
		double err;
		CHECK(run_binary(be, CLG_OP_ADD, &err) == CLG_OK && err > 1e-4,
		      "CLGRAD_SELFTEST=0 should leave the wrong add in place (error %g)", err);
	}
	clg_backend_close(be);
	/* exp unsupported: a unary op, checked through its status */
	clg_config_set("KNOWN_BAD", "exp:unsupported:test exp");
	if ((be = open_dev(idx, &in, &secs))) {
		clg_buffer *b = NULL;
		clg_op_call c = {.op = CLG_OP_EXP};
		int64_t sh[1] = {4};
		CHECK_OK(clg_buffer_alloc(be, 16, &b));
		clg_view_contiguous(&c.dst, b, CLG_F32, 1, sh);
		c.src[0] = c.dst;
		CHECK(clg_run(be, &c) == CLG_ERR_UNSUPPORTED && strstr(clg_last_error(), "exp"), "exp: %s",
		      clg_last_error());
		clg_buffer_free(b);
		clg_backend_close(be);
	}
	printf("  CLGRAD_KNOWN_BAD: gemm -> fallback (still right), exp -> unsupported\n");
out:
	clg_config_set("SELFTEST", NULL);
	clg_config_set("KERNEL_DIR", NULL);
	clg_config_set("KNOWN_BAD", NULL);
}

static void wrong_gemm(int idx, const char *dir, const char *gemm_mutant)
{
	clg_selftest_info in;
	clg_backend *be;
	const clg_route *r;
	double secs;
	int n;

	clg_config_set("KERNEL_DIR", gemm_mutant);
	if ((be = open_dev(idx, &in, &secs))) {
		r = route_of(be, CLG_OP_GEMM, &n);
		if (be->info.type == CLG_DEV_CPU) /* the own kernels are the default there */
			CHECK(r && r->action == CLG_ROUTE_FALLBACK && strstr(r->why, "self-test"),
			      "wrong own GEMM on '%s': %s", be->info.name, r ? r->why : "not routed");
		else /* CLBlast is: nothing to route */
			CHECK(!r, "wrong own GEMM on '%s' (not used by default): routed (%s)", be->info.name, r->why);
		expect_works(be, CLG_OP_GEMM, "wrong own GEMM, routed");
		printf("  %-28s wrong own GEMM: %s (open %.1f s)\n", be->info.name, r ? r->why : "-", secs);
		clg_backend_close(be);
	}
	clg_config_set("KERNEL_DIR", NULL);
	CHECK(clear_results(dir) == 0, "temporary files left in %s", dir);
}

int main(int argc, char **argv)
{
	const char *dir = clg_config_get("CACHE_DIR"), *mutant = NULL, *gemm_mutant = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--gemm") && i + 1 < argc)
			gemm_mutant = argv[++i];
		else
			mutant = argv[i];
	}
	if ((!mutant && !gemm_mutant) || !dir || !*dir || !strcmp(dir, "0")) {
		fprintf(stderr, "usage: CLGRAD_CACHE_DIR=DIR test_selftest MUTANT_KERNEL_DIR | --gemm GEMM_MUTANT_DIR\n");
		return 2;
	}
	t_require_opencl();
	clg_config_set("SELFTEST", NULL);
	clg_config_set("KNOWN_BAD", NULL);
	for (int idx = 1; idx <= t_opencl_count(); idx++) {
		clear_results(dir);
		if (gemm_mutant) {
			wrong_gemm(idx, dir, gemm_mutant);
			continue;
		}
		real_and_mutant(idx, dir, mutant);
		known_bad(idx, mutant);
		/* the reference backend has no routes */
		{
			clg_backend *ref;
			const clg_route *r;
			int n = -1;
			CHECK_OK(clg_backend_open(0, &ref));
			CHECK_OK(clg_backend_routes(ref, &r, &n));
			CHECK(n == 0, "reference backend: %d routes", n);
			clg_backend_close(ref);
		}
	}
	return t_finish("test_selftest");
}
