/* Gradient-check cases of the recurrent cells (see tests/test_grad.h): clg_gru_cell and
 * clg_lstm_cell with and without biases, and a GRU unrolled over three steps (backpropagation
 * through time). A case has at most three inputs, so the cell's tensors travel packed in one:
 * P (G H, I + H + 2) = [weight_ih | weight_hh | bias_ih | bias_hh] by columns; the LSTM's h and c
 * are one (B, 2 H) input, and its output is (h', c') side by side.
 *
 * The gradient check holds the devices to the reference, which runs the same composition; so the
 * float32 calls also check the modules (clg_nn_gru_cell, clg_nn_lstm_cell, loaded from P through
 * clg_module_load_state) against a host computation in double of PyTorch's GRUCell and LSTMCell
 * formulas and gate orders (r, z, n; i, f, g, o), written from PyTorch's documentation. */
#include "test_grad.h"

#include <math.h>
#include <string.h>

#define MAXV 512

/* t's values as doubles (float32 or float64, any layout); n elements, at most MAXV */
static int read_doubles(clg_tensor *t, double *out, int64_t n)
{
	clg_tensor *c = clg_contiguous(t);
	float f[MAXV];
	int ok = 0;
	if (!c || n > MAXV)
		goto out;
	if (clg_dtype_of(c) == CLG_F64) {
		ok = clg_to_host(c, out, sizeof(double) * (size_t)n) == CLG_OK;
	} else {
		ok = clg_to_host(c, f, sizeof(float) * (size_t)n) == CLG_OK;
		for (int64_t i = 0; ok && i < n; i++)
			out[i] = f[i];
	}
out:
	clg_free(c);
	return ok;
}

static double sig(double v) { return 1 / (1 + exp(-v)); }

/* PyTorch's cells in double. P (G H, I + H + 2) packed as above (bias columns used when bias);
 * x (B, I), h, c (B, H); h2, c2 (B, H) (c, c2 unused by the GRU, G = 3). */
static void host_cell(int G, const double *P, const double *x, const double *h, const double *c, int64_t B,
		      int64_t I, int64_t H, int bias, double *h2, double *c2)
{
	int64_t W = I + H + 2;
	for (int64_t b = 0; b < B; b++)
		for (int64_t j = 0; j < H; j++) {
			double gi[4], gh[4]; /* per gate: W_i* x + b_i*, W_h* h + b_h* */
			for (int g = 0; g < G; g++) {
				const double *row = P + (g * H + j) * W;
				gi[g] = bias ? row[I + H] : 0;
				gh[g] = bias ? row[I + H + 1] : 0;
				for (int64_t k = 0; k < I; k++)
					gi[g] += row[k] * x[b * I + k];
				for (int64_t k = 0; k < H; k++)
					gh[g] += row[I + k] * h[b * H + k];
			}
			if (G == 3) {
				double r = sig(gi[0] + gh[0]), z = sig(gi[1] + gh[1]), n = tanh(gi[2] + r * gh[2]);
				h2[b * H + j] = (1 - z) * n + z * h[b * H + j];
			} else {
				double i = sig(gi[0] + gh[0]), f = sig(gi[1] + gh[1]), g = tanh(gi[2] + gh[2]);
				double o = sig(gi[3] + gh[3]);
				c2[b * H + j] = f * c[b * H + j] + i * g;
				h2[b * H + j] = o * tanh(c2[b * H + j]);
			}
		}
}

/* The cell's tensors as views of P: weight_ih, weight_hh, bias_ih, bias_hh (NULL without bias). */
static void unpack(clg_tensor *P, int64_t I, int64_t H, int bias, clg_tensor *t[4])
{
	t[0] = clg_slice(P, 1, 0, I, 1);
	t[1] = clg_slice(P, 1, I, I + H, 1);
	t[2] = t[3] = NULL;
	if (bias) {
		clg_tensor *bi = clg_slice(P, 1, I + H, I + H + 1, 1), *bh = clg_slice(P, 1, I + H + 1, I + H + 2, 1);
		int64_t GH = clg_shape(P)[0];
		t[2] = clg_reshape(bi, CLG_SHAPE(GH));
		t[3] = clg_reshape(bh, CLG_SHAPE(GH));
		clg_free(bi);
		clg_free(bh);
	}
}

static void free4(clg_tensor *t[4])
{
	for (int k = 0; k < 4; k++)
		clg_free(t[k]);
}

