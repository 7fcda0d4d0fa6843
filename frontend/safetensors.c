/* safetensors checkpoints: an atomic writer and a strict reader with its own small JSON parser
 * (just the subset the format uses: one object of tensor entries and "__metadata__"). */
#include "safetensors.h"
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

#define ST_MAX_HEADER (100u << 20) /* the reference implementation's limit */
#define ST_MIN_ENTRY 50 /* bytes of the shortest tensor entry: "":{"dtype":"F32","shape":[],"data_offsets":[0,0]} */

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
	st = clg_fail(CLG_ERR_IO, "safetensors write %s: writing %s: %s", path, tmp, errno ? strerror(errno) : "short write");
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

/* ---- JSON (the subset safetensors headers use) --------------------------------------------- */

typedef struct {
	const char *s;
	size_t n, i;
	const char *path;
	char err[160];
} jp;

static int jp_fail(jp *p, const char *what)
{
	if (!p->err[0])
		snprintf(p->err, sizeof(p->err), "%s at header byte %zu", what, p->i);
	return 0;
}

static void jp_ws(jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

static int jp_expect(jp *p, char c)
{
	jp_ws(p);
	if (p->i < p->n && p->s[p->i] == c) {
		p->i++;
		return 1;
	}
	if (p->i >= p->n)
		return jp_fail(p, "unexpected end of header");
	{
		char what[40];
		snprintf(what, sizeof(what), "expected '%c'", c);
		return jp_fail(p, what);
	}
}

/* Peeks the next non-blank character (0 at the end). */
static char jp_peek(jp *p)
{
	jp_ws(p);
	return p->i < p->n ? p->s[p->i] : 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int jp_hex4(jp *p, unsigned *out)
{
	unsigned v = 0;
	if (p->n - p->i < 4)
		return jp_fail(p, "truncated \\u escape");
	for (int k = 0; k < 4; k++) {
		int h = hexval(p->s[p->i + k]);
		if (h < 0)
			return jp_fail(p, "bad \\u escape");
		v = v * 16 + (unsigned)h;
	}
	p->i += 4;
	*out = v;
	return 1;
}

/* A string literal, decoded to UTF-8 into a malloc'ed NUL-terminated string. */
static int jp_string(jp *p, char **out)
{
	sbuf b = {0};
	*out = NULL;
	if (!jp_expect(p, '"'))
		return 0;
	sb_put(&b, "", 0);
	for (;;) {
		unsigned char c;
		if (p->i >= p->n) {
			free(b.p);
			return jp_fail(p, "unterminated string");
		}
		c = (unsigned char)p->s[p->i++];
		if (c == '"')
			break;
		if (c < 0x20) {
			free(b.p);
			return jp_fail(p, "control character in a string");
		}
		if (c != '\\') {
			sb_put(&b, (const char *)&c, 1);
			continue;
		}
		if (p->i >= p->n) {
			free(b.p);
			return jp_fail(p, "unterminated string");
		}
		c = (unsigned char)p->s[p->i++];
		switch (c) {
		case '"': case '\\': case '/':
			sb_put(&b, (const char *)&c, 1);
			break;
		case 'b': sb_put(&b, "\b", 1); break;
		case 'f': sb_put(&b, "\f", 1); break;
		case 'n': sb_put(&b, "\n", 1); break;
		case 'r': sb_put(&b, "\r", 1); break;
		case 't': sb_put(&b, "\t", 1); break;
		case 'u': {
			unsigned cp, lo;
			char u[4];
			int k;
			if (!jp_hex4(p, &cp)) {
				free(b.p);
				return 0;
			}
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				free(b.p);
				return jp_fail(p, "lone low surrogate in \\u escape");
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') {
					free(b.p);
					return jp_fail(p, "high surrogate without a low one");
				}
				p->i += 2;
				if (!jp_hex4(p, &lo)) {
					free(b.p);
					return 0;
				}
				if (lo < 0xdc00 || lo > 0xdfff) {
					free(b.p);
					return jp_fail(p, "high surrogate without a low one");
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			if (cp == 0) {
				free(b.p);
				return jp_fail(p, "\\u0000 in a string");
			}
			if (cp < 0x80) {
				u[0] = (char)cp;
				k = 1;
			} else if (cp < 0x800) {
				u[0] = (char)(0xc0 | (cp >> 6));
				u[1] = (char)(0x80 | (cp & 0x3f));
				k = 2;
			} else if (cp < 0x10000) {
				u[0] = (char)(0xe0 | (cp >> 12));
				u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
				u[2] = (char)(0x80 | (cp & 0x3f));
				k = 3;
			} else {
				u[0] = (char)(0xf0 | (cp >> 18));
				u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
				u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
				u[3] = (char)(0x80 | (cp & 0x3f));
				k = 4;
			}
			sb_put(&b, u, (size_t)k);
			break;
		}
		default:
			free(b.p);
			return jp_fail(p, "bad escape in a string");
		}
	}
	if (b.oom) {
		free(b.p);
		return jp_fail(p, "out of host memory");
	}
	*out = b.p;
	return 1;
}

/* A non-negative integer: digits only, no leading zeros, no sign, fraction or exponent. */
static int jp_uint(jp *p, uint64_t *out)
{
	uint64_t v = 0;
	size_t start;
	jp_ws(p);
	start = p->i;
	while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
		unsigned dgt = (unsigned)(p->s[p->i] - '0');
		if (v > (UINT64_MAX - dgt) / 10)
			return jp_fail(p, "integer too large");
		v = v * 10 + dgt;
		p->i++;
	}
	if (p->i == start)
		return jp_fail(p, "expected a non-negative integer");
	if (p->i - start > 1 && p->s[start] == '0')
		return jp_fail(p, "integer with a leading zero");
	if (p->i < p->n && (p->s[p->i] == '.' || p->s[p->i] == 'e' || p->s[p->i] == 'E'))
		return jp_fail(p, "expected an integer, found a fraction or exponent");
	*out = v;
	return 1;
}

/* [u, u, ...] with at most max entries. */
static int jp_uint_array(jp *p, uint64_t *v, int max, int *count)
{
	*count = 0;
	if (!jp_expect(p, '['))
		return 0;
	if (jp_peek(p) == ']') {
		p->i++;
		return 1;
	}
	for (;;) {
		uint64_t x;
		if (!jp_uint(p, &x))
			return 0;
		if (*count >= max)
			return jp_fail(p, "too many array entries");
		v[(*count)++] = x;
		if (jp_peek(p) == ',') {
			p->i++;
			continue;
		}
		return jp_expect(p, ']');
	}
}

/* ---- reader ------------------------------------------------------------------------------ */

typedef struct {
	clg_st_tensor t;
	uint64_t begin, end;
	void *own;
} st_item;

struct clg_st_file {
	st_item *items;
	int n, cap;
	char **mkey, **mval;
	int nmeta, capmeta;
	unsigned char *data;
};

void clg_st_close(clg_st_file *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->n; i++) {
		free((char *)f->items[i].t.name);
		free(f->items[i].own);
	}
	for (int i = 0; i < f->nmeta; i++) {
		free(f->mkey[i]);
		free(f->mval[i]);
	}
	free(f->items);
	free(f->mkey);
	free(f->mval);
	free(f->data);
	free(f);
}

