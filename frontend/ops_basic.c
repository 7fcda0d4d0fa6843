/* Elementwise ops with broadcasting, reductions, matmul and linear: forward and backward pairs. */
#include "fe_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- binary ---- */

static clg_status add_backward(clg_node *n, clg_tensor *g)
{
	clg_status st = fe_give(n->in[0], fe_alias(g));
	return st ? st : fe_give(n->in[1], fe_alias(g));
}

static clg_status sub_backward(clg_node *n, clg_tensor *g)
{
	clg_status st = fe_give(n->in[0], fe_alias(g));
	return st ? st : fe_give(n->in[1], clg_neg(g));
}

static clg_status mul_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *a = n->in[0], *b = n->in[1];
	clg_status st = a->requires_grad ? fe_give(a, clg_mul(g, b)) : CLG_OK;
	return st || !b->requires_grad ? st : fe_give(b, clg_mul(g, a));
}

static clg_status div_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *a = n->in[0], *b = n->in[1], *t;
	clg_status st = a->requires_grad ? fe_give(a, clg_div(g, b)) : CLG_OK;
	if (st || !b->requires_grad)
		return st;
	/* d(a/b)/db = -a / b^2 */
	t = clg_div(clg_mul(g, a), b);
	st = fe_give(b, clg_neg(clg_div(t, b)));
	clg_free(t);
	return st;
}

