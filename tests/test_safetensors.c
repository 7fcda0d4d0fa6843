/* safetensors: round trip of several tensors and metadata; malformed files rejected with the file's
 * name in the message; atomic replacement (a failed write leaves the old file, no temporary file
 * is left behind); and an independent reader/writer in Python (tests/check_safetensors.py).
 * usage: test_safetensors [path of check_safetensors.py] */
#define _GNU_SOURCE
#include "test_util.h"
#include <clgrad_safetensors.h>

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char *tmp;

static char *tpath(const char *name)
{
	static char buf[8][1024];
	static int k;
	char *p = buf[k++ % 8];
	snprintf(p, 1024, "%s/%s", tmp, name);
	return p;
}

static unsigned char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
}

/* Names in the temporary folder that contain ".tmp". */
static int count_temp_files(void)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".tmp"))
			n++;
	closedir(d);
	return n;
}

/* The contents tests/check_safetensors.py expects (EXPECTED there). */
static float weight[6], bias[3] = {1.5f, -2.0f, 3.25f}, wq[1] = {7.0f};
static int32_t step[1] = {42}, idx[4] = {-1, 0, 7, 2147483647};
static double dbl[4];
static uint16_t bf[3] = {0x3f80, 0xc020, 0x3e20}; /* bfloat16 1, -2.5, 0.15625 */
/* float16 1, -2, 0.5, 65504 (largest), 2^-24 (smallest subnormal), -0 */
static uint16_t hf[6] = {0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x8000};
static const char *note = "tab\tquote\"backslash\\ \xc3\xa9 \xe2\x9c\x93";

static clg_st_writer *expected_writer(void)
{
	clg_st_writer *w = NULL;
	for (int k = 0; k < 6; k++)
		weight[k] = k * 0.25f - 0.5f;
	dbl[0] = 1.0 / 3.0, dbl[1] = -1e300, dbl[2] = 2.5, dbl[3] = 0.0;
	CHECK_OK(clg_st_writer_new(&w));
	if (!w)
		exit(1);
	CHECK_OK(clg_st_writer_add(w, "weight", CLG_F32, CLG_SHAPE(2, 3), weight));
	CHECK_OK(clg_st_writer_add(w, "bias", CLG_F32, CLG_SHAPE(3), bias));
	CHECK_OK(clg_st_writer_add(w, "step", CLG_I32, 0, NULL, step));
	CHECK_OK(clg_st_writer_add(w, "idx", CLG_I32, CLG_SHAPE(4), idx));
	CHECK_OK(clg_st_writer_add(w, "dbl", CLG_F64, CLG_SHAPE(2, 2), dbl));
	CHECK_OK(clg_st_writer_add(w, "empty", CLG_F32, CLG_SHAPE(0, 3), NULL));
	CHECK_OK(clg_st_writer_add(w, "layers.0/w\"q", CLG_F32, CLG_SHAPE(1), wq));
	CHECK_OK(clg_st_writer_add(w, "bf", CLG_BF16, CLG_SHAPE(3), bf));
	CHECK_OK(clg_st_writer_add(w, "hf", CLG_F16, CLG_SHAPE(6), hf));
	CHECK_OK(clg_st_writer_meta(w, "format", "pt"));
	CHECK_OK(clg_st_writer_meta(w, "epoch", "3"));
	CHECK_OK(clg_st_writer_meta(w, "note", note));
	return w;
}

static void check_tensor(const clg_st_file *f, const char *name, clg_dtype dt, int ndim, const int64_t *shape,
			 const void *data, size_t nbytes)
{
	const clg_st_tensor *t = clg_st_find(f, name);
	CHECK(t != NULL, "tensor '%s' missing", name);
	if (!t)
		return;
	CHECK(t->dtype == dt && t->ndim == ndim && t->nbytes == nbytes, "tensor '%s': dtype %s ndim %d bytes %zu", name,
	      clg_dtype_name(t->dtype), t->ndim, t->nbytes);
	for (int d = 0; d < ndim && d < t->ndim; d++)
		CHECK(t->shape[d] == shape[d], "tensor '%s' dim %d", name, d);
	CHECK(nbytes == 0 || (t->data && memcmp(t->data, data, nbytes) == 0), "tensor '%s' values differ", name);
	CHECK(((uintptr_t)t->data % clg_dtype_size(dt)) == 0, "tensor '%s' data not aligned", name);
}

