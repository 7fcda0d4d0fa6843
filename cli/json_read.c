/* The JSON reader (json_read.h): recursive descent over a NUL-terminated text. */
#include "json_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JV_MAX_DEPTH 64

typedef struct {
	const char *s, *start;
	char *err;
	size_t errlen;
	int failed;
} parser;

static void fail(parser *p, const char *why)
{
	if (!p->failed && p->err)
		snprintf(p->err, p->errlen, "offset %ld: %s", (long)(p->s - p->start), why);
	p->failed = 1;
}

static void skip_ws(parser *p)
{
	while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')
		p->s++;
}

static jv *new_value(jv_type t)
{
	jv *v = calloc(1, sizeof(*v));
	if (v)
		v->type = t;
	return v;
}

/* appends (key, item) to an array or object; key NULL for arrays */
static int append(jv *v, char *key, jv *item)
{
	if (v->n == v->cap) {
		int cap = v->cap ? 2 * v->cap : 8;
		jv **items = realloc(v->items, cap * sizeof(*items));
		if (!items)
			return -1;
		v->items = items;
		if (v->type == JV_OBJ) {
			char **keys = realloc(v->keys, cap * sizeof(*keys));
			if (!keys)
				return -1;
			v->keys = keys;
		}
		v->cap = cap;
	}
	if (v->type == JV_OBJ)
		v->keys[v->n] = key;
	v->items[v->n++] = item;
	return 0;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned x = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= c - '0';
		else if (c >= 'a' && c <= 'f')
			x |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			x |= c - 'A' + 10;
		else
			return -1;
	}
	*out = x;
	return 0;
}

