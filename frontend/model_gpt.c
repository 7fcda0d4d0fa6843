/* A GPT-2-class decoder (`--model gpt`): token and learned position embeddings, pre-norm blocks of
 * causal multi-head attention and a tanh-GELU MLP, a final layer norm and a head tied to the token
 * embedding (logits = h wte^T: one tensor used twice, its gradient the sum of both uses). Dropout
 * (cfg->dropout, training only) on the embeddings' sum, the attention weights and both residual
 * branches, as GPT-2's embd/attn/resid_pdrop. GPT-2's initialisation: weights N(0, 0.02), the
 * residual projections (attn.c_proj, mlp.c_proj) N(0, 0.02 / sqrt(2 L)), biases 0, layer norms 1/0.
 * State names are GPT-2's (docs/API.md, "GPT-2 checkpoints"): wte.weight, wpe.weight,
 * h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}.{weight, bias}, ln_f.*; the
 * linear weights are (out, in) as torch.nn.Linear (GPT-2's Conv1D stores their transposes).
 * Input (B, T) int32 ids -> logits (B * T, vocab). The KV cache of generation is gpt_cache.c's. */
#include "clgrad_generate.h"
#include "clgrad_models.h"
#include "gpt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LN_EPS 1e-5

/* ---- host initialisation: the same values on every device ---- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* N(0, std) by Box-Muller from splitmix64 */
static clg_tensor *host_normal(clg_backend *be, int ndim, const int64_t *shape, double std, uint64_t seed)
{
	int64_t n = 1;
	uint64_t s = seed;
	float *h;
	clg_tensor *t;

	for (int d = 0; d < ndim; d++)
		n *= shape[d];
	h = malloc(sizeof(float) * (size_t)(n ? n : 1));
	if (!h)
		return clg_fail(CLG_ERR_OOM, "gpt: init: out of host memory"), NULL;
	for (int64_t i = 0; i < n; i += 2) {
		double u1 = ((double)(splitmix(&s) >> 11) + 1.0) * (1.0 / 9007199254740992.0); /* (0, 1] */
		double u2 = (double)(splitmix(&s) >> 11) * (1.0 / 9007199254740992.0);
		double r = sqrt(-2.0 * log(u1)), a = 6.283185307179586 * u2; /* 2 pi */
		h[i] = (float)(std * r * cos(a));
		if (i + 1 < n)
			h[i + 1] = (float)(std * r * sin(a));
	}
	t = clg_from_host(be, CLG_F32, ndim, shape, h);
	free(h);
	return t;
}

/* ---- modules: containers named as GPT-2's, whose forwards the blocks call directly ---- */

static clg_tensor *linear_forward(clg_module *m, clg_tensor *x)
{
	return clg_linear(x, m->tensors[0], m->ntensors > 1 ? m->tensors[1] : NULL);
}
static clg_tensor *embedding_forward(clg_module *m, clg_tensor *idx) { return clg_embedding(m->tensors[0], idx); }
static clg_tensor *no_forward(clg_module *m, clg_tensor *x)
{
	(void)x;
	clg_fail(CLG_ERR_INVALID, "gpt: module '%s' holds parameters only (its block runs it)", m->ops->kind);
	return NULL;
}
static void free_data(clg_module *m) { free(m->data); }

static const clg_module_ops linear_ops = {"linear", linear_forward, NULL};
static const clg_module_ops embedding_ops = {"embedding", embedding_forward, NULL};
static const clg_module_ops attn_ops = {"gpt_attention", no_forward, NULL};
static const clg_module_ops mlp_ops = {"gpt_mlp", no_forward, NULL};
static const clg_module_ops blocks_ops = {"gpt_blocks", no_forward, NULL};

