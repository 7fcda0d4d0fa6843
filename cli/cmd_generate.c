/* clgrad generate: text from a trained language model's checkpoint, streamed to stdout as each
 * token comes (clg_generate, frontend/generate.c: the gpt model with its KV cache, other models
 * with a full forward a token). The prompt is encoded and the tokens decoded with the checkpoint's
 * own tokenizer; stdout gets the prompt and the continuation, stderr one line of figures.
 *   clgrad generate --checkpoint F [--prompt TEXT] [--tokens N] [--temperature T] [--top-k K]
 *                   [--top-p P] [--seed S] [--stop STR] [--device SPEC] [--no-cache] */
#include "cli.h"
#include "opts.h"

#include <clgrad_checkpoint.h>
#include <clgrad_generate.h>
#include <stdlib.h>
#include <string.h>

static const char gen_usage[] =
	"usage: clgrad generate --checkpoint FILE [--prompt TEXT] [--tokens N] [--temperature T] [--top-k K]\n"
	"                       [--top-p P] [--seed S] [--stop STR] [--device SPEC] [--no-cache]\n"
	"  continues TEXT (default: a newline) with N tokens (default 200) of the checkpoint's language model\n"
	"  (gpt or transformer), streamed to stdout after the prompt; encoded and decoded with the checkpoint's\n"
	"  tokenizer. --temperature 0 is greedy (default 1); --top-k keeps the K likeliest tokens (0: all, the\n"
	"  default), --top-p the smallest set of them whose probability reaches P (default 1: all); --seed fixes\n"
	"  the sampling (default 0). --stop ends the output once the generated text contains STR. The gpt model\n"
	"  keeps a KV cache (one position's forward a token); --no-cache runs the full forward each token (the\n"
	"  reference). stderr gets the tokens generated and the time a token.\n";

typedef struct {
	const clg_tokenizer *tok;
	int failed;
} stream;

static int put_token(void *user, int32_t id)
{
	stream *s = user;
	const unsigned char *b;
	size_t n;
	if (clg_tokenizer_token(s->tok, id, &b, &n)) {
		s->failed = 1;
		return 1;
	}
	fwrite(b, 1, n, stdout);
	fflush(stdout);
	return 0;
}

static size_t token_text(void *user, int32_t id, char *buf, size_t cap)
{
	stream *s = user;
	const unsigned char *b;
	size_t n;
	if (clg_tokenizer_token(s->tok, id, &b, &n))
		return 0;
	n = n < cap ? n : cap;
	memcpy(buf, b, n);
	return n;
}

int cmd_generate(int argc, char **argv)
{
	const char *ckpt = NULL, *prompt = "\n", *stop = NULL, *device = NULL;
	int64_t tokens = 200, top_k = 0;
	double temperature = 1.0, top_p = 1.0;
	uint64_t seed = 0;
	int no_cache = 0, rc;
	const cli_opt opts[] = {
		CLI_OPT_STR("checkpoint", &ckpt),
		CLI_OPT_STR("prompt", &prompt),
		CLI_OPT_I64("tokens", &tokens, 0, INT64_C(100000000)),
		CLI_OPT_REAL("temperature", &temperature, 0, 1e6),
		CLI_OPT_I64("top-k", &top_k, 0, INT64_C(100000000)),
		CLI_OPT_REAL("top-p", &top_p, 1e-9, 1),
		CLI_OPT_U64("seed", &seed),
		CLI_OPT_STR("stop", &stop),
		CLI_OPT_STR("device", &device),
		CLI_OPT_FLAG("no-cache", &no_cache),
	};
	cli_spec cs = {.cmd = "generate", .usage = gen_usage, .opts = opts, .n = CLI_N(opts)};
	static clg_ckpt_meta meta;
	clg_tokenizer *tok = NULL;
	clg_backend *be = NULL;
	clg_module *model = NULL;
	int32_t *ids = NULL, *out = NULL;
	size_t plen, n = 0;
	int64_t n_out = 0;
	int idx = 0;
	double t0, dt;
	stream s = {0};
	clg_generate_opts o = CLG_GENERATE_OPTS_INIT;

	if ((rc = cli_parse(&cs, argc, argv)) >= 0)
		return rc;
	if (!ckpt)
		return cli_error("generate", "--checkpoint FILE is required (clgrad generate --help)");
	rc = 1;
	if (clg_ckpt_read_meta(ckpt, &meta) || clg_ckpt_read_tokenizer(ckpt, &tok))
		goto fail;
	if (!clg_model_is_lm(&meta.model)) {
		fprintf(stderr, "clgrad generate: checkpoint '%s' holds a %s model, not a language model (gpt, transformer)\n",
			ckpt, meta.model.name);
		goto out;
	}
	if (!tok) {
		fprintf(stderr, "clgrad generate: checkpoint '%s' holds no tokenizer (saved before checkpoints stored one): "
			"train it again to generate from it\n", ckpt);
		goto out;
	}
	if (clg_tokenizer_vocab_size(tok) != meta.model.vocab) {
		fprintf(stderr, "clgrad generate: checkpoint '%s': its tokenizer has %d tokens, its model %lld\n", ckpt,
			clg_tokenizer_vocab_size(tok), (long long)meta.model.vocab);
		goto out;
	}
	plen = strlen(prompt);
	if (!plen) {
		fprintf(stderr, "clgrad generate: --prompt is empty (give at least one character)\n");
		goto out;
	}
	ids = malloc(sizeof(int32_t) * plen);
	out = malloc(sizeof(int32_t) * (size_t)(tokens ? tokens : 1));
	if (!ids || !out) {
		fprintf(stderr, "clgrad generate: out of host memory\n");
		goto out;
	}
	if (clg_tokenizer_encode(tok, prompt, plen, ids, &n) || clg_device_select(device, &idx) ||
	    clg_backend_open(idx, &be))
		goto fail;
	model = clg_model_build(be, &meta.model, meta.seed);
	if (!model || clg_ckpt_load(ckpt, model, NULL))
		goto fail;
	s.tok = tok;
	o.max_new_tokens = tokens, o.temperature = temperature, o.top_k = top_k, o.top_p = top_p, o.seed = seed;
	o.on_token = put_token, o.token_text = token_text, o.user = &s, o.no_cache = no_cache;
	o.context = meta.model.seq_len;
	if (stop && *stop)
		o.stop = &stop, o.n_stop = 1;
	fwrite(prompt, 1, plen, stdout);
	fflush(stdout);
	t0 = clg_now();
	if (clg_generate(model, ids, (int64_t)n, &o, out, &n_out))
		goto fail;
	dt = clg_now() - t0;
	if (s.failed) {
		fprintf(stderr, "clgrad generate: %s\n", clg_last_error());
		goto out;
	}
	printf("\n");
	fprintf(stderr, "clgrad generate: %lld tokens after a prompt of %zu in %.3g s (%.3g ms a token, %s) on %s\n",
		(long long)n_out, n, dt, n_out ? 1e3 * dt / (double)n_out : 0.0,
		no_cache || strcmp(meta.model.name, "gpt") ? "full forward each" : "KV cache", be->info.name);
	rc = 0;
	goto out;
fail:
	rc = report_error("generate");
out:
	clg_module_free(model);
	if (be)
		clg_backend_close(be);
	clg_tokenizer_free(tok);
	free(ids);
	free(out);
	return rc;
}
