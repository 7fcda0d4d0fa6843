/* The gpt model's internals shared by model_gpt.c (the model) and gpt_cache.c (its KV cache). */
#ifndef CLGRAD_GPT_INTERNAL_H
#define CLGRAD_GPT_INTERNAL_H

#include <clgrad.h>

typedef struct {
	int64_t vocab, seq_len, dim, heads, layers;
	double dropout;
} gpt_dims;

/* a block's data: the model's dims, its dropout seed and the step whose masks it draws (set by
 * the model's forward, so a block run twice in a step draws the same masks) */
typedef struct {
	gpt_dims dims;
	uint64_t seed, step;
} gpt_block_data;

typedef struct {
	gpt_dims dims;
	uint64_t steps; /* training forwards so far */
	int recompute;  /* blocks checkpointed (clg_checkpoint) when training with grad */
} gpt_model_data;

/* one layer's cached keys and values, (B, H, max_len, Dh) each */
typedef struct {
	clg_tensor *k, *v;
} gpt_cache_layer;

int gpt_is(const clg_module *m);
clg_status gpt_dims_of(const clg_module *m, gpt_dims *out);
/* One block on x (B, T, D) -> (B, T, D); with cache, x holds positions [len, len + T), whose keys and
 * values are stored in the cache, and attention covers [0, len + T). */
clg_tensor *gpt_block_step(clg_module *block, clg_tensor *x, gpt_cache_layer *cache, int64_t len);
/* The model on ids (B, T) at positions [len, len + T) -> logits (B * T, vocab); cache NULL or one
 * layer a block. */
clg_tensor *gpt_forward_at(clg_module *m, clg_tensor *idx, gpt_cache_layer *cache, int64_t len);

#endif
