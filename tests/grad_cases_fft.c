/* Gradient-check cases of the FFT ops (see tests/test_grad.h): fft / ifft / rfft / irfft under each
 * of numpy's norms, at lengths clFFT does (8, 12, 60) and one it does not (17: the own kernels),
 * odd and even real lengths (the Nyquist bin is single only for even ones), irfft cutting and
 * padding the spectrum, a strided input, complex_mul (broadcast, conjugated), a circular
 * convolution irfft(rfft(x) * rfft(w)) and conv1d_fft end to end; length 101 x 4 rows
 * (Bluestein's path). */
#include "test_grad.h"

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
	{"conv1d_im2col", 3, {3, 3, 1}, {{2, 3, 10}, {4, 3, 5}, {4}}, -1, 1, f_conv1d_im2col},
};

const gcase *grad_cases_fft(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
