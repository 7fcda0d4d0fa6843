/* clgrad sweep: runs each unfinished run as its own `clgrad train` process (own process group,
 * output to its log file), at most one per device at a time, with a per-run timeout. */
#define _GNU_SOURCE
#include "sweep.h"

#include <clgrad.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Everything a child needs, built before fork: the parent may have OpenCL runtime threads, so the
 * child makes only async-signal-safe calls before exec. */
typedef struct {
	char *argv[SWEEP_MAX_ARGS + 16];
	char *envp[512];
	char strings[8192];   /* "--opt" names, paths and the device index */
	size_t used;
	char log[4200];
	int resumed;          /* continues an interrupted attempt from its checkpoint */
} child_setup;

typedef struct {
	int run;              /* index into s->runs, -1 when the device is free */
	pid_t pid;
	double t0, last_note;
} slot;

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) { interrupted = sig; }

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *keep(child_setup *c, const char *fmt, const char *a, const char *b)
{
	char *p = c->strings + c->used;
	int n = snprintf(p, sizeof(c->strings) - c->used, fmt, a, b);
	if (n < 0 || (size_t)n >= sizeof(c->strings) - c->used)
		return NULL;
	c->used += (size_t)n + 1;
	return p;
}

/* CLGRAD_SWEEP_RUN_ENV="INDEX:NAME=VALUE[;...]" (a test hook): set in that run's process only. */
static void run_env(child_setup *c, int n, int index)
{
	const char *env = clg_cfg_str(CLG_CFG_SWEEP_RUN_ENV);
	char list[1024], *save = NULL;

	c->envp[n] = NULL;
	if (!env)
		return;
	snprintf(list, sizeof(list), "%s", env);
	for (char *t = strtok_r(list, ";", &save); t && n < 510; t = strtok_r(NULL, ";", &save)) {
		char *colon = strchr(t, ':');
		if (!colon || colon == t || atoi(t) != index || !strchr(colon + 1, '='))
			continue;
		if ((c->envp[n] = keep(c, "%s%s", colon + 1, "")))
			c->envp[++n] = NULL;
	}
}

static int prepare(const sweep *s, int r, int device, child_setup *c)
{
	const sweep_run *run = &s->runs[r];
	char dir[4096], idx[16], path[4200];
	int a = 0, n = 0;

	c->used = 0;
	c->resumed = 0;
	snprintf(dir, sizeof(dir), "%s/runs/%s", s->out, run->id);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	snprintf(idx, sizeof(idx), "%d", device);
	c->argv[a++] = "clgrad";
	c->argv[a++] = "train";
	for (int k = 0; k < run->argc; k += 2) {
		c->argv[a++] = keep(c, "--%s%s", run->argv[k], "");
		c->argv[a++] = (char *)run->argv[k + 1];
	}
	c->argv[a++] = "--device";
	c->argv[a++] = keep(c, "%s%s", idx, "");
	c->argv[a++] = "--log";
	c->argv[a++] = keep(c, "%s/%s", dir, "log.jsonl");
	c->argv[a++] = "--save";
	c->argv[a++] = keep(c, "%s/%s", dir, "model.safetensors");
	snprintf(path, sizeof(path), "%s/model.safetensors", dir);
	if (access(path, R_OK) == 0) { /* interrupted earlier: continue from its last epoch */
		c->argv[a++] = "--resume";
		c->argv[a++] = keep(c, "%s%s", path, "");
		c->resumed = 1;
	}
	c->argv[a] = NULL;
	for (int k = 0; k < a; k++)
		if (!c->argv[k])
			return -1;
	snprintf(c->log, sizeof(c->log), "%s/train.log", dir);
	for (char **e = environ; *e && n < 480; e++)
		c->envp[n++] = *e;
	run_env(c, n, r);
	return 0;
}

static void exec_run(const child_setup *c)
{
	static const char msg[] = "clgrad sweep: cannot start the run (exec /proc/self/exe)\n";
	int fd;

	setpgid(0, 0);
	signal(SIGINT, SIG_DFL);
	fd = open(c->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execve("/proc/self/exe", c->argv, c->envp);
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(127);
	_exit(127);
}

/* The last "clgrad train: ..." line of the run's output: why it failed, in its own words. */
static void last_error_line(const char *log, char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen(log, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "clgrad", 6) && strstr(line, ": ")) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, len, "%.*s", (int)len - 1, line);
		}
	fclose(f);
}

