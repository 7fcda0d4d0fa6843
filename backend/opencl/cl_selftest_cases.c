/* The self-test's cases: one or two small calls per op of every family (elementwise with and
 * without a broadcast source, reductions, rows longer than a work-group, GEMM at tile edges,
 * transposed and batched, im2col and pooling, random numbers, index select/add with indices out
 * of range, the fused epilogue and loss, fused attention, the optimizers in place), run on the device and on the
 * reference backend and compared by normalized max error (max |d - r| / max(max |r|, 1)). */
#include "cl_selftest_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOPS (1 + CLG_MAX_SRC) /* dst, then the sources */

typedef struct {
	clg_op op;
	int nd;                          /* every operand's number of dims ... */
	int ndx[NOPS];                   /* ... unless set here */
	int64_t shape[NOPS][4];          /* dst, src0, ... */
	int bcast[NOPS];                 /* operand read with stride 0 along dim 0 */
	int trans[NOPS];                 /* 2-D operand stored transposed */
	clg_dtype dt[NOPS];              /* 0 (float32), CLG_I32 or CLG_F16 */
	float lo, hi;                    /* range of the float inputs */
	int quantize;                    /* round inputs to halves (comparisons need ties) */
	double f[8];
	int64_t i[8];
	int check_src;                   /* sources updated in place, compared too (bit mask) */
	double tol;
} st_case;

typedef struct {
	clg_view v[NOPS];
	clg_buffer *b[NOPS];
} st_operands;

static uint32_t rng_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

static int nsrc_of(const st_case *c) { return clg_op_nsrc(c->op); }

static int nd_of(const st_case *c, int k) { return c->ndx[k] ? c->ndx[k] : c->nd; }

static int64_t numel4(const int64_t *shape, int nd)
{
	int64_t n = 1;
	for (int d = 0; d < nd; d++)
		n *= shape[d];
	return n;
}

/* Fills the host data of every operand (dst included: some ops accumulate into it). */
static void case_data(const st_case *c, float *const *host, int64_t *const *ihost, const int64_t *nelem)
{
	uint64_t s = 0x5eed0000u + (uint64_t)c->op;
	for (int k = 0; k <= nsrc_of(c); k++) {
		for (int64_t j = 0; j < nelem[k]; j++) {
			if (c->dt[k] == CLG_I32) {
				/* indices -1 .. 6: for a table of 6 rows, one below and one above the range */
				ihost[k][j] = (int64_t)(rng_next(&s) % 8) - 1;
			} else {
				float u = (float)(rng_next(&s) >> 8) * (1.0f / 16777216.0f);
				float x = c->lo + (c->hi - c->lo) * u;
				host[k][j] = c->quantize ? floorf(x * 2.0f) / 2.0f : x;
			}
		}
	}
}

static void free_operands(st_operands *o)
{
	for (int k = 0; k < NOPS; k++) {
		clg_buffer_free(o->b[k]);
		o->b[k] = NULL;
	}
}

/* Allocates and uploads the operands of c on be. */
static clg_status make_operands(clg_backend *be, const st_case *c, float *const *host, int64_t *const *ihost,
				const int64_t *nelem, st_operands *o)
{
	clg_status st = CLG_OK;
	memset(o, 0, sizeof(*o));
	for (int k = 0; k <= nsrc_of(c) && !st; k++) {
		clg_view *v = &o->v[k];
		clg_dtype t = c->dt[k] == CLG_I32 || c->dt[k] == CLG_F16 ? c->dt[k] : CLG_F32;
		size_t bytes = (size_t)nelem[k] * (t == CLG_F16 ? 2 : 4);

		st = clg_buffer_alloc(be, bytes ? bytes : 4, &o->b[k]);
		if (st)
			break;
		if (t == CLG_I32) {
			int32_t *tmp = malloc(bytes ? bytes : 4);
			if (!tmp) {
				st = clg_fail(CLG_ERR_OOM, "self-test: out of host memory");
				break;
			}
			for (int64_t j = 0; j < nelem[k]; j++)
				tmp[j] = (int32_t)ihost[k][j];
			st = clg_buffer_upload(o->b[k], 0, tmp, bytes);
			free(tmp);
		} else if (t == CLG_F16) {
			uint16_t *tmp = malloc(bytes ? bytes : 2);
			if (!tmp) {
				st = clg_fail(CLG_ERR_OOM, "self-test: out of host memory");
				break;
			}
			for (int64_t j = 0; j < nelem[k]; j++)
				tmp[j] = clg_float_to_half(host[k][j]);
			st = clg_buffer_upload(o->b[k], 0, tmp, bytes);
			free(tmp);
		} else {
			st = clg_buffer_upload(o->b[k], 0, host[k], bytes);
		}
		clg_view_contiguous(v, o->b[k], t, nd_of(c, k), c->shape[k]);
		if (c->bcast[k]) {
			v->stride[0] = 0;
		} else if (c->trans[k] && nd_of(c, k) == 2) { /* stored (cols, rows), viewed (rows, cols) */
			v->stride[0] = 1;
			v->stride[1] = c->shape[k][0];
		}
	}
	if (st)
		free_operands(o);
	return st;
}

