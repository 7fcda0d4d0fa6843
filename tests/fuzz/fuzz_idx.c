/* Fuzz target: IDX images and labels, plain or gzip (clg_idx_read_images / _labels).
 * Input: one flag byte (bit 0: labels, else images; bit 1: gzip the rest), then the file. */
#define _GNU_SOURCE
#include "fuzz.h"

#include <clgrad_data.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* The rest of the input gzip-compressed into fd (so that the fuzzer reaches the gzip path). */
static int gzip_into(int fd, const uint8_t *data, size_t size)
{
	gzFile g = gzdopen(dup(fd), "wb");
	int ok = g && (size == 0 || gzwrite(g, data, (unsigned)size) == (int)size);
	if (g && gzclose(g) != Z_OK)
		ok = 0;
	return ok ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd, labels, gz;
	clg_status st;

	if (size < 1 || size > (1 << 20))
		return 0;
	labels = data[0] & 1;
	gz = data[0] & 2;
	fd = fuzz_file(gz ? NULL : data + 1, gz ? 0 : size - 1, path, sizeof(path));
	if (fd < 0)
		return 0;
	if (gz && gzip_into(fd, data + 1, size - 1)) {
		close(fd);
		return 0;
	}
	if (labels) {
		int32_t *y = NULL;
		int64_t n = -1;
		st = clg_idx_read_labels(path, &y, &n);
		if (!st) {
			FUZZ_REQUIRE(y && n >= 0 && (uint64_t)n <= size * 1032ull, "labels: n %lld", (long long)n);
			for (int64_t i = 0; i < n; i++)
				FUZZ_REQUIRE(y[i] >= 0 && y[i] <= 255, "label %lld is %d", (long long)i, y[i]);
		}
		free(y);
	} else {
		float *x = NULL;
		int64_t n = -1, rows = -1, cols = -1;
		st = clg_idx_read_images(path, &x, &n, &rows, &cols);
		if (!st) {
			FUZZ_REQUIRE(x && n >= 0 && rows > 0 && cols > 0, "images: %lld x %lld x %lld", (long long)n,
				     (long long)rows, (long long)cols);
			for (int64_t i = 0; i < n * rows * cols; i++)
				FUZZ_REQUIRE(x[i] >= 0.0f && x[i] <= 1.0f, "pixel %lld is %g", (long long)i, x[i]);
		}
		free(x);
	}
	fuzz_accepted += !st;
	FUZZ_REQUIRE(!st || strstr(clg_last_error(), path), "the message does not name %s: %s", path, clg_last_error());
	close(fd);
	return 0;
}
