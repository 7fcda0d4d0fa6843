/* Tokenizers (clgrad_tokenizer.h): the kinds, their token bytes, decoding, the serialised form and
 * files. Learning and encoding BPE are tokenizer_bpe.c's. */
#include "fe_internal.h"
#include "tokenizer_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOK_MAGIC "clgrad-tokenizer-1"
#define TOK_FILE_MAX ((size_t)64 << 20) /* a serialised tokenizer: 65536 tokens take under 1 MB */

const char *clg_tokenizer_kind_name(clg_tokenizer_kind k)
{
	return k == CLG_TOK_BYTES ? "bytes" : k == CLG_TOK_CHARS ? "chars" : k == CLG_TOK_BPE ? "bpe" : "?";
}

void clg_tokenizer_free(clg_tokenizer *t)
{
	if (!t)
		return;
	free(t->tok_off);
	free(t->tok_bytes);
	free(t->merge_l);
	free(t->merge_r);
	free(t->ht_key);
	free(t->ht_rank);
	free(t);
}

/* bytes and chars: every token is one byte */
clg_status tok_make_bytes_like(clg_tokenizer_kind kind, const int16_t *id_of, clg_tokenizer **out)
{
	clg_tokenizer *t = calloc(1, sizeof(*t));
	int v = 0;

	*out = NULL;
	if (!t || !(t->tok_off = malloc(257 * sizeof(uint32_t))) || !(t->tok_bytes = malloc(256))) {
		clg_tokenizer_free(t);
		return clg_fail(CLG_ERR_OOM, "tokenizer: out of host memory");
	}
	t->kind = kind;
	for (int b = 0; b < 256; b++) {
		t->id_of[b] = id_of[b];
		if (id_of[b] >= 0) {
			t->tok_bytes[v] = (unsigned char)b;
			t->tok_off[v] = (uint32_t)v;
			v++;
		}
	}
	t->tok_off[v] = (uint32_t)v;
	t->vocab = v;
	*out = t;
	return CLG_OK;
}

clg_status clg_tokenizer_bytes(clg_tokenizer **out)
{
	int16_t id_of[256];
	if (!out)
		return clg_fail(CLG_ERR_INVALID, "tokenizer bytes: NULL output");
	for (int b = 0; b < 256; b++)
		id_of[b] = (int16_t)b;
	return tok_make_bytes_like(CLG_TOK_BYTES, id_of, out);
}

clg_status clg_tokenizer_chars(const char *text, size_t len, clg_tokenizer **out)
{
	int16_t id_of[256];
	int seen[256] = {0}, v = 0;

	if (!out)
		return clg_fail(CLG_ERR_INVALID, "tokenizer chars: NULL output");
	*out = NULL;
	if (!text || len == 0)
		return clg_fail(CLG_ERR_INVALID, "tokenizer chars: no text to take the characters from");
	for (size_t i = 0; i < len; i++)
		seen[(unsigned char)text[i]] = 1;
	for (int b = 0; b < 256; b++)
		id_of[b] = seen[b] ? (int16_t)v++ : -1;
	return tok_make_bytes_like(CLG_TOK_CHARS, id_of, out);
}

/* Rounds up to a power of two, at least 2 n + 2 (load <= 1/2). */
static size_t table_cap(size_t n)
{
	size_t c = 16;
	while (c < 2 * n + 2)
		c <<= 1;
	return c;
}

static uint64_t pair_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

int32_t tok_merge_rank(const clg_tokenizer *t, int32_t l, int32_t r)
{
	uint64_t key = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
	size_t mask = t->ht_cap - 1;
	for (size_t h = pair_hash(key) & mask;; h = (h + 1) & mask) {
		if (t->ht_key[h] == key)
			return t->ht_rank[h];
		if (t->ht_key[h] == UINT64_MAX)
			return -1;
	}
}

