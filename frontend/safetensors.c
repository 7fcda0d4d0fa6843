/* safetensors checkpoints: an atomic writer and a strict reader. The reader parses the header with
 * cJSON, after a token check (st_lint) that holds it to the subset the format uses and bounds what
 * cJSON allocates. The writer prints its header itself: it is a fixed layout (keys in order, offsets
 * as plain uint64, space padding) that a general printer would not give byte for byte (cJSON prints
 * numbers through a double, 1e+16 for large offsets). */
#include "clgrad_safetensors.h"
#include "fe_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define ST_MAX_HEADER (100u << 20) /* the reference implementation's limit */

static const char *const st_dtype_names[CLG_DTYPE_COUNT] = {
	[CLG_F32] = "F32", [CLG_F16] = "F16", [CLG_F64] = "F64", [CLG_I32] = "I32", [CLG_BF16] = "BF16"};

static int host_is_little_endian(void)
{
	const uint16_t one = 1;
	return *(const unsigned char *)&one == 1;
}

/* Reverses the byte order of n elements of size es in place (for big-endian hosts). */
static void swap_bytes(void *p, size_t n, size_t es)
{
	unsigned char *b = p;
	for (size_t i = 0; i < n; i++, b += es)
		for (size_t k = 0; k < es / 2; k++) {
			unsigned char t = b[k];
			b[k] = b[es - 1 - k];
			b[es - 1 - k] = t;
		}
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

/* ---- writer ------------------------------------------------------------------------------ */

typedef struct {
	char *name;
	clg_dtype dtype;
	int ndim;
	int64_t shape[CLG_MAX_DIMS];
	size_t nbytes;
	const void *data;
	void *own;  /* copy owned by the writer (clg_st_writer_add_tensor) */
} st_entry;

struct clg_st_writer {
	st_entry *t;
	int n, cap;
	char **mkey, **mval;
	int nmeta, capmeta;
};

clg_status clg_st_writer_new(clg_st_writer **out)
{
	if (!out)
		return clg_fail(CLG_ERR_INVALID, "safetensors writer: NULL output");
	*out = calloc(1, sizeof(**out));
	return *out ? CLG_OK : clg_fail(CLG_ERR_OOM, "safetensors writer: out of host memory");
}

void clg_st_writer_free(clg_st_writer *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->n; i++) {
		free(w->t[i].name);
		free(w->t[i].own);
	}
	for (int i = 0; i < w->nmeta; i++) {
		free(w->mkey[i]);
		free(w->mval[i]);
	}
	free(w->t);
	free(w->mkey);
	free(w->mval);
	free(w);
}

static clg_status add_entry(clg_st_writer *w, const char *name, clg_dtype dt, int ndim, const int64_t *shape,
			    const void *data, st_entry **out)
{
	st_entry *e;
	uint64_t numel = 1;

	if (!w || !name)
		return clg_fail(CLG_ERR_INVALID, "safetensors writer: NULL writer or name");
	if (!strcmp(name, "__metadata__"))
		return clg_fail(CLG_ERR_INVALID, "safetensors writer: '__metadata__' is reserved, not a tensor name");
	if ((unsigned)dt >= CLG_DTYPE_COUNT || !st_dtype_names[dt])
		return clg_fail(CLG_ERR_DTYPE, "safetensors writer: tensor '%s' has unknown dtype %d", name, (int)dt);
	if (ndim < 0 || ndim > CLG_MAX_DIMS || (ndim > 0 && !shape))
		return clg_fail(CLG_ERR_SHAPE, "safetensors writer: tensor '%s' has %d dims (0 to %d)", name, ndim, CLG_MAX_DIMS);
	for (int d = 0; d < ndim; d++) {
		if (shape[d] < 0)
			return clg_fail(CLG_ERR_SHAPE, "safetensors writer: tensor '%s' has negative dim %d", name, d);
		if (shape[d] && numel > ((uint64_t)1 << 50) / (uint64_t)shape[d])
			return clg_fail(CLG_ERR_SHAPE, "safetensors writer: tensor '%s' is too large", name);
		numel *= (uint64_t)shape[d];
	}
	if (numel && !data && out == NULL)
		return clg_fail(CLG_ERR_INVALID, "safetensors writer: tensor '%s' has no data", name);
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->t[i].name, name))
			return clg_fail(CLG_ERR_INVALID, "safetensors writer: tensor '%s' added twice", name);
	if (w->n == w->cap) {
		int cap = w->cap ? 2 * w->cap : 16;
		st_entry *p = realloc(w->t, (size_t)cap * sizeof(*p));
		if (!p)
			return clg_fail(CLG_ERR_OOM, "safetensors writer: out of host memory");
		w->t = p;
		w->cap = cap;
	}
	e = &w->t[w->n];
	memset(e, 0, sizeof(*e));
	e->name = dup_str(name);
	if (!e->name)
		return clg_fail(CLG_ERR_OOM, "safetensors writer: out of host memory");
	e->dtype = dt;
	e->ndim = ndim;
	for (int d = 0; d < ndim; d++)
		e->shape[d] = shape[d];
	e->nbytes = (size_t)numel * clg_dtype_size(dt);
	e->data = data;
	w->n++;
	if (out)
		*out = e;
	return CLG_OK;
}

