/* bench_kernel_cache: first-use load time of every embedded kernel program, cold vs warm.
 *
 *   bench_kernel_cache [--device SPEC] [--repeats N] [--pocl-cache]
 *
 * Every embedded program (clg_cl_program_names()) is built with each option set clgrad uses for
 * it on the device (float32, and float64 where the device has it), through clg_cl_program():
 *   cold: a fresh backend, CLGRAD_CACHE_DIR pointing at a new empty temporary folder: every
 *         program is compiled from source (and its binary written to the folder);
 *   warm: another fresh backend on the same folder: every program is loaded from disk.
 * POCL_KERNEL_CACHE=0 is set before the first OpenCL call (unless --pocl-cache) so that PoCL's
 * own cache in ~/.cache/pocl does not make the cold case warm. Repeated N times (default 3) with a
 * new folder each time; medians are printed. Times cover clg_cl_program() only; creating the
 * cl_kernel objects (clCreateKernelsInProgram) is timed separately. PoCL's code generation for a
 * kernel's work-group size happens at its first enqueue and is in neither figure.
 * Exit status: 0 on success, 77 when no OpenCL device is present, 2 on errors.
 */
#include "cl_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_ENTRIES 64
#define MAX_REPEATS 32

typedef struct {
	const char *name;
	char options[256];
} entry;

typedef struct {
	double open_s, programs_s, kernels_s;
	double per_entry_s[MAX_ENTRIES];
	clg_stats stats;
	int nkernels;
} pass;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double tmp[MAX_REPEATS];
	memcpy(tmp, v, (size_t)n * sizeof(*v));
	qsort(tmp, (size_t)n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

static int fail_clg(clg_status st, const char *what)
{
	fprintf(stderr, "bench_kernel_cache: %s failed: %s: %s\n", what, clg_status_name(st), clg_last_error());
	return 2;
}

/* Removes the (flat) temporary cache folder. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400];
	if (d) {
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".bin") && !strstr(e->d_name, ".tmp."))
			n++;
	closedir(d);
	return n;
}

/* One pass: open a backend on the device, load every (program, options) entry, time it. */
static int run_pass(int device, const entry *ents, int nents, pass *p)
{
	clg_backend *be = NULL;
	clg_status st;
	double t0 = now_s(), t1;

	memset(p, 0, sizeof(*p));
	if ((st = clg_backend_open(device, &be)))
		return fail_clg(st, "clg_backend_open");
	p->open_s = now_s() - t0;

	cl_program progs[MAX_ENTRIES];
	t0 = now_s();
	for (int i = 0; i < nents; i++) {
		t1 = now_s();
		if ((st = clg_cl_program(be, ents[i].name, ents[i].options, &progs[i]))) {
			fail_clg(st, "clg_cl_program");
			clg_backend_close(be);
			return 2;
		}
		p->per_entry_s[i] = now_s() - t1;
	}
	p->programs_s = now_s() - t0;

	t0 = now_s();
	for (int i = 0; i < nents; i++) {
		cl_uint nk = 0;
		cl_kernel ks[256];
		cl_int err = clCreateKernelsInProgram(progs[i], 256, ks, &nk);
		if (err != CL_SUCCESS) {
			fprintf(stderr, "bench_kernel_cache: clCreateKernelsInProgram('%s') failed: %s\n", ents[i].name,
				clg_cl_error_name(err));
			clg_backend_close(be);
			return 2;
		}
		for (cl_uint j = 0; j < nk; j++)
			clReleaseKernel(ks[j]);
		p->nkernels += (int)nk;
	}
	p->kernels_s = now_s() - t0;

	clg_backend_stats(be, &p->stats);
	clg_backend_close(be);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_kernel_cache [--device SPEC] [--repeats N] [--pocl-cache]\n"
		   "  cold (compile from source into an empty CLGRAD_CACHE_DIR) vs warm (load the binaries\n"
		   "  from that folder in a new backend) for every embedded kernel program; medians of N\n"
		   "  repeats (default 3). POCL_KERNEL_CACHE=0 is set unless --pocl-cache.\n");
}

