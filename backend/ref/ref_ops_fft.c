/* Reference FFT ops (clg_ops.def, FFT_* and COMPLEX_MUL): every transform is a full complex DFT
 * accumulated in double, then rounded once to the dst's dtype:
 *   - powers of two above 16: iterative radix-2 (decimation in time);
 *   - other lengths up to 64: the direct O(N^2) sum;
 *   - longer ones: Bluestein (the DFT as a convolution with a chirp, done with radix-2 FFTs).
 * Twiddle angles are reduced exactly (k n mod N in integers) before cos / sin, so long lengths
 * lose nothing to the argument. R2C transforms the real row as complex and keeps N/2+1 bins; C2R
 * rebuilds the Hermitian spectrum (conjugates above N/2, imaginary parts of DC and Nyquist
 * dropped) and keeps the real part. */
#include "ref_internal.h"

#include "../clg_fft_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* e^(sign 2 pi i j / n), j in [0, n) */
static void twiddle(int64_t j, int64_t n, int sign, double *re, double *im)
{
	double a = 2 * PI * (double)j / (double)n;
	*re = cos(a);
	*im = sign * sin(a);
}

/* In-place radix-2 DFT of length n (a power of two). */
static void radix2(double *xr, double *xi, int64_t n, int sign)
{
	for (int64_t i = 1, j = 0; i < n; i++) { /* bit reversal */
		int64_t bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j |= bit;
		if (i < j) {
			double t = xr[i];
			xr[i] = xr[j], xr[j] = t;
			t = xi[i];
			xi[i] = xi[j], xi[j] = t;
		}
	}
	for (int64_t len = 2; len <= n; len <<= 1) {
		for (int64_t k = 0; k < len / 2; k++) {
			double wr, wi;
			twiddle(k, len, sign, &wr, &wi);
			for (int64_t s = 0; s < n; s += len) {
				int64_t a = s + k, b = s + k + len / 2;
				double tr = xr[b] * wr - xi[b] * wi, ti = xr[b] * wi + xi[b] * wr;
				xr[b] = xr[a] - tr, xi[b] = xi[a] - ti;
				xr[a] += tr, xi[a] += ti;
			}
		}
	}
}

/* The direct sum; y must not alias x. */
static void direct(const double *xr, const double *xi, double *yr, double *yi, int64_t n, int sign)
{
	for (int64_t k = 0; k < n; k++) {
		double sr = 0, si = 0;
		for (int64_t j = 0; j < n; j++) {
			double wr, wi;
			twiddle(k * j % n, n, sign, &wr, &wi);
			sr += xr[j] * wr - xi[j] * wi;
			si += xr[j] * wi + xi[j] * wr;
		}
		yr[k] = sr, yi[k] = si;
	}
}

/* Bluestein: with c_j = e^(sign pi i j^2 / n), y_k = c_k sum_j (x_j c_j) conj(c_(k-j)), a
 * convolution done as a cyclic one of length m >= 2n - 1 (a power of two). w: 6 m scratch. */
static void bluestein(const double *xr, const double *xi, double *yr, double *yi, int64_t n, int sign, double *w)
{
	int64_t m = 1;
	double *ar, *ai, *br, *bi, *cr, *ci;

	while (m < 2 * n - 1)
		m <<= 1;
	ar = w, ai = w + m, br = w + 2 * m, bi = w + 3 * m, cr = w + 4 * m, ci = w + 5 * m;
	for (int64_t j = 0; j < n; j++) {
		double a = PI * (double)(j * j % (2 * n)) / (double)n; /* j^2 mod 2n keeps the angle exact */
		cr[j] = cos(a), ci[j] = sign * sin(a);
	}
	memset(w, 0, sizeof(double) * 4 * (size_t)m);
	for (int64_t j = 0; j < n; j++) {
		ar[j] = xr[j] * cr[j] - xi[j] * ci[j];
		ai[j] = xr[j] * ci[j] + xi[j] * cr[j];
		br[j] = cr[j], bi[j] = -ci[j];
		if (j > 0)
			br[m - j] = cr[j], bi[m - j] = -ci[j];
	}
	radix2(ar, ai, m, -1);
	radix2(br, bi, m, -1);
	for (int64_t j = 0; j < m; j++) {
		double r = ar[j] * br[j] - ai[j] * bi[j], i = ar[j] * bi[j] + ai[j] * br[j];
		ar[j] = r, ai[j] = i;
	}
	radix2(ar, ai, m, +1); /* unnormalised: divide by m below */
	for (int64_t k = 0; k < n; k++) {
		double r = ar[k] / (double)m, i = ai[k] / (double)m;
		yr[k] = r * cr[k] - i * ci[k];
		yi[k] = r * ci[k] + i * cr[k];
	}
}

/* Scratch doubles a transform of length n needs beside its 4 n of input and output. */
static size_t scratch_of(int64_t n)
{
	int64_t m = 1;
	while (m < 2 * n - 1)
		m <<= 1;
	return (size_t)(6 * m);
}

/* y = DFT(x), unnormalised, y not aliasing x. */
static void dft(const double *xr, const double *xi, double *yr, double *yi, int64_t n, int sign, double *w)
{
	if (n > 16 && (n & (n - 1)) == 0) {
		memcpy(yr, xr, sizeof(double) * (size_t)n);
		memcpy(yi, xi, sizeof(double) * (size_t)n);
		radix2(yr, yi, n, sign);
	} else if (n <= 64) {
		direct(xr, xi, yr, yi, n, sign);
	} else {
		bluestein(xr, xi, yr, yi, n, sign, w);
	}
}

