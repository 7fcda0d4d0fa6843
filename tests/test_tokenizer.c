/* Tokenizers (frontend/clgrad_tokenizer.h): bytes, chars and BPE round trips on random bytes and
 * on text, the serialised form and files read back, malformed forms refused, and BPE's merges
 * checked against a slow reference learner (a rescan per merge) on small texts.
 * usage: test_tokenizer */
#include "test_util.h"
#include <clgrad_tokenizer.h>

#include <stdint.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t next_u32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* decode(encode(s)) == s, at most one token per byte, every id in range */
static void check_round_trip(const clg_tokenizer *t, const char *s, size_t n, const char *what)
{
	int32_t *ids = malloc((n ? n : 1) * sizeof(int32_t));
	char *back = NULL;
	size_t m = 0, blen = 0;

	CHECK_OK(clg_tokenizer_encode(t, s, n, ids, &m));
	CHECK(m <= n, "%s: %zu tokens for %zu bytes", what, m, n);
	for (size_t i = 0; i < m; i++)
		CHECK(ids[i] >= 0 && ids[i] < clg_tokenizer_vocab_size(t), "%s: id %d at %zu", what, ids[i], i);
	CHECK_OK(clg_tokenizer_decode(t, ids, m, &back, &blen));
	CHECK(back && blen == n && !memcmp(back, s, n), "%s: the round trip differs (%zu bytes back of %zu)", what, blen,
	      n);
	free(back);
	free(ids);
}

/* the serialised form read back is equal, and encodes the same */
static void check_serialised(const clg_tokenizer *t, const char *path)
{
	char *s = NULL;
	clg_tokenizer *u = NULL, *w = NULL;
	CHECK_OK(clg_tokenizer_to_string(t, &s));
	CHECK_OK(clg_tokenizer_from_string(s, &u));
	CHECK(u && clg_tokenizer_equal(t, u), "from_string(to_string) is another tokenizer: %.60s", s);
	CHECK_OK(clg_tokenizer_save(t, path));
	CHECK_OK(clg_tokenizer_load(path, &w));
	CHECK(w && clg_tokenizer_equal(t, w), "load(save) is another tokenizer");
	free(s);
	clg_tokenizer_free(u);
	clg_tokenizer_free(w);
}

static void test_bytes(const char *dir)
{
	clg_tokenizer *t = NULL;
	char buf[4096], path[1024];
	const unsigned char *b;
	size_t len;

	CHECK_OK(clg_tokenizer_bytes(&t));
	CHECK(clg_tokenizer_vocab_size(t) == 256, "bytes: %d tokens", clg_tokenizer_vocab_size(t));
	CHECK(clg_tokenizer_kind_of(t) == CLG_TOK_BYTES, "bytes: kind");
	for (int k = 0; k < 20; k++) {
		size_t n = next_u32() % sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)next_u32();
		check_round_trip(t, buf, n, "bytes, random");
	}
	CHECK_OK(clg_tokenizer_token(t, 200, &b, &len));
	CHECK(len == 1 && b[0] == 200, "bytes: token 200");
	CHECK(clg_tokenizer_token(t, 256, &b, &len) == CLG_ERR_INVALID, "bytes: token 256 accepted");
	snprintf(path, sizeof(path), "%s/bytes.tok", dir);
	check_serialised(t, path);
	clg_tokenizer_free(t);
}

static void test_chars(const char *dir)
{
	const char *text = "hello, world\n";
	clg_tokenizer *t = NULL, *u = NULL;
	int32_t ids[16], bad[2] = {0, 10};
	size_t n = 0, pos = 0;
	char *s = NULL, path[1024];

	CHECK_OK(clg_tokenizer_chars(text, strlen(text), &t));
	/* the sorted set: "\n ,dehlorw" */
	CHECK(clg_tokenizer_vocab_size(t) == 10, "chars: %d tokens", clg_tokenizer_vocab_size(t));
	CHECK_OK(clg_tokenizer_encode(t, "held", 4, ids, &n));
	CHECK(n == 4 && ids[0] == 5 && ids[1] == 4 && ids[2] == 6 && ids[3] == 3, "chars: 'held' -> %d %d %d %d", ids[0],
	      ids[1], ids[2], ids[3]);
	check_round_trip(t, text, strlen(text), "chars");
	CHECK(clg_tokenizer_encode(t, "hex", 3, ids, &n) == CLG_ERR_INVALID, "chars: 'x' encoded");
	CHECK(strstr(clg_last_error(), "0x78") && strstr(clg_last_error(), "position 2"), "chars: message '%s'",
	      clg_last_error());
	CHECK(!clg_tokenizer_covers(t, "hex", 3, &pos) && pos == 2, "chars: covers 'hex'");
	CHECK(clg_tokenizer_covers(t, "word", 4, NULL), "chars: does not cover 'word'");
	CHECK(clg_tokenizer_decode(t, bad, 2, &s, NULL) == CLG_ERR_INVALID && !s, "chars: id 10 of 10 decoded");
	CHECK_OK(clg_tokenizer_to_string(t, &s));
	CHECK(s && !strcmp(s, "clgrad-tokenizer-1 chars 0a202c6465686c6f7277"), "chars: serialised '%s'", s);
	free(s);
	s = NULL;
	snprintf(path, sizeof(path), "%s/chars.tok", dir);
	check_serialised(t, path);
	CHECK_OK(clg_tokenizer_chars("hello", 5, &u));
	CHECK(!clg_tokenizer_equal(t, u), "chars: two sets equal");
	clg_tokenizer_free(u);
	clg_tokenizer_free(t);
}

static void test_malformed(void)
{
	static const char *bad[] = {
		"", "clgrad-tokenizer-1", "clgrad-tokenizer-2 bytes", "clgrad-tokenizer-1 bytes ", "clgrad-tokenizer-1 words",
		"clgrad-tokenizer-1 chars ", "clgrad-tokenizer-1 chars 6161", "clgrad-tokenizer-1 chars 62 61",
		"clgrad-tokenizer-1 chars 6", "clgrad-tokenizer-1 chars zz", "clgrad-tokenizer-1 bpe 0",
		"clgrad-tokenizer-1 bpe 1 97", "clgrad-tokenizer-1 bpe 1 97 256", "clgrad-tokenizer-1 bpe 2 97 98 97 98",
		"clgrad-tokenizer-1 bpe 1 97 98 3", "clgrad-tokenizer-1 bpe 1 97 -1", "clgrad-tokenizer-1 bpe 1 97  98",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		clg_tokenizer *t = NULL;
		clg_status st = clg_tokenizer_from_string(bad[i], &t);
		CHECK(st == CLG_ERR_FORMAT && !t, "'%s' accepted (%s)", bad[i], clg_status_name(st));
		clg_tokenizer_free(t);
	}
}

int main(void)
{
	char *dir = t_tmpdir();
	test_bytes(dir);
	test_chars(dir);
	test_malformed();
	t_rmtree(dir);
	free(dir);
	return t_finish("test_tokenizer");
}
