/* A driver crash must not be repeated blind (issue 18, item 5).
 *
 *  - Breadcrumb: the step the library is at ("building conv.cl with -DT=float on 'X'", "self-test
 *    im2col case 2 on 'X'", "enqueue gemm on 'X'"), kept in a fixed global that a fatal-signal
 *    handler prints with write() (the CLI's handler, cli/crash_guard.c). Written without a lock:
 *    with several threads the text may mix two steps, never run past its buffer.
 *  - In-progress markers: <cache>/inprogress-<device key>-<pid>.txt exists while a device's
 *    first-use self-test or a program build runs (device key: platform, device, driver). The
 *    handler appends "crashed: SIGSEGV while <breadcrumb>". The next enumeration turns such a
 *    marker into crashed-<key>.txt, which marks the device crashed (clg_device_info.crashed):
 *    clg_backend_open refuses it until CLGRAD_FORCE_DEVICE=1 opens it through a complete
 *    self-test, which removes the record.
 * A marker without a "crashed:" line (the process was killed, or had no handler) is removed once
 * its process is gone and marks nothing: a verdict needs evidence. */
#include "cl_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CRUMB_LEN 256
#define MAX_MARKERS 8

static char crumb[CRUMB_LEN];

static struct {
	uint64_t key;
	int depth;               /* nested begins (a build inside the self-test) */
	volatile sig_atomic_t live; /* path holds a written marker */
	char path[4400];
} markers[MAX_MARKERS];
static pthread_mutex_t marker_lock = PTHREAD_MUTEX_INITIALIZER;

#ifdef CLGRAD_TEST_HOOKS
/* CLGRAD_TEST_CRASH=TEXT: a real SIGSEGV at the first breadcrumb containing TEXT (tests only). */
static const char *test_crash;
static pthread_once_t test_once = PTHREAD_ONCE_INIT;
static void read_test_crash(void)
{
	const char *e = clg_cfg_str(CLG_CFG_TEST_CRASH);
	test_crash = e && *e ? e : NULL;
}
#endif

static size_t put(size_t at, const char *s)
{
	while (s && *s && at < CRUMB_LEN - 1)
		crumb[at++] = *s++;
	return at;
}

void clg_crumb(const char *a, const char *b, const char *c, const char *d, const char *e)
{
	size_t at = put(put(put(put(put(0, a), b), c), d), e);
	crumb[at] = 0;
#ifdef CLGRAD_TEST_HOOKS
	pthread_once(&test_once, read_test_crash);
	if (test_crash && strstr(crumb, test_crash)) {
		/* a fault, not raise(): LLVM's handler (in OpenCL compilers) returns from a raised signal,
		 * while a fault repeats until the handler before it (the CLI's) sees it */
		volatile uintptr_t bad = 8;
		*(volatile int *)bad = 1;
	}
#endif
}

const char *clg_crumb_text(void) { return crumb; }

uint64_t clg_device_key(const clg_device_info *d)
{
	uint64_t h = clg_hash64(CLG_HASH_SEED, d->platform, strlen(d->platform) + 1);
	h = clg_hash64(h, d->name, strlen(d->name) + 1);
	return clg_hash64(h, d->driver_version, strlen(d->driver_version) + 1);
}

/* The cache folder (made when create is set), or 0 when there is none (caching off): then
 * nothing is remembered. */
