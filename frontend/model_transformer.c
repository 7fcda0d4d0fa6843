/* A small character-level transformer decoder: token + position embeddings, pre-norm blocks of
 * causal multi-head attention and a GELU MLP with residual connections, a final layer norm and a
 * linear head. Input (B, T) int32 ids -> logits (B * T, vocab). */
#include "clgrad_models.h"

#include <stdlib.h>

typedef struct {
	int64_t dim, heads, seq_len;
} tf_dims;

/* children of a block */
enum { LN1, WQ, WK, WV, WO, LN2, FC1, FC2, NBLOCK };

/* (B*T, D) -> (B, H, T, Dh) */
static clg_tensor *heads(clg_tensor *x2, int64_t B, int64_t T, const tf_dims *d)
{
	clg_tensor *r = clg_reshape(x2, CLG_SHAPE(B, T, d->heads, d->dim / d->heads));
	return clg_permute(r, (int[]){0, 2, 1, 3});
}

static clg_tensor *block_forward(clg_module *m, clg_tensor *x)
{
	const tf_dims *d = m->data;
	int64_t B = clg_shape(x)[0], T = clg_shape(x)[1], D = d->dim;
	clg_module **c = m->children;
	clg_tensor *out;

	clg_scope_begin();
	/* attention sub-block */
	clg_tensor *h = clg_reshape(clg_module_forward(c[LN1], x), CLG_SHAPE(B * T, D));
	clg_tensor *q = heads(clg_module_forward(c[WQ], h), B, T, d);
	clg_tensor *k = heads(clg_module_forward(c[WK], h), B, T, d);
	clg_tensor *v = heads(clg_module_forward(c[WV], h), B, T, d);
	clg_tensor *a = clg_scaled_dot_product_attention(q, k, v, 1, 0.0);
	clg_tensor *a2 = clg_reshape(clg_contiguous(clg_permute(a, (int[]){0, 2, 1, 3})), CLG_SHAPE(B * T, D));
	clg_tensor *x1 = clg_add(x, clg_reshape(clg_module_forward(c[WO], a2), CLG_SHAPE(B, T, D)));
	/* MLP sub-block */
	clg_tensor *h2 = clg_reshape(clg_module_forward(c[LN2], x1), CLG_SHAPE(B * T, D));
	/* the GELU in FC1's epilogue (clg_linear_act): bias, activation and their backward fused */
	clg_module *fc1 = c[FC1];
	clg_tensor *g = clg_linear_act(h2, fc1->tensors[0], fc1->ntensors > 1 ? fc1->tensors[1] : NULL, CLG_ACT_GELU);
	clg_tensor *f = clg_module_forward(c[FC2], g);
	out = clg_keep(clg_add(x1, clg_reshape(f, CLG_SHAPE(B, T, D))));
	clg_scope_end();
	return out;
}

static clg_tensor *tf_forward(clg_module *m, clg_tensor *idx)
{
	const tf_dims *d = m->data;
	int n = m->nchildren, nblocks = n - 4;
	int64_t B = clg_shape(idx)[0], T = clg_shape(idx)[1];
	clg_tensor *out;

	clg_scope_begin();
	clg_tensor *x = clg_module_forward(m->children[0], idx); /* (B, T, D) */
	clg_tensor *pos = clg_slice(m->children[1]->tensors[0], 0, 0, T, 1);
	x = clg_add(x, pos);
	for (int i = 0; i < nblocks; i++)
		x = clg_module_forward(m->children[2 + i], x);
	clg_tensor *h = clg_reshape(clg_module_forward(m->children[n - 2], x), CLG_SHAPE(B * T, d->dim));
	out = clg_keep(clg_module_forward(m->children[n - 1], h));
	clg_scope_end();
	return out;
}

static void free_data(clg_module *m) { free(m->data); }

static const clg_module_ops block_ops = {"transformer_block", block_forward, free_data};
static const clg_module_ops tf_ops = {"transformer", tf_forward, free_data};

/* A module of the given ops owning the n children (all freed on failure). */
static clg_module *with_children(const clg_module_ops *ops, clg_module **kids, int n, const tf_dims *d)
{
	clg_module *m = NULL;
	int ok = n > 0;
	for (int i = 0; i < n; i++)
		ok &= kids[i] != NULL;
	if (ok)
		m = clg_module_new(ops);
	if (m) {
		m->children = calloc((size_t)(n > 0 ? n : 1), sizeof(*m->children));
		m->data = malloc(sizeof(*d));
	}
	if (!m || !m->children || !m->data) {
		for (int i = 0; i < n; i++)
			clg_module_free(kids[i]);
		if (m) {
			free(m->children);
			free(m->data);
			free(m);
		}
		return NULL;
	}
	for (int i = 0; i < n; i++)
		m->children[i] = kids[i];
	m->nchildren = n;
	*(tf_dims *)m->data = *d;
	return m;
}

clg_module *clg_transformer_build(clg_backend *be, const clg_model_config *cfg, uint64_t seed)
{
	tf_dims d = {cfg->dim, cfg->heads, cfg->seq_len};
	int64_t D = cfg->dim;
	int nl = (int)cfg->layers, n = nl + 4;
	clg_module **kids;

	if (cfg->layers < 1 || cfg->layers > 64 || cfg->heads < 1 || D < 1 || D % cfg->heads || cfg->vocab < 1 ||
	    cfg->seq_len < 1) {
		clg_fail(CLG_ERR_INVALID, "transformer: %lld layers, width %lld, %lld heads, vocabulary %lld, context %lld do not fit",
			 (long long)cfg->layers, (long long)D, (long long)cfg->heads, (long long)cfg->vocab,
			 (long long)cfg->seq_len);
		return NULL;
	}
	kids = calloc((size_t)n, sizeof(*kids));
	if (!kids)
		return NULL;
	kids[0] = clg_nn_embedding(be, cfg->vocab, D, seed + 1);
	kids[1] = clg_nn_embedding(be, cfg->seq_len, D, seed + 2);
	for (int l = 0; l < nl; l++) {
		uint64_t s = seed + 100 * (uint64_t)(l + 1);
		clg_module *b[NBLOCK] = {
			clg_nn_layer_norm(be, D, 1e-5),
			clg_nn_linear(be, D, D, 1, CLG_INIT_DEFAULT, s + 1),
			clg_nn_linear(be, D, D, 1, CLG_INIT_DEFAULT, s + 2),
			clg_nn_linear(be, D, D, 1, CLG_INIT_DEFAULT, s + 3),
			clg_nn_linear(be, D, D, 1, CLG_INIT_DEFAULT, s + 4),
			clg_nn_layer_norm(be, D, 1e-5),
			clg_nn_linear(be, D, 4 * D, 1, CLG_INIT_DEFAULT, s + 5),
			clg_nn_linear(be, 4 * D, D, 1, CLG_INIT_DEFAULT, s + 6),
		};
		kids[2 + l] = with_children(&block_ops, b, NBLOCK, &d);
	}
	kids[n - 2] = clg_nn_layer_norm(be, D, 1e-5);
	kids[n - 1] = clg_nn_linear(be, D, cfg->vocab, 1, CLG_INIT_DEFAULT, seed + 3);
	clg_module *m = with_children(&tf_ops, kids, n, &d);
	free(kids);
	return m;
}