/* weight (out, in) N(0, std), bias (out) zeros */
static clg_module *linear(clg_backend *be, int64_t in, int64_t out, double std, uint64_t seed)
{
	clg_module *m = clg_module_new(&linear_ops);
	if (m && (clg_module_add_tensor(m, "weight", host_normal(be, CLG_SHAPE(out, in), std, seed), 1) ||
		  clg_module_add_tensor(m, "bias", clg_zeros(be, CLG_F32, CLG_SHAPE(out)), 1))) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

static clg_module *embedding(clg_backend *be, int64_t num, int64_t dim, uint64_t seed)
{
	clg_module *m = clg_module_new(&embedding_ops);
	if (m && clg_module_add_tensor(m, "weight", host_normal(be, CLG_SHAPE(num, dim), 0.02, seed), 1)) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

/* m (NULL: its error stands) with the n named children, each taken over; all freed on failure */
static clg_module *named(clg_module *m, int n, const char *const *names, clg_module **kids)
{
	int ok = m != NULL;
	for (int i = 0; i < n; i++) {
		if (!kids[i])
			ok = 0;
		else if (!ok)
			clg_module_free(kids[i]);
		else if (clg_module_add_child(m, names[i], kids[i])) /* freed it */
			ok = 0;
	}
	if (!ok && m) {
		clg_module_free(m);
		m = NULL;
	}
	return m;
}

/* ---- the forward ---- */

/* the seed of dropout draw k of a block's step (distinct for every block, step and draw) */
static uint64_t draw_seed(const gpt_block_data *d, int k)
{
	uint64_t s = d->seed ^ (d->step * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)k << 56);
	return splitmix(&s);
}

static clg_tensor *dropout(clg_tensor *x, const gpt_block_data *d, int k, int training)
{
	if (!training || d->dims.dropout <= 0)
		return x;
	return clg_dropout(x, d->dims.dropout, draw_seed(d, k), 1);
}

/* Attention over the cache: q, k, v (B, H, T, Dh) of positions [len, len + T); k and v are written
 * into the cache's layer tensors (B, H, max_len, Dh) there, and q attends to its [0, len + T). */
static clg_tensor *cached_attention(clg_tensor *q, clg_tensor *k, clg_tensor *v, gpt_cache_layer *c, int64_t len)
{
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;
	clg_tensor *ks, *vs, *kall, *vall, *mask = NULL, *y = NULL;
	int64_t T, S;

	if (!q || !k || !v) /* a view failed: its error stands */
		return NULL;
	T = clg_shape(q)[2], S = len + T;
	ks = clg_slice(c->k, 2, len, S, 1);
	vs = clg_slice(c->v, 2, len, S, 1);
	if (!ks || !vs || clg_assign(ks, k) || clg_assign(vs, v))
		goto out_slices;
	kall = clg_slice(c->k, 2, 0, S, 1);
	vall = clg_slice(c->v, 2, 0, S, 1);
	if (len == 0) {
		o.causal = T > 1; /* the prompt: queries and keys aligned */
	} else if (T > 1) {
		/* queries [len, len + T) over keys [0, S): the causal mask aligned at the bottom right */
		float *h = malloc(sizeof(float) * (size_t)(T * S));
		if (!h) {
			clg_fail(CLG_ERR_OOM, "gpt: out of host memory");
			goto out;
		}
		for (int64_t i = 0; i < T; i++)
			for (int64_t j = 0; j < S; j++)
				h[i * S + j] = j <= len + i ? 0.0f : -INFINITY;
		mask = clg_from_host(clg_device_of(q), CLG_F32, CLG_SHAPE(T, S), h);
		free(h);
		if (!mask)
			goto out;
		o.attn_mask = mask;
	}
	y = clg_scaled_dot_product_attention_ex(q, kall, vall, &o);
out:
	clg_free(mask);
	clg_free(kall);
	clg_free(vall);
out_slices:
	clg_free(ks);
	clg_free(vs);
	return y;
}

clg_tensor *gpt_block_step(clg_module *m, clg_tensor *x, gpt_cache_layer *cache, int64_t len)
{
	const gpt_block_data *d = m->data;
	int64_t B, T, D = d->dims.dim, H = d->dims.heads;
	clg_module **c = m->children, *attn = c[1], *mlp = c[3];
	int training = m->training;
	clg_tensor *x1 = NULL, *out;
	char s0[96];

	if (!x)
		return NULL;
	if (clg_ndim(x) != 3 || clg_shape(x)[2] != D) {
		clg_view v = {.ndim = clg_ndim(x)};
		for (int i = 0; i < v.ndim; i++)
			v.shape[i] = clg_shape(x)[i];
		clg_fail(CLG_ERR_SHAPE, "gpt block: x %s: expected (B, T, %lld)", clg_shape_str(&v, s0, sizeof(s0)), (long long)D);
		return NULL;
	}
	B = clg_shape(x)[0], T = clg_shape(x)[1];
	clg_scope_begin();
	/* attention: q, k and v from one GEMM */
	clg_tensor *h = clg_reshape(clg_layer_norm(x, c[0]->tensors[0], c[0]->tensors[1], LN_EPS), CLG_SHAPE(B * T, D));
	clg_tensor *qkv = clg_reshape(clg_module_forward(attn->children[0], h), CLG_SHAPE(B, T, 3 * D));
	clg_tensor *a;
	if (!cache) {
		clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;
		o.causal = 1;
		o.dropout_p = training ? d->dims.dropout : 0;
		o.seed = draw_seed(d, 0);
		a = clg_attention_qkv_ex(qkv, H, &o); /* (B, T, D) */
	} else {
		/* the heads as views (B, H, T, Dh) of (B, 3 H, T, Dh) */
		static const int to_heads[] = {0, 2, 1, 3};
		clg_tensor *p = clg_permute(clg_reshape(qkv, CLG_SHAPE(B, T, 3 * H, D / H)), to_heads);
		clg_tensor *o = cached_attention(clg_slice(p, 1, 0, H, 1), clg_slice(p, 1, H, 2 * H, 1),
						 clg_slice(p, 1, 2 * H, 3 * H, 1), cache, len);
		a = clg_reshape(clg_contiguous(clg_permute(o, to_heads)), CLG_SHAPE(B, T, D));
	}
	clg_tensor *pr = clg_module_forward(attn->children[1], clg_reshape(a, CLG_SHAPE(B * T, D)));
	pr = dropout(clg_reshape(pr, CLG_SHAPE(B, T, D)), d, 1, training);
	/* MLP: x1 = x + attention, its layer norm in the same op */
	clg_tensor *h2 = clg_add_layer_norm(x, pr, c[2]->tensors[0], c[2]->tensors[1], LN_EPS, &x1);
	clg_tensor *f = clg_module_forward(mlp->children[0], clg_reshape(h2, CLG_SHAPE(B * T, D)));
	clg_tensor *g = clg_module_forward(mlp->children[1], clg_gelu_tanh(f));
	g = dropout(g ? clg_reshape(g, CLG_SHAPE(B, T, D)) : NULL, d, 2, training);
	out = clg_keep(x1 && g ? clg_add(x1, g) : NULL);
	clg_scope_end();
	return out;
}

static clg_tensor *block_forward(clg_module *m, clg_tensor *x) { return gpt_block_step(m, x, NULL, 0); }

/* a block as a checkpointed function: its dropout seeds come from the step the model set, so the
 * re-run in backward draws the first run's masks */
static clg_status block_fn(void *user, clg_tensor *const *in, clg_tensor **out)
{
	out[0] = gpt_block_step(user, in[0], NULL, 0);
	return out[0] ? CLG_OK : clg_last_status();
}

/* Block m on x, checkpointed with recompute (not with a cache: generation records no graph). */
static clg_tensor *block_run(const gpt_model_data *d, clg_module *m, clg_tensor *x, gpt_cache_layer *cache, int64_t len)
{
	clg_tensor *out = NULL;
	if (!d->recompute || cache || !clg_grad_enabled())
		return gpt_block_step(m, x, cache, len);
	return clg_checkpoint(block_fn, m, 1, &x, 1, &out) ? NULL : out;
}

clg_tensor *gpt_forward_at(clg_module *m, clg_tensor *idx, gpt_cache_layer *cache, int64_t len)
{
	gpt_model_data *d = m->data;
	clg_module *wte = m->children[0], *wpe = m->children[1], *h = m->children[2], *ln_f = m->children[3];
	int64_t B, T;
	clg_tensor *out;
	char s0[96];

	if (!idx)
		return NULL;
	if (clg_ndim(idx) != 2 || clg_dtype_of(idx) != CLG_I32 || clg_shape(idx)[1] < 1 ||
	    len + clg_shape(idx)[1] > d->dims.seq_len) {
		clg_view v = {.ndim = clg_ndim(idx)};
		for (int i = 0; i < v.ndim; i++)
			v.shape[i] = clg_shape(idx)[i];
		clg_fail(CLG_ERR_SHAPE, "gpt: ids %s at position %lld: expected (B, T) int32 with position + T <= the context %lld",
			 clg_shape_str(&v, s0, sizeof(s0)), (long long)len, (long long)d->dims.seq_len);
		return NULL;
	}
	B = clg_shape(idx)[0], T = clg_shape(idx)[1];
	/* one dropout stream a forward; the blocks keep it, so a block run again (recomputed in the
	 * backward) draws the same masks */
	if (m->training)
		d->steps++;
	clg_scope_begin();
	gpt_block_data *ed = ((gpt_block_data *)h->children[0]->data);
	clg_tensor *x = clg_module_forward(wte, idx); /* (B, T, D) */
	x = clg_add(x, clg_slice(wpe->tensors[0], 0, len, len + T, 1));
	for (int i = 0; i < h->nchildren; i++)
		((gpt_block_data *)h->children[i]->data)->step = d->steps;
	/* the embeddings' dropout: draw 3 of the first block's stream */
	x = dropout(x, ed, 3, m->training);
	for (int i = 0; i < h->nchildren && x; i++)
		x = block_run(d, h->children[i], x, cache ? &cache[i] : NULL, len);
	clg_tensor *y = x ? clg_layer_norm(x, ln_f->tensors[0], ln_f->tensors[1], LN_EPS) : NULL;
	/* the head tied to wte: (B * T, D) @ wte^T */
	out = clg_keep(clg_linear(clg_reshape(y, CLG_SHAPE(B * T, d->dims.dim)), wte->tensors[0], NULL));
	clg_scope_end();
	return out;
}

static clg_tensor *gpt_forward(clg_module *m, clg_tensor *idx) { return gpt_forward_at(m, idx, NULL, 0); }

static const clg_module_ops block_ops = {"gpt_block", block_forward, free_data};
static const clg_module_ops gpt_ops = {"gpt", gpt_forward, free_data};

int gpt_is(const clg_module *m) { return m && m->ops == &gpt_ops; }

/* ---- presets and the builder ---- */

static const struct {
	const char *name;
	int64_t vocab, seq_len, dim, heads, layers;
} presets[] = {
	{"tiny", 256, 256, 128, 4, 4},
	{"gpt2-small", 50257, 1024, 768, 12, 12},
	{"gpt2-medium", 50257, 1024, 1024, 16, 24},
};

clg_status clg_gpt_preset(const char *name, clg_model_config *cfg)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (name && !strcmp(name, presets[i].name)) {
			cfg->vocab = presets[i].vocab, cfg->seq_len = presets[i].seq_len, cfg->dim = presets[i].dim;
			cfg->heads = presets[i].heads, cfg->layers = presets[i].layers;
			return CLG_OK;
		}
	return clg_fail(CLG_ERR_INVALID, "gpt: unknown preset '%s' (tiny, gpt2-small, gpt2-medium)", name ? name : "(null)");
}

