/* clgrad bench exchange: what the data-parallel gradient exchange costs against the message size,
 * in one process over several devices or across MPI ranks (under mpirun, --mpi). Each size trains
 * a one-layer model of that many float32 parameters for a few steps through the library's trainer
 * and reads the exchange time it reports (gather, sum, optimizer step on the root, parameters sent
 * back): the data for docs/SCALING.md's alpha-beta fit. */
#include "cli.h"
#include "train_mpi.h"

#include <clgrad_train.h>
#include <stdlib.h>
#include <string.h>

#define FEATURES 64

static clg_module *build_layer(clg_backend *be, uint64_t seed, void *user)
{
	int64_t outputs = *(const int64_t *)user;
	clg_module *m[] = {clg_nn_linear(be, FEATURES, outputs, 0, CLG_INIT_DEFAULT, seed)};
	return clg_nn_sequential(m, 1);
}

typedef struct {
	double seconds, bytes;
	int64_t steps;
} exchange_cost;

static clg_status record(void *user, const clg_epoch_info *e)
{
	exchange_cost *c = user;
	c->seconds = e->exchange_seconds;
	c->bytes = e->exchange_bytes;
	c->steps = e->steps;
	return CLG_OK;
}

/* steps steps of a model with about params parameters; the cost per step */
static clg_status measure(clg_backend **be, int n, const clg_train_comm *comm, clg_grad_compress compress,
			  int64_t params, int steps, exchange_cost *cost)
{
	int64_t outputs = params / FEATURES > 1 ? params / FEATURES : 2, shape[1] = {FEATURES};
	clg_dataset ds;
	clg_trainer *t = NULL;
	clg_train_config cfg = clg_train_config_default();
	clg_train_callbacks cb = {.user = cost, .epoch_end = record};
	clg_status st = clg_dataset_init(&ds, 32 * (int64_t)steps, 1, shape, CLG_F32, 1);

	if (st)
		return st;
	ds.num_classes = (int)outputs; /* one logit per class: the one-hot targets match the output */
	for (int64_t i = 0; i < ds.n; i++) {
		ds.y[i] = (int32_t)(i % ds.num_classes);
		for (int k = 0; k < FEATURES; k++)
			ds.x[i * FEATURES + k] = (float)((i * 7 + k * 13) % 17) / 17.0f;
	}
	cfg.model.name = "exchange-bench";
	cfg.build = build_layer;
	cfg.build_user = &outputs;
	cfg.batch = 32;
	cfg.epochs = 1;
	cfg.fixed_shares = 1;
	cfg.compress = compress;
	cfg.comm = comm;
	st = clg_trainer_new_multi(be, n, &cfg, &ds, NULL, &t);
	if (!st)
		st = clg_trainer_run(t, &cb);
	clg_trainer_free(t);
	clg_dataset_free(&ds);
	return st;
}

int bench_exchange(int argc, char **argv)
{
	const char *devices = NULL, *sizes = "1e3,1e4,1e5,1e6,4e6";
	int steps = 10, mpi = 0, n = 0, rc = 1, mpi_up = 0, local = 0;
	int idx[CLG_TRAIN_MAX_DEVICES];
	clg_backend *be[CLG_TRAIN_MAX_DEVICES] = {0};
	clg_grad_compress compress = CLG_COMPRESS_NONE;
	clg_train_comm comm;
	const clg_device_info *list;
	int count;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--mpi")) {
			mpi = 1;
			continue;
		}
		if (!v)
			goto usage;
		i++;
		if (!strcmp(a, "--devices"))
			devices = v;
		else if (!strcmp(a, "--sizes"))
			sizes = v;
		else if (!strcmp(a, "--steps") && (steps = atoi(v)) >= 2 && steps <= 1000)
			;
		else if (!strcmp(a, "--compress") && (!strcmp(v, "none") || !strcmp(v, "int8")))
			compress = !strcmp(v, "int8") ? CLG_COMPRESS_INT8 : CLG_COMPRESS_NONE;
		else
			goto usage;
	}
	if (clg_devices(&list, &count) || (mpi && clg_mpi_start(&argc, &argv, 120, &comm, &local)))
		return report_error("bench exchange");
	mpi_up = mpi;
	/* the devices: the list given, else every OpenCL device (one per rank, by local rank, with --mpi) */
	for (const char *p = devices; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		char spec[64];
		snprintf(spec, sizeof(spec), "%.*s", (int)strcspn(p, ","), p);
		if (n == CLG_TRAIN_MAX_DEVICES || clg_device_select(spec, &idx[n++]))
			goto fail;
	}
	for (int i = 1; !devices && i < count && n < CLG_TRAIN_MAX_DEVICES; i++)
		idx[n++] = i;
	if (n == 0)
		idx[n++] = 0;
	if (mpi) {
		idx[0] = idx[local % n];
		n = 1;
	}
	for (int i = 0; i < n; i++)
		if (clg_backend_open(idx[i], &be[i]))
			goto fail;
	if (!mpi || comm.rank == 0)
		printf("gradient exchange, %s over %d %s (%s), %d steps a size:\n%12s %12s %12s %12s\n",
		       compress == CLG_COMPRESS_INT8 ? "int8" : "float32", mpi ? comm.size : n, mpi ? "MPI ranks" : "devices",
		       be[0]->info.name, steps, "params", "bytes/step", "ms/step", "GB/s");
	for (const char *p = sizes; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		exchange_cost c = {0};
		int64_t params = (int64_t)strtod(p, NULL);
		if (params < 2)
			goto fail_msg;
		if (measure(be, n, mpi ? &comm : NULL, compress, params, steps, &c))
			goto fail;
		if (!mpi || comm.rank == 0)
			printf("%12lld %12.0f %12.3f %12.3f\n", (long long)(params / FEATURES * FEATURES), c.bytes,
			       1e3 * c.seconds / (double)c.steps, c.bytes * (mpi ? comm.size : n) / (c.seconds / (double)c.steps) / 1e9);
	}
	rc = 0;
	goto out;
fail_msg:
	fprintf(stderr, "clgrad bench exchange: --sizes '%s': each size is a number of parameters >= 2\n", sizes);
	goto out;
fail:
	report_error("bench exchange");
out:
	for (int i = 0; i < CLG_TRAIN_MAX_DEVICES; i++)
		clg_backend_close(be[i]);
	if (mpi_up)
		clg_mpi_stop(&comm, rc != 0);
	return rc;
usage:
	fprintf(stderr, "usage: clgrad bench exchange [--devices SPEC,SPEC,...] [--sizes N,N,...] [--steps S] "
			"[--compress none|int8] [--mpi]\n");
	return 2;
}