static clg_status read_operand(const st_operands *o, int k, int64_t n, float *out)
{
	if (o->v[k].dtype == CLG_F16) {
		uint16_t *tmp = malloc((size_t)(n ? n : 1) * 2);
		clg_status st;
		if (!tmp)
			return clg_fail(CLG_ERR_OOM, "self-test: out of host memory");
		st = clg_buffer_download(o->b[k], 0, tmp, (size_t)n * 2);
		for (int64_t j = 0; !st && j < n; j++)
			out[j] = clg_half_to_float(tmp[j]);
		free(tmp);
		return st;
	}
	if (o->v[k].dtype == CLG_I32) {
		int32_t *tmp = malloc((size_t)(n ? n : 1) * 4);
		clg_status st;
		if (!tmp)
			return clg_fail(CLG_ERR_OOM, "self-test: out of host memory");
		st = clg_buffer_download(o->b[k], 0, tmp, (size_t)n * 4);
		for (int64_t j = 0; !st && j < n; j++)
			out[j] = (float)tmp[j];
		free(tmp);
		return st;
	}
	return clg_buffer_download(o->b[k], 0, out, (size_t)n * 4);
}

/* Normalized error: max |d - r| over max(max |r|, 1); NaN must meet NaN, infinity the same
 * infinity (otherwise the error is infinite). */
static double compare(const float *d, const float *r, int64_t n)
{
	double diff = 0, scale = 1;
	for (int64_t j = 0; j < n; j++) {
		if (isnan(r[j]) || isnan(d[j])) {
			if (isnan(r[j]) != isnan(d[j]))
				return INFINITY;
			continue;
		}
		if (isinf(r[j]) || isinf(d[j])) {
			if (r[j] != d[j])
				return INFINITY;
			continue;
		}
		diff = fmax(diff, fabs((double)d[j] - r[j]));
		scale = fmax(scale, fabs((double)r[j]));
	}
	return diff / scale;
}

/* Runs one case on dev and ref. Returns CLG_OK with *err the normalized error, or the status of
 * a call that failed (*on_dev says whether the device's). */
