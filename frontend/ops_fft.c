/* FFT ops: fft / ifft, rfft / irfft and complex multiply, forward and backward pairs. Complex
 * tensors are (..., 2) float tensors (clgrad_fft.h).
 *
 * Gradients (loss L real, a complex gradient being dL/dre + i dL/dim):
 *   fft / ifft: y = c F_s x with F_s the DFT of sign s is complex-linear, so dx = conj(c F_s)^T dy
 *     = c F_-s dy: the same op with the other sign and the same scale.
 *   rfft: y_k = c sum_n x_n e^(-i theta), k < K = N/2+1, from real x. Then
 *     dx_n = c sum_k (dre_k cos theta - dim_k sin theta) = c Re sum_k dy_k e^(+i theta).
 *     FFT_C2R computes c Re sum_k w_k z_k e^(+i theta) with the Hermitian weights w_k (1 for DC and
 *     for the Nyquist bin of even N, else 2), so dx = C2R(dy / w) at the scale c: the interior bins
 *     halved before the inverse transform doubles them.
 *   irfft: x_n = c Re sum_k w_k z_k e^(+i theta). Then dre_k = c w_k sum_n g_n cos theta and
 *     dim_k = -c w_k sum_n g_n sin theta, i.e. dz = w * R2C(g) at the scale c: the interior bins
 *     doubled. (The imaginary gradients of DC and Nyquist come out 0, as those parts are ignored.)
 *   complex_mul: y = a b gives da = dy conj(b), db = dy conj(a); y = a conj(b) gives da = dy b,
 *     db = a conj(dy). */
#include "fe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *dev_of(const clg_tensor *t) { return t->v.buf->backend->info.name; }

/* The scale of a transform of length n under numpy's norm. */
static double norm_scale(clg_fft_norm norm, int inverse, int64_t n)
{
	switch (norm) {
	case CLG_FFT_NORM_ORTHO: return 1.0 / sqrt((double)n);
	case CLG_FFT_NORM_FORWARD: return inverse ? 1.0 : 1.0 / (double)n;
	default: return inverse ? 1.0 / (double)n : 1.0;
	}
}

/* Runs one transform op on x into a new tensor of shape (nd, shape), outside the graph. */
static clg_tensor *transform(clg_op op, clg_tensor *x, int inverse, double scale, int nd, const int64_t *shape)
{
	clg_op_call c = {.op = op};
	clg_tensor *out;

	if (!x)
		return NULL;
	out = fe_new(x->v.buf->backend, x->v.dtype, nd, shape);
	if (!out)
		return NULL;
	c.dst = out->v;
	c.src[0] = x->v;
	c.f[0] = scale;
	c.i[0] = inverse;
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	return out;
}

/* (K, 2) weights of the Hermitian half spectrum of a length-n signal, K = n/2+1: 1 for DC and for
 * the Nyquist bin of even n, else `interior` (both parts of each bin). */
static clg_tensor *bin_weights(clg_tensor *like, int64_t n, double interior)
{
	int64_t K = n / 2 + 1;
	double *w = malloc(sizeof(double) * 2 * (size_t)K);
	float *f = malloc(sizeof(float) * 2 * (size_t)K);
	clg_tensor *t = NULL;

	if (!w || !f) {
		t = fe_fail(clg_fail(CLG_ERR_OOM, "fft: out of host memory"));
		goto out;
	}
	for (int64_t k = 0; k < K; k++) {
		w[2 * k] = w[2 * k + 1] = k == 0 || 2 * k == n ? 1.0 : interior;
		f[2 * k] = f[2 * k + 1] = (float)w[2 * k];
	}
	t = clg_from_host(like->v.buf->backend, like->v.dtype, CLG_SHAPE(K, 2), like->v.dtype == CLG_F64 ? (void *)w : (void *)f);
out:
	free(w);
	free(f);
	return t;
}

/* g * weights, outside the graph */
static clg_tensor *weighted(clg_tensor *g, int64_t n, double interior)
{
	clg_tensor *w, *y;
	if (!g)
		return NULL;
	w = bin_weights(g, n, interior);
	clg_no_grad_begin();
	y = w ? clg_mul(g, w) : NULL;
	clg_no_grad_end();
	clg_free(w);
	return y;
}

/* ---- fft / ifft ---- */

