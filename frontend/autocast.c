/* Mixed precision in the frontend: clg_cast (a differentiable dtype conversion, the CAST op) and
 * autocast, as torch.autocast: inside clg_autocast_begin / end the GEMM-like ops (matmul, linear,
 * linear_act) cast float32 inputs to the 16-bit dtype and compute there (the GEMM accumulates in
 * float32), while the ops whose precision matters (softmax, log_softmax, the losses, the norms)
 * cast 16-bit inputs back to float32 (conv2d casts its inputs and runs in 16-bit as the GEMM-like
 * ops do, frontend/ops_conv.c; batch norm keeps a 16-bit x, attention runs its fused kernels in
 * float32, frontend/ops_norm.c).
 * Backward never autocasts: each node's backward runs in the
 * dtypes its forward chose (autograd.c's fe_in_backward), and fe_accumulate converts a gradient to
 * its tensor's dtype. Layer 2 of the frontend's core (fe_internal.h): it calls autograd.c and
 * tensor.c, not views.c. */
#include "fe_internal.h"

#define AUTOCAST_NEST 8

static _Thread_local clg_dtype autocast_stack[AUTOCAST_NEST];
static _Thread_local int autocast_depth;

void clg_autocast_begin(clg_dtype dt)
{
	if (autocast_depth < AUTOCAST_NEST)
		autocast_stack[autocast_depth] = dt;
	autocast_depth++;
}

void clg_autocast_end(void)
{
	if (autocast_depth > 0)
		autocast_depth--;
}

clg_dtype clg_autocast_dtype(void)
{
	int d = autocast_depth < AUTOCAST_NEST ? autocast_depth : AUTOCAST_NEST;
	return d && !fe_in_backward() ? autocast_stack[d - 1] : CLG_F32;
}

clg_tensor *clg_cast(clg_tensor *t, clg_dtype dt)
{
	clg_tensor *out;

	if (!fe_check_inputs("cast", 1, &t))
		return NULL;
	if (t->v.dtype == dt)
		return fe_alias(t);
	if (dt == CLG_I32 || t->v.dtype == CLG_I32 || (unsigned)dt >= CLG_DTYPE_COUNT)
		return fe_fail(clg_fail(CLG_ERR_DTYPE, "op 'cast' on device '%s': %s to %s (float dtypes only)",
					t->v.buf->backend->info.name, clg_dtype_name(t->v.dtype), clg_dtype_name(dt)));
	out = fe_cast_nograd(t, dt);
	/* the gradient goes back unchanged; fe_accumulate converts it to t's dtype */
	return fe_record_op(out, "cast", fe_identity_backward, 1, &t, NULL);
}

static int is_float32(const clg_tensor *t) { return t && t->v.dtype == CLG_F32; }

clg_dtype fe_autocast_low(int n, clg_tensor *const *ins)
{
	clg_dtype dt = clg_autocast_dtype();

	if (dt == CLG_F32)
		return CLG_F32;
	for (int i = 0; i < n; i++)
		if (is_float32(ins[i]))
			return dt;
	return CLG_F32;
}

int fe_autocast_high(int n, clg_tensor *const *ins)
{
	if (clg_autocast_dtype() == CLG_F32)
		return 0;
	for (int i = 0; i < n; i++)
		if (ins[i] && clg_dtype_is_half_storage(ins[i]->v.dtype))
			return 1;
	return 0;
}

int fe_cast_each(int n, clg_tensor *const *ins, clg_dtype dt, clg_tensor **out)
{
	for (int i = 0; i < n; i++)
		out[i] = NULL;
	for (int i = 0; i < n; i++) {
		if (!ins[i])
			continue;
		/* only between float dtypes: int32 targets or indices pass through */
		out[i] = ins[i]->v.dtype == CLG_I32 ? fe_alias(ins[i]) : clg_cast(ins[i], dt);
		if (!out[i]) {
			for (int j = 0; j < i; j++)
				clg_free(out[j]);
			return -1;
		}
	}
	return 0;
}

/* float64 > float32 > the 16-bit ones; 0 for int32 */
static int rank_of(clg_dtype t) { return t == CLG_F64 ? 3 : t == CLG_F32 ? 2 : clg_dtype_is_half_storage(t) ? 1 : 0; }

int fe_promote(clg_tensor **a, clg_tensor **b, clg_tensor **tmp)
{
	int ra = rank_of((*a)->v.dtype), rb = rank_of((*b)->v.dtype);
	clg_dtype to;

	tmp[0] = tmp[1] = NULL;
	if ((*a)->v.dtype == (*b)->v.dtype || !ra || !rb)
		return 0;
	/* the wider; float16 with bfloat16: float32, as PyTorch */
	to = ra > rb ? (*a)->v.dtype : rb > ra ? (*b)->v.dtype : CLG_F32;
	if ((*a)->v.dtype != to) {
		if (!(tmp[0] = clg_cast(*a, to)))
			return -1;
		*a = tmp[0];
	}
	if ((*b)->v.dtype != to) {
		if (!(tmp[1] = clg_cast(*b, to))) {
			clg_free(tmp[0]);
			tmp[0] = NULL;
			return -1;
		}
		*b = tmp[1];
	}
	return 0;
}
