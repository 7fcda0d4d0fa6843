/* CIFAR-10 binary batches: records of 1 label byte (0..9) and 3072 pixel bytes (the R, G and B
 * planes of a 32x32 image, row-major). data_batch_1..5.bin hold 10000 records each, test_batch.bin
 * 10000. A file must be a whole, non-zero number of records. */
#include "clgrad_data.h"
#include "fe_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REC_PIXELS 3072
#define REC_BYTES (1 + REC_PIXELS)

static clg_status file_records(const char *path, int64_t *nrec)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return clg_fail(CLG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return clg_fail(CLG_ERR_IO, "%s: not a regular file", path);
	if (sb.st_size == 0)
		return clg_fail(CLG_ERR_FORMAT, "%s: empty file (no CIFAR-10 records)", path);
	if (sb.st_size % REC_BYTES != 0)
		return clg_fail(CLG_ERR_FORMAT, "%s: truncated or padded: %lld bytes is not a whole number of %d-byte records",
				path, (long long)sb.st_size, REC_BYTES);
	*nrec = (int64_t)(sb.st_size / REC_BYTES);
	return CLG_OK;
}

/* Reads nrec records of path into x (floats in [0, 1]) and y. */
static clg_status read_records(const char *path, int64_t nrec, float *x, int32_t *y)
{
	FILE *f = clg_fopen_read(path, "rb");
	unsigned char rec[REC_BYTES];
	clg_status st = CLG_OK;

	if (!f)
		return clg_fail(CLG_ERR_IO, "%s: cannot open: %s%s", path, strerror(errno), clg_fault_note());
	for (int64_t r = 0; r < nrec; r++) {
		if (fread(rec, 1, REC_BYTES, f) != REC_BYTES) {
			st = ferror(f) ? clg_fail(CLG_ERR_IO, "%s: read error: %s", path, strerror(errno))
				       : clg_fail(CLG_ERR_FORMAT, "%s: truncated at record %" PRId64, path, r);
			goto out;
		}
		if (rec[0] > 9) {
			st = clg_fail(CLG_ERR_FORMAT, "%s: record %" PRId64 " has label %d (CIFAR-10 labels are 0..9)", path, r,
				      rec[0]);
			goto out;
		}
		y[r] = rec[0];
		for (int i = 0; i < REC_PIXELS; i++)
			x[r * REC_PIXELS + i] = (float)rec[1 + i] / 255.0f;
	}
	if (fgetc(f) != EOF)
		st = clg_fail(CLG_ERR_FORMAT, "%s: trailing bytes after %" PRId64 " records (the file grew while read)", path, nrec);
out:
	fclose(f);
	return st;
}

clg_status clg_cifar10_read_files(const char *const *paths, int npaths, clg_dataset *ds)
{
	static const int64_t shape[3] = {3, 32, 32};
	int64_t total = 0, at = 0, *counts;
	clg_status st;

	if (!ds)
		return clg_fail(CLG_ERR_INVALID, "cifar10: NULL dataset");
	memset(ds, 0, sizeof(*ds));
	if (!paths || npaths <= 0)
		return clg_fail(CLG_ERR_INVALID, "cifar10: no files given");
	counts = calloc((size_t)npaths, sizeof(*counts));
	if (!counts)
		return clg_fail(CLG_ERR_OOM, "cifar10: out of host memory");
	for (int i = 0; i < npaths; i++) {
		if (!paths[i]) {
			st = clg_fail(CLG_ERR_INVALID, "cifar10: file %d is NULL", i);
			goto out;
		}
		st = file_records(paths[i], &counts[i]);
		if (st)
			goto out;
		total += counts[i];
	}
	st = clg_dataset_init(ds, total, 3, shape, CLG_F32, 1);
	if (st)
		goto out;
	ds->num_classes = 10;
	for (int i = 0; i < npaths; i++) {
		st = read_records(paths[i], counts[i], ds->x + at * REC_PIXELS, ds->y + at);
		if (st) {
			clg_dataset_free(ds);
			goto out;
		}
		at += counts[i];
	}
out:
	free(counts);
	return st;
}

clg_status clg_dataset_load_cifar10(const char *dir, const char *split, clg_dataset *ds)
{
	char *paths[5] = {NULL};
	int n;
	size_t len;
	clg_status st = CLG_OK;

	if (!ds)
		return clg_fail(CLG_ERR_INVALID, "cifar10: NULL dataset");
	memset(ds, 0, sizeof(*ds));
	if (!dir || !split || (strcmp(split, "train") && strcmp(split, "test")))
		return clg_fail(CLG_ERR_INVALID, "cifar10: split '%s' (expected \"train\" or \"test\")", split ? split : "(null)");
	n = strcmp(split, "train") == 0 ? 5 : 1;
	len = strlen(dir) + 32;
	for (int i = 0; i < n; i++) {
		paths[i] = malloc(len);
		if (!paths[i]) {
			st = clg_fail(CLG_ERR_OOM, "cifar10: out of host memory");
			goto out;
		}
		if (n == 1)
			snprintf(paths[i], len, "%s/test_batch.bin", dir);
		else
			snprintf(paths[i], len, "%s/data_batch_%d.bin", dir, i + 1);
	}
	st = clg_cifar10_read_files((const char *const *)paths, n, ds);
out:
	for (int i = 0; i < n; i++)
		free(paths[i]);
	return st;
}