static clg_module *block(clg_backend *be, const gpt_dims *g, uint64_t seed)
{
	static const char *const names[] = {"ln_1", "attn", "ln_2", "mlp"};
	static const char *const attn_names[] = {"c_attn", "c_proj"}, *const mlp_names[] = {"c_fc", "c_proj"};
	int64_t D = g->dim;
	double proj_std = 0.02 / sqrt(2.0 * (double)g->layers);
	clg_module *a[2] = {linear(be, D, 3 * D, 0.02, seed + 1), linear(be, D, D, proj_std, seed + 2)};
	clg_module *f[2] = {linear(be, D, 4 * D, 0.02, seed + 3), linear(be, 4 * D, D, proj_std, seed + 4)};
	clg_module *kids[4] = {clg_nn_layer_norm(be, D, LN_EPS), named(clg_module_new(&attn_ops), 2, attn_names, a),
			       clg_nn_layer_norm(be, D, LN_EPS), named(clg_module_new(&mlp_ops), 2, mlp_names, f)};
	clg_module *m = clg_module_new(&block_ops);
	gpt_block_data *d = m ? calloc(1, sizeof(*d)) : NULL;
	if (m && !d) {
		clg_module_free(m);
		m = NULL;
	}
	if (m) {
		d->dims = *g;
		d->seed = seed;
		m->data = d;
	}
	return named(m, 4, names, kids);
}