clg_status clg_st_writer_add(clg_st_writer *w, const char *name, clg_dtype dt, int ndim, const int64_t *shape,
			     const void *data)
{
	return add_entry(w, name, dt, ndim, shape, data, NULL);
}

clg_status clg_st_writer_add_tensor(clg_st_writer *w, const char *name, clg_tensor *t)
{
	st_entry *e = NULL;
	clg_status st;

	if (!t)
		return clg_fail(CLG_ERR_INVALID, "safetensors writer: tensor '%s' is NULL", name ? name : "(null)");
	st = add_entry(w, name, clg_dtype_of(t), clg_ndim(t), clg_shape(t), NULL, &e);
	if (st)
		return st;
	e->own = malloc(e->nbytes ? e->nbytes : 1);
	if (!e->own) {
		st = clg_fail(CLG_ERR_OOM, "safetensors writer: out of host memory for tensor '%s' (%zu bytes)", name, e->nbytes);
		goto undo;
	}
	st = clg_to_host(t, e->own, e->nbytes);
	if (st) {
		clg_fail_prefix(st, "safetensors writer: tensor '%s': ", name);
		goto undo;
	}
	e->data = e->own;
	return CLG_OK;
undo:
	free(e->own);
	free(e->name);
	w->n--;
	return st;
}

clg_status clg_st_writer_meta(clg_st_writer *w, const char *key, const char *value)
{
	char *k, *v;
	if (!w || !key || !value)
		return clg_fail(CLG_ERR_INVALID, "safetensors writer: NULL writer, metadata key or value");
	for (int i = 0; i < w->nmeta; i++)
		if (!strcmp(w->mkey[i], key))
			return clg_fail(CLG_ERR_INVALID, "safetensors writer: metadata key '%s' added twice", key);
	if (w->nmeta == w->capmeta) {
		int cap = w->capmeta ? 2 * w->capmeta : 8;
		char **pk = realloc(w->mkey, (size_t)cap * sizeof(*pk)), **pv;
		if (!pk)
			return clg_fail(CLG_ERR_OOM, "safetensors writer: out of host memory");
		w->mkey = pk;
		pv = realloc(w->mval, (size_t)cap * sizeof(*pv));
		if (!pv)
			return clg_fail(CLG_ERR_OOM, "safetensors writer: out of host memory");
		w->mval = pv;
		w->capmeta = cap;
	}
	k = dup_str(key);
	v = dup_str(value);
	if (!k || !v) {
		free(k);
		free(v);
		return clg_fail(CLG_ERR_OOM, "safetensors writer: out of host memory");
	}
	w->mkey[w->nmeta] = k;
	w->mval[w->nmeta] = v;
	w->nmeta++;
	return CLG_OK;
}

