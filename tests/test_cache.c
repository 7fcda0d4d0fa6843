/* The on-disk program cache: cold build writes entries, a new backend loads them, a corrupt,
 * truncated or foreign entry is rejected and rewritten, CLGRAD_CACHE_DIR=0 disables it, no
 * temporary files stay behind. Checked through the stats counters only (no CLGRAD_DEBUG).
 * Also prints cold-build vs warm-load time over every program. */
#include "test_util.h"
#include "cl_internal.h"

#include <dirent.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { N = 53, PATH_LEN = 4608 };

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Counts the files in dir ending in ".bin" (copying the first `max` names into names) and those
 * holding ".tmp." (left-over temporaries). */
static int list_dir(const char *dir, char names[][PATH_LEN], int max, int *ntmp)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (ntmp)
		*ntmp = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (strstr(e->d_name, ".tmp.") && ntmp)
			(*ntmp)++;
		if (len > 4 && !strcmp(e->d_name + len - 4, ".bin")) {
			if (n < max)
				snprintf(names[n], PATH_LEN, "%s/%s", dir, e->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

static long file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static int read_all(const char *path, unsigned char **data, long *len)
{
	FILE *f = fopen(path, "rb");
	*data = NULL;
	*len = file_size(path);
	if (!f || *len < 0) {
		if (f)
			fclose(f);
		return -1;
	}
	*data = malloc((size_t)*len + 1);
	if (!*data || fread(*data, 1, (size_t)*len, f) != (size_t)*len) {
		fclose(f);
		free(*data);
		*data = NULL;
		return -1;
	}
	fclose(f);
	return 0;
}

static int write_all(const char *path, const unsigned char *data, long len)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(data, 1, (size_t)len, f) == (size_t)len;
	if (f)
		ok &= fclose(f) == 0;
	return ok ? 0 : -1;
}

/* Opens device `index`, runs op (ADD, or SUM when sum is set) on fresh data, checks the result,
 * and returns the backend's stats. */
static void run_op(int index, int sum, clg_stats *out, const char *what)
{
	clg_backend *be = NULL;
	clg_buffer *a = NULL, *b = NULL, *c = NULL;
	float x[N], y[N], z[N];
	clg_op_call call = {.op = sum ? CLG_OP_SUM : CLG_OP_ADD};
	int64_t shape[1] = {N}, shape2[2] = {1, N}, one[1] = {1};
	int bad = 0;

	memset(out, 0, sizeof(*out));
	CHECK_OK(clg_backend_open(index, &be));
	if (!be)
		return;
	t_fill_uniform(x, N, 1, -1, 1);
	t_fill_uniform(y, N, 2, -1, 1);
	if (clg_buffer_alloc(be, sizeof(x), &a) || clg_buffer_alloc(be, sizeof(y), &b) ||
	    clg_buffer_alloc(be, sizeof(z), &c) || clg_buffer_upload(a, 0, x, sizeof(x)) ||
	    clg_buffer_upload(b, 0, y, sizeof(y))) {
		CHECK(0, "%s: buffers: %s", what, clg_last_error());
		goto out;
	}
	if (sum) {
		clg_view_contiguous(&call.src[0], a, CLG_F32, 2, shape2);
		clg_view_contiguous(&call.dst, c, CLG_F32, 1, one);
	} else {
		clg_view_contiguous(&call.src[0], a, CLG_F32, 1, shape);
		clg_view_contiguous(&call.src[1], b, CLG_F32, 1, shape);
		clg_view_contiguous(&call.dst, c, CLG_F32, 1, shape);
	}
	CHECK_OK(clg_run(be, &call));
	memset(z, 0, sizeof(z));
	CHECK_OK(clg_buffer_download(c, 0, z, sizeof(z)));
	if (sum) {
		double r = 0;
		for (int i = 0; i < N; i++)
			r += x[i];
		bad = fabs(z[0] - r) > 1e-4;
	} else {
		for (int i = 0; i < N; i++)
			bad += fabsf(z[i] - (x[i] + y[i])) > 1e-6f;
	}
	CHECK(bad == 0, "%s: %d wrong results", what, bad);
	clg_backend_stats(be, out);
out:
	clg_buffer_free(a);
	clg_buffer_free(b);
	clg_buffer_free(c);
	clg_backend_close(be);
}

static void expect_stats(const clg_stats *s, int build, int load, int reject, const char *what)
{
	printf("  %-34s build %llu, disk load %llu, disk reject %llu\n", what, (unsigned long long)s->n_build,
	       (unsigned long long)s->n_disk_load, (unsigned long long)s->n_disk_reject);
	CHECK((int)s->n_build == build, "%s: n_build %llu, want %d", what, (unsigned long long)s->n_build, build);
	CHECK((int)s->n_disk_load == load, "%s: n_disk_load %llu, want %d", what,
	      (unsigned long long)s->n_disk_load, load);
	CHECK((int)s->n_disk_reject == reject, "%s: n_disk_reject %llu, want %d", what,
	      (unsigned long long)s->n_disk_reject, reject);
}

static void expect_no_tmp(const char *dir, const char *what)
{
	char names[1][PATH_LEN];
	int ntmp;
	list_dir(dir, names, 0, &ntmp);
	CHECK(ntmp == 0, "%s: %d temporary files left in %s", what, ntmp, dir);
}

/* Runs ADD on a backend whose cache entry was damaged: it must be rejected, rebuilt, rewritten. */
static void expect_rejected_then_valid(int index, const char *dir, const char *entry, const char *what)
{
	clg_stats s;
	run_op(index, 0, &s, what);
	expect_stats(&s, 1, 0, 1, what);
	CHECK(file_size(entry) > 64, "%s: entry not rewritten (size %ld)", what, file_size(entry));
	expect_no_tmp(dir, what);
	run_op(index, 0, &s, "next instance after rewrite");
	expect_stats(&s, 0, 1, 0, "next instance after rewrite");
}

static void check_cache(int index, const char *root)
{
	char dir[4096], other[4096], names[4][PATH_LEN], entry[PATH_LEN], sum_entry[PATH_LEN];
	unsigned char *data = NULL;
	long len;
	clg_stats s;
	int nbin, ntmp;

	/* a folder that does not exist yet: the library creates it */
	snprintf(dir, sizeof(dir), "%s/dev%d/nested/cache", root, index);
	clg_config_set("CACHE_DIR", dir);

	/* cold: built from source, one entry written */
	run_op(index, 0, &s, "cold");
	expect_stats(&s, 1, 0, 0, "cold");
	nbin = list_dir(dir, names, 4, &ntmp);
	CHECK(nbin == 1, "cold run wrote %d .bin files, want 1", nbin);
	CHECK(ntmp == 0, "cold run left %d temporary files", ntmp);
	if (nbin != 1)
		return;
	memcpy(entry, names[0], sizeof(entry));
	CHECK(file_size(entry) > 64, "entry %s has %ld bytes", entry, file_size(entry));

	/* warm: a new instance loads it */
	run_op(index, 0, &s, "warm");
	expect_stats(&s, 0, 1, 0, "warm");

	/* corrupt: flip bytes in the middle */
	if (read_all(entry, &data, &len) == 0) {
		for (long i = len / 2; i < len / 2 + 16 && i < len; i++)
			data[i] ^= 0xa5;
		CHECK(write_all(entry, data, len) == 0, "cannot corrupt %s", entry);
		free(data);
		data = NULL;
		expect_rejected_then_valid(index, dir, entry, "corrupt (bytes flipped mid-file)");
	} else {
		CHECK(0, "cannot read %s", entry);
	}

	/* truncated: half the file, then shorter than the header, then empty */
	{
		static const long cuts[] = {-2, 10, 0};
		static const char *what[] = {"truncated to half", "truncated inside the header", "empty entry"};
		for (int c = 0; c < 3; c++) {
			if (read_all(entry, &data, &len) != 0) {
				CHECK(0, "cannot read %s", entry);
				break;
			}
			CHECK(write_all(entry, data, cuts[c] == -2 ? len / 2 : cuts[c]) == 0, "cannot truncate %s", entry);
			free(data);
			data = NULL;
			expect_rejected_then_valid(index, dir, entry, what[c]);
		}
	}

	/* foreign: another entry (the reduce program's) renamed onto this one's name */
	run_op(index, 1, &s, "cold sum (second program)");
	expect_stats(&s, 1, 0, 0, "cold sum (second program)");
	nbin = list_dir(dir, names, 4, NULL);
	CHECK(nbin == 2, "%d entries after the second program, want 2", nbin);
	sum_entry[0] = 0;
	for (int i = 0; i < nbin && i < 4; i++)
		if (strcmp(names[i], entry) != 0)
			memcpy(sum_entry, names[i], sizeof(sum_entry));
	if (sum_entry[0]) {
		CHECK(rename(sum_entry, entry) == 0, "rename %s -> %s", sum_entry, entry);
		expect_rejected_then_valid(index, dir, entry, "foreign entry");
		/* the renamed-away program is simply built again */
		run_op(index, 1, &s, "sum after its entry moved");
		expect_stats(&s, 1, 0, 0, "sum after its entry moved");
		run_op(index, 1, &s, "sum warm");
		expect_stats(&s, 0, 1, 0, "sum warm");
	}
	expect_no_tmp(dir, "after all damage");

	/* CLGRAD_CACHE_DIR=0: nothing written anywhere, nothing loaded (XDG and HOME point at
	 * empty folders that must stay empty) */
	snprintf(other, sizeof(other), "%s/dev%d/home", root, index);
	CHECK(mkdir(other, 0755) == 0, "mkdir %s", other);
	{
		char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
		char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
		DIR *d;
		struct dirent *e;
		int nfiles = 0;

		setenv("HOME", other, 1);
		setenv("XDG_CACHE_HOME", other, 1);
		clg_config_set("CACHE_DIR", "0");
		run_op(index, 0, &s, "CLGRAD_CACHE_DIR=0");
		expect_stats(&s, 1, 0, 0, "CLGRAD_CACHE_DIR=0");
		run_op(index, 0, &s, "CLGRAD_CACHE_DIR=0 again");
		expect_stats(&s, 1, 0, 0, "CLGRAD_CACHE_DIR=0 again");
		if ((d = opendir(other))) {
			while ((e = readdir(d)))
				nfiles += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
			closedir(d);
		}
		CHECK(nfiles == 0, "CLGRAD_CACHE_DIR=0 but %d entries appeared under XDG_CACHE_HOME/HOME", nfiles);
		CHECK(list_dir(dir, names, 0, NULL) == 2, "CLGRAD_CACHE_DIR=0 changed the old cache folder");
		if (old_home)
			setenv("HOME", old_home, 1);
		else
			unsetenv("HOME");
		if (old_xdg)
			setenv("XDG_CACHE_HOME", old_xdg, 1);
		else
			unsetenv("XDG_CACHE_HOME");
		free(old_home);
		free(old_xdg);
	}
}

/* Whether program `name` is timed: every program (limit <= 0), else the `limit` smallest sources and
 * elementwise (the add after the warm load must find it on disk). */
static int timed(const char *name, int limit)
{
	size_t size = 0;
	int smaller = 0;

	if (limit <= 0 || !strcmp(name, "elementwise"))
		return 1;
	for (int i = 0; i < clg_embedded_kernel_count; i++)
		if (!strcmp(clg_embedded_kernels[i].name, name))
			size = clg_embedded_kernels[i].size;
	for (int i = 0; i < clg_embedded_kernel_count; i++)
		smaller += clg_embedded_kernels[i].size < size ||
			   (clg_embedded_kernels[i].size == size && strcmp(clg_embedded_kernels[i].name, name) < 0);
	return smaller < limit;
}

/* Cold build vs warm load of every program (float32, and float64 where available), or of the
 * `limit` smallest when limit > 0. */
static void time_all(int index, const char *root, int limit, double *cold_total, double *warm_total)
{
	const char *const *names = clg_cl_program_names();
	char dir[4096];
	double t[2] = {0, 0};
	int count = 0;

	snprintf(dir, sizeof(dir), "%s/timing%d", root, index);
	clg_config_set("CACHE_DIR", dir);
	for (int pass = 0; pass < 2; pass++) {
		clg_backend *be = NULL;
		clg_stats s;
		double t0;
		int n = 0;

		CHECK_OK(clg_backend_open(index, &be));
		if (!be)
			return;
		t0 = now();
		for (int p = 0; names[p]; p++) {
			for (int dt = 0; dt < 2 && timed(names[p], limit); dt++) {
				char opts[256];
				cl_program prog;
				if (dt == 1 && !be->info.has_fp64)
					continue;
				clg_cl_dtype_options(be, dt ? CLG_F64 : CLG_F32, opts, sizeof(opts));
				CHECK_OK(clg_cl_program(be, names[p], opts, &prog));
				n++;
			}
		}
		t[pass] = now() - t0;
		clg_backend_stats(be, &s);
		if (pass == 0)
			expect_stats(&s, n, 0, 0, "timing: cold, every program");
		else
			expect_stats(&s, 0, n, 0, "timing: warm, every program");
		count = n;
		clg_backend_close(be);
	}
	printf("cache: device %d: %d programs: cold build %.3f s, warm load %.3f s, ratio %.1f\n", index, count,
	       t[0], t[1], t[1] > 0 ? t[0] / t[1] : 0.0);
	/* the first op after a warm load: includes what the driver still does at first launch */
	{
		clg_stats s;
		double t0 = now();
		run_op(index, 0, &s, "first add after a warm load");
		printf("cache: device %d: first add on a new instance after a warm load: %.3f s (load + first launch)\n",
		       index, now() - t0);
		CHECK(s.n_build == 0 && s.n_disk_load == 1, "first add after a warm load: build %llu, load %llu",
		      (unsigned long long)s.n_build, (unsigned long long)s.n_disk_load);
	}
	CHECK(t[1] < t[0], "warm load (%.3f s) not faster than cold build (%.3f s)", t[1], t[0]);
	*cold_total += t[0];
	*warm_total += t[1];
}

/* Two modes, run as two ctest entries:
 *   test_cache              the cache's behaviour (PoCL's own cache left on: it only saves time)
 *   test_cache --timing [N] cold build vs warm load of every program (of the N smallest and
 *                           elementwise: ctest's run, where the comparison needs a few programs, not
 *                           all), PoCL's cache off */
int main(int argc, char **argv)
{
	const clg_device_info *list;
	int n, timing = argc > 1 && !strcmp(argv[1], "--timing"), limit = timing && argc > 2 ? atoi(argv[2]) : 0;
	char *root;
	double cold = 0, warm = 0;

	if ((argc > 1 && !timing) || argc > 3 || (argc == 3 && limit <= 0)) {
		fprintf(stderr, "usage: test_cache [--timing [N]]\n");
		return 2;
	}
	/* PoCL keeps its own compiled-kernel cache; turn it off before the first OpenCL call so the
	 * cold build really compiles. */
	if (timing)
		setenv("POCL_KERNEL_CACHE", "0", 1);
	clg_config_set("KERNEL_DIR", NULL);
	clg_config_set("DEBUG", NULL); /* the counters alone tell what happened */
	t_require_opencl();
	CHECK_OK(clg_devices(&list, &n));
	root = t_tmpdir();
	CHECK(root != NULL, "no temporary folder");
	if (!root)
		return t_finish("test_cache");
	for (int i = 1; i < n; i++) {
		printf("device %d: %s (%s)\n", i, list[i].name, list[i].platform);
		if (timing)
			time_all(i, root, limit, &cold, &warm);
		else
			check_cache(i, root);
	}
	if (timing)
		printf("cache: cold build %.3f s, warm load %.3f s, ratio %.1f\n", cold, warm,
		       warm > 0 ? cold / warm : 0.0);
	t_rmtree(root);
	free(root);
	return t_finish(timing ? "test_cache --timing" : "test_cache");
}
