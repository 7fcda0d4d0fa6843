/* Internal structures of the tensor frontend. */
#ifndef CLG_FE_INTERNAL_H
#define CLG_FE_INTERNAL_H

#include "clgrad.h"
#include "../backend/clg_internal.h"

typedef struct clg_node clg_node;

typedef struct {
	clg_buffer *buf;
	int refs;
} clg_storage;

struct clg_tensor {
	clg_view v;            /* v.buf == st->buf */
	clg_storage *st;
	int refs;              /* the owner's reference + the graph's */
	int requires_grad;
	clg_tensor *grad;      /* leaf gradient (contiguous, owned) */
	clg_node *grad_fn;     /* the node that made this tensor (owned reference) */
	clg_tensor *grad_slot; /* leaf: where its gradient goes (a view into an optimizer's arena,
				* owned by the optimizer; frontend/optim.c), or NULL: a new tensor */
	int scope_depth;       /* 0: not owned by a scope */
	int scope_slot;
};

/* Accumulates into the gradients of the node's inputs, given the gradient of its output. */
typedef clg_status (*clg_backward_fn)(clg_node *n, clg_tensor *gout);

#define CLG_MAX_SAVED 4

struct clg_node {
	const char *op;
	clg_backward_fn backward;
	int refs;
	int freed;                        /* saved tensors released by a backward */
	int ninputs;
	clg_tensor *in[CLG_MAX_SRC];      /* owned references */
	int nsaved;
	clg_tensor *saved[CLG_MAX_SAVED]; /* owned references (detached) */
	double f[4];
	int64_t i[8];
	clg_tensor *gout;                 /* accumulated gradient of the output */
	int mark;                         /* traversal */
	void *ctx;                        /* an op's own state (recompute's), freed with the node by */
	void (*ctx_free)(void *ctx);      /* ctx_free */
};

/* The frontend's core is layered; a file calls only its own layer or those below
 * (tests/test_frontend_layers.sh checks it on the built library):
 *   0 tensor.c                  tensors, storage, scopes, node lifetime, graph-free compute
 *   1 autograd.c                recording, gradient accumulation, backward
 *   2 views.c | autocast.c      differentiable views | casts and autocast (not calling each other)
 *   3 ops_*.c                   the ops
 * The other frontend files (nn, optim, data, trainer...) sit above them. */

/* ==== layer 0: tensor.c ==== */

/* Records the failure status for clg_last_status() and returns NULL. */
clg_tensor *fe_fail(clg_status s);
/* NULL if any of n tensors is NULL (keeping the first error), or if they live on different devices. */
int fe_check_inputs(const char *op, int n, clg_tensor *const *ts);
/* Runs a backend op; on failure sets the status and returns it. */
clg_status fe_run(clg_backend *be, clg_op_call *c);

/* Takes t out of every scope: the caller's code owns it (an internal reference). */
clg_tensor *fe_own(clg_tensor *t);
/* Drops an internal reference (one taken with refs++ or fe_own). */
void fe_release(clg_tensor *t);
/* Drops a reference to a node (a tensor's grad_fn, or backward's order): at the last one its saved
 * tensors, pending gradient and inputs are released. */
void fe_node_release(clg_node *n);
/* Drops what the node keeps for backward (saved tensors, pending gradient). */
void fe_node_drop_saved(clg_node *n);

clg_tensor *fe_new(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape);
/* A new tensor of like's shape laid out in like's order of strides where like is a permutation of a
 * dense layout (a head view (B, H, T, Dh) of a (B, T, H, Dh) tensor gets the (B, T, H, Dh) order),
 * so that permuting the result back needs no copy; otherwise contiguous, as fe_new. */
clg_tensor *fe_new_like(clg_backend *be, clg_dtype dt, const clg_view *like);
/* 1 where v is a permutation of a dense layout (every element once, no gaps): contiguous, or a
 * permuted view of a contiguous tensor; 0 for broadcast (stride 0) and sliced views. */
int fe_view_is_dense(const clg_view *v);
/* A tensor object over t's storage with the given view geometry (no graph). */
clg_tensor *fe_view_of(clg_tensor *t, const clg_view *v);
/* Copies t into arena's storage at element offset off (contiguous, t's shape) and makes t a view
 * there, releasing its old storage (the caller checked t owns it alone). */