/* A growing string for the JSON header. */
typedef struct {
	char *p;
	size_t n, cap;
	int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;
		while (cap < b->n + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_fmt_u64(sbuf *b, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	sb_put(b, tmp, (size_t)n);
}

/* A JSON string literal: quotes, backslashes and control characters escaped, the rest as is. */
static void sb_json_str(sbuf *b, const char *s)
{
	sb_put(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			sb_put(b, e, 2);
		} else if (c < 0x20) {
			char e[8];
			snprintf(e, sizeof(e), "\\u%04x", c);
			sb_put(b, e, 6);
		} else {
			sb_put(b, (const char *)&c, 1);
		}
	}
	sb_put(b, "\"", 1);
}

static int entry_cmp(const void *pa, const void *pb)
{
	const st_entry *a = *(st_entry *const *)pa, *b = *(st_entry *const *)pb;
	size_t sa = clg_dtype_size(a->dtype), sbz = clg_dtype_size(b->dtype);
	if (sa != sbz)
		return sa > sbz ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* fwrite of n bytes, in little-endian order whatever the host. */
static int write_le(FILE *f, const void *data, size_t n, size_t es)
{
	unsigned char tmp[4096];
	const unsigned char *p = data;
	if (host_is_little_endian() || es == 1)
		return fwrite(p, 1, n, f) == n;
	while (n) {
		size_t k = n < sizeof(tmp) ? n : sizeof(tmp);
		memcpy(tmp, p, k);
		swap_bytes(tmp, k / es, es);
		if (fwrite(tmp, 1, k, f) != k)
			return 0;
		p += k;
		n -= k;
	}
	return 1;
}

/* Opens a new file next to path with a unique name; *tmp is malloc'ed. */
static int open_temp(const char *path, char **tmp)
{
	static _Thread_local unsigned counter;
	size_t len = strlen(path) + 64;
	char *name = malloc(len);
	if (!name) {
		errno = ENOMEM;
		return -1;
	}
	for (int attempt = 0; attempt < 100; attempt++) {
		int fd;
		snprintf(name, len, "%s.tmp.%ld.%u.%lx", path, (long)getpid(), counter++, (unsigned long)time(NULL));
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd >= 0) {
			*tmp = name;
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	free(name);
	return -1;
}

/* The folder holding path ("." when it has no slash); malloc'ed. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;
	if (!slash)
		return dup_str(".");
	if (slash == path)
		return dup_str("/");
	d = malloc((size_t)(slash - path) + 1);
	if (d) {
		memcpy(d, path, (size_t)(slash - path));
		d[slash - path] = '\0';
	}
	return d;
}

clg_status clg_st_write(clg_st_writer *w, const char *path)
{
	st_entry **order = NULL;
	sbuf hb = {0};
	unsigned char lenbytes[8];
	uint64_t off = 0, hlen;
	char *tmp = NULL, *dir = NULL;
	FILE *f = NULL;
	int fd = -1, dfd;
	clg_status st = CLG_OK;

	if (!w || !path || !*path)
		return clg_fail(CLG_ERR_INVALID, "safetensors write: NULL writer or empty path");
	order = malloc((size_t)(w->n ? w->n : 1) * sizeof(*order));
	if (!order)
		return clg_fail(CLG_ERR_OOM, "safetensors write %s: out of host memory", path);
	for (int i = 0; i < w->n; i++)
		order[i] = &w->t[i];
	if (w->n > 1)
		qsort(order, (size_t)w->n, sizeof(*order), entry_cmp);

	/* the header */
	sb_str(&hb, "{");
	if (w->nmeta) {
		sb_str(&hb, "\"__metadata__\":{");
		for (int i = 0; i < w->nmeta; i++) {
			if (i)
				sb_str(&hb, ",");
			sb_json_str(&hb, w->mkey[i]);
			sb_str(&hb, ":");
			sb_json_str(&hb, w->mval[i]);
		}
		sb_str(&hb, "}");
	}
	for (int i = 0; i < w->n; i++) {
		const st_entry *e = order[i];
		if (i || w->nmeta)
			sb_str(&hb, ",");
		sb_json_str(&hb, e->name);
		sb_str(&hb, ":{\"dtype\":\"");
		sb_str(&hb, st_dtype_names[e->dtype]);
		sb_str(&hb, "\",\"shape\":[");
		for (int d = 0; d < e->ndim; d++) {
			if (d)
				sb_str(&hb, ",");
			sb_fmt_u64(&hb, (uint64_t)e->shape[d]);
		}
		sb_str(&hb, "],\"data_offsets\":[");
		sb_fmt_u64(&hb, off);
		sb_str(&hb, ",");
		off += e->nbytes;
		sb_fmt_u64(&hb, off);
		sb_str(&hb, "]}");
	}
	sb_str(&hb, "}");
	while (!hb.oom && (8 + hb.n) % 8)
		sb_str(&hb, " ");
	if (hb.oom) {
		st = clg_fail(CLG_ERR_OOM, "safetensors write %s: out of host memory for the header", path);
		goto out;
	}
	if (hb.n > ST_MAX_HEADER) {
		st = clg_fail(CLG_ERR_INVALID, "safetensors write %s: header of %zu bytes exceeds the format's %u", path, hb.n,
			      ST_MAX_HEADER);
		goto out;
	}
	hlen = hb.n;
	for (int i = 0; i < 8; i++)
		lenbytes[i] = (unsigned char)(hlen >> (8 * i));

	/* write a temporary file beside path, make it durable, then rename it over path */
	clg_remove_stale_temps(path); /* what a writer killed before its rename left */
	fd = open_temp(path, &tmp);
	if (fd < 0) {
		st = clg_fail(CLG_ERR_IO, "safetensors write %s: cannot create a temporary file beside it: %s", path,
			      strerror(errno));
		goto out;
	}
	f = fdopen(fd, "wb");
	if (!f) {
		st = clg_fail(CLG_ERR_IO, "safetensors write %s: fdopen: %s", path, strerror(errno));
		close(fd);
		goto out_unlink;
	}
	if (clg_fault_file(CLG_FAULT_WRITE)) { /* a failing disk, half way: the temporary must go */
		fwrite(lenbytes, 1, 8, f);
		errno = EIO;
		goto write_error;
	}
	if (fwrite(lenbytes, 1, 8, f) != 8 || fwrite(hb.p, 1, hb.n, f) != hb.n)
		goto write_error;
	for (int i = 0; i < w->n; i++)
		if (order[i]->nbytes && !write_le(f, order[i]->data, order[i]->nbytes, clg_dtype_size(order[i]->dtype)))
			goto write_error;
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		goto write_error;
	if (fclose(f) != 0) {
		f = NULL;
		goto write_error;
	}
	f = NULL;
	if (rename(tmp, path) != 0) {
		st = clg_fail(CLG_ERR_IO, "safetensors write %s: rename from %s: %s", path, tmp, strerror(errno));
		goto out_unlink;
	}
	/* the rename itself must reach the disk: fsync the folder */
	dir = dir_of(path);
	if (!dir) {
		st = clg_fail(CLG_ERR_OOM, "safetensors write %s: out of host memory", path);
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 || fsync(dfd) != 0) {
		st = clg_fail(CLG_ERR_IO, "safetensors write %s: fsync of folder %s: %s", path, dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		goto out;
	}
	close(dfd);
	goto out;

write_error:
	st = clg_fail(CLG_ERR_IO, "safetensors write %s: writing %s: %s%s", path, tmp, errno ? strerror(errno) : "short write",
		      clg_fault_note());
	if (f)
		fclose(f);
out_unlink:
	unlink(tmp);
out:
	free(dir);
	free(tmp);
	free(hb.p);
	free(order);
	return st;
}

/* ---- reader ------------------------------------------------------------------------------ */

/* Limits a hostile header meets before cJSON allocates anything (st_lint): */
#define ST_MAX_TENSORS (1 << 16) /* far above any real checkpoint shard (a few thousand) */
#define ST_MAX_TOKENS (ST_MAX_TENSORS * 20) /* keys and values: a tensor entry has at most 17 */
#define ST_MAX_DEPTH 3 /* header object > tensor entry > shape array */
#define ST_MAX_DIGITS 16 /* with the value below 2^53 (checked after parsing), a double holds it exactly */
#define ST_EXACT_LIMIT 9007199254740992.0 /* 2^53 */

typedef struct {
	clg_st_tensor t;
	uint64_t begin, end;
	void *own;
} st_item;

struct clg_st_file {
	st_item *items;
	int n;
	const char **mkey, **mval;
	int nmeta;
	cJSON *json; /* the parsed header: tensor names and metadata point into it */
	unsigned char *data;
};

void clg_st_close(clg_st_file *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->n; i++)
		free(f->items[i].own);
	free(f->items);
	free(f->mkey);
	free(f->mval);
	cJSON_Delete(f->json);
	free(f->data);
	free(f);
}

static int lint_fail(char *err, size_t len, const char *what, size_t at)
{
	snprintf(err, len, "%s at header byte %zu", what, at);
	return 0;
}

/* Token-level check of the header before cJSON parses it. cJSON is a general, lenient parser: it
 * takes signs, fractions, exponents and true/false/null, turns every number into a double, lets
 * \u0000 cut a string short, skips any control character as blank, and nests 1000 deep. A
 * safetensors header holds only objects, arrays, strings and non-negative integers, so here: only
 * those tokens and blanks; integers of digits only (no sign, leading zero, fraction or exponent,
 * at most ST_MAX_DIGITS); no control character or \u0000 in a string; nesting at most
 * ST_MAX_DEPTH; at most ST_MAX_TOKENS keys and values, so that cJSON's tree stays a small multiple
 * of the header. Structure (and bad escapes, unbalanced brackets) is left to cJSON and the walk. */
static int st_lint(const char *s, size_t n, char *err, size_t errlen)
{
	size_t tokens = 0;
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t start = i;
		switch (c) {
		case ' ': case '\t': case '\n': case '\r': case ',': case ':':
			continue;
		case '}': case ']':
			if (--depth < 0)
				return lint_fail(err, errlen, "unbalanced brackets", i);
			continue;
		case '{': case '[':
			if (++depth > ST_MAX_DEPTH)
				return lint_fail(err, errlen, "nested too deep for a safetensors header", i);
			break;
		case '"':
			for (i++; i < n && s[i] != '"'; i++) {
				if ((unsigned char)s[i] < 0x20)
					return lint_fail(err, errlen, "control character in a string", i);
				if (s[i] == '\\') {
					if (n - i >= 6 && !memcmp(s + i + 1, "u0000", 5))
						return lint_fail(err, errlen, "\\u0000 in a string", i);
					i++; /* the escaped character (cJSON checks the escape) */
				}
			}
			if (i >= n)
				return lint_fail(err, errlen, "unterminated string", start);
			break;
		case '-':
			return lint_fail(err, errlen, "negative number", i);
		default:
			if (c < '0' || c > '9')
				return lint_fail(err, errlen, "unexpected character", i);
			while (i < n && s[i] >= '0' && s[i] <= '9')
				i++;
			if (i - start > 1 && s[start] == '0')
				return lint_fail(err, errlen, "integer with a leading zero", start);
			if (i - start > ST_MAX_DIGITS)
				return lint_fail(err, errlen, "integer too large", start);
			if (i < n && (s[i] == '.' || s[i] == 'e' || s[i] == 'E'))
				return lint_fail(err, errlen, "expected an integer, found a fraction or exponent", start);
			i--;
			break;
		}
		if (++tokens > ST_MAX_TOKENS)
			return lint_fail(err, errlen, "too many keys and values for a safetensors header", start);
	}
	return 1;
}

/* A number st_lint let through and below 2^53: the double is the integer written. */
static int st_uint(const cJSON *v, uint64_t *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= ST_EXACT_LIMIT)
		return 0;
	*out = (uint64_t)v->valuedouble;
	return 1;
}