/* two float dtypes: computed in the wider (fe_promote) */
#define BINARY(NAME, OP, BW)                                                           \
	clg_tensor *clg_##NAME(clg_tensor *a, clg_tensor *b)                          \
	{                                                                              \
		clg_tensor *ins[2] = {a, b}, *tmp[2], *r;                              \
		if (!a || !b || fe_promote(&ins[0], &ins[1], tmp))                    \
			return NULL;                                                   \
		if (!fe_check_inputs(#NAME, 2, ins))                                   \
			r = NULL;                                                      \
		else                                                                   \
			r = fe_record_op(fe_ew(OP, ins[0], ins[1], 0, 0), #NAME, BW, 2, ins, NULL); \
		clg_free(tmp[0]);                                                      \
		clg_free(tmp[1]);                                                      \
		return r;                                                              \
	}

BINARY(add, CLG_OP_ADD, add_backward)
BINARY(sub, CLG_OP_SUB, sub_backward)
BINARY(mul, CLG_OP_MUL, mul_backward)
BINARY(div, CLG_OP_DIV, div_backward)

/* ---- unary ---- */

static clg_status neg_backward(clg_node *n, clg_tensor *g) { return fe_give(n->in[0], clg_neg(g)); }
static clg_status exp_backward(clg_node *n, clg_tensor *g) { return fe_give(n->in[0], clg_mul(g, n->saved[0])); }
static clg_status log_backward(clg_node *n, clg_tensor *g) { return fe_give(n->in[0], clg_div(g, n->in[0])); }

static clg_status tanh_backward(clg_node *n, clg_tensor *g)
{
	/* g * (1 - y^2) */
	clg_tensor *y = n->saved[0], *y2 = clg_mul(y, y), *d = clg_affine(y2, -1.0, 1.0);
	clg_status st = fe_give(n->in[0], clg_mul(g, d));
	clg_free(y2);
	clg_free(d);
	return st;
}

static clg_status relu_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0];
	return fe_give(x, fe_ew(CLG_OP_RELU_BACKWARD, g, x, 0, 0));
}

static clg_status affine_backward(clg_node *n, clg_tensor *g) { return fe_give(n->in[0], clg_affine(g, n->f[0], 0)); }

static clg_tensor *unary(const char *name, clg_op op, clg_tensor *a, clg_backward_fn bw, int save_out, double f0, double f1)
{
	clg_node *node;
	clg_tensor *out;
	if (!fe_check_inputs(name, 1, &a))
		return NULL;
	out = fe_record_op(fe_ew(op, a, NULL, f0, f1), name, bw, 1, &a, &node);
	if (node) {
		node->f[0] = f0;
		node->f[1] = f1;
		if (save_out)
			fe_save(node, out);
	}
	return out;
}

clg_tensor *clg_neg(clg_tensor *a) { return unary("neg", CLG_OP_NEG, a, neg_backward, 0, 0, 0); }
clg_tensor *clg_exp(clg_tensor *a) { return unary("exp", CLG_OP_EXP, a, exp_backward, 1, 0, 0); }
clg_tensor *clg_log(clg_tensor *a) { return unary("log", CLG_OP_LOG, a, log_backward, 0, 0, 0); }
clg_tensor *clg_tanh(clg_tensor *a) { return unary("tanh", CLG_OP_TANH, a, tanh_backward, 1, 0, 0); }
clg_tensor *clg_relu(clg_tensor *a) { return unary("relu", CLG_OP_RELU, a, relu_backward, 0, 0, 0); }
clg_tensor *clg_affine(clg_tensor *a, double alpha, double beta)
{
	return unary("affine", CLG_OP_SCALE, a, affine_backward, 0, alpha, beta);
}

/* ---- reductions ---- */

/* Marks the reduced axes; returns the count, or -1 on a bad axis. */
static int reduced_axes(const clg_tensor *a, int naxes, const int *axes, int *red)
{
	int n = 0;
	memset(red, 0, sizeof(int) * CLG_MAX_DIMS);
	if (naxes == 0) {
		for (int d = 0; d < a->v.ndim; d++)
			red[d] = 1;
		return a->v.ndim;
	}
	for (int k = 0; k < naxes; k++) {
		int ax = axes[k] < 0 ? axes[k] + a->v.ndim : axes[k];
		if (ax < 0 || ax >= a->v.ndim || red[ax])
			return -1;
		red[ax] = 1;
		n++;
	}
	return n;
}

static clg_status sum_backward(clg_node *n, clg_tensor *g)
{
	/* g has the kept shape (keepdim or not): view it with the input's rank, then broadcast */
	clg_tensor *x = n->in[0], *gk, *ge;
	int64_t kshape[CLG_MAX_DIMS];
	clg_status st;
	for (int d = 0; d < x->v.ndim; d++)
		kshape[d] = (n->i[0] >> d) & 1 ? 1 : x->v.shape[d];
	gk = clg_reshape(g, x->v.ndim, kshape);
	ge = clg_expand(gk, x->v.ndim, x->v.shape);
	st = ge ? fe_accumulate(x, ge) : clg_last_status();
	clg_free(gk);
	clg_free(ge);
	return st;
}

clg_tensor *clg_sum(clg_tensor *a, int naxes, const int *axes, int keepdim)
{
	int red[CLG_MAX_DIMS], nred, nkeep = 0, k = 0, nout = 0;
	int64_t kshape[CLG_MAX_DIMS], oshape[CLG_MAX_DIMS], mask = 0;
	clg_op_call c = {.op = CLG_OP_SUM};
	clg_tensor *out;
	clg_node *node;

	if (!fe_check_inputs("sum", 1, &a))
		return NULL;
	nred = reduced_axes(a, naxes, axes, red);
	if (nred < 0)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'sum' on device '%s': bad or repeated axis for %d dims",
					a->v.buf->backend->info.name, a->v.ndim));
	c.src[0] = a->v;
	for (int d = 0; d < a->v.ndim; d++) {
		if (!red[d]) {
			kshape[nkeep] = a->v.shape[d];
			c.src[0].shape[k] = a->v.shape[d];
			c.src[0].stride[k++] = a->v.stride[d];
			nkeep++;
		}
		mask |= (int64_t)red[d] << d;
		oshape[nout++] = red[d] ? 1 : a->v.shape[d];
	}
	for (int d = 0; d < a->v.ndim; d++)
		if (red[d]) {
			c.src[0].shape[k] = a->v.shape[d];
			c.src[0].stride[k++] = a->v.stride[d];
		}
	out = fe_new(a->v.buf->backend, a->v.dtype, keepdim ? nout : nkeep, keepdim ? oshape : kshape);
	if (!out)
		return NULL;
	c.dst = out->v;
	if (keepdim) { /* the kernel writes the kept dims only */
		c.dst.ndim = nkeep;
		for (int d = 0, j = 0; d < a->v.ndim; d++)
			if (!red[d]) {
				c.dst.shape[j] = out->v.shape[d];
				c.dst.stride[j++] = out->v.stride[d];
			}
	}
	if (fe_run(out->v.buf->backend, &c)) {
		clg_free(out);
		return NULL;
	}
	out = fe_record_op(out, "sum", sum_backward, 1, &a, &node);
	if (node)
		node->i[0] = mask;
	return out;
}