static void check_expected(const clg_st_file *f)
{
	CHECK(clg_st_count(f) == 9, "9 tensors, got %d", clg_st_count(f));
	check_tensor(f, "bf", CLG_BF16, 1, (int64_t[]){3}, bf, sizeof(bf));
	check_tensor(f, "hf", CLG_F16, 1, (int64_t[]){6}, hf, sizeof(hf));
	check_tensor(f, "weight", CLG_F32, 2, (int64_t[]){2, 3}, weight, sizeof(weight));
	check_tensor(f, "bias", CLG_F32, 1, (int64_t[]){3}, bias, sizeof(bias));
	check_tensor(f, "step", CLG_I32, 0, NULL, step, sizeof(step));
	check_tensor(f, "idx", CLG_I32, 1, (int64_t[]){4}, idx, sizeof(idx));
	check_tensor(f, "dbl", CLG_F64, 2, (int64_t[]){2, 2}, dbl, sizeof(dbl));
	check_tensor(f, "empty", CLG_F32, 2, (int64_t[]){0, 3}, NULL, 0);
	check_tensor(f, "layers.0/w\"q", CLG_F32, 1, (int64_t[]){1}, wq, sizeof(wq));
	CHECK(clg_st_meta_count(f) == 3, "3 metadata entries");
	CHECK(clg_st_meta(f, "format") && !strcmp(clg_st_meta(f, "format"), "pt"), "metadata format");
	CHECK(clg_st_meta(f, "epoch") && !strcmp(clg_st_meta(f, "epoch"), "3"), "metadata epoch");
	CHECK(clg_st_meta(f, "note") && !strcmp(clg_st_meta(f, "note"), note), "metadata note with escapes: '%s'",
	      clg_st_meta(f, "note") ? clg_st_meta(f, "note") : "(none)");
	CHECK(clg_st_meta(f, "nope") == NULL && clg_st_find(f, "nope") == NULL, "absent names give NULL");
}

static void test_roundtrip(void)
{
	clg_st_writer *w = expected_writer();
	clg_st_file *f = NULL;
	unsigned char *raw;
	size_t len;
	clg_backend *be;

	/* a tensor straight from a device, too */
	if (clg_backend_open(0, &be) == CLG_OK) {
		clg_tensor *t = clg_from_host(be, CLG_F32, CLG_SHAPE(2, 2), (float[]){1, 2, 3, 4}), *u = NULL;
		clg_st_writer *w2;
		CHECK_OK(clg_st_writer_new(&w2));
		CHECK_OK(clg_st_writer_add_tensor(w2, "dev", t));
		CHECK(clg_st_writer_add_tensor(w2, "dev", t) == CLG_ERR_INVALID, "duplicate name rejected");
		CHECK_OK(clg_st_write(w2, tpath("dev.safetensors")));
		clg_st_writer_free(w2);
		CHECK_OK(clg_st_open(tpath("dev.safetensors"), &f));
		if (f) {
			float v[4];
			CHECK_OK(clg_st_load_tensor(f, "dev", be, &u));
			CHECK(u && clg_to_host(u, v, sizeof(v)) == CLG_OK && v[0] == 1 && v[3] == 4, "tensor back on the device");
			clg_free(u);
			CHECK(clg_st_load_tensor(f, "other", be, &u) == CLG_ERR_INVALID && u == NULL, "absent tensor");
			clg_st_close(f);
			f = NULL;
		}
		clg_free(t);
		clg_backend_close(be);
	}

	CHECK(clg_st_writer_meta(w, "epoch", "4") == CLG_ERR_INVALID, "duplicate metadata key rejected");
	CHECK(clg_st_writer_add(w, "__metadata__", CLG_F32, CLG_SHAPE(1), wq) == CLG_ERR_INVALID, "reserved name");
	CHECK_OK(clg_st_write(w, tpath("rt.safetensors")));
	clg_st_writer_free(w);
	CHECK(count_temp_files() == 0, "no temporary file left after a write");
	raw = read_file(tpath("rt.safetensors"), &len);
	if (raw) {
		uint64_t hlen = 0;
		for (int i = 0; i < 8; i++)
			hlen |= (uint64_t)raw[i] << (8 * i);
		CHECK((8 + hlen) % 8 == 0 && raw[8] == '{', "header padded to 8 bytes and starting with '{'");
		/* data: F64 (32) + 4-byte tensors bias, idx, layers, step, weight (12+16+4+4+24) + the
		 * bfloat16 bf (6) + the float16 hf (12) + empty */
		CHECK(len == 8 + hlen + 32 + 60 + 6 + 12, "file size %zu", len);
		free(raw);
	}
	CHECK_OK(clg_st_open(tpath("rt.safetensors"), &f));
	if (f) {
		const clg_st_tensor *t0 = clg_st_at(f, 0);
		check_expected(f);
		CHECK(t0 && !strcmp(t0->name, "dbl"), "the widest dtype comes first");
		clg_st_close(f);
	}
}

