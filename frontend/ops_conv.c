/* conv2d (im2col + GEMM), max_pool2d and avg_pool2d: forward and backward pairs; and conv2d ->
 * relu -> max_pool2d as one node (at the end).
 *
 * conv2d keeps its columns in a (C*KH*KW, N*OH*OW) matrix: IM2COL writes it through a view of
 * shape (N, C*KH*KW, OH*OW) whose batch stride is OH*OW and row stride N*OH*OW. That one matrix
 * is a plain 2-D operand for the weight gradient (dW = g2 @ cols^T, a sum over the batch without
 * a loop), g2 being the gradient in the same (OC, N*OH*OW) layout. With one group the forward
 * (out2 = W @ cols) and the columns' gradient (dcols = W^T @ g2) are single 2-D GEMMs in that
 * layout too: one large product runs faster than N small ones on CPU devices, and rearranging
 * out2 to NCHW costs one pass over the output. Rows of these (rows, N*OH*OW) matrices are ld
 * apart (conv_ld: N*OH*OW padded so that rows do not fall into the same cache sets). With groups,
 * they are GEMMs batched over the images
 * (out_n = W_g @ cols_n, W repeated with batch stride 0, written straight into NCHW), one per
 * group, groups being column and row blocks of the same buffers.
 * The forward saves the columns for the weight gradient when they take at most
 * CONV_SAVE_COLS_MAX bytes; larger ones are recomputed from x by backward, so that a deep network
 * does not hold every layer's columns at once.
 *
 * The bias rides in the GEMM when there is one group: the columns get a last row of ones and the
 * weights a last column holding the bias, (OC, K + 1). The forward GEMM then adds the bias, and
 * the weight gradient's GEMM gives the bias gradient as its last column (the sum of g over the
 * batch and positions), so neither a broadcast copy nor a separate reduction is needed.
 * Rearranging between NCHW and (C, N*OH*OW) is IM2COL with a 1x1 kernel, which is exactly that
 * permutation (with any strides on either side). */
#include "fe_internal.h"

#include <string.h>

#define CONV_SAVE_COLS_MAX ((int64_t)64 << 20) /* bytes */

typedef struct {
	int64_t N, C, H, W, OC, KH, KW, OH, OW;
	int64_t G, Cg, OCg;  /* groups, input and output channels per group */
	int64_t K, L;        /* GEMM sizes: Cg*KH*KW (per group), OH*OW */
	int64_t ld;          /* row stride of the (rows, N*L) matrices (conv_ld) */
	int64_t p[8];        /* the conv-family op parameters (clg_ops.def) */
} conv_shape;

static clg_view view_of(const clg_tensor *t, int64_t off, int nd, const int64_t *shape, const int64_t *stride)
{
	clg_view v = t->v;
	v.offset = t->v.offset + off;
	v.ndim = nd;
	for (int d = 0; d < nd; d++) {
		v.shape[d] = shape[d];
		v.stride[d] = stride[d];
	}
	return v;
}

/* The row stride of a (rows, NL) matrix of the columns' layout: NL rounded up to 16 elements, and
 * to an odd multiple of 16. A CNN's N*OH*OW is often a multiple of 128 (25088 = 196 * 128), so
 * rows as stored lie a multiple of 512 bytes apart: a GEMM walking down k then keeps hitting the
 * same few cache sets (the CPU GEMM packs such operands, a pass over them). An odd multiple of 16
 * elements spreads the rows over the sets; the padding columns are never read. */
static int64_t conv_ld(int64_t NL)
{
	int64_t ld = (NL + 15) / 16 * 16;
	return ld % 32 ? ld : ld + 16;
}

/* Fails with the op's message: stride, padding and dilation in range, kernel inside the padded input. */
static clg_status check_window(const char *op, const clg_tensor *x, int64_t kh, int64_t kw, const int64_t *p6,
			       int64_t *oh, int64_t *ow)
{
	const char *dev = x->v.buf->backend->info.name;
	char s0[96];
	int bad = kh < 1 || kw < 1 || kh > INT32_MAX || kw > INT32_MAX;
	for (int k = 0; k < 6; k++)
		bad |= p6[k] < (k == 2 || k == 3 ? 0 : 1) || p6[k] > INT32_MAX;
	if (bad)
		return clg_fail(CLG_ERR_INVALID,
				"op '%s' on device '%s': kernel %lldx%lld, stride %lldx%lld, padding %lldx%lld, dilation %lldx%lld: kernel, stride and dilation must be at least 1, padding at least 0, all below 2^31",
				op, dev, (long long)kh, (long long)kw, (long long)p6[0], (long long)p6[1], (long long)p6[2],
				(long long)p6[3], (long long)p6[4], (long long)p6[5]);
	*oh = clg_conv_out_size(x->v.shape[2], kh, p6[0], p6[2], p6[4]);
	*ow = clg_conv_out_size(x->v.shape[3], kw, p6[1], p6[3], p6[5]);
	if (*oh < 0 || *ow < 0)
		return clg_fail(CLG_ERR_SHAPE,
				"op '%s' on device '%s': kernel %lldx%lld with dilation %lldx%lld is larger than the input %s padded by %lldx%lld",
				op, dev, (long long)kh, (long long)kw, (long long)p6[4], (long long)p6[5],
				clg_shape_str(&x->v, s0, sizeof(s0)), (long long)p6[2], (long long)p6[3]);
	return CLG_OK;
}