clg_status tok_make_bpe(int n_merges, int32_t *ml, int32_t *mr, clg_tokenizer **out)
{
	clg_tokenizer *t = calloc(1, sizeof(*t));
	size_t total = 256;
	int v = 256 + n_merges;
	clg_status st = CLG_OK;

	*out = NULL;
	if (!t) {
		free(ml);
		free(mr);
		return clg_fail(CLG_ERR_OOM, "tokenizer bpe: out of host memory");
	}
	t->kind = CLG_TOK_BPE;
	t->merge_l = ml;
	t->merge_r = mr;
	t->n_merges = n_merges;
	t->vocab = v;
	for (int b = 0; b < 256; b++)
		t->id_of[b] = (int16_t)b;
	if (n_merges < 1 || v > CLG_BPE_MAX_VOCAB) {
		st = clg_fail(CLG_ERR_INVALID, "tokenizer bpe: %d merges, outside [1, %d]", n_merges, CLG_BPE_MAX_VOCAB - 256);
		goto fail;
	}
	/* a merge joins two earlier tokens; its bytes are theirs, one after the other */
	for (int r = 0; r < n_merges; r++) {
		if (ml[r] < 0 || ml[r] >= 256 + r || mr[r] < 0 || mr[r] >= 256 + r) {
			st = clg_fail(CLG_ERR_FORMAT, "tokenizer bpe: merge %d joins (%" PRId32 ", %" PRId32 "), not two of the %d "
				      "earlier tokens", r, ml[r], mr[r], 256 + r);
			goto fail;
		}
	}
	t->tok_off = malloc(((size_t)v + 1) * sizeof(uint32_t));
	if (!t->tok_off)
		goto oom;
	for (int b = 0; b <= 256; b++)
		t->tok_off[b] = (uint32_t)b;
	for (int r = 0; r < n_merges; r++) {
		size_t a = t->tok_off[ml[r] + 1] - t->tok_off[ml[r]], b = t->tok_off[mr[r] + 1] - t->tok_off[mr[r]];
		total += a + b;
		if (total > UINT32_MAX) {
			st = clg_fail(CLG_ERR_FORMAT, "tokenizer bpe: the tokens' bytes exceed 4 GiB at merge %d", r);
			goto fail;
		}
		t->tok_off[256 + r + 1] = (uint32_t)total;
	}
	t->tok_bytes = malloc(total);
	t->ht_cap = table_cap((size_t)n_merges);
	t->ht_key = malloc(t->ht_cap * sizeof(uint64_t));
	t->ht_rank = malloc(t->ht_cap * sizeof(int32_t));
	if (!t->tok_bytes || !t->ht_key || !t->ht_rank)
		goto oom;
	for (int b = 0; b < 256; b++)
		t->tok_bytes[b] = (unsigned char)b;
	for (int r = 0; r < n_merges; r++) {
		unsigned char *d = t->tok_bytes + t->tok_off[256 + r];
		size_t a = t->tok_off[ml[r] + 1] - t->tok_off[ml[r]];
		memcpy(d, t->tok_bytes + t->tok_off[ml[r]], a);
		memcpy(d + a, t->tok_bytes + t->tok_off[mr[r]], t->tok_off[mr[r] + 1] - t->tok_off[mr[r]]);
	}
	memset(t->ht_key, 0xff, t->ht_cap * sizeof(uint64_t));
	for (int r = 0; r < n_merges; r++) {
		uint64_t key = (uint64_t)(uint32_t)ml[r] << 32 | (uint32_t)mr[r];
		size_t h = pair_hash(key) & (t->ht_cap - 1);
		while (t->ht_key[h] != UINT64_MAX && t->ht_key[h] != key)
			h = (h + 1) & (t->ht_cap - 1);
		if (t->ht_key[h] == key) {
			st = clg_fail(CLG_ERR_FORMAT, "tokenizer bpe: merge %d repeats merge %d (%" PRId32 ", %" PRId32 ")", r,
				      t->ht_rank[h], ml[r], mr[r]);
			goto fail;
		}
		t->ht_key[h] = key;
		t->ht_rank[h] = r;
	}
	*out = t;
	return CLG_OK;
oom:
	st = clg_fail(CLG_ERR_OOM, "tokenizer bpe: out of host memory for %d tokens", v);
fail:
	clg_tokenizer_free(t);
	return st;
}

