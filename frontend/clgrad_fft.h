/* clgrad: discrete Fourier transforms (included by clgrad.h). All differentiable.
 *
 * Complex numbers: there is no complex dtype. A complex tensor of shape (..., N) is a float32 (or
 * float64) tensor of shape (..., N, 2) holding (re, im) pairs, so every existing op (slicing,
 * adding, scaling, reductions) works on it unchanged, and the layout is what clFFT calls
 * interleaved. Any strides are accepted; results are contiguous.
 *
 * Transforms run along the last complex dim (for rfft the last real dim); every leading dim is a
 * batch dim. Normalisation as numpy.fft's `norm`, with theta = 2 pi k n / N:
 *   fft:   X[k] = c * sum_n x[n] e^(-i theta)    c = 1 (BACKWARD), 1/sqrt(N) (ORTHO), 1/N (FORWARD)
 *   ifft:  x[n] = c * sum_k X[k] e^(+i theta)    c = 1/N (BACKWARD), 1/sqrt(N) (ORTHO), 1 (FORWARD)
 * so ifft(fft(x)) == x under every norm. rfft keeps the N/2 + 1 non-negative frequencies of a real
 * signal; irfft takes them back to a real signal of length n, reading the spectrum as Hermitian
 * (the imaginary parts of the DC bin, and of the Nyquist bin when n is even, are ignored, as
 * numpy does). Lengths with prime factors other than 2, 3, 5, 7, 11, 13 run on OpenCL devices
 * through Bluestein's chirp-z (O(N log N)), or a direct O(N^2) kernel where that is faster (short
 * rows, few of them; see backend/opencl/cl_ops_fft.c). */
/* clgrad.h first, outside the guard: it includes every sub-header in order, so one that uses
 * another's types (nn uses conv's) sees them whichever header a user includes first */
#include "clgrad.h"
#ifndef CLGRAD_FFT_H
#define CLGRAD_FFT_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CLG_FFT_NORM_BACKWARD, CLG_FFT_NORM_ORTHO, CLG_FFT_NORM_FORWARD } clg_fft_norm;

/* x (..., N, 2) -> (..., N, 2) */
clg_tensor *clg_fft(clg_tensor *x, clg_fft_norm norm);
clg_tensor *clg_ifft(clg_tensor *x, clg_fft_norm norm);
/* x (..., N) real -> (..., N/2 + 1, 2) */
clg_tensor *clg_rfft(clg_tensor *x, clg_fft_norm norm);
/* x (..., M, 2) -> (..., n) real. n <= 0 means 2 (M - 1), as numpy; the spectrum is cut to
 * n/2 + 1 bins or padded with zeros to that many. */
clg_tensor *clg_irfft(clg_tensor *x, int64_t n, clg_fft_norm norm);
/* 2-D transforms over the last two dims, as numpy.fft's fft2 / ifft2 / rfft2 / irfft2 (axes (-2, -1)),
 * every leading dim a batch dim, the scales the products of the 1-D ones (BACKWARD: ifft2 divides by
 * H W; ORTHO: both by sqrt(H W); FORWARD: fft2 divides by H W). Composed of the 1-D ops along one
 * dim and then the other, the second-last dim reached through a transposed view (frontend/ops_fft2.c:
 * no native 2-D plan), so they take any strides and batches and their gradients are the 1-D ones'.
 * Results are contiguous. */
/* x (..., H, W, 2) -> (..., H, W, 2) */
clg_tensor *clg_fft2(clg_tensor *x, clg_fft_norm norm);
clg_tensor *clg_ifft2(clg_tensor *x, clg_fft_norm norm);
/* x (..., H, W) real -> (..., H, W/2 + 1, 2) */
clg_tensor *clg_rfft2(clg_tensor *x, clg_fft_norm norm);
/* x (..., H, M, 2) -> (..., h, w) real, numpy's irfft2(x, s=(h, w)): the rows cut or zero-padded
 * to h before the inverse along H, then irfft along W to w (the bins cut or padded to w/2 + 1).
 * h <= 0 means H; w <= 0 means 2 (M - 1). */
clg_tensor *clg_irfft2(clg_tensor *x, int64_t h, int64_t w, clg_fft_norm norm);
/* Elementwise complex product a * b (a * conj(b) when conj_b is set) of (..., 2) tensors that
 * broadcast (the last dim of both is 2). */
clg_tensor *clg_complex_mul(clg_tensor *a, clg_tensor *b, int conj_b);

/* 1-D convolution (cross-correlation, as PyTorch's conv1d with stride 1, dilation 1, one group)
 * through the FFT: x (N, C, L), w (OC, C, K), b (OC) or NULL, zero padding p on both sides ->
 * (N, OC, L + 2p - K + 1). Both signals are zero-padded to a length M >= L + 2p of radices 2 and 3
 * (clFFT's fastest), y = irfft(sum_c rfft(x) * conj(rfft(w)))[:L + 2p - K + 1] (+ b).
 * The sum over channels runs as one batched GEMM over the frequencies; it pays off for long
 * kernels (clg_conv1d, clgrad_conv.h, picks it by a measured crossover). */
clg_tensor *clg_conv1d_fft(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t padding);

#ifdef __cplusplus
}
#endif
#endif
