/* The gpt model (frontend/model_gpt.c) and generation (frontend/generate.c, gpt_cache.c), on the
 * reference backend and every OpenCL device:
 *   - its state names are GPT-2's, the head is tied (no head tensor; the count of parameters);
 *   - GPT-2's initialisation: std 0.02, residual projections 0.02 / sqrt(2 L), biases 0, LN 1/0;
 *   - the tied embedding's gradient is the sum of both uses (against a central difference);
 *   - the cached forward gives the full forward's logits, and greedy generation with the cache
 *     gives exactly the ids of the uncached full forward, inside the context and past it;
 *   - dropout draws new masks each training step, none in evaluation; a block run twice in a step
 *     (as recomputation does) draws the same;
 *   - sampling: a seed gives the same ids; top-k 1 is greedy; stop ids and strings end the run;
 *   - the attention options' refusals (dropout_p, a mask with causal, a mask that does not broadcast). */
#include "test_util.h"

#include <clgrad_generate.h>
#include <math.h>
#include <string.h>

enum { V = 24, CTX = 16, D = 16, HEADS = 2, L = 2 };

static clg_model_config tiny(double dropout)
{
	return (clg_model_config){.name = "gpt", .vocab = V, .seq_len = CTX, .dim = D, .heads = HEADS, .layers = L,
				  .dropout = dropout};
}

static void check_names_and_init(clg_backend *be)
{
	clg_model_config cfg = tiny(0);
	clg_module *m = clg_model_build(be, &cfg, 7);
	static const char *const want[] = {"wte.weight", "wpe.weight", "h.0.ln_1.weight", "h.0.ln_1.bias",
		"h.0.attn.c_attn.weight", "h.0.attn.c_attn.bias", "h.0.attn.c_proj.weight", "h.0.attn.c_proj.bias",
		"h.0.ln_2.weight", "h.0.ln_2.bias", "h.0.mlp.c_fc.weight", "h.0.mlp.c_fc.bias", "h.0.mlp.c_proj.weight",
		"h.0.mlp.c_proj.bias", "h.1.ln_1.weight", "ln_f.weight", "ln_f.bias"};
	int64_t block = 2 * 2 * D + (3 * D * D + 3 * D) + (D * D + D) + (4 * D * D + 4 * D) + (4 * D * D + D);
	clg_named_tensors l = {0};

	CHECK(m != NULL, "build: %s", clg_last_error());
	if (!m)
		return;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(clg_module_find(m, want[i]) != NULL, "no tensor '%s'", want[i]);
	CHECK(clg_module_num_params(m) == V * D + CTX * D + L * block + 2 * D, "%lld parameters",
	      (long long)clg_module_num_params(m));
	CHECK_OK(clg_module_state(m, 1, &l));
	CHECK(l.n == 2 + 12 * L + 2, "%d tensors (a head tensor? the head is tied to wte)", l.n);
	clg_named_tensors_free(&l);
	/* the standard deviations of the initial weights, and the zeros and ones */
	struct {
		const char *name;
		double std;
	} s[] = {{"wte.weight", 0.02}, {"h.0.attn.c_attn.weight", 0.02}, {"h.1.mlp.c_fc.weight", 0.02},
		 {"h.0.attn.c_proj.weight", 0.02 / sqrt(2.0 * L)}, {"h.1.mlp.c_proj.weight", 0.02 / sqrt(2.0 * L)},
		 {"h.0.mlp.c_fc.bias", 0}, {"ln_f.bias", 0}};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		clg_tensor *t = clg_module_find(m, s[i].name);
		int64_t n = t ? clg_numel(t) : 0;
		float *h = malloc(sizeof(float) * (size_t)(n ? n : 1));
		double ss = 0;
		if (!t || !h || clg_to_host(t, h, sizeof(float) * (size_t)n)) {
			CHECK(0, "read %s: %s", s[i].name, clg_last_error());
			free(h);
			continue;
		}
		for (int64_t j = 0; j < n; j++)
			ss += (double)h[j] * h[j];
		ss = sqrt(ss / (double)n);
		CHECK(fabs(ss - s[i].std) <= 0.15 * s[i].std, "%s: std %g, want %g", s[i].name, ss, s[i].std);
		free(h);
	}
	{
		float one[D];
		CHECK_OK(clg_to_host(clg_module_find(m, "h.1.ln_2.weight"), one, sizeof(one)));
		CHECK(one[0] == 1 && one[D - 1] == 1, "ln weight %g", one[0]);
	}
	clg_module_free(m);
}

/* loss = sum(logits * w) for fixed w, as a function of the model */
static double loss_of(clg_module *m, clg_tensor *ids, clg_tensor *w, int backward)
{
	double v = NAN;
	clg_scope_begin();
	clg_tensor *y = clg_module_forward(m, ids);
	clg_tensor *s = clg_sum(clg_mul(y, w), 0, NULL, 0);
	if (s && (!backward || !clg_backward(s)))
		clg_item(s, &v);
	clg_scope_end();
	return v;
}

