/* Tokenizers (frontend/clgrad_tokenizer.h): bytes, chars and BPE round trips on random bytes and
 * on text, the serialised form and files read back, malformed forms refused, and BPE's merges
 * checked against a slow reference learner (a rescan per merge) on small texts.
 * usage: test_tokenizer */
#include "test_util.h"
#include <clgrad_tokenizer.h>
#include <tokenizer_internal.h> /* tok_word_end */
#include <data.h>

#include <sys/stat.h>
#include <unistd.h>

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
		"clgrad-tokenizer-1 bpe 1 97 98 ", "clgrad-tokenizer-1 bpe 1 97 098",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		clg_tokenizer *t = NULL;
		clg_status st = clg_tokenizer_from_string(bad[i], &t);
		CHECK(st == CLG_ERR_FORMAT && !t, "'%s' accepted (%s)", bad[i], clg_status_name(st));
		clg_tokenizer_free(t);
	}
}

/* GPT-2's pre-split on a few strings: the words, joined by '|' */
static void check_split(const char *s, const char *want)
{
	char got[512];
	size_t n = strlen(s), k = 0;
	for (size_t i = 0; i < n;) {
		size_t e = tok_word_end((const unsigned char *)s, n, i);
		if (i)
			got[k++] = '|';
		memcpy(got + k, s + i, e - i);
		k += e - i;
		i = e;
	}
	got[k] = 0;
	CHECK(!strcmp(got, want), "split '%s': '%s', expected '%s'", s, got, want);
}

static void test_split(void)
{
	check_split("Hello world", "Hello| world");
	check_split("don't we'll they're I'd", "don|'t| we|'ll| they|'re| I|'d");
	check_split("x  = 12345;", "x| | =| 12345|;");
	check_split("a\n\nb", "a|\n|\n|b");
	check_split("a   b", "a|  | b");
	check_split("end.  ", "end|.|  ");
	check_split("caf\xc3\xa9 ol\xc3\xa9!", "caf\xc3\xa9| ol\xc3\xa9|!");
	check_split("(x+y)*2", "(|x|+|y|)*|2");
}

/* Pseudo-English of n bytes: words from a small list, spaces, punctuation, newlines, some UTF-8. */
static char *make_text(size_t n)
{
	static const char *words[] = {"the", "of", "and", "to", "in", "is", "that", "it", "for", "on", "with", "as",
				      "program", "software", "free", "license", "you", "may", "copy", "don't",
				      "caf\xc3\xa9", "na\xc3\xafve", "1989", "42", "GNU", "General", "Public"};
	static const char *seps[] = {" ", " ", " ", " ", ", ", ". ", "\n", "\n\n", "; ", "  ", " (", ") "};
	char *s = malloc(n + 64);
	size_t k = 0;
	while (k < n) {
		char rw[8];
		const char *w = words[next_u32() % (sizeof(words) / sizeof(words[0]))];
		const char *p = seps[next_u32() % (sizeof(seps) / sizeof(seps[0]))];
		if (next_u32() % 3 == 0) { /* a made-up word from a skewed alphabet: many pairs, many counts */
			size_t m = 2 + next_u32() % 6;
			for (size_t i = 0; i < m; i++)
				rw[i] = "eeettaaoinshrdlucmwy"[(next_u32() % 20) & (next_u32() % 20)];
			rw[m] = 0;
			w = rw;
		}
		size_t a = strlen(w), b = strlen(p);
		memcpy(s + k, w, a);
		memcpy(s + k + a, p, b);
		k += a + b;
	}
	s[n] = 0;
	return s;
}

/* The slow reference: every word occurrence its own symbol list, all pairs recounted per merge,
 * the most frequent (smallest (l, r) on a tie) merged everywhere. Writes the merges and the text's
 * tokens (the words' final symbols in order); returns the merge count. */