static void finish(sweep *s, slot *sl, int device, int st, int timed_out)
{
	sweep_run *run = &s->runs[sl->run];
	const clg_device_info *devs;
	int ndev;
	char log[4200];

	run->finished = 1;
	run->device = device;
	run->seconds = now_s() - sl->t0;
	run->detail[0] = 0;
	if (!clg_devices(&devs, &ndev) && device < ndev)
		snprintf(run->device_name, sizeof(run->device_name), "%.*s", (int)sizeof(run->device_name) - 1,
			 devs[device].name);
	snprintf(log, sizeof(log), "%s/runs/%s/train.log", s->out, run->id);
	if (timed_out) {
		snprintf(run->status, sizeof(run->status), "timeout");
		snprintf(run->detail, sizeof(run->detail), "killed after %.0f s (--timeout)", s->timeout_s);
	} else if (WIFSIGNALED(st)) {
		const char *name = sigabbrev_np(WTERMSIG(st));
		snprintf(run->status, sizeof(run->status), "crashed");
		snprintf(run->detail, sizeof(run->detail), "SIG%s", name ? name : "?");
	} else if (WEXITSTATUS(st)) {
		snprintf(run->status, sizeof(run->status), "error");
		snprintf(run->detail, sizeof(run->detail), "exit status %d", WEXITSTATUS(st));
		last_error_line(log, run->detail, sizeof(run->detail));
	} else
		snprintf(run->status, sizeof(run->status), "ok");
	sweep_read_log(s, run);
	if (sweep_write_result(s, run))
		fprintf(stderr, "clgrad sweep: cannot write the result of %s: %s\n", run->id, strerror(errno));
	sl->run = -1;
}

static int count_finished(const sweep *s)
{
	int n = 0;
	for (int r = 0; r < s->n_runs; r++)
		n += s->runs[r].finished;
	return n;
}

static void note_end(const sweep *s, const sweep_run *run)
{
	const sweep_epoch *e = run->n_epochs ? &run->ep[run->n_epochs - 1] : NULL;
	printf("[%d/%d] %s %s on device %d: %s in %.1f s", count_finished(s), s->n_runs, run->id, run->label, run->device,
	       run->status, run->seconds);
	if (e && run->lm)
		printf(", epoch %d validation loss %.4f", e->epoch, e->test_loss);
	else if (e)
		printf(", epoch %d test accuracy %.4f", e->epoch, e->test_acc);
	if (run->detail[0])
		printf(" (%s)", run->detail);
	printf("\n");
}

static int start(sweep *s, slot *sl, int r, int device)
{
	static child_setup c;
	pid_t pid;

	if (prepare(s, r, device, &c)) {
		fprintf(stderr, "clgrad sweep: cannot prepare run %s in %s: %s\n", s->runs[r].id, s->out, strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "clgrad sweep: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0)
		exec_run(&c);
	setpgid(pid, pid); /* also here, so a kill cannot race the child's own setpgid */
	*sl = (slot){.run = r, .pid = pid, .t0 = now_s()};
	sl->last_note = sl->t0;
	printf("[%d/%d] %s %s: started on device %d%s (log %s)\n", count_finished(s), s->n_runs, s->runs[r].id,
	       s->runs[r].label, device, c.resumed ? ", continuing from its checkpoint" : "", c.log);
	return 0;
}

static void stop_all(slot *slots, int n)
{
	for (int d = 0; d < n; d++)
		if (slots[d].run >= 0) {
			int st;
			kill(-slots[d].pid, SIGKILL);
			while (waitpid(slots[d].pid, &st, 0) < 0 && errno == EINTR)
				;
		}
}

int sweep_execute(sweep *s)
{
	slot slots[SWEEP_MAX_DEVICES];
	struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term;
	int next = 0, rc = 0;

	for (int d = 0; d < s->n_devices; d++)
		slots[d].run = -1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (;;) {
		int busy = 0;
		for (int d = 0; d < s->n_devices; d++) {
			while (slots[d].run < 0 && next < s->n_runs && s->runs[next].finished)
				next++;
			if (slots[d].run < 0 && next < s->n_runs && !interrupted) {
				if (start(s, &slots[d], next, s->devices[d])) {
					rc = 1;
					goto out;
				}
				next++;
			}
			busy += slots[d].run >= 0;
		}
		if (!busy)
			break;
		if (interrupted) {
			fprintf(stderr, "\nclgrad sweep: interrupted; the running run(s) were stopped, run the same command "
				"to resume\n");
			rc = 130;
			goto out;
		}
		for (int d = 0; d < s->n_devices; d++) {
			slot *sl = &slots[d];
			int st = 0, timed_out = 0;
			pid_t got;
			if (sl->run < 0)
				continue;
			got = waitpid(sl->pid, &st, WNOHANG);
			if (got == 0 && s->timeout_s > 0 && now_s() - sl->t0 > s->timeout_s) {
				kill(-sl->pid, SIGKILL);
				while (waitpid(sl->pid, &st, 0) < 0 && errno == EINTR)
					;
				timed_out = 1;
				got = sl->pid;
			}
			if (got == sl->pid) {
				int r = sl->run;
				kill(-sl->pid, SIGKILL); /* anything the run left behind in its group */
				finish(s, sl, s->devices[d], st, timed_out);
				note_end(s, &s->runs[r]);
			} else if (now_s() - sl->last_note > 60) {
				sl->last_note = now_s();
				printf("  %s still running on device %d, %.0f s\n", s->runs[sl->run].id, s->devices[d],
				       sl->last_note - sl->t0);
			}
		}
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
out:
	stop_all(slots, s->n_devices);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
