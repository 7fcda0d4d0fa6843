/* The operand rules of the FFT ops (clg_ops.def, FFT_* and COMPLEX_MUL), shared by every backend. */
#ifndef CLG_FFT_INTERNAL_H
#define CLG_FFT_INTERNAL_H

#include "clg_internal.h"

/* The geometry of a checked FFT call: transform length n (the real length for R2C / C2R), batch
 * (the product of the leading dims), nb leading dims. */
typedef struct {
	int64_t n, bins, batch; /* bins: n for C2C, n / 2 + 1 for R2C / C2R */
	int nb;
} clg_fft_geom;

/* Checks an FFT_* or COMPLEX_MUL call: float32 or float64, the shapes of clg_ops.def, a finite
 * scale, i[0] 0 or 1. Fails with CLG_ERR_SHAPE / CLG_ERR_DTYPE / CLG_ERR_INVALID naming op, device
 * and shapes. g may be NULL (COMPLEX_MUL fills nothing). */
clg_status clg_fft_check(clg_backend *be, const clg_op_call *c, clg_fft_geom *g);

/* Whether n factors into 2, 3, 5, 7, 11 and 13 only (the radices clFFT implements). */
int clg_fft_radices_ok(int64_t n);

#endif
