/* The gradient exchange's state, shared by trainer_parallel.c (replicas in one process, and the
 * gather to rank 0) and trainer_collective.c (all-reduce and the sharded optimizer across ranks). */
#ifndef CLG_EXCHANGE_INTERNAL_H
#define CLG_EXCHANGE_INTERNAL_H

#include "trainer_internal.h"

#define INT8_BLOCK 256 /* values sharing one scale */

/* How this trainer's gradients meet (clg_exchange_kind resolved). */
typedef enum { CLG_EX_DEVICES, CLG_EX_ROOT, CLG_EX_ALLREDUCE, CLG_EX_SHARDED } clg_ex_kind;

typedef struct clg_exchange {
	int nparam;
	int64_t *numel;            /* per trainable tensor */
	size_t *offset;            /* its place in a wire buffer (bytes, after the leading loss float) */
	int64_t total;             /* gradient values */
	size_t wire;               /* bytes one contributor sends per step */
	int contributors;          /* replicas in this process, or ranks */
	unsigned char *send;       /* nrep wire buffers */
	unsigned char *recv;       /* root of several ranks: contributors wire buffers */
	float *sum;                /* root: summed gradients */
	float *state;              /* parameters and buffers of replica 0, flat, + the step's loss and loss scale */
	int64_t state_total;
	double bytes, seconds;     /* this epoch */
	int64_t steps;
	clg_loader *calib;         /* the first rows of the data, to measure each device's speed */
	clg_read *reads;           /* nrep x nparam x 2 (int8: scales, values): reads of the gradients */
	unsigned char *started;    /* nrep x nparam: its reads started (during backward, when overlapping) */
	int overlap;               /* start each gradient's reads as soon as backward has finished it */
	int nbucket;               /* with a comm that has gather_start: the step's gather in parts */
	int *bucket_first;         /* nbucket + 1: bucket b holds the parameters [first[b], first[b + 1]) */
	void **reqs;               /* nbucket: the gathers in flight */
	clg_ex_kind kind;
	/* sharded optimizer: the wire's floats [0, 1 + total) (the loss, then every gradient) cut into
	 * one contiguous part per rank; this rank owns [lo, lo + counts[rank]) */
	int *counts;               /* ranks */
	int64_t *first;            /* nparam: each parameter's first float in that layout (1 + the values before) */
	int64_t lo;
	float *part;               /* counts[rank]: this rank's part of the summed gradients */
	float *flat;               /* 1 + total: every rank's parameters after its step (all-gathered) */
	int npiece;                /* the owned part cut at tensor boundaries */
	clg_tensor **pieces;       /* npiece: 1-D leaves, the owned values of a parameter */
	int *piece_param;          /* npiece: which parameter */
	int64_t *piece_at;         /* npiece: the piece's first value within its parameter */
	clg_optimizer *shard_opt;  /* over the pieces: the only optimizer state this rank keeps */
	int pieces_stale;          /* the parameters changed outside a step (start, load): refresh */
	/* sharded with int8: each rank's part quantized for its owner, sent by one all-to-all */
	unsigned char *q8send;     /* every rank's part of this rank's gradients, quantized, in rank order */
	unsigned char *q8recv;     /* this rank's part of every rank's gradients, in rank order */
	int *q8sendcounts, *q8recvcounts; /* bytes, per rank */
} clg_exchange;

/* The root: replica 0 of rank 0 (or of this process). */
static inline int clg_ex_is_root(const clg_trainer *t) { return !t->cfg.comm || t->cfg.comm->rank == 0; }

/* One int8 message of n values as the wire holds it (the block scales as floats, then the packed
 * bytes), dequantized on be: a new tensor (n) in the current scope, or NULL with the status set
 * (trainer_collective.c). */
clg_tensor *clg_ex_wire_dequantize(clg_backend *be, const unsigned char *src, int64_t n);

/* trainer_parallel.c, for trainer_collective.c and trainer_exchange_epoch.c */
clg_status clg_ex_make_buckets(clg_exchange *e, size_t want);
size_t clg_ex_bucket_bytes(void);
/* Replica i's gradients p0..p1-1 into its wire buffer (reads started, all waited for). */
clg_status clg_ex_pack_params(clg_trainer *t, int i, int p0, int p1, clg_status st);
clg_status clg_ex_pack_loss(clg_trainer *t, int i, clg_tensor *wloss);
/* e->sum from replica 0's gradients taken from e->sum: into its gradients, then clg_ex_local_step. */
clg_status clg_ex_root_step(clg_trainer *t);
/* Replica 0's gradients are the batch's: unscale, clip, the scheduled optimizer step. */
clg_status clg_ex_local_step(clg_trainer *t);
/* sum += a contributor's wire buffer decoded (first: sum = it); returns its loss. */
double clg_ex_accumulate(const clg_trainer *t, const unsigned char *buf, int first);
/* Parameters and buffers of replica i, flat, to or from host floats. */
clg_status clg_ex_read_state(clg_trainer *t, int i, float *out);

/* trainer_collective.c: the exchanges without a root */
clg_status clg_ex_collective_new(clg_trainer *t);
void clg_ex_collective_free(clg_exchange *e);
/* A step's exchange after the backward passes were queued: gradients summed over the ranks (and
 * the step taken); *loss the batch's loss. */
clg_status clg_ex_collective_step(clg_trainer *t, clg_tensor *wloss, clg_status st, double *loss);
/* The non-trainable buffers (batch norm's running statistics) from rank 0 to every rank, which
 * each computed from its own rows. */
clg_status clg_ex_sync_buffers(clg_trainer *t);
/* Sharded: the summed gradients are in the pieces' gradients; the optimizer step of this rank's
 * part, the parameters all-gathered (loss0: the summed loss, from rank 0), *loss the batch's. */
clg_status clg_ex_shard_finish(clg_trainer *t, float loss0, double *loss);

/* trainer_shard_int8.c: the sharded optimizer's exchange with int8 compression */
clg_status clg_ex_sharded_int8_new(clg_trainer *t);
void clg_ex_sharded_int8_free(clg_exchange *e);
clg_status clg_ex_sharded_int8_step(clg_trainer *t, clg_tensor *wloss, clg_status st, double *loss);

/* This rank's optimizer state on its device, bytes. */
double clg_ex_optimizer_bytes(clg_trainer *t);

#endif
