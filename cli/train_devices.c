/* clgrad train / eval: the devices a run uses (--device, --device auto's measurement on the real
 * data, --devices), their opening beside the data's loading, and --mpi's ranks. */
#define _GNU_SOURCE /* realpath */
#include "train_cmd.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --device auto: a job's speed on one device, on the first rows of the real data. train: samples/s
 * of the median of steps 2 to 6 of the run's model, batch and optimizer (step 1 builds the
 * kernels; the median, because a busy machine stalls a step now and then); eval: of evaluating up
 * to 6 batches after one. */
#define AUTO_STEPS 6
typedef struct {
	const clg_train_config *cfg;
	const clg_dataset *data;
	int eval;
} auto_train;

typedef struct {
	double t[AUTO_STEPS + 1]; /* clg_now() at the start and after each step */
	int n;                    /* steps done */
} step_clock;

static int auto_every(void *user, int64_t step) { return (void)user, (void)step, 1; }

static void auto_step(void *user, const clg_step_info *s)
{
	step_clock *c = user;
	(void)s;
	if (c->n < AUTO_STEPS)
		c->t[++c->n] = clg_now();
}

static clg_status auto_train_rate(clg_backend *be, void *user, double *rate)
{
	const auto_train *a = user;
	clg_train_config cfg = *a->cfg;
	clg_dataset sub = *a->data; /* the first rows, borrowed */
	clg_trainer *t = NULL;
	step_clock c = {{0}, 0};
	clg_train_callbacks cb = {.user = &c, .loss_due = auto_every, .step_end = auto_step};
	double acc, loss, t0, dt[AUTO_STEPS];
	clg_status st;

	if (sub.n > (AUTO_STEPS + 1) * cfg.batch)
		sub.n = (AUTO_STEPS + 1) * cfg.batch;
	cfg.save = NULL;
	cfg.stop_after = 0;
	cfg.max_steps = AUTO_STEPS;
	cfg.comm = NULL;
	st = clg_trainer_new(be, &cfg, &sub, NULL, &t);
	if (!st && !a->eval) {
		st = clg_trainer_run(t, &cb);
		if (!st && c.n < 2)
			st = clg_fail(CLG_ERR_INVALID, "device auto: fewer than 2 steps of %lld rows in %lld samples",
				      (long long)cfg.batch, (long long)sub.n);
		for (int i = 2; !st && i <= c.n; i++)
			dt[i - 2] = c.t[i] - c.t[i - 1];
		*rate = st ? 0 : (double)cfg.batch / clg_measure_median(dt, c.n - 1);
	} else if (!st) {
		clg_dataset one = sub;
		one.n = sub.n < cfg.batch ? sub.n : cfg.batch;
		st = clg_trainer_evaluate(t, &one, &acc, &loss); /* builds the kernels */
		t0 = clg_now();
		if (!st)
			st = clg_trainer_evaluate(t, &sub, &acc, &loss);
		*rate = st ? 0 : (double)sub.n / (clg_now() - t0);
	}
	clg_trainer_free(t);
	return st;
}

/* One device named by --device, or auto: "--device auto" (or CLGRAD_DEVICE=auto) loads the data
 * first (it is measured on) and picks the fastest; no device named picks from the stored figures
 * without measuring (device_select_for). */
clg_status train_select_device(train_opts *o, data_sets *d, int eval, int *idx)
{
	char job[200];
	const char *spec = o->device && *o->device ? o->device : clg_cfg_str(CLG_CFG_DEVICE);
	auto_train a = {.cfg = &o->cfg, .eval = eval};
	auto_job j = {.job = job, .unit = "samples/s", .rate = auto_train_rate, .user = &a};
	clg_status st;

	if (spec && *spec && strcmp(spec, "auto"))
		return clg_device_select(spec, idx);
	device_auto_train_job(job, sizeof(job), &o->cfg, eval);
	if (spec && !strcmp(spec, "auto")) {
		if ((st = train_load_data(o, d)))
			return st;
		d->loaded = 1;
		a.data = &d->train;
	}
	return device_select_for(spec, &j, idx);
}

/* The devices to train on: --devices (a comma list of specs, or "all" OpenCL devices), else
 * --device (or the default). Each named once. */
