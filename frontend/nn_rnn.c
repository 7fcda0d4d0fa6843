/* Recurrent cells: PyTorch's GRUCell and LSTMCell, composed from differentiable ops (linear,
 * slice, sigmoid, tanh, mul, add), so their backward is that of the ops. Gate order and formulas
 * in clgrad_nn.h. */
#include "fe_internal.h"

#include <math.h>
#include <stdlib.h>

/* Checks x (B, I), the state tensors (B, H) and w_ih (G H, I), w_hh (G H, H), b_* (G H); *H gets
 * the hidden size. */
static clg_status check_cell(const char *op, int G, clg_tensor *x, clg_tensor *h, clg_tensor *c, clg_tensor *w_ih,
			     clg_tensor *w_hh, clg_tensor *b_ih, clg_tensor *b_hh, int64_t *H)
{
	clg_tensor *all[] = {x, h, c, w_ih, w_hh, b_ih, b_hh};
	const int64_t *xs, *wi, *wh;
	int64_t B, I;

	if (!x || !h || !w_ih || !w_hh || (G == 4 && !c))
		return clg_last_status() ? clg_last_status() : clg_fail(CLG_ERR_INVALID, "%s: a NULL tensor", op);
	for (int k = 1; k < 7; k++) /* dtypes may differ (autocast): the ops promote */
		if (all[k] && clg_device_of(all[k]) != clg_device_of(x))
			return clg_fail(CLG_ERR_DEVICE, "%s: tensors on different devices ('%s' and '%s'); copy with clg_to_device first",
					op, clg_device_of(x)->info.name, clg_device_of(all[k])->info.name);
	xs = clg_shape(x), wi = clg_shape(w_ih), wh = clg_shape(w_hh);
	B = xs[0], I = clg_ndim(x) == 2 ? xs[1] : -1;
	*H = clg_ndim(w_hh) == 2 ? wh[1] : -1;
	if (clg_ndim(x) != 2 || clg_ndim(w_ih) != 2 || clg_ndim(w_hh) != 2 || *H < 1 || wi[0] != G * *H ||
	    wi[1] != I || wh[0] != G * *H || clg_ndim(h) != 2 || clg_shape(h)[0] != B || clg_shape(h)[1] != *H ||
	    (c && (clg_ndim(c) != 2 || clg_shape(c)[0] != B || clg_shape(c)[1] != *H)) ||
	    (b_ih && (clg_ndim(b_ih) != 1 || clg_shape(b_ih)[0] != G * *H)) ||
	    (b_hh && (clg_ndim(b_hh) != 1 || clg_shape(b_hh)[0] != G * *H)))
		return clg_fail(CLG_ERR_SHAPE,
				"%s on %s: x (%lld, %lld), h (%lld, %lld), weight_ih (%lld, %lld), weight_hh (%lld, %lld), "
				"biases %lld, %lld: expected x (B, I), h%s (B, H), weight_ih (%d H, I), weight_hh (%d H, H), "
				"biases (%d H)",
				op, clg_device_of(x)->info.name, (long long)xs[0], clg_ndim(x) > 1 ? (long long)xs[1] : -1LL,
				(long long)clg_shape(h)[0], clg_ndim(h) > 1 ? (long long)clg_shape(h)[1] : -1LL,
				(long long)wi[0], clg_ndim(w_ih) > 1 ? (long long)wi[1] : -1LL, (long long)wh[0],
				clg_ndim(w_hh) > 1 ? (long long)wh[1] : -1LL, b_ih ? (long long)clg_shape(b_ih)[0] : 0LL,
				b_hh ? (long long)clg_shape(b_hh)[0] : 0LL, G == 4 ? " and c" : "", G, G, G);
	return CLG_OK;
}

