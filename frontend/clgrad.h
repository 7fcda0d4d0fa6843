/* clgrad: tensors with reverse-mode autograd on any OpenCL device (and a reference backend).
 *
 * Errors. Functions returning clg_status say how they failed through clg_last_error(). Functions
 * returning a tensor return NULL on failure; clg_last_status() then gives the status and
 * clg_last_error() the message (op, device, shapes, OpenCL error). A NULL argument makes a tensor
 * function return NULL without overwriting the first error, so chains such as
 * clg_relu(clg_add(a, b)) report the failure that started it.
 *
 * Memory ownership.
 * - Every function that returns a tensor returns a new reference owned by the caller. Release it
 *   with clg_free(). Views (reshape, permute, slice, expand...) share their base's storage; the
 *   storage lives until its last tensor is freed.
 * - Inside clg_scope_begin() / clg_scope_end(), tensors created are owned by the scope and freed at
 *   its end unless clg_keep() moved them out (to the enclosing scope, or to the caller if none).
 *   clg_free() on a scoped tensor frees it at once.
 * - The autograd graph holds its own references to what backward needs, so freeing a tensor that
 *   fed an op never breaks backward. clg_backward() frees the graph's saved tensors as soon as they
 *   are used; a second backward through the same graph fails with CLG_ERR_STATE unless the first
 *   used clg_backward_ex(..., retain_graph = 1).
 * - clg_grad(t) returns a borrowed pointer owned by t (valid until t's grad is zeroed or t freed).
 *
 * Asynchrony. Ops enqueue device work and return at once; only reading values (clg_to_host,
 * clg_item) waits for the device.
 *
 * Threads. A backend, and the tensors on it, are used by one thread at a time.
 */
#ifndef CLGRAD_H
#define CLGRAD_H

#include "clg_backend.h"
#include "clg_config.h" /* options: clg_config_set, clg_config_get */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clg_tensor clg_tensor;

/* Helpers to pass a shape literal: clg_zeros(be, CLG_F32, CLG_SHAPE(2, 3)). */
#define CLG_SHAPE(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}

clg_status clg_last_status(void);

/* ---- creation ------------------------------------------------------------------------------ */
clg_tensor *clg_empty(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape);
clg_tensor *clg_zeros(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape);
clg_tensor *clg_ones(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape);
clg_tensor *clg_full(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, double value);
/* 0, 1, ..., n - 1 */
clg_tensor *clg_arange(clg_backend *be, clg_dtype dt, int64_t n);
/* Copies `data` (ndim/shape, row-major, dtype dt) to the device. CLG_F16 data is IEEE half bits,
 * one uint16_t per element (clg_float_to_half / clg_half_to_float convert); float16 tensors exist
 * on every device and work with the elementwise, reduction, softmax and layer norm ops, computed
 * in float32 (other ops fail with CLG_ERR_DTYPE). */
clg_tensor *clg_from_host(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, const void *data);
/* Copies t (any layout) to another device: an explicit move between devices. */
clg_tensor *clg_to_device(clg_tensor *t, clg_backend *be);
/* Copies src's values into dst (same shape and dtype, same device), in place and outside the
 * graph: for loading weights or resetting state. */
clg_status clg_assign(clg_tensor *dst, clg_tensor *src);
/* Reads t (any layout) into host memory of numel * dtype size bytes; waits for the device. */
clg_status clg_to_host(clg_tensor *t, void *out, size_t bytes);
/* A read that overlaps the device's work: started behind the ops already queued, it returns at
 * once; out holds the data after clg_read_wait (and must stay valid until then). */
typedef struct {
	clg_backend *be;
	void *done;
} clg_read;
clg_status clg_to_host_start(clg_tensor *t, void *out, size_t bytes, clg_read *r);
clg_status clg_read_wait(clg_read *r);
/* The single value of a one-element tensor. */
clg_status clg_item(clg_tensor *t, double *out);

