/* clgrad bench exchange: what the data-parallel gradient exchange costs against the message size,
 * in one process over several devices or across MPI ranks (under mpirun, --mpi). Each size trains
 * a one-layer model of that many float32 parameters for a few steps through the library's trainer
 * and reads the exchange time it reports (gather, sum, optimizer step on the root, parameters sent
 * back): the data for docs/SCALING.md's alpha-beta fit. */
#include "cli.h"
#include "opts.h"
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
	double seconds, bytes, link, state;
	int64_t steps;
} exchange_cost;

/* How the ranks exchange (--exchange, --shard-optimizer). */
typedef struct {
	clg_exchange_kind kind;
	int shard;
} exchange_how;

static clg_status record(void *user, const clg_epoch_info *e)
{
	exchange_cost *c = user;
	c->seconds = e->exchange_seconds;
	c->bytes = e->exchange_bytes;
	c->steps = e->steps;
	c->link = e->link_bytes;
	c->state = e->optimizer_state_bytes;
	return CLG_OK;
}

/* steps steps of a model with about params parameters; the cost per step */
static clg_status measure(clg_backend **be, int n, const clg_train_comm *comm, clg_grad_compress compress,
			  const exchange_how *how, int64_t params, int steps, exchange_cost *cost)
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
	cfg.exchange = how->kind;
	cfg.shard_optimizer = how->shard;
	st = clg_trainer_new_multi(be, n, &cfg, &ds, NULL, &t);
	if (!st)
		st = clg_trainer_run(t, &cb);
	clg_trainer_free(t);
	clg_dataset_free(&ds);
	return st;
}

/* One size of a comma list (up to the comma): a whole number of parameters in [2, 1e9] ("1e6" too). */
static int parse_size(const char *p, int64_t *params)
{
	char *end;
	double x = strtod(p, &end);
	if (end == p || (*end && *end != ',') || !(x >= 2 && x <= 1e9))
		return -1;
	*params = (int64_t)x;
	return 0;
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
	const char *comp = NULL, *ex = NULL;
	exchange_how how = {CLG_EXCHANGE_AUTO, 0};
	const cli_opt opts[] = {
		CLI_OPT_STR("devices", &devices),
		CLI_OPT_STR("sizes", &sizes),
		CLI_OPT_I32("steps", &steps, 2, 1000),
		CLI_OPT_CHOICE("compress", &comp, "none|int8"),
		CLI_OPT_FLAG("mpi", &mpi),
		CLI_OPT_CHOICE("exchange", &ex, "auto|root|allreduce"),
		CLI_OPT_FLAG("shard-optimizer", &how.shard),
	};
	cli_spec cs = {.cmd = "bench exchange", .usage = "usage: clgrad bench exchange [--devices SPEC,SPEC,...] "
		       "[--sizes N,N,...] [--steps S] [--compress none|int8] [--mpi]\n"
		       "       [--exchange auto|root|allreduce] [--shard-optimizer]   (--mpi: as clgrad train's)\n"
		       "  sizes: numbers of parameters in [2, 1e9] (default 1e3,1e4,1e5,1e6,4e6); S in [2, 1000]\n",
		       .opts = opts, .n = CLI_N(opts)};

	if ((rc = cli_parse(&cs, argc, argv)) >= 0)
		return rc;
	rc = 1;
	if (comp)
		compress = !strcmp(comp, "int8") ? CLG_COMPRESS_INT8 : CLG_COMPRESS_NONE;
	if (ex)
		how.kind = !strcmp(ex, "root") ? CLG_EXCHANGE_ROOT : !strcmp(ex, "allreduce") ? CLG_EXCHANGE_ALLREDUCE
										 : CLG_EXCHANGE_AUTO;
	for (const char *p = sizes;; p += strcspn(p, ",") + 1) {
		int64_t params;
		if (parse_size(p, &params))
			return cli_error("bench exchange", "--sizes=%s: each size must be a number of parameters in [2, 1e9]",
					 sizes);
		if (!p[strcspn(p, ",")])
			break;
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
		printf("gradient exchange, %s over %d %s (%s), %d steps a size:\n%12s %12s %12s %12s %14s %14s\n",
		       compress == CLG_COMPRESS_INT8 ? "int8" : "float32", mpi ? comm.size : n, mpi ? "MPI ranks" : "devices",
		       be[0]->info.name, steps, "params", "bytes/step", "ms/step", "GB/s", "link B/step", "optim state B");
	for (const char *p = sizes; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		exchange_cost c = {0};
		int64_t params;
		if (parse_size(p, &params)) /* checked above; gcc -O3 cannot see that params is set */
			continue;
		if (measure(be, n, mpi ? &comm : NULL, compress, &how, params, steps, &c))
			goto fail;
		if (!mpi || comm.rank == 0)
			printf("%12lld %12.0f %12.3f %12.3f %14.0f %14.0f\n", (long long)(params / FEATURES * FEATURES), c.bytes,
			       1e3 * c.seconds / (double)c.steps, c.bytes * (mpi ? comm.size : n) / (c.seconds / (double)c.steps) / 1e9,
			       c.link, c.state);
	}
	rc = 0;
	goto out;
fail:
	report_error("bench exchange");
out:
	for (int i = 0; i < CLG_TRAIN_MAX_DEVICES; i++)
		clg_backend_close(be[i]);
	if (mpi_up)
		clg_mpi_stop(&comm, rc != 0);
	return rc;
}