static int ref_learn(const char *text, size_t n, int want, int32_t *ml, int32_t *mr, int32_t *toks, size_t *ntok)
{
	int32_t *sym = malloc(n * sizeof(int32_t));
	size_t *wstart = malloc((n + 1) * sizeof(size_t)), *wlen = malloc(n * sizeof(size_t)), nw = 0;
	int nm = 0;
	for (size_t i = 0; i < n;) {
		size_t e = tok_word_end((const unsigned char *)text, n, i);
		wstart[nw] = i;
		wlen[nw++] = e - i;
		for (size_t j = i; j < e; j++)
			sym[j] = (unsigned char)text[j];
		i = e;
	}
	for (; nm < want; nm++) {
		/* pairs: counted in a plain table over (l, r) < 65536^2 is too large: use a sorted list */
		size_t np = 0, best = 0;
		uint64_t *pairs = malloc(n * sizeof(uint64_t));
		for (size_t w = 0; w < nw; w++)
			for (size_t j = 0; j + 1 < wlen[w]; j++)
				pairs[np++] = (uint64_t)sym[wstart[w] + j] << 32 | (uint32_t)sym[wstart[w] + j + 1];
		/* insertion-free counting: sort, then runs */
		for (size_t gap = np / 2; gap > 0; gap /= 2) /* shell sort: no qsort comparator needed */
			for (size_t i = gap; i < np; i++)
				for (size_t j = i; j >= gap && pairs[j - gap] > pairs[j]; j -= gap) {
					uint64_t x = pairs[j];
					pairs[j] = pairs[j - gap];
					pairs[j - gap] = x;
				}
		uint64_t bp = 0;
		for (size_t i = 0; i < np;) {
			size_t j = i;
			while (j < np && pairs[j] == pairs[i])
				j++;
			if (j - i > best) { /* sorted ascending: the first of the largest count is the smallest */
				best = j - i;
				bp = pairs[i];
			}
			i = j;
		}
		free(pairs);
		if (best < 2)
			break;
		ml[nm] = (int32_t)(bp >> 32);
		mr[nm] = (int32_t)(uint32_t)bp;
		for (size_t w = 0; w < nw; w++) {
			int32_t *s = sym + wstart[w];
			size_t j = 0;
			for (size_t i = 0; i < wlen[w];) {
				if (i + 1 < wlen[w] && s[i] == ml[nm] && s[i + 1] == mr[nm]) {
					s[j++] = 256 + nm;
					i += 2;
				} else {
					s[j++] = s[i++];
				}
			}
			wlen[w] = j;
		}
	}
	*ntok = 0;
	for (size_t w = 0; w < nw; w++)
		for (size_t j = 0; j < wlen[w]; j++)
			toks[(*ntok)++] = sym[wstart[w] + j];
	free(sym);
	free(wstart);
	free(wlen);
	return nm;
}

static void test_bpe_reference(size_t n, int vocab)
{
	char *text = make_text(n);
	int want = vocab - 256, nm;
	int32_t *ml = malloc((size_t)want * sizeof(int32_t)), *mr = malloc((size_t)want * sizeof(int32_t));
	int32_t *rt = malloc(n * sizeof(int32_t)), *ct = malloc(n * sizeof(int32_t));
	size_t nrt = 0, nct = 0;
	clg_tokenizer *t = NULL;

	nm = ref_learn(text, n, want, ml, mr, rt, &nrt);
	CHECK(nm > want / 2, "the reference learned only %d merges of %d: a text too plain to test with", nm, want);
	CHECK_OK(clg_tokenizer_bpe_learn(text, n, vocab, &t));
	if (t) {
		int same = clg_tokenizer_vocab_size(t) == 256 + nm;
		for (int r = 0; same && r < nm; r++) {
			same = t->merge_l[r] == ml[r] && t->merge_r[r] == mr[r];
			if (!same)
				fprintf(stderr, "merge %d: (%d, %d), the reference (%d, %d)\n", r, t->merge_l[r], t->merge_r[r],
					ml[r], mr[r]);
		}
		CHECK(same, "bpe of %zu bytes, %d tokens: merges differ from the reference (%d merges, reference %d)", n,
		      vocab, clg_tokenizer_vocab_size(t) - 256, nm);
		CHECK_OK(clg_tokenizer_encode(t, text, n, ct, &nct));
		CHECK(nct == nrt && !memcmp(ct, rt, nct * sizeof(int32_t)),
		      "bpe of %zu bytes: encoding the training text differs from the reference's (%zu tokens, %zu)", n,
		      nct, nrt);
		check_round_trip(t, text, n, "bpe, its training text");
	}
	clg_tokenizer_free(t);
	free(text);
	free(ml);
	free(mr);
	free(rt);
	free(ct);
}

