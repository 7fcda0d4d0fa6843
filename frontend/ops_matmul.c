/* torch.matmul's shapes over the one-batch-dim GEMM (fe_matmul3, ops_basic.c): 1-D operands
 * promoted as numpy does (a vector a gets a leading 1, b a trailing 1, removed from the result),
 * any number of batch dims broadcast against each other. Composed, not a new op: the batch dims
 * fold into the GEMM's one batch dim as views (no copy where they are mergeable, as in a
 * contiguous (B, H, T, D) or its transpose k^T (B, H, D, T)), a 2-D side repeats with batch stride 0, and only a batch that is broadcast on
 * both sides is materialised (expand + copy), so the GEMM runs once either way. */
#include "fe_internal.h"

#include <string.h>

/* node->in[0] the tensor folded; the gradient (the folded shape) goes back reshaped */
static clg_status fold_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0];
	return fe_give(x, clg_reshape(g, x->v.ndim, x->v.shape));
}

/* t (..., R, C) with its nb leading dims merged into one: (prod, R, C), a view where the batch dims
 * are mergeable (whatever the last two dims' strides, so a transposed operand stays a GEMM operand
 * without a copy), else through clg_reshape (a copy). Differentiable. */
static clg_tensor *fold_batch(clg_tensor *t, int nb)
{
	clg_view v = t->v;
	int nd = v.ndim, ok = 1;
	int64_t prod = 1;
	clg_tensor *out, *ins[1] = {t};

	for (int d = 0; d < nb; d++)
		prod *= v.shape[d];
	/* mergeable: each batch dim larger than 1 steps over the whole of the next such dim */
	for (int d = 0, prev = -1; d < nb; d++) {
		if (v.shape[d] == 1)
			continue;
		if (prev >= 0 && v.stride[prev] != v.stride[d] * v.shape[d])
			ok = 0;
		prev = d;
	}
	if (!ok)
		return clg_reshape(t, 3, (int64_t[]){prod, v.shape[nd - 2], v.shape[nd - 1]});
	{
		clg_view f = v;
		int64_t st = 0;
		/* the batch stride: the innermost batch dim's larger than 1 (any, when all are 1) */
		for (int d = nb - 1; d >= 0; d--)
			if (v.shape[d] != 1) {
				st = v.stride[d];
				break;
			}
		f.ndim = 3;
		f.shape[0] = prod, f.stride[0] = st;
		f.shape[1] = v.shape[nd - 2], f.stride[1] = v.stride[nd - 2];
		f.shape[2] = v.shape[nd - 1], f.stride[2] = v.stride[nd - 1];
		out = fe_view_of(t, &f);
	}
	return out ? fe_record_op(out, "reshape", fold_backward, 1, ins, NULL) : NULL;
}

