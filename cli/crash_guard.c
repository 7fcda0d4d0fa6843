/* A fatal signal (SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE: in practice a driver crashing inside
 * an OpenCL call) ends clgrad with one line naming the step it was at, the library's breadcrumb
 * (backend/opencl/cl_crash.c), and records the crash in the in-progress markers, so that the next run
 * marks the device crashed instead of crashing again. The handler runs on an alternate stack (a
 * stack overflow still reports), uses write() only, then restores the action before it (the
 * default, or a sanitizer's) and lets the signal reach it, so the exit status is the signal's. Core dumps are turned off (RLIMIT_CORE 0, and the
 * process made undumpable in the handler: a driver's core is large and of no use to a user)
 * unless CLGRAD_CORE_DUMP=1. */
#define _GNU_SOURCE
#include "cli.h"

#include <clgrad.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#define NSIG_FATAL 5
static const int fatal_signals[NSIG_FATAL] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
static struct sigaction previous[NSIG_FATAL]; /* the default, or a sanitizer's handler */
static char alt_stack[64 * 1024];
static int dump; /* CLGRAD_CORE_DUMP=1 */

static void say(const char *s) { (void)!write(2, s, strlen(s)); }

static void on_fatal(int sig, siginfo_t *info, void *uctx)
{
	const char *step = clg_crumb_text();

	(void)uctx;
	say("clgrad: fatal signal ");
	say(clg_crash_signal_name(sig));
	say(" while ");
	say(step[0] ? step : "(no step recorded)");
	if (clg_crash_note_signal(sig))
		say(" (recorded: the next run will not use this device unless CLGRAD_FORCE_DEVICE=1)");
	say("\n");
	if (!dump)
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* also where core_pattern pipes to a program, which ignores RLIMIT_CORE */
	/* hand the signal to what was there before (the default action, or ASan's report): a fault
	 * returns and repeats, a raised signal is raised again */
	for (int i = 0; i < NSIG_FATAL; i++)
		if (fatal_signals[i] == sig)
			sigaction(sig, &previous[i], NULL);
	if (info->si_code <= 0)
		raise(sig);
}

void cli_crash_guard(void)
{
	stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof(alt_stack)};
	struct sigaction sa;

	dump = clg_cfg_bool(CLG_CFG_CORE_DUMP);
	if (!dump) {
		struct rlimit rl = {0, 0};
		setrlimit(RLIMIT_CORE, &rl);
	}
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < NSIG_FATAL; i++)
		sigaction(fatal_signals[i], &sa, &previous[i]);
}
