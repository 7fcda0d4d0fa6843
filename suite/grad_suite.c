/* Gradient checks: for each differentiable op (and composites), the analytic gradient of
 * loss = sum(f(inputs) * R) on a device (float32) against central differences computed in double
 * precision on the reference backend; forward values are checked against the reference too. See
 * grad_suite.h for the interface. */
#include "grad_suite.h"

#include "suite_rand.h"
#include "test_grad.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* t's values as doubles (float32 or float64 tensors; int32 as integers); n elements */
int grad_read_doubles(clg_tensor *t, double *out, int64_t n)
{
	clg_tensor *c = clg_contiguous(t);
	int ok = 0;
	if (!c)
		return 0;
	if (clg_dtype_of(c) == CLG_F64) {
		ok = clg_to_host(c, out, sizeof(double) * (size_t)n) == CLG_OK;
	} else if (clg_dtype_of(c) == CLG_F32 || clg_dtype_of(c) == CLG_I32) {
		union {
			float f[256];
			int32_t i[256];
		} u;
		ok = n <= 256 && clg_to_host(c, &u, 4 * (size_t)n) == CLG_OK;
		for (int64_t i = 0; ok && i < n; i++)
			out[i] = clg_dtype_of(c) == CLG_I32 ? (double)u.i[i] : (double)u.f[i];
	}
	clg_free(c);
	return ok;
}

static int axes1[] = {1}, axes0[] = {0};

static clg_tensor *f_add(clg_tensor **x) { return clg_add(x[0], x[1]); }
static clg_tensor *f_sub(clg_tensor **x) { return clg_sub(x[0], x[1]); }
static clg_tensor *f_mul(clg_tensor **x) { return clg_mul(x[0], x[1]); }
static clg_tensor *f_div(clg_tensor **x) { return clg_div(x[0], x[1]); }
static clg_tensor *f_neg(clg_tensor **x) { return clg_neg(x[0]); }
static clg_tensor *f_exp(clg_tensor **x) { return clg_exp(x[0]); }
static clg_tensor *f_log(clg_tensor **x) { return clg_log(x[0]); }
static clg_tensor *f_tanh(clg_tensor **x) { return clg_tanh(x[0]); }
static clg_tensor *f_relu(clg_tensor **x) { return clg_relu(x[0]); }
static clg_tensor *f_affine(clg_tensor **x) { return clg_affine(x[0], -1.5, 0.25); }
static clg_tensor *f_sum1(clg_tensor **x) { return clg_sum(x[0], 1, axes1, 1); }
static clg_tensor *f_sumall(clg_tensor **x) { return clg_sum(x[0], 0, NULL, 0); }
static clg_tensor *f_mean0(clg_tensor **x) { return clg_mean(x[0], 1, axes0, 0); }
static clg_tensor *f_matmul(clg_tensor **x) { return clg_matmul(x[0], x[1]); }
static clg_tensor *f_linear(clg_tensor **x) { return clg_linear(x[0], x[1], x[2]); }
static clg_tensor *f_linear_nobias(clg_tensor **x) { return clg_linear(x[0], x[1], NULL); }

static clg_tensor *f_matmul_tn(clg_tensor **x)
{
	/* a transposed operand used without a copy */
	clg_tensor *at = clg_transpose(x[0], 0, 1), *y = clg_matmul(at, x[1]);
	clg_free(at);
	return y;
}

static clg_tensor *f_slice(clg_tensor **x)
{
	clg_tensor *s = clg_slice(x[0], 1, 1, 6, 2), *y = clg_mul(s, s);
	clg_free(s);
	return y;
}

static clg_tensor *f_reshape_permute(clg_tensor **x)
{
	clg_tensor *r = clg_reshape(x[0], CLG_SHAPE(2, 3, 4));
	clg_tensor *p = clg_permute(r, (int[]){2, 0, 1});
	clg_tensor *c = clg_contiguous(p), *y = clg_mul(c, c);
	clg_free(r);
	clg_free(p);
	clg_free(c);
	return y;
}

static clg_tensor *f_expand(clg_tensor **x)
{
	clg_tensor *e = clg_expand(x[0], CLG_SHAPE(3, 4, 5)), *y = clg_mul(e, x[1]);
	clg_free(e);
	return y;
}

