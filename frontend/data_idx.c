/* IDX files (MNIST, Fashion-MNIST), plain or gzip: a big-endian header (magic 0x0000TTNN with
 * type TT = 0x08 for unsigned bytes and NN dims, then NN 32-bit sizes) and the raw data. The file
 * must hold exactly header + data bytes: a short file or bytes after the data are errors. */
#include "clgrad_data.h"
#include "fe_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* Reads a plain or gzip file through one interface. */
typedef struct {
	const char *path;
	FILE *f;
	gzFile gz;
} idx_in;

static clg_status in_open(idx_in *in, const char *path)
{
	unsigned char m[2] = {0, 0};
	size_t got;

	memset(in, 0, sizeof(*in));
	in->path = path;
	in->f = clg_fopen_read(path, "rb");
	if (!in->f)
		return clg_fail(CLG_ERR_IO, "%s: cannot open: %s%s", path, strerror(errno), clg_fault_note());
	got = fread(m, 1, 2, in->f);
	if (got == 2 && m[0] == 0x1f && m[1] == 0x8b) { /* gzip magic */
		fclose(in->f);
		in->f = NULL;
		in->gz = gzopen(path, "rb");
		if (!in->gz)
			return clg_fail(CLG_ERR_IO, "%s: cannot open as gzip: %s", path, errno ? strerror(errno) : "out of memory");
		gzbuffer(in->gz, 1 << 17);
		return CLG_OK;
	}
	if (ferror(in->f) || fseek(in->f, 0, SEEK_SET) != 0) {
		clg_status st = clg_fail(CLG_ERR_IO, "%s: read error: %s", path, strerror(errno));
		fclose(in->f);
		in->f = NULL;
		return st;
	}
	return CLG_OK;
}

static void in_close(idx_in *in)
{
	if (in->f)
		fclose(in->f);
	if (in->gz)
		gzclose(in->gz);
	in->f = NULL;
	in->gz = NULL;
}