clg_tensor *clg_mean(clg_tensor *a, int naxes, const int *axes, int keepdim)
{
	int red[CLG_MAX_DIMS];
	double count = 1;
	clg_tensor *s, *m;

	if (!fe_check_inputs("mean", 1, &a))
		return NULL;
	if (reduced_axes(a, naxes, axes, red) < 0)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'mean': bad or repeated axis for %d dims", a->v.ndim));
	for (int d = 0; d < a->v.ndim; d++)
		if (red[d])
			count *= (double)a->v.shape[d];
	s = clg_sum(a, naxes, axes, keepdim);
	m = s ? clg_affine(s, count > 0 ? 1.0 / count : 0.0, 0.0) : NULL;
	clg_free(s);
	return m;
}

/* ---- matmul ---- */

/* A GEMM operand: t itself when one of its last two dims has unit stride, else a copy. */
static clg_tensor *gemm_operand(clg_tensor *t)
{
	int nd = t->v.ndim;
	if (t->v.stride[nd - 1] == 1 || t->v.stride[nd - 2] == 1 || t->v.shape[nd - 1] == 1 || t->v.shape[nd - 2] == 1)
		return fe_alias(t);
	return clg_contiguous(t);
}

/* out = alpha * a @ b + beta * out, on views already checked. */
static clg_status gemm(clg_tensor *a, clg_tensor *b, clg_tensor *out, double alpha, double beta)
{
	clg_op_call c = {.op = CLG_OP_GEMM};
	clg_tensor *ga, *gb;
	clg_status st;
	clg_no_grad_begin();
	ga = gemm_operand(a);
	gb = gemm_operand(b);
	clg_no_grad_end();
	if (!ga || !gb) {
		clg_free(ga);
		clg_free(gb);
		return clg_last_status();
	}
	c.src[0] = ga->v;
	c.src[1] = gb->v;
	c.dst = out->v;
	c.f[0] = alpha;
	c.f[1] = beta;
	/* a 2-D operand against a batch: repeat it with batch stride 0 */
	if (out->v.ndim == 3) {
		for (int k = 0; k < 2; k++) {
			if (c.src[k].ndim == 2) {
				c.src[k].ndim = 3;
				c.src[k].shape[2] = c.src[k].shape[1], c.src[k].stride[2] = c.src[k].stride[1];
				c.src[k].shape[1] = c.src[k].shape[0], c.src[k].stride[1] = c.src[k].stride[0];
				c.src[k].shape[0] = out->v.shape[0], c.src[k].stride[0] = 0;
			}
		}
	}
	st = fe_run(out->v.buf->backend, &c);
	clg_free(ga);
	clg_free(gb);
	return st;
}

static clg_status matmul_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *a = n->in[0], *b = n->in[1];
	clg_status st = CLG_OK;
	if (a->requires_grad) {
		clg_tensor *bt = clg_transpose(b, -1, -2);
		st = fe_give(a, clg_matmul(g, bt));
		clg_free(bt);
	}
	if (!st && b->requires_grad) {
		clg_tensor *at = clg_transpose(a, -1, -2);
		st = fe_give(b, clg_matmul(at, g));
		clg_free(at);
	}
	return st;
}

