/* clg_generate: the decoding loop (the window over the model's context, the KV cache or a full
 * forward a token) and the host-side sampler (temperature, top-k, top-p, stop ids and strings). */
#include "clgrad_generate.h"
#include "gpt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

typedef struct {
	float v;
	int32_t id;
} cand;

/* larger logits first; ties by id, so the order never depends on qsort's */
static int cand_cmp(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The next id from logits (V): greedy, or sampled after temperature, top-k and top-p. */
static int32_t sample(const float *logits, int64_t V, const clg_generate_opts *o, uint64_t *rng, cand *c)
{
	int64_t n = V, best = 0;
	double sum = 0, u, acc = 0;

	if (o->temperature <= 0) {
		for (int64_t i = 1; i < V; i++)
			if (logits[i] > logits[best])
				best = i;
		return (int32_t)best;
	}
	for (int64_t i = 0; i < V; i++)
		c[i].v = logits[i], c[i].id = (int32_t)i;
	qsort(c, (size_t)V, sizeof(*c), cand_cmp);
	if (o->top_k > 0 && o->top_k < n)
		n = o->top_k;
	/* probabilities of the kept ones (in v's place, as doubles summed) */
	double *p = malloc(sizeof(double) * (size_t)n);
	if (!p)
		return c[0].id; /* out of host memory: the likeliest */
	for (int64_t i = 0; i < n; i++)
		sum += p[i] = exp(((double)c[i].v - (double)c[0].v) / o->temperature);
	if (o->top_p > 0 && o->top_p < 1) {
		int64_t k = 0;
		for (double run = 0; k < n && run < o->top_p * sum; k++)
			run += p[k];
		n = k > 0 ? k : 1;
		sum = 0;
		for (int64_t i = 0; i < n; i++)
			sum += p[i];
	}
	u = (double)(splitmix(rng) >> 11) * (1.0 / 9007199254740992.0) * sum;
	best = n - 1;
	for (int64_t i = 0; i < n; i++) {
		acc += p[i];
		if (u < acc) {
			best = i;
			break;
		}
	}
	free(p);
	return c[best].id;
}

/* whether hay[from, n) begins an occurrence of s (len sl) that ends within hay */
static int contains_from(const char *hay, size_t n, size_t from, const char *s, size_t sl)
{
	for (size_t i = from; sl && i + sl <= n; i++)
		if (!memcmp(hay + i, s, sl))
			return 1;
	return 0;
}

/* The logits of the last row of ids[0, n) run through the model, into host row (V floats); with the
 * cache, only ids[from, n) are new to it. */
static clg_status last_logits(clg_module *m, clg_backend *be, clg_kv_cache *kv, const int32_t *ids, int64_t from,
			      int64_t n, float *row, int64_t V)
{
	clg_status st = CLG_OK;
	clg_scope_begin();
	clg_tensor *x = clg_from_host(be, CLG_I32, CLG_SHAPE(1, n - from), ids + from);
	clg_tensor *y = kv ? clg_gpt_forward_cached(m, kv, x) : clg_module_forward(m, x); /* (T, V) */
	clg_tensor *r = y ? clg_contiguous(clg_slice(y, 0, n - from - 1, n - from, 1)) : NULL;
	if (!r || clg_numel(r) != V)
		st = r ? clg_fail(CLG_ERR_SHAPE, "generate: the model gave %lld logits a row, expected the vocabulary's %lld",
				  (long long)clg_numel(r), (long long)V)
		       : clg_last_status();
	else
		st = clg_to_host(r, row, sizeof(float) * (size_t)V);
	clg_scope_end();
	return st;
}

clg_status clg_generate(clg_module *model, const int32_t *prompt, int64_t n_prompt, const clg_generate_opts *o,
			int32_t *out, int64_t *n_out)
{
	static const clg_generate_opts defaults = CLG_GENERATE_OPTS_INIT;
	int64_t C, V, N = 0, ws = 0, fed = 0, keep, maxlen = 0;
	int32_t *seq = NULL;
	float *row = NULL;
	cand *cands = NULL;
	char *text = NULL, piece[256];
	size_t tlen = 0, tcap = 0;
	clg_kv_cache *kv = NULL;
	clg_backend *be;
	uint64_t rng;
	gpt_dims d = {0};
	int is_gpt = gpt_is(model), done = 0;
	clg_status st = CLG_OK;

	if (!o)
		o = &defaults;
	*n_out = 0;
	if (!model || model->ntensors + model->nchildren == 0 || !prompt || n_prompt < 1 || o->max_new_tokens < 0 ||
	    (o->n_stop && !o->token_text) || !(o->top_p > 0 && o->top_p <= 1) || o->top_k < 0)
		return clg_fail(CLG_ERR_INVALID, "generate: %s", !model || model->ntensors + model->nchildren == 0 ? "no model"
							  : !prompt || n_prompt < 1 ? "an empty prompt (give at least one token)"
							  : o->max_new_tokens < 0 ? "max_new_tokens below 0"
							  : o->n_stop && !o->token_text ? "stop strings without token_text"
							  : o->top_k < 0 ? "top_k below 0"
									 : "top_p outside (0, 1]");
	if (is_gpt)
		gpt_dims_of(model, &d);
	C = o->context > 0 ? o->context : d.seq_len;
	if (C < 1)
		return clg_fail(CLG_ERR_INVALID, "generate: the context of a model other than gpt is needed (opts.context)");
	if (is_gpt && C > d.seq_len)
		return clg_fail(CLG_ERR_INVALID, "generate: context %lld beyond the model's %lld", (long long)C, (long long)d.seq_len);
	/* the vocabulary: the rows of the tied embedding, or found from a first forward below */
	be = NULL;
	{
		clg_named_tensors l = {0};
		if ((st = clg_module_state(model, 0, &l)))
			return st;
		be = l.n ? clg_device_of(l.tensors[0]) : NULL;
		clg_named_tensors_free(&l);
	}
	if (!be)
		return clg_fail(CLG_ERR_INVALID, "generate: a model without parameters");
	V = is_gpt ? d.vocab : 0;
	seq = malloc(sizeof(int32_t) * (size_t)(n_prompt + o->max_new_tokens + 1));
	if (!seq)
		return clg_fail(CLG_ERR_OOM, "generate: out of host memory");
	memcpy(seq, prompt, sizeof(int32_t) * (size_t)n_prompt);
	N = n_prompt;
	rng = o->seed;
	keep = C / 2 > 0 ? C / 2 : 1;
	clg_module_train(model, 0);
	clg_no_grad_begin();
	if (!V) {
		/* another language model: one forward of the first token tells the vocabulary */
		clg_scope_begin();
		clg_tensor *x = clg_from_host(be, CLG_I32, CLG_SHAPE(1, 1), seq);
		clg_tensor *y = clg_module_forward(model, x);
		V = y && clg_ndim(y) == 2 ? clg_shape(y)[1] : 0;
		st = y ? CLG_OK : clg_last_status();
		clg_scope_end();
		if (!st && V < 1)
			st = clg_fail(CLG_ERR_SHAPE, "generate: the model's output is not (T, vocabulary) logits");
	}
	if (!st && is_gpt && !o->no_cache) {
		maxlen = C;
		st = clg_kv_cache_new(model, 1, maxlen, &kv);
	}
	row = st ? NULL : malloc(sizeof(float) * (size_t)V);
	cands = row ? malloc(sizeof(cand) * (size_t)V) : NULL;
	if (!st && (!row || !cands))
		st = clg_fail(CLG_ERR_OOM, "generate: out of host memory");
	for (int64_t t = 0; !st && !done && t < o->max_new_tokens; t++) {
		int32_t id;
		if (N - ws > C) {
			/* the window moves on, keeping the newest half; the cache refills from there */
			ws = N - keep;
			if (kv)
				clg_kv_cache_reset(kv);
			fed = ws;
		}
		st = last_logits(model, be, kv, seq + ws, kv ? fed - ws : 0, N - ws, row, V);
		if (st)
			break;
		fed = N;
		id = sample(row, V, o, &rng, cands);
		seq[N++] = id;
		out[(*n_out)++] = id;
		for (int i = 0; i < o->n_stop_ids; i++)
			done |= o->stop_ids[i] == id;
		if (o->n_stop) {
			size_t pl = o->token_text(o->user, id, piece, sizeof(piece)), before = tlen;
			if (pl > sizeof(piece))
				pl = sizeof(piece);
			if (tlen + pl > tcap) {
				size_t nc = (tcap + pl) * 2 + 64;
				char *nt = realloc(text, nc);
				if (!nt) {
					st = clg_fail(CLG_ERR_OOM, "generate: out of host memory");
					break;
				}
				text = nt, tcap = nc;
			}
			memcpy(text + tlen, piece, pl);
			tlen += pl;
			for (int i = 0; i < o->n_stop; i++) {
				size_t sl = strlen(o->stop[i]);
				done |= contains_from(text, tlen, before >= sl ? before - sl + 1 : 0, o->stop[i], sl);
			}
		}
		if (o->on_token && o->on_token(o->user, id))
			done = 1;
	}
	clg_no_grad_end();
	clg_kv_cache_free(kv);
	free(seq);
	free(row);
	free(cands);
	free(text);
	return st;
}
