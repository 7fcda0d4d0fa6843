/* Gradient-check cases of the FFT ops (see tests/test_grad.h): fft / ifft / rfft / irfft under each
 * of numpy's norms, at lengths clFFT does (8, 12, 60) and one it does not (17: the own kernels),
 * odd and even real lengths (the Nyquist bin is single only for even ones), irfft cutting and
 * padding the spectrum, a strided input, complex_mul (broadcast, conjugated), a circular
 * convolution irfft(rfft(x) * rfft(w)) and conv1d_fft end to end; length 101 x 4 rows
 * (Bluestein's path). The 2-D transforms (composed of
 * the 1-D ones, frontend/ops_fft2.c) on odd and even planes (5 x 8, 7 x 7, 28 x 28, 1 x N, N x 1),
 * batches of 1 and 3, each norm, strided inputs, irfft2 cutting and padding; a 2-D global filter
 * irfft2(rfft2(x) * w) and one block of the gfnet model on a tiny shape. */
#include "test_grad.h"

#include <clgrad_models.h>
#include <math.h>

static clg_tensor *f_fft_b(clg_tensor **x) { return clg_fft(x[0], CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_fft_o(clg_tensor **x) { return clg_fft(x[0], CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_fft_f(clg_tensor **x) { return clg_fft(x[0], CLG_FFT_NORM_FORWARD); }
static clg_tensor *f_ifft_b(clg_tensor **x) { return clg_ifft(x[0], CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_ifft_o(clg_tensor **x) { return clg_ifft(x[0], CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_ifft_f(clg_tensor **x) { return clg_ifft(x[0], CLG_FFT_NORM_FORWARD); }
static clg_tensor *f_rfft_b(clg_tensor **x) { return clg_rfft(x[0], CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_rfft_o(clg_tensor **x) { return clg_rfft(x[0], CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_rfft_f(clg_tensor **x) { return clg_rfft(x[0], CLG_FFT_NORM_FORWARD); }
static clg_tensor *f_irfft_b(clg_tensor **x) { return clg_irfft(x[0], 0, CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_irfft_o17(clg_tensor **x) { return clg_irfft(x[0], 17, CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_irfft_f(clg_tensor **x) { return clg_irfft(x[0], 0, CLG_FFT_NORM_FORWARD); }
static clg_tensor *f_irfft_o101(clg_tensor **x) { return clg_irfft(x[0], 101, CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_irfft_cut(clg_tensor **x) { return clg_irfft(x[0], 6, CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_irfft_pad(clg_tensor **x) { return clg_irfft(x[0], 10, CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_cmul(clg_tensor **x) { return clg_complex_mul(x[0], x[1], 0); }
static clg_tensor *f_cmul_conj(clg_tensor **x) { return clg_complex_mul(x[0], x[1], 1); }

/* fft of a permuted (strided) view: (8, 3, 2) seen as (3, 8, 2) */
static clg_tensor *f_fft_strided(clg_tensor **x)
{
	static const int perm[] = {1, 0, 2};
	clg_tensor *t = clg_permute(x[0], perm), *y = clg_fft(t, CLG_FFT_NORM_ORTHO);
	clg_free(t);
	return y;
}

/* ifft(fft(x)) == x: the gradient is the identity's */
static clg_tensor *f_roundtrip(clg_tensor **x)
{
	clg_tensor *t = clg_fft(x[0], CLG_FFT_NORM_FORWARD), *y = clg_ifft(t, CLG_FFT_NORM_FORWARD);
	clg_free(t);
	return y;
}

/* circular convolution of x (2, 3, 12) with a kernel w (3, 12) per channel, summed over channels:
 * irfft(sum_c rfft(x) * rfft(w)) */
static clg_tensor *f_circular_conv(clg_tensor **x)
{
	static const int axes[] = {1};
	clg_tensor *fx = clg_rfft(x[0], CLG_FFT_NORM_BACKWARD), *fw = clg_rfft(x[1], CLG_FFT_NORM_BACKWARD);
	clg_tensor *p = clg_complex_mul(fx, fw, 0), *s = clg_sum(p, 1, axes, 0);
	clg_tensor *y = clg_irfft(s, 12, CLG_FFT_NORM_BACKWARD);
	clg_free(fx);
	clg_free(fw);
	clg_free(p);
	clg_free(s);
	return y;
}

/* conv1d through the FFT (x (2, 3, 10), w (4, 3, 5), b (4), padding 2): pad, rfft, conjugate
 * product summed over channels, irfft, slice, bias */
static clg_tensor *f_conv1d_fft(clg_tensor **x) { return clg_conv1d_fft(x[0], x[1], x[2], 2); }
/* the same through im2col + GEMM (conv1d's other path, frontend/conv_choice.c) */
static clg_tensor *f_conv1d_im2col(clg_tensor **x) { return clg_conv1d_im2col(x[0], x[1], x[2], 2); }

/* ---- 2-D ---- */
static clg_tensor *f_fft2_b(clg_tensor **x) { return clg_fft2(x[0], CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_fft2_o(clg_tensor **x) { return clg_fft2(x[0], CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_fft2_f(clg_tensor **x) { return clg_fft2(x[0], CLG_FFT_NORM_FORWARD); }
static clg_tensor *f_ifft2_b(clg_tensor **x) { return clg_ifft2(x[0], CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_ifft2_o(clg_tensor **x) { return clg_ifft2(x[0], CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_ifft2_f(clg_tensor **x) { return clg_ifft2(x[0], CLG_FFT_NORM_FORWARD); }
static clg_tensor *f_rfft2_b(clg_tensor **x) { return clg_rfft2(x[0], CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_rfft2_o(clg_tensor **x) { return clg_rfft2(x[0], CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_rfft2_f(clg_tensor **x) { return clg_rfft2(x[0], CLG_FFT_NORM_FORWARD); }
static clg_tensor *f_irfft2_b(clg_tensor **x) { return clg_irfft2(x[0], 0, 0, CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_irfft2_o77(clg_tensor **x) { return clg_irfft2(x[0], 7, 7, CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_irfft2_f61(clg_tensor **x) { return clg_irfft2(x[0], 6, 1, CLG_FFT_NORM_FORWARD); }
/* rows padded 5 -> 6, bins cut 4 -> 3 */
static clg_tensor *f_irfft2_pad_cut(clg_tensor **x) { return clg_irfft2(x[0], 6, 5, CLG_FFT_NORM_FORWARD); }
/* rows cut 5 -> 3, bins padded 3 -> 5 */
static clg_tensor *f_irfft2_cut_pad(clg_tensor **x) { return clg_irfft2(x[0], 3, 8, CLG_FFT_NORM_BACKWARD); }

/* transforms of (W, H) planes seen as (H, W) through a transposed view */
static clg_tensor *f_fft2_strided(clg_tensor **x)
{
	clg_tensor *t = clg_transpose(x[0], 1, 2), *y = clg_fft2(t, CLG_FFT_NORM_ORTHO);
	clg_free(t);
	return y;
}

static clg_tensor *f_rfft2_strided(clg_tensor **x)
{
	clg_tensor *t = clg_transpose(x[0], 1, 2), *y = clg_rfft2(t, CLG_FFT_NORM_BACKWARD);
	clg_free(t);
	return y;
}

/* irfft2 of every other row of the spectrum */
static clg_tensor *f_irfft2_strided(clg_tensor **x)
{
	clg_tensor *t = clg_slice(x[0], 0, 0, 10, 2), *y = clg_irfft2(t, 0, 7, CLG_FFT_NORM_ORTHO);
	clg_free(t);
	return y;
}

/* a global filter on (B, H, W) planes: irfft2(rfft2(x) * w) with w (H, W/2+1, 2), to (H, W) again */
static clg_tensor *global_filter(clg_tensor **x, clg_fft_norm norm)
{
	int nd = clg_ndim(x[0]);
	int64_t H = clg_shape(x[0])[nd - 2], W = clg_shape(x[0])[nd - 1];
	clg_tensor *f = clg_rfft2(x[0], norm), *p = f ? clg_complex_mul(f, x[1], 0) : NULL;
	clg_tensor *y = p ? clg_irfft2(p, H, W, norm) : NULL;
	clg_free(f);
	clg_free(p);
	return y;
}

static clg_tensor *f_filter_b(clg_tensor **x) { return global_filter(x, CLG_FFT_NORM_BACKWARD); }
static clg_tensor *f_filter_o(clg_tensor **x) { return global_filter(x, CLG_FFT_NORM_ORTHO); }
static clg_tensor *f_filter_f(clg_tensor **x) { return global_filter(x, CLG_FFT_NORM_FORWARD); }

/* A constant (n) or (r, c) tensor of fixed values near base, on x's device in x's dtype. */
static clg_tensor *fixed(clg_tensor *like, int64_t r, int64_t c, double base, double amp, int salt)
{
	double d[64];
	float f[64];
	for (int i = 0; i < r * c && i < 64; i++)
		f[i] = (float)(d[i] = base + amp * sin(1.7 * i + salt));
	if (r * c > 64)
		return NULL;
	if (r == 1)
		return clg_from_host(clg_device_of(like), clg_dtype_of(like), CLG_SHAPE(c),
				     clg_dtype_of(like) == CLG_F64 ? (void *)d : (void *)f);
	return clg_from_host(clg_device_of(like), clg_dtype_of(like), CLG_SHAPE(r, c),
			     clg_dtype_of(like) == CLG_F64 ? (void *)d : (void *)f);
}

/* one gfnet block on tokens x (2, 3, 3, D = 4) with the filter x[1] (4, 3, 2, 2) and fc1's weight
 * x[2] (16, 4) checked; the norms' affine parameters, fc1's bias and fc2 fixed */
static clg_tensor *f_gfnet_block(clg_tensor **x)
{
	clg_tensor *p[CLG_GFNET_BLOCK_PARAMS], *y = NULL;
	int ok = 1;

	p[0] = fixed(x[0], 1, 4, 1, 0.2, 0);
	p[1] = fixed(x[0], 1, 4, 0, 0.1, 1);
	p[2] = x[1];
	p[3] = fixed(x[0], 1, 4, 1, 0.2, 2);
	p[4] = fixed(x[0], 1, 4, 0, 0.1, 3);
	p[5] = x[2];
	p[6] = fixed(x[0], 1, 16, 0, 0.1, 4);
	p[7] = fixed(x[0], 4, 16, 0, 0.3, 5);
	p[8] = fixed(x[0], 1, 4, 0, 0.1, 6);
	for (int i = 0; i < CLG_GFNET_BLOCK_PARAMS; i++)
		ok &= p[i] != NULL;
	if (ok)
		y = clg_gfnet_block(x[0], p);
	for (int i = 0; i < CLG_GFNET_BLOCK_PARAMS; i++)
		if (i != 2 && i != 5)
			clg_free(p[i]);
	return y;
}

static const gcase cases[] = {
	{"fft", 1, {3}, {{3, 8, 2}}, -1, 1, f_fft_b},
	{"fft_ortho", 1, {3}, {{2, 12, 2}}, -1, 1, f_fft_o},
	{"fft_forward_prime", 1, {2}, {{17, 2}}, -1, 1, f_fft_f},
	{"fft_strided", 1, {3}, {{8, 3, 2}}, -1, 1, f_fft_strided},
	{"ifft", 1, {2}, {{5, 2}}, -1, 1, f_ifft_b},
	{"ifft_ortho", 1, {3}, {{2, 60, 2}}, -1, 1, f_ifft_o},
	{"ifft_forward_prime", 1, {3}, {{2, 17, 2}}, -1, 1, f_ifft_f},
	{"fft_ifft_roundtrip", 1, {2}, {{12, 2}}, -1, 1, f_roundtrip},
	{"rfft", 1, {2}, {{3, 8}}, -1, 1, f_rfft_b},
	{"rfft_ortho_prime", 1, {2}, {{2, 17}}, -1, 1, f_rfft_o},
	{"rfft_forward_odd", 1, {1}, {{9}}, -1, 1, f_rfft_f},
	{"rfft_length1", 1, {2}, {{3, 1}}, -1, 1, f_rfft_b},
	{"rfft_length2", 1, {2}, {{2, 2}}, -1, 1, f_rfft_o},
	{"irfft", 1, {3}, {{3, 5, 2}}, -1, 1, f_irfft_b},
	{"irfft_ortho_odd", 1, {3}, {{2, 9, 2}}, -1, 1, f_irfft_o17},
	{"irfft_forward", 1, {2}, {{31, 2}}, -1, 1, f_irfft_f},
	{"irfft_cut", 1, {2}, {{7, 2}}, -1, 1, f_irfft_cut},
	{"irfft_pad", 1, {3}, {{2, 3, 2}}, -1, 1, f_irfft_pad},
	{"complex_mul", 2, {3, 3}, {{3, 4, 2}, {3, 4, 2}}, -1, 1, f_cmul},
	{"complex_mul_broadcast", 2, {4, 2}, {{2, 3, 4, 2}, {4, 2}}, -1, 1, f_cmul},
	{"complex_mul_conj", 2, {2, 3}, {{4, 2}, {3, 4, 2}}, -1, 1, f_cmul_conj},
	{"fft_circular_conv", 2, {3, 2}, {{2, 3, 12}, {3, 12}}, -1, 1, f_circular_conv},
	/* a prime clFFT cannot do, with n^2 batch above CLG_FFT_DIRECT_MAX: Bluestein's chirp-z */
	{"fft_bluestein", 1, {3}, {{4, 101, 2}}, -1, 1, f_fft_o},
	{"rfft_bluestein", 1, {2}, {{4, 101}}, -1, 1, f_rfft_b},
	{"irfft_bluestein", 1, {3}, {{4, 51, 2}}, -1, 1, f_irfft_o101},
	{"conv1d_fft", 3, {3, 3, 1}, {{2, 3, 10}, {4, 3, 5}, {4}}, -1, 1, f_conv1d_fft},
	{"fft2", 1, {4}, {{3, 5, 8, 2}}, -1, 1, f_fft2_b},
	{"fft2_ortho_7x7", 1, {3}, {{7, 7, 2}}, -1, 1, f_fft2_o},
	{"fft2_forward_1xN", 1, {3}, {{1, 6, 2}}, -1, 1, f_fft2_f},
	{"fft2_strided", 1, {4}, {{3, 8, 5, 2}}, -1, 1, f_fft2_strided},
	{"ifft2", 1, {4}, {{3, 5, 8, 2}}, -1, 1, f_ifft2_b},
	{"ifft2_ortho_Nx1", 1, {3}, {{6, 1, 2}}, -1, 1, f_ifft2_o},
	{"ifft2_forward_7x7", 1, {4}, {{3, 7, 7, 2}}, -1, 1, f_ifft2_f},
	{"rfft2", 1, {3}, {{3, 5, 8}}, -1, 1, f_rfft2_b},
	{"rfft2_ortho_7x7", 1, {2}, {{7, 7}}, -1, 1, f_rfft2_o},
	{"rfft2_forward_28x28", 1, {2}, {{28, 28}}, -1, 1, f_rfft2_f},
	{"rfft2_ortho_Nx1", 1, {3}, {{3, 6, 1}}, -1, 1, f_rfft2_o},
	{"rfft2_forward_1xN", 1, {2}, {{1, 7}}, -1, 1, f_rfft2_f},
	{"rfft2_strided", 1, {3}, {{3, 8, 5}}, -1, 1, f_rfft2_strided},
	{"irfft2", 1, {4}, {{3, 5, 5, 2}}, -1, 1, f_irfft2_b},
	{"irfft2_ortho_7x7", 1, {3}, {{7, 4, 2}}, -1, 1, f_irfft2_o77},
	{"irfft2_forward_Nx1", 1, {4}, {{3, 6, 1, 2}}, -1, 1, f_irfft2_f61},
	{"irfft2_pad_cut", 1, {3}, {{5, 4, 2}}, -1, 1, f_irfft2_pad_cut},
	{"irfft2_cut_pad", 1, {4}, {{3, 5, 3, 2}}, -1, 1, f_irfft2_cut_pad},
	{"irfft2_strided", 1, {3}, {{10, 4, 2}}, -1, 1, f_irfft2_strided},
	{"global_filter_5x8", 2, {3, 3}, {{3, 5, 8}, {5, 5, 2}}, -1, 1, f_filter_o},
	{"global_filter_7x7", 2, {3, 3}, {{1, 7, 7}, {7, 4, 2}}, -1, 1, f_filter_b},
	{"global_filter_28x28", 2, {2, 3}, {{28, 28}, {28, 15, 2}}, -1, 1, f_filter_f},
	{"gfnet_block", 3, {4, 4, 2}, {{2, 3, 3, 4}, {4, 3, 2, 2}, {16, 4}}, -1, 1, f_gfnet_block},
	{"conv1d_im2col", 3, {3, 3, 1}, {{2, 3, 10}, {4, 3, 5}, {4}}, -1, 1, f_conv1d_im2col},
};

const gcase *grad_cases_fft(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
