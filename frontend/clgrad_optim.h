/* clgrad: optimizers, learning-rate schedules and gradient clipping (included by clgrad.h). */
/* clgrad.h first, outside the guard: it includes every sub-header in order, so one that uses
 * another's types (nn uses conv's) sees them whichever header a user includes first */
#include "clgrad.h"
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
	int amsgrad;          /* Adam, AdamW: divide by the root of the largest second moment so far */
} clg_opt_config;

/* PyTorch's defaults for a kind: lr 1e-3, no momentum, betas (0.9, 0.999), eps 1e-8, weight decay
 * 0 (AdamW: 0.01, as torch.optim.AdamW), no amsgrad. A zeroed clg_opt_config has weight decay 0
 * whatever the kind: start from this one for PyTorch's AdamW. */
clg_opt_config clg_opt_config_default(clg_opt_kind kind);

/* An optimizer over n parameters (it keeps its own references to them): one group, with cfg's
 * learning rate and weight decay. A step is one fused launch over all parameters (they share an
 * arena where they share a device and dtype, frontend/optim.c), else one per parameter; no host
 * synchronization. */
clg_optimizer *clg_optimizer_new(const clg_opt_config *cfg, clg_tensor *const *params, int n);

/* A parameter group, as one dict of torch.optim's param_groups: its parameters with their own
 * learning rate and weight decay (the other hyper-parameters are the optimizer's). */
typedef struct {
	clg_tensor *const *params;
	int n;
	double lr;
	double weight_decay;
} clg_opt_group;
/* An optimizer over several groups (parameter i of clg_optimizer_state and the checkpoint's
 * optim.i.* counts through the groups in order). Each group steps as one launch. A parameter may
 * be in one group only. */
clg_optimizer *clg_optimizer_new_groups(const clg_opt_config *cfg, const clg_opt_group *groups, int ngroups);
int clg_optimizer_group_count(const clg_optimizer *opt);
double clg_optimizer_group_lr(const clg_optimizer *opt, int group);
void clg_optimizer_set_group_lr(clg_optimizer *opt, int group, double lr);
void clg_optimizer_free(clg_optimizer *opt);
/* Updates every parameter that has a gradient. */
clg_status clg_optimizer_step(clg_optimizer *opt);
/* Drops every parameter's gradient. */
void clg_optimizer_zero_grad(clg_optimizer *opt);
/* Number of parameters. */
int clg_optimizer_count(const clg_optimizer *opt);
/* The optimizer's index of parameter p (as clg_optimizer_state numbers them), or -1. */
int clg_optimizer_index_of(const clg_optimizer *opt, const clg_tensor *p);
/* The base learning rate (cfg's). Setting it scales every group's rate alike: a group made with
 * twice the base rate keeps twice the new one (a schedule then drives every group). */
void clg_optimizer_set_lr(clg_optimizer *opt, double lr);
double clg_optimizer_lr(const clg_optimizer *opt);
/* Steps taken so far (Adam's bias correction uses it; a checkpoint saves it). */
int64_t clg_optimizer_steps(const clg_optimizer *opt);
void clg_optimizer_set_steps(clg_optimizer *opt, int64_t steps);
/* Optimizer state of parameter i (borrowed; NULL before the first step or for a kind without
 * it): slot 0 is SGD's momentum or Adam's first moment, slot 1 Adam's second moment, slot 2
 * amsgrad's largest second moment. */
#define CLG_OPT_STATE_SLOTS 3
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
/* After total_steps the cosine schedule holds min_lr (a documented difference: PyTorch's
 * CosineAnnealingLR, a cosine of period 2 T_max, rises again; clgrad.optim.lr_scheduler in Python
 * follows PyTorch). */
double clg_lr_at(const clg_lr_schedule *s, int64_t step);

#ifdef __cplusplus
}
#endif
#endif
