/* The 2-D FFTs (clg_fft2 / clg_ifft2 / clg_rfft2 / clg_irfft2) on the reference and every OpenCL
 * device against a direct 2-D DFT in double on the host, written from numpy's definitions: odd and
 * even H and W (5 x 8, 7 x 7, 28 x 28, 1 x 6, 6 x 1, 5 x 1), no batch and batches (3) and (2, 3),
 * each norm, packed inputs and strided ones (a transposed view, every other row of a larger
 * tensor), irfft2 at its default size and with the rows and bins cut and padded; the output
 * shapes numpy gives; the shape errors. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

static const char *norm_names[] = {"backward", "ortho", "forward"};

/* the 2-D scale of a transform of h x w points under norm (inverse or not) */
static double scale2(clg_fft_norm norm, int inverse, int64_t h, int64_t w)
{
	double n = (double)h * (double)w;
	if (norm == CLG_FFT_NORM_ORTHO)
		return 1 / sqrt(n);
	if (norm == CLG_FFT_NORM_FORWARD)
		return inverse ? 1 : 1 / n;
	return inverse ? 1 / n : 1;
}

/* One (H, W) complex plane, direct: out[k1][k2] = c sum x[n1][n2] e^(sign 2 pi i (k1 n1 / H + k2 n2 / W)) */
static void dft2(const double *x, double *out, int64_t H, int64_t W, int sign, double c)
{
	for (int64_t k1 = 0; k1 < H; k1++)
		for (int64_t k2 = 0; k2 < W; k2++) {
			double re = 0, im = 0;
			for (int64_t n1 = 0; n1 < H; n1++)
				for (int64_t n2 = 0; n2 < W; n2++) {
					double th = sign * 2 * PI * ((double)(k1 * n1 % H) / (double)H + (double)(k2 * n2 % W) / (double)W);
					const double *v = &x[2 * (n1 * W + n2)];
					re += v[0] * cos(th) - v[1] * sin(th);
					im += v[0] * sin(th) + v[1] * cos(th);
				}
			out[2 * (k1 * W + k2)] = c * re;
			out[2 * (k1 * W + k2) + 1] = c * im;
		}
}

/* numpy's irfft2(z, s=(h, w)) of one (H, M) half spectrum: rows cut / zero-padded to h, the
 * inverse along them; bins cut / padded to w/2+1, completed as a Hermitian spectrum (the imaginary
 * parts of DC and of the Nyquist bin of even w ignored), the inverse along them, the real part. */
static void irdft2(const double *z, double *out, int64_t H, int64_t M, int64_t h, int64_t w, double c)
{
	int64_t K = w / 2 + 1;
	double *a = calloc((size_t)(2 * h * K), sizeof(double));

	if (!a)
		return;
	for (int64_t n1 = 0; n1 < h; n1++)
		for (int64_t k = 0; k < K && k < M; k++) {
			double re = 0, im = 0;
			for (int64_t k1 = 0; k1 < h && k1 < H; k1++) {
				double th = 2 * PI * (double)(k1 * n1 % h) / (double)h;
				const double *v = &z[2 * (k1 * M + k)];
				re += v[0] * cos(th) - v[1] * sin(th);
				im += v[0] * sin(th) + v[1] * cos(th);
			}
			a[2 * (n1 * K + k)] = re;
			a[2 * (n1 * K + k) + 1] = im;
		}
	for (int64_t n1 = 0; n1 < h; n1++)
		for (int64_t n2 = 0; n2 < w; n2++) {
			double s = 0;
			for (int64_t k = 0; k < w; k++) {
				double re, im, th = 2 * PI * (double)(k * n2 % w) / (double)w;
				if (k < K) {
					re = a[2 * (n1 * K + k)];
					im = k == 0 || 2 * k == w ? 0 : a[2 * (n1 * K + k) + 1];
				} else {
					re = a[2 * (n1 * K + w - k)];
					im = -a[2 * (n1 * K + w - k) + 1];
				}
				s += re * cos(th) - im * sin(th);
			}
			out[n1 * w + n2] = c * s;
		}
	free(a);
}

