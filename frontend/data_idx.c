/* IDX files (MNIST, Fashion-MNIST), plain or gzip: a big-endian header (magic 0x0000TTNN with
 * type TT = 0x08 for unsigned bytes and NN dims, then NN 32-bit sizes) and the raw data. The file
 * must hold exactly header + data bytes: a short file or bytes after the data are errors. */
#include "data.h"
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
	in->f = fopen(path, "rb");
	if (!in->f)
		return clg_fail(CLG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
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

/* Reads an IDX file of unsigned bytes with the given magic and number of dims. */
static clg_status idx_read(const char *path, uint32_t want_magic, const char *kind, uint32_t *dims, uint8_t **data,
			   uint64_t *ndata)
{
	idx_in in;
	unsigned char hdr[4 + 4 * 3], extra;
	int ndims = (int)(want_magic & 0xff);
	uint32_t magic;
	uint64_t total = 1;
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
		total *= dims[d];
		if (total > ((uint64_t)1 << 40)) {
			st = clg_fail(CLG_ERR_FORMAT, "%s: dimensions too large (more than 2^40 bytes of data)", path);
			goto out_close;
		}
	}
	buf = malloc(total ? (size_t)total : 1);
	if (!buf) {
		st = clg_fail(CLG_ERR_OOM, "%s: out of host memory for %" PRIu64 " bytes", path, total);
		goto out_close;
	}
	st = in_read(&in, buf, (size_t)total, &got);
	if (st)
		goto out_free;
	if (got < total) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: truncated: the header announces %" PRIu64 " data bytes but only %zu follow",
			      path, total, got);
		goto out_free;
	}
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