/* node: i[0] inverse, f[0] scale */
static clg_status c2c_backward(clg_node *n, clg_tensor *g)
{
	return fe_give(n->in[0], transform(CLG_OP_FFT_C2C, g, !n->i[0], n->f[0], g->v.ndim, g->v.shape));
}

static int is_complex(const clg_tensor *x, int min_nd) { return x->v.ndim >= min_nd && x->v.shape[x->v.ndim - 1] == 2; }

static clg_tensor *c2c(const char *name, clg_tensor *x, int inverse, clg_fft_norm norm)
{
	clg_node *node;
	clg_tensor *y;
	char s0[96];
	double scale;

	if (!fe_check_inputs(name, 1, &x))
		return NULL;
	if (!is_complex(x, 2) || x->v.shape[x->v.ndim - 2] < 1)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': x %s must be complex (..., N, 2), N >= 1", name,
					dev_of(x), clg_shape_str(&x->v, s0, sizeof(s0))));
	scale = norm_scale(norm, inverse, x->v.shape[x->v.ndim - 2]);
	y = fe_record_op(transform(CLG_OP_FFT_C2C, x, inverse, scale, x->v.ndim, x->v.shape), name, c2c_backward, 1, &x,
			 &node);
	if (node) {
		node->i[0] = inverse;
		node->f[0] = scale;
	}
	return y;
}

clg_tensor *clg_fft(clg_tensor *x, clg_fft_norm norm) { return c2c("fft", x, 0, norm); }
clg_tensor *clg_ifft(clg_tensor *x, clg_fft_norm norm) { return c2c("ifft", x, 1, norm); }

/* ---- rfft / irfft ---- */

/* node: i[1] the real length n, f[0] scale; in[0] the real signal (..., n) */
static clg_status rfft_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *h = weighted(g, n->i[1], 0.5);
	clg_tensor *dx = transform(CLG_OP_FFT_C2R, h, 1, n->f[0], x->v.ndim, x->v.shape);
	clg_free(h);
	return fe_give(x, dx);
}

clg_tensor *clg_rfft(clg_tensor *x, clg_fft_norm norm)
{
	int64_t shape[CLG_MAX_DIMS], n;
	int nd;
	clg_node *node;
	clg_tensor *y;
	char s0[96];
	double scale;

	if (!fe_check_inputs("rfft", 1, &x))
		return NULL;
	nd = x->v.ndim;
	if (nd < 1 || nd + 1 > CLG_MAX_DIMS || x->v.shape[nd - 1] < 1)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'rfft' on device '%s': x %s must be (..., N), N >= 1, at most %d dims",
					dev_of(x), clg_shape_str(&x->v, s0, sizeof(s0)), CLG_MAX_DIMS - 1));
	n = x->v.shape[nd - 1];
	memcpy(shape, x->v.shape, sizeof(int64_t) * (size_t)nd);
	shape[nd - 1] = n / 2 + 1;
	shape[nd] = 2;
	scale = norm_scale(norm, 0, n);
	y = fe_record_op(transform(CLG_OP_FFT_R2C, x, 0, scale, nd + 1, shape), "rfft", rfft_backward, 1, &x, &node);
	if (node) {
		node->i[1] = n;
		node->f[0] = scale;
	}
	return y;
}

/* node: i[1] the real length n, f[0] scale; in[0] the half spectrum (..., n/2+1, 2) */
static clg_status irfft_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *z = n->in[0];
	clg_tensor *r = transform(CLG_OP_FFT_R2C, g, 0, n->f[0], z->v.ndim, z->v.shape);
	clg_tensor *dz = weighted(r, n->i[1], 2.0);
	clg_free(r);
	return fe_give(z, dz);
}

/* x (..., M, 2) cut or zero-padded to K bins along its second-last dim (x itself when M == K). */
static clg_tensor *fit_bins(clg_tensor *x, int64_t K)
{
	int nd = x->v.ndim;
	int64_t M = x->v.shape[nd - 2], shape[CLG_MAX_DIMS];
	clg_tensor *parts[2], *y;

	if (M == K)
		return fe_alias(x);
	if (M > K)
		return clg_slice(x, nd - 2, 0, K, 1);
	memcpy(shape, x->v.shape, sizeof(int64_t) * (size_t)nd);
	shape[nd - 2] = K - M;
	parts[0] = x;
	parts[1] = clg_zeros(x->v.buf->backend, x->v.dtype, nd, shape);
	y = parts[1] ? clg_concat(parts, 2, nd - 2) : NULL;
	clg_free(parts[1]);
	return y;
}

