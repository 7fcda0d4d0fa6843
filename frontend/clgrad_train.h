/* clgrad: the training loop as a library. A trainer owns a model (by name, clgrad_models.h), its
 * optimizer, the learning-rate schedule and a shuffling loader over a borrowed training set; it
 * runs epochs, evaluates on a borrowed test set, writes checkpoints atomically and resumes from
 * them. The CLI (`clgrad train`, `clgrad eval`), the examples and the comparison mode all train
 * through it; what a caller wants to see (progress, logs) it gets from callbacks.
 *
 *     clg_train_config cfg = clg_train_config_default();        // mlp, Adam 1e-3, batch 128, 5 epochs
 *     clg_trainer *t;
 *     clg_trainer_new(be, &cfg, &train, &test, &t);
 *     clg_trainer_run(t, &callbacks);                            // or NULL: no callbacks
 *     clg_trainer_free(t);
 *
 * A step enqueues its work and does not wait for the device, except where a callback asks for the
 * running loss (loss_due) and once after the first step (to time it). */
#ifndef CLGRAD_TRAIN_H
#define CLGRAD_TRAIN_H

#include "clgrad.h"
#include "clgrad_checkpoint.h"
#include "clgrad_models.h"
#include "clgrad_quant.h"
#include "clgrad_data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Several processes training one model (data parallel across machines, e.g. over MPI: the CLI's
 * --mpi implements this with Open MPI). Every rank runs a trainer with the same configuration on
 * its own device; rank 0 sums the gradients in rank order, steps, and sends the parameters back. */
typedef struct {
	int rank, size;
	void *user;
	/* Gathers every rank's n bytes at rank 0 (recv: size * n bytes there, in rank order; NULL elsewhere). */
	clg_status (*gather)(void *user, const void *send, void *recv, size_t n);
	/* Rank 0's n bytes to every rank. */
	clg_status (*broadcast)(void *user, void *buf, size_t n);
	/* Optional (NULL: one gather per step). Starts the gather of bytes [off, off + n) of every rank's
	 * message of total bytes, into the same bytes of its slot in recv, and returns at once; *req is
	 * finished by wait. The trainer sends a step's gradients in buckets this way, each as soon as
	 * the backward pass has made it, while the rest is still computed (PyTorch DDP's buckets). */
	clg_status (*gather_start)(void *user, const void *send, void *recv, size_t total, size_t off, size_t n,
				   void **req);
	clg_status (*wait)(void *user, void *req);
	/* Optional, for the exchanges without a root (clg_exchange_kind ALLREDUCE, shard_optimizer);
	 * each starts and returns at once, *req finished by wait. Every rank calls each in the same order.
	 * allreduce_start: n floats of buf summed over the ranks, in place (every rank gets the same sum).
	 * allgather_start: as gather_start, into every rank's recv.
	 * reduce_scatter_start: send (sum of counts floats) summed over the ranks; this rank gets its part,
	 * counts[rank] floats starting at the sum of the counts before it, in recv. */
	clg_status (*allreduce_start)(void *user, float *buf, size_t n, void **req);
	clg_status (*allgather_start)(void *user, const void *send, void *recv, size_t total, size_t off, size_t n,
				      void **req);
	clg_status (*reduce_scatter_start)(void *user, const float *send, float *recv, const int *counts, void **req);
	/* allgatherv of floats in place: rank r's counts[r] floats, at the sum of the counts before it
	 * in buf, to every rank's buf */
	clg_status (*allgatherv_start)(void *user, float *buf, const int *counts, void **req);
	/* alltoallv of bytes: sendcounts[r] bytes of send (in rank order) to rank r; recvcounts[r] bytes
	 * from rank r into recv (in rank order) */
	clg_status (*alltoallv_start)(void *user, const void *send, const int *sendcounts, void *recv,
				      const int *recvcounts, void **req);
} clg_train_comm;

/* How the gradients of several ranks meet. ROOT: gathered at rank 0 in buckets and summed in rank
 * order there, rank 0 steps and broadcasts the parameters (bitwise reproducible; rank 0's link
 * carries 2(N-1) messages a step). ALLREDUCE: each bucket summed by MPI's all-reduce as soon as its
 * reads are done, every rank steps its own optimizer on the same sums (each link carries about
 * 2 (N-1)/N of the gradients whatever N). AUTO: ALLREDUCE from 3 ranks on, ROOT below. */
typedef enum { CLG_EXCHANGE_AUTO, CLG_EXCHANGE_ROOT, CLG_EXCHANGE_ALLREDUCE } clg_exchange_kind;

