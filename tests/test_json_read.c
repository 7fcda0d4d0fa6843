/* The CLI's JSON reader (compare/json_read.c over cJSON): lookups, types, malformed documents, and
 * jv_write printing a parsed tree back through the streaming writer unchanged. */
#include "test_util.h"
#include "json_read.h"

#include <math.h>
#include <string.h>


int main(void)
{
	const char *doc = "{\"a\": {\"b\": [1, 2.5, \"x\", true, null, {\"c\": -3}]}, \"s\": \"caf\\u00e9\", \"f\": false}";
	const char *bad[] = {"{\"a\": 1,}", "{\"a\": 1} x", "{'a': 1}", "[1, 2", "", "{\"a\" 1}", "nul"};
	char err[128] = "", buf[512];
	FILE *mf;
	jv *v = jv_parse(doc, err, sizeof(err)), *w;

	CHECK(v != NULL, "parse: %s", err);
	if (!v)
		return t_finish("test_json_read");
	CHECK(jv_kind(v) == JV_OBJ && jv_len(v) == 3, "top: kind %d, %d members", jv_kind(v), jv_len(v));
	CHECK(jv_kind(jv_path(v, "a.b")) == JV_ARR && jv_len(jv_path(v, "a.b")) == 6, "a.b an array of 6");
	CHECK(jv_num(jv_path(v, "a.b.1")) == 2.5, "a.b.1 = %g", jv_num(jv_path(v, "a.b.1")));
	CHECK(!strcmp(jv_str(jv_path(v, "a.b.2"), "?"), "x"), "a.b.2");
	CHECK(jv_bool(jv_path(v, "a.b.3")) == 1 && jv_bool(jv_get(v, "f")) == 0 && jv_bool(jv_get(v, "s")) == -1, "bools");
	CHECK(jv_is_null(jv_path(v, "a.b.4")) && jv_is_null(jv_get(v, "absent")) && !jv_is_null(jv_get(v, "f")), "nulls");
	CHECK(jv_num(jv_path(v, "a.b.5.c")) == -3, "a.b.5.c");
	CHECK(isnan(jv_num(jv_get(v, "s"))) && !strcmp(jv_str(jv_get(v, "a"), "fb"), "fb"), "wrong types read as NAN, fallback");
	CHECK(!strcmp(jv_str(jv_get(v, "s"), ""), "caf\xc3\xa9"), "\\u escape decoded to UTF-8");
	CHECK(jv_at(v, 2) == jv_get(v, "f") && jv_at(v, 3) == NULL && jv_at(v, -1) == NULL, "jv_at on an object");
	CHECK(jv_path(v, "a.b.9") == NULL && jv_path(v, "a.b.x") == NULL && jv_get(jv_path(v, "a.b"), "c") == NULL,
	      "absent paths");

	/* jv_write: the tree printed compactly, then parsed again, prints the same */
	mf = fmemopen(buf, sizeof(buf), "w");
	if (mf) {
		json_writer jw;
		json_init(&jw, mf, 0);
		jv_write(&jw, v);
		fclose(mf);
		CHECK(strstr(buf, "\"c\":-3") && strstr(buf, "2.5") && strstr(buf, "null") && strstr(buf, "false"),
		      "jv_write: %s", buf);
		w = jv_parse(buf, err, sizeof(err));
		CHECK(w && jv_num(jv_path(w, "a.b.5.c")) == -3 && jv_len(w) == 3, "jv_write's output parses back: %s", err);
		jv_free(w);
	}
	jv_free(v);

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err[0] = '\0';
		v = jv_parse(bad[i], err, sizeof(err));
		CHECK(v == NULL && strstr(err, "offset") != NULL, "'%s' must be rejected with an offset: '%s'", bad[i], err);
		jv_free(v);
	}
	v = jv_parse_file("/nonexistent/x.json", err, sizeof(err));
	CHECK(v == NULL && strstr(err, "/nonexistent/x.json"), "a missing file: %s", err);
	return t_finish("test_json_read");
}