clg_tensor *clg_gru_cell(clg_tensor *x, clg_tensor *h, clg_tensor *w_ih, clg_tensor *w_hh, clg_tensor *b_ih,
			 clg_tensor *b_hh)
{
	int64_t H;
	clg_tensor *out;
	clg_status st = check_cell("gru_cell", 3, x, h, NULL, w_ih, w_hh, b_ih, b_hh, &H);

	if (st)
		return fe_fail(st);
	clg_scope_begin();
	clg_tensor *gi = clg_linear(x, w_ih, b_ih); /* (B, 3H): r, z, n */
	clg_tensor *gh = clg_linear(h, w_hh, b_hh); /* (B, 3H) */
	/* r and z in one sigmoid over the first 2H columns */
	clg_tensor *rz = clg_sigmoid(clg_add(clg_slice(gi, 1, 0, 2 * H, 1), clg_slice(gh, 1, 0, 2 * H, 1)));
	clg_tensor *r = clg_slice(rz, 1, 0, H, 1), *z = clg_slice(rz, 1, H, 2 * H, 1);
	clg_tensor *n = clg_tanh(clg_add(clg_slice(gi, 1, 2 * H, 3 * H, 1), clg_mul(r, clg_slice(gh, 1, 2 * H, 3 * H, 1))));
	/* (1 - z) n + z h = n + z (h - n) */
	out = clg_keep(clg_add(n, clg_mul(z, clg_sub(h, n))));
	clg_scope_end();
	return out;
}

clg_status clg_lstm_cell(clg_tensor *x, clg_tensor *h, clg_tensor *c, clg_tensor *w_ih, clg_tensor *w_hh,
			 clg_tensor *b_ih, clg_tensor *b_hh, clg_tensor **h_out, clg_tensor **c_out)
{
	int64_t H;
	clg_status st = check_cell("lstm_cell", 4, x, h, c, w_ih, w_hh, b_ih, b_hh, &H);

	*h_out = *c_out = NULL;
	if (st)
		return st;
	clg_scope_begin();
	clg_tensor *g = clg_add(clg_linear(x, w_ih, b_ih), clg_linear(h, w_hh, b_hh)); /* (B, 4H): i, f, g, o */
	clg_tensor *s = clg_sigmoid(g); /* i, f and o from it (its g columns unused) */
	clg_tensor *i = clg_slice(s, 1, 0, H, 1), *f = clg_slice(s, 1, H, 2 * H, 1), *o = clg_slice(s, 1, 3 * H, 4 * H, 1);
	clg_tensor *gg = clg_tanh(clg_slice(g, 1, 2 * H, 3 * H, 1));
	clg_tensor *c2 = clg_add(clg_mul(f, c), clg_mul(i, gg));
	clg_tensor *h2 = clg_mul(o, clg_tanh(c2));
	if (h2) {
		*h_out = clg_keep(h2);
		*c_out = clg_keep(c2);
	} else {
		st = clg_last_status() ? clg_last_status() : CLG_ERR_INVALID;
	}
	clg_scope_end();
	return st;
}

/* ---- the modules ---- */

typedef struct {
	int64_t hidden;
} cell_dims;

static void free_data(clg_module *m) { free(m->data); }

/* The state tensor k of in (or zeros (B, H) like x when not given or NULL; scope-owned). */
static clg_tensor *state_or_zeros(int n_in, clg_tensor *const *in, int k, int64_t H)
{
	if (k < n_in && in[k])
		return in[k];
	return clg_zeros(clg_device_of(in[0]), clg_dtype_of(in[0]), CLG_SHAPE(clg_shape(in[0])[0], H));
}

static clg_tensor *bias_of(clg_module *m, int k) { return m->ntensors > k ? m->tensors[k] : NULL; }

static clg_status gru_forward_n(clg_module *m, int n_in, clg_tensor *const *in, int n_out, clg_tensor **out)
{
	int64_t H = ((const cell_dims *)m->data)->hidden;
	clg_status st = CLG_OK;

	if (n_in > 2 || n_out != 1)
		return clg_fail(CLG_ERR_INVALID, "gru_cell module: takes (x) or (x, h) and gives (h'), not %d in and %d out",
				n_in, n_out);
	clg_scope_begin();
	out[0] = clg_keep(clg_gru_cell(in[0], state_or_zeros(n_in, in, 1, H), m->tensors[0], m->tensors[1], bias_of(m, 2),
				       bias_of(m, 3)));
	if (!out[0])
		st = clg_last_status();
	clg_scope_end();
	return st;
}