/* Gradient compression for the exchange between devices or ranks. INT8: block-wise absmax (256
 * values share one float scale, each value a signed byte), with error feedback (what a step's
 * quantization lost is added to the next step's gradient). */
typedef enum { CLG_COMPRESS_NONE, CLG_COMPRESS_INT8 } clg_grad_compress;

#define CLG_TRAIN_MAX_DEVICES 16

/* Dynamic loss scaling, as PyTorch's GradScaler (grad_scaler.c): multiply the loss by scale before
 * backward; clg_grad_scaler_unscale then checks the gradients for inf/NaN on their devices and
 * divides them by the scale. *ok = 0: a non-finite gradient, skip the optimizer step (the scale is
 * multiplied by backoff); *ok = 1: step (after interval good steps in a row the scale grows). */
typedef struct {
	double scale;             /* 65536 to start with */
	double growth, backoff;   /* 2 and 0.5 */
	int64_t interval;         /* 2000 good steps before the scale grows */
	int64_t good;             /* good steps in a row */
	int64_t skipped;          /* steps skipped so far */
} clg_grad_scaler;
void clg_grad_scaler_init(clg_grad_scaler *s, double initial_scale); /* 0: 65536 */
clg_status clg_grad_scaler_unscale(clg_grad_scaler *s, clg_tensor *const *params, int n, int *ok);

/* Precision of training. MIXED: float32 master weights and optimizer state; each step's forward
 * runs under autocast to float16 (clg_autocast_begin: matmul, linear and linear_act on float16
 * copies of their inputs and weights, cast on the device, with float32 accumulation; softmax,
 * the loss, norm statistics and reductions in float32), the backward in the dtypes the forward
 * chose, gradients converted back to the float32 masters; dynamic loss scaling on (loss_scale 0
 * means 65536). Checkpoints hold the float32 masters: a run resumes in either precision. */
typedef enum { CLG_PRECISION_FP32, CLG_PRECISION_MIXED } clg_precision;

/* Builds a model of one's own on be (a trainer then trains it like a named one). */
typedef clg_module *(*clg_model_builder)(clg_backend *be, uint64_t seed, void *user);

/* ---- tasks: what the model is trained to do ---------------------------------------------- *
 * A task turns a batch into the model's input and the loss's target, says how to score the
 * model's output, and what to report. The trainer (each replica, on its rows), clg_evaluate and
 * clg_trainer_evaluate run, for every batch x, y the loader hands out:
 *     transform(user, x, y, training, &input, &target)   (none: input = x, target = y)
 *     out  = clg_module_forward(model, input)
 *     loss = loss(user, out, target)                      a one-element tensor: the batch's mean
 *     metric(user, out, target, &sum, &count)             evaluation only, with no graph
 * and report metric_final(user, total sum, total count) (none: sum / count) and the loss averaged
 * over samples (each batch's loss weighted by its rows). The batch as the loader gives it: x (B,
 * sample shape...) in the dataset's x_dtype (float32 features or int32 token ids); y (B) or (B,
 * y_numel) int32 labels, one-hot float32 (B, [y_numel,] classes) where the task sets one_hot,
 * float32 (B[, y_numel]) for a dataset of float targets (yf), NULL for a dataset without any.
 * Ownership: every batch runs in a scope of its own (clg_scope_begin), and nothing the task's
 * functions return is freed by the caller: the transform's input and target may be x and y
 * themselves or new tensors, left to that scope, as the loss; the metric frees what it makes.
 *
 * The built-in tasks, and what the model's forward receives and must return for each:
 *  classification  x (B, ...); returns logits (B, C). y one-hot (B, C). Loss: cross-entropy
 *                  (fused softmax + NLL); metric "accuracy" (argmax of the logits = label). The
 *                  default for every model but the transformer; today's behaviour.
 *  language_model  token ids x (B, T) int32; returns logits (B * T, V) (or (B, T, V)); y
 *                  one-hot (B, T, V), reshaped to (B * T, V). Loss: cross-entropy per token;
 *                  no metric (NaN). The default for the transformer.
 *  regression      x (B, ...); returns (B, K) (any shape of B * K values). y: float targets
 *                  (B, K) (a dataset with yf: clg_dataset_init_ex). Loss: MSE;
 *                  metric "rmse" (root of the mean squared error over every value).
 *  reconstruction  x (B, ...) float; returns B * sample_numel values (any shape: reshaped to
 *                  x's); the target is x itself, labels unused. Loss: MSE against the input;
 *                  metric "psnr" (10 log10(peak^2 / MSE) of the whole set, peak the double
 *                  task_user points at, 1 without: images in [0, 1]) or "mse" with
 *                  clg_task_reconstruction_mse.
 * A task of one's own: a clg_task with these members set (loss is required; name, metric and
 * transform optional), and task_user for them. */
