/* Fault injection for tests: CLGRAD_FAULT=KIND:N makes the Nth event of a kind fail, once, as the
 * driver or the system would:
 *   alloc    a device buffer allocation (CL_MEM_OBJECT_ALLOCATION_FAILURE)
 *   enqueue  a command enqueued: kernel launch, upload or download, blocking or not (CL_OUT_OF_RESOURCES)
 *   build    a kernel program made for an op (from the disk cache or from source: CL_BUILD_PROGRAM_FAILURE)
 *   read     a file opened for reading: data sets, checkpoints, the cache's files (EIO)
 *   write    a file written atomically: checkpoints, the cache's files (EIO after the temporary is made)
 * CLGRAD_FAULT=count prints the tallies when a device closes and at exit, to choose N. Device
 * events count once a device's open is complete (its self-test is not counted) and span every
 * device of the process; file events count from the start of the process. */
#include "cl_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[CLG_FAULT_KINDS] = {"alloc", "enqueue", "build", "read", "write"};

static struct {
	pthread_once_t once;
	int bad, count_only;
	clg_fault_kind kind;
	long long at;                   /* the Nth event of kind fails; 0: none */
	long long n[CLG_FAULT_KINDS];   /* events so far, per kind */
	char value[64];
} fault = {.once = PTHREAD_ONCE_INIT};

static _Thread_local int injected; /* the last fault check of this thread fired */

static void print_tallies(const char *when)
{
	fprintf(stderr, "clgrad: CLGRAD_FAULT=count: %lld buffer allocations, %lld enqueues, %lld builds, %lld file reads, "
		"%lld file writes so far (%s)\n", __atomic_load_n(&fault.n[CLG_FAULT_ALLOC], __ATOMIC_RELAXED),
		__atomic_load_n(&fault.n[CLG_FAULT_ENQUEUE], __ATOMIC_RELAXED),
		__atomic_load_n(&fault.n[CLG_FAULT_BUILD], __ATOMIC_RELAXED),
		__atomic_load_n(&fault.n[CLG_FAULT_READ], __ATOMIC_RELAXED),
		__atomic_load_n(&fault.n[CLG_FAULT_WRITE], __ATOMIC_RELAXED), when);
}

static void at_exit_tallies(void) { print_tallies("at exit"); }

static void parse(void)
{
	const char *e = clg_cfg_str(CLG_CFG_FAULT), *colon;
	char *end;
	int k;

	if (!e || !*e)
		return;
	snprintf(fault.value, sizeof(fault.value), "%s", e);
	if (!strcmp(e, "count")) {
		fault.count_only = 1;
		atexit(at_exit_tallies); /* a test facility: the file writes after the last device closed */
		return;
	}
	colon = strchr(e, ':');
	for (k = 0; colon && k < CLG_FAULT_KINDS; k++)
		if ((size_t)(colon - e) == strlen(kind_names[k]) && !strncmp(e, kind_names[k], (size_t)(colon - e)))
			break;
	if (!colon || k == CLG_FAULT_KINDS) {
		fault.bad = 1;
		return;
	}
	fault.kind = (clg_fault_kind)k;
	e = colon + 1;
	fault.at = *e >= '1' && *e <= '9' ? strtoll(e, &end, 10) : 0;
	if (fault.at <= 0 || *end)
		fault.bad = 1;
}

clg_status clg_cl_fault_check(void)
{
	pthread_once(&fault.once, parse);
	if (fault.bad)
		return clg_fail(CLG_ERR_INVALID, "CLGRAD_FAULT='%s': expected alloc:N, enqueue:N, build:N, read:N, "
				"write:N (N >= 1) or count", fault.value);
	return CLG_OK;
}

/* Counts one event of kind; 1 when it is the one to fail. */
static int hit(clg_fault_kind kind)
{
	long long n = __atomic_add_fetch(&fault.n[kind], 1, __ATOMIC_RELAXED);
	injected = fault.at && kind == fault.kind && n == fault.at;
	return injected;
}

cl_int clg_cl_fault(clg_backend *be, clg_fault_kind kind)
{
	injected = 0;
	if (!clg_cl_of(be)->fault_armed)
		return CL_SUCCESS;
	if (!hit(kind))
		return CL_SUCCESS;
	return kind == CLG_FAULT_ALLOC ? CL_MEM_OBJECT_ALLOCATION_FAILURE
	       : kind == CLG_FAULT_BUILD ? CL_BUILD_PROGRAM_FAILURE : CL_OUT_OF_RESOURCES;
}

FILE *clg_fopen_read(const char *path, const char *mode)
{
	if (clg_fault_file(CLG_FAULT_READ)) {
		errno = EIO;
		return NULL;
	}
	return fopen(path, mode);
}

int clg_fault_file(clg_fault_kind kind)
{
	injected = 0;
	pthread_once(&fault.once, parse);
	if (fault.bad || (!fault.at && !fault.count_only))
		return 0;
	return hit(kind);
}

const char *clg_cl_fault_note(void)
{
	return injected ? " [injected by CLGRAD_FAULT]" : "";
}

const char *clg_fault_note(void) { return clg_cl_fault_note(); }

void clg_cl_fault_report(clg_backend *be)
{
	char when[200];
	if (!fault.count_only || !clg_cl_of(be)->fault_armed)
		return;
	snprintf(when, sizeof(when), "device '%s' closed", be->info.name);
	print_tallies(when);
}