/* The gradient of wte at a token the input holds (both uses) and one it lacks (the head only),
 * against central differences in float32. */
static void check_tied_grad(clg_backend *be)
{
	clg_model_config cfg = tiny(0);
	clg_module *m = clg_model_build(be, &cfg, 3);
	int32_t id[2 * 5] = {1, 4, 4, 9, 2, 7, 1, 3, 3, 0};
	float wh[2 * 5 * V], g[V * D], e[V * D];
	clg_tensor *ids = clg_from_host(be, CLG_I32, CLG_SHAPE(2, 5), id), *w, *wte;

	t_fill_uniform(wh, 2 * 5 * V, 5, -1, 1);
	w = clg_from_host(be, CLG_F32, CLG_SHAPE(2 * 5, V), wh);
	wte = m ? clg_module_find(m, "wte.weight") : NULL;
	if (!wte || !ids || !w) {
		CHECK(0, "setup: %s", clg_last_error());
		goto out;
	}
	loss_of(m, ids, w, 1);
	CHECK(clg_grad(wte) && !clg_to_host(clg_grad(wte), g, sizeof(g)), "wte grad: %s", clg_last_error());
	CHECK_OK(clg_to_host(wte, e, sizeof(e)));
	/* element 3 of token 4 (in the input, twice) and of token 20 (not in it) */
	for (int k = 0; k < 2; k++) {
		int at = (k ? 20 : 4) * D + 3;
		float keep = e[at];
		double h = 1e-2, up, dn, num;
		clg_tensor *t;
		e[at] = keep + (float)h;
		t = clg_from_host(be, CLG_F32, CLG_SHAPE(V, D), e);
		clg_assign(wte, t);
		clg_free(t);
		up = loss_of(m, ids, w, 0);
		e[at] = keep - (float)h;
		t = clg_from_host(be, CLG_F32, CLG_SHAPE(V, D), e);
		clg_assign(wte, t);
		clg_free(t);
		dn = loss_of(m, ids, w, 0);
		e[at] = keep;
		num = (up - dn) / (2 * h);
		CHECK(fabs(num - g[at]) <= 2e-3 + 2e-2 * fabs(num), "%s: d loss / d wte[%d] %g, central difference %g",
		      be->info.name, at, g[at], num);
		CHECK(fabs(g[at]) > 1e-4, "%s: wte[%d] has no gradient", be->info.name, at);
	}
out:
	clg_free(ids);
	clg_free(w);
	clg_module_free(m);
}

/* logits of the full forward over ids (1, n) against the cached forward fed in pieces */
static void check_cached_logits(clg_backend *be)
{
	clg_model_config cfg = tiny(0);
	clg_module *m = clg_model_build(be, &cfg, 11);
	int32_t id[12] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
	float full[12 * V], got[12 * V];
	clg_kv_cache *kv = NULL;
	static const int pieces[] = {5, 1, 1, 3, 2}; /* a prompt, single tokens, and rows of several after it */
	int at = 0;

	clg_no_grad_begin();
	clg_module_train(m, 0);
	clg_scope_begin();
	clg_tensor *y = clg_module_forward(m, clg_from_host(be, CLG_I32, CLG_SHAPE(1, 12), id));
	CHECK(y && !clg_to_host(y, full, sizeof(full)), "full forward: %s", clg_last_error());
	CHECK_OK(clg_kv_cache_new(m, 1, 0, &kv));
	for (size_t p = 0; kv && p < sizeof(pieces) / sizeof(pieces[0]); p++) {
		clg_tensor *x = clg_from_host(be, CLG_I32, CLG_SHAPE(1, pieces[p]), id + at);
		clg_tensor *c = clg_gpt_forward_cached(m, kv, x);
		CHECK(c && !clg_to_host(c, got + at * V, sizeof(float) * (size_t)(pieces[p] * V)), "cached: %s", clg_last_error());
		at += pieces[p];
	}
	double worst = 0;
	for (int i = 0; i < 12 * V; i++)
		worst = fmax(worst, fabs(full[i] - got[i]));
	CHECK(worst < 1e-4, "%s: cached logits differ from the full forward's by %g", be->info.name, worst);
	CHECK(clg_kv_cache_len(kv) == 12, "cache holds %lld", (long long)clg_kv_cache_len(kv));
	/* past the cache's room: refused with a message */
	CHECK(!clg_gpt_forward_cached(m, kv, clg_from_host(be, CLG_I32, CLG_SHAPE(1, 5), id)), "5 more past 16 accepted");
	clg_scope_end();
	clg_no_grad_end();
	clg_kv_cache_free(kv);
	clg_module_free(m);
}

