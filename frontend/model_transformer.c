/* A small character-level transformer decoder: token + position embeddings, pre-norm blocks of
 * causal multi-head attention and a GELU MLP with residual connections, a final layer norm and a
 * linear head. Input (B, T) int32 ids -> logits (B * T, vocab). */
#include "clgrad_models.h"

#include <stdlib.h>

typedef struct {
	int64_t dim, heads, seq_len;
	int recompute;
} tf_dims;

#define LN_EPS 1e-5

/* children of a block: the Q, K and V projections are one (D, 3 D) linear layer (weight (3 D, D):
 * the rows of Q's, then K's, then V's) */
enum { LN1, WQKV, WO, LN2, FC1, FC2, NBLOCK };

/* LN(x + r) with the layer norm module ln's gamma and beta; *sum = x + r. Without r, LN(x) and
 * *sum = x. */
static clg_tensor *add_norm(clg_module *ln, clg_tensor *x, clg_tensor *r, clg_tensor **sum)
{
	if (r)
		return clg_add_layer_norm(x, r, ln->tensors[0], ln->tensors[1], LN_EPS, sum);
	*sum = x;
	return clg_layer_norm(x, ln->tensors[0], ln->tensors[1], LN_EPS);
}

/* One pre-norm block on the residual stream x (B, T, D) plus the previous block's pending
 * branch *r (NULL for the first): its residual add is fused with LN1, the attention's with LN2.
 * Leaves the stream in *x and the MLP's branch, still to be added, in *r (both kept out of the
 * scope). */
static void block_forward(clg_module *m, clg_tensor **x, clg_tensor **r)
{
	const tf_dims *d = m->data;
	int64_t B = clg_shape(*x)[0], T = clg_shape(*x)[1], D = d->dim;
	clg_module **c = m->children;
	clg_tensor *xs = NULL, *x1 = NULL;

	clg_scope_begin();
	/* attention sub-block: q, k and v from one GEMM, the heads strided views of its output */
	clg_tensor *h = clg_reshape(add_norm(c[LN1], *x, *r, &xs), CLG_SHAPE(B * T, D));
	clg_tensor *qkv = clg_reshape(clg_module_forward(c[WQKV], h), CLG_SHAPE(B, T, 3 * D));
	clg_tensor *a = clg_reshape(clg_attention_qkv(qkv, d->heads, 1), CLG_SHAPE(B * T, D));
	clg_tensor *o = clg_reshape(clg_module_forward(c[WO], a), CLG_SHAPE(B, T, D));
	/* MLP sub-block */
	clg_tensor *h2 = clg_reshape(add_norm(c[LN2], xs, o, &x1), CLG_SHAPE(B * T, D));
	/* the GELU in FC1's epilogue (clg_linear_act): bias, activation and their backward fused */
	clg_module *fc1 = c[FC1];
	clg_tensor *g = clg_linear_act(h2, fc1->tensors[0], fc1->ntensors > 1 ? fc1->tensors[1] : NULL, CLG_ACT_GELU);
	clg_tensor *f = clg_module_forward(c[FC2], g);
	*x = clg_keep(x1);
	*r = clg_keep(f ? clg_reshape(f, CLG_SHAPE(B, T, D)) : NULL);
	clg_scope_end();
}

/* A block called on its own (as a module): x + its two branches. */
static clg_tensor *block_module_forward(clg_module *m, clg_tensor *x)
{
	clg_tensor *s = x, *r = NULL, *out;
	clg_scope_begin();
	block_forward(m, &s, &r);
	out = clg_keep(s && r ? clg_add(s, r) : NULL);
	clg_scope_end();
	return out;
}

/* block_forward as a checkpointed function: in = the stream and the pending branch (NULL before the
 * first block), out = the same after the block. */
static clg_status block_fn(void *user, clg_tensor *const *in, clg_tensor **out)
{
	clg_tensor *x = in[0], *r = in[1];
	block_forward(user, &x, &r);
	out[0] = x;
	out[1] = r;
	return x && r ? CLG_OK : clg_last_status();
}

/* Block m on (*x, *r); with recompute, its activations are not kept but made again in backward. */
static void block_step(clg_module *m, clg_tensor **x, clg_tensor **r)
{
	const tf_dims *d = m->data;
	clg_tensor *out[2];

	if (!d->recompute || !clg_grad_enabled()) {
		block_forward(m, x, r);
		return;
	}
	if (clg_checkpoint(block_fn, m, 2, (clg_tensor *[]){*x, *r}, 2, out)) {
		*x = *r = NULL;
		return;
	}
	*x = out[0];
	*r = out[1];
}