/* ---- properties ---------------------------------------------------------------------------- */
int clg_ndim(const clg_tensor *t);
const int64_t *clg_shape(const clg_tensor *t);
int64_t clg_numel(const clg_tensor *t);
clg_dtype clg_dtype_of(const clg_tensor *t);
clg_backend *clg_device_of(const clg_tensor *t);
int clg_is_contiguous(const clg_tensor *t);

/* ---- views (no copy) ----------------------------------------------------------------------- */
/* One dim may be -1 (inferred). Non-contiguous inputs are copied first. */
clg_tensor *clg_reshape(clg_tensor *t, int ndim, const int64_t *shape);
clg_tensor *clg_permute(clg_tensor *t, const int *perm);
clg_tensor *clg_transpose(clg_tensor *t, int d0, int d1);
/* Elements start, start + step, ... < end along dim (negative start/end count from the end). */
clg_tensor *clg_slice(clg_tensor *t, int dim, int64_t start, int64_t end, int64_t step);
/* Broadcast to shape (size-1 dims and new leading dims repeat with stride 0). */
clg_tensor *clg_expand(clg_tensor *t, int ndim, const int64_t *shape);
/* A contiguous tensor with t's values: a view of t if t is contiguous, else a copy. */
clg_tensor *clg_contiguous(clg_tensor *t);

/* ---- autograd ------------------------------------------------------------------------------ */
void clg_set_requires_grad(clg_tensor *t, int on);
int clg_requires_grad(const clg_tensor *t);
clg_tensor *clg_grad(clg_tensor *t);  /* borrowed; NULL before any backward */
void clg_zero_grad(clg_tensor *t);    /* drops the gradient */
/* Backward from a one-element tensor (gradient 1). */
clg_status clg_backward(clg_tensor *root);
/* Backward with a given gradient (same shape as root, NULL means ones); retain_graph keeps the
 * graph for another backward. */
clg_status clg_backward_ex(clg_tensor *root, clg_tensor *grad, int retain_graph);
/* clg_backward that calls ready(user, leaf) as soon as a leaf's gradient is final, while the rest
 * of the backward pass is still to be queued: data parallelism starts reading gradients early.
 * leaf is only to be compared with tensors the caller owns (a temporary leaf may be gone). */
typedef void (*clg_leaf_ready_fn)(void *user, clg_tensor *leaf);
clg_status clg_backward_overlap(clg_tensor *root, clg_leaf_ready_fn ready, void *user);
/* A tensor sharing t's storage, cut from the graph. */
clg_tensor *clg_detach(clg_tensor *t);
/* Ops between these record no graph (evaluation); they nest. */
void clg_no_grad_begin(void);
void clg_no_grad_end(void);
int clg_grad_enabled(void);

/* Activation checkpointing, as torch.utils.checkpoint.checkpoint: computes out[0..nout) =
 * fn(user, in[0..nin)) without keeping fn's intermediate tensors. One graph node stands for the
 * call; its backward runs fn again with recording on (under the autocast dtype of the first call,
 * its random draws replayed: dropout drops the same elements) and backpropagates through that
 * run, giving gradients equal to an ordinary call's at the cost of a second forward of fn. What
 * the call keeps for backward is its inputs only. fn returns CLG_OK with every out[i] set (tensors
 * of the current scope or its own); in[] may hold NULLs (passed as NULL both times). Gradients
 * reach the inputs and the leaf tensors fn uses (parameters); a tensor computed outside fn with a
 * graph must come in through in[]. fn must make the same calls both times (it may check
 * clg_recomputing() to leave counters alone on the re-run). Without grad (clg_grad_enabled() 0),
 * fn simply runs. nin, nout: 1 to 8. */