static clg_status ref_fft(clg_backend *be, const clg_op_call *c)
{
	const clg_view *s = &c->src[0], *d = &c->dst;
	clg_fft_geom g;
	int64_t idx[CLG_MAX_DIMS] = {0}, n, K;
	double *buf, *xr, *xi, *yr, *yi, *w, scale = c->f[0];
	clg_status st = clg_fft_check(be, c, &g);

	if (st)
		return st;
	n = g.n, K = g.bins;
	buf = malloc(sizeof(double) * (4 * (size_t)n + scratch_of(n)));
	if (!buf)
		return clg_fail(CLG_ERR_OOM, "op '%s' on device '%s': out of host memory for length %lld",
				clg_op_name(c->op), be->info.name, (long long)n);
	xr = buf, xi = buf + n, yr = buf + 2 * n, yi = buf + 3 * n, w = buf + 4 * n;
	for (int64_t b = 0; b < g.batch; b++) {
		int64_t so = s->offset, dof = d->offset, rem = b;
		for (int k = g.nb - 1; k >= 0; k--) { /* the batch index b as a multi-index */
			idx[k] = rem % d->shape[k];
			rem /= d->shape[k];
			so += idx[k] * s->stride[k];
			dof += idx[k] * d->stride[k];
		}
		if (c->op == CLG_OP_FFT_C2C) {
			int64_t ss = s->stride[g.nb], sc = s->stride[g.nb + 1], ds = d->stride[g.nb], dc = d->stride[g.nb + 1];
			for (int64_t j = 0; j < n; j++)
				xr[j] = clg_ref_load(s, so + j * ss), xi[j] = clg_ref_load(s, so + j * ss + sc);
			dft(xr, xi, yr, yi, n, c->i[0] ? +1 : -1, w);
			for (int64_t k = 0; k < n; k++) {
				clg_ref_store(d, dof + k * ds, scale * yr[k]);
				clg_ref_store(d, dof + k * ds + dc, scale * yi[k]);
			}
		} else if (c->op == CLG_OP_FFT_R2C) {
			int64_t ss = s->stride[g.nb], ds = d->stride[g.nb], dc = d->stride[g.nb + 1];
			for (int64_t j = 0; j < n; j++)
				xr[j] = clg_ref_load(s, so + j * ss), xi[j] = 0;
			dft(xr, xi, yr, yi, n, -1, w);
			for (int64_t k = 0; k < K; k++) {
				clg_ref_store(d, dof + k * ds, scale * yr[k]);
				clg_ref_store(d, dof + k * ds + dc, scale * yi[k]);
			}
		} else { /* C2R */
			int64_t ss = s->stride[g.nb], sc = s->stride[g.nb + 1], ds = d->stride[g.nb];
			for (int64_t k = 0; k < K; k++) {
				xr[k] = clg_ref_load(s, so + k * ss);
				/* DC, and Nyquist of an even length, are real in a Hermitian spectrum */
				xi[k] = k == 0 || 2 * k == n ? 0 : clg_ref_load(s, so + k * ss + sc);
			}
			for (int64_t k = K; k < n; k++)
				xr[k] = xr[n - k], xi[k] = -xi[n - k];
			dft(xr, xi, yr, yi, n, +1, w);
			for (int64_t j = 0; j < n; j++)
				clg_ref_store(d, dof + j * ds, scale * yr[j]);
		}
	}
	free(buf);
	return CLG_OK;
}

static clg_status ref_complex_mul(clg_backend *be, const clg_op_call *c)
{
	const clg_view *v[3] = {&c->dst, &c->src[0], &c->src[1]};
	int64_t idx[CLG_MAX_DIMS] = {0}, off[3], shape[CLG_MAX_DIMS];
	int nd;
	double conj;
	clg_status st = clg_fft_check(be, c, NULL);

	if (st)
		return st;
	nd = c->dst.ndim - 1; /* complex elements: every dim but the (re, im) one */
	conj = c->i[0] ? -1 : 1;
	for (int d = 0; d < nd; d++) {
		shape[d] = c->dst.shape[d];
		if (shape[d] == 0)
			return CLG_OK;
	}
	for (int k = 0; k < 3; k++)
		off[k] = v[k]->offset;
	do {
		int64_t ic[3];
		for (int k = 0; k < 3; k++)
			ic[k] = v[k]->stride[nd];
		double ar = clg_ref_load(v[1], off[1]), ai = clg_ref_load(v[1], off[1] + ic[1]);
		double br = clg_ref_load(v[2], off[2]), bi = conj * clg_ref_load(v[2], off[2] + ic[2]);
		clg_ref_store(v[0], off[0], ar * br - ai * bi);
		clg_ref_store(v[0], off[0] + ic[0], ar * bi + ai * br);
	} while (nd > 0 && clg_ref_next_index(nd, shape, idx, v, 3, off));
	return CLG_OK;
}

void clg_ref_register_fft(clg_backend *be)
{
	be->ops[CLG_OP_FFT_C2C] = ref_fft;
	be->ops[CLG_OP_FFT_R2C] = ref_fft;
	be->ops[CLG_OP_FFT_C2R] = ref_fft;
	be->ops[CLG_OP_COMPLEX_MUL] = ref_complex_mul;
}
