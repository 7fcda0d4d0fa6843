/* clgrad: optimizers, learning-rate schedules and gradient clipping (included by clgrad.h). */
#ifndef CLGRAD_OPTIM_H
#define CLGRAD_OPTIM_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clg_optimizer clg_optimizer;

typedef enum { CLG_OPT_SGD, CLG_OPT_ADAM, CLG_OPT_ADAMW } clg_opt_kind;

typedef struct {
	clg_opt_kind kind;
	double lr;
	double momentum;      /* SGD */
	double dampening;     /* SGD */
	int nesterov;         /* SGD */
	double beta1, beta2;  /* Adam, AdamW (0 means the defaults 0.9, 0.999) */
	double eps;           /* Adam, AdamW (0 means 1e-8) */
	double weight_decay;  /* L2 for SGD and Adam, decoupled for AdamW */
} clg_opt_config;

/* An optimizer over n parameters (it keeps its own references to them). Each step is one fused
 * kernel launch per parameter; no host synchronization. */
clg_optimizer *clg_optimizer_new(const clg_opt_config *cfg, clg_tensor *const *params, int n);
void clg_optimizer_free(clg_optimizer *opt);
/* Updates every parameter that has a gradient. */
clg_status clg_optimizer_step(clg_optimizer *opt);
/* Drops every parameter's gradient. */
void clg_optimizer_zero_grad(clg_optimizer *opt);
/* Number of parameters. */
int clg_optimizer_count(const clg_optimizer *opt);
void clg_optimizer_set_lr(clg_optimizer *opt, double lr);
double clg_optimizer_lr(const clg_optimizer *opt);
/* Steps taken so far (Adam's bias correction uses it; a checkpoint saves it). */
int64_t clg_optimizer_steps(const clg_optimizer *opt);
void clg_optimizer_set_steps(clg_optimizer *opt, int64_t steps);
/* Optimizer state of parameter i (borrowed; NULL before the first step or for a kind without
 * it): slot 0 is SGD's momentum or Adam's first moment, slot 1 Adam's second moment. */
clg_tensor *clg_optimizer_state(clg_optimizer *opt, int i, int slot);
/* Replaces a state tensor (copied), e.g. when resuming from a checkpoint. */
clg_status clg_optimizer_set_state(clg_optimizer *opt, int i, int slot, clg_tensor *value);

/* Scales the gradients so that their global L2 norm is at most max_norm. All on the device (no
 * host synchronization); *norm_out, when not NULL, receives a one-element tensor with the norm
 * before clipping (owned by the caller). */
clg_status clg_clip_grad_norm(clg_tensor *const *params, int n, double max_norm, clg_tensor **norm_out);

/* Learning-rate schedules: lr at a step, computed on the host. */
typedef enum { CLG_LR_CONSTANT, CLG_LR_STEP, CLG_LR_COSINE } clg_lr_kind;
typedef struct {
	clg_lr_kind kind;
	double base_lr;
	int64_t warmup_steps;  /* linear warm-up: step s < warmup_steps gets base_lr * (s + 1) / warmup_steps */
	int64_t step_size;     /* STEP: multiply by gamma every step_size steps */
	double gamma;
	int64_t total_steps;   /* COSINE: decays to min_lr at total_steps */
	double min_lr;
} clg_lr_schedule;
double clg_lr_at(const clg_lr_schedule *s, int64_t step);

#ifdef __cplusplus
}
#endif
#endif
