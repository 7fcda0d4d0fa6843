/* Every embedded kernel program builds on every OpenCL device, for float32 and (where the device
 * has fp64) float64, and those with a float16 path (storage through vload_half / vstore_half) for
 * float16 on every device, cl_khr_fp16 or not (native half arithmetic where the device has it); a broken kernel from CLGRAD_KERNEL_DIR fails with the build log in the
 * message; CLGRAD_KERNEL_DIR pointing at the real kernels_cl folder works. Every kernel of every
 * file is guarded for builds of one kernel (-DCLG_SUBSET, prelude.cl's CLG_WANT): the file with
 * none named holds no kernel, with all named the same kernels as the plain build. (Each kernel
 * built alone is what clg_cl_kernel does on Intel's runtime and rusticl: test_ops there.) */
#include "test_util.h"
#include "cl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef CLG_TEST_KERNEL_SRC_DIR
#error "CMake passes the kernels_cl folder as CLG_TEST_KERNEL_SRC_DIR"
#endif

enum { N = 37 };

/* float16 programs get -DUSE_NATIVE_HALF exactly where the device reports cl_khr_fp16, and not
 * under CLGRAD_NATIVE_HALF=0; float32 never. */
static void check_native_half(clg_backend *be)
{
	char opts[256];

	clg_cl_dtype_options(be, CLG_F16, opts, sizeof(opts));
	CHECK(!strstr(opts, "USE_NATIVE_HALF") == !be->info.has_fp16, "'%s' (fp16 %d): float16 options '%s'",
	      be->info.name, be->info.has_fp16, opts);
	CHECK(clg_half_native(&be->info) == be->info.has_fp16, "'%s': clg_half_native", be->info.name);
	clg_cl_dtype_options(be, CLG_F32, opts, sizeof(opts));
	CHECK(!strstr(opts, "USE_NATIVE_HALF"), "float32 options '%s'", opts);
	clg_config_set("NATIVE_HALF", "0");
	clg_cl_dtype_options(be, CLG_F16, opts, sizeof(opts));
	CHECK(!strstr(opts, "USE_NATIVE_HALF") && !clg_half_native(&be->info), "CLGRAD_NATIVE_HALF=0: '%s'", opts);
	clg_config_set("NATIVE_HALF", NULL);
	printf("  '%s': fp16 %s\n", be->info.name, be->info.has_fp16 ? "native" : "storage only");
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The ';'-separated kernel names of prog, sorted, into out (n of them); 0 on failure. */
static int kernel_names(cl_program prog, char *buf, size_t len, const char **out, int max, int *n)
{
	*n = 0;
	if (clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, len, buf, NULL) != CL_SUCCESS)
		return 0;
	for (char *t = strtok(buf, ";"); t && *n < max; t = strtok(NULL, ";"))
		if (*t)
			out[(*n)++] = t;
	qsort(out, (size_t)*n, sizeof(*out), cmp_names);
	return 1;
}

/* The subset builds of program name (float32 options opts) against its plain build full; counts
 * the builds it makes in *builds. */