static int name_taken(const clg_st_file *f, const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->items[i].t.name, name))
			return 1;
	return 0;
}

/* "__metadata__": {"key": "value", ...} */
static int parse_metadata(jp *p, clg_st_file *f)
{
	if (!jp_expect(p, '{'))
		return 0;
	if (jp_peek(p) == '}') {
		p->i++;
		return 1;
	}
	for (;;) {
		char *k = NULL, *v = NULL;
		if (jp_peek(p) != '"')
			return jp_fail(p, "expected a metadata key");
		if (!jp_string(p, &k))
			return 0;
		for (int i = 0; i < f->nmeta; i++)
			if (!strcmp(f->mkey[i], k)) {
				free(k);
				return jp_fail(p, "duplicate metadata key");
			}
		if (!jp_expect(p, ':') || jp_peek(p) != '"') {
			free(k);
			return jp_fail(p, "metadata values must be strings");
		}
		if (!jp_string(p, &v)) {
			free(k);
			return 0;
		}
		if (f->nmeta == f->capmeta) {
			int cap = f->capmeta ? 2 * f->capmeta : 8;
			char **pk = realloc(f->mkey, (size_t)cap * sizeof(*pk)), **pv;
			if (pk)
				f->mkey = pk;
			pv = pk ? realloc(f->mval, (size_t)cap * sizeof(*pv)) : NULL;
			if (pv)
				f->mval = pv;
			if (!pk || !pv) {
				free(k);
				free(v);
				return jp_fail(p, "out of host memory");
			}
			f->capmeta = cap;
		}
		f->mkey[f->nmeta] = k;
		f->mval[f->nmeta] = v;
		f->nmeta++;
		if (jp_peek(p) == ',') {
			p->i++;
			continue;
		}
		return jp_expect(p, '}');
	}
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

/* {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, each key exactly once, no others. */
static int parse_tensor(jp *p, st_item *it, int *unsupported, char *dtype_seen, size_t dtype_len)
{
	int have_dtype = 0, have_shape = 0, have_off = 0;
	if (!jp_expect(p, '{'))
		return 0;
	if (jp_peek(p) == '}')
		return jp_fail(p, "empty tensor entry");
	for (;;) {
		char *k = NULL;
		if (jp_peek(p) != '"')
			return jp_fail(p, "expected a key");
		if (!jp_string(p, &k))
			return 0;
		if (!jp_expect(p, ':')) {
			free(k);
			return 0;
		}
		if (!strcmp(k, "dtype") && !have_dtype) {
			char *v = NULL;
			free(k);
			if (jp_peek(p) != '"')
				return jp_fail(p, "dtype must be a string");
			if (!jp_string(p, &v))
				return 0;
			snprintf(dtype_seen, dtype_len, "%s", v);
			if (!dtype_of_name(v, &it->t.dtype))
				*unsupported = 1;
			free(v);
			have_dtype = 1;
		} else if (!strcmp(k, "shape") && !have_shape) {
			uint64_t v[CLG_MAX_DIMS];
			int n;
			free(k);
			if (!jp_uint_array(p, v, CLG_MAX_DIMS, &n))
				return 0;
			it->t.ndim = n;
			for (int d = 0; d < n; d++) {
				if (v[d] > ((uint64_t)1 << 50))
					return jp_fail(p, "shape entry too large");
				it->t.shape[d] = (int64_t)v[d];
			}
			have_shape = 1;
		} else if (!strcmp(k, "data_offsets") && !have_off) {
			uint64_t v[2];
			int n;
			free(k);
			if (!jp_uint_array(p, v, 2, &n))
				return 0;
			if (n != 2)
				return jp_fail(p, "data_offsets must hold exactly [begin, end]");
			it->begin = v[0];
			it->end = v[1];
			have_off = 1;
		} else {
			int dup = !strcmp(k, "dtype") || !strcmp(k, "shape") || !strcmp(k, "data_offsets");
			free(k);
			return jp_fail(p, dup ? "duplicate key in a tensor entry" : "unknown key in a tensor entry");
		}
		if (jp_peek(p) == ',') {
			p->i++;
			continue;
		}
		if (!jp_expect(p, '}'))
			return 0;
		if (!have_dtype || !have_shape || !have_off)
			return jp_fail(p, "a tensor entry lacks dtype, shape or data_offsets");
		return 1;
	}
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

/* Parses the header into f (tensor entries with offsets, metadata). */
static clg_status parse_header(const char *path, const char *hdr, size_t n, clg_st_file *f)
{
	jp p = {hdr, n, 0, path, ""};
	int have_meta = 0;

	if (n == 0 || hdr[0] != '{')
		return clg_fail(CLG_ERR_FORMAT, "%s: the safetensors header does not start with '{'", path);
	p.i = 1;
	if (jp_peek(&p) == '}') {
		p.i++;
		goto end;
	}
	for (;;) {
		char *key = NULL;
		if (jp_peek(&p) != '"') {
			jp_fail(&p, "expected a tensor name");
			goto bad;
		}
		if (!jp_string(&p, &key))
			goto bad;
		if (!jp_expect(&p, ':')) {
			free(key);
			goto bad;
		}
		if (!strcmp(key, "__metadata__")) {
			free(key);
			if (have_meta) {
				jp_fail(&p, "duplicate __metadata__");
				goto bad;
			}
			have_meta = 1;
			if (!parse_metadata(&p, f))
				goto bad;
		} else {
			st_item *it;
			int unsupported = 0;
			char dt[32] = "";
			if (name_taken(f, key)) {
				jp_fail(&p, "duplicate tensor name");
				clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: tensor '%.80s': %s", path, key, p.err);
				free(key);
				return CLG_ERR_FORMAT;
			}
			if (f->n == f->cap) {
				/* no more entries than the header has room for: a 100 MB header of tiny entries
				 * must not cost several times that */
				size_t most = n / ST_MIN_ENTRY + 1, cap = f->cap ? 2 * (size_t)f->cap : 16;
				st_item *q;
				if (cap > most)
					cap = most > (size_t)f->cap ? most : (size_t)f->cap + 1;
				q = realloc(f->items, cap * sizeof(*q));
				if (!q) {
					free(key);
					return clg_fail(CLG_ERR_OOM, "%s: out of host memory", path);
				}
				f->items = q;
				f->cap = (int)cap;
			}
			it = &f->items[f->n];
			memset(it, 0, sizeof(*it));
			it->t.name = key;
			f->n++;
			if (!parse_tensor(&p, it, &unsupported, dt, sizeof(dt))) {
				clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: tensor '%.80s': %s", path, key, p.err);
				return CLG_ERR_FORMAT;
			}
			if (unsupported)
				return clg_fail(CLG_ERR_DTYPE, "%s: tensor '%.80s' has dtype '%.20s' (clgrad reads F32, F64, I32, F16)",
						path, key, dt);
		}
		if (jp_peek(&p) == ',') {
			p.i++;
			continue;
		}
		if (!jp_expect(&p, '}'))
			goto bad;
		break;
	}
end:
	jp_ws(&p);
	if (p.i != n) {
		jp_fail(&p, "bytes after the header's JSON object");
		goto bad;
	}
	return CLG_OK;
bad:
	return clg_fail(CLG_ERR_FORMAT, "%s: bad safetensors header: %s", path, p.err[0] ? p.err : "malformed JSON");
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
	fp = fopen(path, "rb");
	if (!fp)
		return clg_fail(CLG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
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