typedef struct {
	const char *name;         /* "classification", ...: for messages and logs */
	int one_hot;              /* the loader gives y as one-hot rows (the dataset needs labels) */
	int needs_targets;        /* refuse a dataset without labels or targets */
	clg_status (*transform)(void *user, clg_tensor *x, clg_tensor *y, int training, clg_tensor **input,
				clg_tensor **target);
	clg_tensor *(*loss)(void *user, clg_tensor *out, clg_tensor *target);
	clg_status (*metric)(void *user, clg_tensor *out, clg_tensor *target, double *sum, double *count);
	double (*metric_final)(void *user, double sum, double count);
	const char *metric_name;  /* "accuracy", "rmse", "psnr", "mse"; NULL without a metric */
} clg_task;

const clg_task *clg_task_classification(void);
const clg_task *clg_task_language_model(void);
const clg_task *clg_task_regression(void);
const clg_task *clg_task_reconstruction(void);     /* metric psnr */
const clg_task *clg_task_reconstruction_mse(void); /* metric mse */
/* The built-in task of a name above ("reconstruction_mse" for the second), or NULL. */
const clg_task *clg_task_by_name(const char *name);

typedef struct {
	clg_model_config model;   /* which model and its sizes; name is copied by clg_trainer_new */
	clg_model_builder build;  /* when set, builds the model instead (model.name still names it in checkpoints) */
	void *build_user;
	const clg_task *task;     /* what to train for (loss, metric, batch transform); NULL: classification,
				   * or language modelling for the transformer */
	void *task_user;          /* handed to the task's functions */
	clg_opt_config optim;     /* optimizer kind and hyper-parameters (optim.lr is the base rate) */
	int weight_decay_all;     /* 0 (default): tensors of fewer than 2 dims (biases, norm weights) get
				   * no weight decay, a group of their own; 1: every parameter decays */
	clg_lr_kind schedule;     /* constant, step (halves every epoch) or cosine (to 0 at the end) */
	int64_t warmup;           /* linear warm-up steps */
	int64_t epochs;           /* total epochs of the run, counting those a resumed run already did */
	int64_t batch;            /* rows of a micro-batch: one forward and backward */
	int64_t accum_steps;      /* gradient accumulation: micro-batches of `batch` rows per optimizer
				   * step, each loss weighted by its share of the step's rows (the same
				   * gradient as one batch of accum_steps * batch rows, in the memory of one
				   * micro-batch); 0 or 1: none. One device of one process only */
	double clip;              /* max global L2 norm of the gradients; 0: no clipping */
	uint64_t seed;            /* parameter initialisation and data order */
	const char *save;         /* checkpoint written after every epoch, or NULL */
	int64_t stop_after;       /* end after this many epochs of this call (as if interrupted); 0: all */
	int64_t max_steps;        /* end after this many steps of this call; an epoch cut short is not
				   * counted, evaluated or saved; 0: no limit */
	double loss_scale;        /* > 0: dynamic loss scaling from this scale (clg_grad_scaler); 0: off
				   * (with MIXED precision: on from 65536) */
	clg_precision precision;  /* FP32 (default) or MIXED */
	/* data parallel (clg_trainer_new_multi, or comm) */
	int fixed_shares;         /* split each batch equally instead of by each device's measured speed */
	clg_grad_compress compress;
	const clg_train_comm *comm; /* several processes; NULL: this process only */
	/* language models: stored in the checkpoints (clgrad_checkpoint.h), borrowed, may be NULL */
	const char *tokenizer;    /* the serialised tokenizer (clg_tokenizer_to_string) */
	const char *data;         /* the training text's fingerprint (clg_ckpt_fingerprint) */
	const char *data_path;    /* where it was read from */
	clg_exchange_kind exchange; /* with comm: how gradients meet (AUTO by default) */
	int shard_optimizer;      /* with comm: ZeRO stage 1, each rank keeps and steps the optimizer state
				   * of 1/N of the parameters (gradients reduce-scattered, parameters all-gathered) */
} clg_train_config;

/* mlp, Adam lr 1e-3, constant schedule, 5 epochs, batch 128, seed 1; transformer sizes D64 H4 L2 T64. */
clg_train_config clg_train_config_default(void);
/* Names used on command lines and in checkpoints: "sgd", "adam", "adamw"; "constant", "step",
 * "cosine"; "fp32", "mixed". The parsers return 0, or -1 for an unknown name. */
