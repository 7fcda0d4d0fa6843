/* The trainer's state, shared by trainer.c (the loop) and trainer_parallel.c (data parallel). */
#ifndef CLG_TRAINER_INTERNAL_H
#define CLG_TRAINER_INTERNAL_H

#include "clgrad_train.h"
#include "../backend/clg_backend_impl.h" /* the device of a replica: be->info */

/* One copy of the model on one device. */
typedef struct {
	clg_backend *be;
	clg_module *model;
	clg_named_tensors params;     /* trainable tensors, module order */
	clg_named_tensors state;      /* parameters and buffers: what is copied from the root after a step */
	clg_tensor **residual;        /* int8 compression: what the last quantization lost, per parameter */
	int64_t share;                /* rows of each global batch */
	double rate;                  /* samples/s measured at the epoch's start */
} clg_replica;

struct clg_trainer {
	clg_train_config cfg;
	char model_name[32];          /* cfg.model.name points here */
	const clg_dataset *train, *test;
	const clg_task *task;         /* cfg.task, or the default for the model */
	int nrep;                     /* replicas in this process */
	clg_replica rep[CLG_TRAIN_MAX_DEVICES];
	clg_optimizer *opt;           /* replica 0's; it steps only on the root (rank 0) */
	clg_loader *loader;           /* hands out global batches on replica 0's device */
	clg_lr_schedule sched;
	int64_t accum;                /* micro-batches an optimizer step (cfg.accum_steps, at least 1) */
	int64_t steps_per_epoch, epochs_done;
	int64_t run_steps;            /* steps taken by this clg_trainer_run call (cfg.max_steps) */
	double first_begun, first_done;
	int first_timed;
	struct clg_exchange *ex;      /* data parallel: buffers of the gradient exchange (NULL: one device) */
	clg_grad_scaler scaler;       /* cfg.loss_scale > 0 */
};

/* tasks.c: whether task can run on ds (what names the caller, for the message) */
clg_status clg_task_check(const clg_task *task, const clg_dataset *ds, const char *what);
/* One batch through task and model: transform (training: 1 in a training step), forward, loss.
 * *out, *target and *loss are the current scope's (or x, y themselves); the caller frees none. */
clg_status clg_task_forward(const clg_task *task, void *user, clg_module *model, clg_tensor *x, clg_tensor *y,
			    int training, clg_tensor **out, clg_tensor **target, clg_tensor **loss);
/* clg_evaluate under autocast to autocast (CLG_F32: none). */
clg_status clg_evaluate_on(clg_module *model, clg_backend *be, const clg_dataset *ds, const clg_task *task, void *user,
			   int64_t batch, clg_dtype autocast, double *metric, double *loss);

/* memory_fit.c: the configuration's estimated memory against every replica's device (before the
 * first step; CLGRAD_FIT_CHECK) */
clg_status clg_trainer_check_fit(const clg_trainer *t);

/* 1 when gradients go between devices or processes. */
static inline int clg_trainer_parallel(const clg_trainer *t) { return t->nrep > 1 || t->cfg.comm; }

/* trainer_parallel.c */
clg_status clg_exchange_new(clg_trainer *t);
void clg_exchange_free(clg_trainer *t);
/* Measures each replica's samples/s on a global batch and sets the shares (cfg.fixed_shares or
 * several ranks: equal). */
clg_status clg_exchange_balance(clg_trainer *t);
/* One data-parallel step on the global batch x, y (on replica 0's device): forward and backward on
 * each replica's rows, gradients summed at the root, optimizer step there, parameters sent back.
 * *loss receives the batch's loss (the same value on every rank). */
clg_status clg_exchange_step(clg_trainer *t, clg_tensor *x, clg_tensor *y, double *loss);
/* Checksum of replica 0's parameters and whether every replica (and rank) has the same. */
clg_status clg_exchange_checksum(clg_trainer *t, uint64_t *sum, int *identical);
/* What the last epoch cost: bytes sent per step per contributor, seconds spent exchanging. */
void clg_exchange_stats(clg_trainer *t, clg_epoch_info *info);
/* The optimizer over tensors (n), in groups by the weight decay rule of clg_train_config (ndim[i]:
 * the dimensions of the parameter tensor i stands for). */
clg_optimizer *clg_trainer_make_optimizer(const clg_train_config *cfg, clg_tensor *const *tensors, const int *ndim,
					  int n);
/* Bytes of an optimizer's state tensors. */
double clg_optimizer_state_bytes(clg_optimizer *o);
/* 1 when each rank keeps the optimizer state of its part of the parameters only. */
int clg_exchange_sharded(const clg_trainer *t);
/* Sharded: the whole optimizer state in a new optimizer over replica 0's parameters (every rank
 * takes part; *full is made on the root only, NULL elsewhere). */
clg_status clg_ex_gather_optimizer(clg_trainer *t, clg_optimizer **full);
/* Sharded: this rank's part of full's state into its optimizer (after a load). */
clg_status clg_ex_scatter_optimizer(clg_trainer *t, clg_optimizer *full);
/* Copies the root's parameters and buffers to every replica and rank (after a load). */
clg_status clg_exchange_broadcast_params(clg_trainer *t);

#endif
