/* Kernel programs: sources (embedded, or $CLGRAD_KERNEL_DIR), compiled lazily with #define'd
 * options, cached in memory per (program, options) and on disk as program binaries.
 *
 * A disk entry is <cache dir>/<key>.bin where key hashes the format version, the source, the
 * options, the platform, the device name and the driver version. The file starts with a header
 * that repeats the key and a checksum of the binary, so a truncated, corrupt or foreign entry is
 * detected and rebuilt. Entries are written to a temporary name, synced and renamed. */
#include "cl_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CACHE_FORMAT_VERSION 1u
static const char cache_magic[8] = {'C', 'L', 'G', 'B', 'I', 'N', 0, 1};

typedef struct {
	char magic[8];
	uint32_t format;
	uint32_t reserved;
	uint64_t key[2];
	uint64_t payload_size;
	uint64_t payload_hash;
} cache_header;

extern const char *const clg_embedded_kernel_names[];

const char *const *clg_cl_program_names(void) { return clg_embedded_kernel_names; }

static clg_status read_file(const char *path, char **data, size_t *len)
{
	FILE *f = clg_fopen_read(path, "rb");
	long n;
	char *buf;

	*data = NULL;
	*len = 0;
	if (!f)
		return clg_fail(CLG_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return clg_fail(CLG_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	}
	buf = malloc((size_t)n + 1);
	if (!buf) {
		fclose(f);
		return clg_fail(CLG_ERR_OOM, "reading '%s': out of host memory", path);
	}
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return clg_fail(CLG_ERR_IO, "short read from '%s'", path);
	}
	fclose(f);
	buf[n] = 0;
	*data = buf;
	*len = (size_t)n;
	return CLG_OK;
}

/* One .cl file's text: from $CLGRAD_KERNEL_DIR when set (a missing file is an error, unless
 * may_be_absent: then the embedded copy serves), else the embedded copy. */
static clg_status file_source(const char *name, int may_be_absent, const char **src, size_t *len, char **owned)
{
	const char *dir = clg_cfg_str(CLG_CFG_KERNEL_DIR);

	*owned = NULL;
	if (dir && *dir) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s.cl", dir, name);
		if (!may_be_absent || access(path, F_OK) == 0) {
			clg_status st = read_file(path, owned, len);
			if (st)
				return clg_fail_prefix(st, "kernel program '%s' from CLGRAD_KERNEL_DIR: ", name);
			*src = *owned;
			return CLG_OK;
		}
	}
	for (int i = 0; i < clg_embedded_kernel_count; i++) {
		if (!strcmp(clg_embedded_kernels[i].name, name)) {
			*src = (const char *)clg_embedded_kernels[i].data;
			*len = clg_embedded_kernels[i].size;
			return CLG_OK;
		}
	}
	return clg_fail(CLG_ERR_INVALID, "no kernel program named '%s'", name);
}

/* A program's source is kernels_cl/prelude.cl (what every program shares) followed by its file.
 * A $CLGRAD_KERNEL_DIR without its own prelude.cl uses the embedded one. */
clg_status clg_cl_program_source(const char *name, const char **src, size_t *len, char **owned)
{
	const char *pre, *body;
	char *pre_owned = NULL, *body_owned = NULL;
	size_t pre_len, body_len;
	clg_status st = file_source("prelude", 1, &pre, &pre_len, &pre_owned);

	*owned = NULL;
	if (!st)
		st = file_source(name, 0, &body, &body_len, &body_owned);
	if (!st && !(*owned = malloc(pre_len + body_len + 2)))
		st = clg_fail(CLG_ERR_OOM, "kernel program '%s': out of host memory", name);
	if (!st) {
		memcpy(*owned, pre, pre_len);
		(*owned)[pre_len] = '\n';
		memcpy(*owned + pre_len + 1, body, body_len);
		(*owned)[pre_len + 1 + body_len] = 0;
		*src = *owned;
		*len = pre_len + 1 + body_len;
	}
	free(pre_owned);
	free(body_owned);
	return st;
}