/* a (..., M, K) @ b (..., K, N) with the batch shapes broadcast: out (batch..., M, N) */
static clg_tensor *matmul_batched(clg_tensor *a, clg_tensor *b)
{
	int na = a->v.ndim, nb = b->v.ndim, nd = na > nb ? na : nb, nbat = nd - 2;
	int64_t bshape[CLG_MAX_DIMS], oshape[CLG_MAX_DIMS], prod = 1;
	int a_batch = 0, b_batch = 0; /* the side has a batch dim larger than 1 */
	clg_tensor *fa = NULL, *fb = NULL, *ea = NULL, *eb = NULL, *r = NULL, *out = NULL;
	char s0[96], s1[96];

	for (int d = 0; d < nbat; d++) {
		int da = d - (nd - na), db = d - (nd - nb);
		int64_t sa = da >= 0 ? a->v.shape[da] : 1, sb = db >= 0 ? b->v.shape[db] : 1;
		if (sa != sb && sa != 1 && sb != 1)
			return fe_fail(clg_fail(CLG_ERR_SHAPE,
						"op 'matmul' on device '%s': the batch dims of %s and %s do not broadcast",
						a->v.buf->backend->info.name, clg_shape_str(&a->v, s0, sizeof(s0)),
						clg_shape_str(&b->v, s1, sizeof(s1))));
		bshape[d] = sa > sb ? sa : sb;
		prod *= bshape[d];
		a_batch |= sa > 1;
		b_batch |= sb > 1;
	}
	memcpy(oshape, bshape, sizeof(int64_t) * (size_t)nbat);
	oshape[nbat] = a->v.shape[na - 2];
	oshape[nbat + 1] = b->v.shape[nb - 1];
	/* a side without a batch (all its batch dims 1) is a matrix the GEMM repeats at stride 0 */
	if (!a_batch)
		fa = clg_reshape(a, 2, &a->v.shape[na - 2]);
	if (!b_batch)
		fb = clg_reshape(b, 2, &b->v.shape[nb - 2]);
	if (a_batch && b_batch) {
		/* both batched: each expanded to the common batch (a copy only where it broadcasts) */
		int64_t sh[CLG_MAX_DIMS];
		memcpy(sh, bshape, sizeof(int64_t) * (size_t)nbat);
		sh[nbat] = a->v.shape[na - 2], sh[nbat + 1] = a->v.shape[na - 1];
		ea = clg_expand(a, nd, sh);
		sh[nbat] = b->v.shape[nb - 2], sh[nbat + 1] = b->v.shape[nb - 1];
		eb = clg_expand(b, nd, sh);
		fa = ea ? fold_batch(ea, nbat) : NULL;
		fb = eb ? fold_batch(eb, nbat) : NULL;
	} else if (a_batch) {
		clg_tensor *t = na == nd ? fe_alias(a) : NULL;
		fa = t ? fold_batch(t, nbat) : clg_reshape(a, 3, (int64_t[]){prod, a->v.shape[na - 2], a->v.shape[na - 1]});
		clg_free(t);
	} else if (b_batch) {
		clg_tensor *t = nb == nd ? fe_alias(b) : NULL;
		fb = t ? fold_batch(t, nbat) : clg_reshape(b, 3, (int64_t[]){prod, b->v.shape[nb - 2], b->v.shape[nb - 1]});
		clg_free(t);
	}
	if (fa && fb)
		r = fe_matmul3(fa, fb); /* (prod, M, N), or (M, N) when neither side has a batch */
	if (r)
		out = clg_reshape(r, nd, oshape);
	clg_free(fa);
	clg_free(fb);
	clg_free(ea);
	clg_free(eb);
	clg_free(r);
	return out;
}

clg_tensor *clg_matmul(clg_tensor *a, clg_tensor *b)
{
	clg_tensor *ins[2] = {a, b}, *pa = NULL, *pb = NULL, *r = NULL, *out = NULL;
	int na, nb;
	char s0[96], s1[96];

	if (!fe_check_inputs("matmul", 2, ins))
		return NULL;
	na = a->v.ndim, nb = b->v.ndim;
	if (na == 0 || nb == 0 || a->v.shape[na - 1] != b->v.shape[nb > 1 ? nb - 2 : 0])
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'matmul' on device '%s': cannot multiply %s by %s",
					a->v.buf->backend->info.name, clg_shape_str(&a->v, s0, sizeof(s0)),
					clg_shape_str(&b->v, s1, sizeof(s1))));
	/* the shapes the GEMM takes as they are */
	if (na >= 2 && nb >= 2 && na <= 3 && nb <= 3 && (na < 3 || nb < 3 || a->v.shape[0] == b->v.shape[0]))
		return fe_matmul3(a, b);
	if (na == 1 && nb == 1) /* the dot product: (1, K) @ (K, 1) -> () */
		pa = clg_reshape(a, 2, (int64_t[]){1, a->v.shape[0]}), pb = clg_reshape(b, 2, (int64_t[]){b->v.shape[0], 1});
	else {
		pa = na == 1 ? clg_reshape(a, 2, (int64_t[]){1, a->v.shape[0]}) : fe_alias(a);
		pb = nb == 1 ? clg_reshape(b, 2, (int64_t[]){b->v.shape[0], 1}) : fe_alias(b);
	}
	if (pa && pb)
		r = matmul_batched(pa, pb);
	if (r && (na == 1 || nb == 1)) {
		/* drop the promoted dims: a's leading 1 (second last), b's trailing 1 (last) */
		int64_t sh[CLG_MAX_DIMS];
		int nd = r->v.ndim, k = 0;
		for (int d = 0; d < nd; d++)
			if (!((na == 1 && d == nd - 2) || (nb == 1 && d == nd - 1)))
				sh[k++] = r->v.shape[d];
		out = clg_reshape(r, k, sh);
	} else if (r) {
		out = r;
		r = NULL;
	}
	clg_free(pa);
	clg_free(pb);
	clg_free(r);
	return out;
}