/* The shapes of a conv2d, checked; p6 = stride h, w, padding h, w, dilation h, w. */
static clg_status conv_check(const clg_tensor *x, const clg_tensor *w, const clg_tensor *b, const int64_t *p6,
			     int64_t groups, conv_shape *s)
{
	const char *dev = x->v.buf->backend->info.name;
	char s0[96], s1[96], s2[96];
	clg_status st;

	memset(s, 0, sizeof(*s));
	if (x->v.ndim != 4 || w->v.ndim != 4)
		return clg_fail(CLG_ERR_SHAPE, "op 'conv2d' on device '%s': x %s must be (N, C, H, W) and weight %s (OC, C/groups, KH, KW)",
				dev, clg_shape_str(&x->v, s0, sizeof(s0)), clg_shape_str(&w->v, s1, sizeof(s1)));
	if (groups < 1)
		return clg_fail(CLG_ERR_INVALID, "op 'conv2d' on device '%s': groups %lld must be at least 1", dev,
				(long long)groups);
	s->N = x->v.shape[0], s->C = x->v.shape[1], s->H = x->v.shape[2], s->W = x->v.shape[3];
	s->OC = w->v.shape[0], s->KH = w->v.shape[2], s->KW = w->v.shape[3];
	s->G = groups;
	if (s->C % groups || s->OC % groups)
		return clg_fail(CLG_ERR_SHAPE,
				"op 'conv2d' on device '%s': channels of x %s and output channels of weight %s must be divisible by groups %lld",
				dev, clg_shape_str(&x->v, s0, sizeof(s0)), clg_shape_str(&w->v, s1, sizeof(s1)), (long long)groups);
	s->Cg = s->C / groups, s->OCg = s->OC / groups;
	if (w->v.shape[1] != s->Cg)
		return clg_fail(CLG_ERR_SHAPE,
				"op 'conv2d' on device '%s': weight %s has %lld input channels per group; x %s with groups %lld needs %lld",
				dev, clg_shape_str(&w->v, s0, sizeof(s0)), (long long)w->v.shape[1],
				clg_shape_str(&x->v, s1, sizeof(s1)), (long long)groups, (long long)s->Cg);
	if (b && (b->v.ndim != 1 || b->v.shape[0] != s->OC))
		return clg_fail(CLG_ERR_SHAPE, "op 'conv2d' on device '%s': bias %s must be (%lld,) for weight %s", dev,
				clg_shape_str(&b->v, s0, sizeof(s0)), (long long)s->OC, clg_shape_str(&w->v, s2, sizeof(s2)));
	st = check_window("conv2d", x, s->KH, s->KW, p6, &s->OH, &s->OW);
	if (st)
		return st;
	s->K = s->Cg * s->KH * s->KW;
	s->L = s->OH * s->OW;
	s->ld = conv_ld(s->N * s->L);
	s->p[0] = s->KH, s->p[1] = s->KW;
	memcpy(&s->p[2], p6, 6 * sizeof(int64_t));
	return CLG_OK;
}

/* The columns of x as a (C*KH*KW, N*OH*OW) matrix (see the top of the file), with a last row of
 * ones when ones is set. */
static clg_tensor *conv_cols(clg_tensor *x, const conv_shape *s, int ones)
{
	clg_backend *be = x->v.buf->backend;
	int64_t rows = s->C * s->KH * s->KW;
	clg_op_call c = {.op = CLG_OP_IM2COL};
	clg_tensor *cols = fe_new(be, x->v.dtype, CLG_SHAPE(rows + ones, s->ld));
	if (!cols)
		return NULL;
	c.src[0] = x->v;
	c.dst = view_of(cols, 0, 3, (int64_t[]){s->N, rows, s->L}, (int64_t[]){s->L, s->ld, 1});
	memcpy(c.i, s->p, sizeof(c.i));
	if (fe_run(be, &c))
		goto fail;
	if (ones) {
		clg_op_call f = {.op = CLG_OP_FILL, .f = {1.0}};
		f.dst = view_of(cols, rows * s->ld, 1, (int64_t[]){s->N * s->L}, (int64_t[]){1});
		if (fe_run(be, &f))
			goto fail;
	}
	return cols;
fail:
	clg_free(cols);
	return NULL;
}

static clg_status run_gemm(clg_backend *be, clg_view a, clg_view b, clg_view d, double beta)
{
	clg_op_call c = {.op = CLG_OP_GEMM};

	c.f[0] = 1.0;
	c.f[1] = beta;
	c.src[0] = a;
	c.src[1] = b;
	c.dst = d;
	return fe_run(be, &c);
}