void clg_cl_cache_dir(char *buf, size_t len)
{
	const char *d = clg_cfg_str(CLG_CFG_CACHE_DIR), *x = clg_config_foreign("XDG_CACHE_HOME"),
		   *h = clg_config_foreign("HOME");
	buf[0] = 0;
	if (d && *d) {
		if (strcmp(d, "0") != 0)
			snprintf(buf, len, "%s", d);
	} else if (x && *x) {
		snprintf(buf, len, "%s/clgrad", x);
	} else if (h && *h) {
		snprintf(buf, len, "%s/.cache/clgrad", h);
	}
}

int clg_cl_mkdir_p(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

clg_status clg_cache_folder(char *buf, size_t len)
{
	clg_cl_cache_dir(buf, len);
	if (!buf[0])
		return clg_fail(CLG_ERR_IO, "cache folder: none (CLGRAD_CACHE_DIR=0, or no HOME)");
	if (clg_cl_mkdir_p(buf) != 0)
		return clg_fail(CLG_ERR_IO, "cache folder %s: cannot create it: %s", buf, strerror(errno));
	return CLG_OK;
}

clg_status clg_write_file_atomic(const char *path, const void *data, size_t n)
{
	char err[256];
	if (clg_cl_write_atomic(path, data, n, NULL, 0, err, sizeof(err)) != 0)
		return clg_fail(CLG_ERR_IO, "%s: %s", path, err);
	return CLG_OK;
}

static void disk_key(clg_backend *be, const char *src, size_t len, const char *options, uint64_t key[2])
{
	const clg_device_info *i = &be->info;
	uint32_t fmt = CACHE_FORMAT_VERSION;
	for (int k = 0; k < 2; k++) {
		/* two differently seeded 64-bit hashes make a 128-bit key */
		uint64_t h = k ? CLG_HASH_SEED ^ 0x9e3779b97f4a7c15ULL : CLG_HASH_SEED;
		h = clg_hash64(h, &fmt, sizeof(fmt));
		h = clg_hash64(h, src, len);
		h = clg_hash64(h, options, strlen(options) + 1);
		h = clg_hash64(h, i->platform, strlen(i->platform) + 1);
		h = clg_hash64(h, i->platform_version, strlen(i->platform_version) + 1);
		h = clg_hash64(h, i->name, strlen(i->name) + 1);
		h = clg_hash64(h, i->driver_version, strlen(i->driver_version) + 1);
		key[k] = h;
	}
}

static void entry_path(const char *dir, const uint64_t key[2], char *buf, size_t len)
{
	snprintf(buf, len, "%s/%016llx%016llx.bin", dir, (unsigned long long)key[0], (unsigned long long)key[1]);
}

const char *clg_cl_cache_entry_check(const char *data, size_t len, const uint64_t key[2])
{
	cache_header h;

	if (len < sizeof(h))
		return "truncated header";
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, cache_magic, sizeof(cache_magic)) != 0 || h.format != CACHE_FORMAT_VERSION)
		return "not a clgrad cache entry of this format";
	if (h.key[0] != key[0] || h.key[1] != key[1])
		return "entry belongs to another source, device or driver";
	if (h.payload_size != len - sizeof(h))
		return "truncated binary";
	if (clg_hash64(CLG_HASH_SEED, data + sizeof(h), len - sizeof(h)) != h.payload_hash)
		return "checksum mismatch";
	return NULL;
}

/* Loads a cached binary; returns NULL (and says why in debug output) when absent or unusable. */
static cl_program load_cached(clg_backend *be, const char *path, const uint64_t key[2], const char *options)
{
	clg_cl *cl = clg_cl_of(be);
	char *data = NULL;
	size_t len;
	const char *why = NULL;
	cl_program prog = NULL;
	cache_header h;
	cl_int err, binerr;

	if (access(path, F_OK) != 0)
		return NULL;
	if (read_file(path, &data, &len) != CLG_OK) {
		why = clg_last_error();
		goto reject;
	}
	why = clg_cl_cache_entry_check(data, len, key);
	if (why)
		goto reject;
	{
		const unsigned char *bin = (const unsigned char *)data + sizeof(h);
		size_t binlen = len - sizeof(h);
		prog = clCreateProgramWithBinary(cl->context, 1, &cl->device, &binlen, &bin, &binerr, &err);
	}
	if (err != CL_SUCCESS || binerr != CL_SUCCESS) {
		why = "driver refused the binary";
		goto reject;
	}
	err = clBuildProgram(prog, 1, &cl->device, options, NULL, NULL);
	if (err != CL_SUCCESS) {
		why = "driver could not build the binary";
		goto reject;
	}
	free(data);
	return prog;

reject:
	clg_debug("program cache: rejected %s (%s); rebuilding from source", path, why);
	__atomic_fetch_add(&cl->stats.n_disk_reject, 1, __ATOMIC_RELAXED);
	if (prog)
		clReleaseProgram(prog);
	free(data);
	return NULL;
}