static void check_subsets(clg_backend *be, const char *name, const char *opts, cl_program full, int *builds)
{
	enum { MAXK = 256 };
	static char fnames[16384], snames[16384], sub[16384];
	const char *fk[MAXK], *sk[MAXK];
	int nf = 0, ns = 0, same;
	size_t used, none = 0;
	cl_program prog = NULL;

	if (!kernel_names(full, fnames, sizeof(fnames), fk, MAXK, &nf)) {
		CHECK(0, "'%s' on '%s': CL_PROGRAM_KERNEL_NAMES failed", name, be->info.name);
		return;
	}
	snprintf(sub, sizeof(sub), "%s -DCLG_SUBSET", opts);
	CHECK_OK(clg_cl_program(be, name, sub, &prog));
	if (prog) {
		(*builds)++;
		CHECK(clGetProgramInfo(prog, CL_PROGRAM_NUM_KERNELS, sizeof(none), &none, NULL) == CL_SUCCESS && none == 0,
		      "'%s' on '%s' with -DCLG_SUBSET and no kernel named holds %zu kernels (not guarded by CLG_WANT)",
		      name, be->info.name, none);
	}
	used = strlen(sub);
	for (int i = 0; i < nf && used < sizeof(sub) - 200; i++)
		used += (size_t)snprintf(sub + used, sizeof(sub) - used, " -DCLG_K_%s=1", fk[i]);
	prog = NULL;
	CHECK_OK(clg_cl_program(be, name, sub, &prog));
	if (!prog)
		return;
	(*builds)++;
	same = kernel_names(prog, snames, sizeof(snames), sk, MAXK, &ns) && ns == nf;
	for (int i = 0; same && i < nf; i++)
		same = !strcmp(fk[i], sk[i]);
	CHECK(same, "'%s' on '%s': the %d kernels named as a subset built %d (a guard's name differs from its kernel's)",
	      name, be->info.name, nf, ns);
	printf("  %-14s x %-28s x float32 : subsets: none named %zu kernels, all named %d of %d\n", name, be->info.name,
	       none, ns, nf);
}

static void build_all(clg_backend *be)
{
	const char *const *names = clg_cl_program_names();
	clg_dtype dts[3] = {CLG_F32, CLG_F64, CLG_F16};
	/* the programs of the ops that take float16 (EW, REDUCE, ROW, GEMM, pooling, fused) */
	static const char *const f16_programs[] = {"elementwise", "reduce", "softmax", "norm", "gemm_half", "conv",
						   "fused", NULL};
	int nf16 = 0;
	int nprog = 0, expect_builds = 0;
	clg_stats st;

	for (int p = 0; names[p]; p++) {
		nprog++;
		int f16 = 0;
		for (int k = 0; f16_programs[k]; k++)
			f16 |= !strcmp(names[p], f16_programs[k]);
		nf16 += f16;
		for (int t = 0; t < 3; t++) {
			char opts[256];
			cl_program prog = NULL;
			size_t nk = 0;
			clg_status s;

			if (dts[t] == CLG_F64 && !be->info.has_fp64) {
				printf("  %-14s x %-28s x %-8s: skipped (no fp64)\n", names[p], be->info.name,
				       clg_dtype_name(dts[t]));
				continue;
			}
			if (dts[t] == CLG_F16 && !f16) {
				printf("  %-14s x %-28s x %-8s: skipped (no float16 path)\n", names[p], be->info.name,
				       clg_dtype_name(dts[t]));
				continue;
			}
			clg_cl_dtype_options(be, dts[t], opts, sizeof(opts));
			s = clg_cl_program(be, names[p], opts, &prog);
			printf("  %-14s x %-28s x %-8s: %s\n", names[p], be->info.name, clg_dtype_name(dts[t]),
			       s ? clg_last_error() : "built");
			CHECK(s == CLG_OK && prog, "program '%s' (%s) on '%s': %s: %s", names[p], clg_dtype_name(dts[t]),
			      be->info.name, clg_status_name(s), clg_last_error());
			if (s || !prog)
				continue;
			expect_builds++;
			CHECK(clGetProgramInfo(prog, CL_PROGRAM_NUM_KERNELS, sizeof(nk), &nk, NULL) == CL_SUCCESS && nk > 0,
			      "program '%s' on '%s' holds %zu kernels", names[p], be->info.name, nk);
			if (dts[t] == CLG_F32)
				check_subsets(be, names[p], opts, prog, &expect_builds);
		}
	}
	CHECK(nprog >= 2, "only %d embedded programs", nprog);
	CHECK(nf16 == 7, "%d of the 7 programs with a float16 path are embedded", nf16);
	clg_backend_stats(be, &st);
	CHECK((int)st.n_build == expect_builds, "n_build %llu, expected %d", (unsigned long long)st.n_build,
	      expect_builds);
	CHECK(st.n_disk_load == 0, "CLGRAD_CACHE_DIR=0 but %llu programs came from disk",
	      (unsigned long long)st.n_disk_load);
	/* a second request is a memory hit, not a rebuild */
	{
		char opts[256];
		cl_program prog;
		clg_cl_dtype_options(be, CLG_F32, opts, sizeof(opts));
		CHECK_OK(clg_cl_program(be, names[0], opts, &prog));
		clg_backend_stats(be, &st);
		CHECK((int)st.n_build == expect_builds && st.n_mem_hit >= 1, "rebuild instead of memory hit");
	}
}