typedef clg_status (*clg_checkpoint_fn)(void *user, clg_tensor *const *in, clg_tensor **out);
clg_status clg_checkpoint(clg_checkpoint_fn fn, void *user, int nin, clg_tensor *const *in, int nout, clg_tensor **out);
/* clg_checkpoint for bindings whose user data must live as long as the graph (a Python function):
 * user_free(user) (may be NULL) is called exactly once, when the call no longer needs user: before
 * it returns where nothing was recorded (grad off, a failure), else as its graph node is freed. */
clg_status clg_checkpoint_ex(clg_checkpoint_fn fn, void *user, void (*user_free)(void *), int nin,
			     clg_tensor *const *in, int nout, clg_tensor **out);
/* 1 while backward re-runs a checkpointed function. */
int clg_recomputing(void);

/* ---- memory -------------------------------------------------------------------------------- */
void clg_free(clg_tensor *t);
/* One more owner's reference to t (freed by one more clg_free): for bindings that hand the same
 * tensor to several owners (the Python binding's .grad). Returns t. */
clg_tensor *clg_retain(clg_tensor *t);
void clg_scope_begin(void);
void clg_scope_end(void);
/* Moves t out of the current scope; returns t. */
clg_tensor *clg_keep(clg_tensor *t);
/* Takes t out of whichever scope holds it (any depth), so that the reference the scope held is the
 * caller's: for bindings whose objects own their tensors (a Python Tensor made while a trainer's
 * step scope is open must outlive that scope if Python keeps it). Returns t. */
clg_tensor *clg_unscope(clg_tensor *t);

/* ---- ops (all differentiable ones record the graph) ---------------------------------------- */
/* elementwise, with NumPy broadcasting */
clg_tensor *clg_add(clg_tensor *a, clg_tensor *b);
clg_tensor *clg_sub(clg_tensor *a, clg_tensor *b);
clg_tensor *clg_mul(clg_tensor *a, clg_tensor *b);
clg_tensor *clg_div(clg_tensor *a, clg_tensor *b);
clg_tensor *clg_neg(clg_tensor *a);
clg_tensor *clg_exp(clg_tensor *a);
clg_tensor *clg_log(clg_tensor *a);
clg_tensor *clg_tanh(clg_tensor *a);
clg_tensor *clg_relu(clg_tensor *a);
/* alpha * a + beta */
clg_tensor *clg_affine(clg_tensor *a, double alpha, double beta);
/* reductions over the listed axes (negative axes count from the end); naxes 0 means all */
clg_tensor *clg_sum(clg_tensor *a, int naxes, const int *axes, int keepdim);
clg_tensor *clg_mean(clg_tensor *a, int naxes, const int *axes, int keepdim);
/* torch.matmul: (..., M, K) @ (..., K, N) -> (batch..., M, N), the batch dims broadcast against
 * each other ((B, H, T, D) @ (B, H, D, S); (T, D) @ (B, H, D, S); (B, 1, M, K) @ (H, K, N)); a 1-D
 * a is (1, K) and a 1-D b (K, 1), the added dim removed from the result (vector-matrix,
 * matrix-vector, and the dot product of two vectors, a 0-d tensor). One GEMM call: the batch dims
 * fold into one without a copy where they are mergeable; batch dims broadcast on both sides are
 * materialised first. */
clg_tensor *clg_matmul(clg_tensor *a, clg_tensor *b);
/* x (N, in) @ w^T with w (out, in), plus b (out) when b is not NULL (reshape more dims to 2) */
clg_tensor *clg_linear(clg_tensor *x, clg_tensor *w, clg_tensor *b);
/* act(linear(x, w, b)) with the bias and the activation fused into one pass after the GEMM, and
 * in the backward the activation's gradient and the bias gradient in one pass (BIAS_ACT ops). */
