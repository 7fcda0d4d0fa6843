/* conv_transpose2d as torch.nn.functional.conv_transpose2d: the input-gradient of conv2d run
 * forward, composed as PyTorch's own slow path is: cols = W^T @ x (one GEMM, batched over the images
 * and the groups by clg_matmul) and COL2IM, which sums each output pixel's overlapping taps. The
 * col2im here is a differentiable node (its backward is IM2COL), so the gradients of x and W come
 * from the matmul's and the bias's from the add: dx is conv2d(g, W) computed as im2col + GEMM,
 * dW the product of x with the im2col of g, as conv2d's backward computes them. */
#include "fe_internal.h"

#include <string.h>

/* node->in[0] cols (N, C*KH*KW, H*W); i the conv-family parameters (clg_ops.def) */
static clg_status col2im_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *cols = n->in[0], *dc;
	clg_op_call c = {.op = CLG_OP_IM2COL};

	dc = fe_new(g->v.buf->backend, g->v.dtype, 3, cols->v.shape);
	if (!dc)
		return clg_last_status();
	c.dst = dc->v;
	c.src[0] = g->v;
	memcpy(c.i, n->i, sizeof(c.i));
	if (fe_run(dc->v.buf->backend, &c)) {
		clg_free(dc);
		return clg_last_status();
	}
	return fe_give(cols, dc);
}

/* cols (N, C*KH*KW, H*W) -> (N, C, OH, OW) summing overlaps, p the conv-family parameters; the
 * caller checked the geometry (the op checks it again, with its message) */
static clg_tensor *col2im(clg_tensor *cols, int64_t C, int64_t OH, int64_t OW, const int64_t *p)
{
	clg_op_call c = {.op = CLG_OP_COL2IM};
	clg_tensor *out = fe_new(cols->v.buf->backend, cols->v.dtype, CLG_SHAPE(cols->v.shape[0], C, OH, OW));
	clg_node *node;

	if (!out)
		return NULL;
	c.dst = out->v;
	c.src[0] = cols->v;
	memcpy(c.i, p, sizeof(c.i));
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	out = fe_record_op(out, "conv_transpose2d", col2im_backward, 1, &cols, &node);
	if (node)
		memcpy(node->i, p, sizeof(c.i));
	return out;
}