/* Buffers for c = a + b with N floats. */
typedef struct {
	clg_buffer *a, *b, *c;
	clg_op_call call;
} add_case;

static int add_setup(clg_backend *be, add_case *k)
{
	float x[N], y[N];
	int64_t shape[1] = {N};

	memset(k, 0, sizeof(*k));
	for (int i = 0; i < N; i++) {
		x[i] = (float)i;
		y[i] = 0.5f * (float)i - 3;
	}
	if (clg_buffer_alloc(be, sizeof(x), &k->a) || clg_buffer_alloc(be, sizeof(x), &k->b) ||
	    clg_buffer_alloc(be, sizeof(x), &k->c) || clg_buffer_upload(k->a, 0, x, sizeof(x)) ||
	    clg_buffer_upload(k->b, 0, y, sizeof(y))) {
		CHECK(0, "setting up buffers: %s", clg_last_error());
		return -1;
	}
	k->call.op = CLG_OP_ADD;
	clg_view_contiguous(&k->call.src[0], k->a, CLG_F32, 1, shape);
	clg_view_contiguous(&k->call.src[1], k->b, CLG_F32, 1, shape);
	clg_view_contiguous(&k->call.dst, k->c, CLG_F32, 1, shape);
	return 0;
}

static void add_check(add_case *k, const char *what)
{
	float z[N];
	int bad = 0;
	CHECK_OK(clg_buffer_download(k->c, 0, z, sizeof(z)));
	for (int i = 0; i < N; i++)
		bad += fabsf(z[i] - (1.5f * (float)i - 3)) > 1e-5f;
	CHECK(bad == 0, "%s: %d wrong sums", what, bad);
}

static void add_free(add_case *k)
{
	clg_buffer_free(k->a);
	clg_buffer_free(k->b);
	clg_buffer_free(k->c);
}

static const char broken_src[] =
	"/* deliberately broken for test_kernels_compile */\n"
	"__kernel void add_c(__global float *d)\n"
	"{\n"
	"\td[0] = clgrad_undeclared_identifier;\n"
	"\tint x = ;\n"
	"}\n";

