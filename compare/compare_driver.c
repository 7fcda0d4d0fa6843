/* clgrad compare, the parent: one child process per device, one after the other (so timings do
 * not disturb each other), each in its own process group with its output in DIR/device-N.log and
 * a watchdog that kills the group when the device's time is up. A driver crash or a compiler hang
 * marks that device and the run goes on. */
#define _GNU_SOURCE
#include "compare_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The watchdog catches hangs; it is not the time budget (the sections keep to that: --quick in 2
 * minutes, the full run in 10, for ref + PoCL). A device killed early loses its last section. */
#define QUICK_TIMEOUT_S 240.0
#define FULL_TIMEOUT_S 600.0

static const struct {
	const char *name;
	int bit;
} suite_names[] = {{"peak", CMP_PEAK}, {"compile", CMP_COMPILE}, {"ops", CMP_OPS}, {"train", CMP_TRAIN}};

int cmp_suite_parse(const char *s, int *bits)
{
	char buf[256], *save = NULL;
	*bits = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int found = 0;
		if (!strcmp(t, "all")) {
			*bits = CMP_ALL;
			continue;
		}
		for (size_t i = 0; i < sizeof(suite_names) / sizeof(suite_names[0]); i++)
			if (!strcmp(t, suite_names[i].name) || (!strcmp(t, "peaks") && suite_names[i].bit == CMP_PEAK)) {
				*bits |= suite_names[i].bit;
				found = 1;
			}
		if (!found)
			return -1;
	}
	return *bits ? 0 : -1;
}

void cmp_suite_str(int bits, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof(suite_names) / sizeof(suite_names[0]); i++)
		if (bits & suite_names[i].bit && used < len)
			used += snprintf(buf + used, len - used, "%s%s", used ? "," : "", suite_names[i].name);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

extern char **environ;

typedef struct {
	char *envp[512];
	char owned[8][1024];  /* entries made here */
	int n, n_owned;
	char idx[16], suites[64];
	const char *argv[16];
	const char *program;  /* what the child execs */
} child_setup;

/* replaces or appends NAME=VALUE; keep: leave an existing NAME alone */
static void env_set(child_setup *c, const char *name, const char *value, int keep)
{
	size_t len = strlen(name);
	char *entry;
	int i;

	for (i = 0; i < c->n; i++)
		if (!strncmp(c->envp[i], name, len) && c->envp[i][len] == '=')
			break;
	if ((i < c->n && keep) || c->n_owned == 8 || (i == c->n && c->n == 510))
		return;
	entry = c->owned[c->n_owned++];
	snprintf(entry, sizeof(c->owned[0]), "%s=%s", name, value);
	c->envp[i] = entry;
	if (i == c->n)
		c->n++;
	c->envp[c->n] = NULL;
}

/* Everything the child needs, made before fork: the parent may have threads (OpenCL runtimes
 * start some), so the child does only async-signal-safe calls before exec. */
static void prepare_child(const cmp_run *r, int index, child_setup *c)
{
	const char *env = clg_cfg_str(CLG_CFG_COMPARE_DEVICE_ENV);
	char list[2048], *save = NULL;
	int a = 0;

	c->n = c->n_owned = 0;
	for (char **e = environ; *e && c->n < 500; e++)
		c->envp[c->n++] = *e;
	c->envp[c->n] = NULL;
	/* The drivers' own caches stay on: compile's cold builds miss them by a define of their own
	 * (clg_measure_cold_build); turned off, PoCL linked anew at every new work-group size. */
	/* CLGRAD_COMPARE_DEVICE_ENV="INDEX:NAME=VALUE[;...]": set in that worker only (a test hook) */
	if (env) {
		snprintf(list, sizeof(list), "%s", env);
		for (char *t = strtok_r(list, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
			char *colon = strchr(t, ':'), *eq;
			if (!colon || colon == t || atoi(t) != index || !(eq = strchr(colon + 1, '=')))
				continue;
			*eq = 0;
			env_set(c, colon + 1, eq + 1, 0);
		}
	}
	c->program = r->opt.worker ? r->opt.worker : "/proc/self/exe";
	snprintf(c->idx, sizeof(c->idx), "%d", index);
	cmp_suite_str(r->opt.suites, c->suites, sizeof(c->suites));
	c->argv[a++] = "clgrad";
	c->argv[a++] = "compare";
	c->argv[a++] = "--worker";
	c->argv[a++] = c->idx;
	c->argv[a++] = "--suite";
	c->argv[a++] = c->suites;
	c->argv[a++] = "--out";
	c->argv[a++] = r->opt.out_dir;
	c->argv[a++] = "--data";
	c->argv[a++] = r->opt.data_dir;
	if (r->opt.quick)
		c->argv[a++] = "--quick";
	c->argv[a] = NULL;
}

static void exec_worker(const child_setup *c, const char *log)
{
	static const char msg[] = "clgrad compare: cannot start the worker (exec failed: the worker program)\n";
	int fd;

	setpgid(0, 0);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execve(c->program, (char **)c->argv, (char **)c->envp);
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(127);
	_exit(127);
}

/* where a killed worker was: "in section X" or "after section X", from the last "section NAME"
 * or "section NAME done" line of its log */
static void last_section(const char *log, char *buf, size_t len)
{
	char line[512], name[64];
	FILE *f = fopen(log, "r");
	snprintf(buf, len, "before any section");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, ": section ");
		if (strncmp(line, "compare worker: device ", 23) || !p || sscanf(p + 10, "%63s", name) != 1)
			continue;
		snprintf(buf, len, "%s section %s", strstr(p + 10, " done") ? "after" : "in", name);
	}
	fclose(f);
}