/* Reads up to n bytes; *got says how many (fewer only at the end of the data). */
static clg_status in_read(idx_in *in, void *buf, size_t n, size_t *got)
{
	*got = 0;
	if (in->f) {
		*got = fread(buf, 1, n, in->f);
		if (*got < n && ferror(in->f))
			return clg_fail(CLG_ERR_IO, "%s: read error: %s", in->path, strerror(errno));
		return CLG_OK;
	}
	while (*got < n) {
		size_t chunk = n - *got > (1u << 30) ? (1u << 30) : n - *got;
		int r = gzread(in->gz, (unsigned char *)buf + *got, (unsigned)chunk);
		int zerr = Z_OK;
		const char *msg = gzerror(in->gz, &zerr);
		if (r < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
			if (zerr == Z_ERRNO)
				return clg_fail(CLG_ERR_IO, "%s: read error: %s", in->path, strerror(errno));
			return clg_fail(CLG_ERR_FORMAT, "%s: truncated or corrupt gzip stream (%s)", in->path, msg ? msg : "?");
		}
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	return CLG_OK;
}

/* Deflate expands at most 1032:1: a gzip file of n bytes holds less than this many. */
#define GZ_MAX_RATIO 1032

/* "60000 x 28 x 28 = 47040000" */
static void dims_str(char *buf, size_t len, int ndims, const uint32_t *dims, uint64_t total)
{
	size_t at = 0;
	for (int d = 0; d < ndims && at < len; d++)
		at += (size_t)snprintf(buf + at, len - at, "%s%" PRIu32, d ? " x " : "", dims[d]);
	if (at < len && ndims > 1 && total)
		snprintf(buf + at, len - at, " = %" PRIu64, total);
}

/* The announced data against the file's size: exactly what a plain file holds after the header,
 * at most what a gzip file can expand to. */
static clg_status check_size(idx_in *in, int ndims, const uint32_t *dims, uint64_t total)
{
	struct stat sb;
	uint64_t size, hdr = 4 + 4 * (uint64_t)ndims;
	char d[96];

	if (in->f ? fstat(fileno(in->f), &sb) : stat(in->path, &sb))
		return clg_fail(CLG_ERR_IO, "%s: cannot stat: %s", in->path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return CLG_OK; /* a pipe: the reads below find a short or long stream */
	size = (uint64_t)sb.st_size;
	if (in->f && size < hdr)
		size = hdr; /* it shrank after the header was read: "holds 0" */
	dims_str(d, sizeof(d), ndims, dims, total);
	if (in->f && size - hdr < total)
		return clg_fail(CLG_ERR_FORMAT, "%s: truncated: the header announces %s data bytes but the file holds %" PRIu64
				" after the %" PRIu64 "-byte header", in->path, d, size - hdr, hdr);
	if (in->f && size - hdr > total)
		return clg_fail(CLG_ERR_FORMAT, "%s: trailing bytes: the header announces %s data bytes but the file holds %"
				PRIu64 " after the %" PRIu64 "-byte header", in->path, d, size - hdr, hdr);
	if (in->gz && total > size * GZ_MAX_RATIO)
		return clg_fail(CLG_ERR_FORMAT, "%s: truncated or corrupt: the header announces %s data bytes, more than a %"
				PRIu64 "-byte gzip file can hold (deflate expands at most %d:1)", in->path, d, size, GZ_MAX_RATIO);
	return CLG_OK;
}

/* The total data bytes; a gzip stream's buffer grows with the data that actually arrives, so a
 * stream shorter than its header says never costs the announced size. */
static clg_status read_data(idx_in *in, uint64_t total, uint8_t **out)
{
	uint64_t cap = in->gz && total > (64u << 20) ? (64u << 20) : total, have = 0;
	uint8_t *buf = malloc(cap ? (size_t)cap : 1);
	clg_status st = CLG_OK;

	*out = NULL;
	for (;;) {
		size_t got;
		if (!buf) {
			st = clg_fail(CLG_ERR_OOM, "%s: out of host memory for %" PRIu64 " bytes", in->path, cap);
			break;
		}
		st = in_read(in, buf + have, (size_t)(cap - have), &got);
		if (st)
			break;
		have += got;
		if (have < cap) {
			st = clg_fail(CLG_ERR_FORMAT, "%s: truncated: the header announces %" PRIu64 " data bytes but only %"
				      PRIu64 " follow", in->path, total, have);
			break;
		}
		if (have == total) {
			*out = buf;
			return CLG_OK;
		}
		cap = 2 * cap < total ? 2 * cap : total;
		{
			uint8_t *b2 = realloc(buf, (size_t)cap);
			if (!b2)
				free(buf);
			buf = b2;
		}
	}
	free(buf);
	return st;
}

/* Reads an IDX file of unsigned bytes with the given magic and number of dims. */
static clg_status idx_read(const char *path, uint32_t want_magic, const char *kind, uint32_t *dims, uint8_t **data,
			   uint64_t *ndata)
{
	idx_in in;
	unsigned char hdr[4 + 4 * 3], extra;
	int ndims = (int)(want_magic & 0xff);
	uint32_t magic;
	uint64_t total = 1, bound = 1;
	size_t got;
	uint8_t *buf = NULL;
	clg_status st;

	*data = NULL;
	*ndata = 0;
	st = in_open(&in, path);
	if (st)
		return st;
	st = in_read(&in, hdr, 4, &got);
	if (st)
		goto out_close;
	if (got < 4) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: truncated: %zu bytes, shorter than the 4-byte IDX magic", path, got);
		goto out_close;
	}
	magic = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	if (magic != want_magic) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: wrong magic 0x%08" PRIx32 " (expected 0x%08" PRIx32 " for an IDX %s file)",
			      path, magic, want_magic, kind);
		goto out_close;
	}
	st = in_read(&in, hdr + 4, 4 * (size_t)ndims, &got);
	if (st)
		goto out_close;
	if (got < 4 * (size_t)ndims) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: truncated header: %zu of %d dimension bytes", path, got, 4 * ndims);
		goto out_close;
	}
	for (int d = 0; d < ndims; d++) {
		const unsigned char *p = hdr + 4 + 4 * d;
		dims[d] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		if (d > 0 && dims[d] == 0) {
			st = clg_fail(CLG_ERR_FORMAT, "%s: dimension %d is 0", path, d);
			goto out_close;
		}
	}
	for (int d = 0; d < ndims; d++) { /* checked before each product: 3 sizes of 32 bits overflow 64 */
		if (dims[d] && bound > ((uint64_t)1 << 40) / dims[d]) {
			char dd[96];
			dims_str(dd, sizeof(dd), ndims, dims, 0);
			st = clg_fail(CLG_ERR_FORMAT, "%s: dimensions %s too large (more than 2^40 bytes of data)", path, dd);
			goto out_close;
		}
		bound *= dims[d] ? dims[d] : 1;
		total *= dims[d];
	}
	/* the data the header announces must fit in the file before a byte of it is allocated */
	st = check_size(&in, ndims, dims, total);
	if (st)
		goto out_close;
	st = read_data(&in, total, &buf);
	if (st)
		goto out_close;
	st = in_read(&in, &extra, 1, &got);
	if (st)
		goto out_free;
	if (got) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: trailing bytes after the %" PRIu64 " data bytes the header announces", path,
			      total);
		goto out_free;
	}
	in_close(&in);
	*data = buf;
	*ndata = total;
	return CLG_OK;