clg_tensor *clg_irfft(clg_tensor *x, int64_t n, clg_fft_norm norm)
{
	int64_t shape[CLG_MAX_DIMS];
	int nd;
	clg_node *node;
	clg_tensor *z, *y;
	char s0[96];
	double scale;

	if (!fe_check_inputs("irfft", 1, &x))
		return NULL;
	nd = x->v.ndim;
	if (!is_complex(x, 2))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'irfft' on device '%s': x %s must be complex (..., M, 2)", dev_of(x),
					clg_shape_str(&x->v, s0, sizeof(s0))));
	if (n <= 0)
		n = 2 * (x->v.shape[nd - 2] - 1);
	if (n < 1)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'irfft' on device '%s': x %s gives output length %lld; pass n >= 1",
					dev_of(x), clg_shape_str(&x->v, s0, sizeof(s0)), (long long)n));
	z = fit_bins(x, n / 2 + 1);
	if (!z)
		return NULL;
	memcpy(shape, x->v.shape, sizeof(int64_t) * (size_t)nd);
	shape[nd - 2] = n;
	scale = norm_scale(norm, 1, n);
	y = fe_record_op(transform(CLG_OP_FFT_C2R, z, 1, scale, nd - 1, shape), "irfft", irfft_backward, 1, &z, &node);
	if (node) {
		node->i[1] = n;
		node->f[0] = scale;
	}
	clg_free(z);
	return y;
}

/* ---- complex multiply ---- */

/* a * b (conj: a * conj(b)) broadcast together, outside the graph */
static clg_tensor *cmul(clg_tensor *a, clg_tensor *b, int conj)
{
	int nd = a->v.ndim > b->v.ndim ? a->v.ndim : b->v.ndim;
	int64_t shape[CLG_MAX_DIMS];
	clg_op_call c = {.op = CLG_OP_COMPLEX_MUL};
	const clg_tensor *t[2] = {a, b};
	clg_tensor *out;
	char s0[96], s1[96];

	for (int d = 0; d < nd; d++) {
		int da = d - (nd - a->v.ndim), db = d - (nd - b->v.ndim);
		int64_t sa = da >= 0 ? a->v.shape[da] : 1, sb = db >= 0 ? b->v.shape[db] : 1;
		if (sa != sb && sa != 1 && sb != 1)
			return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'complex_mul' on device '%s': shapes %s and %s do not broadcast",
						dev_of(a), clg_shape_str(&a->v, s0, sizeof(s0)), clg_shape_str(&b->v, s1, sizeof(s1))));
		shape[d] = sa == 1 ? sb : sa;
	}
	out = fe_new(a->v.buf->backend, a->v.dtype, nd, shape);
	if (!out)
		return NULL;
	for (int k = 0; k < 2; k++) { /* t[k] broadcast to the output's shape: stride 0 */
		clg_view *v = &c.src[k];
		int lead = nd - t[k]->v.ndim;
		*v = t[k]->v;
		v->ndim = nd;
		for (int d = nd - 1; d >= 0; d--) {
			v->shape[d] = shape[d];
			v->stride[d] = d < lead || t[k]->v.shape[d - lead] != shape[d] ? 0 : t[k]->v.stride[d - lead];
		}
	}
	c.dst = out->v;
	c.i[0] = conj;
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	return out;
}

/* node: i[0] conj */
static clg_status complex_mul_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *a = n->in[0], *b = n->in[1];
	clg_status st = CLG_OK;

	if (a->requires_grad)
		st = fe_give(a, cmul(g, b, !n->i[0]));
	if (!st && b->requires_grad)
		st = fe_give(b, n->i[0] ? cmul(a, g, 1) : cmul(g, a, 1));
	return st;
}

clg_tensor *clg_complex_mul(clg_tensor *a, clg_tensor *b, int conj_b)
{
	clg_tensor *ins[2] = {a, b};
	clg_node *node;
	clg_tensor *y;
	char s0[96], s1[96];

	if (!fe_check_inputs("complex_mul", 2, ins))
		return NULL;
	if (!is_complex(a, 1) || !is_complex(b, 1))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'complex_mul' on device '%s': a %s and b %s must be complex (..., 2)",
					dev_of(a), clg_shape_str(&a->v, s0, sizeof(s0)), clg_shape_str(&b->v, s1, sizeof(s1))));
	y = fe_record_op(cmul(a, b, conj_b != 0), "complex_mul", complex_mul_backward, 2, ins, &node);
	if (node)
		node->i[0] = conj_b != 0;
	return y;
}