static void test_bpe(const char *dir)
{
	char *text = make_text(50000), buf[4096], path[1024];
	const char *other = "A different text: \xe2\x82\xac 3.14159, tabs\tand\r\nCRLF lines.  ";
	clg_tokenizer *t = NULL, *u = NULL;
	const unsigned char *b;
	size_t len;

	CHECK_OK(clg_tokenizer_bpe_learn(text, 50000, 600, &t));
	if (!t)
		goto out;
	CHECK(clg_tokenizer_kind_of(t) == CLG_TOK_BPE && clg_tokenizer_vocab_size(t) > 300,
	      "bpe: %d tokens", clg_tokenizer_vocab_size(t));
	/* every input: random bytes, another text, the empty string */
	for (int k = 0; k < 20; k++) {
		size_t n = next_u32() % sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = k % 2 ? (char)next_u32() : " etaoin\n'"[next_u32() % 9];
		check_round_trip(t, buf, n, "bpe, random");
	}
	check_round_trip(t, other, strlen(other), "bpe, another text");
	check_round_trip(t, "", 0, "bpe, empty");
	/* a long run of one letter (cut into words of CLG_BPE_MAX_WORD bytes) */
	memset(buf, 'e', sizeof(buf));
	check_round_trip(t, buf, sizeof(buf), "bpe, a long run");
	/* it compresses its kind of text */
	{
		int32_t *ids = malloc(50000 * sizeof(int32_t));
		size_t m = 0;
		CHECK_OK(clg_tokenizer_encode(t, text, 50000, ids, &m));
		CHECK(m < 50000 / 2, "bpe: %zu tokens for 50000 bytes of its own text", m);
		free(ids);
	}
	CHECK_OK(clg_tokenizer_token(t, clg_tokenizer_vocab_size(t) - 1, &b, &len));
	CHECK(len >= 2, "bpe: the last token has %zu bytes", len);
	snprintf(path, sizeof(path), "%s/bpe.tok", dir);
	check_serialised(t, path);
	CHECK_OK(clg_tokenizer_from_spec(path, NULL, 0, &u));
	CHECK(u && clg_tokenizer_equal(t, u), "bpe: from_spec(file) differs");
	clg_tokenizer_free(u);
	u = NULL;
	CHECK_OK(clg_tokenizer_from_spec("bpe:300", text, 50000, &u));
	CHECK(u && clg_tokenizer_vocab_size(u) == 300 && !clg_tokenizer_equal(t, u), "bpe:300 from spec");
	clg_tokenizer_free(u);
	u = NULL;
	CHECK(clg_tokenizer_from_spec("bpe:256", text, 50000, &u) == CLG_ERR_INVALID && !u, "bpe:256 accepted");
	CHECK(clg_tokenizer_from_spec("bpe:x", text, 50000, &u) == CLG_ERR_INVALID && !u, "bpe:x accepted");
	/* nothing to learn: no pair occurs twice */
	CHECK(clg_tokenizer_bpe_learn("abc", 3, 300, &u) == CLG_ERR_INVALID && !u, "bpe of 'abc' learned");
	/* the vocabulary stops where no pair repeats */
	CHECK_OK(clg_tokenizer_bpe_learn("abab", 4, 1000, &u));
	CHECK(u && clg_tokenizer_vocab_size(u) == 257, "bpe of 'abab': %d tokens", clg_tokenizer_vocab_size(u));
	clg_tokenizer_free(u);
out:
	clg_tokenizer_free(t);
	free(text);
}

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

/* A folder of fortune cookie files read as one text: name order, fortunes each followed by "%",
 * blank ones dropped, indexes (.dat), links and hidden files skipped, other files as they are. */
