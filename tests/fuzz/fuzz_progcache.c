/* Fuzz target: a program-cache entry read from disk (clg_cl_cache_entry_check, the test before a
 * binary reaches the driver). Input: one option byte (bit 0: expect the key the header holds;
 * bit 1: put the payload's right size and hash into the header, so that later checks are
 * reached), then the entry. */
#include "fuzz.h"

#include "cl_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t key[2] = {0x1234, 0x5678}, v;
	char *e;
	const char *why;

	if (size < 1 || size > (1 << 20))
		return 0;
	e = malloc(size);
	if (!e)
		return 0;
	memcpy(e, data + 1, size - 1);
	size--;
	if (size >= 48 && (data[0] & 1))
		memcpy(key, e + 16, sizeof(key));
	if (size >= 48 && (data[0] & 2)) {
		v = size - 48;
		memcpy(e + 32, &v, 8);
		v = clg_hash64(CLG_HASH_SEED, e + 48, size - 48);
		memcpy(e + 40, &v, 8);
	}
	why = clg_cl_cache_entry_check(e, size, key);
	if (!why) {
		memcpy(&v, e + 32, 8);
		FUZZ_REQUIRE(size >= 48 && v == size - 48, "accepted a %zu-byte entry announcing %llu bytes", size,
			     (unsigned long long)v);
		FUZZ_REQUIRE(!memcmp(e + 16, key, sizeof(key)), "accepted another key");
		fuzz_accepted++;
	}
	free(e);
	return 0;
}
