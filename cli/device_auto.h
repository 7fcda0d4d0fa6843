/* --device auto (train, eval, bench): the device expected fastest for the job at hand. */
#ifndef CLGRAD_DEVICE_AUTO_H
#define CLGRAD_DEVICE_AUTO_H

#include <clgrad.h>
#include <stdio.h>

/* The job's speed on an open device, higher is faster (samples/s, GFLOP/s). */
typedef clg_status (*auto_rate_fn)(clg_backend *be, void *user, double *rate);

typedef struct {
	const char *job;    /* the cache key's job part, e.g. "train mlp batch 128" */
	const char *unit;   /* what rate counts, e.g. "samples/s" */
	auto_rate_fn rate;
	void *user;
	FILE *out;          /* where the choice and its reasons go; NULL: stdout */
} auto_job;

/* spec "auto": each candidate's rate comes from the cache file (auto-device.txt in the cache
 * folder, by job and platform, device and driver) or is measured now and stored; the fastest
 * wins, and the choice and its reasons are printed. Any other spec: clg_device_select. */
clg_status device_select_for(const char *spec, const auto_job *job, int *index);

#endif
