/* clgrad tokenizers: text <-> token ids for the language models, host side only.
 *
 * Three kinds:
 *   bytes  256 tokens, id = byte value. Covers every input.
 *   chars  the sorted set of bytes seen in a text (the character transformer's vocabulary since
 *          the beginning, and still its default): id i is the i-th smallest byte seen. Encoding a
 *          byte outside the set fails (CLG_ERR_INVALID, naming the byte and its position).
 *   bpe    byte-level BPE learned from a text (tokenizer_bpe.c): ids 0..255 are the bytes, id
 *          256 + i is merge i, the concatenation of two earlier tokens. Learning pre-splits the
 *          text into words as GPT-2 does (contractions 's 't 're 've 'm 'll 'd; an optional space
 *          and a run of letters; of digits; of other symbols; runs of whitespace, whose last
 *          character joins the next word when it is a space), bytes >= 0x80 counting as letters
 *          (UTF-8 stays whole), words cut every CLG_BPE_MAX_WORD bytes; merges never cross a word.
 *          Each merge is the most frequent adjacent pair of tokens in the words, ties broken
 *          by the smaller (left id, right id). Encoding splits the same way and applies the merges
 *          in the order learned (the lowest-ranked pair of a word first), as GPT-2 does. Covers
 *          every input.
 * For every kind and every input the tokenizer covers, decode(encode(x)) == x byte for byte, and
 * encoding yields at most one token per byte.
 *
 * Serialised form (checkpoint metadata, `clgrad tokenize --out`): one ASCII line
 *   "clgrad-tokenizer-1 bytes"
 *   "clgrad-tokenizer-1 chars HEX"          HEX: the byte set in increasing order, two hex digits each
 *   "clgrad-tokenizer-1 bpe M L R L R ..."  M merges, each the ids of its left and right token
 * which clg_tokenizer_from_string reads back (strictly: a malformed string is CLG_ERR_FORMAT). */
#ifndef CLGRAD_TOKENIZER_H
#define CLGRAD_TOKENIZER_H

#include "clgrad.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CLG_TOK_BYTES, CLG_TOK_CHARS, CLG_TOK_BPE } clg_tokenizer_kind;

typedef struct clg_tokenizer clg_tokenizer;

#define CLG_BPE_MAX_VOCAB 65536 /* a BPE vocabulary: 257 to this many tokens */
#define CLG_BPE_MAX_WORD 256    /* bytes of a pre-split word at most (longer runs are cut) */

/* ---- making one ------------------------------------------------------------------------------ */
clg_status clg_tokenizer_bytes(clg_tokenizer **out);
/* chars: the sorted set of the len bytes of text (len >= 1). */
clg_status clg_tokenizer_chars(const char *text, size_t len, clg_tokenizer **out);
/* bpe: learned from len bytes of text until vocab_size tokens (256 bytes + merges) or no pair occurs
 * twice (the vocabulary is then smaller: clg_tokenizer_vocab_size says). vocab_size in [257,
 * CLG_BPE_MAX_VOCAB]. */
clg_status clg_tokenizer_bpe_learn(const char *text, size_t len, int vocab_size, clg_tokenizer **out);
/* By name, as --tokenizer takes it: "bytes", "chars" (of text), "bpe:N" (learned from text), or
 * the path of a file clg_tokenizer_save wrote. text may be NULL for "bytes" and a file. */
clg_status clg_tokenizer_from_spec(const char *spec, const char *text, size_t len, clg_tokenizer **out);
clg_status clg_tokenizer_clone(const clg_tokenizer *t, clg_tokenizer **out);
void clg_tokenizer_free(clg_tokenizer *t);

/* ---- asking ---------------------------------------------------------------------------------- */
clg_tokenizer_kind clg_tokenizer_kind_of(const clg_tokenizer *t);
const char *clg_tokenizer_kind_name(clg_tokenizer_kind k); /* "bytes", "chars", "bpe" */
int clg_tokenizer_vocab_size(const clg_tokenizer *t);
/* The bytes of token id (borrowed from t; *len >= 1), for streaming output; CLG_ERR_INVALID for an
 * id outside [0, vocab size). A BPE token may end inside a UTF-8 character: write bytes, not
 * characters. */
clg_status clg_tokenizer_token(const clg_tokenizer *t, int32_t id, const unsigned char **bytes, size_t *len);
/* 1 when every byte of s can be encoded; else 0 and *pos (may be NULL) the first that cannot. */
int clg_tokenizer_covers(const clg_tokenizer *t, const char *s, size_t len, size_t *pos);
/* 1 when a and b encode every input the same way (same kind and vocabulary or merges). */
int clg_tokenizer_equal(const clg_tokenizer *a, const clg_tokenizer *b);
/* A short description for messages, e.g. "bpe of 4096 tokens" or "chars of 86 tokens". */
void clg_tokenizer_describe(const clg_tokenizer *t, char *buf, size_t len);

/* ---- encoding -------------------------------------------------------------------------------- */
/* Encodes len bytes of s into ids (room for len ids: never more tokens than bytes); *n the count.
 * CLG_ERR_INVALID for a byte the tokenizer does not cover (chars), naming it and its position. */
clg_status clg_tokenizer_encode(const clg_tokenizer *t, const char *s, size_t len, int32_t *ids, size_t *n);
/* Decodes n ids into a new NUL-terminated buffer (*out, free()) of *len bytes (len may be NULL).
 * CLG_ERR_INVALID for an id outside [0, vocab size), naming it and its position. */
clg_status clg_tokenizer_decode(const clg_tokenizer *t, const int32_t *ids, size_t n, char **out, size_t *len);

/* ---- storing --------------------------------------------------------------------------------- */
/* The serialised form (above) in a new NUL-terminated string (*out, free()). */
clg_status clg_tokenizer_to_string(const clg_tokenizer *t, char **out);
clg_status clg_tokenizer_from_string(const char *s, clg_tokenizer **out);
/* The serialised form as a file, written atomically (temp + rename); and read back. */
clg_status clg_tokenizer_save(const clg_tokenizer *t, const char *path);
clg_status clg_tokenizer_load(const char *path, clg_tokenizer **out);

#ifdef __cplusplus
}
#endif
#endif