static clg_status run_copy(clg_backend *be, clg_view dst, clg_view src)
{
	clg_op_call c = {.op = CLG_OP_COPY};
	c.dst = dst;
	c.src[0] = src;
	return fe_run(be, &c);
}

/* The weights as a (OC, K [+ 1]) matrix: [W | b] when aug (the bias column), else W contiguous. */
static clg_tensor *conv_weights(clg_tensor *w, clg_tensor *b, const conv_shape *s, int aug)
{
	clg_backend *be = w->v.buf->backend;
	int64_t kw = s->K + aug;
	clg_tensor *wc;

	if (!aug) {
		clg_no_grad_begin();
		wc = clg_contiguous(w);
		clg_no_grad_end();
		return wc;
	}
	wc = fe_new(be, w->v.dtype, CLG_SHAPE(s->OC, kw));
	if (wc && (run_copy(be, view_of(wc, 0, 4, w->v.shape, (int64_t[]){kw, s->KH * s->KW, s->KW, 1}), w->v) ||
		   run_copy(be, view_of(wc, s->K, 1, (int64_t[]){s->OC}, (int64_t[]){kw}), b->v))) {
		clg_free(wc);
		return NULL;
	}
	return wc;
}

/* A conv2d of one group as one GEMM, no graph: *cols (K [+ 1], ld) gets the columns (with the
 * ones row when there is a bias) and *o2 (OC, ld) the output in the columns' layout, bias added. */
static clg_status conv_flat_forward(clg_tensor *x, clg_tensor *w, clg_tensor *b, const conv_shape *s,
				   clg_tensor **cols, clg_tensor **o2)
{
	clg_backend *be = x->v.buf->backend;
	int aug = b != NULL;
	int64_t kw = s->K + aug;
	clg_tensor *wc = conv_weights(w, b, s, aug);
	clg_status st = CLG_OK;

	*cols = wc ? conv_cols(x, s, aug) : NULL;
	*o2 = *cols ? fe_new(be, x->v.dtype, CLG_SHAPE(s->OC, s->ld)) : NULL;
	if (!*o2)
		st = clg_last_status();
	else
		st = run_gemm(be, view_of(wc, 0, 2, (int64_t[]){s->OC, kw}, (int64_t[]){kw, 1}),
			      view_of(*cols, 0, 2, (int64_t[]){kw, s->N * s->L}, (int64_t[]){s->ld, 1}),
			      view_of(*o2, 0, 2, (int64_t[]){s->OC, s->N * s->L}, (int64_t[]){s->ld, 1}), 0.0);
	clg_free(wc);
	if (st) {
		clg_free(*cols);
		clg_free(*o2);
		*cols = *o2 = NULL;
	}
	return st;
}

/* g (N, OC, OH, OW) rearranged to (OC, N*OH*OW), the layout of the columns: IM2COL with a 1x1
 * kernel. */
static clg_tensor *grad_as_cols(clg_tensor *g, const conv_shape *s)
{
	clg_backend *be = g->v.buf->backend;
	clg_op_call c = {.op = CLG_OP_IM2COL, .i = {1, 1, 1, 1, 0, 0, 1, 1}};
	clg_tensor *g2 = fe_new(be, g->v.dtype, CLG_SHAPE(s->OC, s->ld));
	if (!g2)
		return NULL;
	c.src[0] = g->v;
	c.dst = view_of(g2, 0, 3, (int64_t[]){s->N, s->OC, s->L}, (int64_t[]){s->L, s->ld, 1});
	if (fe_run(be, &c)) {
		clg_free(g2);
		return NULL;
	}
	return g2;
}

/* Chunks of K for the weight gradient's GEMM (M, K) @ (K, N) on GPU-shaped devices: K = batch *
 * OH*OW reaches 100352 for a first layer against M*N = 320 outputs, which a GEMM spreads over a
 * handful of work-groups. Split so that the chunks hold about 2^18 outputs in all (enough for any
 * GPU), into at most 64 equal chunks of at least 128 along K; 1 (no split) when that gives fewer
 * than 2 chunks, or when no such divisor of K exists. */
static int64_t dw_chunks(clg_backend *be, int64_t M, int64_t N, int64_t K)
{
	int64_t S = ((int64_t)1 << 18) / (M * N > 0 ? M * N : 1);

	if (clg_backend_kernel_shape(be, CLG_KFAM_CONV, NULL) != CLG_SHAPE_GPU)
		return 1;
	if (S > 64)
		S = 64;
	if (S > K / 128)
		S = K / 128;
	while (S > 1 && K % S)
		S--;
	return S < 2 ? 1 : S;
}

/* d (M, N) = a (M, K) @ b (K, N) as one GEMM batched over S chunks of K into p (S, M, N), then
 * SUM over the chunks in order (deterministic). a: view of ta at offset oa, strides (sa0, sa1);
 * b likewise. */