static void check_broken(clg_backend *be, const char *dir)
{
	char path[4096];
	FILE *f;
	add_case k;
	clg_status s;
	const char *msg, *log;

	snprintf(path, sizeof(path), "%s/elementwise.cl", dir);
	f = fopen(path, "w");
	CHECK(f != NULL, "cannot write %s", path);
	if (!f)
		return;
	fputs(broken_src, f);
	fclose(f);

	clg_config_set("KERNEL_DIR", dir);
	if (add_setup(be, &k) == 0) {
		for (int attempt = 0; attempt < 2; attempt++) {
			/* a failed build is not cached: the second attempt fails the same way */
			clg_clear_error();
			s = clg_run(be, &k.call);
			msg = clg_last_error();
			if (attempt == 0)
				printf("broken kernel on '%s' -> %s:\n%s\n", be->info.name, clg_status_name(s), msg);
			CHECK(s == CLG_ERR_BUILD, "broken kernel: %s, want build error", clg_status_name(s));
			CHECK(strstr(msg, be->info.name) != NULL, "message lacks the device name: %s", msg);
			CHECK(strstr(msg, "elementwise") != NULL, "message lacks the program name: %s", msg);
			log = strstr(msg, "build log");
			CHECK(log != NULL, "message lacks the build log: %s", msg);
			if (log) {
				CHECK(clg_contains_nocase(log, "error"), "build log part has no compiler error: %s", log);
				CHECK(strstr(log, "clgrad_undeclared_identifier") != NULL,
				      "build log does not name the bad identifier: %s", log);
			}
		}
		/* another program, missing from the folder: an I/O error naming the file */
		{
			clg_op_call sum = {.op = CLG_OP_SUM};
			int64_t one[1] = {1}, sh[2] = {1, N};
			clg_view_contiguous(&sum.src[0], k.a, CLG_F32, 2, sh);
			clg_view_contiguous(&sum.dst, k.c, CLG_F32, 1, one);
			s = clg_run(be, &sum);
			CHECK(s == CLG_ERR_IO, "missing reduce.cl: %s, want I/O error", clg_status_name(s));
			CHECK(strstr(clg_last_error(), "reduce") != NULL && strstr(clg_last_error(), dir) != NULL,
			      "missing kernel file message: %s", clg_last_error());
		}
		/* the same backend recovers once the embedded sources are back */
		clg_config_set("KERNEL_DIR", NULL);
		CHECK_OK(clg_run(be, &k.call));
		add_check(&k, "after a failed build");
	}
	add_free(&k);
	clg_config_set("KERNEL_DIR", NULL);
	remove(path);
}

static void check_kernel_dir(int index)
{
	clg_backend *be = NULL;
	add_case k;
	clg_stats st;

	clg_config_set("KERNEL_DIR", CLG_TEST_KERNEL_SRC_DIR);
	CHECK_OK(clg_backend_open(index, &be));
	if (!be)
		goto out;
	if (add_setup(be, &k) == 0) {
		CHECK_OK(clg_run(be, &k.call));
		add_check(&k, "CLGRAD_KERNEL_DIR=" CLG_TEST_KERNEL_SRC_DIR);
		/* and a second program from the folder: sum over a (1, N) view */
		{
			clg_op_call sum = {.op = CLG_OP_SUM};
			int64_t one[1] = {1}, sh[2] = {1, N};
			float r = 0;
			clg_view_contiguous(&sum.src[0], k.a, CLG_F32, 2, sh);
			clg_view_contiguous(&sum.dst, k.c, CLG_F32, 1, one);
			CHECK_OK(clg_run(be, &sum));
			CHECK_OK(clg_buffer_download(k.c, 0, &r, sizeof(r)));
			CHECK(fabsf(r - (float)(N * (N - 1) / 2)) < 1e-3f, "sum from kernel folder: %g", r);
		}
	}
	clg_backend_stats(be, &st);
	CHECK(st.n_build >= 2, "kernel folder: n_build %llu", (unsigned long long)st.n_build);
	add_free(&k);
	clg_backend_close(be);
out:
	clg_config_set("KERNEL_DIR", NULL);
}

int main(void)
{
	const clg_device_info *list;
	int n;
	char *dir;

	t_require_opencl();
	/* build from source every time: nothing from (or to) the disk cache */
	clg_config_set("CACHE_DIR", "0");
	clg_config_set("KERNEL_DIR", NULL);
	CHECK_OK(clg_devices(&list, &n));
	dir = t_tmpdir();
	CHECK(dir != NULL, "no temporary folder");

	for (int i = 1; i < n; i++) {
		clg_backend *be = NULL;
		printf("device %d: %s (%s)\n", i, list[i].name, list[i].platform);
		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		check_native_half(be);
		build_all(be);
		clg_backend_close(be);

		/* a fresh instance, so nothing is in its memory cache */
		CHECK_OK(clg_backend_open(i, &be));
		if (be && dir)
			check_broken(be, dir);
		clg_backend_close(be);

		check_kernel_dir(i);
	}
	t_rmtree(dir);
	free(dir);
	return t_finish("test_kernels_compile");
}