static clg_tensor *tf_forward(clg_module *m, clg_tensor *idx)
{
	const tf_dims *d = m->data;
	int n = m->nchildren, nblocks = n - 4;
	int64_t B = clg_shape(idx)[0], T = clg_shape(idx)[1];
	clg_tensor *out, *r = NULL, *s = NULL;

	clg_scope_begin();
	clg_tensor *x = clg_module_forward(m->children[0], idx); /* (B, T, D) */
	clg_tensor *pos = clg_slice(m->children[1]->tensors[0], 0, 0, T, 1);
	x = clg_add(x, pos);
	for (int i = 0; i < nblocks && x; i++)
		block_step(m->children[2 + i], &x, &r);
	/* the last block's residual add fused with the final layer norm */
	clg_tensor *h = x ? clg_reshape(add_norm(m->children[n - 2], x, r, &s), CLG_SHAPE(B * T, d->dim)) : NULL;
	out = clg_keep(clg_module_forward(m->children[n - 1], h));
	clg_scope_end();
	return out;
}

static void free_data(clg_module *m) { free(m->data); }

static const clg_module_ops block_ops = {"transformer_block", block_module_forward, free_data};
static const clg_module_ops tf_ops = {"transformer", tf_forward, free_data};

/* A module of the given ops owning the n children "0", "1", ... (all freed on failure). */
static clg_module *with_children(const clg_module_ops *ops, clg_module **kids, int n, const tf_dims *d)
{
	clg_module *m = NULL;
	int ok = n > 0;
	for (int j = 0; j < n; j++)
		ok &= kids[j] != NULL;
	if (ok && (m = clg_module_new(ops)) != NULL && !(m->data = malloc(sizeof(*d)))) {
		clg_module_free(m);
		m = NULL;
	}
	if (m)
		*(tf_dims *)m->data = *d;
	return clg_module_add_children(m, kids, n);
}

/* The packed Q, K, V projection: a (D, 3 D) linear layer holding the three (D, D) layers of seeds
 * seed, seed + 1, seed + 2 (as separate layers had them: the same initial model). */
static clg_module *qkv_linear(clg_backend *be, int64_t D, uint64_t seed)
{
	clg_module *m = clg_nn_linear(be, D, 3 * D, 1, CLG_INIT_DEFAULT, seed), *p[3];
	clg_tensor *w[3], *b[3], *wc = NULL, *bc = NULL;
	int ok = m != NULL;

	for (int i = 0; i < 3; i++)
		p[i] = clg_nn_linear(be, D, D, 1, CLG_INIT_DEFAULT, seed + (uint64_t)i);
	for (int i = 0; i < 3; i++) {
		ok &= p[i] != NULL;
		w[i] = p[i] ? p[i]->tensors[0] : NULL;
		b[i] = p[i] ? p[i]->tensors[1] : NULL;
	}
	clg_no_grad_begin();
	if (ok) {
		wc = clg_concat(w, 3, 0); /* (3 D, D) */
		bc = clg_concat(b, 3, 0); /* (3 D) */
		ok = wc && bc && !clg_assign(m->tensors[0], wc) && !clg_assign(m->tensors[1], bc);
	}
	clg_no_grad_end();
	clg_free(wc);
	clg_free(bc);
	for (int i = 0; i < 3; i++)
		clg_module_free(p[i]);
	if (!ok) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

clg_module *clg_transformer_build(clg_backend *be, const clg_model_config *cfg, uint64_t seed)
{
	tf_dims d = {cfg->dim, cfg->heads, cfg->seq_len, cfg->recompute != 0};
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
			clg_nn_layer_norm(be, D, LN_EPS),
			qkv_linear(be, D, s + 1),
			clg_nn_linear(be, D, D, 1, CLG_INIT_DEFAULT, s + 4),
			clg_nn_layer_norm(be, D, LN_EPS),
			clg_nn_linear(be, D, 4 * D, 1, CLG_INIT_DEFAULT, s + 5),
			clg_nn_linear(be, 4 * D, D, 1, CLG_INIT_DEFAULT, s + 6),
		};
		kids[2 + l] = with_children(&block_ops, b, NBLOCK, &d);
	}
	kids[n - 2] = clg_nn_layer_norm(be, D, LN_EPS);
	kids[n - 1] = clg_nn_linear(be, D, cfg->vocab, 1, CLG_INIT_DEFAULT, seed + 3);
	clg_module *m = with_children(&tf_ops, kids, n, &d);
	free(kids);
	return m;
}