static clg_tensor *f_sigmoid(clg_tensor **x) { return clg_sigmoid(x[0]); }
static clg_tensor *f_gelu(clg_tensor **x) { return clg_gelu(x[0]); }
static clg_tensor *f_silu(clg_tensor **x) { return clg_silu(x[0]); }
static clg_tensor *f_gelu_tanh(clg_tensor **x) { return clg_gelu_tanh(x[0]); }
static clg_tensor *f_abs(clg_tensor **x) { return clg_abs(x[0]); }
static clg_tensor *f_sqrt(clg_tensor **x) { return clg_sqrt(x[0]); }
static clg_tensor *f_rsqrt(clg_tensor **x) { return clg_rsqrt(x[0]); }
static clg_tensor *f_leaky(clg_tensor **x) { return clg_leaky_relu(x[0], 0.1); }
static clg_tensor *f_clamp(clg_tensor **x) { return clg_clamp(x[0], -0.5, 0.6); }
static clg_tensor *f_pow(clg_tensor **x) { return clg_pow(x[0], x[1]); }
static clg_tensor *f_max(clg_tensor **x) { return clg_max(x[0]); }
static clg_tensor *f_min(clg_tensor **x) { return clg_min(x[0]); }

/* max / min of [x, x] along the last dim: every row's extreme value twice, a tie whose gradient
 * belongs to the first copy only (as torch.max(dim) / torch.min(dim) route it to their index), so
 * x gets it once; the mask of all tied positions gave it twice */
static clg_tensor *maxmin_ties(clg_tensor *x, int is_max)
{
	clg_tensor *xx = clg_concat((clg_tensor *[]){x, x}, 2, -1), *y = xx ? (is_max ? clg_max(xx) : clg_min(xx)) : NULL;
	clg_free(xx);
	return y;
}

static clg_tensor *f_max_ties(clg_tensor **x) { return maxmin_ties(x[0], 1); }
static clg_tensor *f_min_ties(clg_tensor **x) { return maxmin_ties(x[0], 0); }
static clg_tensor *f_softmax(clg_tensor **x) { return clg_softmax(x[0]); }
static clg_tensor *f_log_softmax(clg_tensor **x) { return clg_log_softmax(x[0]); }

static clg_tensor *f_where(clg_tensor **x)
{
	/* cond from a comparison: where(a > b, a, b) is an elementwise max */
	clg_tensor *c = clg_compare(x[0], x[1], CLG_CMP_GT), *y = clg_where(c, x[0], x[1]);
	clg_free(c);
	return y;
}

/* cross-entropy of logits (N, C) against fixed one-hot targets, with label smoothing */
static clg_tensor *f_cross_entropy(clg_tensor **x)
{
	static const float onehot[4 * 5] = {1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0};
	double tmp[20];
	clg_backend *be = clg_device_of(x[0]);
	clg_tensor *t, *y;
	for (int i = 0; i < 20; i++)
		tmp[i] = onehot[i];
	t = clg_dtype_of(x[0]) == CLG_F64 ? clg_from_host(be, CLG_F64, CLG_SHAPE(4, 5), tmp)
					  : clg_from_host(be, CLG_F32, CLG_SHAPE(4, 5), onehot);
	y = clg_cross_entropy(x[0], t, 0.1);
	clg_free(t);
	return y;
}

/* A two-layer MLP with a log-sum-exp loss: linear -> tanh -> linear -> relu -> mean. */
static clg_tensor *f_mlp(clg_tensor **x)
{
	clg_tensor *h = clg_linear(x[0], x[1], x[2]), *a = clg_tanh(h);
	clg_tensor *o = clg_matmul(a, x[1]);  /* (4,3) @ (3,5): weight reused, gradients add up */
	clg_tensor *r = clg_relu(o), *e = clg_exp(r), *s = clg_sum(e, 1, axes1, 0), *l = clg_log(s);
	clg_tensor *y = clg_mean(l, 0, NULL, 0);
	clg_free(h);
	clg_free(a);
	clg_free(o);
	clg_free(r);
	clg_free(e);
	clg_free(s);
	clg_free(l);
	return y;
}