clg_tensor *clg_conv_transpose2d(clg_tensor *x, clg_tensor *w, clg_tensor *b, int64_t stride_h, int64_t stride_w,
				 int64_t pad_h, int64_t pad_w, int64_t out_pad_h, int64_t out_pad_w, int64_t dil_h,
				 int64_t dil_w, int64_t groups)
{
	clg_tensor *ins[3] = {x, w, b}, *xr = NULL, *wr = NULL, *wt = NULL, *cols = NULL, *c2 = NULL, *y = NULL;
	const int64_t p[8] = {0, 0, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w};
	int64_t N, C, H, W, OC, KH, KW, OH, OW, G = groups;
	const char *dev;
	char s0[96], s1[96];

	if (!fe_check_inputs("conv_transpose2d", b ? 3 : 2, ins))
		return NULL;
	dev = x->v.buf->backend->info.name;
	if (x->v.ndim != 4 || w->v.ndim != 4 || (b && b->v.ndim != 1))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'conv_transpose2d' on device '%s': x %s must be (N, C, H, W) and w %s (C, OC / groups, KH, KW)",
					dev, clg_shape_str(&x->v, s0, sizeof(s0)), clg_shape_str(&w->v, s1, sizeof(s1))));
	N = x->v.shape[0], C = x->v.shape[1], H = x->v.shape[2], W = x->v.shape[3];
	KH = w->v.shape[2], KW = w->v.shape[3];
	if (G < 1 || C % G || w->v.shape[0] != C)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'conv_transpose2d' on device '%s': w %s must be (%lld, OC / groups, KH, KW) for x %s in %lld groups",
					dev, clg_shape_str(&w->v, s1, sizeof(s1)), (long long)C,
					clg_shape_str(&x->v, s0, sizeof(s0)), (long long)G));
	OC = w->v.shape[1] * G;
	if (b && b->v.shape[0] != OC)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'conv_transpose2d' on device '%s': bias %s must be (%lld)", dev,
					clg_shape_str(&b->v, s0, sizeof(s0)), (long long)OC));
	if (stride_h < 1 || stride_w < 1 || dil_h < 1 || dil_w < 1 || pad_h < 0 || pad_w < 0 || out_pad_h < 0 ||
	    out_pad_w < 0)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'conv_transpose2d' on device '%s': stride %lldx%lld and dilation %lldx%lld must be at least 1, padding %lldx%lld and output padding %lldx%lld at least 0",
					dev, (long long)stride_h, (long long)stride_w, (long long)dil_h, (long long)dil_w,
					(long long)pad_h, (long long)pad_w, (long long)out_pad_h, (long long)out_pad_w));
	/* PyTorch allows output padding below the stride or the dilation; the col2im here needs it
	 * below the stride (the extra rows then hold no window start) */
	if (out_pad_h >= stride_h || out_pad_w >= stride_w)
		return fe_fail(clg_fail(CLG_ERR_UNSUPPORTED, "op 'conv_transpose2d' on device '%s': output padding %lldx%lld must be smaller than the stride %lldx%lld",
					dev, (long long)out_pad_h, (long long)out_pad_w, (long long)stride_h, (long long)stride_w));
	OH = (H - 1) * stride_h - 2 * pad_h + dil_h * (KH - 1) + out_pad_h + 1;
	OW = (W - 1) * stride_w - 2 * pad_w + dil_w * (KW - 1) + out_pad_w + 1;
	if (OH < 1 || OW < 1 || clg_conv_out_size(OH, KH, stride_h, pad_h, dil_h) != H ||
	    clg_conv_out_size(OW, KW, stride_w, pad_w, dil_w) != W)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'conv_transpose2d' on device '%s': x %s with kernel %lldx%lld, stride %lldx%lld, padding %lldx%lld, dilation %lldx%lld gives no output (%lld x %lld)",
					dev, clg_shape_str(&x->v, s0, sizeof(s0)), (long long)KH, (long long)KW,
					(long long)stride_h, (long long)stride_w, (long long)pad_h, (long long)pad_w,
					(long long)dil_h, (long long)dil_w, (long long)OH, (long long)OW));
	{
		int64_t pp[8];
		memcpy(pp, p, sizeof(pp));
		pp[0] = KH, pp[1] = KW;
		/* cols (N, G, OC/G * KH * KW, H * W) = W_g^T (G, OC/G * KH * KW, C/G) @ x (N, G, C/G, H * W) */
		xr = clg_reshape(x, 4, (int64_t[]){N, G, C / G, H * W});
		wr = clg_reshape(w, 3, (int64_t[]){G, C / G, OC / G * KH * KW});
		wt = wr ? clg_transpose(wr, -1, -2) : NULL;
		if (wt && G == 1) { /* one group: (OC * KH * KW, C) @ (N, C, H * W), the weights at batch stride 0 */
			clg_tensor *w2 = clg_reshape(wt, 2, &wt->v.shape[1]), *x3 = xr ? clg_reshape(xr, 3, (int64_t[]){N, C, H * W}) : NULL;
			cols = w2 && x3 ? clg_matmul(w2, x3) : NULL;
			clg_free(w2);
			clg_free(x3);
		} else if (wt && xr) {
			cols = clg_matmul(wt, xr);
		}
		c2 = cols ? clg_reshape(cols, 3, (int64_t[]){N, OC * KH * KW, H * W}) : NULL;
		y = c2 ? col2im(c2, OC, OH, OW, pp) : NULL;
	}
	if (y && b) {
		clg_tensor *b3 = clg_reshape(b, 3, (int64_t[]){OC, 1, 1}), *t = b3 ? clg_add(y, b3) : NULL;
		clg_free(b3);
		clg_free(y);
		y = t;
	}
	clg_free(xr);
	clg_free(wr);
	clg_free(wt);
	clg_free(cols);
	clg_free(c2);
	return y;
}