static int dtype_of_name(const char *s, clg_dtype *dt)
{
	for (int d = 0; d < CLG_DTYPE_COUNT; d++)
		if (st_dtype_names[d] && !strcmp(st_dtype_names[d], s)) {
			*dt = (clg_dtype)d;
			return 1;
		}
	return 0;
}

/* {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, each key exactly once, no others.
 * Returns what is wrong, or NULL; *dtype is the dtype's name. */
static const char *parse_tensor(const cJSON *e, st_item *it, const char **dtype)
{
	const cJSON *k, *v;
	int have_dtype = 0, have_shape = 0, have_off = 0;

	if (!cJSON_IsObject(e))
		return "a tensor entry must be an object";
	if (!e->child)
		return "empty tensor entry";
	cJSON_ArrayForEach(k, e) {
		if (!strcmp(k->string, "dtype") && !have_dtype) {
			if (!cJSON_IsString(k))
				return "dtype must be a string";
			*dtype = k->valuestring;
			have_dtype = 1;
		} else if (!strcmp(k->string, "shape") && !have_shape) {
			int d = 0;
			if (!cJSON_IsArray(k))
				return "shape must be an array";
			cJSON_ArrayForEach(v, k) {
				uint64_t x;
				if (d >= CLG_MAX_DIMS)
					return "too many array entries (shape)";
				if (!st_uint(v, &x))
					return "shape entries must be non-negative integers";
				if (x > ((uint64_t)1 << 50))
					return "shape entry too large";
				it->t.shape[d++] = (int64_t)x;
			}
			it->t.ndim = d;
			have_shape = 1;
		} else if (!strcmp(k->string, "data_offsets") && !have_off) {
			if (!cJSON_IsArray(k) || cJSON_GetArraySize(k) != 2 || !st_uint(k->child, &it->begin) ||
			    !st_uint(k->child->next, &it->end))
				return "data_offsets must hold exactly [begin, end], non-negative integers below 2^53";
			have_off = 1;
		} else {
			int dup = !strcmp(k->string, "dtype") || !strcmp(k->string, "shape") || !strcmp(k->string, "data_offsets");
			return dup ? "duplicate key in a tensor entry" : "unknown key in a tensor entry";
		}
	}
	if (!have_dtype || !have_shape || !have_off)
		return "a tensor entry lacks dtype, shape or data_offsets";
	return NULL;
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* A name found twice in names[0..n) (sorted in place), or NULL. */
static const char *find_duplicate(const char **names, int n)
{
	if (n > 1)
		qsort(names, (size_t)n, sizeof(*names), name_cmp);
	for (int i = 1; i < n; i++)
		if (!strcmp(names[i - 1], names[i]))
			return names[i];
	return NULL;
}

/* "__metadata__": {"key": "value", ...} */
static clg_status parse_metadata(const char *path, const cJSON *m, clg_st_file *f)
{
	const cJSON *kv;
	const char *dup;
	int n = cJSON_GetArraySize(m), i = 0;

	if (!cJSON_IsObject(m))
		return clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: __metadata__ must be an object of strings", path);
	f->mkey = malloc((size_t)(n ? n : 1) * sizeof(*f->mkey));
	f->mval = malloc((size_t)(n ? n : 1) * sizeof(*f->mval));
	if (!f->mkey || !f->mval)
		return clg_fail(CLG_ERR_OOM, "%s: out of host memory", path);
	cJSON_ArrayForEach(kv, m) {
		if (!cJSON_IsString(kv))
			return clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: metadata values must be strings (key '%.80s')",
					path, kv->string);
		f->mkey[i] = kv->string;
		f->mval[i++] = kv->valuestring;
	}
	f->nmeta = n;
	{ /* the duplicate check sorts its array: a copy, so metadata keeps the file's order */
		const char **keys = malloc((size_t)(n ? n : 1) * sizeof(*keys));
		if (!keys)
			return clg_fail(CLG_ERR_OOM, "%s: out of host memory", path);
		memcpy(keys, f->mkey, (size_t)n * sizeof(*keys));
		dup = find_duplicate(keys, n);
		if (dup) {
			clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: duplicate metadata key '%.80s'", path, dup);
			free(keys);
			return CLG_ERR_FORMAT;
		}
		free(keys);
	}
	return CLG_OK;
}

