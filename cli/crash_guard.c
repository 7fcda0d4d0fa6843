/* A fatal signal (SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE: in practice a driver crashing inside
 * an OpenCL call) ends clgrad with one line naming the step it was at, the library's breadcrumb
 * (backend/opencl/cl_crash.c), and records the crash in the in-progress markers, so that the next run
 * marks the device crashed instead of crashing again. The handler runs on an alternate stack (a
 * stack overflow still reports), uses write() only, then restores the default action and
 * re-raises, so the exit status is the signal's. Core dumps are turned off (RLIMIT_CORE 0, and the
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

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE};
static char alt_stack[64 * 1024];
static int dump; /* CLGRAD_CORE_DUMP=1 */

static void say(const char *s) { (void)!write(2, s, strlen(s)); }

static void on_fatal(int sig)
{
	const char *step = clg_crumb_text();

	say("clgrad: fatal signal ");
	say(clg_crash_signal_name(sig));
	say(" while ");
	say(step[0] ? step : "(no step recorded)");
	if (clg_crash_note_signal(sig))
		say(" (recorded: the next run will not use this device unless CLGRAD_FORCE_DEVICE=1)");
	say("\n");
	if (!dump)
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* also where core_pattern pipes to a program, which ignores RLIMIT_CORE */
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_crash_guard(void)
{
	const char *core = getenv("CLGRAD_CORE_DUMP");
	stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof(alt_stack)};
	struct sigaction sa;

	dump = core && !strcmp(core, "1");
	if (!dump) {
		struct rlimit rl = {0, 0};
		setrlimit(RLIMIT_CORE, &rl);
	}
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaction(fatal_signals[i], &sa, NULL);
}