/* A file of an 8-byte length, the JSON header and ndata bytes of data. */
static void make_st(const char *path, const char *json, size_t ndata, int64_t hlen_override)
{
	size_t hl = strlen(json);
	uint64_t v = hlen_override >= 0 ? (uint64_t)hlen_override : hl;
	unsigned char *b = calloc(8 + hl + ndata + 1, 1);
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	memcpy(b + 8, json, hl);
	write_file(path, b, 8 + hl + ndata);
	free(b);
}

#define CHECK_REJECTS(json, ndata, want, why)                                                          \
	do {                                                                                               \
		clg_st_file *f_ = NULL;                                                                    \
		clg_status s_;                                                                             \
		make_st(tpath("bad.safetensors"), (json), (ndata), -1);                                    \
		s_ = clg_st_open(tpath("bad.safetensors"), &f_);                                           \
		CHECK(s_ == (want) && f_ == NULL, "%s: %s -> %s: %s", why, json, clg_status_name(s_), clg_last_error()); \
		CHECK(strstr(clg_last_error(), "bad.safetensors") != NULL, "%s: message names the file: %s", why, \
		      clg_last_error());                                                                   \
		clg_st_close(f_);                                                                          \
	} while (0)

static void test_malformed(void)
{
	const char *good = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
	clg_st_file *f = NULL;
	unsigned char *raw;
	size_t len;

	make_st(tpath("ok.safetensors"), good, 8, -1);
	CHECK_OK(clg_st_open(tpath("ok.safetensors"), &f));
	clg_st_close(f);
	f = NULL;
	make_st(tpath("ws.safetensors"), " \n{ \"a\" : { \"dtype\" : \"F32\" , \"shape\" : [ 2 ] , \"data_offsets\" : [ 0 , 8 ] } }   ", 8, -1);
	CHECK(clg_st_open(tpath("ws.safetensors"), &f) == CLG_ERR_FORMAT, "a header must start with '{'");
	make_st(tpath("ws.safetensors"), "{ \"a\" : { \"dtype\" : \"F32\" , \"shape\" : [ 2 ] , \"data_offsets\" : [ 0 , 8 ] } }\n  ", 8, -1);
	CHECK_OK(clg_st_open(tpath("ws.safetensors"), &f));
	clg_st_close(f);
	f = NULL;
	make_st(tpath("empty.safetensors"), "{}", 0, -1);
	CHECK_OK(clg_st_open(tpath("empty.safetensors"), &f));
	CHECK(clg_st_count(f) == 0, "an empty file has no tensors");
	clg_st_close(f);

	/* header length */
	make_st(tpath("bad.safetensors"), good, 8, 1000);
	CHECK(clg_st_open(tpath("bad.safetensors"), &f) == CLG_ERR_FORMAT && strstr(clg_last_error(), "bad.safetensors"),
	      "header length past the end: %s", clg_last_error());
	write_file(tpath("bad.safetensors"), "\x05\0\0", 3);
	CHECK(clg_st_open(tpath("bad.safetensors"), &f) == CLG_ERR_FORMAT, "a file of 3 bytes");
	CHECK(clg_st_open(tpath("absent.safetensors"), &f) == CLG_ERR_IO && strstr(clg_last_error(), "absent.safetensors"),
	      "missing file");
	/* truncated data and trailing bytes */
	CHECK_REJECTS(good, 7, CLG_ERR_FORMAT, "truncated data");
	CHECK_REJECTS(good, 9, CLG_ERR_FORMAT, "a trailing byte");
	raw = read_file(tpath("ok.safetensors"), &len);
	if (raw) {
		write_file(tpath("bad.safetensors"), raw, len / 2);
		CHECK(clg_st_open(tpath("bad.safetensors"), &f) == CLG_ERR_FORMAT, "file cut in half: %s", clg_last_error());
		free(raw);
	}
	/* bad JSON */
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, CLG_ERR_FORMAT, "unclosed object");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},}", 8, CLG_ERR_FORMAT, "trailing comma");
	CHECK_REJECTS("{'a':{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "single quotes");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "leading zero");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "negative dim");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "float dim");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,9]}}", 8, CLG_ERR_FORMAT, "3 offsets");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, CLG_ERR_FORMAT, "no offsets");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", 8, CLG_ERR_FORMAT, "unknown key");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
		      8, CLG_ERR_FORMAT, "duplicate name");
	CHECK_REJECTS("{\"__metadata__\":{\"k\":1},\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
		      CLG_ERR_FORMAT, "metadata value not a string");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} x", 8, CLG_ERR_FORMAT, "garbage after the object");
	CHECK_REJECTS("{\"a\\q\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "bad escape");
	/* offsets */
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
		      12, CLG_ERR_FORMAT, "overlapping offsets");
	CHECK(strstr(clg_last_error(), "overlaps") != NULL, "overlap message: %s", clg_last_error());
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
		      12, CLG_ERR_FORMAT, "a gap");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "shape and offsets disagree");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, CLG_ERR_FORMAT, "end before begin");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, CLG_ERR_FORMAT, "past the data");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,99999999999999999999]}}", 8, CLG_ERR_FORMAT,
		      "offset overflows 64 bits");
	/* sizes against the file: a header length of 2^63, an empty header, shapes and offsets far past
	 * the data, more dimensions than clgrad holds; a header with metadata and no tensors is fine */
	make_st(tpath("bad.safetensors"), good, 8, INT64_MAX);
	CHECK(clg_st_open(tpath("bad.safetensors"), &f) == CLG_ERR_FORMAT && f == NULL &&
		      strstr(clg_last_error(), "bad.safetensors") && strstr(clg_last_error(), "9223372036854775807"),
	      "header length 2^63 - 1: %s", clg_last_error());
	make_st(tpath("bad.safetensors"), "", 0, -1);
	CHECK(clg_st_open(tpath("bad.safetensors"), &f) == CLG_ERR_FORMAT, "an empty header: %s", clg_last_error());
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[1125899906842624],\"data_offsets\":[0,4503599627370496]}}", 8,
		      CLG_ERR_FORMAT, "2^50 elements announced, 8 bytes there");
	CHECK(strstr(clg_last_error(), "past the 8 data bytes") != NULL, "names the data size: %s", clg_last_error());
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F64\",\"shape\":[1048576,1048576,1048576],\"data_offsets\":[0,8]}}", 8,
		      CLG_ERR_FORMAT, "a shape whose product overflows");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4,
		      CLG_ERR_FORMAT, "7 dimensions");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[18446744073709551608,0]}}", 8,
		      CLG_ERR_FORMAT, "begin near 2^64");
	make_st(tpath("meta.safetensors"), "{\"__metadata__\":{\"k\":\"v\"}}", 0, -1);
	CHECK_OK(clg_st_open(tpath("meta.safetensors"), &f));
	CHECK(f && clg_st_count(f) == 0 && clg_st_meta(f, "k") && !strcmp(clg_st_meta(f, "k"), "v"),
	      "metadata and no tensors");
	clg_st_close(f);
	f = NULL;
	make_st(tpath("bad.safetensors"), "{\"__metadata__\":{\"k\":\"v\"}}", 4, -1);
	CHECK(clg_st_open(tpath("bad.safetensors"), &f) == CLG_ERR_FORMAT && f == NULL,
	      "no tensors but data bytes: %s", clg_last_error());
	/* what cJSON alone would take and a safetensors header must not hold (st_lint, the walk) */
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2e0],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "exponent");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[true],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "literal");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[[2]],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "4 deep");
	CHECK(strstr(clg_last_error(), "nested too deep") != NULL, "depth message: %s", clg_last_error());
	CHECK_REJECTS("{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "\\u0000");
	CHECK_REJECTS("{\"a\tb\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "raw tab in a name");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}\x01}", 8, CLG_ERR_FORMAT, "control byte as blank");
	CHECK_REJECTS("{\"a\":[1]}", 0, CLG_ERR_FORMAT, "a tensor entry not an object");
	CHECK(strstr(clg_last_error(), "tensor 'a'") != NULL, "names the tensor: %s", clg_last_error());
	CHECK_REJECTS("{\"w\":{\"dtype\":\"F32\",\"shape\":\"2\",\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "shape a string");
	CHECK(strstr(clg_last_error(), "tensor 'w'") != NULL, "names the tensor: %s", clg_last_error());
	CHECK_REJECTS("{\"a\":{\"dtype\":7,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT, "dtype a number");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, CLG_ERR_FORMAT,
		      "duplicate dtype");
	CHECK_REJECTS("{\"__metadata__\":[\"k\"]}", 0, CLG_ERR_FORMAT, "metadata an array");
	CHECK_REJECTS("{\"__metadata__\":{\"k\":\"v\",\"k\":\"w\"}}", 0, CLG_ERR_FORMAT, "duplicate metadata key");
	CHECK_REJECTS("{\"__metadata__\":{},\"__metadata__\":{}}", 0, CLG_ERR_FORMAT, "two __metadata__");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,9007199254740993]}}", 8, CLG_ERR_FORMAT,
		      "an offset past 2^53 (a double would round it)");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}}", 8, CLG_ERR_FORMAT, "a stray '}'");
	{ /* more tensors than the cap: 70000 empty entries (every other check would pass) */
		size_t cap = 70000 * 64 + 16, at = 0;
		char *big = malloc(cap);
		if (big) {
			at += (size_t)snprintf(big + at, cap - at, "{");
			for (int i = 0; i < 70000; i++)
				at += (size_t)snprintf(big + at, cap - at, "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}",
						       i ? "," : "", i);
			snprintf(big + at, cap - at, "}");
			make_st(tpath("bad.safetensors"), big, 0, -1);
			CHECK(clg_st_open(tpath("bad.safetensors"), &f) == CLG_ERR_FORMAT && f == NULL &&
				      strstr(clg_last_error(), "bad.safetensors") && strstr(clg_last_error(), "70000 tensors"),
			      "70000 tensors: %s", clg_last_error());
			free(big);
		}
	}
	/* dtypes */
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4, CLG_ERR_DTYPE, "F8_E4M3");
	CHECK_REJECTS("{\"a\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, CLG_ERR_DTYPE, "unknown dtype");
}