clg_tensor *fe_matmul3(clg_tensor *a, clg_tensor *b)
{
	clg_tensor *ins[2] = {a, b}, *out;
	int nd;
	int64_t shape[3];
	char s0[96], s1[96];

	if (a && b && fe_autocast_low(2, ins) != CLG_F32) { /* autocast: in 16-bit, float32 accumulation */
		clg_tensor *c[2], *r;
		if (fe_cast_each(2, ins, fe_autocast_low(2, ins), c))
			return NULL;
		r = fe_matmul3(c[0], c[1]);
		clg_free(c[0]);
		clg_free(c[1]);
		return r;
	}
	if (!fe_check_inputs("matmul", 2, ins))
		return NULL;
	nd = a->v.ndim > b->v.ndim ? a->v.ndim : b->v.ndim;
	if (a->v.ndim < 2 || b->v.ndim < 2 || nd > 3 || a->v.shape[a->v.ndim - 1] != b->v.shape[b->v.ndim - 2] ||
	    (a->v.ndim == 3 && b->v.ndim == 3 && a->v.shape[0] != b->v.shape[0]))
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'matmul' on device '%s': cannot multiply %s by %s",
					a->v.buf->backend->info.name, clg_shape_str(&a->v, s0, sizeof(s0)),
					clg_shape_str(&b->v, s1, sizeof(s1))));
	if (nd == 3)
		shape[0] = a->v.ndim == 3 ? a->v.shape[0] : b->v.shape[0];
	shape[nd - 2] = a->v.shape[a->v.ndim - 2];
	shape[nd - 1] = b->v.shape[b->v.ndim - 1];
	out = fe_new(a->v.buf->backend, a->v.dtype, nd, shape);
	if (!out)
		return NULL;
	if (gemm(a, b, out, 1.0, 0.0)) {
		clg_free(out);
		return NULL;
	}
	return fe_record_op(out, "matmul", matmul_backward, 2, ins, NULL);
}

/* ---- linear: y = x @ w^T + b, the bias written first and accumulated by the GEMM (beta = 1) ---- */

static clg_status linear_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *w = n->in[1];
	clg_status st = CLG_OK;
	if (x->requires_grad)
		st = fe_give(x, clg_matmul(g, w)); /* (N, out) @ (out, in) */
	if (!st && w->requires_grad) {
		clg_tensor *gt = clg_transpose(g, 0, 1);
		st = fe_give(w, clg_matmul(gt, x)); /* (out, N) @ (N, in) */
		clg_free(gt);
	}
	if (!st && n->ninputs > 2 && n->in[2]->requires_grad)
		st = fe_give(n->in[2], fe_alias(g)); /* summed over rows by fe_give() */
	return st;
}

static clg_status linear_check(const char *op, clg_tensor *x, clg_tensor *w, clg_tensor *b)
{
	char s0[96], s1[96];
	if (x->v.ndim != 2 || w->v.ndim != 2 || x->v.shape[1] != w->v.shape[1] ||
	    (b && (b->v.ndim != 1 || b->v.shape[0] != w->v.shape[0])))
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': x %s, weight %s%s", op,
				x->v.buf->backend->info.name, clg_shape_str(&x->v, s0, sizeof(s0)),
				clg_shape_str(&w->v, s1, sizeof(s1)), b ? " and a bias" : "");
	return CLG_OK;
}

/* Autocast: x, w and b cast to the autocast dtype (w's cast is this step's 16-bit copy of the
 * weight; its gradient goes back to w in w's dtype), then the op on the casts. */
static clg_tensor *linear_autocast(clg_tensor *x, clg_tensor *w, clg_tensor *b, clg_act act, int with_act)
{
	clg_tensor *ins[3] = {x, w, b}, *c[3], *r;

	if (fe_cast_each(3, ins, fe_autocast_low(3, ins), c))
		return NULL;
	r = with_act ? clg_linear_act(c[0], c[1], c[2], act) : clg_linear(c[0], c[1], c[2]);
	for (int i = 0; i < 3; i++)
		clg_free(c[i]);
	return r;
}

static int fused_state = -1; /* -1: not read from the environment yet */

void clg_set_fused_ops(int enabled) { fused_state = enabled != 0; }

int clg_fused_ops_enabled(void)
{
	if (fused_state < 0) {
		fused_state = clg_cfg_bool(CLG_CFG_FUSED);
	}
	return fused_state;
}

/* Whether the fused epilogue serves this call: a bias, and a device that has the fused ops (every
 * float dtype: 16-bit storage computes in float32, so the float16 linear of autocast stays fused). */
static int fused_linear_ok(clg_tensor *x, clg_tensor *b)
{
	clg_backend *be = x->v.buf->backend;
	return b && clg_fused_ops_enabled() && clg_backend_has_op(be, CLG_OP_BIAS_ACT) && clg_backend_has_op(be, CLG_OP_BIAS_ACT_BACKWARD);
}