int clg_cl_write_atomic(const char *path, const void *head, size_t head_len, const void *body, size_t body_len,
			char *err, size_t errlen)
{
	static unsigned counter;
	char tmp[4400];
	FILE *f;

	clg_remove_stale_temps(path);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
	f = fopen(tmp, "wb");
	if (f && clg_fault_file(CLG_FAULT_WRITE)) { /* a failing disk, half way: the temporary must go */
		if (head_len)
			fwrite(head, 1, head_len / 2, f);
		fclose(f);
		unlink(tmp);
		snprintf(err, errlen, "cannot write %s: %s%s", tmp, strerror(EIO), clg_fault_note());
		return -1;
	}
	if (!f || (head_len && fwrite(head, 1, head_len, f) != head_len) ||
	    (body_len && fwrite(body, 1, body_len, f) != body_len) || fflush(f) != 0 || fsync(fileno(f)) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		if (f)
			fclose(f);
		unlink(tmp);
		return -1;
	}
	if (fclose(f) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

void clg_cl_store_binary(clg_backend *be, cl_program prog, const char *dir, const char *path, const uint64_t key[2])
{
	clg_cl *cl = clg_cl_of(be);
	size_t binlen = 0;
	unsigned char *bin = NULL;
	char err[4600];
	cache_header h;

	(void)cl;
	if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(binlen), &binlen, NULL) != CL_SUCCESS || !binlen)
		goto out; /* the driver offers no binaries: nothing to cache */
	bin = malloc(binlen);
	if (!bin || clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL) != CL_SUCCESS)
		goto out;
	if (clg_cl_mkdir_p(dir) != 0) {
		clg_debug("program cache: cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	memcpy(h.magic, cache_magic, sizeof(h.magic));
	h.format = CACHE_FORMAT_VERSION;
	h.reserved = 0;
	h.key[0] = key[0];
	h.key[1] = key[1];
	h.payload_size = binlen;
	h.payload_hash = clg_hash64(CLG_HASH_SEED, bin, binlen);
	if (clg_cl_write_atomic(path, &h, sizeof(h), bin, binlen, err, sizeof(err)) != 0)
		clg_debug("program cache: %s", err);
out:
	free(bin);
}

static clg_status build_from_source(clg_backend *be, const char *name, const char *src, size_t len,
				    const char *options, cl_program *out)
{
	clg_cl *cl = clg_cl_of(be);
	cl_int err;
	cl_program prog = clCreateProgramWithSource(cl->context, 1, &src, &len, &err);

	*out = NULL;
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, "build", err, "clCreateProgramWithSource('%s')", name);
	err = clBuildProgram(prog, 1, &cl->device, options, NULL, NULL);
	if (err != CL_SUCCESS) {
		size_t loglen = 0;
		char *log = NULL;
		clGetProgramBuildInfo(prog, cl->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen);
		log = calloc(loglen + 1, 1);
		if (log)
			clGetProgramBuildInfo(prog, cl->device, CL_PROGRAM_BUILD_LOG, loglen, log, NULL);
		clg_fail(CLG_ERR_BUILD, "op 'build' on device '%s': kernel program '%s' with options '%s' failed to compile (%s, %d); build log:\n%s",
			 be->info.name, name, options, clg_cl_error_name(err), (int)err, log ? log : "(unavailable)");
		free(log);
		clReleaseProgram(prog);
		return CLG_ERR_BUILD;
	}
	__atomic_fetch_add(&cl->stats.n_build, 1, __ATOMIC_RELAXED);
	*out = prog;
	return CLG_OK;
}

