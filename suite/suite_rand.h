/* The suites' deterministic input numbers (the same generator as tests/test_util.c's
 * t_fill_uniform, so that cases see the numbers they always saw). */
#ifndef CLG_SUITE_RAND_H
#define CLG_SUITE_RAND_H

#include <stddef.h>
#include <stdint.h>

/* Uniform numbers in [lo, hi) from an xorshift64 stream seeded by seed (any seed: widened before
 * the + 1, so UINT_MAX does not give the all-zero state that xorshift never leaves). */
static inline void suite_fill_uniform(float *x, size_t n, unsigned seed, float lo, float hi)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL * ((uint64_t)seed + 1);
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		x[i] = lo + (hi - lo) * (float)((s >> 40) * (1.0 / 16777216.0));
	}
}

#endif