enum kind { FFT2, IFFT2, RFFT2, IRFFT2 };
static const char *kind_names[] = {"fft2", "ifft2", "rfft2", "irfft2"};

/* The input's plane (H, Win) (Win the last real or complex dim) and the output's (h, wout). */
typedef struct {
	enum kind k;
	int64_t H, W;   /* the input's two transformed dims (for irfft2: H and the bins M) */
	int64_t h, w;   /* irfft2's arguments (0: defaults) */
	int nb;         /* leading batch dims */
	int64_t batch[2];
	int layout;     /* 0 packed, 1 transposed view, 2 every other row of a taller tensor */
} case2;

static void run_case(clg_backend *be, const case2 *c, clg_fft_norm norm)
{
	const char *dev = be->info.name;
	int cplx_in = c->k != RFFT2, cplx_out = c->k != IRFFT2;
	int64_t nbatch = 1, plane_in = c->H * c->W * (cplx_in ? 2 : 1);
	int64_t oh = c->H, ow = c->W, plane_out;
	int64_t shape[6], oshape[6];
	int nd = 0, ond;
	float *hx, *got;
	double *xd, *want, *tmp = NULL;
	clg_tensor *x = NULL, *y = NULL;
	double err = 0, mag = 0;

	if (c->k == RFFT2)
		ow = c->W / 2 + 1;
	if (c->k == IRFFT2) {
		oh = c->h > 0 ? c->h : c->H;
		ow = c->w > 0 ? c->w : 2 * (c->W - 1);
	}
	plane_out = oh * ow * (cplx_out ? 2 : 1);
	for (int d = 0; d < c->nb; d++)
		nbatch *= shape[nd++] = c->batch[d];
	memcpy(oshape, shape, sizeof(shape));
	shape[nd] = c->H, shape[nd + 1] = c->W, shape[nd + 2] = 2;
	oshape[nd] = oh, oshape[nd + 1] = ow, oshape[nd + 2] = 2;
	ond = nd + 2 + cplx_out;
	nd += 2 + cplx_in;
	hx = malloc(sizeof(float) * (size_t)(2 * nbatch * plane_in));
	got = malloc(sizeof(float) * (size_t)(nbatch * plane_out));
	xd = malloc(sizeof(double) * (size_t)(nbatch * plane_in));
	want = malloc(sizeof(double) * (size_t)(nbatch * plane_out));
	if (c->k == RFFT2)
		tmp = malloc(sizeof(double) * (size_t)(4 * c->H * c->W));
	clg_scope_begin();
	if (!hx || !got || !xd || !want || (c->k == RFFT2 && !tmp)) {
		CHECK(0, "out of host memory");
		goto out;
	}
	t_fill_uniform(hx, (size_t)(2 * nbatch * plane_in), 7 + (unsigned)(c->H * 31 + c->W), -1, 1);
	for (int64_t i = 0; i < nbatch * plane_in; i++)
		xd[i] = hx[i];
	if (c->layout == 0) {
		x = clg_from_host(be, CLG_F32, nd, shape, hx);
	} else if (c->layout == 1) { /* the same values, stored with H and W swapped */
		int64_t tshape[6], e = cplx_in ? 2 : 1;
		float *t = malloc(sizeof(float) * (size_t)(nbatch * plane_in));
		memcpy(tshape, shape, sizeof(tshape));
		tshape[nd - 2 - cplx_in] = c->W, tshape[nd - 1 - cplx_in] = c->H;
		for (int64_t b = 0; t && b < nbatch; b++)
			for (int64_t i = 0; i < c->H; i++)
				for (int64_t j = 0; j < c->W; j++)
					for (int64_t q = 0; q < e; q++)
						t[b * plane_in + (j * c->H + i) * e + q] = hx[b * plane_in + (i * c->W + j) * e + q];
		x = t ? clg_transpose(clg_from_host(be, CLG_F32, nd, tshape, t), nd - 2 - cplx_in, nd - 1 - cplx_in) : NULL;
		free(t);
	} else { /* rows 0, 2, 4, ... of a tensor twice as tall, whose odd rows are junk */
		int64_t tshape[6], row = plane_in / c->H;
		float *t = malloc(sizeof(float) * (size_t)(2 * nbatch * plane_in));
		memcpy(tshape, shape, sizeof(tshape));
		tshape[nd - 2 - cplx_in] = 2 * c->H;
		for (int64_t b = 0; t && b < nbatch; b++)
			for (int64_t i = 0; i < 2 * c->H; i++)
				for (int64_t j = 0; j < row; j++)
					t[(b * 2 * c->H + i) * row + j] = i % 2 ? 1e3f : hx[(b * c->H + i / 2) * row + j];
		x = t ? clg_slice(clg_from_host(be, CLG_F32, nd, tshape, t), nd - 2 - cplx_in, 0, 2 * c->H, 2) : NULL;
		free(t);
	}
	CHECK(x != NULL, "%s input on %s: %s", kind_names[c->k], dev, clg_last_error());
	if (!x)
		goto out;
	switch (c->k) {
	case FFT2: y = clg_fft2(x, norm); break;
	case IFFT2: y = clg_ifft2(x, norm); break;
	case RFFT2: y = clg_rfft2(x, norm); break;
	case IRFFT2: y = clg_irfft2(x, c->h, c->w, norm); break;
	}
	CHECK(y != NULL, "%s of %lld x %lld (layout %d) norm %s on %s: %s", kind_names[c->k], (long long)c->H,
	      (long long)c->W, c->layout, norm_names[norm], dev, clg_last_error());
	if (!y)
		goto out;
	CHECK(clg_ndim(y) == ond && !memcmp(clg_shape(y), oshape, sizeof(int64_t) * (size_t)ond) && clg_is_contiguous(y),
	      "%s of %lld x %lld on %s: output shape or layout is not numpy's (%lld, %lld)%s", kind_names[c->k],
	      (long long)c->H, (long long)c->W, dev, (long long)oh, (long long)ow, cplx_out ? " complex" : "");
	if (clg_numel(y) != nbatch * plane_out || clg_to_host(y, got, sizeof(float) * (size_t)(nbatch * plane_out)))
		goto out;
	for (int64_t b = 0; b < nbatch; b++) {
		const double *xi = xd + b * plane_in;
		double *wo = want + b * plane_out;
		switch (c->k) {
		case FFT2: dft2(xi, wo, c->H, c->W, -1, scale2(norm, 0, c->H, c->W)); break;
		case IFFT2: dft2(xi, wo, c->H, c->W, 1, scale2(norm, 1, c->H, c->W)); break;
		case RFFT2:
			for (int64_t i = 0; i < c->H * c->W; i++)
				tmp[2 * i] = xi[i], tmp[2 * i + 1] = 0;
			dft2(tmp, tmp + 2 * c->H * c->W, c->H, c->W, -1, scale2(norm, 0, c->H, c->W));
			for (int64_t i = 0; i < c->H; i++)
				memcpy(wo + 2 * i * ow, tmp + 2 * c->H * c->W + 2 * i * c->W, sizeof(double) * 2 * (size_t)ow);
			break;
		case IRFFT2: irdft2(xi, wo, c->H, c->W, oh, ow, scale2(norm, 1, oh, ow)); break;
		}
	}
	for (int64_t i = 0; i < nbatch * plane_out; i++) {
		err = fmax(err, fabs(got[i] - want[i]));
		mag = fmax(mag, fabs(want[i]));
	}
	CHECK(err <= 2e-6 * (mag + 1) * sqrt((double)(c->H * c->W)),
	      "%s of %lld x %lld batch %lld (layout %d, h %lld, w %lld) norm %s on %s: off the direct DFT by %g (max %g)",
	      kind_names[c->k], (long long)c->H, (long long)c->W, (long long)nbatch, c->layout, (long long)c->h,
	      (long long)c->w, norm_names[norm], dev, err, mag);
out:
	clg_scope_end();
	free(hx);
	free(got);
	free(xd);
	free(want);
	free(tmp);
}

