/* The streaming JSON writer (json_write.h). */
#include "json_write.h"

#include <math.h>

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void json_init(json_writer *w, FILE *f, int pretty)
{
	w->f = f;
	w->depth = 0;
	w->count[0] = 0;
	w->pretty = pretty;
	w->after_key = 0;
}

/* the comma and indentation before a value (or key) at the current level */
static void separate(json_writer *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (w->count[w->depth]++ > 0)
		fputc(',', w->f);
	if (w->pretty && w->depth > 0)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
}

static void open_level(json_writer *w, char c)
{
	separate(w);
	fputc(c, w->f);
	if (w->depth + 1 < JSON_MAX_DEPTH)
		w->depth++;
	w->count[w->depth] = 0;
}

static void close_level(json_writer *w, char c)
{
	int had = w->count[w->depth] > 0;
	if (w->depth > 0)
		w->depth--;
	if (w->pretty && had)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	fputc(c, w->f);
	if (w->depth == 0 && w->pretty)
		fputc('\n', w->f);
}

void json_begin_object(json_writer *w) { open_level(w, '{'); }
void json_end_object(json_writer *w) { close_level(w, '}'); }
void json_begin_array(json_writer *w) { open_level(w, '['); }
void json_end_array(json_writer *w) { close_level(w, ']'); }

void json_key(json_writer *w, const char *key)
{
	separate(w);
	json_string(w->f, key);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_key = 1;
}

void json_str(json_writer *w, const char *s)
{
	separate(w);
	if (s)
		json_string(w->f, s);
	else
		fputs("null", w->f);
}

void json_num(json_writer *w, double x)
{
	separate(w);
	if (isfinite(x))
		fprintf(w->f, "%.9g", x);
	else
		fputs("null", w->f);
}

void json_int(json_writer *w, int64_t x)
{
	separate(w);
	fprintf(w->f, "%lld", (long long)x);
}

void json_bool(json_writer *w, int b)
{
	separate(w);
	fputs(b ? "true" : "false", w->f);
}

void json_null(json_writer *w)
{
	separate(w);
	fputs("null", w->f);
}

void json_key_str(json_writer *w, const char *key, const char *s) { json_key(w, key); json_str(w, s); }
void json_key_num(json_writer *w, const char *key, double x) { json_key(w, key); json_num(w, x); }
void json_key_int(json_writer *w, const char *key, int64_t x) { json_key(w, key); json_int(w, x); }
void json_key_bool(json_writer *w, const char *key, int b) { json_key(w, key); json_bool(w, b); }