clg_status clg_tokenizer_clone(const clg_tokenizer *t, clg_tokenizer **out)
{
	char *s = NULL;
	clg_status st;
	if (!t || !out)
		return clg_fail(CLG_ERR_INVALID, "tokenizer clone: NULL argument");
	st = clg_tokenizer_to_string(t, &s);
	if (!st)
		st = clg_tokenizer_from_string(s, out);
	free(s);
	return st;
}

clg_tokenizer_kind clg_tokenizer_kind_of(const clg_tokenizer *t) { return t->kind; }
int clg_tokenizer_vocab_size(const clg_tokenizer *t) { return t ? t->vocab : 0; }

clg_status clg_tokenizer_token(const clg_tokenizer *t, int32_t id, const unsigned char **bytes, size_t *len)
{
	if (!t || !bytes || !len)
		return clg_fail(CLG_ERR_INVALID, "tokenizer token: NULL argument");
	if (id < 0 || id >= t->vocab)
		return clg_fail(CLG_ERR_INVALID, "tokenizer token: id %" PRId32 " outside [0, %d)", id, t->vocab);
	*bytes = t->tok_bytes + t->tok_off[id];
	*len = t->tok_off[id + 1] - t->tok_off[id];
	return CLG_OK;
}

int clg_tokenizer_covers(const clg_tokenizer *t, const char *s, size_t len, size_t *pos)
{
	for (size_t i = 0; t && i < len; i++) {
		if (t->id_of[(unsigned char)s[i]] < 0) {
			if (pos)
				*pos = i;
			return 0;
		}
	}
	return t != NULL;
}

int clg_tokenizer_equal(const clg_tokenizer *a, const clg_tokenizer *b)
{
	if (!a || !b || a->kind != b->kind || a->vocab != b->vocab)
		return 0;
	if (a->kind == CLG_TOK_CHARS)
		return !memcmp(a->id_of, b->id_of, sizeof(a->id_of));
	if (a->kind == CLG_TOK_BPE)
		return a->n_merges == b->n_merges && !memcmp(a->merge_l, b->merge_l, (size_t)a->n_merges * sizeof(int32_t)) &&
		       !memcmp(a->merge_r, b->merge_r, (size_t)a->n_merges * sizeof(int32_t));
	return 1;
}

void clg_tokenizer_describe(const clg_tokenizer *t, char *buf, size_t len)
{
	if (!t)
		snprintf(buf, len, "no tokenizer");
	else
		snprintf(buf, len, "%s of %d tokens", clg_tokenizer_kind_name(t->kind), t->vocab);
}

clg_status clg_tokenizer_encode(const clg_tokenizer *t, const char *s, size_t len, int32_t *ids, size_t *n)
{
	if (!t || !n || (len && (!s || !ids)))
		return clg_fail(CLG_ERR_INVALID, "tokenizer encode: NULL argument");
	*n = 0;
	if (t->kind == CLG_TOK_BPE)
		return tok_bpe_encode(t, s, len, ids, n);
	for (size_t i = 0; i < len; i++) {
		int id = t->id_of[(unsigned char)s[i]];
		if (id < 0)
			return clg_fail(CLG_ERR_INVALID, "tokenizer encode: byte 0x%02x at position %zu is not in the vocabulary "
				      "(chars of %d tokens)", (unsigned char)s[i], i, t->vocab);
		ids[i] = id;
	}
	*n = len;
	return CLG_OK;
}

