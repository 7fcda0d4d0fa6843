/* clgrad: text generation from a language model, with a KV cache for the gpt model.
 *
 *     clg_generate_opts o = CLG_GENERATE_OPTS_INIT;
 *     o.max_new_tokens = 200, o.temperature = 0.8, o.top_k = 40, o.seed = 1;
 *     st = clg_generate(model, prompt, n_prompt, &o, out, &n_out);
 *
 * The gpt model (frontend/model_gpt.c) keeps each layer's keys and values of the sequence so far,
 * so a new token costs one position's forward (its attention over the cached keys), not the whole
 * sequence's. Other language models (the transformer) run a full forward a token. */
#ifndef CLGRAD_GENERATE_H
#define CLGRAD_GENERATE_H

#include <clgrad.h>
#include <clgrad_models.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the gpt model ---- */

/* The dims of a gpt preset into cfg (vocab, seq_len, dim, heads, layers): tiny (vocab 256, context
 * 256, width 128, 4 heads, 4 layers), gpt2-small (50257, 1024, 768, 12, 12), gpt2-medium (50257,
 * 1024, 1024, 16, 24). CLG_ERR_INVALID naming the presets for another name. */
clg_status clg_gpt_preset(const char *name, clg_model_config *cfg);

/* GPT-2's own layout (Hugging Face's GPT2Model / GPT2LMHeadModel safetensors): the same names as
 * the gpt model's state, optionally under "transformer."; the Conv1D weights attn.c_attn,
 * attn.c_proj, mlp.c_fc and mlp.c_proj stored (in, out), the transposes of the model's (out, in).
 * Load copies every tensor into a gpt model of the file's dims (float16/float64 files cast to
 * float32), ignoring lm_head.weight (tied to wte) and the mask buffers h.N.attn.bias/masked_bias;
 * a missing or mis-shaped tensor is CLG_ERR_FORMAT naming it, and then nothing is loaded. Save
 * writes that layout (float32, without prefix or lm_head), read by the same code. */
clg_status clg_gpt_load_gpt2(clg_module *gpt, const char *path);
clg_status clg_gpt_save_gpt2(clg_module *gpt, const char *path);

/* ---- the KV cache ---- */
typedef struct clg_kv_cache clg_kv_cache;
/* A cache for batch sequences of up to max_len positions (0: the model's context) of a gpt model,
 * on the model's device: 2 * layers tensors (batch, heads, max_len, dim / heads). */
clg_status clg_kv_cache_new(clg_module *gpt, int64_t batch, int64_t max_len, clg_kv_cache **out);
void clg_kv_cache_free(clg_kv_cache *c);
int64_t clg_kv_cache_len(const clg_kv_cache *c); /* positions held */
void clg_kv_cache_reset(clg_kv_cache *c);        /* empty again (the next ids start at position 0) */
/* The logits (B * T, vocab) of ids (B, T) int32 at the positions after those the cache holds, the
 * cache then holding T more. Equal (to rounding) to the rows of the full forward over the whole
 * sequence. Run under clg_no_grad_begin (not differentiable through the cache). */
clg_tensor *clg_gpt_forward_cached(clg_module *gpt, clg_kv_cache *c, clg_tensor *ids);

/* ---- generation ---- */
typedef struct {
	int64_t max_new_tokens;  /* tokens to generate at most */
	double temperature;      /* 0: greedy (the first largest logit); else sampling from softmax(logits / T) */
	int64_t top_k;           /* sampling among the k largest logits (0: all) */
	double top_p;            /* then the smallest set of largest probabilities summing to >= top_p (1: all) */
	uint64_t seed;           /* the sampler's random stream (host side: the same ids on every device) */
	const int32_t *stop_ids; /* generation ends after a token among these n_stop_ids (kept in out) */
	int n_stop_ids;
	const char *const *stop; /* ... or once the generated text contains one of these n_stop strings */
	int n_stop;              /* (needs token_text; the token completing it is kept in out) */
	/* the bytes of token id into buf (at most cap), returning their count: for stop strings */
	size_t (*token_text)(void *user, int32_t id, char *buf, size_t cap);
	/* called after each new token (streaming); a nonzero return ends the generation */
	int (*on_token)(void *user, int32_t id);
	void *user;
	int64_t context;         /* the model's context (0: a gpt model's own; required otherwise) */
	int no_cache;            /* a full forward each token, as models without a cache (the reference) */
} clg_generate_opts;
#define CLG_GENERATE_OPTS_INIT {16, 1.0, 0, 1.0, 0, NULL, 0, NULL, 0, NULL, NULL, NULL, 0, 0}

/* Generates up to o->max_new_tokens ids after the n_prompt >= 1 ids of prompt into out (room for
 * max_new_tokens), their count in *n_out. The model sees the last `context` tokens at most: when
 * the sequence outgrows it, the window moves on to keep the newest half (with the cache: refilled
 * from them), the same for both paths, so greedy ids with and without the cache are equal. The
 * model is put in evaluation mode (no dropout) and runs without the autograd. */
clg_status clg_generate(clg_module *model, const int32_t *prompt, int64_t n_prompt, const clg_generate_opts *o,
			int32_t *out, int64_t *n_out);

#ifdef __cplusplus
}
#endif
#endif