static clg_status run_gemm_split(clg_backend *be, const clg_tensor *ta, int64_t oa, const int64_t sa[2],
				 const clg_tensor *tb, int64_t ob, const int64_t sb[2], clg_view d, int64_t K,
				 int64_t S)
{
	int64_t M = d.shape[0], N = d.shape[1], kc = K / S;
	clg_tensor *p = fe_new(be, d.dtype, CLG_SHAPE(S, M, N));
	clg_op_call sum = {.op = CLG_OP_SUM};
	clg_status st;

	if (!p)
		return clg_last_status();
	st = run_gemm(be, view_of(ta, oa, 3, (int64_t[]){S, M, kc}, (int64_t[]){kc * sa[1], sa[0], sa[1]}),
		      view_of(tb, ob, 3, (int64_t[]){S, kc, N}, (int64_t[]){kc * sb[0], sb[0], sb[1]}), p->v, 0.0);
	if (!st) {
		sum.dst = d;
		sum.src[0] = view_of(p, 0, 3, (int64_t[]){M, N, S}, (int64_t[]){N, 1, M * N});
		st = fe_run(be, &sum);
	}
	clg_free(p);
	return st;
}

/* With one group, the forward and dcols products are single 2-D GEMMs (see the top of the file). */
static int conv_flat(const conv_shape *s) { return s->G == 1; }

/* Hands x the gradient held in view (nd, shape, stride at offset off) of t. */
static clg_status give_view(clg_tensor *x, clg_tensor *t, int64_t off, int nd, const int64_t *shape,
			    const int64_t *stride)
{
	clg_view v = view_of(t, off, nd, shape, stride);
	return fe_give(x, fe_view_of(t, &v));
}

/* The gradients of a conv2d's inputs x, w and b (those that require one). p7: the node's stride,
 * padding, dilation and groups; cols: the forward's saved columns, or NULL to recompute them. The
 * output's gradient comes as g (N, OC, OH, OW), or (gc set, one group) as gc (OC, ld) in the
 * columns' layout, which is then used up (freed). */
