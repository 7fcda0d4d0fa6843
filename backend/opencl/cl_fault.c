/* Fault injection for tests: CLGRAD_FAULT=alloc:N makes the Nth device buffer allocation of the
 * process fail as the driver would (CL_MEM_OBJECT_ALLOCATION_FAILURE), CLGRAD_FAULT=enqueue:N the
 * Nth command enqueued (kernel launch, upload or download: CL_OUT_OF_RESOURCES), once.
 * CLGRAD_FAULT=count prints both tallies when a device closes, to choose N. Counting starts when a
 * device's open is complete (its self-test is not counted); it spans every device of the process. */
#include "cl_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	pthread_once_t once;
	int bad, count_only;
	clg_cl_fault_kind kind;
	long long at;             /* the Nth event of kind fails; 0: none */
	long long n[2];           /* events so far, per kind */
	char value[64];
} fault = {.once = PTHREAD_ONCE_INIT};

static _Thread_local int injected; /* the last clg_cl_fault of this thread fired */

static void parse(void)
{
	const char *e = getenv("CLGRAD_FAULT");
	char *end;
	if (!e || !*e)
		return;
	snprintf(fault.value, sizeof(fault.value), "%s", e);
	if (!strcmp(e, "count")) {
		fault.count_only = 1;
		return;
	}
	fault.kind = !strncmp(e, "alloc:", 6) ? CLG_CL_FAULT_ALLOC : CLG_CL_FAULT_ENQUEUE;
	if (strncmp(e, "alloc:", 6) && strncmp(e, "enqueue:", 8)) {
		fault.bad = 1;
		return;
	}
	e = strchr(e, ':') + 1;
	fault.at = *e >= '1' && *e <= '9' ? strtoll(e, &end, 10) : 0;
	if (fault.at <= 0 || *end)
		fault.bad = 1;
}

clg_status clg_cl_fault_check(void)
{
	pthread_once(&fault.once, parse);
	if (fault.bad)
		return clg_fail(CLG_ERR_INVALID, "CLGRAD_FAULT='%s': expected alloc:N, enqueue:N (N >= 1) or count",
				fault.value);
	return CLG_OK;
}

cl_int clg_cl_fault(clg_backend *be, clg_cl_fault_kind kind)
{
	long long n;
	injected = 0;
	if (!clg_cl_of(be)->fault_armed)
		return CL_SUCCESS;
	n = __atomic_add_fetch(&fault.n[kind], 1, __ATOMIC_RELAXED);
	if (fault.at && kind == fault.kind && n == fault.at) {
		injected = 1;
		return kind == CLG_CL_FAULT_ALLOC ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_OUT_OF_RESOURCES;
	}
	return CL_SUCCESS;
}

const char *clg_cl_fault_note(void)
{
	return injected ? " [injected by CLGRAD_FAULT]" : "";
}

void clg_cl_fault_report(clg_backend *be)
{
	if (fault.count_only && clg_cl_of(be)->fault_armed)
		fprintf(stderr, "clgrad: CLGRAD_FAULT=count: %lld buffer allocations, %lld enqueues so far (device '%s' closed)\n",
			__atomic_load_n(&fault.n[CLG_CL_FAULT_ALLOC], __ATOMIC_RELAXED),
			__atomic_load_n(&fault.n[CLG_CL_FAULT_ENQUEUE], __ATOMIC_RELAXED), be->info.name);
}
