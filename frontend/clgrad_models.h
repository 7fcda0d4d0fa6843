/* The models `clgrad train` knows by name. */
#ifndef CLGRAD_MODELS_H
#define CLGRAD_MODELS_H

#include "clgrad.h"

typedef struct {
	const char *name;     /* "mlp", "cnn", "transformer", "gpt", "gfnet" */
	int64_t vocab;        /* transformer, gpt: vocabulary size */
	int64_t seq_len;      /* transformer, gpt: context length */
	int64_t dim;          /* transformer, gpt, gfnet: model width */
	int64_t heads;        /* transformer, gpt: attention heads */
	int64_t layers;       /* transformer, gfnet: blocks */
	double dropout;       /* gpt: embedding, attention and residual dropout (training only) */
	int recompute;        /* transformer, gpt: keep no activations inside a block; backward re-runs
			       * the block's forward (clg_checkpoint), for a second forward's cost */
} clg_model_config;

/* The built-in models' names, as a command line's choice ("a|b|c"). */
#define CLG_MODEL_NAMES "mlp|cnn|transformer|gpt|gfnet"

/* Builds the model on be with parameters initialised from seed. NULL (with the library's error
 * set) for an unknown name (one of CLG_MODEL_NAMES). */
clg_module *clg_model_build(clg_backend *be, const clg_model_config *cfg, uint64_t seed);
/* Whether the model takes token ids (language model) rather than images. */
int clg_model_is_lm(const clg_model_config *cfg);

/* One spectral block of the gfnet model (frontend/model_gfnet.c) on tokens x (B, H, W, D), as a
 * function of its parameters: p = layer norm 1 weight, bias (D); the complex filter (D, H, W/2+1, 2);
 * layer norm 2 weight, bias (D); fc1 weight (4D, D), bias (4D); fc2 weight (D, 4D), bias (D). */
#define CLG_GFNET_BLOCK_PARAMS 9
clg_tensor *clg_gfnet_block(clg_tensor *x, clg_tensor *const p[CLG_GFNET_BLOCK_PARAMS]);

#endif
