/* The trainer's comm over MPI: gather and broadcast of bytes with a deadline. */
#include "train_mpi.h"

#ifdef CLGRAD_HAVE_MPI
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
	double timeout_s;
	int rank;
	long die_at;      /* tests: CLGRAD_TEST_MPI_DIE=RANK:N kills that rank at its Nth gather */
	long gathers;
} mpi_state;

static mpi_state state;

/* A collective in flight; what to do when it is done (the reduce-scatter's sum of the parts). */
typedef struct {
	MPI_Request r;   /* first: the starts hand out &r */
	float *parts;    /* reduce-scatter by all-to-all: size parts of n floats, in rank order */
	float *recv;     /* their sum */
	int n, size;
} mpi_req;

/* Waits for req, giving up after the deadline: a rank that died never answers. */
static clg_status wait_for(MPI_Request *req, const char *what)
{
	double t0 = MPI_Wtime();
	int done = 0;

	while (!done) {
		if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return clg_fail(CLG_ERR_STATE, "mpi rank %d: %s failed", state.rank, what);
		if (!done && MPI_Wtime() - t0 > state.timeout_s)
			return clg_fail(CLG_ERR_STATE, "mpi rank %d: no answer to %s for %.0f s: another rank has died or hangs",
					state.rank, what, state.timeout_s);
		/* after 1 ms, poll less: a spinning rank takes the core that the rank it waits for needs
		 * (several ranks on one machine's cores) */
		if (!done && MPI_Wtime() - t0 > 1e-3)
			nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
	}
	return CLG_OK;
}

/* The fault test's rank dies at its Nth collective of a step's exchange (counted where one starts). */
static void maybe_die(void)
{
	if (state.die_at && ++state.gathers == state.die_at)
		raise(SIGKILL);
}

static clg_status too_big(size_t bytes, const char *what)
{
	return clg_fail(CLG_ERR_UNSUPPORTED, "mpi rank %d: %s of %zu bytes: over 2 GiB", state.rank, what, bytes);
}

