/* Temporary files of killed writers (backend/stale_tmp.c): a writer killed between creating
 * "<name>.tmp.<pid>..." and its rename (here: by SIGXFSZ, past a file size limit) leaves the
 * temporary; the next write of <name> removes it, while the temporaries of live processes, fresh
 * ones, other names' and look-alikes stay. Checked for the checkpoint writer (clg_st_write) and
 * the OpenCL backend's atomic writer (program cache, tune and self-test files). */
#define _GNU_SOURCE
#include "test_util.h"
#include <cl_internal.h>
#include <clg_internal.h>
#include <clgrad_safetensors.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *tmp;

static char *tpath(const char *name)
{
	static char buf[8][4096];
	static int k;
	char *p = buf[k++ % 8];
	if ((size_t)snprintf(p, sizeof(buf[0]), "%s/%s", tmp, name) >= sizeof(buf[0]))
		p[0] = 0;
	return p;
}

/* The first file of the folder whose name starts with prefix, or "" */
static const char *find_prefix(const char *prefix)
{
	static char found[256];
	DIR *d = opendir(tmp);
	struct dirent *e;
	found[0] = 0;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) && !found[0])
			snprintf(found, sizeof(found), "%s", e->d_name);
	if (d)
		closedir(d);
	return found;
}

static int exists(const char *path)
{
	struct stat sb;
	return lstat(path, &sb) == 0;
}

static void touch(const char *path, time_t age_s)
{
	struct timespec ts[2];
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0) {
		if (write(fd, "x", 1) != 1)
			fprintf(stderr, "cannot write %s\n", path);
		close(fd);
	}
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age_s;
	ts[1] = ts[0];
	utimensat(AT_FDCWD, path, ts, 0);
}

/* A pid that is not running: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static clg_st_writer *writer(size_t nfloats)
{
	static float data[1 << 18];
	clg_st_writer *w = NULL;
	CHECK_OK(clg_st_writer_new(&w));
	if (w)
		CHECK_OK(clg_st_writer_add(w, "w", CLG_F32, 1, (int64_t[]){(int64_t)nfloats}, data));
	return w;
}

/* Runs write() in a child killed by SIGXFSZ half-way (64 KiB limit); returns its pid, 0 if not killed. */
static pid_t killed_writer(void (*write_fn)(void))
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rlimit core = {0, 0}, fsize = {64 * 1024, 64 * 1024};
		setrlimit(RLIMIT_CORE, &core);
		signal(SIGXFSZ, SIG_DFL);
		if (setrlimit(RLIMIT_FSIZE, &fsize) != 0)
			_exit(3);
		write_fn();
		_exit(4); /* not killed */
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) || WTERMSIG(status) != SIGXFSZ) {
		CHECK(0, "the writer was not killed by SIGXFSZ (status 0x%x)", status);
		return 0;
	}
	return pid;
}

static void write_big_checkpoint(void)
{
	clg_st_write(writer(1 << 18), tpath("ckpt.safetensors"));
}

static void write_big_cache(void)
{
	static char body[1 << 20];
	char err[256];
	clg_cl_write_atomic(tpath("prog.bin"), "head", 4, body, sizeof(body), err, sizeof(err));
}

static void test_checkpoint(void)
{
	clg_st_writer *w = writer(4);
	clg_st_file *f = NULL;
	char prefix[128], left[4096];
	pid_t pid;

	CHECK_OK(clg_st_write(w, tpath("ckpt.safetensors")));
	pid = killed_writer(write_big_checkpoint);
	if (!pid)
		goto out;
	snprintf(prefix, sizeof(prefix), "ckpt.safetensors.tmp.%ld.", (long)pid);
	snprintf(left, sizeof(left), "%s", tpath(find_prefix(prefix)));
	CHECK(find_prefix(prefix)[0], "the killed writer left %s*", prefix);
	/* a minute old: stale; the next checkpoint write removes it, and the file is whole */
	touch(left, 120);
	CHECK_OK(clg_st_write(w, tpath("ckpt.safetensors")));
	CHECK(!exists(left), "%s was not removed by the next write", left);
	CHECK_OK(clg_st_open(tpath("ckpt.safetensors"), &f));
	CHECK(f && clg_st_count(f) == 1 && clg_st_find(f, "w") && clg_st_find(f, "w")->numel == 4,
	      "the checkpoint reads back");
	clg_st_close(f);
out:
	clg_st_writer_free(w);
}