static uint64_t mem_key(const char *a, const char *b, const char *c)
{
	uint64_t h = clg_hash64(CLG_HASH_SEED, a, strlen(a) + 1);
	h = clg_hash64(h, b, strlen(b) + 1);
	return c ? clg_hash64(h, c, strlen(c) + 1) : h;
}

static clg_status push_entry(clg_cl_cache_entry **arr, int *n, int *cap, clg_cl_cache_entry e)
{
	if (*n == *cap) {
		int nc = *cap ? 2 * *cap : 32;
		void *p = realloc(*arr, (size_t)nc * sizeof(**arr));
		if (!p)
			return clg_fail(CLG_ERR_OOM, "program cache: out of host memory");
		*arr = p;
		*cap = nc;
	}
	(*arr)[(*n)++] = e;
	return CLG_OK;
}

/* Progress of builds from source on stderr, the same on a terminal and in a log, so that a cold
 * start compiling for a minute says what it does: CLGRAD_PROGRESS=auto, once building has gone on
 * for 2 s, a line every 2 s while a build runs (a ticker thread: one build may take 10 s);
 * =1: a line as each build starts; =0: none. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int in_flight, ticking;
	double first, last;
	char device[128], name[64];
	unsigned long long built;        /* the device's n_build when the last build began */
} prog_progress = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void progress_line(double now) /* under the lock */
{
	prog_progress.last = now;
	fprintf(stderr, "clgrad: compiling kernels for '%s': %s.cl (%llu programs built so far, %.0f s)\n",
		prog_progress.device, prog_progress.name,
		prog_progress.built,
		now - prog_progress.first);
}

static void *progress_ticker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&prog_progress.mu);
	while (prog_progress.in_flight > 0) {
		struct timespec t;
		double now;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 1;
		pthread_cond_timedwait(&prog_progress.cv, &prog_progress.mu, &t);
		now = clg_now();
		if (prog_progress.in_flight > 0 && now - prog_progress.first >= 2.0 && now - prog_progress.last >= 2.0)
			progress_line(now);
	}
	prog_progress.ticking = 0;
	pthread_mutex_unlock(&prog_progress.mu);
	return NULL;
}

static void build_progress(clg_backend *be, const char *name, int begin)
{
	double now = clg_now();
	int every = clg_cfg_is(CLG_CFG_PROGRESS, "1");

	if (clg_cfg_is(CLG_CFG_PROGRESS, "0"))
		return;
	pthread_mutex_lock(&prog_progress.mu);
	if (!begin) {
		prog_progress.in_flight--;
		pthread_cond_signal(&prog_progress.cv);
		pthread_mutex_unlock(&prog_progress.mu);
		return;
	}
	if (prog_progress.first == 0)
		prog_progress.first = now;
	prog_progress.in_flight++;
	snprintf(prog_progress.device, sizeof(prog_progress.device), "%s", be->info.name);
	snprintf(prog_progress.name, sizeof(prog_progress.name), "%s", name);
	prog_progress.built = (unsigned long long)__atomic_load_n(&clg_cl_of(be)->stats.n_build, __ATOMIC_RELAXED);
	if (every || (now - prog_progress.first >= 2.0 && now - prog_progress.last >= 2.0))
		progress_line(now);
	if (!every && !prog_progress.ticking) {
		pthread_t tid;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		prog_progress.ticking = pthread_create(&tid, &at, progress_ticker, NULL) == 0;
		pthread_attr_destroy(&at);
	}
	pthread_mutex_unlock(&prog_progress.mu);
}

/* The program for (name, options) from the disk cache or built from source (and then cached),
 * without touching the backend's tables: several threads may run it at once (clg_precompile). */