static clg_status run_case(clg_backend *dev, clg_backend *ref, const st_case *c, double *err, int *on_dev)
{
	int nops = 1 + nsrc_of(c);
	int64_t nelem[NOPS] = {0}, total = 0;
	float *host[NOPS] = {0}, *pool = NULL, *got = NULL, *want = NULL;
	int64_t *ihost[NOPS] = {0}, *ipool = NULL;
	st_operands od = {0}, orf = {0};
	clg_op_call call = {.op = c->op};
	clg_status st;

	*err = 0;
	*on_dev = 0;
	for (int k = 0; k < nops; k++) {
		int64_t n = numel4(c->shape[k], nd_of(c, k));
		if (c->bcast[k])
			n /= c->shape[k][0] ? c->shape[k][0] : 1;
		nelem[k] = n;
		total += n;
	}
	pool = malloc((size_t)total * sizeof(float));
	ipool = malloc((size_t)total * sizeof(int64_t));
	got = malloc((size_t)total * sizeof(float));
	want = malloc((size_t)total * sizeof(float));
	if (!pool || !ipool || !got || !want) {
		st = clg_fail(CLG_ERR_OOM, "self-test: out of host memory");
		goto out_free;
	}
	for (int k = 0, at = 0; k < nops; at += (int)nelem[k], k++) {
		host[k] = pool + at;
		ihost[k] = ipool + at;
	}
	case_data(c, host, ihost, nelem);
	memcpy(call.f, c->f, sizeof(call.f));
	memcpy(call.i, c->i, sizeof(call.i));

	st = make_operands(ref, c, host, ihost, nelem, &orf);
	if (st)
		goto out_free;
	call.dst = orf.v[0];
	for (int k = 1; k < nops; k++)
		call.src[k - 1] = orf.v[k];
	st = clg_run(ref, &call);
	if (st)
		goto out_ref;

	*on_dev = 1;
	st = make_operands(dev, c, host, ihost, nelem, &od);
	if (st)
		goto out_ref;
	call.dst = od.v[0];
	for (int k = 1; k < nops; k++)
		call.src[k - 1] = od.v[k];
	st = clg_run(dev, &call);
	for (int k = 0; !st && k < nops; k++) {
		if (k && !(c->check_src & (1 << (k - 1))))
			continue;
		st = read_operand(&od, k, nelem[k], got);
		if (!st) {
			*on_dev = 0;
			st = read_operand(&orf, k, nelem[k], want);
			*on_dev = 1;
		}
		if (!st)
			*err = fmax(*err, compare(got, want, nelem[k]));
	}
	free_operands(&od);
out_ref:
	free_operands(&orf);
out_free:
	free(pool);
	free(ipool);
	free(got);
	free(want);
	return st;
}

/* The cases: appended to a growing array by the builders below. */
struct clg_st_cases {
	st_case *c;
	int n, cap;
};
typedef struct clg_st_cases case_list;

static st_case *new_case(case_list *l, clg_op op, int nd)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 64;
		void *p = realloc(l->c, (size_t)cap * sizeof(*l->c));
		if (!p)
			return NULL;
		l->c = p;
		l->cap = cap;
	}
	st_case *c = &l->c[l->n++];
	memset(c, 0, sizeof(*c));
	c->op = op;
	c->nd = nd;
	c->lo = -2;
	c->hi = 2;
	c->tol = 1e-4;
	return c;
}

#define SET_SHAPE(c, k, ...) memcpy((c)->shape[k], (int64_t[4]){__VA_ARGS__}, sizeof((c)->shape[k]))

static void ew_params(st_case *c)
{
	c->tol = 3e-5; /* float32 elementwise: a few ulps; a wrong add of 1e-3 is ten times more */
	switch (c->op) {
	case CLG_OP_LOG: case CLG_OP_SQRT: case CLG_OP_RSQRT: case CLG_OP_POW:
		c->lo = 0.25f;
		break;
	case CLG_OP_SCALE:
		c->f[0] = 1.5, c->f[1] = 0.25;
		break;
	case CLG_OP_FILL:
		c->f[0] = 0.75;
		break;
	case CLG_OP_LEAKY_RELU: case CLG_OP_LEAKY_RELU_BACKWARD:
		c->f[0] = 0.1;
		break;
	case CLG_OP_CLAMP: case CLG_OP_CLAMP_BACKWARD:
		c->f[0] = -0.5, c->f[1] = 0.5;
		c->quantize = 1; /* values on the bounds */
		break;
	case CLG_OP_CMP_EQ: case CLG_OP_CMP_LT: case CLG_OP_CMP_LE: case CLG_OP_CMP_GT: case CLG_OP_CMP_GE:
	case CLG_OP_WHERE: case CLG_OP_RELU: case CLG_OP_RELU_BACKWARD: case CLG_OP_ABS_BACKWARD: case CLG_OP_CLAMP_TENSOR:
		c->quantize = 1; /* ties and zeros */
		break;
	default:
		break;
	}
}

