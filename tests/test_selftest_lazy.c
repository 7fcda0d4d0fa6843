/* The self-test at first use (backend/opencl/cl_selftest.c) on every OpenCL device, with a planted
 * wrong kernel (argv[1]: a copy of the kernels whose `add` is off by 1e-3):
 *   - the open runs no case (the op table still holds add, and the first_use hook is set);
 *   - the first clg_run of add runs add's cases first and routes it away: the call fails with
 *     CLG_ERR_UNSUPPORTED naming op and device, and its destination still holds what the caller
 *     put there (the wrong kernel never wrote a result anyone sees); the route says self-test;
 *   - mul, used next, is tested and computes right; ops never used are never tested (the cached
 *     result lists add and mul, not im2col);
 *   - a second open reads that result: add is refused at once, no case runs for it.
 * The cached self-test results (selftest-*.txt in $CLGRAD_CACHE_DIR) are removed first. */
#include "test_util.h"

#include <clg_selftest.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 60 };
static const float SENTINEL = 12345.0f;

static void clear_results(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "selftest-", 9) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

/* The text of the one cached self-test result in dir (NULL when there is none). */
static char *result_text(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400], *text = NULL;

	while (d && (e = readdir(d)) && !text) {
		FILE *f;
		long n;
		if (strncmp(e->d_name, "selftest-", 9) != 0 || strstr(e->d_name, ".tmp"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		text = calloc((size_t)n + 1, 1);
		if (text && fread(text, 1, (size_t)n, f) != (size_t)n)
			text[0] = 0;
		fclose(f);
	}
	if (d)
		closedir(d);
	return text;
}

/* dst = a op b on (3, 20), dst filled with SENTINEL first; returns the status, out what dst holds. */
static clg_status run_binary(clg_backend *be, clg_op op, const float *a, const float *b, float *out)
{
	float fill[N];
	clg_buffer *ba = NULL, *bb = NULL, *bd = NULL;
	clg_op_call c = {.op = op};
	int64_t sh[2] = {3, 20};
	clg_status st;

	for (int i = 0; i < N; i++)
		fill[i] = SENTINEL;
	if ((st = clg_buffer_alloc(be, N * 4, &ba)) || (st = clg_buffer_alloc(be, N * 4, &bb)) ||
	    (st = clg_buffer_alloc(be, N * 4, &bd)) || (st = clg_buffer_upload(ba, 0, a, N * 4)) ||
	    (st = clg_buffer_upload(bb, 0, b, N * 4)) || (st = clg_buffer_upload(bd, 0, fill, N * 4)))
		goto out;
	clg_view_contiguous(&c.src[0], ba, CLG_F32, 2, sh);
	clg_view_contiguous(&c.src[1], bb, CLG_F32, 2, sh);
	clg_view_contiguous(&c.dst, bd, CLG_F32, 2, sh);
	st = clg_run(be, &c);
	{
		clg_status dl = clg_buffer_download(bd, 0, out, N * 4);
		if (!st)
			st = dl;
	}
out:
	clg_buffer_free(ba);
	clg_buffer_free(bb);
	clg_buffer_free(bd);
	return st;
}

static void one_device(int idx, const char *dir, const char *mutant)
{
	float a[N], b[N], out[N];
	clg_backend *be = NULL;
	clg_status st;
	char *text;
	int untouched = 1;
	double err = 0;

	t_fill_uniform(a, N, 1, -1, 1);
	t_fill_uniform(b, N, 2, 0.5f, 2);
	clear_results(dir);
	clg_config_set("KERNEL_DIR", mutant);
	CHECK_OK(clg_backend_open(idx, &be));
	if (!be)
		return;
	CHECK(be->ops[CLG_OP_ADD] && be->first_use, "open of '%s': add already routed (%p) or nothing left to test (%p)",
	      be->info.name, (void *)be->ops[CLG_OP_ADD], (void *)be->first_use);
	CHECK(result_text(dir) == NULL, "open of '%s' wrote a self-test result: it should test nothing", be->info.name);

	st = run_binary(be, CLG_OP_ADD, a, b, out);
	CHECK(st == CLG_ERR_UNSUPPORTED, "first add on '%s' (wrong kernel): %s, want unsupported", be->info.name,
	      clg_status_name(st));
	CHECK(strstr(clg_last_error(), "add") && strstr(clg_last_error(), be->info.name),
	      "first add on '%s': message '%s' names neither op nor device", be->info.name, clg_last_error());
	for (int i = 0; i < N; i++)
		untouched &= out[i] == SENTINEL;
	CHECK(untouched, "first add on '%s': the destination was written (%g): a wrong result reached the caller",
	      be->info.name, (double)out[0]);
	CHECK(!be->ops[CLG_OP_ADD], "add on '%s' still in the op table after its self-test", be->info.name);

	st = run_binary(be, CLG_OP_MUL, a, b, out);
	for (int i = 0; st == CLG_OK && i < N; i++)
		err = fmax(err, fabs((double)out[i] - (double)a[i] * b[i]));
	CHECK(st == CLG_OK && err < 1e-5, "mul on '%s' after add was routed: %s, error %g", be->info.name,
	      clg_status_name(st), err);
	text = result_text(dir);
	CHECK(text && strstr(text, "\ntested add\n") && strstr(text, "\ntested mul\n") &&
	      strstr(text, "\nroute add unsupported self-test: add wrong"),
	      "the cached result on '%s' lacks add's and mul's verdicts:\n%s", be->info.name, text ? text : "(none)");
	CHECK(text && !strstr(text, "\ntested im2col\n"), "'%s': im2col was tested though never used", be->info.name);
	free(text);
	clg_backend_close(be);

	/* a second process: the cached verdict, no case for add */
	CHECK_OK(clg_backend_open(idx, &be));
	if (!be)
		return;
	CHECK(!be->ops[CLG_OP_ADD], "second open of '%s': add not routed from the cached result", be->info.name);
	st = run_binary(be, CLG_OP_ADD, a, b, out);
	CHECK(st == CLG_ERR_UNSUPPORTED && out[0] == SENTINEL, "second open of '%s': add gave %s", be->info.name,
	      clg_status_name(st));
	printf("  %-36s wrong add routed at its first use, before any result; mul right; im2col untested\n",
	       be->info.name);
	clg_backend_close(be);
	clg_config_set("KERNEL_DIR", NULL);
	clear_results(dir);
}

int main(int argc, char **argv)
{
	const char *dir = clg_config_get("CACHE_DIR");

	if (argc != 2 || !dir || !*dir || !strcmp(dir, "0")) {
		fprintf(stderr, "usage: CLGRAD_CACHE_DIR=DIR test_selftest_lazy MUTANT_KERNEL_DIR\n");
		return 2;
	}
	t_require_opencl();
	clg_config_set("SELFTEST", NULL);
	clg_config_set("KNOWN_BAD", NULL);
	for (int idx = 1; idx <= t_opencl_count(); idx++)
		one_device(idx, dir, argv[1]);
	return t_finish("test_selftest_lazy");
}