static clg_status conv_grads(clg_tensor *x, clg_tensor *w, clg_tensor *b, const int64_t *p7, clg_tensor *cols,
			     clg_tensor *g, clg_tensor *gc)
{
	clg_tensor *g2 = gc, *t = NULL, *u = NULL, *wc = NULL;
	clg_tensor *gt = g ? g : gc; /* for the device and dtype */
	clg_backend *be = gt->v.buf->backend;
	int need_b = b && b->requires_grad, g_contig = g && clg_view_is_contiguous(&g->v);
	int aug; /* the bias gradient comes out of the weight gradient's GEMM */
	conv_shape s;
	clg_status st;

	st = conv_check(x, w, b, p7, p7[6], &s);
	if (st)
		goto out;
	aug = need_b && w->requires_grad && s.G == 1;
	/* g2 (OC, N*L): g in the layout of the columns */
	if (!g2 && (w->requires_grad || need_b || (x->requires_grad && (!g_contig || conv_flat(&s))))) {
		g2 = grad_as_cols(g, &s);
		if (!g2)
			goto fail;
	}
	if (need_b && !aug) { /* db (OC) = g2 summed over its rows */
		clg_op_call sc = {.op = CLG_OP_SUM};
		t = fe_new(be, gt->v.dtype, CLG_SHAPE(s.OC));
		if (!t)
			goto fail;
		sc.dst = t->v;
		sc.src[0] = view_of(g2, 0, 2, (int64_t[]){s.OC, s.N * s.L}, (int64_t[]){s.ld, 1});
		if ((st = fe_run(be, &sc)))
			goto out;
		st = fe_give(b, t);
		t = NULL;
		if (st)
			goto out;
	}
	if (w->requires_grad) { /* dW_g (OCg, K [+ 1]) = g2_g (OCg, N*L) @ cols_g^T (N*L, K [+ 1]) */
		int64_t ku = s.K + aug; /* columns of u per output channel */
		/* the forward's columns (their ones row, when there, is row K), or new ones */
		t = cols ? fe_view_of(cols, &cols->v) : conv_cols(x, &s, aug);
		u = fe_new(be, gt->v.dtype, CLG_SHAPE(s.OC, ku));
		if (!t || !u)
			goto fail;
		int64_t NL = s.N * s.L, ld = s.ld, S = dw_chunks(be, s.OCg, ku, NL);
		for (int64_t k = 0; k < s.G && !st; k++) {
			clg_view du = view_of(u, k * s.OCg * ku, 2, (int64_t[]){s.OCg, ku}, (int64_t[]){ku, 1});
			if (S > 1) /* split-K: more work-groups on GPUs (dw_chunks) */
				st = run_gemm_split(be, g2, k * s.OCg * ld, (int64_t[]){ld, 1}, t, k * s.K * ld,
						    (int64_t[]){1, ld}, du, NL, S);
			else
				st = run_gemm(be, view_of(g2, k * s.OCg * ld, 2, (int64_t[]){s.OCg, NL}, (int64_t[]){ld, 1}),
					      view_of(t, k * s.K * ld, 2, (int64_t[]){NL, ku}, (int64_t[]){1, ld}), du, 0.0);
		}
		clg_free(t);
		t = NULL;
		if (!st)
			st = give_view(w, u, 0, 4, w->v.shape, (int64_t[]){ku, s.KH * s.KW, s.KW, 1});
		if (!st && aug)
			st = give_view(b, u, s.K, 1, (int64_t[]){s.OC}, (int64_t[]){ku});
		clg_free(u); /* the views handed over keep its storage */
		u = NULL;
		if (st)
			goto out;
	}
	if (x->requires_grad) { /* dcols = W^T @ g2, or per image and group dcols_n,g (K, L) = W_g^T (K, OCg)
				 * @ g_n,g (OCg, L); dx = col2im(dcols) */
		clg_op_call ci = {.op = CLG_OP_COL2IM};
		wc = clg_contiguous(w);
		t = conv_flat(&s) ? fe_new(be, gt->v.dtype, CLG_SHAPE(s.K, s.ld))
				  : fe_new(be, gt->v.dtype, CLG_SHAPE(s.N, s.G * s.K, s.L));
		u = fe_new(be, gt->v.dtype, 4, x->v.shape);
		if (!wc || !t || !u)
			goto fail;
		if (conv_flat(&s)) { /* dcols (K, N*L) = W^T (K, OC) @ g2 (OC, N*L), in the columns' layout */
			st = run_gemm(be, view_of(wc, 0, 2, (int64_t[]){s.K, s.OC}, (int64_t[]){1, s.K}),
				      view_of(g2, 0, 2, (int64_t[]){s.OC, s.N * s.L}, (int64_t[]){s.ld, 1}),
				      view_of(t, 0, 2, (int64_t[]){s.K, s.N * s.L}, (int64_t[]){s.ld, 1}), 0.0);
			ci.src[0] = view_of(t, 0, 3, (int64_t[]){s.N, s.K, s.L}, (int64_t[]){s.L, s.ld, 1});
		} else {
			ci.src[0] = t->v;
		}
		for (int64_t k = 0; k < s.G && !st && !conv_flat(&s); k++) {
			/* g_n,g: g itself when contiguous (batch stride OC*L), else a block of g2 */
			clg_view gv = g_contig ? view_of(g, k * s.OCg * s.L, 3,
							 (int64_t[]){s.N, s.OCg, s.L}, (int64_t[]){s.OC * s.L, s.L, 1})
					       : view_of(g2, k * s.OCg * s.ld, 3, (int64_t[]){s.N, s.OCg, s.L},
							 (int64_t[]){s.L, s.ld, 1});
			st = run_gemm(be, view_of(wc, k * s.OCg * s.K, 3, (int64_t[]){s.N, s.K, s.OCg}, (int64_t[]){0, 1, s.K}),
				      gv,
				      view_of(t, k * s.K * s.L, 3, (int64_t[]){s.N, s.K, s.L}, (int64_t[]){s.G * s.K * s.L, s.L, 1}), 0.0);
		}
		if (st)
			goto out;
		ci.dst = u->v;
		memcpy(ci.i, s.p, sizeof(ci.i));
		if ((st = fe_run(be, &ci)))
			goto out;
		st = fe_give(x, u);
		u = NULL;
	}
	goto out;
fail:
	st = clg_last_status();
out:
	clg_free(g2);
	clg_free(t);
	clg_free(u);
	clg_free(wc);
	return st;
}

static clg_status conv2d_backward(clg_node *n, clg_tensor *g)
{
	return conv_grads(n->in[0], n->in[1], n->ninputs > 2 ? n->in[2] : NULL, n->i, n->nsaved ? n->saved[0] : NULL,
			  g, NULL);
}

