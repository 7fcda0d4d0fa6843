/* clgrad: neural-network modules (included by clgrad.h).
 *
 * A module owns its parameters (leaf tensors with requires_grad) and buffers (e.g. running
 * statistics). clg_module_forward returns a new tensor owned by the caller (or the current scope).
 * Parameters are initialised on the host from a seed, so every device starts from the same values.
 * Names follow PyTorch's (a Sequential's children are "0", "1", ...; "0.weight", "0.bias"), so a
 * checkpoint's tensors line up with a PyTorch state_dict. */
#ifndef CLGRAD_NN_H
#define CLGRAD_NN_H

#include "clgrad.h" /* the types; clgrad.h includes this header back, the guards stop the loop */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clg_module clg_module;

typedef enum {
	CLG_INIT_DEFAULT,         /* PyTorch's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
	CLG_INIT_KAIMING_UNIFORM, /* U(-b, b), b = sqrt(6 / fan_in) (ReLU gain) */
	CLG_INIT_XAVIER_UNIFORM,  /* U(-b, b), b = sqrt(6 / (fan_in + fan_out)) */
} clg_init;

clg_module *clg_nn_linear(clg_backend *be, int64_t in, int64_t out, int bias, clg_init init, uint64_t seed);
/* weight (out, in / groups, k, k), bias (out); square kernel, same stride and padding both ways */
clg_module *clg_nn_conv2d(clg_backend *be, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad,
			  int64_t groups, int bias, clg_init init, uint64_t seed);
clg_module *clg_nn_max_pool2d(int64_t k, int64_t stride, int64_t pad);
/* PyTorch's ConvTranspose2d(in, out, k, stride, padding, output_padding, groups, bias, dilation):
 * weight (in, out / groups, k, k), bias (out), both U(-b, b) with b = 1 / sqrt(out / groups * k * k)
 * (PyTorch's fan-in of that weight); square kernel, the same parameters both ways
 * (clg_conv_transpose2d) */
clg_module *clg_nn_conv_transpose2d(clg_backend *be, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad,
				    int64_t output_padding, int64_t groups, int64_t dilation, int bias, uint64_t seed);
/* over the last dim; weight ones, bias zeros */
clg_module *clg_nn_layer_norm(clg_backend *be, int64_t dim, double eps);
/* weight, bias; buffers running_mean, running_var (PyTorch's BatchNorm2d, also for (N, C)) */
clg_module *clg_nn_batch_norm2d(clg_backend *be, int64_t channels, double momentum, double eps);
/* PyTorch's GroupNorm(groups, channels, eps, affine): weight ones and bias zeros (C) when affine
 * (clg_group_norm); x (N, C, *) */
clg_module *clg_nn_group_norm(clg_backend *be, int64_t groups, int64_t channels, double eps, int affine);
/* PyTorch's RMSNorm(normalized_shape, eps, elementwise_affine): over the last ndims dims, whose
 * sizes are shape; weight ones of that shape when affine; eps < 0 means eps=None (clg_rms_norm) */
clg_module *clg_nn_rms_norm(clg_backend *be, int ndims, const int64_t *shape, double eps, int affine);
/* PyTorch's Upsample(size or scale_factor, mode, align_corners) over nsp (1 or 2) spatial dims:
 * clg_interpolate with size (nsp entries) or scale_factor (nsp entries; the other NULL), copied */
clg_module *clg_nn_upsample(int nsp, const int64_t *size, const double *scale_factor, clg_interp mode, int align_corners);
/* a new mask each call, derived from seed and the call count */
clg_module *clg_nn_dropout(double p, uint64_t seed);
/* weight (num, dim); forward takes int32 ids of any shape */
clg_module *clg_nn_embedding(clg_backend *be, int64_t num, int64_t dim, uint64_t seed);
clg_module *clg_nn_relu(void);
clg_module *clg_nn_tanh(void);
clg_module *clg_nn_gelu(void);
/* (N, d1, d2, ...) -> (N, d1 * d2 * ...) */
clg_module *clg_nn_flatten(void);
/* Takes ownership of the n modules. */
clg_module *clg_nn_sequential(clg_module **mods, int n);

/* Recurrent cells, PyTorch's GRUCell and LSTMCell: x (B, input), h and c (B, hidden); tensors
 * weight_ih (G * hidden, input), weight_hh (G * hidden, hidden), bias_ih, bias_hh (G * hidden)
 * (no biases when bias is 0), G = 3 (gates r, z, n) for the GRU and 4 (i, f, g, o) for the LSTM,
 * all initialised U(-1/sqrt(hidden), 1/sqrt(hidden)) from seed.
 *   GRU:  r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)     LSTM: i = sigmoid(W_ii x + b_ii + W_hi h + b_hi)
 *         z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)           f = sigmoid(W_if x + b_if + W_hf h + b_hf)
 *         n = tanh(W_in x + b_in + r * (W_hn h + b_hn))        g = tanh(W_ig x + b_ig + W_hg h + b_hg)
 *         h' = (1 - z) * n + z * h                             o = sigmoid(W_io x + b_io + W_ho h + b_ho)
 *                                                              c' = f * c + i * g, h' = o * tanh(c')
 * clg_module_forward_n: the GRU takes (x) or (x, h) and gives (h'); the LSTM takes (x), (x, h) or
 * (x, h, c) and gives (h') or (h', c'). A state not given (or NULL) is zeros; clg_module_forward(x)
 * gives h' from zero state. */
