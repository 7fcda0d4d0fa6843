/* IEEE 754 binary16 (float16) <-> binary32 conversions on the host, bit for bit what an OpenCL
 * device's vload_half / vstore_half_rte do: float to half rounds to nearest, ties to even; half
 * subnormals, signed zeros, infinities and NaN are kept (a NaN stays a NaN, quiet, with the top
 * bits of its payload). The reference backend stores float16 through these, and users convert
 * their host data with them. */
#include "clg_backend.h"

#include <string.h>

float clg_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
	float f;

	if (e == 0x1f) {              /* inf or NaN: the payload moves to the top of float's */
		x = sign | 0x7f800000u | (m << 13);
	} else if (e != 0) {          /* normal: rebias the exponent (15 -> 127) */
		x = sign | ((e + 112u) << 23) | (m << 13);
	} else if (m == 0) {          /* signed zero */
		x = sign;
	} else {                      /* subnormal m * 2^-24: normalise (a normal float) */
		e = 113;
		while (!(m & 0x400u)) {
			m <<= 1;
			e--;
		}
		x = sign | (e << 23) | ((m & 0x3ffu) << 13);
	}
	memcpy(&f, &x, sizeof(f));
	return f;
}

uint16_t clg_float_to_half(float f)
{
	uint32_t x, ax, sign, r, rem, half;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000u;
	ax = x & 0x7fffffffu;
	if (ax >= 0x7f800000u) {      /* inf, or NaN kept quiet with its payload's top bits */
		if (ax == 0x7f800000u)
			return (uint16_t)(sign | 0x7c00u);
		return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
	}
	if (ax >= 0x477ff000u)        /* >= 65520 = 65504 + half an ulp: the tie goes to inf (even) */
		return (uint16_t)(sign | 0x7c00u);
	if (ax >= 0x38800000u) {      /* >= 2^-14: a normal half; drop 13 bits, round to nearest even */
		r = (ax >> 13) - (112u << 10);
		rem = ax & 0x1fffu;
		if (rem > 0x1000u || (rem == 0x1000u && (r & 1u)))
			r++;          /* a carry into the exponent is right (up to 65504, below) */
		return (uint16_t)(sign | r);
	}
	if (ax <= 0x33000000u)        /* <= 2^-25, half the smallest subnormal: rounds to (even) zero */
		return (uint16_t)sign;
	/* a subnormal half k * 2^-24: k = mantissa (with its implicit bit) >> (126 - exponent), with
	 * 14 <= shift <= 24; rounding up from the largest subnormal gives the smallest normal */
	{
		uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
		r = m >> shift;
		rem = m & ((1u << shift) - 1u);
		half = 1u << (shift - 1u);
		if (rem > half || (rem == half && (r & 1u)))
			r++;
		return (uint16_t)(sign | r);
	}
}

/* bfloat16: float32's top 16 bits, rounded to nearest even (the carry may round up to inf, as
 * IEEE rounding does); a NaN keeps its sign and top payload bits and is made quiet. The OpenCL
 * prelude's bf16_store does the same, bit for bit. */
float clg_bf16_to_float(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;
	memcpy(&f, &x, sizeof(f));
	return f;
}

uint16_t clg_float_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN */
		return (uint16_t)((x >> 16) | 0x40u);
	return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
