/* FFT ops without clFFT (clg_ops.def, FFT_* and COMPLEX_MUL; host: backend/opencl/cl_ops_fft.c).
 * Expects -DT=<storage type> -DACC=<compute type> (-DUSE_FP64 for double).
 * The dft_* kernels are the direct O(N^2) sum, one work-item per output element, on packed
 * operands (rows of length n, or of bins = n / 2 + 1 complex (re, im) pairs, one after another):
 * the path for lengths clFFT cannot do (prime factors above 13) and for CLGRAD_FFT=own. Twiddle
 * indices k j mod n are kept in integers, so each angle is exact before sinpi / cospi.
 * The bluestein_* kernels are the steps of Bluestein's chirp-z transform (the default for long
 * lengths clFFT cannot do): with the chirp w_j = e^(sign pi i j^2 / n),
 *   X_k = w_k sum_j (x_j w_j) conj(w_(k-j)),
 * a convolution computed by transforms of a length m >= 2n - 1 that clFFT does (host: the
 * bluestein() steps in cl_ops_fft.c). j^2 mod 2n is kept in integers, so each angle is exact.
 * complex_mul works on strided views (cgeom, filled by the host). */

/* e^(sign 2 pi i t / n) for t in [0, n): angle 2 t / n (in units of pi), taken to [-1, 1) */
inline void twiddle_(int t, int n, ACC sign, ACC *c, ACC *s)
{
	ACC a = (ACC)(2 * t > n ? 2 * (t - n) : 2 * t) / (ACC)n;
	*c = cospi(a);
	*s = sign * sinpi(a);
}

/* y (batch, n, 2) = scale * sum_j x (batch, n, 2)[j] e^(sign 2 pi i k j / n) */
#if CLG_WANT(dft_c2c)
__kernel void dft_c2c(const int n, const int batch, const ACC sign, const ACC scale, __global const T *x,
		      __global T *y)
{
	int id = get_global_id(0), b, k, t = 0;
	ACC sr = 0, si = 0;
	if (id >= n * batch)
		return;
	b = id / n, k = id % n;
	x += 2 * (size_t)b * n;
	for (int j = 0; j < n; j++) {
		ACC c, s, xr = LOAD(x, 2 * j), xi = LOAD(x, 2 * j + 1);
		twiddle_(t, n, sign, &c, &s);
		sr += xr * c - xi * s;
		si += xr * s + xi * c;
		t += k;
		if (t >= n)
			t -= n;
	}
	STORE(y, 2 * (size_t)id, scale * sr);
	STORE(y, 2 * (size_t)id + 1, scale * si);
}
#endif

/* y (batch, bins, 2) = scale * sum_j x (batch, n)[j] e^(-2 pi i k j / n), k < bins */
#if CLG_WANT(dft_r2c)
__kernel void dft_r2c(const int n, const int batch, const ACC sign, const ACC scale, __global const T *x,
		      __global T *y)
{
	int bins = n / 2 + 1, id = get_global_id(0), b, k, t = 0;
	ACC sr = 0, si = 0;
	if (id >= bins * batch)
		return;
	b = id / bins, k = id % bins;
	x += (size_t)b * n;
	for (int j = 0; j < n; j++) {
		ACC c, s, xr = LOAD(x, j);
		twiddle_(t, n, -1, &c, &s);
		sr += xr * c;
		si += xr * s;
		t += k;
		if (t >= n)
			t -= n;
	}
	STORE(y, 2 * (size_t)id, scale * sr);
	STORE(y, 2 * (size_t)id + 1, scale * si);
}
#endif

/* y (batch, n)[j] = scale * Re sum_k w_k x (batch, bins, 2)[k] e^(+2 pi i k j / n): w_k = 2 but for
 * DC and the Nyquist bin of even n (1, their imaginary parts ignored) */
#if CLG_WANT(dft_c2r)
__kernel void dft_c2r(const int n, const int batch, const ACC sign, const ACC scale, __global const T *x,
		      __global T *y)
{
	int bins = n / 2 + 1, id = get_global_id(0), b, j, t = 0;
	ACC acc;
	if (id >= n * batch)
		return;
	b = id / n, j = id % n;
	x += 2 * (size_t)b * bins;
	acc = LOAD(x, 0);
	for (int k = 1; k < bins; k++) {
		ACC c, s, w = 2 * k == n ? 1 : 2;
		t += j;
		if (t >= n)
			t -= n;
		twiddle_(t, n, 1, &c, &s);
		acc += w * (LOAD(x, 2 * k) * c - (2 * k == n ? 0 : LOAD(x, 2 * k + 1)) * s);
	}
	STORE(y, id, scale * acc);
}
#endif

/* e^(sign pi i j^2 / n) */
inline void chirp_(int j, int n, ACC sign, ACC *c, ACC *s)
{
	int t = (int)(((long)j * j) % (2 * (long)n)); /* in [0, 2n): angle t / n (units of pi) */
	ACC a = (ACC)(t > n ? t - 2 * n : t) / (ACC)n;
	*c = cospi(a);
	*s = sign * sinpi(a);
}

/* b (m, 2): conj(w_j) at j and m - j for 0 <= j < n, zero between (the convolution's kernel, its
 * negative lags wrapped to the end) */