static clg_status make_program(clg_backend *be, const char *name, const char *options, cl_program *out)
{
	clg_cl *cl = clg_cl_of(be);
	uint64_t dkey[2];
	const char *src;
	char *owned = NULL, dir[4096], path[4300];
	size_t len;
	cl_program prog = NULL;
	cl_int fault = clg_cl_fault(be, CLG_FAULT_BUILD);
	clg_status st;

	*out = NULL;
	if (fault != CL_SUCCESS)
		return clg_fail(CLG_ERR_BUILD, "op 'build' on device '%s': kernel program '%s' with options '%s' failed to build (%s)%s",
				be->info.name, name, options, clg_cl_error_name(fault), clg_cl_fault_note());
	st = clg_cl_program_source(name, &src, &len, &owned);
	if (st)
		return st;
	clg_crash_marker_begin(&be->info, "a kernel program build"); /* before the breadcrumb: it may crash */
	clg_crumb("building ", name, ".cl with '", options, "'");
	clg_cl_cache_dir(dir, sizeof(dir));
	if (dir[0]) {
		disk_key(be, src, len, options, dkey);
		entry_path(dir, dkey, path, sizeof(path));
		prog = load_cached(be, path, dkey, options);
		if (prog) {
			__atomic_fetch_add(&cl->stats.n_disk_load, 1, __ATOMIC_RELAXED);
			clg_debug("program cache: loaded '%s' [%s] from %s", name, options, path);
		}
	}
	if (!prog) {
		double t0 = clg_now();
		build_progress(be, name, 1);
		st = build_from_source(be, name, src, len, options, &prog);
		build_progress(be, name, 0);
		if (!st) { /* the build's time: NVIDIA's compiler took seconds for some programs */
			clg_debug("program cache: built '%s' [%s] from source in %.2f s", name, options, clg_now() - t0);
			if (dir[0]) /* on a thread: PoCL compiles every kernel of the program for it */
				clg_cl_store_later(be, prog, dir, path, dkey);
		}
	}
	clg_crash_marker_end(&be->info);
	free(owned);
	*out = prog;
	return st;
}

/* ---- the list of programs a workload used on this device (for clg_precompile in later runs) ----
 * <cache dir>/programs-<key>.txt, key a hash of the device, the embedded kernel sources and the
 * workload named by the last clg_precompile on this backend ("" before any), one
 * "name<TAB>options" line per program, appended the first time a process makes a program that the
 * file lacks. Lines are short single writes in append mode, so concurrent processes do not
 * interleave them; duplicates are skipped on reading. A clgrad whose kernels changed starts a new
 * list: the old one names programs (options) it may no longer use, which every start would
 * otherwise ready again. */

static uint64_t sources_hash;
static pthread_once_t sources_once = PTHREAD_ONCE_INIT;

static void hash_sources(void)
{
	uint64_t h = CLG_HASH_SEED;
	for (int i = 0; i < clg_embedded_kernel_count; i++) {
		h = clg_hash64(h, clg_embedded_kernels[i].name, strlen(clg_embedded_kernels[i].name) + 1);
		h = clg_hash64(h, clg_embedded_kernels[i].data, clg_embedded_kernels[i].size);
	}
	sources_hash = h;
}

static int manifest_path(clg_backend *be, char *buf, size_t len)
{
	const clg_device_info *i = &be->info;
	char dir[4096];
	uint64_t h = CLG_HASH_SEED;

	clg_cl_cache_dir(dir, sizeof(dir));
	if (!dir[0])
		return 0;
	pthread_once(&sources_once, hash_sources);
	h = clg_hash64(h, &sources_hash, sizeof(sources_hash));
	h = clg_hash64(h, i->platform, strlen(i->platform) + 1);
	h = clg_hash64(h, i->platform_version, strlen(i->platform_version) + 1);
	h = clg_hash64(h, i->name, strlen(i->name) + 1);
	h = clg_hash64(h, i->driver_version, strlen(i->driver_version) + 1);
	h = clg_hash64(h, clg_cl_of(be)->workload, strlen(clg_cl_of(be)->workload) + 1);
	snprintf(buf, len, "%s/programs-%016llx.txt", dir, (unsigned long long)h);
	return 1;
}