typedef enum { CLG_ACT_NONE = 0, CLG_ACT_RELU = 1, CLG_ACT_GELU = 2 } clg_act;
clg_tensor *clg_linear_act(clg_tensor *x, clg_tensor *w, clg_tensor *b, clg_act act);
/* The fused paths of linear, linear_act, cross_entropy and scaled_dot_product_attention are on by
 * default ($CLGRAD_FUSED=0 turns them off at start); off, the same functions compose the unfused
 * ops (for comparisons). */
void clg_set_fused_ops(int enabled);
int clg_fused_ops_enabled(void);

/* Fast start: makes ready, ahead of the first step, the kernel programs a training step will
 * need on be: the ones the workload (a name of the caller's choosing, e.g. "train mlp"; NULL for
 * none) used on this device in earlier runs (a list kept in the kernel cache folder, with their
 * exact options; programs made later in this process are added to the workload's list) and the
 * usual ones for dtype. Each comes from the disk cache or is
 * compiled and cached; several at once in threads ($CLGRAD_PRECOMPILE_THREADS, default one per
 * core; 1 = one after another). A program that fails is left to its first use, which reports the
 * error. Nothing to do on the reference backend. *n_ready (may be NULL): programs made ready. */
clg_status clg_precompile(clg_backend *be, const char *workload, clg_dtype dtype, int *n_ready);

/* ---- mixed precision ---------------------------------------------------------------------- */
/* t converted to dt (float32, float16, bfloat16, float64; rounded to nearest even), a new
 * contiguous tensor; differentiable (the gradient comes back converted to t's dtype). dt equal
 * to t's dtype: t itself (a new reference). */
clg_tensor *clg_cast(clg_tensor *t, clg_dtype dt);
/* Autocast, as torch.autocast. Between begin and end (they nest; dt CLG_F16 or CLG_BF16) matmul,
 * linear and linear_act cast float32 inputs to dt and compute in dt (the GEMM accumulates in
 * float32, their outputs are dt); softmax, log_softmax, cross_entropy, nll_loss, layer_norm and
 * batch_norm cast 16-bit inputs to float32; a binary elementwise op on two float dtypes computes in
 * the wider one (always, autocast or not). Backward runs in the dtypes its forward chose,
 * whatever the autocast state; gradients reach each tensor in its own dtype (float32 master
 * weights get float32 gradients). conv2d's GEMMs (forward and backward) take float16 copies of
 * their operands and keep float32 results: im2col, col2im, the bias and its output stay float32. */
void clg_autocast_begin(clg_dtype dt);
void clg_autocast_end(void);
clg_dtype clg_autocast_dtype(void); /* the innermost autocast dtype; CLG_F32 when off */

/* activations and other elementwise ops */
clg_tensor *clg_sigmoid(clg_tensor *a);
clg_tensor *clg_gelu(clg_tensor *a);      /* exact: x * Phi(x) */
/* GELU's tanh form (GPT-2's; PyTorch's gelu(approximate='tanh')):
 * 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
clg_tensor *clg_gelu_tanh(clg_tensor *a);
clg_tensor *clg_silu(clg_tensor *a);
clg_tensor *clg_abs(clg_tensor *a);
clg_tensor *clg_sqrt(clg_tensor *a);
clg_tensor *clg_rsqrt(clg_tensor *a);
clg_tensor *clg_leaky_relu(clg_tensor *a, double slope);
clg_tensor *clg_clamp(clg_tensor *a, double lo, double hi);
/* torch.clamp(x, min, max) with tensor bounds: min(max(x, lo), hi), the three broadcast together
 * (one of lo, hi may be NULL: no bound); a NaN in x or a bound gives NaN, lo > hi gives hi. The
 * gradient goes to x where lo <= x <= hi, to lo where x < lo < hi, to hi where x > hi or hi < lo
 * (PyTorch's), each summed back to its shape. */
