/* JSON reading for the CLI: a whole document parsed by cJSON into a tree, then lookups by key,
 * index or dotted path. Used by `clgrad compare` (the workers' files, a --baseline report), tune
 * and sweep files. A thin layer over cJSON: the callers keep one small API and never see cJSON's
 * types; absent members and wrong types read as NULL, NAN or a fallback instead of crashing. */
#ifndef CLGRAD_JSON_READ_H
#define CLGRAD_JSON_READ_H

#include "json_write.h"

typedef enum { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ } jv_type;

typedef struct cJSON jv; /* a cJSON node; read it only through the functions below */

/* NULL on a syntax error, with the byte offset and reason in err. */
jv *jv_parse(const char *text, char *err, size_t errlen);
jv *jv_parse_file(const char *path, char *err, size_t errlen);
void jv_free(jv *v);

/* Lookups return NULL when the member is absent or the value has the wrong type. */
const jv *jv_get(const jv *obj, const char *key);
const jv *jv_at(const jv *arr, int i);
/* "sections.peaks.fp32_gflops": keys separated by dots (array indices as numbers). */
const jv *jv_path(const jv *v, const char *path);
int jv_len(const jv *v);                       /* members of an array or object, else 0 */
double jv_num(const jv *v);                    /* NAN unless a number */
const char *jv_str(const jv *v, const char *fallback);
int jv_bool(const jv *v);                      /* 1 true, 0 false, -1 otherwise */
int jv_is_null(const jv *v);                   /* absent or null */
jv_type jv_kind(const jv *v);                  /* JV_NULL when absent */

/* Writes v through w (as the value after a json_key, or as an array element). */
void jv_write(json_writer *w, const jv *v);

#endif