/* float32 calls: the module of G gates, loaded from P by name, against host_cell. */
static void check_module(int G, clg_tensor *x, clg_tensor *h, clg_tensor *c, clg_tensor *P, int bias)
{
	int64_t B = clg_shape(x)[0], I = clg_shape(x)[1], H = clg_shape(h)[1];
	clg_backend *be = clg_device_of(x);
	const char *dev = be->info.name, *kind = G == 3 ? "gru_cell" : "lstm_cell";
	char *names[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
	clg_tensor *t[4], *in[3] = {x, h, c}, *out[2] = {0};
	int is_param[4] = {1, 1, 1, 1};
	clg_named_tensors src = {bias ? 4 : 2, names, t, is_param};
	clg_module *m;
	static double hp[MAXV], hx[MAXV], hh[MAXV], hc[MAXV], e_h[MAXV], e_c[MAXV], d_h[MAXV], d_c[MAXV];

	if (clg_dtype_of(x) != CLG_F32)
		return;
	clg_no_grad_begin();
	unpack(P, I, H, bias, t);
	m = G == 3 ? clg_nn_gru_cell(be, I, H, bias, 5) : clg_nn_lstm_cell(be, I, H, bias, 5);
	CHECK(m != NULL, "%s module on %s: %s", kind, dev, clg_last_error());
	if (m)
		CHECK_OK(clg_module_load_state(m, &src, 1));
	if (m)
		CHECK_OK(clg_module_forward_n(m, G == 3 ? 2 : 3, in, G == 3 ? 1 : 2, out));
	if (out[0] && read_doubles(P, hp, clg_numel(P)) && read_doubles(x, hx, B * I) && read_doubles(h, hh, B * H) &&
	    (!c || read_doubles(c, hc, B * H)) && read_doubles(out[0], d_h, B * H) && (G == 3 || read_doubles(out[1], d_c, B * H))) {
		double eh = 0, ec = 0;
		host_cell(G, hp, hx, hh, hc, B, I, H, bias, e_h, e_c);
		for (int64_t i = 0; i < B * H; i++) {
			eh = fmax(eh, fabs(d_h[i] - e_h[i]));
			ec = G == 4 ? fmax(ec, fabs(d_c[i] - e_c[i])) : 0;
		}
		CHECK(eh < 1e-5 && ec < 1e-5, "%s module on %s: h' off by %.3g, c' off by %.3g from PyTorch's formulas", kind, dev,
		      eh, ec);
	} else {
		CHECK(0, "%s module on %s: no output to compare: %s", kind, dev, clg_last_error());
	}
	/* the one-tensor forward is the cell from zero state */
	if (m && G == 3) {
		clg_tensor *z = clg_zeros(be, CLG_F32, CLG_SHAPE(B, H)), *in2[2] = {x, z}, *a = clg_module_forward(m, x), *b = NULL;
		CHECK_OK(clg_module_forward_n(m, 2, in2, 1, &b));
		if (a && b && read_doubles(a, d_h, B * H) && read_doubles(b, e_h, B * H))
			CHECK(memcmp(d_h, e_h, sizeof(double) * (size_t)(B * H)) == 0, "%s on %s: forward(x) is not zero state", kind, dev);
		clg_free(a), clg_free(b), clg_free(z);
	}
	clg_free(out[0]);
	clg_free(out[1]);
	clg_module_free(m);
	free4(t);
	clg_no_grad_end();
}

/* ---- the cases ---- */

static clg_tensor *gru(clg_tensor **in, int bias)
{
	int64_t I = clg_shape(in[0])[1], H = clg_shape(in[1])[1];
	clg_tensor *t[4], *y;
	check_module(3, in[0], in[1], NULL, in[2], bias);
	unpack(in[2], I, H, bias, t);
	y = clg_gru_cell(in[0], in[1], t[0], t[1], t[2], t[3]);
	free4(t);
	return y;
}

static clg_tensor *f_gru(clg_tensor **in) { return gru(in, 1); }
static clg_tensor *f_gru_nobias(clg_tensor **in) { return gru(in, 0); }

static clg_tensor *lstm(clg_tensor **in, int bias)
{
	int64_t I = clg_shape(in[0])[1], H = clg_shape(in[1])[1] / 2;
	clg_tensor *t[4], *h = clg_slice(in[1], 1, 0, H, 1), *c = clg_slice(in[1], 1, H, 2 * H, 1), *h2, *c2, *y = NULL;
	check_module(4, in[0], h, c, in[2], bias);
	unpack(in[2], I, H, bias, t);
	if (!clg_lstm_cell(in[0], h, c, t[0], t[1], t[2], t[3], &h2, &c2)) {
		clg_tensor *both[2] = {h2, c2};
		y = clg_concat(both, 2, 1);
		clg_free(h2);
		clg_free(c2);
	}
	free4(t);
	clg_free(h);
	clg_free(c);
	return y;
}

static clg_tensor *f_lstm(clg_tensor **in) { return lstm(in, 1); }
static clg_tensor *f_lstm_nobias(clg_tensor **in) { return lstm(in, 0); }

/* x (T, B, I), h0 (B, H): h after T steps of one GRU (the same weights each step) */
static clg_tensor *f_gru_steps(clg_tensor **in)
{
	int64_t T = clg_shape(in[0])[0], B = clg_shape(in[0])[1], I = clg_shape(in[0])[2], H = clg_shape(in[1])[1];
	clg_tensor *t[4], *h = clg_retain(in[1]);
	unpack(in[2], I, H, 1, t);
	for (int64_t s = 0; s < T && h; s++) {
		clg_tensor *xs = clg_slice(in[0], 0, s, s + 1, 1), *x2 = clg_reshape(xs, CLG_SHAPE(B, I));
		clg_tensor *h2 = clg_gru_cell(x2, h, t[0], t[1], t[2], t[3]);
		clg_free(xs);
		clg_free(x2);
		clg_free(h);
		h = h2;
	}
	free4(t);
	return h;
}

/* x (B, I), state (B, H) or (B, 2 H), P (G H, I + H + 2) */
static const gcase cases[] = {
	{"gru_cell", 3, {2, 2, 2}, {{3, 4}, {3, 3}, {9, 9}}, -1, 1, f_gru},
	{"gru_cell_nobias", 3, {2, 2, 2}, {{2, 3}, {2, 4}, {12, 9}}, -1, 1, f_gru_nobias},
	{"lstm_cell", 3, {2, 2, 2}, {{3, 4}, {3, 6}, {12, 9}}, -1, 1, f_lstm},
	{"lstm_cell_nobias", 3, {2, 2, 2}, {{2, 2}, {2, 4}, {8, 6}}, -1, 1, f_lstm_nobias},
	{"gru_cell_steps", 3, {3, 2, 2}, {{3, 2, 3}, {2, 2}, {6, 7}}, -1, 1, f_gru_steps},
};

const gcase *grad_cases_rnn(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
