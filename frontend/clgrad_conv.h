/* clgrad: conv ops (included by clgrad.h). All differentiable; NCHW layout throughout.
 *
 * Output size along each spatial axis, as PyTorch:
 *   OH = floor((H + 2 pad_h - dil_h (KH - 1) - 1) / stride_h) + 1
 * Strides and dilations are at least 1, paddings at least 0; the (dilated) kernel must fit in
 * the padded input. Shape errors (CLG_ERR_SHAPE) and bad parameters (CLG_ERR_INVALID) name the op,
 * the device and the shapes. */
#ifndef CLGRAD_CONV_H
#define CLGRAD_CONV_H

#include "clgrad.h" /* the types; clgrad.h includes this header back, the guards stop the loop */

#ifdef __cplusplus
extern "C" {
#endif

/* 2-D convolution (cross-correlation, as PyTorch's conv2d):
 *   x (N, C, H, W), w (OC, C / groups, KH, KW), b (OC) or NULL -> (N, OC, OH, OW)
 * C and OC must be divisible by groups; output channels [g OC/groups, (g+1) OC/groups) see input
 * channels [g C/groups, (g+1) C/groups). Computed as im2col + GEMM; gradients for x (col2im), w
 * and b. */
clg_tensor *clg_conv2d(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t stride_h, int64_t stride_w,
		       int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w, int64_t groups);

/* Transposed 2-D convolution as torch.nn.functional.conv_transpose2d: the input-gradient of
 * conv2d with the same parameters.
 *   x (N, C, H, W), w (C, OC / groups, KH, KW), b (OC) or NULL -> (N, OC, OH, OW),
 *   OH = (H - 1) stride_h - 2 pad_h + dil_h (KH - 1) + out_pad_h + 1 (OW likewise)
 * Output padding must be below the stride (PyTorch also takes it below the dilation:
 * CLG_ERR_UNSUPPORTED here). Composed: one GEMM (W^T @ x, batched over images and groups) and
 * COL2IM, the way conv2d's backward computes dx; differentiable in x, w and b. */
clg_tensor *clg_conv_transpose2d(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t stride_h, int64_t stride_w,
				 int64_t pad_h, int64_t pad_w, int64_t out_pad_h, int64_t out_pad_w, int64_t dil_h,
				 int64_t dil_w, int64_t groups);

/* Resampling as torch.nn.functional.interpolate for x (N, C, L) or (N, C, H, W), float32 or float64:
 * the spatial dims to size[k] positions, or to floor(in * scale_factor[k]) (exactly one of size and
 * scale_factor given, one entry per spatial dim). NEAREST takes source floor(o * s) (PyTorch's
 * 'nearest'); LINEAR blends the two neighbours of the source position (linear, bilinear), with
 *   align_corners 0: src = max((o + 0.5) s - 0.5, 0), s = in / out, or 1 / scale_factor when given
 *   align_corners 1: src = o (in - 1) / (out - 1)
 * Differentiable in x. Composed from index_select (a gather per axis, two for LINEAR) and
 * elementwise weights; align_corners must be 0 for NEAREST. */
typedef enum { CLG_INTERP_NEAREST = 0, CLG_INTERP_LINEAR = 1 } clg_interp;
clg_tensor *clg_interpolate(clg_tensor *x, const int64_t *size, const double *scale_factor, clg_interp mode,
			    int align_corners);

/* 1-D convolution (cross-correlation, stride 1, dilation 1, one group): x (N, C, L), w (OC, C, K),
 * b (OC) or NULL, zero padding p on both sides -> (N, OC, L + 2p - K + 1). Runs through the FFT
 * (clg_conv1d_fft, clgrad_fft.h) when K is at least the device's measured crossover (`clgrad
 * tune`; clg_conv1d_fft_from), else as clg_conv1d_im2col; $CLGRAD_CONV1D=fft|im2col|auto forces
 * or restores the choice (frontend/conv_choice.c). conv2d of rows (H = KH = 1, unit strides and
 * W dilation, one group, pad_h 0) takes the same choice. */
clg_tensor *clg_conv1d(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t padding);
/* conv1d as conv2d (im2col + GEMM) of rows of height 1, whatever the crossover. */
clg_tensor *clg_conv1d_im2col(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t padding);
/* The kernel size from which conv1d on be runs through the FFT (0: never; 1: always, as with
 * CLGRAD_CONV1D=fft), and where that comes from (*why: static text). */
int clg_conv1d_fft_from(clg_backend *be, const char **why);

/* Max pooling of x (N, C, H, W) over kh x kw windows -> (N, C, OH, OW); padding is ignored (never
 * the max), and must be at most half the kernel. The gradient goes to each window's first max. */
clg_tensor *clg_max_pool2d(clg_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w,
			   int64_t pad_h, int64_t pad_w);

/* max_pool2d as torch.nn.functional.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode):
 * with dilation, and ceil_mode's output size (ceil instead of floor, the last window starting
 * inside the input or its left padding; its part past the input is ignored as padding is).
 * Padding at most half the dilated kernel. */
clg_tensor *clg_max_pool2d_ex(clg_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w, int64_t pad_h,
			      int64_t pad_w, int64_t dil_h, int64_t dil_w, int ceil_mode);

/* relu(max_pool2d(conv2d(x, w, b))), the conv with stride and padding in both axes, no dilation,
 * one group; the pool's kh x kw window pk x pk with stride ps and padding pp. One node, with the
 * values and gradients of the three ops (relu commutes with max): the pool reads the conv's output
 * in the GEMM's layout, relu runs on the pooled size. Computed as the three ops where it does not
 * apply (autocast, conv2d of rows, shapes either op refuses). nn's sequential takes it for a
 * conv2d module followed by relu and max_pool2d. */
clg_tensor *clg_conv2d_relu_max_pool2d(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t stride, int64_t pad,
				       int64_t pk, int64_t ps, int64_t pp);

/* Average pooling: each window's sum divided by kh * kw, padding counting as zeros (PyTorch's
 * count_include_pad=True); padding at most half the kernel. */
clg_tensor *clg_avg_pool2d(clg_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w,
			   int64_t pad_h, int64_t pad_w);
/* avg_pool2d as torch.nn.functional.avg_pool2d(x, kernel, stride, padding, ceil_mode,
 * count_include_pad): each window's sum divided by its taps inside the padded input
 * (count_include_pad != 0: KH * KW, less for ceil_mode's last windows where they overhang the
 * padding) or inside the input (count_include_pad = 0). No divisor_override. */
clg_tensor *clg_avg_pool2d_ex(clg_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w, int64_t pad_h,
			      int64_t pad_w, int ceil_mode, int count_include_pad);

#ifdef __cplusplus
}
#endif
#endif
