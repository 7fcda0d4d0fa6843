/* clgrad: random numbers, dropout and index ops (included by clgrad.h).
 *
 * Random numbers are counter-based (Philox-4x32-10): a draw at stream position (seed, offset)
 * gives element k (row-major) the numbers of counter offset + k under key seed. They depend on
 * nothing else, so every device gives the same numbers for the same (seed, offset): bit-identical
 * uniform numbers, normal numbers up to the last bits of the device's log and cos. Uniform numbers
 * are multiples of 2^-24 in [0, 1).
 *
 * Streams. clg_rand / clg_randn draw at (seed, 0): the same seed gives the same tensor. For
 * successive draws that differ, use a clg_rng, a (seed, offset) pair that each draw advances by
 * the number of elements drawn, so draws never overlap and two tensors of n drawn one after the
 * other equal one tensor of 2n:
 *     clg_rng g = clg_rng_init(42);
 *     w1 = clg_rng_normal(&g, be, CLG_F32, CLG_SHAPE(64, 32), 0, 0.02);
 *     w2 = clg_rng_normal(&g, be, CLG_F32, CLG_SHAPE(64, 32), 0, 0.02);   // different numbers
 *
 * Index tensors are int32 (CLG_I32), on the same device as the data. An index outside the valid
 * range selects zeros (index_select, embedding, gather) and receives no gradient.
 */
/* clgrad.h first, outside the guard: it includes every sub-header in order, so one that uses
 * another's types (nn uses conv's) sees them whichever header a user includes first */
#include "clgrad.h"
#ifndef CLGRAD_INDEX_H
#define CLGRAD_INDEX_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- random numbers ------------------------------------------------------------------------ */
typedef struct {
	uint64_t seed;
	uint64_t offset; /* counter of the next element drawn */
} clg_rng;

static inline clg_rng clg_rng_init(uint64_t seed)
{
	clg_rng g = {seed, 0};
	return g;
}

/* Uniform in [0, 1) / standard normal, drawn at (seed, 0). dt: CLG_F32 or CLG_F64 (the numbers
 * are float32 values either way). */
clg_tensor *clg_rand(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, uint64_t seed);
clg_tensor *clg_randn(clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape, uint64_t seed);
/* Uniform in [lo, hi) / normal(mean, std), drawn at the rng's position, which then advances by the
 * element count (only on success). */
clg_tensor *clg_rng_uniform(clg_rng *rng, clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape,
			    double lo, double hi);
clg_tensor *clg_rng_normal(clg_rng *rng, clg_backend *be, clg_dtype dt, int ndim, const int64_t *shape,
			   double mean, double std);

/* ---- dropout ------------------------------------------------------------------------------- */
/* training: x * mask, where mask is 0 with probability p and 1 / (1 - p) elsewhere; element k is
 * dropped when the uniform number u of draw (seed, 0) at k is below p (as float32), so the mask is
 * the same on every device. Backward multiplies by the same mask. p = 1 drops everything.
 * Not training: x unchanged (an alias, differentiable). p must be in [0, 1].
 * Every call with the same seed and shape draws the same mask: vary the seed per step and per
 * layer, or use clg_dropout_rng, which draws at the rng's position and advances it (training only). */
clg_tensor *clg_dropout(clg_tensor *x, double p, uint64_t seed, int training);
clg_tensor *clg_dropout_rng(clg_tensor *x, double p, clg_rng *rng, int training);

/* ---- indexing ------------------------------------------------------------------------------ */
/* Rows of table (V, D) at idx (int32, any shape of at most 5 dims): (idx shape..., D).
 * Differentiable w.r.t. the table (rows used several times get the sum of their gradients). */
clg_tensor *clg_embedding(clg_tensor *table, clg_tensor *idx);
/* The entries of t at positions idx (1-D int32, length N) along dim: t's shape with dim of size N.
 * Differentiable w.r.t. t. */
clg_tensor *clg_index_select(clg_tensor *t, int dim, clg_tensor *idx);
/* PyTorch's gather: out[i][j][k] = t[idx[i][j][k]][j][k] for dim 0 (and likewise for any dim).
 * idx is int32 with t's number of dims and idx.shape[d] <= t.shape[d] for d != dim; the result has
 * idx's shape. Differentiable w.r.t. t (a scatter-add of the gradient). */
clg_tensor *clg_gather(clg_tensor *t, int dim, clg_tensor *idx);
/* The n tensors (same dtype, device and shape except along dim) joined along dim (negative counts
 * from the end). Differentiable: each input gets its slice of the gradient. */
clg_tensor *clg_concat(clg_tensor *const *ts, int n, int dim);

#ifdef __cplusplus
}
#endif
#endif