static void errors(clg_backend *be)
{
	const char *dev = be->info.name;
	clg_scope_begin();
	CHECK(clg_fft2(clg_zeros(be, CLG_F32, CLG_SHAPE(4, 2)), CLG_FFT_NORM_BACKWARD) == NULL &&
	      clg_last_status() == CLG_ERR_SHAPE && strstr(clg_last_error(), "'fft2'"), "fft2 of (4, 2) on %s: %s", dev,
	      clg_last_error());
	CHECK(clg_ifft2(clg_zeros(be, CLG_F32, CLG_SHAPE(4, 3, 3)), CLG_FFT_NORM_BACKWARD) == NULL &&
	      clg_last_status() == CLG_ERR_SHAPE, "ifft2 of (4, 3, 3) on %s: %s", dev, clg_last_error());
	CHECK(clg_rfft2(clg_zeros(be, CLG_F32, CLG_SHAPE(4)), CLG_FFT_NORM_BACKWARD) == NULL &&
	      clg_last_status() == CLG_ERR_SHAPE && strstr(clg_last_error(), "'rfft2'"), "rfft2 of (4) on %s: %s", dev,
	      clg_last_error());
	CHECK(clg_irfft2(clg_zeros(be, CLG_F32, CLG_SHAPE(3, 1, 2)), 0, 0, CLG_FFT_NORM_BACKWARD) == NULL &&
	      clg_last_status() == CLG_ERR_SHAPE && strstr(clg_last_error(), "'irfft2'"),
	      "irfft2 of one bin, w = 0, on %s: %s", dev, clg_last_error());
	clg_scope_end();
}

