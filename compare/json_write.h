/* A small streaming JSON writer: nesting, commas and escaping handled here, so a section can
 * write `json_key_num(w, "gflops", x)` without thinking about separators. Non-finite numbers
 * are written as null (JSON has no NaN). */
#ifndef CLGRAD_JSON_WRITE_H
#define CLGRAD_JSON_WRITE_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

typedef struct {
	FILE *f;
	int depth;
	int count[JSON_MAX_DEPTH]; /* members written so far at each level */
	int pretty;                /* newline + indent before each member */
	int after_key;             /* a key was written; the value follows without a comma */
} json_writer;

/* Prints s as a JSON string literal (escapes quotes, backslashes and control characters). */
void json_string(FILE *f, const char *s);

void json_init(json_writer *w, FILE *f, int pretty);
void json_begin_object(json_writer *w);
void json_end_object(json_writer *w);
void json_begin_array(json_writer *w);
void json_end_array(json_writer *w);
void json_key(json_writer *w, const char *key);
void json_str(json_writer *w, const char *s);   /* NULL -> null */
void json_num(json_writer *w, double x);        /* non-finite -> null */
void json_int(json_writer *w, int64_t x);
void json_bool(json_writer *w, int b);
void json_null(json_writer *w);

/* key + value in one call */
void json_key_str(json_writer *w, const char *key, const char *s);
void json_key_num(json_writer *w, const char *key, double x);
void json_key_int(json_writer *w, const char *key, int64_t x);
void json_key_bool(json_writer *w, const char *key, int b);

#endif