/* ---- conv1d through the FFT ---- */

/* The smallest m >= n whose prime factors are 2 and 3: clFFT's radix-5 and -7 passes are slower
 * (PoCL, rfft of 256 rows: 1050 = 2 3 5^2 7 in 8.0 ms, 1152 = 2^7 3^2 in 2.0 ms). */
static int64_t fft_friendly(int64_t n)
{
	for (int64_t m = n > 1 ? n : 1;; m++) {
		int64_t r = m;
		while (r % 2 == 0)
			r /= 2;
		while (r % 3 == 0)
			r /= 3;
		if (r == 1)
			return m;
	}
}

/* t (A, B, n) zero-padded along its last dim: `before` zeros, t, `after` zeros */
static clg_tensor *pad_last(clg_tensor *t, int64_t before, int64_t after)
{
	clg_tensor *parts[3], *y;
	int np = 0, nz = 0, zi[2];

	if (!t)
		return NULL;
	for (int k = 0; k < 2; k++) {
		int64_t len = k == 0 ? before : after;
		if (k == 1)
			parts[np++] = t;
		if (len > 0) {
			zi[nz++] = np;
			parts[np++] = clg_zeros(t->v.buf->backend, t->v.dtype, CLG_SHAPE(t->v.shape[0], t->v.shape[1], len));
		}
	}
	if (np == 1)
		return fe_alias(t);
	y = clg_concat(parts, np, 2);
	for (int k = 0; k < nz; k++)
		clg_free(parts[zi[k]]);
	return y;
}

/* t[(*n)++] = e: every intermediate of spectral_gemm, freed at its end (the graph holds what it needs) */
static clg_tensor *keep(clg_tensor **t, int *n, clg_tensor *e)
{
	t[(*n)++] = e;
	return e;
}

/* irfft of sum_c xs (N, C, F, 2) * conj(ws (OC, C, F, 2)) -> (N, OC, M), the sum as a batched
 * GEMM over the F frequencies (NULL when an input is) */
static clg_tensor *spectral_gemm(clg_tensor *xs, clg_tensor *ws, int64_t N, int64_t C, int64_t OC, int64_t M)
{
	static const int to_fnc[] = {2, 0, 1}, to_fco[] = {2, 1, 0}, to_nof[] = {1, 2, 0};
	int64_t F = M / 2 + 1;
	clg_tensor *t[32] = {0}, *y = NULL, *xc[2], *wc[2];
	int n = 0;
#define KEEP(e) keep(t, &n, (e))

	if (!xs || !ws)
		return NULL;
	clg_tensor *xr = KEEP(clg_reshape(KEEP(clg_slice(xs, 3, 0, 1, 1)), CLG_SHAPE(N, C, F)));
	clg_tensor *xi = KEEP(clg_reshape(KEEP(clg_slice(xs, 3, 1, 2, 1)), CLG_SHAPE(N, C, F)));
	clg_tensor *wr = KEEP(clg_reshape(KEEP(clg_slice(ws, 3, 0, 1, 1)), CLG_SHAPE(OC, C, F)));
	clg_tensor *wi = KEEP(clg_reshape(KEEP(clg_slice(ws, 3, 1, 2, 1)), CLG_SHAPE(OC, C, F)));
	clg_tensor *wn = KEEP(clg_neg(wi));
	if (!xr || !xi || !wr || !wi || !wn)
		goto out;
	/* a (F, N, 2C) = [Xr Xi] */
	xc[0] = xr, xc[1] = xi;
	clg_tensor *a = KEEP(clg_contiguous(KEEP(clg_permute(KEEP(clg_concat(xc, 2, 1)), to_fnc))));
	/* b (F, 2C, 2OC) = [[Wr -Wi] [Wi Wr]] with W as (F, C, OC): built as (2OC, 2C, F) */
	wc[0] = wr, wc[1] = wi;
	clg_tensor *re_rows = KEEP(clg_concat(wc, 2, 1)); /* (OC, 2C, F): output columns of Re */
	wc[0] = wn, wc[1] = wr;
	clg_tensor *im_rows = KEEP(clg_concat(wc, 2, 1)); /* (OC, 2C, F): of Im */
	if (!a || !re_rows || !im_rows)
		goto out;
	wc[0] = re_rows, wc[1] = im_rows;
	clg_tensor *bm = KEEP(clg_contiguous(KEEP(clg_permute(KEEP(clg_concat(wc, 2, 0)), to_fco))));
	clg_tensor *p = bm ? KEEP(clg_matmul(a, bm)) : NULL;      /* (F, N, 2OC) */
	clg_tensor *pn = p ? KEEP(clg_permute(p, to_nof)) : NULL; /* (N, 2OC, F) */
	if (!pn)
		goto out;
	xc[0] = KEEP(clg_reshape(KEEP(clg_slice(pn, 1, 0, OC, 1)), CLG_SHAPE(N, OC, F, 1)));
	xc[1] = KEEP(clg_reshape(KEEP(clg_slice(pn, 1, OC, 2 * OC, 1)), CLG_SHAPE(N, OC, F, 1)));
	clg_tensor *s = xc[0] && xc[1] ? KEEP(clg_concat(xc, 2, 3)) : NULL; /* (N, OC, F, 2) */
	y = s ? clg_irfft(s, M, CLG_FFT_NORM_BACKWARD) : NULL;
out:
#undef KEEP
	for (int i = 0; i < n; i++)
		clg_free(t[i]);
	return y;
}