static void test_atomic(void)
{
	static float big[1 << 18]; /* 1 MiB */
	clg_st_writer *w = expected_writer(), *wb = NULL;
	unsigned char *before, *after;
	size_t nbefore = 0, nafter = 0;
	const char *path = tpath("ckpt.safetensors");
	struct rlimit old, lim;
	clg_status s;

	CHECK_OK(clg_st_write(w, path));
	before = read_file(path, &nbefore);
	CHECK_OK(clg_st_writer_new(&wb));
	CHECK_OK(clg_st_writer_add(wb, "big", CLG_F32, CLG_SHAPE(1 << 18), big));

	/* a write that fails half-way (file size limit): the old file stays, no temporary is left */
	if (getrlimit(RLIMIT_FSIZE, &old) == 0) {
		void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
		lim = old;
		lim.rlim_cur = 64 * 1024;
		if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
			s = clg_st_write(wb, path);
			setrlimit(RLIMIT_FSIZE, &old);
			CHECK(s == CLG_ERR_IO && strstr(clg_last_error(), "ckpt.safetensors"), "write past the size limit -> %s: %s",
			      clg_status_name(s), clg_last_error());
			after = read_file(path, &nafter);
			CHECK(before && after && nbefore == nafter && memcmp(before, after, nbefore) == 0,
			      "the old file is intact after a failed write");
			free(after);
			CHECK(count_temp_files() == 0, "no temporary file left after a failed write");
		} else {
			printf("note: cannot lower RLIMIT_FSIZE: failed-write check skipped\n");
		}
		signal(SIGXFSZ, prev);
	}

	/* a rename that fails (the target is a folder): nothing replaced, no temporary left */
	mkdir(tpath("adir.safetensors"), 0755);
	s = clg_st_write(w, tpath("adir.safetensors"));
	CHECK(s == CLG_ERR_IO && strstr(clg_last_error(), "adir.safetensors"), "rename over a folder -> %s: %s",
	      clg_status_name(s), clg_last_error());
	CHECK(count_temp_files() == 0, "no temporary file left after a failed rename");

	/* a folder that does not exist, and a read-only one (permissions do not bind root) */
	s = clg_st_write(w, tpath("nodir/x.safetensors"));
	CHECK(s == CLG_ERR_IO && strstr(clg_last_error(), "nodir/x.safetensors"), "missing folder -> %s",
	      clg_status_name(s));
	if (geteuid() != 0) {
		mkdir(tpath("ro"), 0755);
		CHECK_OK(clg_st_write(w, tpath("ro/c.safetensors")));
		chmod(tpath("ro"), 0555);
		s = clg_st_write(wb, tpath("ro/c.safetensors"));
		chmod(tpath("ro"), 0755);
		CHECK(s == CLG_ERR_IO, "write into a read-only folder -> %s", clg_status_name(s));
		{
			clg_st_file *f = NULL;
			CHECK_OK(clg_st_open(tpath("ro/c.safetensors"), &f));
			if (f)
				check_expected(f);
			clg_st_close(f);
		}
	} else {
		printf("note: running as root, read-only folder check skipped (the size-limit check covers it)\n");
	}

	/* a successful replacement */
	CHECK_OK(clg_st_write(wb, path));
	{
		clg_st_file *f = NULL;
		CHECK_OK(clg_st_open(path, &f));
		CHECK(f && clg_st_count(f) == 1 && clg_st_find(f, "big"), "the file was replaced");
		clg_st_close(f);
	}
	CHECK(count_temp_files() == 0, "no temporary file left");
	free(before);
	clg_st_writer_free(w);
	clg_st_writer_free(wb);
}

