/* clgrad: norm ops (included by clgrad.h). Shapes in comments; D is the last (feature) dim, C
 * the channel dim. Every function returns a new tensor (NULL on failure, see clgrad.h). */
#ifndef CLGRAD_NORM_H
#define CLGRAD_NORM_H

#include "clgrad.h" /* the types; clgrad.h includes this header back, the guards stop the loop */

#ifdef __cplusplus
extern "C" {
#endif

/* Layer normalisation over the last dim of x (..., D): (x - mean) / sqrt(var + eps) * gamma +
 * beta, with the biased variance of each row. gamma (D) and beta (D) may each be NULL (no scale,
 * no shift). Differentiable in x, gamma and beta. */
clg_tensor *clg_layer_norm(clg_tensor *x, clg_tensor *gamma, clg_tensor *beta, double eps);

/* The residual add of a pre-norm block and the layer norm after it: returns
 * clg_layer_norm(x + r, gamma, beta, eps) and, when sum is not NULL, sets *sum to the new tensor
 * x + r (the residual stream; NULL on failure). x and r (..., D) of one shape. One op forward and one
 * backward where the device has them (float32, float64); else the add and the layer norm. */
clg_tensor *clg_add_layer_norm(clg_tensor *x, clg_tensor *r, clg_tensor *gamma, clg_tensor *beta, double eps,
			       clg_tensor **sum);

/* Batch normalisation of x (N, C) or (N, C, H, W) per channel, as torch.nn.functional.batch_norm.
 * training != 0: normalises with the batch statistics over N (and H, W), using the biased
 *   variance, and, when running_mean / running_var (C) are given, updates them in place (no
 *   graph): running = (1 - momentum) * running + momentum * batch statistic, with the unbiased
 *   variance for running_var. Needs more than one value per channel.
 * training == 0: normalises with running_mean and running_var (both required).
 * gamma (C) and beta (C) may each be NULL. Differentiable in x, gamma and beta. */
clg_tensor *clg_batch_norm(clg_tensor *x, clg_tensor *gamma, clg_tensor *beta, clg_tensor *running_mean,
			   clg_tensor *running_var, double momentum, double eps, int training);

/* Group normalisation as torch.nn.functional.group_norm: x (N, C, *) in groups of C / groups
 * channels, each (sample, group) normalised with its mean and biased variance, then y * weight[c]
 * + bias[c] (weight, bias (C) may each be NULL). C must be divisible by groups. Composed: the
 * layer-norm row op over x seen as (N, groups, C / groups * spatial), then the affine. */
clg_tensor *clg_group_norm(clg_tensor *x, int64_t groups, clg_tensor *weight, clg_tensor *bias, double eps);

/* RMS normalisation as torch.nn.functional.rms_norm over the last ndims dims of x:
 * x / sqrt(mean(x^2) + eps) * weight (weight of those ndims dims, or NULL). eps < 0 or NaN means
 * PyTorch's eps=None: clg_dtype_eps(x's dtype). Composed from mul, mean, affine, rsqrt. */
clg_tensor *clg_rms_norm(clg_tensor *x, int ndims, clg_tensor *weight, double eps);
/* torch.finfo(dt).eps of the dtype the ops compute in: 2^-52 for float64, else float32's 2^-23
 * (16-bit tensors compute in float32). */
double clg_dtype_eps(clg_dtype dt);

/* Scaled dot-product attention: softmax(q k^T / sqrt(Dh) [+ causal mask]) v.
 * q (B, H, Tq, Dh), k (B, H, Tk, Dh), v (B, H, Tk, Dv) -> (B, H, Tq, Dv); or the same without the
 * head dim: (B, T, D). causal != 0 lets query i see keys j <= i only (the mask aligned to the
 * top-left corner, as PyTorch's is_causal). dropout_p must be 0 for now (attention dropout is not
 * implemented; any other value fails with CLG_ERR_UNSUPPORTED). Differentiable in q, k and v.
 * float32 and float64 with heads up to 256 wide run fused (one op forward, one backward, no
 * (Tq, Tk) matrix in memory) where the device has the ops; otherwise, or with CLGRAD_FUSED=0,
 * composed from matmul, softmax and an additive mask. */
clg_tensor *clg_scaled_dot_product_attention(clg_tensor *q, clg_tensor *k, clg_tensor *v, int causal,
					     double dropout_p);

/* Causal (or not) multi-head attention over one packed projection: qkv (B, T, 3 D) holds q, k and
 * v side by side in each row (D = heads * Dh, each of them heads blocks of Dh), as one (D, 3 D)
 * linear layer writes them. Returns (B, T, D), the heads back in place. The heads are strided views
 * of qkv (no copies forward or backward where attention runs fused). Differentiable in qkv. */
clg_tensor *clg_attention_qkv(clg_tensor *qkv, int64_t heads, int causal);

#ifdef __cplusplus
}
#endif
#endif