clg_tensor *clg_conv2d(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t stride_h, int64_t stride_w,
		       int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w, int64_t groups)
{
	clg_tensor *ins[3] = {x, w, b}, *out = NULL, *cols = NULL, *wc = NULL;
	const int64_t p6[6] = {stride_h, stride_w, pad_h, pad_w, dil_h, dil_w};
	int nin = b ? 3 : 2, aug = b && groups == 1;
	int64_t kw; /* columns of the weight matrix: K, or K + 1 with the bias column */
	clg_backend *be;
	clg_node *node;
	conv_shape s;
	clg_status st;

	if (x && w && fe_autocast_low(nin, ins) != CLG_F32) {
		/* autocast: x, w and b cast to the 16-bit dtype (recorded: the gradients go back in each
		 * one's dtype), then the conv in 16-bit: 16-bit columns (kept for the backward), GEMMs
		 * accumulating in float32 and a 16-bit output, as torch.autocast's conv2d */
		clg_tensor *c[3] = {NULL, NULL, NULL}, *r;
		if (fe_cast_each(nin, ins, fe_autocast_low(nin, ins), c))
			return NULL;
		r = clg_conv2d(c[0], c[1], c[2], stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups);
		for (int i = 0; i < nin; i++)
			clg_free(c[i]);
		return r;
	}
	if (!fe_check_inputs("conv2d", nin, ins))
		return NULL;
	if ((st = conv_check(x, w, b, p6, groups, &s)))
		return fe_fail(st);
	{ /* rows with a long kernel: through the FFT (conv_choice.c) */
		int routed;
		clg_tensor *y = fe_conv2d_rows_fft(x, w, b, stride_h, stride_w, pad_h, pad_w, dil_w, groups, &routed);
		if (routed)
			return y;
	}
	be = x->v.buf->backend;
	kw = s.K + aug;
	if (conv_flat(&s)) { /* out2 (OC, N*L) = W (OC, K [+ 1]) @ cols (K [+ 1], N*L); out = out2 as NCHW */
		clg_op_call c = {.op = CLG_OP_IM2COL, .i = {1, 1, 1, 1, 0, 0, 1, 1}};
		clg_tensor *o2 = NULL;
		int bad = conv_flat_forward(x, w, b, &s, &cols, &o2) != CLG_OK;
		out = bad ? NULL : fe_new(be, x->v.dtype, CLG_SHAPE(s.N, s.OC, s.OH, s.OW));
		if (out) {
			c.src[0] = view_of(o2, 0, 4, out->v.shape, (int64_t[]){s.L, s.ld, s.OW, 1});
			c.dst = view_of(out, 0, 3, (int64_t[]){s.N, s.OC, s.L}, (int64_t[]){s.OC * s.L, s.L, 1});
			bad = fe_run(be, &c) != CLG_OK;
		}
		clg_free(o2);
		if (bad || !out)
			goto fail;
	} else {
		wc = conv_weights(w, b, &s, aug);
		cols = conv_cols(x, &s, aug);
		out = fe_new(be, x->v.dtype, CLG_SHAPE(s.N, s.OC, s.OH, s.OW));
		if (!wc || !cols || !out)
			goto fail;
	}
	if (b && !aug) { /* the bias first, accumulated into by the GEMMs (beta = 1) */
		if (run_copy(be, out->v, view_of(b, 0, 4, out->v.shape, (int64_t[]){0, b->v.stride[0], 0, 0})))
			goto fail;
	}
	/* out_n,g (OCg, L) = W_g (OCg, K [+ 1]) @ cols_n,g (K [+ 1], L), batched over n */
	for (int64_t k = 0; k < s.G && !conv_flat(&s); k++)
		if (run_gemm(be, view_of(wc, k * s.OCg * kw, 3, (int64_t[]){s.N, s.OCg, kw}, (int64_t[]){0, kw, 1}),
			     view_of(cols, k * s.K * s.ld, 3, (int64_t[]){s.N, kw, s.L}, (int64_t[]){s.L, s.ld, 1}),
			     view_of(out, k * s.OCg * s.L, 3, (int64_t[]){s.N, s.OCg, s.L}, (int64_t[]){s.OC * s.L, s.L, 1}),
			     b && !aug ? 1.0 : 0.0))
			goto fail;
	clg_free(wc);
	out = fe_record_op(out, "conv2d", conv2d_backward, nin, ins, &node);
	if (node) {
		memcpy(node->i, p6, sizeof(p6));
		node->i[6] = groups;
		if (w->requires_grad && clg_numel(cols) * (int64_t)clg_dtype_size(cols->v.dtype) <= CONV_SAVE_COLS_MAX)
			fe_save(node, cols);
	}
	clg_free(cols);
	return out;
fail:
	clg_free(wc);
	clg_free(cols);
	clg_free(out);
	return NULL;
}

/* ---- pooling ---- */

/* node->i: kernel h, w, stride h, w, padding h, w, dilation h, w; f: the backward op, ceil_mode,
 * the average's divisor mode (clg_ops.def) */
static clg_status pool_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *dx;
	clg_op_call c = {.op = (clg_op)n->f[0]};

	dx = fe_new(g->v.buf->backend, g->v.dtype, 4, x->v.shape);
	if (!dx)
		return clg_last_status();
	c.dst = dx->v;
	c.src[0] = g->v;
	c.src[1] = x->v;
	memcpy(c.i, n->i, 8 * sizeof(int64_t));
	c.f[0] = n->f[1];
	c.f[1] = n->f[2];
	if (fe_run(dx->v.buf->backend, &c)) {
		clg_free(dx);
		return clg_last_status();
	}
	return fe_give(x, dx);
}