/* Parses the header (cJSON, after st_lint) into f: tensor entries with offsets, and metadata. */
static clg_status parse_header(const char *path, const char *hdr, size_t n, clg_st_file *f)
{
	const char *end = NULL, *dup;
	const cJSON *e, *meta = NULL;
	const char **names = NULL;
	char err[160];
	int count = 0;
	clg_status st;

	if (n == 0 || hdr[0] != '{')
		return clg_fail(CLG_ERR_FORMAT, "%s: the safetensors header does not start with '{'", path);
	if (!st_lint(hdr, n, err, sizeof(err)))
		return clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: %s", path, err);
	f->json = cJSON_ParseWithLengthOpts(hdr, n, &end, 0);
	if (!f->json)
		return clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: malformed JSON at header byte %zu", path,
				end && end >= hdr ? (size_t)(end - hdr) : (size_t)0);
	for (; end < hdr + n; end++)
		if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r')
			return clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: bytes after the header's JSON object at header byte %zu",
					path, (size_t)(end - hdr));
	cJSON_ArrayForEach(e, f->json) {
		if (strcmp(e->string, "__metadata__")) {
			count++;
			continue;
		}
		if (meta)
			return clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: duplicate __metadata__", path);
		meta = e;
	}
	if (count > ST_MAX_TENSORS)
		return clg_fail(CLG_ERR_FORMAT, "%s: %d tensors, more than clgrad reads from one file (%d)", path, count,
				ST_MAX_TENSORS);
	if (meta && (st = parse_metadata(path, meta, f)))
		return st;
	f->items = calloc((size_t)(count ? count : 1), sizeof(*f->items));
	names = malloc((size_t)(count ? count : 1) * sizeof(*names));
	if (!f->items || !names) {
		free(names);
		return clg_fail(CLG_ERR_OOM, "%s: out of host memory", path);
	}
	cJSON_ArrayForEach(e, f->json) {
		st_item *it = &f->items[f->n];
		const char *why, *dtype = "";
		if (e == meta)
			continue;
		it->t.name = names[f->n] = e->string;
		f->n++;
		why = parse_tensor(e, it, &dtype);
		if (why) {
			st = clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: tensor '%.80s': %s", path, e->string, why);
			goto out;
		}
		if (!dtype_of_name(dtype, &it->t.dtype)) {
			st = clg_fail(CLG_ERR_DTYPE, "%s: tensor '%.80s' has dtype '%.20s' (clgrad reads F32, F64, I32, F16, BF16)",
				      path, e->string, dtype);
			goto out;
		}
	}
	dup = find_duplicate(names, f->n);
	st = dup ? clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: tensor '%.80s': duplicate tensor name", path, dup)
		 : CLG_OK;