static int build_cases(case_list *l)
{
	static const clg_op reduce_ops[] = {CLG_OP_SUM, CLG_OP_MAX, CLG_OP_MIN, CLG_OP_ARGMAX};
	static const clg_op row_ops[] = {CLG_OP_SOFTMAX, CLG_OP_LOG_SOFTMAX, CLG_OP_SOFTMAX_BACKWARD,
					 CLG_OP_LOG_SOFTMAX_BACKWARD, CLG_OP_LAYER_NORM, CLG_OP_LAYER_NORM_BACKWARD};
	st_case *c;

	/* elementwise: every EW op, contiguous (3, 41); binary ones again with src1 broadcast */
	for (int op = 0; op < CLG_OP_COUNT; op++) {
		int ns = clg_op_nsrc((clg_op)op);
		if (!clg_op_is_elementwise((clg_op)op))
			continue;
		for (int variant = 0; variant < (ns >= 2 ? 2 : 1); variant++) {
			if (!(c = new_case(l, (clg_op)op, 2)))
				return -1;
			for (int k = 0; k <= ns; k++)
				SET_SHAPE(c, k, 3, 41);
			c->bcast[2] = variant;
			ew_params(c);
		}
	}
	/* reductions over the last dim: (3, 700) -> (3) */
	for (size_t j = 0; j < sizeof(reduce_ops) / sizeof(reduce_ops[0]); j++) {
		if (!(c = new_case(l, reduce_ops[j], 2)))
			return -1;
		c->ndx[0] = 1;
		SET_SHAPE(c, 0, 3);
		SET_SHAPE(c, 1, 3, 700);
		c->dt[0] = reduce_ops[j] == CLG_OP_ARGMAX ? CLG_I32 : 0;
		c->quantize = reduce_ops[j] == CLG_OP_ARGMAX; /* ties: the first one wins */
	}
	/* rows longer than a work-group: (3, 300) */
	for (size_t j = 0; j < sizeof(row_ops) / sizeof(row_ops[0]); j++) {
		if (!(c = new_case(l, row_ops[j], 2)))
			return -1;
		for (int k = 0; k <= clg_op_nsrc(row_ops[j]); k++)
			SET_SHAPE(c, k, 3, 300);
		c->f[0] = 1e-5;
	}
	/* gemm: tiny, tile edges with a transposed A, batched with beta */
	if (!(c = new_case(l, CLG_OP_GEMM, 2)))
		return -1;
	SET_SHAPE(c, 0, 5, 9), SET_SHAPE(c, 1, 5, 7), SET_SHAPE(c, 2, 7, 9);
	c->f[0] = 1;
	if (!(c = new_case(l, CLG_OP_GEMM, 2)))
		return -1;
	SET_SHAPE(c, 0, 33, 37), SET_SHAPE(c, 1, 33, 70), SET_SHAPE(c, 2, 70, 37);
	c->trans[1] = 1;
	c->f[0] = 1;
	if (!(c = new_case(l, CLG_OP_GEMM, 3)))
		return -1;
	SET_SHAPE(c, 0, 2, 6, 4), SET_SHAPE(c, 1, 2, 6, 5), SET_SHAPE(c, 2, 2, 5, 4);
	c->f[0] = 0.5, c->f[1] = 0.5;
	/* im2col / col2im (3x3, pad 1) and pooling on (2, 3, 6, 6) */
	{
		const int64_t conv[8] = {3, 3, 1, 1, 1, 1, 1, 1}, maxp[8] = {2, 2, 2, 2, 0, 0, 1, 1},
			      avgp[8] = {3, 3, 2, 2, 1, 1, 1, 1};
		if (!(c = new_case(l, CLG_OP_IM2COL, 4)))
			return -1;
		SET_SHAPE(c, 0, 2, 27, 36), SET_SHAPE(c, 1, 2, 3, 6, 6);
		c->ndx[0] = 3;
		memcpy(c->i, conv, sizeof(conv));
		if (!(c = new_case(l, CLG_OP_COL2IM, 4)))
			return -1;
		SET_SHAPE(c, 0, 2, 3, 6, 6), SET_SHAPE(c, 1, 2, 27, 36);
		c->ndx[1] = 3;
		memcpy(c->i, conv, sizeof(conv));
		if (!(c = new_case(l, CLG_OP_MAXPOOL2D, 4)))
			return -1;
		SET_SHAPE(c, 0, 2, 3, 3, 3), SET_SHAPE(c, 1, 2, 3, 6, 6);
		memcpy(c->i, maxp, sizeof(maxp));
		c->quantize = 1;
		if (!(c = new_case(l, CLG_OP_MAXPOOL2D_BACKWARD, 4)))
			return -1;
		SET_SHAPE(c, 0, 2, 3, 6, 6), SET_SHAPE(c, 1, 2, 3, 3, 3), SET_SHAPE(c, 2, 2, 3, 6, 6);
		memcpy(c->i, maxp, sizeof(maxp));
		c->quantize = 1;
		if (!(c = new_case(l, CLG_OP_AVGPOOL2D, 4)))
			return -1;
		SET_SHAPE(c, 0, 2, 3, 3, 3), SET_SHAPE(c, 1, 2, 3, 6, 6);
		memcpy(c->i, avgp, sizeof(avgp));
		if (!(c = new_case(l, CLG_OP_AVGPOOL2D_BACKWARD, 4)))
			return -1;
		SET_SHAPE(c, 0, 2, 3, 6, 6), SET_SHAPE(c, 1, 2, 3, 3, 3);
		memcpy(c->i, avgp, sizeof(avgp));
	}
	/* random numbers (seed 42, stream offset 7) */
	if (!(c = new_case(l, CLG_OP_RAND_UNIFORM, 1)))
		return -1;
	SET_SHAPE(c, 0, 1000);
	c->f[0] = -1, c->f[1] = 1, c->i[0] = 42, c->i[1] = 7;
	if (!(c = new_case(l, CLG_OP_RAND_NORMAL, 1)))
		return -1;
	SET_SHAPE(c, 0, 1000);
	c->f[0] = 0, c->f[1] = 1, c->i[0] = 42, c->i[1] = 7;
	/* index: a table of 6 rows, 7 indices in -1 .. 6 (two out of range) */
	if (!(c = new_case(l, CLG_OP_INDEX_SELECT, 2)))
		return -1;
	SET_SHAPE(c, 0, 7, 5), SET_SHAPE(c, 1, 6, 5), SET_SHAPE(c, 2, 7);
	c->ndx[2] = 1;
	c->dt[2] = CLG_I32;
	if (!(c = new_case(l, CLG_OP_INDEX_ADD, 2)))
		return -1;
	SET_SHAPE(c, 0, 6, 5), SET_SHAPE(c, 1, 7, 5), SET_SHAPE(c, 2, 7);
	c->ndx[2] = 1;
	c->dt[2] = CLG_I32;
	/* fused linear epilogue (gelu, relu) and loss on (5, 37); the in-place outputs compared too */
	for (int act = 1; act <= 2; act++) {
		if (!(c = new_case(l, CLG_OP_BIAS_ACT, 2)))
			return -1;
		SET_SHAPE(c, 0, 5, 37), SET_SHAPE(c, 1, 5, 37), SET_SHAPE(c, 2, 37);
		c->ndx[2] = 1;
		c->i[0] = act;
		if (!(c = new_case(l, CLG_OP_BIAS_ACT_BACKWARD, 2)))
			return -1;
		SET_SHAPE(c, 0, 5, 37), SET_SHAPE(c, 1, 5, 37), SET_SHAPE(c, 2, 5, 37), SET_SHAPE(c, 3, 37);
		c->ndx[3] = 1;
		c->i[0] = act;
		c->f[0] = 0.5;
		c->check_src = 4;
	}
	if (!(c = new_case(l, CLG_OP_SOFTMAX_XENT, 2)))
		return -1;
	SET_SHAPE(c, 0, 1), SET_SHAPE(c, 1, 5, 37), SET_SHAPE(c, 2, 5, 37), SET_SHAPE(c, 3, 5, 2);
	c->ndx[0] = 1; /* src2 (5, 2): each row's max and log-sum */
	c->lo = 0; /* targets are non-negative weights */
	c->f[0] = 0.2;
	c->check_src = 4;
	if (!(c = new_case(l, CLG_OP_SOFTMAX_XENT_BACKWARD, 2)))
		return -1;
	SET_SHAPE(c, 0, 5, 37), SET_SHAPE(c, 1, 5, 37), SET_SHAPE(c, 2, 5, 37), SET_SHAPE(c, 3, 5, 2), SET_SHAPE(c, 4, 1);
	c->ndx[4] = 1;
	c->lo = 0;
	c->f[0] = 0.2;
	/* fused attention, causal, (1, 2, 7, 8): the forward's log-sum-exp and the backward's dk and
	 * dv (written in place) compared too */
	for (int bwd = 0; bwd < 2; bwd++) {
		int nops = bwd ? 9 : 5, stats = bwd ? 6 : 4;
		if (!(c = new_case(l, bwd ? CLG_OP_ATTENTION_BWD : CLG_OP_ATTENTION_FWD, 4)))
			return -1;
		for (int k = 0; k < nops; k++)
			SET_SHAPE(c, k, 1, 2, 7, 8);
		c->ndx[stats] = 3;
		c->lo = -1, c->hi = 1;
		c->f[0] = 0.35355339059327376; /* 1 / sqrt(8) */
		c->i[0] = 1;
		c->check_src = bwd ? (1 << 6) | (1 << 7) : 1 << 3;
	}
	/* optimizers, in place: the parameter and the state are compared */
	if (!(c = new_case(l, CLG_OP_SGD_STEP, 1)))
		return -1;
	SET_SHAPE(c, 0, 100), SET_SHAPE(c, 1, 100), SET_SHAPE(c, 2, 100);
	c->f[0] = 0.1, c->f[1] = 0.9, c->f[2] = 0.01, c->i[0] = 1;
	c->check_src = 2;
	if (!(c = new_case(l, CLG_OP_ADAM_STEP, 1)))
		return -1;
	SET_SHAPE(c, 0, 100), SET_SHAPE(c, 1, 100), SET_SHAPE(c, 2, 100), SET_SHAPE(c, 3, 100), SET_SHAPE(c, 4, 100);
	c->lo = 0; /* the second moment is never negative */
	c->f[0] = 1e-2, c->f[1] = 0.9, c->f[2] = 0.999, c->f[3] = 1e-8, c->f[4] = 0.01, c->f[5] = 0.1, c->f[6] = 0.001;
	c->i[0] = 1, c->i[1] = 1; /* AdamW with amsgrad: every state slot in play */
	c->check_src = 14;
	return 0;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Progress of a self-test run on stderr, the same lines on a terminal and in a log:
 * CLGRAD_PROGRESS=auto (the default) once the run has lasted 2 s, then every 2 s; =1 from its
 * start; =0 never. */
static int progress_mode(void)
{
	return clg_cfg_is(CLG_CFG_PROGRESS, "0") ? 0 : clg_cfg_is(CLG_CFG_PROGRESS, "1") ? 2 : 1;
}

void clg_st_cases_run(const clg_st_cases *l, clg_backend *dev, clg_backend *ref, const unsigned char *want,
		      clg_st_result *res, clg_selftest_info *info)
{
	int mode = progress_mode(), told_any = 0, nth = 0, total = 0, done = 0;
	double t0 = now_s(), told = t0;

	for (int j = 0; j < l->n; j++)
		total += (!want || want[l->c[j].op]) && dev->ops[l->c[j].op];
	for (int j = 0; j < l->n; j++) {
		const st_case *c = &l->c[j];
		clg_st_result *r = &res[c->op];
		char nb[24];
		double err;
		int on_dev;
		clg_status st;

		if (want && !want[c->op])
			continue;
		if (!dev->ops[c->op]) /* unsupported already (a route, or the device lacks it) */
			continue;
		/* the case's number among its op's cases, for the breadcrumb */
		nth = j > 0 && l->c[j - 1].op == c->op ? nth + 1 : 1;
		snprintf(nb, sizeof(nb), " case %d on '", nth);
		clg_crumb("self-test ", clg_op_name(c->op), nb, dev->info.name, "'");
		if (mode && (mode == 2 ? !told_any : now_s() - t0 >= 2.0) && (!told_any || now_s() - told >= 2.0)) {
			if (!told_any)
				fprintf(stderr, "clgrad: first-use self-test of device '%s' (%d cases; its result is cached)\n",
					dev->info.name, total);
			told_any = 1;
			told = now_s();
			fprintf(stderr, "clgrad: self-test of '%s': case %d of %d (%s), %.0f s\n", dev->info.name, done + 1,
				total, clg_op_name(c->op), told - t0);
		}
		{
			double tc = now_s();
			st = run_case(dev, ref, c, &err, &on_dev);
			clg_debug("self-test on '%s': case %d (%s) %.3f s", dev->info.name, j, clg_op_name(c->op), now_s() - tc);
		}
		done++;
		info->cases_run++;
		if (st) {
			if (!on_dev) { /* a broken case, not a device problem: say so, route nothing */
				clg_debug("self-test: case %d (op '%s') does not run on the reference backend: %s", j,
					  clg_op_name(c->op), clg_last_error());
				continue;
			}
			info->cases_error++;
			if (!r->errored) {
				r->status = st;
				snprintf(r->msg, sizeof(r->msg), "%s", clg_last_error());
			}
			r->errored = 1;
			continue;
		}
		if (!(err <= c->tol)) {
			info->cases_failed++;
			r->failed = 1;
		}
		if (!(err <= r->worst))
			r->worst = err;
		r->tol = c->tol;
	}
	if (told_any)
		fprintf(stderr, "clgrad: self-test of '%s' done in %.1f s\n", dev->info.name, now_s() - t0);
}

int clg_st_cases_has(const clg_st_cases *l, clg_op op)
{
	for (int j = 0; l && j < l->n; j++)
		if (l->c[j].op == op)
			return 1;
	return 0;
}

/* Float16 cases for devices that compute in half (clg_half_native): an elementwise op of each
 * kind (arithmetic with a broadcast source, a transcendental), a reduction, a row op and GEMM, every
 * operand float16; half-precision tolerances (a few half ulps of the inputs' range, 2^-10 relative),
 * far below what a broken half path gives. */
static int build_half_cases(case_list *l)
{
	static const clg_op ops[] = {CLG_OP_ADD, CLG_OP_MUL, CLG_OP_GELU, CLG_OP_EXP, CLG_OP_SUM, CLG_OP_SOFTMAX,
				     CLG_OP_GEMM};
	st_case *c;

	for (size_t j = 0; j < sizeof(ops) / sizeof(ops[0]); j++) {
		if (!(c = new_case(l, ops[j], 2)))
			return -1;
		if (ops[j] == CLG_OP_SUM) { /* (3, 700) -> (3) */
			c->ndx[0] = 1;
			SET_SHAPE(c, 0, 3);
			SET_SHAPE(c, 1, 3, 700);
		} else if (ops[j] == CLG_OP_GEMM) { /* (17, 33) @ (33, 19) */
			SET_SHAPE(c, 0, 17, 19);
			SET_SHAPE(c, 1, 17, 33);
			SET_SHAPE(c, 2, 33, 19);
			c->f[0] = 1;
		} else {
			for (int k = 0; k <= clg_op_nsrc(ops[j]); k++)
				SET_SHAPE(c, k, 3, ops[j] == CLG_OP_SOFTMAX ? 300 : 41);
			c->bcast[2] = ops[j] == CLG_OP_MUL;
		}
		for (int k = 0; k <= clg_op_nsrc(ops[j]); k++)
			c->dt[k] = CLG_F16;
		c->tol = 8e-3;
	}
	return 0;
}

clg_st_cases *clg_st_half_cases_new(void)
{
	clg_st_cases *l = calloc(1, sizeof(*l));
	if (l && build_half_cases(l)) {
		clg_st_cases_free(l);
		l = NULL;
	}
	return l;
}

clg_st_cases *clg_st_cases_new(void)
{
	clg_st_cases *l = calloc(1, sizeof(*l));
	if (l && build_cases(l)) {
		clg_st_cases_free(l);
		l = NULL;
	}
	return l;
}

void clg_st_cases_free(clg_st_cases *l)
{
	if (l)
		free(l->c);
	free(l);
}