static const gcase cases[] = {
	{"add_broadcast", 2, {2, 1}, {{3, 4}, {4}}, -1, 1, f_add},
	{"sub_broadcast", 2, {2, 2}, {{2, 3}, {2, 1}}, -1, 1, f_sub},
	{"mul_broadcast", 2, {2, 2}, {{3, 4}, {1, 4}}, -1, 1, f_mul},
	{"div", 2, {2, 2}, {{3, 4}, {3, 4}}, 0.5f, 2, f_div},
	{"neg", 1, {3}, {{2, 3, 2}}, -1, 1, f_neg},
	{"exp", 1, {2}, {{3, 5}}, -1, 1, f_exp},
	{"log", 1, {2}, {{3, 5}}, 0.5f, 2, f_log},
	{"tanh", 1, {2}, {{3, 5}}, -1.5f, 1.5f, f_tanh},
	{"relu", 1, {2}, {{4, 5}}, -1, 1, f_relu},
	{"affine", 1, {1}, {{7}}, -1, 1, f_affine},
	{"sum_axis_keepdim", 1, {3}, {{2, 3, 4}}, -1, 1, f_sum1},
	{"sum_all", 1, {2}, {{3, 7}}, -1, 1, f_sumall},
	{"mean_axis0", 1, {2}, {{5, 3}}, -1, 1, f_mean0},
	{"matmul", 2, {2, 2}, {{3, 4}, {4, 5}}, -1, 1, f_matmul},
	{"matmul_batched", 2, {3, 3}, {{2, 3, 4}, {2, 4, 5}}, -1, 1, f_matmul},
	{"matmul_batch_x_2d", 2, {3, 2}, {{2, 3, 4}, {4, 5}}, -1, 1, f_matmul},
	{"matmul_transposed", 2, {2, 2}, {{4, 3}, {4, 5}}, -1, 1, f_matmul_tn},
	{"linear", 3, {2, 2, 1}, {{4, 5}, {3, 5}, {3}}, -1, 1, f_linear},
	{"linear_nobias", 2, {2, 2}, {{4, 5}, {3, 5}}, -1, 1, f_linear_nobias},
	{"slice", 1, {2}, {{3, 7}}, -1, 1, f_slice},
	{"reshape_permute", 1, {2}, {{6, 4}}, -1, 1, f_reshape_permute},
	{"expand", 2, {2, 3}, {{4, 1}, {3, 4, 5}}, -1, 1, f_expand},
	{"sigmoid", 1, {2}, {{3, 5}}, -3, 3, f_sigmoid},
	{"gelu", 1, {2}, {{3, 5}}, -3, 3, f_gelu},
	{"silu", 1, {2}, {{3, 5}}, -3, 3, f_silu},
	{"gelu_tanh", 1, {2}, {{3, 5}}, -3, 3, f_gelu_tanh},
	{"abs", 1, {2}, {{3, 5}}, -1, 1, f_abs},
	{"sqrt", 1, {2}, {{3, 5}}, 0.5f, 2, f_sqrt},
	{"rsqrt", 1, {2}, {{3, 5}}, 0.5f, 2, f_rsqrt},
	{"leaky_relu", 1, {2}, {{3, 5}}, -1, 1, f_leaky},
	{"clamp", 1, {2}, {{3, 5}}, -1, 1, f_clamp},
	{"pow", 2, {2, 2}, {{3, 4}, {3, 4}}, 0.5f, 2, f_pow},
	{"where", 2, {2, 2}, {{3, 4}, {3, 4}}, -1, 1, f_where},
	{"max_lastdim", 1, {2}, {{3, 6}}, -1, 1, f_max},
	{"min_lastdim", 1, {3}, {{2, 2, 5}}, -1, 1, f_min},
	{"max_ties", 1, {2}, {{3, 6}}, -1, 1, f_max_ties},
	{"min_ties", 1, {3}, {{2, 2, 5}}, -1, 1, f_min_ties},
	{"softmax", 1, {2}, {{3, 6}}, -2, 2, f_softmax},
	{"log_softmax", 1, {2}, {{3, 6}}, -2, 2, f_log_softmax},
	{"cross_entropy", 1, {2}, {{4, 5}}, -2, 2, f_cross_entropy},
	{"mlp", 3, {2, 2, 1}, {{4, 5}, {3, 5}, {3}}, -1, 1, f_mlp},
};

/* The case families of tests/grad_cases_*.c (declared in tests/test_grad.h), after the base cases
 * above: the one list to extend when a family is added. */