clg_status fe_rehome(clg_tensor *t, clg_tensor *arena, int64_t off);

/* Elementwise op on views of the same shape as out (src views already expanded); no graph. */
clg_tensor *fe_ew(clg_op op, clg_tensor *a, clg_tensor *b, double f0, double f1);
/* t's view broadcast to (nd, shape) (shapes already checked), without recording anything. */
void fe_broadcast_view(const clg_tensor *t, int nd, const int64_t *shape, clg_view *v);
/* clg_expand's view (the same checks and message), no graph. */
clg_tensor *fe_expand_nograd(clg_tensor *t, int ndim, const int64_t *shape);
/* t itself as a new tensor object when contiguous, else a contiguous copy; no graph. */
clg_tensor *fe_contiguous_nograd(clg_tensor *t);

/* ==== layer 1: autograd.c ==== */

/* Graph recording: returns 1 if out must get a node (grad enabled and an input requires grad). */
int fe_needs_grad(int n, clg_tensor *const *ins);
/* Creates out's node with the given inputs; returns it (NULL on OOM, out is then left graph-less). */
clg_node *fe_record(clg_tensor *out, const char *op, clg_backward_fn fn, int n, clg_tensor *const *ins);
/* Records out's node when an input needs grad (*node gets it, or NULL; node may be NULL);
 * frees out and fails if the node cannot be made. */
clg_tensor *fe_record_op(clg_tensor *out, const char *op, clg_backward_fn fn, int n, clg_tensor *const *ins,
			 clg_node **node);
/* Keeps a detached reference to t in the node. */
void fe_save(clg_node *n, clg_tensor *t);
/* Adds g (shape of x) into x's gradient (leaf .grad, or the pending gradient of x's node). */
clg_status fe_accumulate(clg_tensor *x, clg_tensor *g);
/* Backward of ops that pass the gradient through unchanged (one input). */
clg_status fe_identity_backward(clg_node *n, clg_tensor *g);
/* A new tensor object over t's view, differentiable as the identity. */
clg_tensor *fe_alias(clg_tensor *t);
/* t converted to dt, no graph (a new contiguous tensor). */
clg_tensor *fe_cast_nograd(clg_tensor *t, clg_dtype dt);
/* 1 while a backward runs (autocast is off there: autocast.c). */
int fe_in_backward(void);
/* Where leaf parameter t's gradient can be written directly (t's .grad, made if need be, or its
 * slot in the optimizer's arena; *beta 1 to accumulate, 0 to overwrite), else NULL (go through
 * fe_give); fe_leaf_grad_undo drops a .grad it made (*made) when the write failed. */
clg_tensor *fe_leaf_grad(clg_tensor *t, double *beta, int *made);
void fe_leaf_grad_undo(clg_tensor *t, int made);

/* Backward from nr (<= CLG_MAX_SRC) roots at once, each with its gradient (root's shape; the
 * caller keeps its references); the graph is freed as it goes (no retain_graph). */
clg_status fe_backward_roots(int nr, clg_tensor *const *roots, clg_tensor *const *grads);

/* Recompute (activation checkpointing, ops_recompute.c). A checkpointed function runs twice:
 * first without recording, then again in backward with recording on; its random draws must be the
 * same both times. Every op that draws random numbers passes its stream position (seed, offset)
 * through fe_rand_stream before drawing: during a first run it is appended to the log being
 * recorded, during a re-run it is replaced by the logged one (failing when the log runs out). */
typedef struct {
	uint64_t *pos; /* (seed, offset) pairs */
	int n, cap, at;
} fe_rand_log;
clg_status fe_rand_stream(const char *op, uint64_t *seed, uint64_t *offset);
/* Makes log the one being recorded (NULL: none); returns the previous one, to be put back. */
fe_rand_log *fe_rand_record_swap(fe_rand_log *log);
void fe_rand_log_free(fe_rand_log *log);
/* Around a re-run inside backward: recording on and autocast allowed (as in a forward), the
 * draws taken from log (may be NULL); fe_replay_end puts the backward's state back. */
typedef struct {
	int no_grad_depth, backward_depth;
	fe_rand_log *record, *replay;
} fe_replay_saved;
void fe_replay_begin(fe_replay_saved *s, fe_rand_log *log);
void fe_replay_end(const fe_replay_saved *s);