clg_tensor *clg_linear(clg_tensor *x, clg_tensor *w, clg_tensor *b)
{
	clg_tensor *ins[3] = {x, w, b}, *out, *wt = NULL;
	int nin = b ? 3 : 2;

	if (x && w && fe_autocast_low(nin, ins) != CLG_F32)
		return linear_autocast(x, w, b, CLG_ACT_NONE, 0);
	if (!fe_check_inputs("linear", nin, ins))
		return NULL;
	if (linear_check("linear", x, w, b))
		return fe_fail(clg_last_status());
	if (fused_linear_ok(x, b))
		return clg_linear_act(x, w, b, CLG_ACT_NONE);
	out = fe_new(x->v.buf->backend, x->v.dtype, CLG_SHAPE(x->v.shape[0], w->v.shape[0]));
	if (!out)
		return NULL;
	if (b) {
		clg_op_call c = {.op = CLG_OP_COPY};
		c.dst = out->v;
		fe_broadcast_view(b, 2, out->v.shape, &c.src[0]);
		if (fe_run(out->v.buf->backend, &c))
			goto fail;
	}
	clg_no_grad_begin();
	wt = clg_transpose(w, 0, 1);
	clg_no_grad_end();
	if (!wt || gemm(x, wt, out, 1.0, b ? 1.0 : 0.0))
		goto fail;
	clg_free(wt);
	return fe_record_op(out, "linear", linear_backward, nin, ins, NULL);
fail:
	clg_free(wt);
	clg_free(out);
	return NULL;
}

/* ---- linear + activation: y = act(x @ w^T + b), the bias and act in one pass after the GEMM ---- */

/* One pass for the activation's gradient and the bias gradient (BIAS_ACT_BACKWARD), then the two
 * GEMMs on dz. saved[0] is what act' is evaluated at: the output (relu) or the pre-activation
 * (gelu); nothing for none. Leaf weights and biases (the usual case) get their gradients written
 * straight into .grad by the GEMM and the fused op. */
static clg_status linear_act_backward(clg_node *n, clg_tensor *g)
{
	clg_tensor *x = n->in[0], *w = n->in[1], *b = n->in[2], *dz, *db = NULL, *tw, *tb;
	clg_op_call c = {.op = CLG_OP_BIAS_ACT_BACKWARD};
	clg_status st = CLG_OK;
	double beta_b = 0, beta_w = 0;
	int made_b = 0, made_w = 0;

	dz = fe_new(g->v.buf->backend, g->v.dtype, 2, g->v.shape);
	if (!dz)
		return clg_last_status();
	tb = fe_leaf_grad(b, &beta_b, &made_b);
	if (!tb) /* not a leaf or shared: a temporary, accumulated below */
		tb = db = fe_new(g->v.buf->backend, g->v.dtype, 1, &g->v.shape[1]);
	if (!tb)
		goto fail;
	c.dst = dz->v;
	c.src[0] = g->v;
	c.src[1] = n->nsaved ? n->saved[0]->v : g->v;
	c.src[2] = tb->v;
	c.i[0] = n->i[0];
	c.f[0] = beta_b;
	if (fe_run(g->v.buf->backend, &c))
		goto fail;
	made_b = 0; /* b's new .grad now holds its gradient */
	if (x->requires_grad)
		st = fe_give(x, clg_matmul(dz, w)); /* (N, out) @ (out, in) */
	if (!st && w->requires_grad) {
		clg_tensor *dzt = clg_transpose(dz, 0, 1);
		tw = dzt ? fe_leaf_grad(w, &beta_w, &made_w) : NULL;
		if (!dzt)
			st = clg_last_status();
		else if (tw) /* (out, N) @ (N, in) into w's .grad */
			st = gemm(dzt, x, tw, 1.0, beta_w);
		else
			st = fe_give(w, clg_matmul(dzt, x));
		if (st)
			fe_leaf_grad_undo(w, made_w);
		clg_free(dzt);
	}
	if (!st && db && b->requires_grad)
		st = fe_accumulate(b, db);
	clg_free(dz);
	clg_free(db);
	return st;
fail:
	fe_leaf_grad_undo(b, made_b);
	clg_free(dz);
	clg_free(db);
	return clg_last_status();
}

