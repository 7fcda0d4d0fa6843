/* The gpt model's KV cache: each layer's keys and values of the positions so far, (B, H, max_len,
 * Dh) tensors filled in place, so that a new token runs one position through the model and attends
 * to the cached keys (gpt_block_step, model_gpt.c). */
#include "clgrad_generate.h"
#include "gpt_internal.h"

#include <stdlib.h>

struct clg_kv_cache {
	clg_module *model; /* borrowed */
	int64_t batch, max_len, len;
	int layers;
	gpt_cache_layer *l; /* (layers) */
};

void clg_kv_cache_free(clg_kv_cache *c)
{
	if (!c)
		return;
	for (int i = 0; c->l && i < c->layers; i++) {
		clg_free(c->l[i].k);
		clg_free(c->l[i].v);
	}
	free(c->l);
	free(c);
}

clg_status clg_kv_cache_new(clg_module *gpt, int64_t batch, int64_t max_len, clg_kv_cache **out)
{
	gpt_dims d;
	clg_kv_cache *c = NULL;
	clg_backend *be;
	clg_status st;

	*out = NULL;
	if ((st = gpt_dims_of(gpt, &d)))
		return st;
	if (max_len == 0)
		max_len = d.seq_len;
	if (batch < 1 || max_len < 1 || max_len > d.seq_len)
		return clg_fail(CLG_ERR_INVALID, "kv cache: batch %lld, %lld positions: expected batch >= 1 and 1 to the context %lld",
				(long long)batch, (long long)max_len, (long long)d.seq_len);
	be = clg_device_of(gpt->children[0]->tensors[0]);
	c = calloc(1, sizeof(*c));
	if (c)
		c->l = calloc((size_t)d.layers, sizeof(*c->l));
	if (!c || !c->l) {
		free(c);
		return clg_fail(CLG_ERR_OOM, "kv cache: out of host memory");
	}
	c->model = gpt, c->batch = batch, c->max_len = max_len, c->layers = (int)d.layers;
	for (int i = 0; i < c->layers; i++) {
		/* (B, H, max_len, Dh), outside any scope the caller has open */
		c->l[i].k = clg_keep(clg_zeros(be, CLG_F32, CLG_SHAPE(batch, d.heads, max_len, d.dim / d.heads)));
		c->l[i].v = clg_keep(clg_zeros(be, CLG_F32, CLG_SHAPE(batch, d.heads, max_len, d.dim / d.heads)));
		if (!c->l[i].k || !c->l[i].v) {
			st = clg_last_status();
			clg_kv_cache_free(c);
			return st;
		}
	}
	*out = c;
	return CLG_OK;
}

int64_t clg_kv_cache_len(const clg_kv_cache *c) { return c ? c->len : 0; }
void clg_kv_cache_reset(clg_kv_cache *c)
{
	if (c)
		c->len = 0;
}

clg_tensor *clg_gpt_forward_cached(clg_module *gpt, clg_kv_cache *c, clg_tensor *ids)
{
	clg_tensor *y;
	int64_t T;

	if (!ids)
		return NULL;
	if (!c || c->model != gpt) {
		clg_fail(CLG_ERR_INVALID, "kv cache: %s", c ? "made for another model" : "NULL cache");
		return NULL;
	}
	T = clg_ndim(ids) == 2 ? clg_shape(ids)[1] : 0;
	if (clg_ndim(ids) != 2 || clg_shape(ids)[0] != c->batch || c->len + T > c->max_len) {
		clg_fail(CLG_ERR_SHAPE, "kv cache: ids of %d dims (%lld rows, %lld positions) after %lld held: expected (%lld, T) with %lld + T <= %lld",
			 clg_ndim(ids), (long long)(clg_ndim(ids) ? clg_shape(ids)[0] : 0), (long long)T, (long long)c->len,
			 (long long)c->batch, (long long)c->len, (long long)c->max_len);
		return NULL;
	}
	y = gpt_forward_at(gpt, ids, c->l, c->len);
	if (y)
		c->len += T;
	return y;
}
