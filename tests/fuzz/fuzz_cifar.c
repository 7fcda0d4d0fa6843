/* Fuzz target: CIFAR-10 binary batches (clg_cifar10_read_files).
 * Input: one option byte (bit 0: the rest is split in two files at its middle), then the data. */
#include "fuzz.h"

#include <clgrad_data.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[2][64];
	const char *paths[2] = {path[0], path[1]};
	size_t len[2], at = 0;
	int fd[2] = {-1, -1}, nfiles;
	clg_dataset ds;
	clg_status st;

	if (size < 1 || size > (1 << 20))
		return 0;
	nfiles = (data[0] & 1) + 1;
	len[0] = nfiles == 2 ? (size - 1) / 2 : size - 1;
	len[1] = size - 1 - len[0];
	for (int i = 0; i < nfiles; i++) {
		fd[i] = fuzz_file(data + 1 + at, len[i], path[i], sizeof(path[i]));
		at += len[i];
		if (fd[i] < 0)
			goto out;
	}
	st = clg_cifar10_read_files(paths, nfiles, &ds);
	if (!st) {
		FUZZ_REQUIRE((uint64_t)ds.n * 3073 == size - 1 && ds.num_classes == 10 && ds.x && ds.y,
			     "%lld records from %zu bytes", (long long)ds.n, size - 1);
		for (int64_t i = 0; i < ds.n; i++)
			FUZZ_REQUIRE(ds.y[i] >= 0 && ds.y[i] <= 9, "label %lld is %d", (long long)i, ds.y[i]);
		for (int64_t i = 0; i < ds.n * 3072; i++)
			FUZZ_REQUIRE(ds.x[i] >= 0.0f && ds.x[i] <= 1.0f, "pixel %lld is %g", (long long)i, ds.x[i]);
		clg_dataset_free(&ds);
		fuzz_accepted++;
	} else {
		FUZZ_REQUIRE(strstr(clg_last_error(), path[0]) || (nfiles == 2 && strstr(clg_last_error(), path[1])),
			     "the message names no file: %s", clg_last_error());
	}
out:
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return 0;
}