out:
	free(names);
	return st;
}

static int item_cmp(const void *pa, const void *pb)
{
	const st_item *a = pa, *b = pb;
	if (a->begin != b->begin)
		return a->begin < b->begin ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return 0;
}
/* Checks every tensor's byte range and points it at the data (aligned copies where needed). */
static clg_status place_tensors(const char *path, clg_st_file *f, uint64_t data_len)
{
	uint64_t at = 0;
	for (int i = 0; i < f->n; i++) {
		st_item *it = &f->items[i];
		uint64_t numel = 1, es = clg_dtype_size(it->t.dtype);
		for (int d = 0; d < it->t.ndim; d++) {
			if (it->t.shape[d] && numel > ((uint64_t)1 << 50) / (uint64_t)it->t.shape[d])
				return clg_fail(CLG_ERR_FORMAT, "%s: tensor '%s' has too many elements", path, it->t.name);
			numel *= (uint64_t)it->t.shape[d];
		}
		if (it->end < it->begin)
			return clg_fail(CLG_ERR_FORMAT, "%s: tensor '%s' has data_offsets [%" PRIu64 ", %" PRIu64 "] (end before begin)",
					path, it->t.name, it->begin, it->end);
		if (it->end - it->begin != numel * es)
			return clg_fail(CLG_ERR_FORMAT, "%s: tensor '%s': %" PRIu64 " bytes at [%" PRIu64 ", %" PRIu64 "], but shape and dtype %s need %" PRIu64,
					path, it->t.name, it->end - it->begin, it->begin, it->end, st_dtype_names[it->t.dtype],
					numel * es);
		if (it->end > data_len)
			return clg_fail(CLG_ERR_FORMAT, "%s: tensor '%s' ends at data byte %" PRIu64 ", past the %" PRIu64
					" data bytes in the file (truncated?)", path, it->t.name, it->end, data_len);
		it->t.numel = (int64_t)numel;
		it->t.nbytes = (size_t)(numel * es);
	}
	if (f->n > 1) /* a file without tensors has no items array: qsort(NULL, 0, ...) is undefined */
		qsort(f->items, (size_t)f->n, sizeof(*f->items), item_cmp);
	for (int i = 0; i < f->n; i++) {
		st_item *it = &f->items[i];
		if (it->begin < at)
			return clg_fail(CLG_ERR_FORMAT, "%s: tensor '%s' at [%" PRIu64 ", %" PRIu64 ") overlaps tensor '%s'", path,
					it->t.name, it->begin, it->end, f->items[i - 1].t.name);
		if (it->begin > at)
			return clg_fail(CLG_ERR_FORMAT, "%s: a gap of unused data bytes [%" PRIu64 ", %" PRIu64 ") before tensor '%s'",
					path, at, it->begin, it->t.name);
		at = it->end;
	}
	if (at != data_len)
		return clg_fail(CLG_ERR_FORMAT, "%s: %" PRIu64 " bytes after the last tensor's data", path, data_len - at);
	for (int i = 0; i < f->n; i++) {
		st_item *it = &f->items[i];
		size_t es = clg_dtype_size(it->t.dtype);
		unsigned char *src = f->data + it->begin;
		if ((uintptr_t)src % es == 0) {
			it->t.data = src;
		} else {
			it->own = malloc(it->t.nbytes ? it->t.nbytes : 1);
			if (!it->own)
				return clg_fail(CLG_ERR_OOM, "%s: out of host memory", path);
			memcpy(it->own, src, it->t.nbytes);
			it->t.data = it->own;
		}
		if (!host_is_little_endian())
			swap_bytes((void *)it->t.data, (size_t)it->t.numel, es);
	}
	return CLG_OK;
}