/* m's matrices times k: GPT-2's small initial weights make near-uniform logits, whose greedy run
 * repeats one token */
static void scale_weights(clg_module *m, double k)
{
	clg_named_tensors l = {0};
	CHECK_OK(clg_module_state(m, 0, &l));
	clg_no_grad_begin();
	for (int i = 0; i < l.n; i++)
		if (clg_ndim(l.tensors[i]) == 2) {
			clg_tensor *t = clg_affine(l.tensors[i], k, 0);
			CHECK_OK(clg_assign(l.tensors[i], t));
			clg_free(t);
		}
	clg_no_grad_end();
	clg_named_tensors_free(&l);
}

/* greedy ids with and without the cache: equal, past the context too (the window moving on) */
static void check_greedy(clg_backend *be, int32_t *ids_out)
{
	clg_model_config cfg = tiny(0);
	clg_module *m = clg_model_build(be, &cfg, 5);
	scale_weights(m, 25);
	int32_t prompt[3] = {2, 7, 1}, a[40], b[40];
	int64_t na = 0, nb = 0;
	clg_generate_opts o = CLG_GENERATE_OPTS_INIT;

	o.max_new_tokens = 40; /* 43 tokens through a context of 16 */
	o.temperature = 0;
	CHECK_OK(clg_generate(m, prompt, 3, &o, a, &na));
	o.no_cache = 1;
	CHECK_OK(clg_generate(m, prompt, 3, &o, b, &nb));
	CHECK(na == 40 && nb == 40, "%lld and %lld tokens", (long long)na, (long long)nb);
	int same = na == nb;
	for (int64_t i = 0; same && i < na; i++)
		same = a[i] == b[i];
	CHECK(same, "%s: greedy ids with the cache differ from the full forward's", be->info.name);
	int distinct = 0;
	for (int i = 1; i < 40; i++)
		distinct += a[i] != a[0];
	CHECK(distinct > 0, "%s: a constant sequence (the test cannot tell paths apart)", be->info.name);
	memcpy(ids_out, a, sizeof(a));
	clg_module_free(m);
}

static int stop_count;
static int count_tokens(void *u, int32_t id)
{
	(void)u, (void)id;
	return ++stop_count >= 1000;
}
static size_t letter(void *u, int32_t id, char *buf, size_t cap)
{
	(void)u;
	if (cap)
		buf[0] = (char)('a' + id % 26);
	return 1;
}

static void check_sampling(clg_backend *be)
{
	clg_model_config cfg = tiny(0);
	clg_module *m = clg_model_build(be, &cfg, 5);
	scale_weights(m, 25);
	int32_t prompt[1] = {4}, a[12], b[12], g[12];
	int64_t na = 0, nb = 0, ng = 0;
	clg_generate_opts o = CLG_GENERATE_OPTS_INIT;
	const char *stop[] = {"zz", "xq"};

	o.max_new_tokens = 12, o.temperature = 1.5, o.top_k = 10, o.top_p = 0.9, o.seed = 42;
	CHECK_OK(clg_generate(m, prompt, 1, &o, a, &na));
	CHECK_OK(clg_generate(m, prompt, 1, &o, b, &nb));
	CHECK(na == 12 && nb == 12 && !memcmp(a, b, sizeof(a)), "a seed gave other ids");
	o.top_k = 1;
	CHECK_OK(clg_generate(m, prompt, 1, &o, b, &nb));
	o.temperature = 0, o.top_k = 0, o.top_p = 1;
	CHECK_OK(clg_generate(m, prompt, 1, &o, g, &ng));
	CHECK(nb == ng && !memcmp(b, g, sizeof(g)), "top_k 1 is not greedy");
	/* stop at the id of the greedy run's 4th token; and at the text of its 3rd and 4th */
	o.stop_ids = &g[3], o.n_stop_ids = 1;
	stop_count = 0;
	o.on_token = count_tokens;
	CHECK_OK(clg_generate(m, prompt, 1, &o, b, &nb));
	int first = 0;
	while (g[first] != g[3])
		first++;
	CHECK(nb == first + 1 && stop_count == nb, "stop id: %lld tokens (callback %d), want %d", (long long)nb,
	      stop_count, first + 1);
	char s[3] = {(char)('a' + g[2] % 26), (char)('a' + g[3] % 26), 0};
	stop[1] = s;
	o.n_stop_ids = 0, o.stop = stop, o.n_stop = 2, o.token_text = letter;
	CHECK_OK(clg_generate(m, prompt, 1, &o, b, &nb));
	CHECK(nb >= 2 && nb <= 4 && b[nb - 1] == g[nb - 1], "stop string '%s': %lld tokens", s, (long long)nb);
	/* a bad option is refused with a message */
	o.top_p = 0;
	CHECK(clg_generate(m, prompt, 1, &o, b, &nb) == CLG_ERR_INVALID && strstr(clg_last_error(), "top_p"),
	      "top_p 0: %s", clg_last_error());
	clg_module_free(m);
}