out_free:
	free(buf);
out_close:
	in_close(&in);
	return st;
}

clg_status clg_idx_read_images(const char *path, float **x, int64_t *n, int64_t *rows, int64_t *cols)
{
	uint32_t dims[3];
	uint8_t *raw;
	uint64_t total;
	float *out;
	clg_status st;

	if (!path || !x || !n || !rows || !cols)
		return clg_fail(CLG_ERR_INVALID, "idx images: NULL argument");
	*x = NULL;
	st = idx_read(path, 0x00000803u, "images", dims, &raw, &total);
	if (st)
		return st;
	out = malloc((total ? (size_t)total : 1) * sizeof(float));
	if (!out) {
		free(raw);
		return clg_fail(CLG_ERR_OOM, "%s: out of host memory for %" PRIu64 " floats", path, total);
	}
	for (uint64_t i = 0; i < total; i++)
		out[i] = (float)raw[i] / 255.0f;
	free(raw);
	*x = out;
	*n = dims[0];
	*rows = dims[1];
	*cols = dims[2];
	return CLG_OK;
}

clg_status clg_idx_read_labels(const char *path, int32_t **y, int64_t *n)
{
	uint32_t dims[1];
	uint8_t *raw;
	uint64_t total;
	int32_t *out;
	clg_status st;

	if (!path || !y || !n)
		return clg_fail(CLG_ERR_INVALID, "idx labels: NULL argument");
	*y = NULL;
	st = idx_read(path, 0x00000801u, "labels", dims, &raw, &total);
	if (st)
		return st;
	out = malloc((total ? (size_t)total : 1) * sizeof(int32_t));
	if (!out) {
		free(raw);
		return clg_fail(CLG_ERR_OOM, "%s: out of host memory for %" PRIu64 " labels", path, total);
	}
	for (uint64_t i = 0; i < total; i++)
		out[i] = raw[i];
	free(raw);
	*y = out;
	*n = dims[0];
	return CLG_OK;
}

/* <dir>/<stem>, else <dir>/<stem>.gz; *path is malloc'ed. */
static clg_status find_file(const char *dir, const char *split, const char *suffix, char **path)
{
	static const char *const ext[2] = {"", ".gz"};
	struct stat sb;
	size_t len = strlen(dir) + strlen(split) + strlen(suffix) + 8;

	for (int i = 0; i < 2; i++) {
		char *p = malloc(len);
		if (!p)
			return clg_fail(CLG_ERR_OOM, "idx dataset: out of host memory");
		snprintf(p, len, "%s/%s%s%s", dir, split, suffix, ext[i]);
		if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
			*path = p;
			return CLG_OK;
		}
		free(p);
	}
	return clg_fail(CLG_ERR_IO, "%s/%s%s: not found (nor with .gz)", dir, split, suffix);
}

clg_status clg_dataset_load_idx(const char *dir, const char *split, clg_dataset *ds)
{
	char *ipath = NULL, *lpath = NULL;
	float *x = NULL;
	int32_t *y = NULL;
	int64_t n, nl, rows, cols;
	int32_t maxl = -1;
	clg_status st;

	if (!ds)
		return clg_fail(CLG_ERR_INVALID, "idx dataset: NULL dataset");
	memset(ds, 0, sizeof(*ds));
	if (!dir || !split || !*split || strchr(split, '/'))
		return clg_fail(CLG_ERR_INVALID, "idx dataset: bad folder or split name '%s'", split ? split : "(null)");
	st = find_file(dir, split, "-images-idx3-ubyte", &ipath);
	if (st)
		goto out;
	st = find_file(dir, split, "-labels-idx1-ubyte", &lpath);
	if (st)
		goto out;
	st = clg_idx_read_images(ipath, &x, &n, &rows, &cols);
	if (st)
		goto out;
	st = clg_idx_read_labels(lpath, &y, &nl);
	if (st)
		goto out;
	if (n != nl) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: %" PRId64 " labels, but %s holds %" PRId64 " images", lpath, nl, ipath, n);
		goto out;
	}
	for (int64_t i = 0; i < n; i++)
		maxl = y[i] > maxl ? y[i] : maxl;
	ds->n = n;
	ds->ndim = 3;
	ds->shape[0] = 1;
	ds->shape[1] = rows;
	ds->shape[2] = cols;
	ds->sample_numel = rows * cols;
	ds->x_dtype = CLG_F32;
	ds->x = x;
	ds->y_numel = 1;
	ds->y = y;
	ds->num_classes = maxl + 1;
	x = NULL;
	y = NULL;
out:
	free(x);
	free(y);
	free(ipath);
	free(lpath);
	return st;
}