/* avg_div: the average's divisor mode, 0 (KH * KW), 1 or 2 (clg_ops.def) */
static clg_tensor *pool(const char *name, clg_op op, clg_op bw, clg_tensor *x, int64_t kh, int64_t kw, int64_t sh,
			int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int ceil_mode, int avg_div)
{
	const int64_t p6[6] = {sh, sw, ph, pw, dh, dw};
	clg_op_call c = {.op = op};
	int64_t oh, ow;
	clg_tensor *out;
	clg_node *node;
	char s0[96];
	clg_status st;

	if (!fe_check_inputs(name, 1, &x))
		return NULL;
	if (x->v.ndim != 4)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': x %s must be 4-D (N, C, H, W)", name,
					x->v.buf->backend->info.name, clg_shape_str(&x->v, s0, sizeof(s0))));
	if ((st = check_window(name, x, kh, kw, p6, &oh, &ow)))
		return fe_fail(st);
	/* PyTorch's rule: padding at most half the (dilated) kernel, so every window holds input */
	if (2 * ph > dh * (kh - 1) + 1 || 2 * pw > dw * (kw - 1) + 1)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': padding %lldx%lld must be at most half the kernel %lldx%lld",
					name, x->v.buf->backend->info.name, (long long)ph, (long long)pw, (long long)kh,
					(long long)kw));
	oh = clg_pool_out_size(x->v.shape[2], kh, sh, ph, dh, ceil_mode);
	ow = clg_pool_out_size(x->v.shape[3], kw, sw, pw, dw, ceil_mode);
	out = fe_new(x->v.buf->backend, x->v.dtype, CLG_SHAPE(x->v.shape[0], x->v.shape[1], oh, ow));
	if (!out)
		return NULL;
	c.dst = out->v;
	c.src[0] = x->v;
	c.i[0] = kh, c.i[1] = kw;
	memcpy(&c.i[2], p6, sizeof(p6));
	c.f[0] = ceil_mode ? 1 : 0;
	c.f[1] = avg_div;
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	out = fe_record_op(out, name, pool_backward, 1, &x, &node);
	if (node) {
		memcpy(node->i, c.i, 8 * sizeof(int64_t));
		node->f[0] = bw;
		node->f[1] = c.f[0];
		node->f[2] = c.f[1];
	}
	return out;
}

clg_tensor *clg_max_pool2d(clg_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w, int64_t pad_h,
			   int64_t pad_w)
{
	return pool("max_pool2d", CLG_OP_MAXPOOL2D, CLG_OP_MAXPOOL2D_BACKWARD, x, kh, kw, stride_h, stride_w, pad_h, pad_w,
		    1, 1, 0, 0);
}

clg_tensor *clg_max_pool2d_ex(clg_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w, int64_t pad_h,
			      int64_t pad_w, int64_t dil_h, int64_t dil_w, int ceil_mode)
{
	return pool("max_pool2d", CLG_OP_MAXPOOL2D, CLG_OP_MAXPOOL2D_BACKWARD, x, kh, kw, stride_h, stride_w, pad_h, pad_w,
		    dil_h, dil_w, ceil_mode, 0);
}

clg_tensor *clg_avg_pool2d(clg_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w, int64_t pad_h,
			   int64_t pad_w)
{
	return pool("avg_pool2d", CLG_OP_AVGPOOL2D, CLG_OP_AVGPOOL2D_BACKWARD, x, kh, kw, stride_h, stride_w, pad_h, pad_w,
		    1, 1, 0, 0);
}

clg_tensor *clg_avg_pool2d_ex(clg_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w, int64_t pad_h,
			      int64_t pad_w, int ceil_mode, int count_include_pad)
{
	/* with padding counted and no ceil_mode every window divides by KH * KW: the old kernels' path */
	int avg_div = !count_include_pad ? 2 : ceil_mode ? 1 : 0;
	return pool("avg_pool2d", CLG_OP_AVGPOOL2D, CLG_OP_AVGPOOL2D_BACKWARD, x, kh, kw, stride_h, stride_w, pad_h, pad_w,
		    1, 1, ceil_mode, avg_div);
}

/* ---- conv2d -> relu -> max_pool2d as one node ----
 * relu commutes with max (it is monotone), so the block is relu(max_pool2d(conv2d(x))): the pool
 * reads the conv's output where the GEMM left it, in the columns' layout (OC, ld) seen as NCHW,
 * and relu runs on the pooled output, a quarter of the elements for 2x2 pools. The backward is the
 * mirror: relu's mask on the pooled gradient, then max_pool2d_backward writes the conv output's
 * gradient straight into the columns' layout that the weight and input gradients read. Against the
 * three ops one after the other, that saves the conv output's rearrangement to NCHW and the
 * gradient's back, and runs relu and its backward on the pooled size. The gradients are the same:
 * a window whose max is <= 0 passes none through relu either way, and one whose max is positive
 * has the same first largest element before and after relu.
 * node->in: x, w [, b]; i: the conv's stride, padding, dilation (h, w) and groups (1); f: the
 * pool's kernel, stride and padding; saved: o2 (OC, ld), y, and the columns when they fit. */

