/* Training checkpoints in the safetensors format: the model's parameters and buffers as
 * "model.<name>", the optimizer's state as "optim.<i>.<slot>", and string metadata (model
 * configuration, epoch, optimizer steps, loader state). Written atomically. */
#ifndef CLGRAD_CHECKPOINT_H
#define CLGRAD_CHECKPOINT_H

#include "clgrad.h"

#include "clgrad_models.h"

typedef struct {
	clg_model_config model;
	char model_name[32];
	int64_t epochs_done;
	int64_t opt_steps;
	uint64_t seed;
	char optimizer[16];
	char loader[128];      /* clg_loader_state_format */
	/* the training configuration, restored by --resume */
	double lr, momentum, weight_decay, clip;
	int64_t batch, warmup;
	char schedule[16];
} clg_ckpt_meta;

clg_status clg_ckpt_save(const char *path, clg_module *model, clg_optimizer *opt, const clg_ckpt_meta *meta);
/* Reads the metadata only (to build the model before loading). */
clg_status clg_ckpt_read_meta(const char *path, clg_ckpt_meta *meta);
/* Loads parameters and buffers into model and, when opt is not NULL, the optimizer's state. */
clg_status clg_ckpt_load(const char *path, clg_module *model, clg_optimizer *opt);

#endif
