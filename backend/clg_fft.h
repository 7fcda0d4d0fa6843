/* Which implementation runs the FFT ops on a device (clg_ops.def, FFT_*), for tools and benchmarks.
 * On OpenCL devices: clFFT for lengths of radices 2, 3, 5, 7, 11, 13; for others Bluestein's
 * chirp-z over clFFT, or where its work is small our direct-sum kernels; the latter for CLGRAD_FFT=own, and for plans whose clFFT kernels failed on the device (see
 * backend/opencl/cl_ops_fft.c). */
#ifndef CLG_FFT_H
#define CLG_FFT_H

#include "clg_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "clFFT", "clFFT planar", "Bluestein" (chirp-z over clFFT transforms of a power of two), "own
 * kernels", "unsupported" (CLGRAD_FFT=clfft and a length clFFT cannot do) or
 * "reference" for transform op (CLG_OP_FFT_*; for C2C the forward direction) of length n on be;
 * *why (may be NULL) gets the reason, e.g. that clFFT's kernels for it failed on this device. */
const char *clg_fft_path(clg_backend *be, clg_op op, int64_t n, const char **why);
/* The same for batch rows (lengths clFFT cannot do take the direct sum or Bluestein by n^2 batch;
 * clg_fft_path asks for one row). */
const char *clg_fft_path_batch(clg_backend *be, clg_op op, int64_t n, int64_t batch, const char **why);
/* The clFFT plans be made so far, one line each ("fft_c2c n=1024 batch=8 scale 1 single: clFFT"),
 * the path it runs on included, into buf; returns how many (0 on the reference backend). */
int clg_fft_plans(clg_backend *be, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