static clg_status conv_relu_pool_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *w = n->in[1], *b = n->ninputs > 2 ? n->in[2] : NULL;
	clg_tensor *o2 = n->saved[0], *y = n->saved[1], *gp, *gc;
	clg_backend *be = g->v.buf->backend;
	int64_t pk = (int64_t)n->f[0], ps = (int64_t)n->f[1], pp = (int64_t)n->f[2];
	clg_op_call c = {.op = CLG_OP_MAXPOOL2D_BACKWARD, .i = {pk, pk, ps, ps, pp, pp, 1, 1}};
	conv_shape s;
	clg_status st;

	if ((st = conv_check(x, w, b, n->i, n->i[6], &s)))
		return st;
	gp = fe_ew(CLG_OP_RELU_BACKWARD, g, y, 0, 0); /* (N, OC, PH, PW) */
	gc = gp ? fe_new(be, g->v.dtype, CLG_SHAPE(s.OC, s.ld)) : NULL;
	if (!gc) {
		clg_free(gp);
		return clg_last_status();
	}
	/* gc (OC, N*L) as (N, OC, OH, OW): the conv output's gradient in the columns' layout */
	c.dst = view_of(gc, 0, 4, (int64_t[]){s.N, s.OC, s.OH, s.OW}, (int64_t[]){s.L, s.ld, s.OW, 1});
	c.src[0] = gp->v;
	c.src[1] = view_of(o2, 0, 4, (int64_t[]){s.N, s.OC, s.OH, s.OW}, (int64_t[]){s.L, s.ld, s.OW, 1});
	st = fe_run(be, &c);
	clg_free(gp);
	if (st) {
		clg_free(gc);
		return st;
	}
	return conv_grads(x, w, b, n->i, n->nsaved > 2 ? n->saved[2] : NULL, NULL, gc);
}

/* The three ops one after the other: where the fused form does not apply. */
static clg_tensor *conv_relu_pool_composed(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t stride, int64_t pad,
					   int64_t pk, int64_t ps, int64_t pp)
{
	clg_tensor *c = clg_conv2d(x, w, b, stride, stride, pad, pad, 1, 1, 1), *r = c ? clg_relu(c) : NULL;
	clg_tensor *y = r ? clg_max_pool2d(r, pk, pk, ps, ps, pp, pp) : NULL;
	clg_free(c);
	clg_free(r);
	return y;
}

clg_tensor *clg_conv2d_relu_max_pool2d(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t stride, int64_t pad,
				      int64_t pk, int64_t ps, int64_t pp)
{
	clg_tensor *ins[3] = {x, w, b}, *cols = NULL, *o2 = NULL, *p = NULL, *y = NULL;
	const int64_t p6[6] = {stride, stride, pad, pad, 1, 1};
	int nin = b ? 3 : 2;
	int64_t PH, PW;
	clg_op_call c = {.op = CLG_OP_MAXPOOL2D, .i = {pk, pk, ps, ps, pp, pp, 1, 1}};
	clg_node *node;
	conv_shape s;

	if (!fe_check_inputs("conv2d", nin, ins))
		return NULL;
	/* autocast, shapes the conv refuses, rows it sends through the FFT and pools it would refuse
	 * go the composed way (which gives the errors) */
	if (!clg_fused_ops_enabled() || fe_autocast_low(nin, ins) != CLG_F32 || conv_check(x, w, b, p6, 1, &s) ||
	    (x->v.shape[2] == 1 && w->v.shape[2] == 1) || pk < 1 || ps < 1 || pp < 0 ||
	    2 * pp > pk || (PH = clg_conv_out_size(s.OH, pk, ps, pp, 1)) < 1 ||
	    (PW = clg_conv_out_size(s.OW, pk, ps, pp, 1)) < 1)
		return conv_relu_pool_composed(x, w, b, stride, pad, pk, ps, pp);
	if (conv_flat_forward(x, w, b, &s, &cols, &o2))
		return NULL;
	p = fe_new(x->v.buf->backend, x->v.dtype, CLG_SHAPE(s.N, s.OC, PH, PW));
	if (!p)
		goto out;
	c.dst = p->v;
	c.src[0] = view_of(o2, 0, 4, (int64_t[]){s.N, s.OC, s.OH, s.OW}, (int64_t[]){s.L, s.ld, s.OW, 1});
	if (fe_run(x->v.buf->backend, &c))
		goto out;
	y = fe_record_op(fe_ew(CLG_OP_RELU, p, NULL, 0, 0), "conv2d_relu_max_pool2d", conv_relu_pool_backward, nin, ins,
			 &node);
	if (node) {
		memcpy(node->i, p6, sizeof(p6));
		node->i[6] = 1;
		node->f[0] = (double)pk, node->f[1] = (double)ps, node->f[2] = (double)pp;
		fe_save(node, o2);
		fe_save(node, y);
		if (w->requires_grad && clg_numel(cols) * (int64_t)clg_dtype_size(cols->v.dtype) <= CONV_SAVE_COLS_MAX)
			fe_save(node, cols);
	}
out:
	clg_free(p);
	clg_free(o2);
	clg_free(cols);
	return y;
}