static void test_corpus(const char *dir)
{
	char d[1024], p[1100], *text = NULL;
	size_t len = 0;
	const char *want = "one\n%\ntwo\nlines\n%\nlast, no newline\n%\nplain text\nno separators\n"
			   "zeta fortune\r\n%\n";

	snprintf(d, sizeof(d), "%s/fortunes", dir);
	mkdir(d, 0755);
	snprintf(p, sizeof(p), "%s/b-cookies", d);
	write_file(p, "one\n%\ntwo\nlines\n%\n\n%\n  \n%\nlast, no newline");
	snprintf(p, sizeof(p), "%s/b-cookies.dat", d);
	write_file(p, "an index: skipped");
	snprintf(p, sizeof(p), "%s/.hidden", d);
	write_file(p, "skipped");
	snprintf(p, sizeof(p), "%s/c-plain", d);
	write_file(p, "plain text\nno separators");
	snprintf(p, sizeof(p), "%s/z\xc3\xa9", d);
	write_file(p, "%\nzeta fortune\r\n%\r\n");
	{
		char target[1100];
		snprintf(target, sizeof(target), "%s/b-cookies", d);
		snprintf(p, sizeof(p), "%s/b-cookies.u8", d);
		CHECK(symlink(target, p) == 0, "symlink");
	}
	CHECK_OK(clg_text_read(d, &text, &len));
	CHECK(text && len == strlen(want) && !strcmp(text, want), "the folder read as '%s'", text ? text : "(null)");
	free(text);
	text = NULL;
	/* an empty folder, and a file read as it is */
	snprintf(p, sizeof(p), "%s/empty", dir);
	mkdir(p, 0755);
	CHECK(clg_text_read(p, &text, &len) == CLG_ERR_FORMAT && !text, "an empty folder read");
	snprintf(p, sizeof(p), "%s/b-cookies", d);
	CHECK_OK(clg_text_read(p, &text, &len));
	CHECK(text && len == 42 && text[0] == 'o', "a cookie file by itself is read as it is (%zu bytes)", len);
	free(text);
	/* the fingerprint: FNV-1a 64 of "a" is af63dc4c8601ec8c */
	CHECK(clg_text_hash("a", 1) == 0xaf63dc4c8601ec8cULL, "FNV-1a of 'a': %llx",
	      (unsigned long long)clg_text_hash("a", 1));
}

/* A text loaded with each kind: the tokens decode to the text; the parts split at the byte
 * boundary; BPE learned from the training part only. */
static void test_text_tok(const char *dir)
{
	char path[1024], *back = NULL;
	char *text = make_text(20000);
	clg_text t;
	clg_tokenizer *tok = NULL;
	size_t blen = 0;

	snprintf(path, sizeof(path), "%s/text.txt", dir);
	write_file(path, text);
	CHECK_OK(clg_text_load_tok(path, 0.1, NULL, "bpe:500", &t));
	CHECK(t.tok && clg_tokenizer_kind_of(t.tok) == CLG_TOK_BPE && t.vocab_size == clg_tokenizer_vocab_size(t.tok) &&
	      t.bytes == 20000 && t.bytes_train == 18000 && t.n < 20000 && t.n_train < t.n, "bpe text: %lld tokens, %lld "
	      "training", (long long)t.n, (long long)t.n_train);
	if (t.ids) {
		CHECK_OK(clg_tokenizer_decode(t.tok, t.ids, (size_t)t.n_train, &back, &blen));
		CHECK(back && blen == 18000 && !memcmp(back, text, 18000), "bpe text: the training part decodes back");
		free(back);
		back = NULL;
		CHECK_OK(clg_tokenizer_bpe_learn(text, 18000, 500, &tok));
		CHECK(tok && clg_tokenizer_equal(tok, t.tok), "bpe text: not learned from the training part alone");
		clg_tokenizer_free(tok);
		tok = NULL;
	}
	CHECK(t.hash == clg_text_hash(text, 20000), "bpe text: fingerprint");
	clg_text_free(&t);
	/* a given tokenizer that does not cover the text: refused, naming the file, byte and position */
	CHECK_OK(clg_tokenizer_chars("the ", 4, &tok));
	CHECK(clg_text_load_tok(path, 0.1, tok, NULL, &t) == CLG_ERR_INVALID && !t.ids, "chars of 'the ' cover the text");
	CHECK(strstr(clg_last_error(), path) && strstr(clg_last_error(), "position"), "message: %s", clg_last_error());
	clg_tokenizer_free(tok);
	tok = NULL;
	/* bytes */
	CHECK_OK(clg_text_load_tok(path, 0.5, NULL, "bytes", &t));
	CHECK(t.vocab_size == 256 && t.n == 20000 && t.n_train == 10000 && t.ids && t.ids[0] == (unsigned char)text[0],
	      "bytes text");
	clg_text_free(&t);
	/* the default: chars of the whole text, as clg_text_load */
	CHECK_OK(clg_text_load_tok(path, 0.1, NULL, NULL, &t));
	CHECK(t.tok && clg_tokenizer_kind_of(t.tok) == CLG_TOK_CHARS && t.n == 20000, "chars text");
	clg_text_free(&t);
	free(text);
}

int main(void)
{
	char *dir = t_tmpdir();
	test_bytes(dir);
	test_chars(dir);
	test_malformed();
	test_split();
	test_bpe(dir);
	test_corpus(dir);
	test_text_tok(dir);
	test_bpe_reference(3000, 400);
	test_bpe_reference(20000, 700);
	t_rmtree(dir);
	free(dir);
	return t_finish("test_tokenizer");
}
