/* Generation with and without the gpt model's KV cache (clg_generate, frontend/generate.c): greedy
 * decoding of N tokens after a prompt of T - N random ids, so the sequence ends at T (default 512),
 * on one device; the same ids both ways (checked). Per token: the time from the first new token to
 * the last over N - 1 (each a step of the cached sequence, or a full forward over up to T
 * positions), and the first token's (the prompt's forward, both ways).
 * usage: bench_generate [--device SPEC] [--preset tiny|gpt2-small|gpt2-medium] [--dim D]
 *                       [--heads H] [--layers L] [--vocab V] [--context T] [--tokens N] */
#include <clgrad.h>
#include <clgrad_generate.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	double first, last, start;
	int n;
} clock_marks;

static int mark(void *user, int32_t id)
{
	clock_marks *c = user;
	double t = clg_now();
	(void)id;
	if (c->n++ == 0)
		c->first = t;
	c->last = t;
	return 0;
}

/* ms a token after the first, and the first's ms; the ids into out */
static int run(clg_module *m, const int32_t *prompt, int64_t np, int64_t n, int no_cache, int32_t *out, double *step_ms,
	       double *first_ms)
{
	clg_generate_opts o = CLG_GENERATE_OPTS_INIT;
	clock_marks c = {0};
	int64_t got = 0;
	o.max_new_tokens = n, o.temperature = 0, o.no_cache = no_cache, o.on_token = mark, o.user = &c;
	c.start = clg_now();
	if (clg_generate(m, prompt, np, &o, out, &got) || got != n) {
		fprintf(stderr, "bench_generate: %s\n", clg_last_error());
		return 1;
	}
	*first_ms = 1e3 * (c.first - c.start);
	*step_ms = n > 1 ? 1e3 * (c.last - c.first) / (double)(n - 1) : 0;
	return 0;
}

int main(int argc, char **argv)
{
	const char *device = NULL, *preset = "gpt2-small";
	int64_t dim = 0, heads = 0, layers = 0, vocab = 0, T = 512, N = 16;
	clg_model_config cfg = {.name = "gpt"};
	clg_backend *be = NULL;
	clg_module *m;
	int idx, rc = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--device"))
			device = v;
		else if (!strcmp(k, "--preset"))
			preset = v;
		else if (!strcmp(k, "--dim"))
			dim = atoll(v);
		else if (!strcmp(k, "--heads"))
			heads = atoll(v);
		else if (!strcmp(k, "--layers"))
			layers = atoll(v);
		else if (!strcmp(k, "--vocab"))
			vocab = atoll(v);
		else if (!strcmp(k, "--context"))
			T = atoll(v);
		else if (!strcmp(k, "--tokens"))
			N = atoll(v);
		else {
			fprintf(stderr, "bench_generate: unknown option %s\n", k);
			return 2;
		}
	}
	if (clg_gpt_preset(preset, &cfg) || T < 2 || N < 2 || N >= T) {
		fprintf(stderr, "bench_generate: %s\n", T < 2 || N < 2 || N >= T ? "need 2 <= tokens < context" : clg_last_error());
		return 2;
	}
	cfg.seq_len = T;
	cfg.dim = dim ? dim : cfg.dim, cfg.heads = heads ? heads : cfg.heads, cfg.layers = layers ? layers : cfg.layers;
	cfg.vocab = vocab ? vocab : cfg.vocab;
	if (clg_device_select(device, &idx) || clg_backend_open(idx, &be) || !(m = clg_model_build(be, &cfg, 1))) {
		fprintf(stderr, "bench_generate: %s\n", clg_last_error());
		return 1;
	}
	int64_t np = T - N;
	int32_t *prompt = malloc(sizeof(int32_t) * (size_t)np), *a = malloc(sizeof(int32_t) * (size_t)N),
		*b = malloc(sizeof(int32_t) * (size_t)N);
	uint32_t s = 12345;
	for (int64_t i = 0; prompt && i < np; i++) {
		s = s * 1664525u + 1013904223u;
		prompt[i] = (int32_t)((s >> 8) % (uint32_t)cfg.vocab);
	}
	double c_step, c_first, f_step, f_first;
	printf("gpt: vocab %lld, D %lld, %lld heads, %lld layers (%.1fM parameters) on %s; %lld tokens after a prompt of %lld "
	       "(the sequence ends at %lld)\n",
	       (long long)cfg.vocab, (long long)cfg.dim, (long long)cfg.heads, (long long)cfg.layers,
	       (double)clg_module_num_params(m) / 1e6, be->info.name, (long long)N, (long long)np, (long long)T);
	/* a warm-up token each way: the kernels' first compilation is no token's cost */
	if (prompt && a && b && !run(m, prompt, np, 2, 0, a, &c_step, &c_first) && !run(m, prompt, np, 2, 1, b, &f_step, &f_first) &&
	    !run(m, prompt, np, N, 0, a, &c_step, &c_first) && !run(m, prompt, np, N, 1, b, &f_step, &f_first)) {
		int same = !memcmp(a, b, sizeof(int32_t) * (size_t)N);
		printf("KV cache:     %8.2f ms a token (first token, the prompt's forward: %.1f ms)\n", c_step, c_first);
		printf("full forward: %8.2f ms a token (first token: %.1f ms)\n", f_step, f_first);
		printf("speed-up %.1fx a token; greedy ids %s\n", f_step / c_step, same ? "equal" : "DIFFER");
		rc = same ? 0 : 1;
	}
	free(prompt);
	free(a);
	free(b);
	clg_module_free(m);
	clg_backend_close(be);
	return rc;
}