const char *clg_precision_name(clg_precision p);
int clg_precision_parse(const char *name, clg_precision *out);
const char *clg_opt_kind_name(clg_opt_kind k);
int clg_opt_kind_parse(const char *name, clg_opt_kind *out);
const char *clg_lr_kind_name(clg_lr_kind k);
int clg_lr_kind_parse(const char *name, clg_lr_kind *out);
/* The training configuration a checkpoint was written with (what a resumed run continues).
 * cfg->model.name points into meta. What cfg says of the run's length, outputs, precision and loss
 * scaling stays (a checkpoint holds float32 weights whatever the precision it was trained in). */
clg_status clg_train_config_from_meta(const clg_ckpt_meta *meta, clg_train_config *cfg);

typedef struct {
	int64_t epoch;            /* 1-based */
	int64_t step;             /* steps done in this epoch, 1-based */
	int64_t steps;            /* steps per epoch */
	int64_t samples;          /* samples seen in this epoch */
	double loss;              /* mean training loss of this epoch so far; NAN unless loss_due asked */
	double step_loss;         /* this step's loss; NAN unless loss_due asked */
} clg_step_info;

typedef struct {
	int64_t epoch;            /* 1-based */
	int64_t epochs;
	int64_t steps;            /* steps this epoch */
	int64_t samples;
	double train_loss;        /* mean over this epoch's steps */
	double test_acc;          /* fraction correct: the metric when it is "accuracy", else NAN */
	double test_metric;       /* the task's metric on the test set; NAN without one or a test set */
	const char *metric_name;  /* the task's (NULL without a metric) */
	double test_loss;         /* mean per sample (per token for a language model); NAN without a test set */
	double seconds;           /* the epoch's training, without evaluation */
	/* where a step's time goes (train --profile): the host's time queuing the steps (data, forward,
	 * backward, optimizer: ops return before the device has run them, so host_seconds near seconds
	 * means the host, not the device, sets the pace), and the commands sent to the devices */
	double host_seconds;
	double enqueue_seconds; /* of host_seconds: inside the runtimes' enqueue calls (CLBlast, clFFT whole) */
	uint64_t launches, uploads, downloads; /* this epoch, every device of this process */
	/* device memory (the allocator's bytes in use, bucket sizes), per device of this process: the
	 * highest reached within one step of this epoch (the high-water mark is reset as each step
	 * begins, so it holds what lives across steps, parameters and optimizer state, plus the step's
	 * activations, gradients and temporaries), and what is live between steps at the epoch's end */
	uint64_t peak_bytes[CLG_TRAIN_MAX_DEVICES];
	uint64_t live_bytes[CLG_TRAIN_MAX_DEVICES];
	double lr;                /* learning rate of the epoch's last step */
	int first;                /* the first epoch of this run (a resumed run's too) */
	double first_step_begun;  /* clg_now() when this run's first step began, and when the device had done it */
	double first_step_done;
	const char *saved;        /* the checkpoint written after this epoch, or NULL */
	/* data parallel: devices of this process, each one's rows of a batch in this epoch and its
	 * measured speed, the bytes a step sent per device (or rank) for the gradient exchange, and
	 * a checksum of the parameters (equal on every replica, or replicas_identical is 0) */
	int replicas;
	int64_t shares[CLG_TRAIN_MAX_DEVICES];
	double samples_per_s[CLG_TRAIN_MAX_DEVICES];
	double exchange_bytes;    /* per step, per contributor */
	double exchange_seconds;  /* this epoch, gathering, summing and broadcasting */
	int exchange_buckets;     /* gathers a step (a comm that gathers in parts: one per bucket) */
	const char *exchange;     /* "devices" (one process), "root", "allreduce" or "sharded" */
	double link_bytes;        /* per step, what this rank sends plus receives by the exchange's own
				   * count (ring all-reduce and ring all-gather assumed: MPI may choose
				   * otherwise; measure the link for the truth) */
	double optimizer_state_bytes; /* this rank's (replica 0's) optimizer state on its device */
	uint64_t checksum;
	int replicas_identical;
	double loss_scale;        /* loss scaling: the scale at the epoch's end, and steps skipped so far */
	int64_t skipped_steps;
} clg_epoch_info;

/* Every member may be NULL. A callback that returns an error stops the run with that status (set
 * its message with clg_fail). */