/* dropout: masks differ between training steps, none in evaluation; a block run twice in one step
 * draws the same masks */
static void check_dropout(clg_backend *be)
{
	clg_model_config cfg = tiny(0.3);
	clg_module *m = clg_model_build(be, &cfg, 9);
	int32_t id[6] = {1, 2, 3, 4, 5, 6};
	float y1[6 * V], y2[6 * V], e1[6 * V], e2[6 * V], b1[6 * D], b2[6 * D];

	clg_no_grad_begin();
	clg_scope_begin();
	clg_tensor *x = clg_from_host(be, CLG_I32, CLG_SHAPE(1, 6), id);
	clg_module_train(m, 1);
	CHECK_OK(clg_to_host(clg_module_forward(m, x), y1, sizeof(y1)));
	CHECK_OK(clg_to_host(clg_module_forward(m, x), y2, sizeof(y2)));
	CHECK(memcmp(y1, y2, sizeof(y1)) != 0, "two training steps drew the same dropout");
	/* a block alone, twice: the same masks (its step unchanged) */
	clg_module *blk = m->children[2]->children[0];
	clg_tensor *h = clg_randn(be, CLG_F32, CLG_SHAPE(1, 6, D), 1);
	CHECK_OK(clg_to_host(clg_module_forward(blk, h), b1, sizeof(b1)));
	CHECK_OK(clg_to_host(clg_module_forward(blk, h), b2, sizeof(b2)));
	CHECK(!memcmp(b1, b2, sizeof(b1)), "a block run twice in a step drew other masks");
	clg_module_train(m, 0);
	CHECK_OK(clg_to_host(clg_module_forward(m, x), e1, sizeof(e1)));
	CHECK_OK(clg_to_host(clg_module_forward(m, x), e2, sizeof(e2)));
	CHECK(!memcmp(e1, e2, sizeof(e1)) && memcmp(e1, y1, sizeof(e1)), "evaluation is not dropout-free");
	clg_scope_end();
	clg_no_grad_end();
	clg_module_free(m);
}

/* clg_attention_opts refused with a message: dropout_p outside [0, 1), a mask with causal, a mask
 * that does not broadcast, dropout through the seedless call */
static void check_attention_refusals(clg_backend *be)
{
	clg_tensor *q = clg_randn(be, CLG_F32, CLG_SHAPE(1, 2, 3, 4), 1), *k = clg_randn(be, CLG_F32, CLG_SHAPE(1, 2, 5, 4), 2);
	clg_tensor *m = clg_zeros(be, CLG_F32, CLG_SHAPE(3, 4));
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;

	o.dropout_p = 1;
	CHECK(!clg_scaled_dot_product_attention_ex(q, k, k, &o) && clg_last_status() == CLG_ERR_INVALID &&
	      strstr(clg_last_error(), "dropout_p"), "dropout_p 1: %s", clg_last_error());
	o.dropout_p = 0, o.causal = 1, o.attn_mask = m;
	CHECK(!clg_scaled_dot_product_attention_ex(q, k, k, &o) && strstr(clg_last_error(), "causal"), "mask and causal: %s",
	      clg_last_error());
	o.causal = 0;
	CHECK(!clg_scaled_dot_product_attention_ex(q, k, k, &o) && clg_last_status() == CLG_ERR_SHAPE &&
	      strstr(clg_last_error(), "attn_mask (3, 4)"), "mask (3, 4) on (1, 2, 3, 5) scores: %s", clg_last_error());
	CHECK(!clg_scaled_dot_product_attention(q, k, k, 1, 0.1) && strstr(clg_last_error(), "_ex"), "seedless dropout: %s",
	      clg_last_error());
	clg_free(q);
	clg_free(k);
	clg_free(m);
}

int main(void)
{
	const clg_device_info *list;
	int n = 0;
	int32_t ref_ids[40], ids[40];

	CHECK_OK(clg_devices(&list, &n));
	for (int idx = 0; idx < n; idx++) {
		clg_backend *be = NULL;
		if (clg_backend_open(idx, &be)) {
			CHECK(0, "open device %d: %s", idx, clg_last_error());
			continue;
		}
		printf("device %s\n", be->info.name);
		check_names_and_init(be);
		check_tied_grad(be);
		check_cached_logits(be);
		check_greedy(be, idx ? ids : ref_ids);
		if (idx)
			CHECK(!memcmp(ids, ref_ids, sizeof(ids)), "%s: greedy ids differ from the reference backend's", be->info.name);
		check_sampling(be);
		check_dropout(be);
		check_attention_refusals(be);
		clg_backend_close(be);
	}
	return t_finish("test_gpt");
}