clg_status clg_st_open(const char *path, clg_st_file **out)
{
	FILE *fp;
	struct stat sb;
	unsigned char lenbytes[8];
	uint64_t hlen = 0, fsize, data_len;
	char *hdr = NULL;
	clg_st_file *f = NULL;
	clg_status st = CLG_OK;

	if (!out)
		return clg_fail(CLG_ERR_INVALID, "safetensors open: NULL output");
	*out = NULL;
	if (!path)
		return clg_fail(CLG_ERR_INVALID, "safetensors open: NULL path");
	fp = clg_fopen_read(path, "rb");
	if (!fp)
		return clg_fail(CLG_ERR_IO, "%s: cannot open: %s%s", path, strerror(errno), clg_fault_note());
	if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		st = clg_fail(CLG_ERR_IO, "%s: not a regular file", path);
		goto out;
	}
	fsize = (uint64_t)sb.st_size;
	if (fsize < 8 || fread(lenbytes, 1, 8, fp) != 8) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: truncated: %" PRIu64 " bytes, no room for the 8-byte header length", path, fsize);
		goto out;
	}
	for (int i = 0; i < 8; i++)
		hlen |= (uint64_t)lenbytes[i] << (8 * i);
	if (hlen > fsize - 8) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: header length %" PRIu64 " exceeds the %" PRIu64 " bytes after it (truncated or not safetensors)",
			      path, hlen, fsize - 8);
		goto out;
	}
	if (hlen > ST_MAX_HEADER) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: header length %" PRIu64 " exceeds the format's limit of %u bytes", path, hlen,
			      ST_MAX_HEADER);
		goto out;
	}
	hdr = malloc(hlen ? (size_t)hlen : 1);
	f = calloc(1, sizeof(*f));
	data_len = fsize - 8 - hlen;
	if (f)
		f->data = malloc(data_len ? (size_t)data_len : 1);
	if (!hdr || !f || !f->data) {
		st = clg_fail(CLG_ERR_OOM, "%s: out of host memory", path);
		goto out;
	}
	if (fread(hdr, 1, (size_t)hlen, fp) != hlen || fread(f->data, 1, (size_t)data_len, fp) != data_len) {
		st = ferror(fp) ? clg_fail(CLG_ERR_IO, "%s: read error: %s", path, strerror(errno))
				: clg_fail(CLG_ERR_FORMAT, "%s: truncated while reading (the file shrank)", path);
		goto out;
	}
	st = parse_header(path, hdr, (size_t)hlen, f);
	if (st)
		goto out;
	st = place_tensors(path, f, data_len);
	if (st)
		goto out;
	*out = f;
	f = NULL;