typedef struct {
	void *user;
	void (*epoch_begin)(void *user, int64_t epoch, int64_t epochs, int64_t steps);
	/* Whether step_end should get the running loss after this step (a wait for the device). */
	int (*loss_due)(void *user, int64_t step);
	void (*step_end)(void *user, const clg_step_info *info);
	/* After the epoch's evaluation and checkpoint. */
	clg_status (*epoch_end)(void *user, const clg_epoch_info *info);
	/* Before each step (step: 1-based, of this epoch): an error stops the run there, between two
	 * steps, with the model and optimizer as the last step left them and nothing saved for the
	 * epoch cut short (the Python binding checks for Ctrl-C here). */
	clg_status (*step_begin)(void *user, int64_t step);
} clg_train_callbacks;

typedef struct clg_trainer clg_trainer;

/* Builds the model on be from cfg->seed, its optimizer and a shuffling loader over train. train
 * and test are borrowed and must outlive the trainer; test may be NULL (no evaluation). */
clg_status clg_trainer_new(clg_backend *be, const clg_train_config *cfg, const clg_dataset *train,
			   const clg_dataset *test, clg_trainer **out);
/* Data parallel in one process: a replica of the model on each of n devices (up to
 * CLG_TRAIN_MAX_DEVICES); every global batch of cfg->batch rows is split between them, in
 * proportion to each device's speed measured at each epoch's start (cfg->fixed_shares: equally);
 * gradients are summed in device order, the first device steps, and the parameters are copied to
 * the others. With n = 1, the same as clg_trainer_new. */
clg_status clg_trainer_new_multi(clg_backend *const *bes, int n, const clg_train_config *cfg,
				 const clg_dataset *train, const clg_dataset *test, clg_trainer **out);
void clg_trainer_free(clg_trainer *t);
/* Loads a checkpoint's parameters, optimizer state and epoch count; the trainer's configuration
 * should be the checkpoint's (clg_train_config_from_meta) for the run to continue the same curve. */
clg_status clg_trainer_load(clg_trainer *t, const char *path);
/* Writes a checkpoint of the trainer as it stands (atomically: temporary file, then rename). */
clg_status clg_trainer_save(clg_trainer *t, const char *path);
/* Trains from the epoch after the last one done up to cfg->epochs (or cfg->stop_after epochs),
 * evaluating and saving after each. Checks up front that cfg->save can be written. */
clg_status clg_trainer_run(clg_trainer *t, const clg_train_callbacks *cb);
/* The task's metric (accuracy for classification; NAN without a metric, as for a language model)
 * and mean loss of the model on ds, with no graph, in batches of cfg->batch (under autocast with
 * mixed precision). */
clg_status clg_trainer_evaluate(clg_trainer *t, const clg_dataset *ds, double *acc, double *loss);
/* The same without a trainer: model (its tensors on be) in evaluation mode over ds in batches of
 * batch (in order), scored by task (NULL: classification) with user; *metric NAN without a
 * metric. The model's training mode is restored after. metric or loss may be NULL. */
clg_status clg_evaluate(clg_module *model, clg_backend *be, const clg_dataset *ds, const clg_task *task, void *user,
			int64_t batch, double *metric, double *loss);
/* What a training step needs on a device, estimated from the configuration before anything runs
 * (bytes): parameters (with mixed precision their float16 copies too), gradients, optimizer state
 * (Adam's two moments, SGD's momentum) and the activations of one micro-batch of rows (the
 * language models, from their dimensions; 0 and exact 0 for the others); total their sum. largest:
 * the largest single tensor of the step (largest_what names it) against the device's largest
 * allocation; activations_recompute: the activations with recompute. clg_trainer_new refuses a
 * configuration whose total exceeds a device's global memory, or whose largest tensor its largest
 * allocation, naming the sizes and what to change (CLGRAD_FIT_CHECK=0 skips the check). */
typedef struct {
	uint64_t params, grads, optim, activations, activations_recompute, total, largest;
	const char *largest_what;
	int exact;
} clg_memory_estimate;
clg_status clg_train_memory_estimate(const clg_train_config *cfg, clg_backend *be, int64_t nparams, int64_t rows,
				     clg_memory_estimate *out);
/* The task a trainer runs. */
const clg_task *clg_trainer_task(const clg_trainer *t);

clg_module *clg_trainer_model(clg_trainer *t);
clg_optimizer *clg_trainer_optimizer(clg_trainer *t);
const clg_train_config *clg_trainer_config(const clg_trainer *t);
int64_t clg_trainer_steps_per_epoch(const clg_trainer *t);
int64_t clg_trainer_epochs_done(const clg_trainer *t);

#ifdef __cplusplus
}
#endif
#endif