static clg_status lstm_forward_n(clg_module *m, int n_in, clg_tensor *const *in, int n_out, clg_tensor **out)
{
	int64_t H = ((const cell_dims *)m->data)->hidden;
	clg_tensor *h2, *c2;
	clg_status st;

	if (n_in > 3 || n_out < 1 || n_out > 2)
		return clg_fail(CLG_ERR_INVALID,
				"lstm_cell module: takes (x), (x, h) or (x, h, c) and gives (h') or (h', c'), not %d in and %d out",
				n_in, n_out);
	clg_scope_begin();
	st = clg_lstm_cell(in[0], state_or_zeros(n_in, in, 1, H), state_or_zeros(n_in, in, 2, H), m->tensors[0],
			   m->tensors[1], bias_of(m, 2), bias_of(m, 3), &h2, &c2);
	if (!st) {
		out[0] = clg_keep(h2);
		if (n_out > 1)
			out[1] = clg_keep(c2);
	}
	clg_scope_end();
	return st;
}

static const clg_module_ops gru_ops = {"gru_cell", NULL, free_data, gru_forward_n};
static const clg_module_ops lstm_ops = {"lstm_cell", NULL, free_data, lstm_forward_n};

static clg_module *cell(const clg_module_ops *ops, int G, clg_backend *be, int64_t input, int64_t hidden, int bias,
			uint64_t seed)
{
	clg_module *m;
	double b = hidden > 0 ? 1.0 / sqrt((double)hidden) : 0;

	if (input < 1 || hidden < 1) {
		fe_fail(clg_fail(CLG_ERR_INVALID, "%s module: input size %lld and hidden size %lld must be >= 1", ops->kind,
				 (long long)input, (long long)hidden));
		return NULL;
	}
	m = clg_module_new(ops);
	if (!m)
		return NULL;
	if (!(m->data = malloc(sizeof(cell_dims)))) {
		clg_module_free(m);
		fe_fail(clg_fail(CLG_ERR_OOM, "%s module: out of host memory", ops->kind));
		return NULL;
	}
	((cell_dims *)m->data)->hidden = hidden;
	/* each tensor from its own stream of seed: U(-1/sqrt(H), 1/sqrt(H)) as PyTorch */
	clg_status st = clg_module_add_tensor(m, "weight_ih", clg_init_uniform(be, CLG_SHAPE(G * hidden, input), b, seed), 1);
	if (!st)
		st = clg_module_add_tensor(m, "weight_hh", clg_init_uniform(be, CLG_SHAPE(G * hidden, hidden), b, seed ^ 0x68e31da4u),
					   1);
	if (!st && bias)
		st = clg_module_add_tensor(m, "bias_ih", clg_init_uniform(be, CLG_SHAPE(G * hidden), b, seed ^ 0x5bd1e995u), 1);
	if (!st && bias)
		st = clg_module_add_tensor(m, "bias_hh", clg_init_uniform(be, CLG_SHAPE(G * hidden), b, seed ^ 0x1b873593u), 1);
	if (st) {
		clg_module_free(m);
		fe_fail(st);
		return NULL;
	}
	return m;
}

clg_module *clg_nn_gru_cell(clg_backend *be, int64_t input, int64_t hidden, int bias, uint64_t seed)
{
	return cell(&gru_ops, 3, be, input, hidden, bias, seed);
}

clg_module *clg_nn_lstm_cell(clg_backend *be, int64_t input, int64_t hidden, int bias, uint64_t seed)
{
	return cell(&lstm_ops, 4, be, input, hidden, bias, seed);
}
