/* Training checkpoints in the safetensors format: the model's parameters and buffers as
 * "model.<name>", the optimizer's state as "optim.<i>.<slot>", and string metadata (model
 * configuration, epoch, optimizer steps, loader state; for a language model the tokenizer in its
 * serialised form (clgrad_tokenizer.h) under "tokenizer", the training text's fingerprint under
 * "data" and its path under "data_path"). Written atomically. A checkpoint from before the
 * tokenizer and the data were stored has neither key: it loads as before, and its vocabulary is
 * taken to be the chars of the text it is used with, when their counts agree (cli/cmd_train.c). */
#ifndef CLGRAD_CHECKPOINT_H
#define CLGRAD_CHECKPOINT_H

#include <clgrad.h>

#include "clgrad_models.h"
#include "clgrad_tokenizer.h"

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
	/* language models: what the model reads and what it was trained on */
	const char *tokenizer; /* save: the serialised tokenizer, or NULL; read_meta leaves it NULL
				* (clg_ckpt_read_tokenizer reads it) */
	char data[64];         /* the training text's fingerprint (clg_ckpt_fingerprint), "" unknown */
	char data_path[1024];  /* where that text was read from, "" unknown */
} clg_ckpt_meta;

clg_status clg_ckpt_save(const char *path, clg_module *model, clg_optimizer *opt, const clg_ckpt_meta *meta);
/* Reads the metadata only (to build the model before loading). */
clg_status clg_ckpt_read_meta(const char *path, clg_ckpt_meta *meta);
/* The checkpoint's tokenizer (*out, clg_tokenizer_free), or *out = NULL when it holds none (a
 * checkpoint of another model, or from before tokenizers were stored); CLG_ERR_FORMAT when the
 * stored one is malformed. */
clg_status clg_ckpt_read_tokenizer(const char *path, clg_tokenizer **out);
/* A text's fingerprint as the "data" metadata holds it: "bytes=N fnv1a64=HEX" (clg_text_hash). */
void clg_ckpt_fingerprint(int64_t bytes, uint64_t hash, char *buf, size_t len);
/* Loads parameters and buffers into model and, when opt is not NULL, the optimizer's state. */
clg_status clg_ckpt_load(const char *path, clg_module *model, clg_optimizer *opt);

#endif
