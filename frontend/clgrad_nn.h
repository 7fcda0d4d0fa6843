/* clgrad: neural-network modules (included by clgrad.h).
 *
 * A module owns its parameters (leaf tensors with requires_grad) and buffers (e.g. running
 * statistics). clg_module_forward returns a new tensor owned by the caller (or the current scope).
 * Parameters are initialised on the host from a seed, so every device starts from the same values.
 * Names follow PyTorch's (a Sequential's children are "0", "1", ...; "0.weight", "0.bias"), so a
 * checkpoint's tensors line up with a PyTorch state_dict. */
#ifndef CLGRAD_NN_H
#define CLGRAD_NN_H

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
/* over the last dim; weight ones, bias zeros */
clg_module *clg_nn_layer_norm(clg_backend *be, int64_t dim, double eps);
/* weight, bias; buffers running_mean, running_var (PyTorch's BatchNorm2d, also for (N, C)) */
clg_module *clg_nn_batch_norm2d(clg_backend *be, int64_t channels, double momentum, double eps);
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

clg_tensor *clg_module_forward(clg_module *m, clg_tensor *x);
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

/* ---- for module implementations (nn.c and users' own modules) ---- */
typedef struct {
	const char *kind;
	clg_tensor *(*forward)(clg_module *m, clg_tensor *x);
	void (*destroy)(clg_module *m);  /* frees the module's own data (not the tensors below) */
} clg_module_ops;

#define CLG_MODULE_MAX_TENSORS 8
struct clg_module {
	const clg_module_ops *ops;
	int training;
	int ntensors;
	const char *tensor_names[CLG_MODULE_MAX_TENSORS];
	clg_tensor *tensors[CLG_MODULE_MAX_TENSORS]; /* owned */
	int is_param[CLG_MODULE_MAX_TENSORS];
	int nchildren;
	clg_module **children;                       /* owned */
	void *data;                                  /* module-specific */
};
/* A module with the given ops and no tensors (calloc'd). */
clg_module *clg_module_new(const clg_module_ops *ops);
/* Adds a tensor (taken over: it leaves any scope) as a parameter or a buffer. */
clg_status clg_module_add_tensor(clg_module *m, const char *name, clg_tensor *t, int is_param);
/* A tensor of the given shape with values U(-bound, bound) from seed, made on the host. */
clg_tensor *clg_init_uniform(clg_backend *be, int ndim, const int64_t *shape, double bound, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