clg_tensor *clg_clamp_tensor(clg_tensor *x, clg_tensor *lo, clg_tensor *hi);
clg_tensor *clg_pow(clg_tensor *a, clg_tensor *b);
typedef enum { CLG_CMP_EQ, CLG_CMP_LT, CLG_CMP_LE, CLG_CMP_GT, CLG_CMP_GE } clg_cmp;
/* 1 where the comparison holds, else 0 (not differentiable) */
clg_tensor *clg_compare(clg_tensor *a, clg_tensor *b, clg_cmp cmp);
/* cond != 0 ? a : b, with broadcasting */
clg_tensor *clg_where(clg_tensor *cond, clg_tensor *a, clg_tensor *b);
/* over the last dim. max and min propagate NaN; their backward gives each row's gradient to the one
 * element torch.max(dim) / torch.min(dim) index: the first extreme one on ties, the first NaN in a
 * row holding one (clg_argmax's choice, of -a for min) */
clg_tensor *clg_max(clg_tensor *a);
clg_tensor *clg_min(clg_tensor *a);
clg_tensor *clg_argmax(clg_tensor *a);    /* int32 */
clg_tensor *clg_argmin(clg_tensor *a);    /* int32: the first smallest, the first NaN in a row holding one */
/* torch.max(a, dim, keepdim) / torch.min(a, dim, keepdim): the values over dim (negative counts from
 * the end), dim dropped or kept as size 1; where indices is not NULL, *indices gets the int32
 * positions along dim (same shape; NULL on failure), the ones clg_argmax_dim / clg_argmin_dim give:
 * the first extreme element on ties, the first NaN of a slice holding one (NaN counts as larger
 * than any number for max, smaller for min; max and min propagate it). Differentiable w.r.t. a: the
 * gradient goes to the indexed element only (not shared among ties). a needs at least one dim. */
clg_tensor *clg_max_dim(clg_tensor *a, int dim, int keepdim, clg_tensor **indices);
clg_tensor *clg_min_dim(clg_tensor *a, int dim, int keepdim, clg_tensor **indices);
clg_tensor *clg_argmax_dim(clg_tensor *a, int dim, int keepdim); /* int32, not differentiable */
clg_tensor *clg_argmin_dim(clg_tensor *a, int dim, int keepdim);
clg_tensor *clg_softmax(clg_tensor *a);
clg_tensor *clg_log_softmax(clg_tensor *a);
/* losses: targets as one-hot (N, C) rows of the logits' dtype; the mean over rows
 * (clg_nll_loss_ex / clg_cross_entropy_ex with the default options) */
clg_tensor *clg_nll_loss(clg_tensor *logp, clg_tensor *onehot);
/* (one fused op forward and one backward: SOFTMAX_XENT; targets may be any non-negative rows) */
clg_tensor *clg_cross_entropy(clg_tensor *logits, clg_tensor *onehot, double label_smoothing);
clg_tensor *clg_mse_loss(clg_tensor *pred, clg_tensor *target);