static int folder(char *dir, size_t len, int create)
{
	clg_cl_cache_dir(dir, len);
	return dir[0] && (!create || clg_cl_mkdir_p(dir) == 0);
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

void clg_crash_marker_begin(const clg_device_info *d, const char *what)
{
	uint64_t key = clg_device_key(d);
	char dir[4096], text[1024];
	int free_slot = -1, fd;

	pthread_mutex_lock(&marker_lock);
	for (int i = 0; i < MAX_MARKERS; i++) {
		if (markers[i].depth && markers[i].key == key) {
			markers[i].depth++;
			goto out;
		}
		if (!markers[i].depth && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		goto out; /* more devices opening at once than slots: this one goes unguarded */
	markers[free_slot].key = key;
	markers[free_slot].depth = 1;
	if (!folder(dir, sizeof(dir), 1))
		goto out;
	snprintf(markers[free_slot].path, sizeof(markers[free_slot].path), "%s/inprogress-%016llx-%ld.txt", dir,
		 (unsigned long long)key, (long)getpid());
	fd = open(markers[free_slot].path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		clg_debug("crash marker: cannot write %s: %s", markers[free_slot].path, strerror(errno));
		goto out;
	}
	snprintf(text, sizeof(text), "clgrad-inprogress 1\npid %ld\ndevice %s\nplatform %s\ndriver %s\nduring %s\n",
		 (long)getpid(), d->name, d->platform, d->driver_version, what);
	write_all(fd, text, strlen(text));
	close(fd);
	markers[free_slot].live = 1;
out:
	pthread_mutex_unlock(&marker_lock);
}

void clg_crash_marker_end(const clg_device_info *d)
{
	uint64_t key = clg_device_key(d);

	pthread_mutex_lock(&marker_lock);
	for (int i = 0; i < MAX_MARKERS; i++) {
		if (!markers[i].depth || markers[i].key != key || --markers[i].depth)
			continue;
		if (markers[i].live) {
			markers[i].live = 0;
			unlink(markers[i].path);
		}
		break;
	}
	pthread_mutex_unlock(&marker_lock);
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGABRT: return "SIGABRT";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	default: return "a fatal signal";
	}
}

const char *clg_crash_signal_name(int sig) { return signal_name(sig); }

/* Async-signal-safe: open, write, close only. */
int clg_crash_note_signal(int sig)
{
	int n = 0;

	for (int i = 0; i < MAX_MARKERS; i++) {
		int fd;
		if (!markers[i].live)
			continue;
		fd = open(markers[i].path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0)
			continue;
		write_all(fd, "crashed: ", 9);
		write_all(fd, signal_name(sig), strlen(signal_name(sig)));
		write_all(fd, " while ", 7);
		write_all(fd, crumb[0] ? crumb : "(no step recorded)", strnlen(crumb[0] ? crumb : "(no step recorded)", CRUMB_LEN));
		write_all(fd, "\n", 1);
		close(fd);
		n++;
	}
	return n;
}

/* Up to len - 1 bytes of path, NUL-terminated; 0 when it could be read. */
static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return 0;
}

/* A leftover marker with a "crashed:" line becomes crashed-<key>.txt; one without is removed once
 * its process has gone. */
static void settle_markers(const char *dir, uint64_t key)
{
	char prefix[64], path[4400], text[4096], rec[1200];
	struct dirent *e;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	snprintf(prefix, sizeof(prefix), "inprogress-%016llx-", (unsigned long long)key);
	while ((e = readdir(dp))) {
		const char *crashed, *during;
		long pid;
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(prefix), NULL, 10);
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (read_small(path, text, sizeof(text)))
			continue;
		crashed = strstr(text, "\ncrashed: ");
		if (!crashed) {
			if (pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
				clg_debug("crash marker: %s: its process ended without a crash report; removed", path);
				unlink(path);
			}
			continue;
		}
		during = strstr(text, "\nduring ");
		snprintf(rec, sizeof(rec), "clgrad-crashed 1\nreason %.*s (during %.*s; pid %ld)\n",
			 (int)strcspn(crashed + 10, "\n"), crashed + 10, during ? (int)strcspn(during + 8, "\n") : 1,
			 during ? during + 8 : "?", pid);
		snprintf(path + strlen(dir), sizeof(path) - strlen(dir), "/crashed-%016llx.txt", (unsigned long long)key);
		if (clg_write_file_atomic(path, rec, strlen(rec)) == CLG_OK) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		} else {
			clg_clear_error();
		}
	}
	closedir(dp);
}

void clg_crash_state(clg_device_info *d)
{
	uint64_t key = clg_device_key(d);
	char dir[4096], path[4400], text[1200];
	const char *r;

	d->crashed[0] = 0;
	if (!folder(dir, sizeof(dir), 0))
		return;
	settle_markers(dir, key);
	snprintf(path, sizeof(path), "%s/crashed-%016llx.txt", dir, (unsigned long long)key);
	if (read_small(path, text, sizeof(text)))
		return;
	r = strstr(text, "reason ");
	snprintf(d->crashed, sizeof(d->crashed), "%.*s", r ? (int)strcspn(r + 7, "\n") : 7, r ? r + 7 : "unknown");
}

void clg_crash_clear(const clg_device_info *d)
{
	char dir[4096], path[4400];

	if (!folder(dir, sizeof(dir), 0))
		return;
	snprintf(path, sizeof(path), "%s/crashed-%016llx.txt", dir, (unsigned long long)clg_device_key(d));
	if (unlink(path) == 0)
		clg_debug("device '%s': opened through a complete self-test; its crash record %s removed", d->name, path);
}

int clg_force_device(void)
{
	return clg_cfg_bool(CLG_CFG_FORCE_DEVICE);
}