/* Ctrl-C reaches the parent only (each worker has its own process group): take the running
 * worker down with it and end the run; the caller's handlers come back before cmp_run_devices
 * returns (a library must not leave its own, nor end the caller's process). */
static volatile sig_atomic_t running_child, interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	if (running_child > 0)
		kill(-running_child, SIGKILL);
	interrupted = 1;
}

/* Runs one device's child and fills d->status/detail/exit_code/elapsed_s. */
static void run_one(cmp_run *r, cmp_device *d, double timeout_s)
{
	static child_setup c;
	char log[1100], json[1100], section[96];
	double t0 = now_s();
	int st = 0, timed_out = 0;
	pid_t pid, got;

	snprintf(d->log, sizeof(d->log), "device-%d.log", d->index);
	snprintf(log, sizeof(log), "%s/%s", r->opt.out_dir, d->log);
	/* a stale result from an earlier run in the same folder must not count as this run's */
	snprintf(json, sizeof(json), "%s/device-%d.json", r->opt.out_dir, d->index);
	unlink(json);
	snprintf(json, sizeof(json), "%s/device-%d.partial.json", r->opt.out_dir, d->index);
	unlink(json);
	prepare_child(r, d->index, &c);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(d->status, sizeof(d->status), "error");
		snprintf(d->detail, sizeof(d->detail), "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0)
		exec_worker(&c, log);
	setpgid(pid, pid); /* also here, so the kill below cannot race the child's own setpgid */
	running_child = pid;
	for (;;) {
		got = waitpid(pid, &st, WNOHANG);
		if (got == pid || (got < 0 && errno != EINTR))
			break;
		if (interrupted) { /* a signal between the fork and running_child's store */
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
		}
		if (now_s() - t0 > timeout_s) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			timed_out = 1;
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
	}
	kill(-pid, SIGKILL); /* anything the worker left behind in its group */
	running_child = 0;
	snprintf(json, sizeof(json), "%s/device-%d.json.tmp.%d", r->opt.out_dir, d->index, (int)pid);
	unlink(json); /* a killed worker's unfinished files */
	snprintf(json, sizeof(json), "%s/device-%d.partial.json.tmp.%d", r->opt.out_dir, d->index, (int)pid);
	unlink(json);
	last_section(log, section, sizeof(section));
	d->elapsed_s = now_s() - t0;
	d->exit_code = -1;
	if (timed_out) {
		snprintf(d->status, sizeof(d->status), "timeout");
		snprintf(d->detail, sizeof(d->detail), "killed after %.0f s (--timeout) %s", timeout_s, section);
	} else if (WIFSIGNALED(st)) {
		snprintf(d->status, sizeof(d->status), "crashed");
		snprintf(d->detail, sizeof(d->detail), "SIG%s %s", sigabbrev_np(WTERMSIG(st)) ?
			 sigabbrev_np(WTERMSIG(st)) : "?", section);
	} else {
		d->exit_code = WEXITSTATUS(st);
		/* exit 4: the worker finished but some section could not run */
		snprintf(d->status, sizeof(d->status), "%s", d->exit_code == 0 ? "ok" : d->exit_code == 4 ?
			 "partial" : "error");
		if (d->exit_code && d->exit_code != 4)
			snprintf(d->detail, sizeof(d->detail), "exit status %d", d->exit_code);
	}
	/* a killed worker's file is never complete (written to a temporary name, renamed last); the
	 * sections it finished are in its partial file */
	if (cmp_load_device(r, d, r->opt.out_dir, 0)) {
		if (!strcmp(d->status, "ok") || !strcmp(d->status, "partial")) {
			snprintf(d->status, sizeof(d->status), "error");
			snprintf(d->detail, sizeof(d->detail), "no valid device-%d.json", d->index);
		}
		if (cmp_load_device(r, d, r->opt.out_dir, 1) == 0) {
			size_t n = strlen(d->detail);
			snprintf(d->detail + n, sizeof(d->detail) - n, "; the sections it finished were salvaged");
		}
	}
}

int cmp_run_devices(cmp_run *r, const int *indices, int n)
{
	const clg_device_info *list;
	struct sigaction sa, old_int, old_term;
	int count;
	double timeout = r->opt.timeout_s > 0 ? r->opt.timeout_s : r->opt.quick ? QUICK_TIMEOUT_S : FULL_TIMEOUT_S;

	if (clg_devices(&list, &count))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	r->n = 0;
	for (int i = 0; i < n && r->n < CMP_MAX_DEVICES && !interrupted; i++) {
		cmp_device *d = &r->dev[r->n++];
		memset(d, 0, sizeof(*d));
		d->index = indices[i];
		snprintf(d->name, sizeof(d->name), "%s", list[d->index].name);
		snprintf(d->type, sizeof(d->type), "%s", clg_device_type_name(list[d->index].type));
		if (r->opt.log)
			fprintf(r->opt.log, "compare: [%d/%d] device %d (%s) ...\n", i + 1, n, d->index, d->name);
		run_one(r, d, timeout);
		if (r->opt.log && !interrupted)
			fprintf(r->opt.log, "compare: [%d/%d] device %d: %s%s%s (%.1f s, log %s/%s)\n", i + 1, n, d->index,
				d->status, d->detail[0] ? ": " : "", d->detail, d->elapsed_s, r->opt.out_dir, d->log);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return interrupted ? 1 : 0;
}