#if CLG_WANT(bluestein_chirp)
__kernel void bluestein_chirp(const int n, const int m, const ACC sign, __global T *b)
{
	int j = get_global_id(0), t;
	ACC c = 0, s = 0;
	if (j >= m)
		return;
	t = j < n ? j : m - j;
	if (t < n)
		chirp_(t, n, -sign, &c, &s);
	STORE(b, 2 * j, c);
	STORE(b, 2 * j + 1, s);
}
#endif

/* a (batch, m, 2) = x_j w_j for j < n, zero-padded to m. mode 0: x (batch, n, 2); mode 1: x
 * (batch, n) real; mode 2: x (batch, n / 2 + 1, 2), a half spectrum extended as Hermitian (x_(n-j)
 * conjugated for j >= bins; the imaginary parts of DC and the Nyquist bin of even n taken as 0). */
#if CLG_WANT(bluestein_pre)
__kernel void bluestein_pre(const int n, const int m, const int batch, const int mode, const ACC sign,
			    __global const T *x, __global T *a)
{
	int id = get_global_id(0), b, j, bins = n / 2 + 1;
	ACC xr = 0, xi = 0, c, s;
	if (id >= m * batch)
		return;
	b = id / m, j = id % m;
	if (j < n) {
		if (mode == 0) {
			xr = LOAD(x, 2 * ((size_t)b * n + j)), xi = LOAD(x, 2 * ((size_t)b * n + j) + 1);
		} else if (mode == 1) {
			xr = LOAD(x, (size_t)b * n + j);
		} else {
			int k = j < bins ? j : n - j;
			xr = LOAD(x, 2 * ((size_t)b * bins + k));
			xi = k == 0 || 2 * k == n ? 0 : LOAD(x, 2 * ((size_t)b * bins + k) + 1);
			if (j >= bins)
				xi = -xi;
		}
		chirp_(j, n, sign, &c, &s);
	} else {
		c = s = 0;
	}
	STORE(a, 2 * (size_t)id, xr * c - xi * s);
	STORE(a, 2 * (size_t)id + 1, xr * s + xi * c);
}
#endif

/* y = scale * w_k q_k for k < n (mode 0: y (batch, n, 2)), k < bins (mode 1: (batch, bins, 2)), or
 * its real part (mode 2: y (batch, n)); q (batch, m, 2) the convolution (its 1 / m included in scale) */
#if CLG_WANT(bluestein_post)
__kernel void bluestein_post(const int n, const int m, const int batch, const int mode, const ACC sign,
			     const ACC scale, __global const T *q, __global T *y)
{
	int id = get_global_id(0), len = mode == 1 ? n / 2 + 1 : n, b, k;
	ACC c, s, qr, qi;
	if (id >= len * batch)
		return;
	b = id / len, k = id % len;
	chirp_(k, n, sign, &c, &s);
	qr = LOAD(q, 2 * ((size_t)b * m + k)), qi = LOAD(q, 2 * ((size_t)b * m + k) + 1);
	if (mode == 2) {
		STORE(y, id, scale * (qr * c - qi * s));
	} else {
		STORE(y, 2 * (size_t)id, scale * (qr * c - qi * s));
		STORE(y, 2 * (size_t)id + 1, scale * (qr * s + qi * c));
	}
}
#endif

/* Strided complex operands: dst, a, b (k = 0, 1, 2) of one shape of n complex elements. */
typedef struct {
	int nd, n;
	int shape[MAXD];
	int off[3];      /* element offsets */
	int cs[3];       /* stride from re to im */
	int st[3][MAXD]; /* element strides per complex dim */
} cgeom;

/* d = a * b, or a * conj(b) when conj_b is -1 (1 otherwise). Each work-item takes CMUL_RUN
 * consecutive elements of one row of the innermost complex dim (chunks = its count of runs per row),
 * so the index arithmetic over the outer dims is paid once per run rather than per element. */
#define CMUL_RUN 16
#if CLG_WANT(complex_mul)
__kernel void complex_mul(const cgeom g, const int chunks, __global T *d, __global const T *a, __global const T *b,
			  const ACC conj_b)
{
	int id = get_global_id(0), in = g.nd - 1, len = g.shape[in], row, j0, j1;
	int o0 = g.off[0], o1 = g.off[1], o2 = g.off[2];
	if (id >= (g.n / len) * chunks)
		return;
	row = id / chunks;
	j0 = (id % chunks) * CMUL_RUN;
	j1 = min(j0 + CMUL_RUN, len);
	for (int dim = in - 1; dim >= 0; dim--) {
		int q = row % g.shape[dim];
		row /= g.shape[dim];
		o0 += q * g.st[0][dim];
		o1 += q * g.st[1][dim];
		o2 += q * g.st[2][dim];
	}
	o0 += j0 * g.st[0][in], o1 += j0 * g.st[1][in], o2 += j0 * g.st[2][in];
	for (int j = j0; j < j1; j++) {
		ACC ar = LOAD(a, o1), ai = LOAD(a, o1 + g.cs[1]), br = LOAD(b, o2), bi = conj_b * LOAD(b, o2 + g.cs[2]);
		STORE(d, o0, ar * br - ai * bi);
		STORE(d, o0 + g.cs[0], ar * bi + ai * br);
		o0 += g.st[0][in], o1 += g.st[1][in], o2 += g.st[2][in];
	}
}
#endif