static void manifest_note(clg_backend *be, const char *name, const char *options)
{
	char path[4200], line[600], *data = NULL;
	size_t len = 0;
	FILE *f;

	if (strchr(name, '\n') || strchr(options, '\n') || strchr(name, '\t') || !manifest_path(be, path, sizeof(path)))
		return;
	if (snprintf(line, sizeof(line), "%s\t%s\n", name, options) >= (int)sizeof(line))
		return;
	if (access(path, F_OK) == 0 && read_file(path, &data, &len) == CLG_OK) {
		int found = 0;
		for (const char *p = data; p && *p && !found; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
			found = !strncmp(p, line, strlen(line)); /* a match starts a line */
		free(data);
		if (found)
			return;
	}
	f = fopen(path, "a"); /* the folder exists: make_program stored or loaded an entry in it */
	if (!f)
		return;
	fputs(line, f);
	fclose(f);
}

clg_status clg_cl_program(clg_backend *be, const char *name, const char *options, cl_program *out)
{
	clg_cl *cl = clg_cl_of(be);
	uint64_t key = mem_key(name, options, NULL);
	cl_program prog;
	clg_status st;

	for (int i = 0; i < cl->nprograms; i++) {
		if (cl->programs[i].key == key) {
			cl->stats.n_mem_hit++;
			*out = cl->programs[i].program;
			return CLG_OK;
		}
	}
	st = make_program(be, name, options, &prog);
	if (st)
		return st;
	st = push_entry(&cl->programs, &cl->nprograms, &cl->capprograms,
			(clg_cl_cache_entry){.key = key, .program = prog});
	if (st) {
		clReleaseProgram(prog);
		return st;
	}
	manifest_note(be, name, options);
	*out = prog;
	return CLG_OK;
}

/* ---- programs of one kernel ----
 * Intel's CPU runtime and rusticl compile every kernel of a program in clBuildProgram, so a whole
 * file costs all its kernels (elementwise.cl: 114 kernels, 1.3 s on Intel's runtime, which also
 * serialises builds across threads and contexts; 1.1 s on rusticl) where a first training step
 * uses a few of each file's. There a kernel is built alone: its file with -DCLG_SUBSET
 * -DCLG_K_<kernel>=1, which prelude.cl's CLG_WANT guards cut down to that kernel (0.13 s, 0.04 s).
 * PoCL compiles a kernel at its first launch, and its clBuildProgram costs about as much for one
 * kernel as for a file: whole files there, and on Oclgrind (0.2 s a file, where the op suite
 * under it took 239 s with kernels alone against 224 s). CLGRAD_KERNEL_SUBSETS=auto; 0 or 1
 * decide everywhere.
 * Each such program is cached on disk and listed for clg_precompile like any other. */
int clg_cl_kernel_subsets(clg_backend *be)
{
	if (clg_cfg_is(CLG_CFG_KERNEL_SUBSETS, "0"))
		return 0;
	if (clg_cfg_is(CLG_CFG_KERNEL_SUBSETS, "1"))
		return 1;
	return !clg_contains_nocase(be->info.platform, "Portable Computing Language") &&
	       !clg_contains_nocase(be->info.platform, "Oclgrind");
}

clg_status clg_cl_kernel(clg_backend *be, const char *program, const char *options, const char *kernel,
			 cl_kernel *out)
{
	clg_cl *cl = clg_cl_of(be);
	uint64_t key = mem_key(program, options, kernel);
	cl_program prog;
	cl_kernel k;
	cl_int err;
	clg_status st;
	char sub[1024];

	for (int i = 0; i < cl->nkernels; i++) {
		if (cl->kernels[i].key == key) {
			*out = cl->kernels[i].kernel;
			return CLG_OK;
		}
	}
	if (clg_cl_kernel_subsets(be) &&
	    snprintf(sub, sizeof(sub), "%s -DCLG_SUBSET -DCLG_K_%s=1", options, kernel) < (int)sizeof(sub))
		options = sub;
	st = clg_cl_program(be, program, options, &prog);
	if (st)
		return st;
	k = clCreateKernel(prog, kernel, &err);
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, kernel, err, "clCreateKernel from program '%s'", program);
	st = push_entry(&cl->kernels, &cl->nkernels, &cl->capkernels, (clg_cl_cache_entry){.key = key, .kernel = k});
	if (st) {
		clReleaseKernel(k);
		return st;
	}
	*out = k;
	return CLG_OK;
}

/* Tests of the float16 self-test (CLGRAD_TEST_HOOKS builds): CLGRAD_TEST_HALF_WRONG=1 plants an
 * error in the elementwise ops' native half path (elementwise.cl), so that the self-test must find
 * it and turn native half off. */
static const char *half_test_bug(clg_backend *be)
{
#ifdef CLGRAD_TEST_HOOKS
	if (clg_cfg_bool(CLG_CFG_TEST_HALF_WRONG) && clg_half_native(&be->info))
		return " -DCLG_TEST_HALF_WRONG";
#endif
	(void)be;
	return "";
}