clg_tensor *clg_conv1d_fft(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t padding)
{
	clg_tensor *ins[3] = {x, w, b}, *t[12] = {0}, *y = NULL;
	int64_t N, C, L, OC, K, Lp, Lout, M;
	char s0[96], s1[96];
	int n = 0;

	if (!fe_check_inputs("conv1d_fft", b ? 3 : 2, ins))
		return NULL;
	if (x->v.ndim != 3 || w->v.ndim != 3 || w->v.shape[1] != x->v.shape[1] || padding < 0 ||
	    (b && (b->v.ndim != 1 || b->v.shape[0] != w->v.shape[0])))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'conv1d_fft' on device '%s': x %s must be (N, C, L), weight %s (OC, C, K), "
					"bias (OC) or none, padding %lld >= 0", dev_of(x), clg_shape_str(&x->v, s0, sizeof(s0)),
					clg_shape_str(&w->v, s1, sizeof(s1)), (long long)padding));
	N = x->v.shape[0], C = x->v.shape[1], L = x->v.shape[2], OC = w->v.shape[0], K = w->v.shape[2];
	Lp = L + 2 * padding;
	Lout = Lp - K + 1;
	if (K < 1 || Lout < 1)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'conv1d_fft' on device '%s': kernel %s longer than the padded input %s (padding %lld)",
					dev_of(x), clg_shape_str(&w->v, s1, sizeof(s1)), clg_shape_str(&x->v, s0, sizeof(s0)),
					(long long)padding));
	M = fft_friendly(Lp);
	/* x (N, C, M), w (OC, C, M) -> spectra (N, C, F, 2) and (OC, C, F, 2) */
	clg_tensor *xp = t[n++] = pad_last(x, padding, M - L - padding);
	clg_tensor *wp = t[n++] = pad_last(w, 0, M - K);
	clg_tensor *xs = t[n++] = xp ? clg_rfft(xp, CLG_FFT_NORM_BACKWARD) : NULL;
	clg_tensor *ws = t[n++] = wp ? clg_rfft(wp, CLG_FFT_NORM_BACKWARD) : NULL;
	/* correlation: per frequency, the product with the kernel's conjugate summed over input
	 * channels, as one real batched GEMM (F, N, 2C) @ (F, 2C, 2OC): [Xr Xi] [[Wr -Wi] [Wi Wr]] =
	 * [Xr Wr + Xi Wi, Xi Wr - Xr Wi] = [Re, Im] of sum_c X conj(W) */
	clg_tensor *full = t[n++] = spectral_gemm(xs, ws, N, C, OC, M); /* (N, OC, M) */
	y = full ? clg_slice(full, 2, 0, Lout, 1) : NULL;
	if (y && b) {
		clg_tensor *br = t[n++] = clg_reshape(b, CLG_SHAPE(OC, 1)), *yb = br ? clg_add(y, br) : NULL;
		clg_free(y);
		y = yb;
	}
	for (int i = 0; i < n; i++)
		clg_free(t[i]);
	return y;
}