clg_module *clg_gpt_build(clg_backend *be, const clg_model_config *cfg, uint64_t seed)
{
	static const char *const names[] = {"wte", "wpe", "h", "ln_f"};
	gpt_dims g = {cfg->vocab, cfg->seq_len, cfg->dim, cfg->heads, cfg->layers, cfg->dropout};
	clg_module *kids[4], *blocks, *m;
	gpt_model_data *d;

	if (cfg->layers < 1 || cfg->layers > 1024 || cfg->heads < 1 || cfg->dim < 1 || cfg->dim % cfg->heads ||
	    cfg->vocab < 1 || cfg->seq_len < 1 || !(cfg->dropout >= 0 && cfg->dropout < 1)) {
		clg_fail(CLG_ERR_INVALID, "gpt: %lld layers, width %lld, %lld heads, vocabulary %lld, context %lld, dropout %g do not fit (width a multiple of heads, dropout in [0, 1))",
			 (long long)cfg->layers, (long long)cfg->dim, (long long)cfg->heads, (long long)cfg->vocab,
			 (long long)cfg->seq_len, cfg->dropout);
		return NULL;
	}
	blocks = clg_module_new(&blocks_ops);
	for (int l = 0; l < (int)cfg->layers; l++) {
		clg_module *b = block(be, &g, seed + 100 * (uint64_t)(l + 1));
		if (!blocks || !b || clg_module_add_child(blocks, NULL, b)) {
			if (!blocks)
				clg_module_free(b);
			clg_module_free(blocks);
			return NULL;
		}
	}
	kids[0] = embedding(be, cfg->vocab, cfg->dim, seed + 1);
	kids[1] = embedding(be, cfg->seq_len, cfg->dim, seed + 2);
	kids[2] = blocks;
	kids[3] = clg_nn_layer_norm(be, cfg->dim, LN_EPS);
	m = clg_module_new(&gpt_ops);
	d = m ? calloc(1, sizeof(*d)) : NULL;
	if (m && !d) {
		clg_module_free(m);
		m = NULL;
	}
	if (m) {
		d->dims = g;
		d->recompute = cfg->recompute != 0;
		m->data = d;
	}
	return named(m, 4, names, kids);
}

clg_status gpt_dims_of(const clg_module *m, gpt_dims *out)
{
	if (!gpt_is(m))
		return clg_fail(CLG_ERR_INVALID, "gpt: module '%s' is not a gpt model", m ? m->ops->kind : "(null)");
	*out = ((const gpt_model_data *)m->data)->dims;
	return CLG_OK;
}
