/* Fuzz target: tokenizers (clgrad_tokenizer.h). Input: a mode byte, then the rest.
 *   mode even: the rest is a serialised tokenizer (clg_tokenizer_from_string); one accepted must
 *              encode and decode a probe of every byte it covers, and serialise back to the input.
 *   mode odd:  the rest is a text; a BPE of 257 + (mode >> 1) * 4 tokens learned from it must
 *              encode it and decode it back byte for byte, in at most one token a byte. */
#include "fuzz.h"

#include <clgrad_tokenizer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void round_trip(const clg_tokenizer *t, const char *s, size_t n)
{
	int32_t *ids = malloc((n ? n : 1) * sizeof(int32_t));
	char *back = NULL;
	size_t m = 0, blen = 0;
	FUZZ_REQUIRE(ids, "out of memory");
	FUZZ_REQUIRE(clg_tokenizer_encode(t, s, n, ids, &m) == CLG_OK, "encode: %s", clg_last_error());
	FUZZ_REQUIRE(m <= n, "%zu tokens for %zu bytes", m, n);
	FUZZ_REQUIRE(clg_tokenizer_decode(t, ids, m, &back, &blen) == CLG_OK, "decode: %s", clg_last_error());
	FUZZ_REQUIRE(blen == n && !memcmp(back, s, n), "the round trip differs (%zu bytes of %zu)", blen, n);
	free(back);
	free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	clg_tokenizer *t = NULL;
	char *s;

	if (size < 1 || size > (1 << 16))
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	if (data[0] % 2 == 0) {
		if (clg_tokenizer_from_string(s, &t) == CLG_OK) {
			char probe[256], *again = NULL;
			size_t k = 0;
			for (int b = 0; b < 256; b++)
				if (clg_tokenizer_covers(t, (const char *)&(unsigned char){(unsigned char)b}, 1, NULL))
					probe[k++] = (char)b;
			round_trip(t, probe, k);
			FUZZ_REQUIRE(clg_tokenizer_to_string(t, &again) == CLG_OK && !strcmp(again, s),
				     "serialised back as another string");
			free(again);
			clg_tokenizer_free(t);
			fuzz_accepted++;
		} else {
			FUZZ_REQUIRE(!t && clg_last_error()[0], "a refusal without a message");
		}
	} else if (clg_tokenizer_bpe_learn(s, size - 1, 257 + (data[0] >> 1) * 4, &t) == CLG_OK) {
		FUZZ_REQUIRE(clg_tokenizer_vocab_size(t) >= 257 && clg_tokenizer_vocab_size(t) <= 257 + (data[0] >> 1) * 4,
			     "%d tokens", clg_tokenizer_vocab_size(t));
		round_trip(t, s, size - 1);
		clg_tokenizer_free(t);
		fuzz_accepted++;
	} else {
		FUZZ_REQUIRE(!t && clg_last_error()[0], "a refusal without a message");
	}
	free(s);
	return 0;
}
