/* The JSON reader (json_read.h) over cJSON. Members are a linked list in cJSON, so jv_at and
 * jv_len walk it: fine for reports of hundreds of entries. */
#include "json_read.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

jv *jv_parse(const char *text, char *err, size_t errlen)
{
	const char *end = NULL;
	/* require_null_terminated: anything but blanks after the document is an error */
	jv *v = cJSON_ParseWithOpts(text, &end, 1);
	if (!v && err)
		snprintf(err, errlen, "offset %ld: malformed JSON", end && end >= text ? (long)(end - text) : 0L);
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
	if (strlen(text) != (size_t)n) { /* cJSON would stop at the NUL and call the rest garbage */
		snprintf(err, errlen, "offset %zu: NUL byte in the document", strlen(text));
		goto free_text;
	}
	v = jv_parse(text, err, errlen);
free_text:
	free(text);
close_f:
	fclose(f);
	return v;
}

void jv_free(jv *v) { cJSON_Delete(v); }

const jv *jv_get(const jv *obj, const char *key)
{
	return cJSON_IsObject(obj) && key ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

const jv *jv_at(const jv *arr, int i)
{
	if (!(cJSON_IsArray(arr) || cJSON_IsObject(arr)) || i < 0)
		return NULL;
	return cJSON_GetArrayItem(arr, i);
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
		if (cJSON_IsArray(v)) {
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

jv_type jv_kind(const jv *v)
{
	if (cJSON_IsBool(v))
		return JV_BOOL;
	if (cJSON_IsNumber(v))
		return JV_NUM;
	if (cJSON_IsString(v))
		return JV_STR;
	if (cJSON_IsArray(v))
		return JV_ARR;
	if (cJSON_IsObject(v))
		return JV_OBJ;
	return JV_NULL;
}

int jv_len(const jv *v) { return cJSON_IsArray(v) || cJSON_IsObject(v) ? cJSON_GetArraySize(v) : 0; }
double jv_num(const jv *v) { return cJSON_IsNumber(v) ? v->valuedouble : NAN; }
const char *jv_str(const jv *v, const char *fallback) { return cJSON_IsString(v) ? v->valuestring : fallback; }
int jv_bool(const jv *v) { return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1; }
int jv_is_null(const jv *v) { return jv_kind(v) == JV_NULL; }

void jv_write(json_writer *w, const jv *v)
{
	const jv *m;
	switch (jv_kind(v)) {
	case JV_NULL: json_null(w); break;
	case JV_BOOL: json_bool(w, cJSON_IsTrue(v)); break;
	case JV_STR: json_str(w, v->valuestring); break;
	case JV_NUM:
		if (fabs(v->valuedouble) < 9e15 && v->valuedouble == (double)(int64_t)v->valuedouble)
			json_int(w, (int64_t)v->valuedouble);
		else
			json_num(w, v->valuedouble);
		break;
	case JV_ARR:
		json_begin_array(w);
		cJSON_ArrayForEach(m, v)
			jv_write(w, m);
		json_end_array(w);
		break;
	case JV_OBJ:
		json_begin_object(w);
		cJSON_ArrayForEach(m, v) {
			json_key(w, m->string);
			jv_write(w, m);
		}
		json_end_object(w);
		break;
	}
}
