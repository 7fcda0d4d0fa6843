/* Fuzz target: safetensors files (clg_st_open, then every tensor and metadata entry read).
 * Input: the file. */
#include "fuzz.h"

#include <clgrad_safetensors.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	clg_st_file *f = NULL;
	clg_status st;
	int fd;

	if (size > (1 << 20))
		return 0;
	fd = fuzz_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	st = clg_st_open(path, &f);
	if (!st) {
		uint64_t total = 0;
		FUZZ_REQUIRE(f != NULL, "no file");
		for (int i = 0; i < clg_st_count(f); i++) {
			const clg_st_tensor *t = clg_st_at(f, i);
			int64_t numel = 1;
			unsigned char sum = 0;
			FUZZ_REQUIRE(t && t->name && t->ndim >= 0 && t->ndim <= CLG_MAX_DIMS, "tensor %d", i);
			for (int d = 0; d < t->ndim; d++)
				numel *= t->shape[d];
			FUZZ_REQUIRE(numel == t->numel && t->nbytes == (size_t)numel * clg_dtype_size(t->dtype),
				     "tensor '%s': numel %lld, %zu bytes", t->name, (long long)t->numel, t->nbytes);
			FUZZ_REQUIRE(clg_st_find(f, t->name) == t, "tensor '%s' not found by name", t->name);
			for (size_t b = 0; b < t->nbytes; b++) /* every byte readable (ASan) */
				sum ^= ((const unsigned char *)t->data)[b];
			(void)sum;
			total += t->nbytes;
		}
		FUZZ_REQUIRE(total <= size, "%llu tensor bytes in a %zu-byte file", (unsigned long long)total, size);
		for (int i = 0; i < clg_st_meta_count(f); i++) {
			const char *k = NULL, *v = NULL;
			FUZZ_REQUIRE(clg_st_meta_at(f, i, &k, &v) == CLG_OK && k && v && clg_st_meta(f, k) == v,
				     "metadata %d", i);
		}
		fuzz_accepted++;
	} else {
		FUZZ_REQUIRE(!f, "a failed open returned a file");
		FUZZ_REQUIRE(strstr(clg_last_error(), path), "the message does not name %s: %s", path, clg_last_error());
	}
	clg_st_close(f);
	close(fd);
	return 0;
}
