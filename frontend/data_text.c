/* Plain text for a character-level language model: the vocabulary is the sorted set of bytes seen,
 * the text is encoded to int32 ids and split into a training and a validation part, and
 * clg_text_windows cuts next-token windows into a dataset for the loader. */
#include "clgrad_data.h"
#include "fe_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clg_status clg_text_load(const char *path, double val_fraction, clg_text *t)
{
	char *text = NULL;
	const unsigned char *buf;
	size_t n = 0;
	int seen[256] = {0};
	clg_status st = CLG_OK;

	if (!t)
		return clg_fail(CLG_ERR_INVALID, "text: NULL output");
	memset(t, 0, sizeof(*t));
	if (!path)
		return clg_fail(CLG_ERR_INVALID, "text: NULL path");
	if (!(val_fraction >= 0.0 && val_fraction < 1.0))
		return clg_fail(CLG_ERR_INVALID, "text %s: validation fraction %g outside [0, 1)", path, val_fraction);
	/* bounded: the file's size, CLG_TEXT_MAX_BYTES, the first NUL byte (/dev/zero grows no buffer) */
	st = clg_read_text_file(path, CLG_TEXT_MAX_BYTES, &text, &n);
	if (st)
		return st;
	buf = (const unsigned char *)text;
	if (n < 2) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: %zu bytes: too short for a language model", path, n);
		goto out;
	}
	t->ids = malloc(n * sizeof(int32_t));
	if (!t->ids) {
		st = clg_fail(CLG_ERR_OOM, "%s: out of host memory for %zu ids", path, n);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		seen[buf[i]] = 1;
	for (int b = 0; b < 256; b++) {
		t->id_of[b] = -1;
		if (seen[b]) {
			t->id_of[b] = (int16_t)t->vocab_size;
			t->vocab[t->vocab_size++] = (unsigned char)b;
		}
	}
	for (size_t i = 0; i < n; i++)
		t->ids[i] = t->id_of[buf[i]];
	t->n = (int64_t)n;
	t->n_train = t->n - (int64_t)floor((double)t->n * val_fraction);
out:
	free(text);
	if (st)
		clg_text_free(t);
	return st;
}

void clg_text_free(clg_text *t)
{
	if (!t)
		return;
	free(t->ids);
	memset(t, 0, sizeof(*t));
}

clg_status clg_text_encode(const clg_text *t, const char *s, size_t len, int32_t *ids)
{
	if (!t || (len && (!s || !ids)))
		return clg_fail(CLG_ERR_INVALID, "text encode: NULL argument");
	for (size_t i = 0; i < len; i++) {
		int id = t->id_of[(unsigned char)s[i]];
		if (id < 0)
			return clg_fail(CLG_ERR_INVALID, "text encode: byte 0x%02x at position %zu is not in the vocabulary",
					(unsigned char)s[i], i);
		ids[i] = id;
	}
	return CLG_OK;
}

clg_status clg_text_decode(const clg_text *t, const int32_t *ids, size_t n, char *s)
{
	if (!t || (n && (!s || !ids)))
		return clg_fail(CLG_ERR_INVALID, "text decode: NULL argument");
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
