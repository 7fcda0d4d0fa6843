/* The tokenizer's representation, shared by tokenizer.c (kinds, storage, decoding) and
 * tokenizer_bpe.c (learning and encoding BPE). Not part of the API. */
#ifndef CLGRAD_TOKENIZER_INTERNAL_H
#define CLGRAD_TOKENIZER_INTERNAL_H

#include "clgrad_tokenizer.h"

struct clg_tokenizer {
	clg_tokenizer_kind kind;
	int vocab;                 /* tokens */
	int16_t id_of[256];        /* byte -> id (chars: -1 where not in the set; else the byte) */
	/* every token's bytes: tok_bytes[tok_off[i], tok_off[i + 1]) */
	uint32_t *tok_off;         /* (vocab + 1) */
	unsigned char *tok_bytes;
	/* bpe: merge r makes token 256 + r from (merge_l[r], merge_r[r]) */
	int n_merges;
	int32_t *merge_l, *merge_r; /* (n_merges) */
	/* bpe: (left << 32 | right) -> merge rank, open addressing, ht_cap a power of two */
	uint64_t *ht_key;          /* UINT64_MAX: empty */
	int32_t *ht_rank;
	size_t ht_cap;
};

/* A new tokenizer of kind with its token bytes (and, for bpe, the merge table) built from id_of /
 * the merges: tokenizer.c. Takes ownership of ml and mr (bpe) also on failure. */
clg_status tok_make_bytes_like(clg_tokenizer_kind kind, const int16_t *id_of, clg_tokenizer **out);
clg_status tok_make_bpe(int n_merges, int32_t *ml, int32_t *mr, clg_tokenizer **out);
/* The rank of merge (l, r) in a bpe tokenizer, or -1. */
int32_t tok_merge_rank(const clg_tokenizer *t, int32_t l, int32_t r);
/* The end of the pre-split word that starts at i < n (tokenizer_bpe.c; the rule in the header). */
size_t tok_word_end(const unsigned char *s, size_t n, size_t i);
/* BPE encoding (tokenizer_bpe.c). */
clg_status tok_bpe_encode(const clg_tokenizer *t, const char *s, size_t len, int32_t *ids, size_t *n);

#endif