/* ==== layer 2: views.c ==== */

/* Sums g over the dims that were broadcast to reach g's shape from (ndim, shape). */
clg_tensor *fe_reduce_to(clg_tensor *g, int ndim, const int64_t *shape);
/* Accumulates g, summed back to x's shape, into x's gradient. Takes ownership of g. */
clg_status fe_give(clg_tensor *x, clg_tensor *g);

/* ==== layer 2: autocast.c, mixed precision ==== */

/* At a GEMM-like op: the 16-bit dtype to cast the n inputs to (autocast on, some input float32),
 * else CLG_F32 (nothing to do). */
clg_dtype fe_autocast_low(int n, clg_tensor *const *ins);
/* At a float32-only op (softmax, losses, norms): 1 when autocast is on and an input is 16-bit. */
int fe_autocast_high(int n, clg_tensor *const *ins);
/* out[i] = clg_cast(ins[i], dt) (NULL stays NULL, int32 is aliased): 0, or -1 with none left. */
int fe_cast_each(int n, clg_tensor *const *ins, clg_dtype dt, clg_tensor **out);
/* Binary ops on two float dtypes compute in the wider (float16 with bfloat16: float32): *a and *b
 * are replaced by casts kept in tmp[2] (free them after the op; NULL where none). -1 on failure. */
int fe_promote(clg_tensor **a, clg_tensor **b, clg_tensor **tmp);

/* ==== layer 3: ops_*.c ==== */

/* ops_addnorm.c: 1 when the fused ADD_LAYER_NORM op serves x (+ r, may be NULL) with gamma and beta
 * (float32 or float64, rows that are one 2-D view, a device with the ops, CLGRAD_FUSED not 0) */
int fe_addnorm_ok(clg_tensor *x, clg_tensor *r, clg_tensor *gamma, clg_tensor *beta);
/* ... and runs it (fe_addnorm_ok said yes): y = LN(x [+ r]) * gamma + beta, *sum = x + r when r and
 * sum are given */
clg_tensor *fe_addnorm(clg_tensor *x, clg_tensor *r, clg_tensor *gamma, clg_tensor *beta, double eps,
		       clg_tensor **sum);

/* ops_basic.c: matmul of 2-D and 3-D operands with at most one batch dim ((B, M, K) @ (B, K, N),
 * either side 2-D), as clg_matmul was before batch broadcasting; clg_matmul (ops_matmul.c) brings
 * every other case to it */
clg_tensor *fe_matmul3(clg_tensor *a, clg_tensor *b);

/* ops_index.c: ONE_HOT, (N, C) holding val (N) at the columns idx (N) (int32; out of [0, C): a row
 * of zeros), 0 elsewhere; no graph */
clg_tensor *fe_one_hot(clg_tensor *val, clg_tensor *idx, int64_t C);

/* Fused attention (ops_attention.c): whether the device has the fused ops for q's dtype and these
 * head widths (and CLGRAD_FUSED is not 0); and the fused forward on checked shapes (scores times
 * scale), recorded with its fused backward. */
int fe_attention_fused_ok(clg_tensor *q, int64_t Dh, int64_t Dv);
clg_tensor *fe_attention_fused(clg_tensor *q, clg_tensor *k, clg_tensor *v, int causal, int64_t Dv, double scale);

/* ==== above the layers ==== */

/* The whole text file at path, NUL-terminated (data_file.c). A regular file's buffer is its size
 * (one allocation, refused over max); a pipe's grows with what arrives, up to max bytes. A NUL
 * byte stops the read at once (CLG_ERR_FORMAT): /dev/zero is no text file. */
clg_status clg_read_text_file(const char *path, size_t max, char **out, size_t *len);

/* The bound of the uniform initialisation for the scheme and fans (nn.c). */
double clg_init_bound(clg_init init, int64_t fan_in, int64_t fan_out);

/* conv2d of rows (H = KH = 1 ...) through conv1d's FFT path when the device's crossover says so
 * (conv_choice.c): *routed and the result (NULL on failure), else *routed = 0 and NULL. */
clg_tensor *fe_conv2d_rows_fft(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t stride_h, int64_t stride_w,
			       int64_t pad_h, int64_t pad_w, int64_t dil_w, int64_t groups, int *routed);

#endif