clg_status clg_tokenizer_decode(const clg_tokenizer *t, const int32_t *ids, size_t n, char **out, size_t *len)
{
	size_t total = 0;
	char *s;

	if (!t || !out || (n && !ids))
		return clg_fail(CLG_ERR_INVALID, "tokenizer decode: NULL argument");
	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		if (ids[i] < 0 || ids[i] >= t->vocab)
			return clg_fail(CLG_ERR_INVALID, "tokenizer decode: id %" PRId32 " at position %zu outside [0, %d)", ids[i],
					i, t->vocab);
		total += t->tok_off[ids[i] + 1] - t->tok_off[ids[i]];
	}
	if (!(s = malloc(total + 1)))
		return clg_fail(CLG_ERR_OOM, "tokenizer decode: out of host memory for %zu bytes", total + 1);
	total = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = t->tok_off[ids[i] + 1] - t->tok_off[ids[i]];
		memcpy(s + total, t->tok_bytes + t->tok_off[ids[i]], k);
		total += k;
	}
	s[total] = 0;
	*out = s;
	if (len)
		*len = total;
	return CLG_OK;
}

clg_status clg_tokenizer_to_string(const clg_tokenizer *t, char **out)
{
	size_t cap, n;
	char *s;

	if (!t || !out)
		return clg_fail(CLG_ERR_INVALID, "tokenizer to string: NULL argument");
	cap = sizeof(TOK_MAGIC) + 32 + 2 * 256 + (size_t)t->n_merges * 24;
	if (!(s = malloc(cap)))
		return clg_fail(CLG_ERR_OOM, "tokenizer to string: out of host memory for %zu bytes", cap);
	n = (size_t)snprintf(s, cap, "%s %s", TOK_MAGIC, clg_tokenizer_kind_name(t->kind));
	if (t->kind == CLG_TOK_CHARS) {
		s[n++] = ' ';
		for (int i = 0; i < t->vocab; i++)
			n += (size_t)snprintf(s + n, cap - n, "%02x", t->tok_bytes[i]);
	} else if (t->kind == CLG_TOK_BPE) {
		n += (size_t)snprintf(s + n, cap - n, " %d", t->n_merges);
		for (int r = 0; r < t->n_merges; r++)
			n += (size_t)snprintf(s + n, cap - n, " %" PRId32 " %" PRId32, t->merge_l[r], t->merge_r[r]);
	}
	*out = s;
	return CLG_OK;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A decimal integer in [0, max] at *p, followed by the end or one space and another number; advances
 * *p past it. */
static int read_int(const char **p, long max, long *v)
{
	const char *s = *p;
	long x = 0;
	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9')) /* digits, no leading zero */
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		x = x * 10 + (*s - '0');
		if (x > max)
			return -1;
	}
	if (*s && (*s != ' ' || s[1] < '0' || s[1] > '9')) /* one space, then the next number */
		return -1;
	*p = *s ? s + 1 : s;
	*v = x;
	return 0;
}