void clg_cl_dtype_options(clg_backend *be, clg_dtype t, char *buf, size_t len)
{
	switch (t) {
	case CLG_F64:
		snprintf(buf, len, "-DT=double -DACC=double -DUSE_FP64 -cl-std=CL1.2");
		break;
	case CLG_F16:
		/* float16 storage, float32 compute: LOAD / STORE are vload_half / vstore_half_rte, core
		 * OpenCL C 1.2. Where the device has cl_khr_fp16, -DUSE_NATIVE_HALF enables it: the
		 * elementwise ops then compute in half, the reductions, row ops and GEMM still
		 * accumulate in float32 (prelude.cl, elementwise.cl) */
		snprintf(buf, len, "-DT=half -DACC=float -DUSE_HALF_STORAGE%s%s -cl-std=CL1.2",
			 clg_half_native(&be->info) ? " -DUSE_NATIVE_HALF" : "", half_test_bug(be));
		break;
	case CLG_BF16:
		/* bfloat16 storage, float32 compute: LOAD / STORE shift the bits (integer ops only) */
		snprintf(buf, len, "-DT=ushort -DACC=float -DUSE_BF16_STORAGE -cl-std=CL1.2");
		break;
	case CLG_I32: /* only programs that support it (elementwise: copy and fill) */
		snprintf(buf, len, "-DT=int -DACC=int -DINT_ONLY -cl-std=CL1.2");
		break;
	default:
		snprintf(buf, len, "-DT=float -DACC=float -cl-std=CL1.2");
		break;
	}
	/* fma() where the device fuses in hardware (CL_FP_FMA of the compute type: prelude.cl's exp,
	 * gemm.cl); on CPUs, sixteen-element loads and stores through a packed struct (VLOAD16) */
	if (t != CLG_I32) {
		size_t n = strlen(buf);
		int fma = t == CLG_F64 ? clg_cl_of(be)->fma_double : clg_cl_of(be)->fma_single;
		snprintf(buf + n, len > n ? len - n : 0, "%s%s", fma ? " -DUSE_FMA" : "",
			 be->info.type == CLG_DEV_CPU ? " -DUSE_PACKED_V16" : "");
	}
}

void clg_cl_release_programs(clg_backend *be)
{
	clg_cl *cl = clg_cl_of(be);
	for (int i = 0; i < cl->nkernels; i++)
		clReleaseKernel(cl->kernels[i].kernel);
	for (int i = 0; i < cl->nprograms; i++)
		clReleaseProgram(cl->programs[i].program);
	free(cl->kernels);
	free(cl->programs);
	cl->kernels = cl->programs = NULL;
	cl->nkernels = cl->nprograms = cl->capkernels = cl->capprograms = 0;
}

/* ---- compiling ahead of the first step ---- */

#define PRECOMPILE_MAX 64

typedef struct {
	clg_backend *be;
	char name[64], options[512];
	uint64_t key;
	cl_program prog;
	clg_status st;
} precompile_job;

typedef struct {
	precompile_job *jobs;
	int n, next; /* next: the first job not taken (atomic) */
} precompile_queue;

static void *precompile_worker(void *arg)
{
	precompile_queue *q = arg;
	for (;;) {
		int j = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED);
		if (j >= q->n)
			return NULL;
		q->jobs[j].st = make_program(q->jobs[j].be, q->jobs[j].name, q->jobs[j].options, &q->jobs[j].prog);
	}
}

/* Adds (name, options) unless present in the list or in the backend's memory cache. */
static void add_job(clg_backend *be, precompile_job *jobs, int *n, const char *name, const char *options)
{
	clg_cl *cl = clg_cl_of(be);
	uint64_t key = mem_key(name, options, NULL);
	const char *const *names = clg_cl_program_names();
	int known = 0;

	for (int i = 0; names[i] && !known; i++)
		known = !strcmp(names[i], name);
	if (!known || *n == PRECOMPILE_MAX || strlen(name) >= sizeof(jobs->name) || strlen(options) >= sizeof(jobs->options))
		return;
	for (int i = 0; i < *n; i++)
		if (jobs[i].key == key)
			return;
	for (int i = 0; i < cl->nprograms; i++)
		if (cl->programs[i].key == key)
			return;
	jobs[*n] = (precompile_job){.be = be, .key = key};
	snprintf(jobs[*n].name, sizeof(jobs->name), "%s", name);
	snprintf(jobs[*n].options, sizeof(jobs->options), "%s", options);
	(*n)++;
}