static void test_cache_writer(void)
{
	char prefix[128], left[4096], err[256];
	pid_t pid = killed_writer(write_big_cache);

	if (!pid)
		return;
	snprintf(prefix, sizeof(prefix), "prog.bin.tmp.%ld.", (long)pid);
	snprintf(left, sizeof(left), "%s", tpath(find_prefix(prefix)));
	CHECK(find_prefix(prefix)[0], "the killed cache writer left %s*", prefix);
	touch(left, 120);
	CHECK(clg_cl_write_atomic(tpath("prog.bin"), "head", 4, "body", 4, err, sizeof(err)) == 0, "write: %s", err);
	CHECK(!exists(left), "%s was not removed by the next cache write", left);
	CHECK(exists(tpath("prog.bin")), "the cache file was written");
}

/* What is removed and what stays. */
static void test_rules(void)
{
	long dead = (long)dead_pid(), live = (long)getppid();
	char name[20][256];
	int n = 0, keep_from;

	/* removed: a dead writer's, a minute old, with and without a suffix */
	snprintf(name[n++], 256, "m.bin.tmp.%ld.0", dead);
	snprintf(name[n++], 256, "m.bin.tmp.%ld", dead);
	snprintf(name[n++], 256, "m.bin.tmp.%ld.3.5f00aa", dead);
	keep_from = n;
	/* kept: a live process's, a fresh one, another name's, look-alikes */
	snprintf(name[n++], 256, "m.bin.tmp.%ld.0", live);
	snprintf(name[n++], 256, "m.bin.tmp.%ld.7", (long)getpid());
	snprintf(name[n++], 256, "xm.bin.tmp.%ld.0", dead);
	snprintf(name[n++], 256, "m.bin.tmpx.%ld.0", dead);
	snprintf(name[n++], 256, "m.bin.tmp.%ldabc", dead);
	snprintf(name[n++], 256, "m.bin.tmp.-%ld", dead);
	snprintf(name[n++], 256, "m.bin.tmp.%ld.fresh", dead); /* touched now, below */
	snprintf(name[n++], 256, "m.bin.tmp.99999999999999999999.0");
	for (int i = 0; i < n; i++)
		touch(tpath(name[i]), strstr(name[i], "fresh") ? 0 : 120);
	mkdir(tpath("m.bin.tmp.1.dir"), 0755); /* a folder, even of a dead pid, stays */
	CHECK(clg_remove_stale_temps(tpath("m.bin")) == keep_from, "%d stale temporaries removed", keep_from);
	for (int i = 0; i < n; i++)
		CHECK(exists(tpath(name[i])) == (i >= keep_from), "%s %s", name[i], i >= keep_from ? "removed" : "kept");
	CHECK(exists(tpath("m.bin.tmp.1.dir")), "a folder was removed");
	CHECK(clg_remove_stale_temps(NULL) == 0 && clg_remove_stale_temps("") == 0 &&
		      clg_remove_stale_temps("/no/such/folder/x") == 0,
	      "NULL, empty and missing paths are harmless");
}

int main(void)
{
	tmp = t_tmpdir();
	if (!tmp) {
		fprintf(stderr, "no temporary folder\n");
		return 1;
	}
	test_rules();
	test_checkpoint();
	test_cache_writer();
	t_rmtree(tmp);
	free(tmp);
	return t_finish("test_stale_tmp");
}