clg_status clg_tokenizer_from_string(const char *s, clg_tokenizer **out)
{
	const char *p;
	int16_t id_of[256];

	if (!s || !out)
		return clg_fail(CLG_ERR_INVALID, "tokenizer from string: NULL argument");
	*out = NULL;
	if (strncmp(s, TOK_MAGIC " ", sizeof(TOK_MAGIC)))
		return clg_fail(CLG_ERR_FORMAT, "tokenizer: '%.40s' is not a clgrad tokenizer (it starts with '%s')", s,
				TOK_MAGIC);
	p = s + sizeof(TOK_MAGIC);
	if (!strcmp(p, "bytes"))
		return clg_tokenizer_bytes(out);
	if (!strncmp(p, "chars ", 6)) {
		int prev = -1, v = 0;
		for (int b = 0; b < 256; b++)
			id_of[b] = -1;
		for (p += 6; *p; p += 2) {
			int hi = hexval(p[0]), lo = hi < 0 ? -1 : hexval(p[1]), b = hi * 16 + lo;
			if (hi < 0 || lo < 0 || b <= prev)
				return clg_fail(CLG_ERR_FORMAT, "tokenizer chars: '%.8s' at character %zu: not the next byte of an "
						"increasing set in hex", p, (size_t)(p - s));
			id_of[b] = (int16_t)v++;
			prev = b;
		}
		if (v == 0)
			return clg_fail(CLG_ERR_FORMAT, "tokenizer chars: an empty set of bytes");
		return tok_make_bytes_like(CLG_TOK_CHARS, id_of, out);
	}
	if (!strncmp(p, "bpe ", 4)) {
		long m, l, r;
		int32_t *ml, *mr;
		p += 4;
		if (read_int(&p, CLG_BPE_MAX_VOCAB - 256, &m) || m < 1)
			return clg_fail(CLG_ERR_FORMAT, "tokenizer bpe: the count of merges is not in [1, %d]",
					CLG_BPE_MAX_VOCAB - 256);
		ml = malloc((size_t)m * sizeof(int32_t));
		mr = malloc((size_t)m * sizeof(int32_t));
		if (!ml || !mr) {
			free(ml);
			free(mr);
			return clg_fail(CLG_ERR_OOM, "tokenizer bpe: out of host memory for %ld merges", m);
		}
		for (long i = 0; i < m; i++) {
			if (read_int(&p, CLG_BPE_MAX_VOCAB, &l) || read_int(&p, CLG_BPE_MAX_VOCAB, &r)) {
				free(ml);
				free(mr);
				return clg_fail(CLG_ERR_FORMAT, "tokenizer bpe: merge %ld of %ld is not two token ids", i, m);
			}
			ml[i] = (int32_t)l;
			mr[i] = (int32_t)r;
		}
		if (*p) {
			free(ml);
			free(mr);
			return clg_fail(CLG_ERR_FORMAT, "tokenizer bpe: text after the %ld merges", m);
		}
		return tok_make_bpe((int)m, ml, mr, out);
	}
	return clg_fail(CLG_ERR_FORMAT, "tokenizer: unknown kind in '%.40s' (expected bytes, chars or bpe)", s);
}

clg_status clg_tokenizer_save(const clg_tokenizer *t, const char *path)
{
	char *s = NULL;
	clg_status st;
	if (!path)
		return clg_fail(CLG_ERR_INVALID, "tokenizer save: NULL path");
	st = clg_tokenizer_to_string(t, &s);
	if (!st) {
		size_t n = strlen(s);
		s[n] = '\n'; /* a text file ends its line; the NUL is not written */
		st = clg_write_file_atomic(path, s, n + 1);
	}
	free(s);
	return st;
}

clg_status clg_tokenizer_load(const char *path, clg_tokenizer **out)
{
	char *s = NULL;
	size_t n = 0;
	clg_status st;
	if (!path || !out)
		return clg_fail(CLG_ERR_INVALID, "tokenizer load: NULL argument");
	*out = NULL;
	st = clg_read_text_file(path, TOK_FILE_MAX, &s, &n);
	if (st)
		return st;
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
	st = clg_tokenizer_from_string(s, out);
	if (st) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", clg_last_error());
		st = clg_fail(st, "%s: %s", path, msg);
	}
	free(s);
	return st;
}

clg_status clg_tokenizer_from_spec(const char *spec, const char *text, size_t len, clg_tokenizer **out)
{
	if (!spec || !out)
		return clg_fail(CLG_ERR_INVALID, "tokenizer: NULL argument");
	*out = NULL;
	if (!strcmp(spec, "bytes"))
		return clg_tokenizer_bytes(out);
	if (!strcmp(spec, "chars"))
		return clg_tokenizer_chars(text, len, out);
	if (!strncmp(spec, "bpe:", 4)) {
		char *end;
		long v = strtol(spec + 4, &end, 10);
		if (end == spec + 4 || *end || v < 257 || v > CLG_BPE_MAX_VOCAB)
			return clg_fail(CLG_ERR_INVALID, "tokenizer '%s': bpe:N takes a vocabulary size N in [257, %d]", spec,
					CLG_BPE_MAX_VOCAB);
		return clg_tokenizer_bpe_learn(text, len, (int)v, out);
	}
	return clg_tokenizer_load(spec, out);
}