static const gcase *(*const grad_families[])(int *) = {
	grad_cases_conv,
	grad_cases_index,
	grad_cases_norm,
	grad_cases_fused,
	grad_cases_fft,
	grad_cases_attention,
	grad_cases_addnorm,
	grad_cases_reduce,
	grad_cases_loss,
	grad_cases_rnn,
};

#define NFAMILIES (sizeof(grad_families) / sizeof(grad_families[0]))

/* The quick subset, in the order run (max_cases takes its head): composites and ops that
 * together exercise most kernels forward and backward. A name no longer present is skipped. */
static const char *const quick_names[] = {
	"mlp", "cross_entropy", "transformer_block", "conv_pool_linear", "mlp_fused", "softmax",
	"matmul_transposed", "expand", "where", "layer_norm", "batch_norm_train_4d", "concat_many",
	"index_select_dim1", "embedding", "dropout",
};

#define DEFAULT_TOL 2e-3

static const gcase *find_case(const char *name)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(cases[i].name, name))
			return &cases[i];
	for (size_t f = 0; f < NFAMILIES; f++) {
		int n = 0;
		const gcase *fc = grad_families[f](&n);
		for (int i = 0; i < n; i++)
			if (!strcmp(fc[i].name, name))
				return &fc[i];
	}
	return NULL;
}

int grad_suite_case_count(void)
{
	int total = (int)(sizeof(cases) / sizeof(cases[0]));
	for (size_t f = 0; f < NFAMILIES; f++) {
		int n = 0;
		grad_families[f](&n);
		total += n;
	}
	return total;
}

