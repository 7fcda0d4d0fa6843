/* conv1d through im2col + GEMM or through the FFT, per device and kernel size (clgrad_conv.h).
 *
 * The FFT path (clg_conv1d_fft) costs O(L log L) per channel pair whatever the kernel size; im2col
 * + GEMM costs O(L K) per pair: the FFT wins from some kernel size on, which depends on the device
 * (its GEMM and FFT rates). `clgrad tune` measures it (cli/conv_fft_time.c) and stores it in the
 * device's tune file (clg_tune_store_fft_conv); untuned devices use CLG_FFT_CONV_DEFAULT_K.
 * $CLGRAD_CONV1D=fft|im2col forces a path (tests, benchmarks), auto (or unset) chooses. conv2d of
 * rows (H = KH = 1, unit strides and dilation, one group, no padding along H) takes the same
 * choice along W. */
#include "fe_internal.h"

#include "clg_tune.h"

#include <stdlib.h>
#include <string.h>

/* Untuned devices: conv1d of kernels this long or longer through the FFT; 0: never. Measured by
 * `clgrad tune --fft-conv` (x (8, 32, 1024), w (32, 32, K), forward and backward, K 3..31): on
 * PoCL the FFT never wins (97 against 24 ms at K = 31: clFFT runs at a few GFLOP/s there), on
 * Intel's CPU runtime from K = 29 (101 against 114 ms at 31). An untuned device keeps im2col. */
#define CLG_FFT_CONV_DEFAULT_K 0

int clg_conv1d_fft_from(clg_backend *be, const char **why)
{
	const char *e = clg_cfg_str(CLG_CFG_CONV1D);
	clg_tune_fft_conv c;

	if (e && !strcmp(e, "fft")) {
		*why = "CLGRAD_CONV1D=fft";
		return 1;
	}
	if (e && !strcmp(e, "im2col")) {
		*why = "CLGRAD_CONV1D=im2col";
		return 0;
	}
	if (clg_tune_fft_conv_of(be, &c)) {
		*why = "measured by clgrad tune";
		return c.min_k;
	}
	*why = "untuned default";
	return CLG_FFT_CONV_DEFAULT_K;
}

/* set while clg_conv1d_im2col runs conv2d, which then keeps to im2col */
static _Thread_local int no_route;

/* Whether a conv1d of kernel size k on be runs through the FFT (CLGRAD_CONV1D is checked where it
 * is set: auto, fft or im2col). */
static int use_fft(clg_backend *be, int64_t k)
{
	const char *why;
	int from = clg_conv1d_fft_from(be, &why);

	return from > 0 && k >= from;
}

clg_tensor *clg_conv1d_im2col(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t padding)
{
	clg_tensor *ins[3] = {x, w, b}, *x4, *w4, *y4, *y = NULL;
	char s0[96], s1[96];

	if (!fe_check_inputs("conv1d", b ? 3 : 2, ins))
		return NULL;
	if (x->v.ndim != 3 || w->v.ndim != 3)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'conv1d' on device '%s': x %s must be (N, C, L), weight %s (OC, C, K)",
					x->v.buf->backend->info.name, clg_shape_str(&x->v, s0, sizeof(s0)),
					clg_shape_str(&w->v, s1, sizeof(s1))));
	x4 = clg_reshape(x, CLG_SHAPE(x->v.shape[0], x->v.shape[1], 1, x->v.shape[2]));
	w4 = clg_reshape(w, CLG_SHAPE(w->v.shape[0], w->v.shape[1], 1, w->v.shape[2]));
	no_route++;
	y4 = x4 && w4 ? clg_conv2d(x4, w4, b, 1, 1, 0, padding, 1, 1, 1) : NULL;
	no_route--;
	if (y4)
		y = clg_reshape(y4, CLG_SHAPE(y4->v.shape[0], y4->v.shape[1], y4->v.shape[3]));
	clg_free(x4);
	clg_free(w4);
	clg_free(y4);
	return y;
}

clg_tensor *clg_conv1d(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t padding)
{
	clg_tensor *ins[3] = {x, w, b};
	if (!fe_check_inputs("conv1d", b ? 3 : 2, ins))
		return NULL;
	if (use_fft(x->v.buf->backend, w->v.ndim == 3 ? w->v.shape[2] : 0))
		return clg_conv1d_fft(x, w, b, padding);
	return clg_conv1d_im2col(x, w, b, padding);
}

clg_tensor *fe_conv2d_rows_fft(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t stride_h, int64_t stride_w,
			       int64_t pad_h, int64_t pad_w, int64_t dil_w, int64_t groups, int *routed)
{
	clg_tensor *x3, *w3, *y3, *y = NULL;

	*routed = 0;
	if (no_route || !x || !w || x->v.ndim != 4 || w->v.ndim != 4 || x->v.shape[2] != 1 || w->v.shape[2] != 1 || stride_h != 1 ||
	    stride_w != 1 || pad_h != 0 || dil_w != 1 || groups != 1 || w->v.shape[1] != x->v.shape[1] ||
	    (x->v.dtype != CLG_F32 && x->v.dtype != CLG_F64) || w->v.dtype != x->v.dtype ||
	    x->v.shape[3] + 2 * pad_w < w->v.shape[3])
		return NULL;
	if (!use_fft(x->v.buf->backend, w->v.shape[3]))
		return NULL;
	*routed = 1;
	x3 = clg_reshape(x, CLG_SHAPE(x->v.shape[0], x->v.shape[1], x->v.shape[3]));
	w3 = clg_reshape(w, CLG_SHAPE(w->v.shape[0], w->v.shape[1], w->v.shape[3]));
	y3 = x3 && w3 ? clg_conv1d_fft(x3, w3, b, pad_w) : NULL;
	if (y3)
		y = clg_reshape(y3, CLG_SHAPE(y3->v.shape[0], y3->v.shape[1], 1, y3->v.shape[2]));
	clg_free(x3);
	clg_free(w3);
	clg_free(y3);
	return y;
}
