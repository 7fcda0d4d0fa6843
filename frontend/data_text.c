/* Text for a language model: read (a file or a folder, data_corpus.c), encoded with a tokenizer
 * (chars by default: the sorted set of bytes seen), split into a training and a validation part,
 * and cut by clg_text_windows into next-token windows for the loader. */
#include "data.h"
#include "fe_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clg_status clg_text_load_tok(const char *path, double val_fraction, const clg_tokenizer *tok, const char *spec,
			     clg_text *t)
{
	char *text = NULL;
	size_t n = 0, n_train, k1 = 0, k2 = 0;
	clg_status st = CLG_OK;

	if (!t)
		return clg_fail(CLG_ERR_INVALID, "text: NULL output");
	memset(t, 0, sizeof(*t));
	if (!path)
		return clg_fail(CLG_ERR_INVALID, "text: NULL path");
	if (!(val_fraction >= 0.0 && val_fraction < 1.0))
		return clg_fail(CLG_ERR_INVALID, "text %s: validation fraction %g outside [0, 1)", path, val_fraction);
	/* bounded: the file's size, CLG_TEXT_MAX_BYTES, the first NUL byte (/dev/zero grows no buffer) */
	st = clg_text_read(path, &text, &n);
	if (st)
		return st;
	if (n < 2) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: %zu bytes: too short for a language model", path, n);
		goto out;
	}
	n_train = n - (size_t)floor((double)n * val_fraction);
	if (tok)
		st = clg_tokenizer_clone(tok, &t->tok);
	else if (spec && !strncmp(spec, "bpe:", 4)) /* learned from the training part: validation stays unseen */
		st = clg_tokenizer_from_spec(spec, text, n_train, &t->tok);
	else
		st = clg_tokenizer_from_spec(spec ? spec : "chars", text, n, &t->tok);
	if (st)
		goto out;
	t->ids = malloc(n * sizeof(int32_t));
	if (!t->ids) {
		st = clg_fail(CLG_ERR_OOM, "%s: out of host memory for %zu ids", path, n);
		goto out;
	}
	st = clg_tokenizer_encode(t->tok, text, n_train, t->ids, &k1);
	if (!st)
		st = clg_tokenizer_encode(t->tok, text + n_train, n - n_train, t->ids + k1, &k2);
	if (st) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", clg_last_error());
		st = clg_fail(st, "%s: %s", path, msg);
		goto out;
	}
	t->vocab_size = clg_tokenizer_vocab_size(t->tok);
	for (int b = 0; b < 256; b++)
		t->id_of[b] = -1;
	if (clg_tokenizer_kind_of(t->tok) != CLG_TOK_BPE) {
		for (int id = 0; id < t->vocab_size; id++) {
			const unsigned char *c;
			size_t len;
			clg_tokenizer_token(t->tok, id, &c, &len);
			t->vocab[id] = c[0];
			t->id_of[c[0]] = (int16_t)id;
		}
	}
	t->n = (int64_t)(k1 + k2);
	t->n_train = (int64_t)k1;
	t->bytes = (int64_t)n;
	t->bytes_train = (int64_t)n_train;
	t->hash = clg_text_hash(text, n);
out:
	free(text);
	if (st)
		clg_text_free(t);
	return st;
}

clg_status clg_text_load(const char *path, double val_fraction, clg_text *t)
{
	return clg_text_load_tok(path, val_fraction, NULL, "chars", t);
}

void clg_text_free(clg_text *t)
{
	if (!t)
		return;
	free(t->ids);
	clg_tokenizer_free(t->tok);
	memset(t, 0, sizeof(*t));
}

clg_status clg_text_encode(const clg_text *t, const char *s, size_t len, int32_t *ids)
{
	size_t n;
	if (!t || !t->tok || (len && (!s || !ids)))
		return clg_fail(CLG_ERR_INVALID, "text encode: NULL argument");
	if (clg_tokenizer_kind_of(t->tok) == CLG_TOK_BPE)
		return clg_fail(CLG_ERR_UNSUPPORTED, "text encode: a BPE text: use clg_tokenizer_encode with its tokenizer");
	return clg_tokenizer_encode(t->tok, s, len, ids, &n);
}

clg_status clg_text_decode(const clg_text *t, const int32_t *ids, size_t n, char *s)
{
	if (!t || !t->tok || (n && (!s || !ids)))
		return clg_fail(CLG_ERR_INVALID, "text decode: NULL argument");
	if (clg_tokenizer_kind_of(t->tok) == CLG_TOK_BPE)
		return clg_fail(CLG_ERR_UNSUPPORTED, "text decode: a BPE text: use clg_tokenizer_decode with its tokenizer");
	for (size_t i = 0; i < n; i++) {
		if (ids[i] < 0 || ids[i] >= t->vocab_size)
			return clg_fail(CLG_ERR_INVALID, "text decode: id %" PRId32 " at position %zu outside [0, %d)", ids[i], i,
					t->vocab_size);
		s[i] = (char)t->vocab[ids[i]];
	}
	return CLG_OK;
}

clg_status clg_text_windows(const clg_text *t, int val, int64_t seq_len, int64_t stride, clg_dataset *ds)
{
	const int32_t *base;
	int64_t len, nwin;
	clg_status st;

	if (!ds)
		return clg_fail(CLG_ERR_INVALID, "text windows: NULL dataset");
	memset(ds, 0, sizeof(*ds));
	if (!t || !t->ids || seq_len <= 0 || stride <= 0)
		return clg_fail(CLG_ERR_INVALID, "text windows: no text, or sequence length %" PRId64 " / stride %" PRId64
				" not positive", seq_len, stride);
	base = val ? t->ids + t->n_train : t->ids;
	len = val ? t->n - t->n_train : t->n_train;
	if (len < seq_len + 1)
		return clg_fail(CLG_ERR_INVALID, "text windows: the %s part has %" PRId64 " tokens, fewer than sequence length %"
				PRId64 " + 1", val ? "validation" : "training", len, seq_len);
	nwin = (len - seq_len - 1) / stride + 1;
	st = clg_dataset_init(ds, nwin, 1, &seq_len, CLG_I32, seq_len);
	if (st)
		return st;
	ds->num_classes = t->vocab_size;
	for (int64_t i = 0; i < nwin; i++) {
		memcpy(ds->xi + i * seq_len, base + i * stride, (size_t)seq_len * sizeof(int32_t));
		memcpy(ds->y + i * seq_len, base + i * stride + 1, (size_t)seq_len * sizeof(int32_t));
	}
	return CLG_OK;
}
