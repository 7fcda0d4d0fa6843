/* 2-D FFTs over the last two dims (numpy's fft2 / ifft2 / rfft2 / irfft2), composed of the 1-D ops
 * and transposed views: a transform along the second-last dim is the 1-D transform of the view with
 * the two dims swapped (the 1-D ops take any strides and copy a strided source into a packed
 * temporary first). Each 1-D step applies its own axis's scale, and numpy's 2-D scales are the
 * products of the per-axis ones under every norm, so the composition is numpy's definition.
 * Gradients come from the 1-D ops' and the views' own backward functions.
 *
 * A native 2-D clFFT plan would save the transposing copies; at the sizes the spectral model uses
 * (7 x 7 token grids) those copies cost less than the extra plans and paths would. */
#include "fe_internal.h"

#include <string.h>

static const char *dev_of(const clg_tensor *t) { return t->v.buf->backend->info.name; }

static clg_tensor *shape_error(const char *op, clg_tensor *x, const char *want)
{
	char s[96];
	return fe_fail(clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': x %s must be %s", op, dev_of(x),
				clg_shape_str(&x->v, s, sizeof(s)), want));
}

/* t with dims d and d + 1 swapped (a view), transformed along its last complex dim by fn, the
 * result's dims swapped back (a view again). */
static clg_tensor *along_swapped(clg_tensor *t, int d, clg_tensor *(*fn)(clg_tensor *, clg_fft_norm), clg_fft_norm norm)
{
	clg_tensor *s = t ? clg_transpose(t, d, d + 1) : NULL;
	clg_tensor *f = s ? fn(s, norm) : NULL;
	clg_tensor *y = f ? clg_transpose(f, d, d + 1) : NULL;
	clg_free(s);
	clg_free(f);
	return y;
}

/* x (..., H, W, 2): along H (on the swapped view), then along W; the result is packed. */
static clg_tensor *c2c2(const char *name, clg_tensor *x, clg_tensor *(*fn)(clg_tensor *, clg_fft_norm), clg_fft_norm norm)
{
	clg_tensor *h, *y;
	int nd;

	if (!fe_check_inputs(name, 1, &x))
		return NULL;
	nd = x->v.ndim;
	if (nd < 3 || x->v.shape[nd - 1] != 2 || x->v.shape[nd - 2] < 1 || x->v.shape[nd - 3] < 1)
		return shape_error(name, x, "complex (..., H, W, 2), H, W >= 1");
	h = along_swapped(x, nd - 3, fn, norm);
	y = h ? fn(h, norm) : NULL;
	clg_free(h);
	return y;
}

clg_tensor *clg_fft2(clg_tensor *x, clg_fft_norm norm) { return c2c2("fft2", x, clg_fft, norm); }
clg_tensor *clg_ifft2(clg_tensor *x, clg_fft_norm norm) { return c2c2("ifft2", x, clg_ifft, norm); }

/* x (..., H, W) real: rfft along W -> (..., H, K, 2), fft along H, made packed. */
clg_tensor *clg_rfft2(clg_tensor *x, clg_fft_norm norm)
{
	clg_tensor *r, *h, *y;
	int nd;

	if (!fe_check_inputs("rfft2", 1, &x))
		return NULL;
	nd = x->v.ndim;
	if (nd < 2 || nd + 1 > CLG_MAX_DIMS || x->v.shape[nd - 1] < 1 || x->v.shape[nd - 2] < 1)
		return shape_error("rfft2", x, "real (..., H, W), H, W >= 1");
	r = clg_rfft(x, norm);
	h = along_swapped(r, nd - 2, clg_fft, norm);
	y = h ? clg_contiguous(h) : NULL;
	clg_free(r);
	clg_free(h);
	return y;
}

/* x cut to n entries along dim d, or zero-padded at the end to n (numpy's n of a c2c transform). */
static clg_tensor *fit_dim(clg_tensor *x, int d, int64_t n)
{
	int64_t m = x->v.shape[d], shape[CLG_MAX_DIMS];
	clg_tensor *parts[2], *y;

	if (m == n)
		return fe_alias(x);
	if (m > n)
		return clg_slice(x, d, 0, n, 1);
	memcpy(shape, x->v.shape, sizeof(int64_t) * (size_t)x->v.ndim);
	shape[d] = n - m;
	parts[0] = x;
	parts[1] = clg_zeros(x->v.buf->backend, x->v.dtype, x->v.ndim, shape);
	y = parts[1] ? clg_concat(parts, 2, d) : NULL;
	clg_free(parts[1]);
	return y;
}

/* x (..., H, M, 2): ifft along H (cut or padded to h rows first), then irfft along W to w. */
clg_tensor *clg_irfft2(clg_tensor *x, int64_t h, int64_t w, clg_fft_norm norm)
{
	clg_tensor *z, *c, *y;
	char s0[96];
	int nd;

	if (!fe_check_inputs("irfft2", 1, &x))
		return NULL;
	nd = x->v.ndim;
	if (nd < 3 || x->v.shape[nd - 1] != 2 || x->v.shape[nd - 2] < 1 || x->v.shape[nd - 3] < 1)
		return shape_error("irfft2", x, "complex (..., H, M, 2), H, M >= 1");
	if (h <= 0)
		h = x->v.shape[nd - 3];
	if (w <= 0)
		w = 2 * (x->v.shape[nd - 2] - 1);
	if (w < 1)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'irfft2' on device '%s': x %s gives output width %lld; pass w >= 1",
					dev_of(x), clg_shape_str(&x->v, s0, sizeof(s0)), (long long)w));
	z = fit_dim(x, nd - 3, h);
	c = along_swapped(z, nd - 3, clg_ifft, norm);
	y = c ? clg_irfft(c, w, norm) : NULL;
	clg_free(z);
	clg_free(c);
	return y;
}