static void test_python(const char *script)
{
	char cmd[4096];
	int rc;
	clg_st_file *f = NULL;

	if (!script) {
		printf("note: no path to check_safetensors.py given: Python check skipped\n");
		return;
	}
	if (system("command -v python3 >/dev/null 2>&1") != 0) {
		printf("note: python3 not found: Python check skipped\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "python3 '%s' verify '%s'", script, tpath("rt.safetensors"));
	rc = system(cmd);
	CHECK(rc == 0, "%s -> %d", cmd, rc);
	snprintf(cmd, sizeof(cmd), "python3 '%s' write '%s'", script, tpath("py.safetensors"));
	rc = system(cmd);
	CHECK(rc == 0, "%s -> %d", cmd, rc);
	CHECK_OK(clg_st_open(tpath("py.safetensors"), &f));
	if (f) {
		uint16_t h[3] = {0x3c00, 0xc000, 0x3800};
		float a[3] = {0.5f, -1.0f, 2.0f};
		int32_t b[4] = {1, 2, 3, -4};
		double c[1] = {3.141592653589793};
		check_tensor(f, "h", CLG_F16, 1, (int64_t[]){3}, h, sizeof(h));
		check_tensor(f, "a", CLG_F32, 1, (int64_t[]){3}, a, sizeof(a));
		check_tensor(f, "b", CLG_I32, 2, (int64_t[]){2, 2}, b, sizeof(b));
		check_tensor(f, "c", CLG_F64, 1, (int64_t[]){1}, c, sizeof(c));
		uint16_t g[2] = {0x3f80, 0xc020};
		check_tensor(f, "g", CLG_BF16, 1, (int64_t[]){2}, g, sizeof(g));
		CHECK(clg_st_meta(f, "source") && !strcmp(clg_st_meta(f, "source"), "python"), "python metadata");
		CHECK(clg_st_meta(f, "emoji") && !strcmp(clg_st_meta(f, "emoji"), "\xf0\x9f\x98\x80 \xc3\xa9"),
		      "\\u escapes with a surrogate pair decoded to UTF-8");
		clg_st_close(f);
	}
}

int main(int argc, char **argv)
{
	tmp = t_tmpdir();
	if (!tmp) {
		fprintf(stderr, "no temporary folder\n");
		return 1;
	}
	test_roundtrip();
	test_malformed();
	test_atomic();
	test_python(argc > 1 ? argv[1] : NULL);
	t_rmtree(tmp);
	free(tmp);
	return t_finish("test_safetensors");
}