int main(void)
{
	static const int64_t planes[][2] = {{5, 8}, {7, 7}, {28, 28}, {1, 6}, {6, 1}, {5, 1}};
	static const int64_t batches[][3] = {{0, 0, 0}, {1, 3, 0}, {2, 2, 3}}; /* nb, dims */
	int n = t_opencl_count();

	for (int i = 0; i <= n; i++) {
		clg_backend *be = NULL;
		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		for (size_t p = 0; p < sizeof(planes) / sizeof(planes[0]); p++)
			for (size_t b = 0; b < 3; b++)
				for (int norm = 0; norm < 3; norm++)
					for (int k = FFT2; k <= IRFFT2; k++) {
						int64_t H = planes[p][0], W = planes[p][1];
						case2 c = {.k = (enum kind)k, .H = H, .W = W, .nb = (int)batches[b][0],
							   .batch = {batches[b][1], batches[b][2]}};
						/* the strided layouts on the unbatched and the 2-dim batches, in turn */
						c.layout = b == 1 ? 0 : (int)((p + b + (size_t)norm) % 3);
						if (H * W > 100 && b == 2)
							continue; /* 28 x 28 in 2 x 3: no more than (3) */
						if (k == IRFFT2) { /* a half spectrum of W/2+1 bins; for W == 1, w = 1 */
							c.W = W / 2 + 1;
							c.w = W == 1 ? 1 : (W % 2 ? W : 0);
						}
						run_case(be, &c, (clg_fft_norm)norm);
					}
		/* irfft2 cutting and padding both dims: (5, 4) bins to (3, 4), (7, 9), (6, 3) */
		for (int norm = 0; norm < 3; norm++) {
			static const int64_t hw[][2] = {{3, 4}, {7, 9}, {6, 3}};
			for (int j = 0; j < 3; j++) {
				case2 c = {.k = IRFFT2, .H = 5, .W = 4, .h = hw[j][0], .w = hw[j][1], .nb = 1, .batch = {3},
					   .layout = j};
				run_case(be, &c, (clg_fft_norm)norm);
			}
		}
		errors(be);
		clg_backend_close(be);
	}
	return t_finish("test_fft2");
}