out:
	fclose(fp);
	free(hdr);
	clg_st_close(f);
	return st;
}

int clg_st_count(const clg_st_file *f) { return f ? f->n : 0; }

const clg_st_tensor *clg_st_at(const clg_st_file *f, int i)
{
	return f && i >= 0 && i < f->n ? &f->items[i].t : NULL;
}

const clg_st_tensor *clg_st_find(const clg_st_file *f, const char *name)
{
	if (!f || !name)
		return NULL;
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->items[i].t.name, name))
			return &f->items[i].t;
	return NULL;
}

int clg_st_meta_count(const clg_st_file *f) { return f ? f->nmeta : 0; }

const char *clg_st_meta(const clg_st_file *f, const char *key)
{
	if (!f || !key)
		return NULL;
	for (int i = 0; i < f->nmeta; i++)
		if (!strcmp(f->mkey[i], key))
			return f->mval[i];
	return NULL;
}

clg_status clg_st_meta_at(const clg_st_file *f, int i, const char **key, const char **value)
{
	if (!f || i < 0 || i >= f->nmeta || !key || !value)
		return clg_fail(CLG_ERR_INVALID, "safetensors: no metadata entry %d", i);
	*key = f->mkey[i];
	*value = f->mval[i];
	return CLG_OK;
}

clg_status clg_st_load_tensor(const clg_st_file *f, const char *name, clg_backend *be, clg_tensor **out)
{
	const clg_st_tensor *t;
	if (!out)
		return clg_fail(CLG_ERR_INVALID, "safetensors load: NULL output");
	*out = NULL;
	t = clg_st_find(f, name);
	if (!t)
		return clg_fail(CLG_ERR_INVALID, "safetensors load: no tensor named '%s'", name ? name : "(null)");
	*out = clg_from_host(be, t->dtype, t->ndim, t->shape, t->data);
	if (!*out)
		return clg_fail_prefix(clg_last_status() ? clg_last_status() : CLG_ERR_INVALID, "safetensors load of '%s': ",
				       name);
	return CLG_OK;
}
