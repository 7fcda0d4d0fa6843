/* clgrad: norm ops (included by clgrad.h). Shapes in comments; D is the last (feature) dim, C
 * the channel dim. Every function returns a new tensor (NULL on failure, see clgrad.h). */
#ifndef CLGRAD_NORM_H
#define CLGRAD_NORM_H

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

/* Scaled dot-product attention: softmax(q k^T / sqrt(Dh) [+ causal mask]) v.
 * q (B, H, Tq, Dh), k (B, H, Tk, Dh), v (B, H, Tk, Dv) -> (B, H, Tq, Dv); or the same without the
 * head dim: (B, T, D). causal != 0 lets query i see keys j <= i only (the mask aligned to the
 * top-left corner, as PyTorch's is_causal). dropout_p must be 0 here (a mask needs a seed: see
 * clg_scaled_dot_product_attention_ex; any other value fails with CLG_ERR_UNSUPPORTED).
 * Differentiable in q, k and v. float32 and float64 with heads up to 256 wide run fused (one op
 * forward, one backward, no (Tq, Tk) matrix in memory) where the device has the ops; otherwise, or
 * with CLGRAD_FUSED=0, composed from matmul, softmax and an additive mask. */
clg_tensor *clg_scaled_dot_product_attention(clg_tensor *q, clg_tensor *k, clg_tensor *v, int causal,
					     double dropout_p);

/* The options of PyTorch's F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal,
 * scale). Zeros (CLG_ATTENTION_OPTS_INIT) are its defaults. */
typedef struct {
	int causal;            /* is_causal (top-left aligned); not together with attn_mask */
	double dropout_p;      /* in [0, 1): drops attention weights as clg_dropout does, applied whenever
				* > 0 as PyTorch's (a module passes 0 in evaluation) */
	uint64_t seed;         /* the dropout mask's seed: the same mask on every device for a seed
				* (clg_dropout's draw over the (B, H, Tq, Tk) weights); vary it per step */
	double scale;          /* the scores' factor; 0: 1 / sqrt(Dh) */
	clg_tensor *attn_mask; /* NULL, or broadcast (NumPy rules) to (B, H, Tq, Tk) ((B, Tq, Tk) for 3-D
				* inputs), on q's device: a float mask is added to the scaled scores
				* (-inf excludes); an int32 mask is boolean, nonzero attends (PyTorch's
				* True), 0 is excluded. Not differentiable. A row that attends nowhere
				* gives NaN, as PyTorch's math path. */
} clg_attention_opts;
#define CLG_ATTENTION_OPTS_INIT {0, 0.0, 0, 0.0, NULL}

/* Attention with the options above (NULL: the defaults). Without a mask and dropout it takes the
 * fused kernels as clg_scaled_dot_product_attention does (with the given scale); a mask or dropout
 * runs the composite (matmul, add, softmax, dropout, matmul: the (Tq, Tk) weights in memory).
 * Differentiable in q, k and v. */
clg_tensor *clg_scaled_dot_product_attention_ex(clg_tensor *q, clg_tensor *k, clg_tensor *v,
						const clg_attention_opts *opts);

/* Causal (or not) multi-head attention over one packed projection: qkv (B, T, 3 D) holds q, k and
 * v side by side in each row (D = heads * Dh, each of them heads blocks of Dh), as one (D, 3 D)
 * linear layer writes them. Returns (B, T, D), the heads back in place. The heads are strided views
 * of qkv (no copies forward or backward where attention runs fused). Differentiable in qkv. */
clg_tensor *clg_attention_qkv(clg_tensor *qkv, int64_t heads, int causal);
/* The same with clg_attention_opts (NULL: the defaults): scale, causal, and dropout and a mask
 * through the composite. */
clg_tensor *clg_attention_qkv_ex(clg_tensor *qkv, int64_t heads, const clg_attention_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