/* o->only is one case name or a comma-separated list of them */
static int wanted(const grad_suite_opts *o, const gcase *c)
{
	size_t n = strlen(c->name);

	if (!o->only)
		return 1;
	for (const char *p = o->only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, c->name, n) && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

/* The cases to run, in order, into list[] (room for grad_suite_case_count()); returns how many. */
static int select_cases(const grad_suite_opts *o, const gcase **list)
{
	int n = 0;

	if (o->quick) {
		for (size_t q = 0; q < sizeof(quick_names) / sizeof(quick_names[0]); q++) {
			const gcase *c = find_case(quick_names[q]);
			if (c && wanted(o, c))
				list[n++] = c;
		}
	} else {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			if (wanted(o, &cases[i]))
				list[n++] = &cases[i];
		for (size_t f = 0; f < NFAMILIES; f++) {
			int nf = 0;
			const gcase *fc = grad_families[f](&nf);
			for (int i = 0; i < nf; i++)
				if (wanted(o, &fc[i]))
					list[n++] = &fc[i];
		}
	}
	if (o->max_cases > 0 && n > o->max_cases)
		n = o->max_cases;
	return n;
}

/* ---- the checks ---- */

static grad_result *cur; /* the result being filled: a case's own CHECKs report into it */

static void vnote(grad_result *r, const char *fmt, va_list ap)
{
	size_t len = strlen(r->message);
	if (len + 2 >= sizeof(r->message))
		return;
	if (len)
		r->message[len++] = '\n';
	vsnprintf(r->message + len, sizeof(r->message) - len, fmt, ap);
}

static void fail(grad_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A failed check: counted, and its message added to the result's. */
static void fail(grad_result *r, const char *fmt, ...)
{
	va_list ap;
	r->nfail++;
	if (r->outcome == GRAD_OK)
		r->outcome = GRAD_FAIL;
	va_start(ap, fmt);
	vnote(r, fmt, ap);
	va_end(ap);
}

void grad_suite_check_failed(const char *file, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	if (!cur)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fail(cur, "%s:%d: %s", file, line, msg);
}

static int64_t numel_of(const gcase *c, int k)
{
	int64_t n = 1;
	for (int d = 0; d < c->nd[k]; d++)
		n *= c->shape[k][d];
	return n;
}

/* loss = sum(f(x) * R) in double on the reference backend; R made on first use. */
static int eval_loss(clg_backend *ref, const gcase *c, double **host, double **R, int64_t *rn, double *loss)
{
	clg_tensor *in[3] = {0}, *y, *rt = NULL, *p = NULL, *s = NULL;
	int ok = 0;

	clg_scope_begin();
	for (int k = 0; k < c->nin; k++)
		in[k] = clg_from_host(ref, CLG_F64, c->nd[k], c->shape[k], host[k]);
	y = c->f(in);
	if (!y)
		goto out;
	if (!*R) {
		int64_t n = clg_numel(y);
		float *tmp = malloc(sizeof(float) * (size_t)n);
		*R = malloc(sizeof(double) * (size_t)n);
		if (!tmp || !*R) {
			free(tmp);
			free(*R);
			*R = NULL;
			goto out;
		}
		*rn = n;
		suite_fill_uniform(tmp, (size_t)n, 99, -1, 1);
		for (int64_t i = 0; i < n; i++)
			(*R)[i] = tmp[i];
		free(tmp);
	}
	rt = clg_from_host(ref, CLG_F64, clg_ndim(y), clg_shape(y), *R);
	p = clg_mul(y, rt);
	s = clg_sum(p, 0, NULL, 0);
	ok = s && clg_item(s, loss) == CLG_OK;
out:
	clg_scope_end();
	return ok;
}

/* A call that failed; the device cannot run the case when the call is not supported there. */
static void failed_call(grad_result *r, clg_status st, const char *what)
{
	fail(r, "%s on %s: %s -> %s: %s", r->name, r->device, what, clg_status_name(st), clg_last_error());
	if (st == CLG_ERR_UNSUPPORTED)
		r->outcome = GRAD_CANNOT_RUN;
}

/* The analytic float32 pass of case c on be against the numeric gradients num[] and the reference
 * loss l0; fills r. */
static void analytic_pass(clg_backend *be, const gcase *c, double *const *host, const double *R, int64_t rn,
			  double *const *num, double l0, grad_result *r)
{
	clg_tensor *in[3] = {0}, *y, *rt = NULL, *p = NULL, *s = NULL;
	float *rf = malloc(sizeof(float) * (size_t)rn);
	clg_status st;

	cur = r;
	clg_scope_begin();
	if (!rf) {
		fail(r, "%s on %s: out of memory", c->name, r->device);
		goto out;
	}
	for (int64_t i = 0; i < rn; i++)
		rf[i] = (float)R[i];
	for (int k = 0; k < c->nin; k++) {
		int64_t n = numel_of(c, k);
		float *xf = malloc(sizeof(float) * (size_t)n);
		for (int64_t i = 0; xf && i < n; i++)
			xf[i] = (float)host[k][i];
		in[k] = xf ? clg_from_host(be, CLG_F32, c->nd[k], c->shape[k], xf) : NULL;
		free(xf);
		if (!in[k]) {
			failed_call(r, clg_last_status(), "upload");
			goto out;
		}
		clg_set_requires_grad(in[k], 1);
	}
	y = c->f(in);
	if (!y) {
		failed_call(r, clg_last_status(), "forward");
		goto out;
	}
	rt = clg_from_host(be, CLG_F32, clg_ndim(y), clg_shape(y), rf);
	p = clg_mul(y, rt);
	s = clg_sum(p, 0, NULL, 0);
	if (!s) {
		failed_call(r, clg_last_status(), "loss");
		goto out;
	}
	st = clg_backward(s);
	if (st) {
		failed_call(r, st, "backward");
		goto out;
	}
	st = clg_item(s, &r->loss);
	if (st) {
		failed_call(r, st, "loss read-back");
		goto out;
	}
	if (!(fabs(r->loss - l0) <= 1e-4 * (1 + fabs(l0))))
		fail(r, "%s on %s: loss %.7g, reference %.7g", c->name, r->device, r->loss, l0);
	for (int k = 0; k < c->nin; k++) {
		int64_t n = numel_of(c, k);
		float *g = malloc(sizeof(float) * (size_t)n);
		double scale = 0, err = 0;
		clg_tensor *gt = clg_grad(in[k]);
		if (!gt)
			fail(r, "%s on %s: input %d has no gradient", c->name, r->device, k);
		if (gt && g && clg_to_host(gt, g, sizeof(float) * (size_t)n) == CLG_OK) {
			for (int64_t i = 0; i < n; i++) {
				scale = fmax(scale, fabs(num[k][i]));
				err = fmax(err, fabs(num[k][i] - g[i]));
			}
			err /= scale + 1e-3;
			r->worst_rel_err = isnan(r->worst_rel_err) ? err : fmax(r->worst_rel_err, err);
			if (!(err < r->tol))
				fail(r, "%s on %s: input %d gradient error %.3g", c->name, r->device, k, err);
		} else if (gt) {
			fail(r, "%s on %s: input %d gradient read-back failed: %s", c->name, r->device, k,
			     clg_last_error());
		}
		free(g);
	}
out:
	clg_scope_end();
	free(rf);
	cur = NULL;
}

/* Case c on the reference's float32 pass (res[0], unless skipped) and on each device: one result
 * each, appended at res; returns how many. */
static int run_case(const gcase *c, clg_backend *ref, clg_backend **devs, int ndevs, const grad_suite_opts *o,
		    grad_result *res)
{
	double *host[3] = {0}, *R = NULL, *num[3] = {0};
	int64_t rn = 0;
	const double h = 1e-6;
	double l0 = NAN;
	int nres = 0, ready = 1;

	for (int k = 0; k < c->nin; k++) {
		int64_t n = numel_of(c, k);
		float *tmp = malloc(sizeof(float) * (size_t)n);
		host[k] = malloc(sizeof(double) * (size_t)n);
		num[k] = malloc(sizeof(double) * (size_t)n);
		if (!tmp || !host[k] || !num[k]) {
			free(tmp);
			ready = 0;
			break;
		}
		suite_fill_uniform(tmp, (size_t)n, 7u + (unsigned)k * 13u, c->lo, c->hi);
		for (int64_t i = 0; i < n; i++)
			host[k][i] = tmp[i];
		free(tmp);
	}
	if (ready)
		ready = eval_loss(ref, c, host, &R, &rn, &l0);
	/* central differences in double */
	for (int k = 0; ready && k < c->nin; k++) {
		for (int64_t i = 0; i < numel_of(c, k); i++) {
			double save = host[k][i], lp, lm;
			host[k][i] = save + h;
			eval_loss(ref, c, host, &R, &rn, &lp);
			host[k][i] = save - h;
			eval_loss(ref, c, host, &R, &rn, &lm);
			host[k][i] = save;
			num[k][i] = (lp - lm) / (2 * h);
		}
	}
	/* analytic gradients in float32 on the reference and on every device */
	for (int di = o->skip_ref_pass ? 0 : -1; di < ndevs; di++) {
		clg_backend *be = di < 0 ? ref : devs[di];
		grad_result *r = &res[nres++];

		memset(r, 0, sizeof(*r));
		r->name = c->name;
		r->device = be->info.name;
		r->ref_pass = di < 0;
		r->outcome = GRAD_OK;
		r->worst_rel_err = NAN;
		r->tol = c->tol > 0 ? c->tol : DEFAULT_TOL;
		r->ref_loss = l0;
		r->loss = NAN;
		if (ready)
			analytic_pass(be, c, host, R, rn, num, l0, r);
		else
			fail(r, "%s: reference forward failed: %s", c->name, clg_last_error());
		if (o->verbose)
			printf("  %-20s %-28s loss %-12.6g worst relative gradient error %.2g\n", c->name, r->device,
			       r->loss, r->worst_rel_err);
		if (o->on_result)
			o->on_result(r, o->ctx);
	}
	for (int k = 0; k < c->nin; k++) {
		free(host[k]);
		free(num[k]);
	}
	free(R);
	return nres;
}

clg_status grad_suite_run(clg_backend *ref, clg_backend **devs, int ndevs, const grad_suite_opts *o,
			  grad_result **results, int *nresults)
{
	static const grad_suite_opts defaults;
	int total = grad_suite_case_count(), n, per = ndevs + 1, nres = 0;
	const gcase **list = malloc(sizeof(*list) * (size_t)(total ? total : 1));
	grad_result *res = NULL;
	clg_status st = CLG_OK;

	*results = NULL;
	*nresults = 0;
	if (!o)
		o = &defaults;
	if (!ref) {
		st = clg_fail(CLG_ERR_INVALID, "gradient checks: no reference backend");
		goto free_list;
	}
	if (!list) {
		st = clg_fail(CLG_ERR_OOM, "gradient checks: out of memory");
		goto free_list;
	}
	n = select_cases(o, list);
	res = calloc((size_t)(n > 0 ? n * per : 1), sizeof(*res));
	if (!res) {
		st = clg_fail(CLG_ERR_OOM, "gradient checks: out of memory for %d results", n * per);
		goto free_list;
	}
	for (int i = 0; i < n; i++)
		nres += run_case(list[i], ref, devs, ndevs, o, res + nres);
	*results = res;
	*nresults = nres;
free_list:
	free(list);
	return st;
}
