/* clgrad tokenize: learn a byte-level BPE from a text and write it to a file (atomically), for
 * `clgrad train --tokenizer FILE`; and clgrad bench tokenizer: MB/s of learning, encoding and
 * decoding on a corpus (by default the fortunes of Debian's fortunes packages).
 *   clgrad tokenize --data FILE|DIR --vocab N --out TOK
 *   clgrad bench tokenizer [--data FILE|DIR] [--vocab N] [--repeat R] [--json] */
#include "cli.h"
#include "json_write.h"
#include "opts.h"

#include <clgrad_tokenizer.h>
#include <data.h>
#include <stdlib.h>
#include <string.h>

#define CORPUS "/usr/share/games/fortunes"

static const char tok_usage[] =
	"usage: clgrad tokenize --data FILE|DIR --vocab N --out TOK\n"
	"  learns a byte-level BPE of N tokens (257 to 65536: 256 bytes and the merges) from the whole text\n"
	"  (a file, or a folder of texts such as " CORPUS ") and writes it to TOK, for\n"
	"  `clgrad train --tokenizer TOK`. Prints the tokens of the text and the time taken.\n";

int cmd_tokenize(int argc, char **argv)
{
	const char *data = NULL, *out = NULL;
	int vocab = 0, rc;
	const cli_opt opts[] = {
		CLI_OPT_STR("data", &data),
		CLI_OPT_I32("vocab", &vocab, 257, CLG_BPE_MAX_VOCAB),
		CLI_OPT_STR("out", &out),
	};
	cli_spec cs = {.cmd = "tokenize", .usage = tok_usage, .opts = opts, .n = CLI_N(opts)};
	char *text = NULL;
	size_t len = 0, n = 0;
	int32_t *ids = NULL;
	clg_tokenizer *t = NULL;
	double t0, t1, t2;

	if ((rc = cli_parse(&cs, argc, argv)) >= 0)
		return rc;
	if (!data || !out || !vocab)
		return cli_error("tokenize", "--data, --vocab and --out are required (clgrad tokenize --help)");
	rc = 1;
	if (clg_text_read(data, &text, &len))
		return report_error("tokenize");
	t0 = clg_now();
	if (clg_tokenizer_bpe_learn(text, len, vocab, &t))
		goto fail;
	t1 = clg_now();
	if (!(ids = malloc((len ? len : 1) * sizeof(int32_t)))) {
		fprintf(stderr, "clgrad tokenize: out of host memory for %zu ids\n", len);
		goto out;
	}
	if (clg_tokenizer_encode(t, text, len, ids, &n))
		goto fail;
	t2 = clg_now();
	if (clg_tokenizer_save(t, out))
		goto fail;
	printf("%s: %zu bytes -> %zu tokens (%.3g bytes a token) with a BPE of %d tokens%s; learned in %.3g s, encoded in "
	       "%.3g s; wrote %s\n", data, len, n, n ? (double)len / (double)n : 0.0, clg_tokenizer_vocab_size(t),
	       clg_tokenizer_vocab_size(t) < vocab ? " (no pair repeats beyond)" : "", t1 - t0, t2 - t1, out);
	rc = 0;
	goto out;
fail:
	rc = report_error("tokenize");
out:
	free(ids);
	free(text);
	clg_tokenizer_free(t);
	return rc;
}

static const char bench_usage[] =
	"usage: clgrad bench tokenizer [--data FILE|DIR] [--vocab N] [--repeat R] [--json]\n"
	"  learns a BPE of N tokens (default 4096) from the text (default " CORPUS ",\n"
	"  Debian's fortunes packages), R copies of it end to end (default 1), then encodes and decodes it;\n"
	"  MB/s of each (MB = 1e6 bytes), the tokens a byte, and the round trip checked byte for byte.\n";

int bench_tokenizer(int argc, char **argv)
{
	const char *data = CORPUS;
	int vocab = 4096, repeat = 1, json = 0, rc;
	const cli_opt opts[] = {
		CLI_OPT_STR("data", &data),
		CLI_OPT_I32("vocab", &vocab, 257, CLG_BPE_MAX_VOCAB),
		CLI_OPT_I32("repeat", &repeat, 1, 64),
		CLI_OPT_FLAG("json", &json),
	};
	cli_spec cs = {.cmd = "bench tokenizer", .usage = bench_usage, .opts = opts, .n = CLI_N(opts)};
	char *one = NULL, *text = NULL, *back = NULL;
	size_t len1 = 0, len, n = 0, blen = 0;
	int32_t *ids = NULL;
	clg_tokenizer *t = NULL;
	double t0, t1, t2, t3;
	int same;

	if ((rc = cli_parse(&cs, argc, argv)) >= 0)
		return rc;
	rc = 1;
	if (clg_text_read(data, &one, &len1))
		return report_error("bench tokenizer");
	len = len1 * (size_t)repeat;
	text = malloc(len + 1);
	ids = malloc(len * sizeof(int32_t));
	if (!text || !ids) {
		fprintf(stderr, "clgrad bench tokenizer: out of host memory for %zu bytes\n", len * 5);
		goto out;
	}
	for (int r = 0; r < repeat; r++)
		memcpy(text + (size_t)r * len1, one, len1);
	t0 = clg_now();
	if (clg_tokenizer_bpe_learn(text, len, vocab, &t))
		goto fail;
	t1 = clg_now();
	if (clg_tokenizer_encode(t, text, len, ids, &n))
		goto fail;
	t2 = clg_now();
	if (clg_tokenizer_decode(t, ids, n, &back, &blen))
		goto fail;
	t3 = clg_now();
	same = blen == len && !memcmp(back, text, len);
	if (json) {
		json_writer w;
		json_init(&w, stdout, 0);
		json_begin_object(&w);
		json_key_str(&w, "data", data);
		json_key_int(&w, "repeat", repeat);
		json_key_int(&w, "bytes", (int64_t)len);
		json_key_int(&w, "vocab", clg_tokenizer_vocab_size(t));
		json_key_int(&w, "tokens", (int64_t)n);
		json_key_num(&w, "learn_s", t1 - t0);
		json_key_num(&w, "encode_s", t2 - t1);
		json_key_num(&w, "decode_s", t3 - t2);
		json_key_num(&w, "learn_mb_per_s", (double)len / 1e6 / (t1 - t0));
		json_key_num(&w, "encode_mb_per_s", (double)len / 1e6 / (t2 - t1));
		json_key_num(&w, "decode_mb_per_s", (double)len / 1e6 / (t3 - t2));
		json_key_bool(&w, "round_trip", same);
		json_end_object(&w);
		fputc('\n', stdout);
	} else {
		printf("tokenizer bench: %s x%d, %.3g MB; BPE of %d tokens; %zu tokens (%.3g bytes a token)\n", data, repeat,
		       (double)len / 1e6, clg_tokenizer_vocab_size(t), n, n ? (double)len / (double)n : 0.0);
		printf("  learn  %8.3g s  %8.3g MB/s\n  encode %8.3g s  %8.3g MB/s\n  decode %8.3g s  %8.3g MB/s\n"
		       "  round trip: %s\n", t1 - t0, (double)len / 1e6 / (t1 - t0), t2 - t1, (double)len / 1e6 / (t2 - t1),
		       t3 - t2, (double)len / 1e6 / (t3 - t2), same ? "identical" : "DIFFERS");
	}
	rc = same ? 0 : 1;
	goto out;
fail:
	rc = report_error("bench tokenizer");
out:
	free(one);
	free(text);
	free(back);
	free(ids);
	clg_tokenizer_free(t);
	return rc;
}