int main(int argc, char **argv)
{
	const char *spec = NULL;
	int repeats = 3, pocl_cache = 0, idx, ndev, nents = 0, rc = 0;
	const clg_device_info *devs;
	const char *const *names = clg_cl_program_names();
	entry ents[MAX_ENTRIES];
	pass cold[MAX_REPEATS], warm[MAX_REPEATS];
	double v_cold[MAX_REPEATS], v_warm[MAX_REPEATS], v_open_c[MAX_REPEATS], v_open_w[MAX_REPEATS];
	double v_kc[MAX_REPEATS], v_kw[MAX_REPEATS];
	clg_status st;
	char base[4096];
	const char *tmpdir = clg_config_foreign("TMPDIR");

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < argc) {
			spec = argv[++i];
		} else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
			repeats = atoi(argv[++i]);
			if (repeats < 1 || repeats > MAX_REPEATS) {
				fprintf(stderr, "bench_kernel_cache: --repeats must be 1..%d\n", MAX_REPEATS);
				return 2;
			}
		} else if (!strcmp(argv[i], "--pocl-cache")) {
			pocl_cache = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "bench_kernel_cache: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	/* Before the first OpenCL call: PoCL reads its environment when the platform starts. */
	if (!pocl_cache)
		setenv("POCL_KERNEL_CACHE", "0", 1);

	if ((st = clg_device_select(spec, &idx)) || (st = clg_devices(&devs, &ndev)))
		return fail_clg(st, "device selection");
	if (devs[idx].type == CLG_DEV_REF) {
		fprintf(stderr, "bench_kernel_cache: no OpenCL device selected (the reference backend has no kernels)\n");
		return 77;
	}

	/* The option sets clgrad builds each program with on this device (see cl_ops.c). Opening a
	 * backend here also starts the platform, so that start-up is in neither timed pass. */
	{
		clg_backend *be;
		if ((st = clg_backend_open(idx, &be)))
			return fail_clg(st, "clg_backend_open");
		for (const char *const *n = names; *n && nents + 2 <= MAX_ENTRIES; n++) {
			clg_dtype dts[2] = {CLG_F32, CLG_F64};
			for (int d = 0; d < (clg_backend_info(be)->has_fp64 ? 2 : 1); d++) {
				ents[nents].name = *n;
				clg_cl_dtype_options(be, dts[d], ents[nents].options, sizeof(ents[nents].options));
				nents++;
			}
		}
		clg_backend_close(be);
	}

	printf("device: [%d] %s (%s; %s)\n", idx, devs[idx].name, devs[idx].platform_version, devs[idx].driver_version);
	printf("POCL_KERNEL_CACHE=%s\n", clg_config_foreign("POCL_KERNEL_CACHE") ? clg_config_foreign("POCL_KERNEL_CACHE") : "(unset)");
	printf("programs x option sets: %d\n", nents);
	for (int i = 0; i < nents; i++)
		printf("  %-12s %s\n", ents[i].name, ents[i].options);
	printf("\n%-7s %10s %10s %10s %11s %11s %8s %8s\n", "repeat", "cold s", "warm s", "ratio", "kern c ms",
	       "kern w ms", "built", "loaded");

	snprintf(base, sizeof(base), "%s/clgrad-cache-bench-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	for (int r = 0; r < repeats; r++) {
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", base);
		if (!mkdtemp(dir)) {
			perror("bench_kernel_cache: mkdtemp");
			return 2;
		}
		setenv("CLGRAD_CACHE_DIR", dir, 1);
		rc = run_pass(idx, ents, nents, &cold[r]);
		if (!rc && count_files(dir) != nents)
			fprintf(stderr, "bench_kernel_cache: warning: %d cache entries written, %d expected\n",
				count_files(dir), nents);
		if (!rc)
			rc = run_pass(idx, ents, nents, &warm[r]);
		remove_dir(dir);
		if (rc)
			return rc;
		if (cold[r].stats.n_build != (uint64_t)nents || warm[r].stats.n_disk_load != (uint64_t)nents ||
		    warm[r].stats.n_build != 0) {
			fprintf(stderr,
				"bench_kernel_cache: unexpected cache behaviour: cold built %llu, warm built %llu and loaded %llu "
				"(rejected %llu) of %d\n",
				(unsigned long long)cold[r].stats.n_build, (unsigned long long)warm[r].stats.n_build,
				(unsigned long long)warm[r].stats.n_disk_load, (unsigned long long)warm[r].stats.n_disk_reject,
				nents);
			rc = 2;
		}
		v_cold[r] = cold[r].programs_s;
		v_warm[r] = warm[r].programs_s;
		v_open_c[r] = cold[r].open_s;
		v_open_w[r] = warm[r].open_s;
		v_kc[r] = cold[r].kernels_s;
		v_kw[r] = warm[r].kernels_s;
		printf("%-7d %10.4f %10.4f %10.1f %11.3f %11.3f %8llu %8llu\n", r + 1, v_cold[r], v_warm[r],
		       v_warm[r] > 0 ? v_cold[r] / v_warm[r] : 0.0, 1e3 * v_kc[r], 1e3 * v_kw[r],
		       (unsigned long long)cold[r].stats.n_build, (unsigned long long)warm[r].stats.n_disk_load);
		fflush(stdout);
	}

	printf("\nper program (median):\n");
	for (int i = 0; i < nents; i++) {
		double c[MAX_REPEATS], w[MAX_REPEATS];
		for (int r = 0; r < repeats; r++) {
			c[r] = cold[r].per_entry_s[i];
			w[r] = warm[r].per_entry_s[i];
		}
		double mc = median(c, repeats), mw = median(w, repeats);
		printf("  %-12s %-52s cold %.4f s  warm %.4f s  ratio %.1f\n", ents[i].name, ents[i].options, mc, mw,
		       mw > 0 ? mc / mw : 0.0);
	}
	double mc = median(v_cold, repeats), mw = median(v_warm, repeats);
	printf("\nmedian of %d: all %d programs cold %.4f s, warm %.4f s, ratio cold/warm %.1f\n", repeats, nents, mc, mw,
	       mw > 0 ? mc / mw : 0.0);
	printf("median of %d: clCreateKernelsInProgram (%d kernels) cold %.3f ms, warm %.3f ms\n", repeats,
	       cold[0].nkernels, 1e3 * median(v_kc, repeats), 1e3 * median(v_kw, repeats));
	printf("median of %d: clg_backend_open cold %.3f ms, warm %.3f ms\n", repeats, 1e3 * median(v_open_c, repeats),
	       1e3 * median(v_open_w, repeats));
	return rc;
}