/* Cross-entropy and NLL as torch.nn.functional.cross_entropy / nll_loss, with options.
 * Logits (or log-probabilities) (..., C): the class dim is the LAST one, any number of leading dims
 * ((B, T, V) logits with (B, T) targets); PyTorch's (N, C, d1, ...) layout is clg_permute'd to
 * (N, d1, ..., C) first (a view). The target is either
 * - class indices: int32, the logits' shape without the class dim ((C) logits take a 0-d target), or
 * - dense rows (class probabilities, one-hot or soft): the logits' dtype and shape.
 * With w the class weights (1 without), eps the label smoothing, y_n row n's class and logp the
 * log-softmax (cross_entropy) or the input itself (nll_loss), each row's loss is
 *   indices: (1 - eps) * -w[y_n] logp[n, y_n] + eps / C * sum_c -w[c] logp[n, c]; 0 for an ignored row
 *   dense:   sum_c -w[c] t'[n, c] logp[n, c], t' = (1 - eps) t + eps / C
 * reduction NONE: the row losses, shaped as the target without its class dim; SUM: their sum; MEAN:
 * indices: the sum divided by the sum of w[y_n] over the rows not ignored (their count without
 * weights; 0/0 = NaN when every row is ignored), as PyTorch (its smoothing term too); dense: the
 * sum divided by the number of rows. A row is ignored when y_n == ignore_index: it adds nothing to
 * the loss, nothing to the mean's divisor and gets a zero gradient.
 * Differences from PyTorch:
 * - the class dim is last (above);
 * - an index outside [0, C) other than ignore_index is not an error (PyTorch raises one; checking
 *   would wait for the device): the row is ignored, as ignore_index's;
 * - clg_nll_loss_ex also takes dense rows and label_smoothing (the formulas above, logp as given);
 *   PyTorch's nll_loss takes neither;
 * - the weight may require a gradient (it gets one; PyTorch's has none);
 * - on the fused path a logit of -inf makes its row's loss NaN (0 * -inf in the target-weighted
 *   sum) where PyTorch's index path stays finite: mask with a large finite negative number, or
 *   take the unfused path (CLGRAD_FUSED=0, clg_set_fused_ops(0), reduction NONE);
 * - 16-bit logits with index targets are computed in float32 and the loss is cast back to their
 *   dtype (under autocast the loss stays float32, as for dense targets).
 * As in PyTorch, dense targets refuse an ignore_index >= 0 (CLG_ERR_INVALID), label_smoothing must
 * be in [0, 1] and the weight is a float tensor of C elements on the logits' device (cast to the
 * logits' dtype). Differentiable w.r.t. the logits and dense targets.
 * Paths: cross_entropy's SUM and MEAN run the fused SOFTMAX_XENT ops (index targets become dense
 * rows first: w[y_n] (1 - eps) at column y_n (the ONE_HOT op), plus eps / C w[c] on rows not
 * ignored; MEAN divides by the weight sum on the device, no read-back) unless fused ops are off,
 * the dtype is 16-bit, the targets or the weight need a gradient or the device lacks the ops;
 * NONE and those cases run log_softmax, gather and sums (the unfused path). opts NULL: the
 * defaults. A struct set field by field starts from CLG_LOSS_OPTS_INIT (a zeroed one would ignore
 * class 0). */
typedef enum { CLG_REDUCTION_MEAN = 0, CLG_REDUCTION_SUM = 1, CLG_REDUCTION_NONE = 2 } clg_reduction;
typedef struct {
	clg_reduction reduction;  /* default MEAN */
	int64_t ignore_index;     /* default -100 (PyTorch's): no class */
	clg_tensor *weight;       /* (C) class weights, borrowed; NULL: all 1 */
	double label_smoothing;   /* in [0, 1], default 0 */
} clg_loss_opts;
#define CLG_LOSS_OPTS_INIT {CLG_REDUCTION_MEAN, -100, NULL, 0.0}
static inline clg_loss_opts clg_loss_opts_default(void)
{
	clg_loss_opts o = CLG_LOSS_OPTS_INIT;
	return o;
}
clg_tensor *clg_cross_entropy_ex(clg_tensor *logits, clg_tensor *target, const clg_loss_opts *opts);
clg_tensor *clg_nll_loss_ex(clg_tensor *logp, clg_tensor *target, const clg_loss_opts *opts);

#ifdef __cplusplus
}
#endif

/* op families with headers of their own */
#include "clgrad_conv.h"   /* conv2d, pooling */
#include "clgrad_index.h"  /* random numbers, dropout, embedding, index_select, gather, concat */
#include "clgrad_norm.h"   /* batch_norm, layer_norm, attention */
#include "clgrad_optim.h"  /* optimizers, learning-rate schedules, gradient clipping */
#include "clgrad_nn.h"     /* modules: linear, conv2d, norms, dropout, embedding, sequential */
#include "clgrad_fft.h"    /* fft, ifft, rfft, irfft, complex multiply */

#endif