static clg_status mpi_gather(void *user, const void *send, void *recv, size_t n)
{
	MPI_Request req;
	(void)user;
	maybe_die(); /* a rank dying mid-run, for the fault test */
	if (n > (size_t)0x7fffffff)
		return clg_fail(CLG_ERR_UNSUPPORTED, "mpi gather of %zu bytes: over 2 GiB", n);
	if (MPI_Igather(send, (int)n, MPI_BYTE, recv, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return clg_fail(CLG_ERR_STATE, "mpi rank %d: gather of %zu bytes failed", state.rank, n);
	return wait_for(&req, "the gradient gather");
}

static clg_status mpi_broadcast(void *user, void *buf, size_t n)
{
	MPI_Request req;
	(void)user;
	if (n > (size_t)0x7fffffff)
		return clg_fail(CLG_ERR_UNSUPPORTED, "mpi broadcast of %zu bytes: over 2 GiB", n);
	if (MPI_Ibcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return clg_fail(CLG_ERR_STATE, "mpi rank %d: broadcast of %zu bytes failed", state.rank, n);
	return wait_for(&req, "the parameter broadcast");
}

/* A gather of bytes [off, off + n) of each rank's message of total bytes: rank r's part lands at
 * r * total + off of the root's recv (Igatherv's displacements, in bytes). */
static clg_status mpi_gather_start(void *user, const void *send, void *recv, size_t total, size_t off, size_t n,
				   void **req)
{
	MPI_Request *r;
	int *counts = NULL, *displs = NULL, size = 1;
	clg_status st = CLG_OK;
	(void)user;

	*req = NULL;
	if (off == 0)
		maybe_die(); /* a rank dying mid-run, for the fault test */
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (total * (size_t)size > (size_t)0x7fffffff)
		return clg_fail(CLG_ERR_UNSUPPORTED, "mpi gather of %d x %zu bytes: over 2 GiB", size, total);
	r = calloc(1, sizeof(mpi_req));
	if (state.rank == 0) {
		counts = malloc(sizeof(int) * (size_t)size);
		displs = malloc(sizeof(int) * (size_t)size);
	}
	if (!r || (state.rank == 0 && (!counts || !displs))) {
		st = clg_fail(CLG_ERR_OOM, "mpi rank %d: out of host memory", state.rank);
		goto free_lists;
	}
	for (int k = 0; state.rank == 0 && k < size; k++) {
		counts[k] = (int)n;
		displs[k] = (int)((size_t)k * total + off);
	}
	/* the lists are read when the call is made (MPI 3.1, 5.12: they may be freed at once) */
	if (MPI_Igatherv((const unsigned char *)send + off, (int)n, MPI_BYTE, recv, counts, displs, MPI_BYTE, 0,
			 MPI_COMM_WORLD, r) != MPI_SUCCESS) {
		st = clg_fail(CLG_ERR_STATE, "mpi rank %d: gather of bytes %zu..%zu failed", state.rank, off, off + n);
		goto free_lists;
	}
	*req = r;
	r = NULL;
free_lists:
	free(counts);
	free(displs);
	free(r);
	return st;
}

static clg_status mpi_allreduce_start(void *user, float *buf, size_t n, void **req)
{
	MPI_Request *r;
	(void)user;
	*req = NULL;
	maybe_die();
	if (n > (size_t)0x7fffffff)
		return too_big(n * sizeof(float), "all-reduce");
	if (!(r = calloc(1, sizeof(mpi_req))))
		return clg_fail(CLG_ERR_OOM, "mpi rank %d: out of host memory", state.rank);
	if (MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r) != MPI_SUCCESS) {
		free(r);
		return clg_fail(CLG_ERR_STATE, "mpi rank %d: all-reduce of %zu floats failed", state.rank, n);
	}
	*req = r;
	return CLG_OK;
}

/* Counts and displacements of the ranks' parts, in the unit the call takes; NULL on OOM. */
static int *parts(int size, int **displs)
{
	int *counts = malloc(sizeof(int) * (size_t)size * 2);
	*displs = counts ? counts + size : NULL;
	return counts;
}

static clg_status mpi_allgather_start(void *user, const void *send, void *recv, size_t total, size_t off, size_t n,
				      void **req)
{
	MPI_Request *r;
	int size = 1, *counts, *displs;
	clg_status st = CLG_OK;
	(void)user;

	*req = NULL;
	if (off == 0)
		maybe_die();
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (total * (size_t)size > (size_t)0x7fffffff)
		return too_big(total * (size_t)size, "all-gather");
	r = calloc(1, sizeof(mpi_req));
	counts = parts(size, &displs);
	if (!r || !counts) {
		st = clg_fail(CLG_ERR_OOM, "mpi rank %d: out of host memory", state.rank);
		goto free_lists;
	}
	for (int k = 0; k < size; k++) {
		counts[k] = (int)n;
		displs[k] = (int)((size_t)k * total + off);
	}
	if (MPI_Iallgatherv((const unsigned char *)send + off, (int)n, MPI_BYTE, recv, counts, displs, MPI_BYTE,
			    MPI_COMM_WORLD, r) != MPI_SUCCESS) {
		st = clg_fail(CLG_ERR_STATE, "mpi rank %d: all-gather of bytes %zu..%zu failed", state.rank, off, off + n);
		goto free_lists;
	}
	*req = r;
	r = NULL;
free_lists:
	free(counts); /* read when the call is made (MPI 3.1, 5.12) */
	free(r);
	return st;
}

/* The reduce-scatter as an all-to-all (CLGRAD_MPI_REDUCE_SCATTER=alltoall, the default): rank k's
 * part of every rank's send goes to rank k, which sums the parts in rank order when they are in
 * (mpi_wait). Each link carries (N - 1) / N of the gradients each way, as a ring would, and the sums
 * are those of the root exchange, bit for bit. Open MPI 4.1's MPI_Ireduce_scatter (libnbc) reduces
 * to rank 0 and scatters from there instead: rank 0's link carries 1.5 gradients at N = 2 and more
 * as N grows (docs/SCALING.md); =mpi uses it, to compare. */
/* displs[k]: where part k starts when the n parts of counts lie one after another (MPI's *v calls) */
static void displacements(const int *counts, int n, int *displs)
{
	for (int k = 0; k < n; k++)
		displs[k] = k ? displs[k - 1] + counts[k - 1] : 0;
}

static clg_status reduce_scatter_alltoall(const float *send, float *recv, const int *counts, mpi_req *q)
{
	int size = 1, *sc, *sd, *rc, *rd;
	clg_status st = CLG_OK;

	MPI_Comm_size(MPI_COMM_WORLD, &size);
	q->n = counts[state.rank];
	q->size = size;
	q->recv = recv;
	q->parts = malloc(sizeof(float) * ((size_t)q->n * (size_t)size + 1));
	sc = malloc(sizeof(int) * 4 * (size_t)size);
	if (!q->parts || !sc) {
		free(sc);
		return clg_fail(CLG_ERR_OOM, "mpi rank %d: out of host memory", state.rank);
	}
	sd = sc + size, rc = sd + size, rd = rc + size;
	displacements(counts, size, sd);
	for (int k = 0; k < size; k++) {
		sc[k] = counts[k];
		rc[k] = q->n;
		rd[k] = k * q->n;
	}
	if (MPI_Ialltoallv(send, sc, sd, MPI_FLOAT, q->parts, rc, rd, MPI_FLOAT, MPI_COMM_WORLD, &q->r) != MPI_SUCCESS)
		st = clg_fail(CLG_ERR_STATE, "mpi rank %d: all-to-all of %d floats (reduce-scatter) failed", state.rank, q->n);
	free(sc);
	return st;
}

static clg_status mpi_reduce_scatter_start(void *user, const float *send, float *recv, const int *counts, void **req)
{
	mpi_req *q;
	clg_status st = CLG_OK;
	(void)user;
	*req = NULL;
	maybe_die();
	if (!(q = calloc(1, sizeof(*q))))
		return clg_fail(CLG_ERR_OOM, "mpi rank %d: out of host memory", state.rank);
	if (!strcmp(clg_cfg_str(CLG_CFG_MPI_REDUCE_SCATTER), "alltoall"))
		st = reduce_scatter_alltoall(send, recv, counts, q);
	else if (MPI_Ireduce_scatter(send, recv, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &q->r) != MPI_SUCCESS)
		st = clg_fail(CLG_ERR_STATE, "mpi rank %d: reduce-scatter of %d floats failed", state.rank,
			      counts[state.rank]);
	if (st) {
		free(q->parts);
		free(q);
		return st;
	}
	*req = q;
	return CLG_OK;
}

static clg_status mpi_allgatherv_start(void *user, float *buf, const int *counts, void **req)
{
	MPI_Request *r;
	int size = 1, *c, *displs;
	clg_status st = CLG_OK;
	(void)user;

	*req = NULL;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	r = calloc(1, sizeof(mpi_req));
	c = parts(size, &displs);
	if (!r || !c) {
		st = clg_fail(CLG_ERR_OOM, "mpi rank %d: out of host memory", state.rank);
		goto free_lists;
	}
	memcpy(c, counts, sizeof(int) * (size_t)size);
	displacements(counts, size, displs);
	if (MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, c, displs, MPI_FLOAT, MPI_COMM_WORLD, r) !=
	    MPI_SUCCESS) {
		st = clg_fail(CLG_ERR_STATE, "mpi rank %d: all-gather of %d floats failed", state.rank, counts[state.rank]);
		goto free_lists;
	}
	*req = r;
	r = NULL;
free_lists:
	free(c);
	free(r);
	return st;
}

static clg_status mpi_alltoallv_start(void *user, const void *send, const int *sendcounts, void *recv,
				      const int *recvcounts, void **req)
{
	mpi_req *q;
	int size = 1, *sd, *rd;
	clg_status st = CLG_OK;
	(void)user;

	*req = NULL;
	maybe_die();
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	q = calloc(1, sizeof(*q));
	sd = malloc(sizeof(int) * 2 * (size_t)size);
	if (!q || !sd) {
		st = clg_fail(CLG_ERR_OOM, "mpi rank %d: out of host memory", state.rank);
		goto free_lists;
	}
	rd = sd + size;
	displacements(sendcounts, size, sd);
	displacements(recvcounts, size, rd);
	if (MPI_Ialltoallv(send, sendcounts, sd, MPI_BYTE, recv, recvcounts, rd, MPI_BYTE, MPI_COMM_WORLD, &q->r) !=
	    MPI_SUCCESS) {
		st = clg_fail(CLG_ERR_STATE, "mpi rank %d: all-to-all of %d bytes failed", state.rank, recvcounts[state.rank]);
		goto free_lists;
	}
	*req = q;
	q = NULL;
free_lists:
	free(sd);
	free(q);
	return st;
}

static clg_status mpi_wait(void *user, void *req)
{
	mpi_req *q = req;
	clg_status st = wait_for(&q->r, "a gradient exchange's collective");
	(void)user;
	for (int i = 0; !st && q->parts && i < q->n; i++) { /* the parts summed in rank order */
		float acc = q->parts[i];
		for (int k = 1; k < q->size; k++)
			acc += q->parts[(size_t)k * (size_t)q->n + (size_t)i];
		q->recv[i] = acc;
	}
	free(q->parts);
	free(q);
	return st;
}

clg_status clg_mpi_start(int *argc, char ***argv, double timeout_s, clg_train_comm *comm, int *local_rank)
{
	MPI_Comm node;
	int size;

	/* Left to itself, Open MPI 4.1's non-blocking all-reduce moved 4 message sizes a step through
	 * each rank's link at N = 3 and 4 (recursive doubling's count, growing as log2 N; measured on
	 * simulated hosts, docs/SCALING.md); the ring's stay 4 (N - 1) / N (CLGRAD_MPI_ALLREDUCE=mpi:
	 * Open MPI's choice). An environment that sets the parameter itself keeps its value. */
	if (!strcmp(clg_cfg_str(CLG_CFG_MPI_ALLREDUCE), "ring"))
		setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
	if (MPI_Init(argc, argv) != MPI_SUCCESS)
		return clg_fail(CLG_ERR_STATE, "--mpi: MPI_Init failed (run under mpirun)");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &state.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, state.rank, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, local_rank);
	MPI_Comm_free(&node);
	state.timeout_s = timeout_s;
	{
		const char *die = clg_cfg_str(CLG_CFG_TEST_MPI_DIE);
		int die_rank;
		long die_at;
		if (die && sscanf(die, "%d:%ld", &die_rank, &die_at) == 2 && die_rank == state.rank)
			state.die_at = die_at;
	}
	*comm = (clg_train_comm){.rank = state.rank, .size = size, .user = &state, .gather = mpi_gather,
				 .broadcast = mpi_broadcast, .gather_start = mpi_gather_start, .wait = mpi_wait,
				 .allreduce_start = mpi_allreduce_start, .allgather_start = mpi_allgather_start,
				 .reduce_scatter_start = mpi_reduce_scatter_start, .allgatherv_start = mpi_allgatherv_start,
				 .alltoallv_start = mpi_alltoallv_start};
	if (!clg_cfg_bool(CLG_CFG_MPI_BUCKETS))
		comm->gather_start = NULL; /* one blocking gather per step, to compare */
	return CLG_OK;
}

void clg_mpi_stop(clg_train_comm *comm, int failed)
{
	(void)comm;
	if (failed)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Finalize();
}

#else

clg_status clg_mpi_start(int *argc, char ***argv, double timeout_s, clg_train_comm *comm, int *local_rank)
{
	(void)argc, (void)argv, (void)timeout_s, (void)comm, (void)local_rank;
	return clg_fail(CLG_ERR_UNSUPPORTED, "--mpi: this clgrad was built without MPI; install Open MPI "
			"(Debian: openmpi-bin libopenmpi-dev; scripts/setup.sh does) and rebuild");
}

void clg_mpi_stop(clg_train_comm *comm, int failed) { (void)comm, (void)failed; }

#endif