clg_module *clg_nn_gru_cell(clg_backend *be, int64_t input, int64_t hidden, int bias, uint64_t seed);
clg_module *clg_nn_lstm_cell(clg_backend *be, int64_t input, int64_t hidden, int bias, uint64_t seed);
/* The cells as functions of their tensors (the biases may be NULL): h' of the GRU; h' and c' of
 * the LSTM (*h_out and *c_out, NULL on failure; the status says why). Differentiable throughout. */
clg_tensor *clg_gru_cell(clg_tensor *x, clg_tensor *h, clg_tensor *w_ih, clg_tensor *w_hh, clg_tensor *b_ih,
			 clg_tensor *b_hh);
clg_status clg_lstm_cell(clg_tensor *x, clg_tensor *h, clg_tensor *c, clg_tensor *w_ih, clg_tensor *w_hh,
			 clg_tensor *b_ih, clg_tensor *b_hh, clg_tensor **h_out, clg_tensor **c_out);

clg_tensor *clg_module_forward(clg_module *m, clg_tensor *x);
/* A forward over several tensors in and out, e.g. (x, h) -> (h') of a recurrent cell: out[0 ..
 * n_out) get new tensors (the caller's, or the current scope's), all NULL on failure. A module of
 * one input and one output (every module without a forward_n) accepts n_in = n_out = 1. */
clg_status clg_module_forward_n(clg_module *m, int n_in, clg_tensor *const *in, int n_out, clg_tensor **out);
/* Training mode (dropout active, batch statistics) or evaluation; applies to children. */
void clg_module_train(clg_module *m, int training);
void clg_module_free(clg_module *m);

/* Named tensors of a module: parameters (trainable) and, with buffers set, buffers too.
 * The arrays are malloc'd (free them with free()); the tensors are borrowed. */
typedef struct {
	int n;
	char **names;        /* "0.weight", ... (owned by the list) */
	clg_tensor **tensors;
	int *is_param;
} clg_named_tensors;
clg_status clg_module_state(clg_module *m, int buffers, clg_named_tensors *out);
void clg_named_tensors_free(clg_named_tensors *l);
/* Number of trainable scalars. */
int64_t clg_module_num_params(clg_module *m);
/* The module's tensor (parameter or buffer) of a state name such as "0.weight" (borrowed), or NULL. */
clg_tensor *clg_module_find(clg_module *m, const char *name);
/* Copies src's tensors into the module's of the same names (parameters and buffers), as PyTorch's
 * load_state_dict: converted to each module tensor's dtype and device, values only (the module's
 * tensors stay, so an optimizer over them stays valid; is_param of src is ignored). Shapes must
 * agree; strict also refuses a module tensor src lacks and a src tensor the module lacks. One
 * CLG_ERR_INVALID names every missing, unexpected and mis-shaped tensor, and then nothing is
 * loaded. Without strict, missing tensors keep their values and unexpected ones are ignored. */
clg_status clg_module_load_state(clg_module *m, const clg_named_tensors *src, int strict);
/* Moves every tensor of the module (and its children) to be: each is copied there and replaces the
 * old one, which is released (gradients are dropped; a tensor two modules share stays shared).
 * All or nothing: on failure the module is unchanged. Tensors taken from the module before
 * (clg_module_state lists, an optimizer) still point at the old ones: make them afterwards. */
clg_status clg_module_to(clg_module *m, clg_backend *be);

/* ---- for module implementations (nn.c and users' own modules) ---- */
typedef struct {
	const char *kind;
	clg_tensor *(*forward)(clg_module *m, clg_tensor *x);
	void (*destroy)(clg_module *m);  /* frees the module's own data (not the tensors below) */
	/* optional: the forward over several tensors (clg_module_forward_n; forward may then be NULL,
	 * clg_module_forward calls this with one in and one out). Set every out[i] or fail. */
	clg_status (*forward_n)(clg_module *m, int n_in, clg_tensor *const *in, int n_out, clg_tensor **out);
} clg_module_ops;

struct clg_module {
	const clg_module_ops *ops;
	int training;
	int ntensors;
	char **tensor_names;   /* (ntensors) copies owned by the module */
	clg_tensor **tensors;  /* (ntensors) owned */
	int *is_param;         /* (ntensors) */
	int nchildren;
	clg_module **children; /* (nchildren) owned */
	char **child_names;    /* (nchildren) copies: a sequential's "0", "1", ... */
	int tensors_cap, children_cap;
	void *data;            /* module-specific */
};
/* A module with the given ops and no tensors (calloc'd). */
clg_module *clg_module_new(const clg_module_ops *ops);
/* Adds a tensor as a parameter (requires_grad set) or a buffer, under a copy of name. t is taken
 * over (it leaves any scope), and released on failure too: a NULL t (a failed creation), a name
 * that is empty, holds a '.' or is taken already. Any number of tensors. */
clg_status clg_module_add_tensor(clg_module *m, const char *name, clg_tensor *t, int is_param);
/* Adds a child module (taken over, freed on failure) under a copy of name, or under its position
 * ("0", "1", ...) when name is NULL; its state names get "name." in front. */
clg_status clg_module_add_child(clg_module *m, const char *name, clg_module *child);
/* m with the n children added under "0", "1", ... (their positions): every child is taken over;
 * where m or a child is NULL (its error stands) or an add fails, m and every child are freed and
 * NULL returned. */
clg_module *clg_module_add_children(clg_module *m, clg_module **kids, int n);
/* A tensor of the given shape with values U(-bound, bound) from seed, made on the host. */
clg_tensor *clg_init_uniform(clg_backend *be, int ndim, const int64_t *shape, double bound, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
