/* Fuzz target: CSV files of numbers (clg_csv_read).
 * Input: one option byte (bits 0-1: delimiter , ; tab space; bits 2-3: header auto, no, yes;
 * bits 4-6: label column 0..6, 7 for none), then the file. */
#include "fuzz.h"

#include <clgrad_data.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char delims[4] = {',', ';', '\t', ' '};
	static const int headers[4] = {-1, 0, 1, -1};
	char path[64];
	clg_csv_opts o;
	clg_dataset ds;
	clg_status st;
	int fd;

	if (size < 1 || size > (1 << 20))
		return 0;
	o.delim = delims[data[0] & 3];
	o.header = headers[(data[0] >> 2) & 3];
	o.label_col = (data[0] >> 4 & 7) == 7 ? CLG_CSV_NO_LABEL : data[0] >> 4 & 7;
	fd = fuzz_file(data + 1, size - 1, path, sizeof(path));
	if (fd < 0)
		return 0;
	st = clg_csv_read(path, &o, &ds);
	if (!st) {
		FUZZ_REQUIRE(ds.n > 0 && ds.sample_numel > 0 && ds.x && (uint64_t)(ds.n * ds.sample_numel) <= size,
			     "%lld rows of %lld", (long long)ds.n, (long long)ds.sample_numel);
		for (int64_t i = 0; i < ds.n * ds.sample_numel; i++)
			FUZZ_REQUIRE(isfinite(ds.x[i]), "value %lld is %g", (long long)i, ds.x[i]);
		FUZZ_REQUIRE((o.label_col == CLG_CSV_NO_LABEL) == !ds.y, "labels present: %d", ds.y != NULL);
		for (int64_t i = 0; ds.y && i < ds.n; i++)
			FUZZ_REQUIRE(ds.y[i] >= 0 && ds.y[i] < ds.num_classes, "label %lld is %d of %d classes", (long long)i,
				     ds.y[i], ds.num_classes);
		clg_dataset_free(&ds);
		fuzz_accepted++;
	} else {
		FUZZ_REQUIRE(strstr(clg_last_error(), path), "the message does not name %s: %s", path, clg_last_error());
	}
	close(fd);
	return 0;
}
