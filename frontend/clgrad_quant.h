/* clgrad: block-wise absmax int8 quantization (included by clgrad_train.h), as the data-parallel
 * trainer compresses gradients with it. No gradients flow through these (compression, not a layer).
 * A block of `block` consecutive values shares one float scale (max |x| / 127); each value is a
 * signed byte rint(x / scale), four packed per int32 (byte k % 4 of element k / 4, lowest first). */
#ifndef CLGRAD_QUANT_H
#define CLGRAD_QUANT_H

#include "clgrad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x (any shape, contiguous, n values) -> scales (ceil(n / block)) */
clg_tensor *clg_int8_scales(clg_tensor *x, int64_t block);
/* x (n values), scales -> int32 (ceil(n / 4)) of packed bytes */
clg_tensor *clg_int8_quantize(clg_tensor *x, clg_tensor *scales, int64_t block);
/* packed (ceil(n / 4)), scales -> float32 (n) */
clg_tensor *clg_int8_dequantize(clg_tensor *packed, clg_tensor *scales, int64_t n, int64_t block);

#ifdef __cplusplus
}
#endif
#endif
