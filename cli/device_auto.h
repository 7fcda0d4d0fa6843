/* --device auto (train, eval, bench): the device expected fastest for the job at hand. */
#ifndef CLGRAD_DEVICE_AUTO_H
#define CLGRAD_DEVICE_AUTO_H

#include <clgrad.h>
#include <clgrad_train.h>
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
 * wins, and the choice and its reasons are printed.
 * spec NULL or "" (no device named): $CLGRAD_DEVICE when set (which may be "auto"), else the
 * default pick, which measures nothing (device_auto_stored), printed in one line.
 * Any other spec: clg_device_select. */
clg_status device_select_for(const char *spec, const auto_job *job, int *index);

/* The default pick for a job, from the stored figures alone (no device is opened): the fastest
 * when every candidate has a figure for the job, else GPU before CPU (never a simulator; the
 * reference when there is no OpenCL device). */
typedef struct {
	int index;
	int measured;       /* 1: by the stored figures; 0: GPU before CPU */
	int n;              /* the candidates' figures, NAN where none */
	int dev[32];
	double rate[32];
	char why[512];      /* "fastest by the stored figures: ..." or "no measurement ...: GPU before CPU" */
} auto_choice;
clg_status device_auto_stored(const auto_job *job, auto_choice *c);

/* The job key of a training run ("train mlp batch 128") or of evaluating (eval) its model */
void device_auto_train_job(char *buf, size_t len, const clg_train_config *cfg, int eval);

#endif
