/* Fuzz target: plain text for a character-level language model (clg_text_load, clg_text_windows).
 * Input: two option bytes (the validation fraction in tenths; the window length 1..16), then the
 * file. */
#include "fuzz.h"

#include <clgrad_data.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	clg_text t;
	clg_dataset ds;
	clg_status st;
	int fd;

	if (size < 2 || size > (1 << 20))
		return 0;
	fd = fuzz_file(data + 2, size - 2, path, sizeof(path));
	if (fd < 0)
		return 0;
	st = clg_text_load(path, (data[0] % 10) / 10.0, &t);
	if (!st) {
		int64_t seq = 1 + data[1] % 16;
		FUZZ_REQUIRE(t.n == (int64_t)(size - 2) && t.n >= 2 && !memchr(data + 2, 0, size - 2),
			     "%lld ids from %zu bytes", (long long)t.n, size - 2);
		FUZZ_REQUIRE(t.vocab_size >= 1 && t.vocab_size <= 256 && t.n_train >= 1 && t.n_train <= t.n,
			     "vocabulary %d, %lld of %lld for training", t.vocab_size, (long long)t.n_train, (long long)t.n);
		for (int64_t i = 0; i < t.n; i++)
			FUZZ_REQUIRE(t.ids[i] >= 0 && t.ids[i] < t.vocab_size && t.vocab[t.ids[i]] == data[2 + i],
				     "id %lld is %d", (long long)i, t.ids[i]);
		for (int part = 0; part < 2; part++) {
			if (clg_text_windows(&t, part, seq, 1 + data[1] / 16, &ds) == CLG_OK) {
				FUZZ_REQUIRE(ds.n >= 1 && ds.xi && ds.y, "%lld windows", (long long)ds.n);
				clg_dataset_free(&ds);
			}
		}
		clg_text_free(&t);
		fuzz_accepted++;
	} else {
		FUZZ_REQUIRE(strstr(clg_last_error(), path), "the message does not name %s: %s", path, clg_last_error());
	}
	close(fd);
	return 0;
}