/* The worker threads: $CLGRAD_PRECOMPILE_THREADS, else one per online core (at most 8). */
static int precompile_threads(void)
{
	long n = clg_cfg_int(CLG_CFG_PRECOMPILE_THREADS);
	if (n == 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

/* Declared in frontend/clgrad.h (the public API); the reference backend has nothing to build. */
clg_status clg_precompile(clg_backend *be, const char *workload, clg_dtype dtype, int *n_ready);

clg_status clg_precompile(clg_backend *be, const char *workload, clg_dtype dtype, int *n_ready)
{
	/* the programs every training step uses; reduce and fused hold row kernels, built with the
	 * row family's options (sub-groups where the GPU shape uses them) */
	static const char *const defaults[] = {"elementwise", "optim"}, *const row_defaults[] = {"reduce", "fused"};
	precompile_job *jobs;
	precompile_queue q = {0};
	pthread_t tid[8];
	int n = 0, nt, started = 0, ready = 0;
	char path[4200], opts[256], *data = NULL;
	size_t len;
	clg_status st = CLG_OK;

	if (n_ready)
		*n_ready = 0;
	if (!be || strcmp(be->iface->kind, "opencl") != 0)
		return CLG_OK;
	jobs = calloc(PRECOMPILE_MAX, sizeof(*jobs));
	if (!jobs)
		return clg_fail(CLG_ERR_OOM, "precompile: out of host memory");
	snprintf(clg_cl_of(be)->workload, sizeof(clg_cl_of(be)->workload), "%s", workload ? workload : "");
	/* what this device used before, then the programs every training step uses */
	if (manifest_path(be, path, sizeof(path)) && access(path, F_OK) == 0 && read_file(path, &data, &len) == CLG_OK) {
		for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
			char *tab = strchr(line, '\t');
			if (!tab)
				continue;
			*tab = 0;
			add_job(be, jobs, &n, line, tab + 1);
		}
		free(data);
	}
	clg_clear_error();
	/* where kernels are built alone, whole files would build every kernel a step does not use */
	if (!clg_cl_kernel_subsets(be)) {
		clg_cl_dtype_options(be, dtype, opts, sizeof(opts));
		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			add_job(be, jobs, &n, defaults[i], opts);
		clg_cl_row_options(be, dtype, opts, sizeof(opts));
		for (size_t i = 0; i < sizeof(row_defaults) / sizeof(row_defaults[0]); i++)
			add_job(be, jobs, &n, row_defaults[i], opts);
	}
	q.jobs = jobs;
	q.n = n;
	nt = precompile_threads();
	if (nt > n)
		nt = n;
	/* drivers must allow clBuildProgram from several threads (OpenCL 1.2, 4.3); where a thread
	 * cannot start, the calling thread does the rest */
	for (int t = 1; t < nt; t++)
		if (pthread_create(&tid[started], NULL, precompile_worker, &q) == 0)
			started++;
	precompile_worker(&q);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	for (int i = 0; i < n; i++) {
		clg_cl *cl = clg_cl_of(be);
		if (jobs[i].st) { /* left to the first use, which reports the error in full */
			clg_debug("precompile: '%s' [%s] failed: %s", jobs[i].name, jobs[i].options, clg_status_name(jobs[i].st));
			continue;
		}
		st = push_entry(&cl->programs, &cl->nprograms, &cl->capprograms,
				(clg_cl_cache_entry){.key = jobs[i].key, .program = jobs[i].prog});
		if (st) {
			for (int k = i; k < n; k++)
				if (!jobs[k].st)
					clReleaseProgram(jobs[k].prog);
			break;
		}
		manifest_note(be, jobs[i].name, jobs[i].options);
		ready++;
	}
	free(jobs);
	if (n_ready)
		*n_ready = ready;
	return st;
}
