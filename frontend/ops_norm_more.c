/* GroupNorm and RMSNorm as torch.nn.functional.group_norm / rms_norm, composed: group norm is the
 * fused layer-norm row op over each (sample, group) row of x reshaped (N, G, C/G * spatial), then
 * the per-channel affine; RMS norm is x * rsqrt(mean(x^2) + eps) * weight over the trailing dims
 * (a mean reduction and three elementwise ops; no row op of its own yet: ops_cases would need one). */
#include "fe_internal.h"

#include <float.h>
#include <math.h>

/* t (C) seen as (C, 1, ..., 1) against x (N, C, *): a view for the broadcast */
static clg_tensor *per_channel(clg_tensor *t, int nd)
{
	int64_t sh[CLG_MAX_DIMS];
	sh[0] = t->v.shape[0];
	for (int d = 1; d < nd - 1; d++)
		sh[d] = 1;
	return clg_reshape(t, nd - 1, sh);
}

static int is_vec(const clg_tensor *t, int64_t n) { return !t || (t->v.ndim == 1 && t->v.shape[0] == n); }

clg_tensor *clg_group_norm(clg_tensor *x, int64_t groups, clg_tensor *weight, clg_tensor *bias, double eps)
{
	clg_tensor *ins[3] = {x, weight, bias}, *r = NULL, *n = NULL, *y = NULL, *t = NULL, *w = NULL;
	int64_t N, C, rest = 1;
	char s0[96];

	if (!x || (weight && !fe_check_inputs("group_norm", 2, ins)) || (bias && !fe_check_inputs("group_norm", 2, (clg_tensor *[]){x, bias})))
		return NULL;
	if (x->v.ndim < 2)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'group_norm' on device '%s': x %s must be (N, C, *)",
					x->v.buf->backend->info.name, clg_shape_str(&x->v, s0, sizeof(s0))));
	N = x->v.shape[0], C = x->v.shape[1];
	if (groups < 1 || C % groups)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'group_norm' on device '%s': %lld channels of x %s do not split into %lld groups",
					x->v.buf->backend->info.name, (long long)C, clg_shape_str(&x->v, s0, sizeof(s0)),
					(long long)groups));
	if (!is_vec(weight, C) || !is_vec(bias, C))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'group_norm' on device '%s': weight and bias must be (%lld) for x %s",
					x->v.buf->backend->info.name, (long long)C, clg_shape_str(&x->v, s0, sizeof(s0))));
	for (int d = 2; d < x->v.ndim; d++)
		rest *= x->v.shape[d];
	/* each (sample, group) a row: its mean and biased variance, as layer norm's */
	r = clg_reshape(x, 3, (int64_t[]){N, groups, C / groups * rest});
	n = r ? clg_layer_norm(r, NULL, NULL, eps) : NULL;
	y = n ? clg_reshape(n, x->v.ndim, x->v.shape) : NULL;
	if (y && weight) {
		w = per_channel(weight, x->v.ndim);
		t = w ? clg_mul(y, w) : NULL;
		clg_free(w);
		clg_free(y);
		y = t;
	}
	if (y && bias) {
		w = per_channel(bias, x->v.ndim);
		t = w ? clg_add(y, w) : NULL;
		clg_free(w);
		clg_free(y);
		y = t;
	}
	clg_free(r);
	clg_free(n);
	return y;
}

double clg_dtype_eps(clg_dtype dt) { return dt == CLG_F64 ? DBL_EPSILON : FLT_EPSILON; }

clg_tensor *clg_rms_norm(clg_tensor *x, int ndims, clg_tensor *weight, double eps)
{
	clg_tensor *ins[2] = {x, weight}, *sq = NULL, *m = NULL, *a = NULL, *r = NULL, *y = NULL;
	int axes[CLG_MAX_DIMS];
	char s0[96], s1[96];

	if (!x || !fe_check_inputs("rms_norm", weight ? 2 : 1, ins))
		return NULL;
	if (ndims < 1 || ndims > x->v.ndim)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'rms_norm' on device '%s': cannot normalise the last %d dims of x %s",
					x->v.buf->backend->info.name, ndims, clg_shape_str(&x->v, s0, sizeof(s0))));
	if (weight) {
		int ok = weight->v.ndim == ndims;
		for (int d = 0; ok && d < ndims; d++)
			ok = weight->v.shape[d] == x->v.shape[x->v.ndim - ndims + d];
		if (!ok)
			return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'rms_norm' on device '%s': weight %s must be the last %d dims of x %s",
						x->v.buf->backend->info.name, clg_shape_str(&weight->v, s1, sizeof(s1)), ndims,
						clg_shape_str(&x->v, s0, sizeof(s0))));
	}
	if (isnan(eps) || eps < 0) /* PyTorch's eps=None */
		eps = clg_dtype_eps(x->v.dtype);
	for (int k = 0; k < ndims; k++)
		axes[k] = x->v.ndim - ndims + k;
	sq = clg_mul(x, x);
	m = sq ? clg_mean(sq, ndims, axes, 1) : NULL;
	a = m ? clg_affine(m, 1.0, eps) : NULL;
	r = a ? clg_rsqrt(a) : NULL;
	y = r ? clg_mul(x, r) : NULL;
	if (y && weight) {
		clg_tensor *t = clg_mul(y, weight);
		clg_free(y);
		y = t;
	}
	clg_free(sq);
	clg_free(m);
	clg_free(a);
	clg_free(r);
	return y;
}