static int put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xc0 | (cp >> 6);
		o[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = 0xe0 | (cp >> 12);
		o[1] = 0x80 | ((cp >> 6) & 0x3f);
		o[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	o[0] = 0xf0 | (cp >> 18);
	o[1] = 0x80 | ((cp >> 12) & 0x3f);
	o[2] = 0x80 | ((cp >> 6) & 0x3f);
	o[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* a string literal at p->s (on the opening quote); the decoded text is never longer */
static char *parse_string(parser *p)
{
	const char *s = ++p->s;
	size_t cap = 0;
	while (s[cap] && s[cap] != '"') /* upper bound of the decoded length */
		cap += s[cap] == '\\' && s[cap + 1] ? 2 : 1;
	char *out = malloc(cap + 1), *o = out;
	if (!out) {
		fail(p, "out of memory");
		return NULL;
	}
	while (*s != '"') {
		unsigned char c = *s;
		if (!c || c < 0x20) {
			fail(p, c ? "control character in string" : "unterminated string");
			goto fail_out;
		}
		if (c != '\\') {
			*o++ = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case '"': case '\\': case '/': *o++ = *s; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (hex4(s + 1, &cp))
				goto bad_escape;
			s += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && s[1] == '\\' && s[2] == 'u' && !hex4(s + 3, &lo) &&
			    lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			}
			o += put_utf8(o, cp); /* never longer than the escape it replaces */
			break;
		}
		default:
			goto bad_escape;
		}
		s++;
	}
	*o = 0;
	p->s = s + 1;
	return out;
bad_escape:
	fail(p, "bad escape in string");
fail_out:
	free(out);
	return NULL;
}

static jv *parse_value(parser *p, int depth);

static jv *parse_container(parser *p, int depth, int is_obj)
{
	jv *v = new_value(is_obj ? JV_OBJ : JV_ARR);
	char close = is_obj ? '}' : ']';
	if (!v) {
		fail(p, "out of memory");
		return NULL;
	}
	p->s++;
	skip_ws(p);
	if (*p->s == close) {
		p->s++;
		return v;
	}
	for (;;) {
		char *key = NULL;
		skip_ws(p);
		if (is_obj) {
			if (*p->s != '"') {
				fail(p, "expected a key");
				goto fail_v;
			}
			if (!(key = parse_string(p)))
				goto fail_v;
			skip_ws(p);
			if (*p->s != ':') {
				free(key);
				fail(p, "expected ':'");
				goto fail_v;
			}
			p->s++;
		}
		jv *item = parse_value(p, depth + 1);
		if (!item || append(v, key, item)) {
			free(key);
			jv_free(item);
			fail(p, "bad value");
			goto fail_v;
		}
		skip_ws(p);
		if (*p->s == ',') {
			p->s++;
			continue;
		}
		if (*p->s == close) {
			p->s++;
			return v;
		}
		fail(p, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
		goto fail_v;
	}
fail_v:
	jv_free(v);
	return NULL;
}

static jv *parse_value(parser *p, int depth)
{
	jv *v;
	skip_ws(p);
	if (depth > JV_MAX_DEPTH) {
		fail(p, "nested too deeply");
		return NULL;
	}
	switch (*p->s) {
	case '{':
		return parse_container(p, depth, 1);
	case '[':
		return parse_container(p, depth, 0);
	case '"': {
		char *s = parse_string(p);
		if (!s)
			return NULL;
		if (!(v = new_value(JV_STR))) {
			free(s);
			return NULL;
		}
		v->str = s;
		return v;
	}
	}
	if (!strncmp(p->s, "null", 4)) {
		p->s += 4;
		return new_value(JV_NULL);
	}
	if (!strncmp(p->s, "true", 4) || !strncmp(p->s, "false", 5)) {
		int t = *p->s == 't';
		p->s += t ? 4 : 5;
		if ((v = new_value(JV_BOOL)))
			v->num = t;
		return v;
	}
	if (*p->s == '-' || (*p->s >= '0' && *p->s <= '9')) {
		char *end;
		double x = strtod(p->s, &end);
		if (end == p->s) {
			fail(p, "bad number");
			return NULL;
		}
		p->s = end;
		if ((v = new_value(JV_NUM)))
			v->num = x;
		return v;
	}
	fail(p, "unexpected character");
	return NULL;
}

jv *jv_parse(const char *text, char *err, size_t errlen)
{
	parser p = {text, text, err, errlen, 0};
	jv *v = parse_value(&p, 0);
	if (!v)
		return NULL;
	skip_ws(&p);
	if (*p.s) {
		fail(&p, "trailing characters after the document");
		jv_free(v);
		return NULL;
	}
	return v;
}

jv *jv_parse_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	long n;
	jv *v = NULL;

	if (!f) {
		snprintf(err, errlen, "cannot open %s", path);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		snprintf(err, errlen, "cannot read %s", path);
		goto close_f;
	}
	if (!(text = malloc(n + 1)) || fread(text, 1, n, f) != (size_t)n) {
		snprintf(err, errlen, "cannot read %s", path);
		goto free_text;
	}
	text[n] = 0;
	v = jv_parse(text, err, errlen);
free_text:
	free(text);
close_f:
	fclose(f);
	return v;
}

void jv_free(jv *v)
{
	if (!v)
		return;
	for (int i = 0; i < v->n; i++) {
		if (v->keys)
			free(v->keys[i]);
		jv_free(v->items[i]);
	}
	free(v->keys);
	free(v->items);
	free(v->str);
	free(v);
}

const jv *jv_get(const jv *obj, const char *key)
{
	if (!obj || obj->type != JV_OBJ)
		return NULL;
	for (int i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

const jv *jv_at(const jv *arr, int i)
{
	if (!arr || (arr->type != JV_ARR && arr->type != JV_OBJ) || i < 0 || i >= arr->n)
		return NULL;
	return arr->items[i];
}

const jv *jv_path(const jv *v, const char *path)
{
	char part[128];
	while (v && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = 0;
		if (v->type == JV_ARR) {
			char *end;
			long i = strtol(part, &end, 10);
			v = *end ? NULL : jv_at(v, (int)i);
		} else {
			v = jv_get(v, part);
		}
		path += n + (path[n] == '.');
	}
	return v;
}

int jv_len(const jv *v) { return v && (v->type == JV_ARR || v->type == JV_OBJ) ? v->n : 0; }
double jv_num(const jv *v) { return v && v->type == JV_NUM ? v->num : NAN; }
const char *jv_str(const jv *v, const char *fallback) { return v && v->type == JV_STR ? v->str : fallback; }
int jv_bool(const jv *v) { return v && v->type == JV_BOOL ? (int)v->num : -1; }
int jv_is_null(const jv *v) { return !v || v->type == JV_NULL; }

void jv_write(json_writer *w, const jv *v)
{
	if (!v) {
		json_null(w);
		return;
	}
	switch (v->type) {
	case JV_NULL: json_null(w); break;
	case JV_BOOL: json_bool(w, (int)v->num); break;
	case JV_STR: json_str(w, v->str); break;
	case JV_NUM:
		if (fabs(v->num) < 9e15 && v->num == (double)(int64_t)v->num)
			json_int(w, (int64_t)v->num);
		else
			json_num(w, v->num);
		break;
	case JV_ARR:
		json_begin_array(w);
		for (int i = 0; i < v->n; i++)
			jv_write(w, v->items[i]);
		json_end_array(w);
		break;
	case JV_OBJ:
		json_begin_object(w);
		for (int i = 0; i < v->n; i++) {
			json_key(w, v->keys[i]);
			jv_write(w, v->items[i]);
		}
		json_end_object(w);
		break;
	}
}