/* dst = act(src + b) in place or into dst */
static clg_status bias_act(clg_tensor *dst, clg_tensor *src, clg_tensor *b, clg_act act)
{
	clg_op_call c = {.op = CLG_OP_BIAS_ACT};
	c.dst = dst->v;
	c.src[0] = src->v;
	c.src[1] = b->v;
	c.i[0] = act;
	return fe_run(dst->v.buf->backend, &c);
}

static clg_status gelu_into(clg_tensor *y, clg_tensor *u)
{
	clg_op_call c = {.op = CLG_OP_GELU};
	c.dst = y->v;
	c.src[0] = u->v;
	return fe_run(y->v.buf->backend, &c);
}

/* out = act(a @ bt + b) (act none or relu): one op where the device has GEMM_BIAS_ACT (the own CPU
 * GEMM applies the bias and act as it stores), else the GEMM and then bias_act in place. */
static clg_status gemm_bias_act(clg_tensor *a, clg_tensor *bt, clg_tensor *b, clg_tensor *out, clg_act act)
{
	clg_backend *be = out->v.buf->backend;
	clg_op_call c = {.op = CLG_OP_GEMM_BIAS_ACT};
	clg_tensor *ga, *gb;
	clg_status st;

	if (!clg_backend_has_op(be, CLG_OP_GEMM_BIAS_ACT) || a->v.ndim != 2 || out->v.ndim != 2) {
		st = gemm(a, bt, out, 1.0, 0.0);
		return st ? st : bias_act(out, out, b, act);
	}
	clg_no_grad_begin();
	ga = gemm_operand(a);
	gb = gemm_operand(bt);
	clg_no_grad_end();
	if (!ga || !gb) {
		clg_free(ga);
		clg_free(gb);
		return clg_last_status();
	}
	c.dst = out->v;
	c.src[0] = ga->v;
	c.src[1] = gb->v;
	c.src[2] = b->v;
	c.i[0] = act;
	st = fe_run(be, &c);
	clg_free(ga);
	clg_free(gb);
	return st;
}

clg_tensor *clg_linear_act(clg_tensor *x, clg_tensor *w, clg_tensor *b, clg_act act)
{
	clg_tensor *ins[3] = {x, w, b}, *z = NULL, *y = NULL, *wt = NULL, *r;
	clg_node *node;
	int nin = b ? 3 : 2;

	if (x && w && fe_autocast_low(nin, ins) != CLG_F32 && (unsigned)act <= CLG_ACT_GELU)
		return linear_autocast(x, w, b, act, 1);
	if (!fe_check_inputs("linear_act", nin, ins))
		return NULL;
	if (linear_check("linear_act", x, w, b))
		return fe_fail(clg_last_status());
	if ((unsigned)act > CLG_ACT_GELU)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'linear_act': unknown activation %d", (int)act));
	if (!fused_linear_ok(x, b)) { /* the composite: no bias, or no fused ops for this device or dtype */
		clg_tensor *l = clg_linear(x, w, b), *o;
		if (act == CLG_ACT_NONE || !l)
			return l;
		o = act == CLG_ACT_RELU ? clg_relu(l) : clg_gelu(l);
		clg_free(l);
		return o;
	}
	z = fe_new(x->v.buf->backend, x->v.dtype, CLG_SHAPE(x->v.shape[0], w->v.shape[0]));
	if (!z)
		return NULL;
	clg_no_grad_begin();
	wt = clg_transpose(w, 0, 1);
	clg_no_grad_end();
	/* z = act(x @ w^T + b) for relu and none; gelu keeps u = x @ w^T + b for its backward */
	if (!wt || gemm_bias_act(x, wt, b, z, act == CLG_ACT_GELU ? CLG_ACT_NONE : act))
		goto fail;
	clg_free(wt);
	wt = NULL;
	if (act == CLG_ACT_GELU) {
		y = fe_new(x->v.buf->backend, x->v.dtype, 2, z->v.shape);
		if (!y || gelu_into(y, z))
			goto fail;
	} else {
		y = z;
		z = NULL;
	}
	r = fe_record_op(y, "linear_act", linear_act_backward, nin, ins, &node);
	if (node) {
		node->i[0] = act;
		if (act != CLG_ACT_NONE)
			fe_save(node, act == CLG_ACT_GELU ? z : r);
	}
	clg_free(z);
	return r;
fail:
	clg_free(wt);
	clg_free(z);
	clg_free(y);
	return NULL;
}