clg_status train_resolve_devices(const train_opts *o, int *idx, int *n)
{
	const clg_device_info *devs;
	int ndev;
	char spec[64];
	clg_status st = clg_devices(&devs, &ndev);

	*n = 0;
	if (st)
		return st;
	if (!o->devices) {
		*n = 1;
		return clg_device_select(o->device, &idx[0]);
	}
	if (o->device)
		return clg_fail(CLG_ERR_INVALID, "--device and --devices: give one of them");
	if (!strcmp(o->devices, "all")) {
		for (int i = 1; i < ndev && *n < CLG_TRAIN_MAX_DEVICES; i++)
			idx[(*n)++] = i;
		if (*n == 0)
			idx[(*n)++] = 0; /* no OpenCL device: the reference */
		return CLG_OK;
	}
	for (const char *p = o->devices;; p += strcspn(p, ",") + 1) {
		size_t len = strcspn(p, ",");
		if (len == 0 || len >= sizeof(spec))
			return clg_fail(CLG_ERR_INVALID, "--devices '%s': an empty or over-long device in the list", o->devices);
		if (*n == CLG_TRAIN_MAX_DEVICES)
			return clg_fail(CLG_ERR_INVALID, "--devices '%s': more than %d devices", o->devices, CLG_TRAIN_MAX_DEVICES);
		memcpy(spec, p, len);
		spec[len] = 0;
		st = clg_device_select(spec, &idx[*n]);
		if (st)
			return clg_fail(st, "--devices '%s': %s", o->devices, clg_last_error());
		for (int k = 0; k < *n; k++)
			if (idx[k] == idx[*n])
				return clg_fail(CLG_ERR_INVALID, "--devices '%s': device %d ('%s') named twice", o->devices,
						idx[k], devs[idx[k]].name);
		(*n)++;
		if (!p[len])
			return CLG_OK;
	}
}

/* Loads the data on a thread while the devices open and their kernel programs get ready (fast
 * start). */
clg_status train_open_and_load(train_opts *o, data_sets *d, first_step *fs, const int *idx, int n, clg_backend **be)
{
	data_job job = {.o = o, .d = d};
	pthread_t tid;
	int threaded = pthread_create(&tid, NULL, train_data_thread, &job) == 0;
	const clg_device_info *devs;
	int ndev;
	double t = clg_now();
	clg_status st;

	if (!threaded)
		train_data_thread(&job);
	st = clg_devices(&devs, &ndev);
	for (int i = 0; !st && i < n; i++) {
		char workload[64];
		int programs = 0;
		st = clg_backend_open(idx[i], &be[i]);
		if (st)
			break;
		printf("device %d: %s (%s)\n", idx[i], devs[idx[i]].name, devs[idx[i]].platform);
		fs->opened_s = train_since_launch(fs);
		/* only a head start: a program that fails here fails again, with its op named, at first use */
		snprintf(workload, sizeof(workload), "train %s", o->cfg.model.name);
		if (clg_precompile(be[i], workload, CLG_F32, &programs))
			fprintf(stderr, "clgrad train: warning: kernel precompile on device %d: %s\n", idx[i], clg_last_error());
		fs->programs += programs;
	}
	fs->precompile_s = clg_now() - t;
	fs->ready_s = train_since_launch(fs);
	if (threaded)
		pthread_join(tid, NULL);
	if (!st && job.st)
		st = clg_fail(job.st, "%s", job.msg);
	fs->data_s = train_since_launch(fs);
	return st;
}

/* --mpi: start MPI, and keep only this rank's device (by local rank) of the list. */
clg_status train_start_mpi(int *argc, char ***argv, train_opts *o, clg_train_comm *comm, int *idx, int *n, int *up)
{
	int local = 0;
	clg_status st = clg_mpi_start(argc, argv, o->mpi_timeout, comm, &local);

	if (st)
		return st;
	*up = 1;
	if (!o->devices && !o->device)
		o->devices = "all";
	st = train_resolve_devices(o, idx, n);
	if (st)
		return st;
	idx[0] = idx[local % *n];
	*n = 1;
	o->cfg.comm = comm;
	if (comm->rank != 0) /* rank 0 logs and shows progress; the trainer writes checkpoints there */
		o->log = NULL;
	printf("mpi rank %d of %d (local rank %d): device %d\n", comm->rank, comm->size, local, idx[0]);
	return CLG_OK;
}
