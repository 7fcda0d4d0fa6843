/* Status messages, dtypes, views, and the checked entry point clg_run(). */
#include "clg_internal.h"
#include "clg_config.h"
#include "clg_op_timer.h"
#include "clg_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <time.h>

double clg_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static _Thread_local char errmsg[8192];
/* The status of the last failure, kept beside its message so that the two always agree: every
 * clg_fail sets both (a function returning NULL after clg_fail alone once left an older status). */
static _Thread_local clg_status fail_status;

const char *clg_status_name(clg_status s)
{
	static const char *names[] = {"ok", "invalid argument", "shape mismatch", "dtype error",
		"device error", "unsupported", "out of memory", "kernel build failed", "OpenCL error",
		"I/O error", "malformed file", "invalid state"};
	if ((unsigned)s < sizeof(names) / sizeof(names[0]))
		return names[s];
	return "unknown status";
}

const char *clg_last_error(void) { return errmsg; }
clg_status clg_last_status(void) { return fail_status; }
void clg_note_status(clg_status s)
{
	if (s != CLG_OK)
		fail_status = s;
}
void clg_clear_error(void) { errmsg[0] = 0; }

clg_status clg_fail(clg_status s, const char *fmt, ...)
{
	static _Thread_local char next[sizeof(errmsg)];
	va_list ap;
	/* formatted aside first: an argument may be clg_last_error() itself ("...: %s", the cause) */
	va_start(ap, fmt);
	vsnprintf(next, sizeof(next), fmt, ap);
	va_end(ap);
	memcpy(errmsg, next, sizeof(errmsg));
	clg_note_status(s);
	clg_debug("error: %s", errmsg);
	return s;
}

clg_status clg_fail_prefix(clg_status s, const char *fmt, ...)
{
	char prefix[1024], old[sizeof(errmsg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	size_t n = strlen(prefix);
	memcpy(old, errmsg, sizeof(old));
	if (n >= sizeof(errmsg))
		n = sizeof(errmsg) - 1;
	memcpy(errmsg, prefix, n);
	memcpy(errmsg + n, old, sizeof(errmsg) - n - 1);
	errmsg[sizeof(errmsg) - 1] = 0;
	clg_note_status(s);
	return s;
}

int clg_debug_enabled(void)
{
	return clg_cfg_bool(CLG_CFG_DEBUG);
}

void clg_debug(const char *fmt, ...)
{
	va_list ap;
	if (!clg_debug_enabled())
		return;
	va_start(ap, fmt);
	fputs("clgrad: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int clg_contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	if (n == 0)
		return 1;
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

size_t clg_dtype_size(clg_dtype t)
{
	static const size_t sizes[] = {4, 2, 8, 4, 2};
	return (unsigned)t < CLG_DTYPE_COUNT ? sizes[t] : 0;
}

const char *clg_dtype_name(clg_dtype t)
{
	static const char *names[] = {"float32", "float16", "float64", "int32", "bfloat16"};
	return (unsigned)t < CLG_DTYPE_COUNT ? names[t] : "?";
}

enum op_kind { EW, REDUCE, ROW, GEMM, OTHER, OPTIM };

static const struct {
	const char *name;
	int nsrc;
	enum op_kind kind;
} op_table[] = {
#define CLG_OP(id, name, nsrc, kind) {name, nsrc, kind},
#include "clg_ops.def"
#undef CLG_OP
};

int clg_op_is_elementwise(clg_op op) { return (unsigned)op < CLG_OP_COUNT && op_table[op].kind == EW; }

/* float16 is storage read and written as float32 by the kernels (vload_half / vstore_half_rte), so
 * the kinds whose kernels go through LOAD / STORE take it: EW, REDUCE, ROW and GEMM (its 16-bit
 * operands go to a kernel of its own, kernels_cl/gemm_half.cl, accumulating in float32), and the
 * conv family (im2col, col2im, pooling) and the fused ops, whose kernels read through XLOAD / XSTORE (conv.cl, fused.cl: native half
 * loads where the device has cl_khr_fp16, float32 arithmetic either way). */
int clg_op_accepts_f16(clg_op op)
{
	if ((unsigned)op >= CLG_OP_COUNT)
		return 0;
	switch (op) {
	case CLG_OP_IM2COL:
	case CLG_OP_COL2IM:
	case CLG_OP_MAXPOOL2D:
	case CLG_OP_MAXPOOL2D_BACKWARD:
	case CLG_OP_AVGPOOL2D:
	case CLG_OP_AVGPOOL2D_BACKWARD:
	case CLG_OP_BIAS_ACT:
	case CLG_OP_BIAS_ACT_BACKWARD:
	case CLG_OP_SOFTMAX_XENT:
	case CLG_OP_SOFTMAX_XENT_BACKWARD:
		return 1;
	default:
		return op_table[op].kind == EW || op_table[op].kind == REDUCE || op_table[op].kind == ROW ||
		       op_table[op].kind == GEMM;
	}
}

int clg_half_native(const clg_device_info *d)
{
	return d && d->has_fp16 && !d->half_off[0] && clg_cfg_bool(CLG_CFG_NATIVE_HALF);
}

const char *clg_op_name(clg_op op) { return (unsigned)op < CLG_OP_COUNT ? op_table[op].name : "?"; }
int clg_op_nsrc(clg_op op) { return (unsigned)op < CLG_OP_COUNT ? op_table[op].nsrc : 0; }

/* ---- views ---- */

void clg_view_contiguous(clg_view *v, clg_buffer *buf, clg_dtype dtype, int ndim, const int64_t *shape)
{
	int64_t s = 1;
	memset(v, 0, sizeof(*v));
	v->buf = buf;
	v->dtype = dtype;
	v->ndim = ndim;
	for (int d = ndim - 1; d >= 0; d--) {
		v->shape[d] = shape[d];
		v->stride[d] = s;
		s *= shape[d];
	}
}

int64_t clg_view_numel(const clg_view *v)
{
	int64_t n = 1;
	for (int d = 0; d < v->ndim; d++)
		n *= v->shape[d];
	return n;
}

int clg_view_is_contiguous(const clg_view *v)
{
	int64_t s = 1;
	for (int d = v->ndim - 1; d >= 0; d--) {
		if (v->shape[d] != 1 && v->stride[d] != s)
			return 0;
		s *= v->shape[d];
	}
	return 1;
}

const char *clg_shape_str(const clg_view *v, char *buf, size_t len)
{
	size_t p = 0;
	p += (size_t)snprintf(buf + p, len - p, "(");
	for (int d = 0; d < v->ndim && p < len; d++)
		p += (size_t)snprintf(buf + p, len - p, d ? ", %lld" : "%lld", (long long)v->shape[d]);
	if (p < len)
		snprintf(buf + p, len - p, v->ndim == 1 ? ",)" : ")");
	return buf;
}

/* ---- buffers ---- */

clg_status clg_buffer_alloc(clg_backend *be, size_t size, clg_buffer **out)
{
	*out = NULL;
	if (!be)
		return clg_fail(CLG_ERR_INVALID, "buffer alloc: no backend");
	return be->iface->alloc(be, size ? size : 1, out);
}

void clg_buffer_free(clg_buffer *buf)
{
	if (buf)
		buf->backend->iface->free(buf->backend, buf);
}

static clg_status check_range(const char *what, const clg_buffer *b, size_t offset, size_t n)
{
	if (!b)
		return clg_fail(CLG_ERR_INVALID, "%s: NULL buffer", what);
	if (offset > b->size || n > b->size - offset)
		return clg_fail(CLG_ERR_INVALID, "%s on device '%s': range [%zu, %zu) outside buffer of %zu bytes",
				what, b->backend->info.name, offset, offset + n, b->size);
	return CLG_OK;
}

clg_status clg_buffer_upload(clg_buffer *dst, size_t offset, const void *src, size_t n)
{
	clg_status st = check_range("upload", dst, offset, n);
	if (st || n == 0)
		return st;
	return dst->backend->iface->upload(dst->backend, dst, offset, src, n);
}

clg_status clg_buffer_download(clg_buffer *src, size_t offset, void *dst, size_t n)
{
	clg_status st = check_range("download", src, offset, n);
	if (st || n == 0)
		return st;
	return src->backend->iface->download(src->backend, src, offset, dst, n);
}

clg_status clg_buffer_download_start(clg_buffer *src, size_t offset, void *dst, size_t n, void **done)
{
	clg_status st = check_range("download", src, offset, n);
	*done = NULL;
	if (st || n == 0)
		return st;
	if (!src->backend->iface->download_start)
		return src->backend->iface->download(src->backend, src, offset, dst, n);
	return src->backend->iface->download_start(src->backend, src, offset, dst, n, done);
}

clg_status clg_buffer_wait(clg_backend *be, void *done)
{
	return done && be->iface->wait ? be->iface->wait(be, done) : CLG_OK;
}

clg_status clg_synchronize(clg_backend *be) { return be->iface->synchronize(be); }

void clg_backend_stats(clg_backend *be, clg_stats *out)
{
	memset(out, 0, sizeof(*out));
	be->iface->stats(be, out);
}

void clg_backend_reset_peak(clg_backend *be)
{
	if (be && be->iface->reset_peak) /* optional in the interface */
		be->iface->reset_peak(be);
}

const clg_device_info *clg_backend_info(const clg_backend *be) { return be ? &be->info : NULL; }

void clg_backend_close(clg_backend *be)
{
	if (be)
		be->iface->close(be);
}

clg_status clg_backend_open(int index, clg_backend **out)
{
	const clg_device_info *list;
	int count;
	clg_status st;

	*out = NULL;
	if ((st = clg_config_check()) || (st = clg_devices(&list, &count)))
		return st;
	if (index < 0 || index >= count)
		return clg_fail(CLG_ERR_DEVICE, "open device %d: no such device (%d present; see `clgrad devices`)",
				index, count);
	return index == 0 ? clg_ref_open(out) : clg_cl_open(index, out);
}

/* ---- the checked op entry point ---- */

static clg_status check_view(clg_backend *be, const clg_op_call *c, const clg_view *v, const char *role)
{
	char sh[128];
	int64_t lo = v->offset, hi = v->offset, nel;
	size_t es = clg_dtype_size(v->dtype);

	if (!v->buf)
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': %s has no buffer",
				clg_op_name(c->op), be->info.name, role);
	if (v->buf->backend != be)
		return clg_fail(CLG_ERR_DEVICE, "op '%s': %s lives on device '%s', not on '%s'; copy it first",
				clg_op_name(c->op), role, v->buf->backend->info.name, be->info.name);
	if (v->ndim < 0 || v->ndim > CLG_MAX_DIMS || es == 0)
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': %s has %d dims or bad dtype",
				clg_op_name(c->op), be->info.name, role, v->ndim);
	nel = (int64_t)(v->buf->size / es);
	for (int d = 0; d < v->ndim; d++) {
		if (v->shape[d] < 0)
			return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': %s has negative shape %s",
					clg_op_name(c->op), be->info.name, role, clg_shape_str(v, sh, sizeof(sh)));
		if (v->shape[d] == 0)
			return CLG_OK;
	}
	/* Every element of the (non-empty) view must lie in [0, nel). lo and hi stay inside that range
	 * at each step, so nothing below can overflow, whatever the strides and offset. */
	if (lo < 0 || lo >= nel)
		goto outside;
	for (int d = 0; d < v->ndim; d++) {
		uint64_t as = v->stride[d] < 0 ? 0 - (uint64_t)v->stride[d] : (uint64_t)v->stride[d];
		uint64_t steps = (uint64_t)(v->shape[d] - 1);
		if (as && steps > (uint64_t)nel / as)
			goto outside;
		if (v->stride[d] < 0)
			lo -= (int64_t)(as * steps);
		else
			hi += (int64_t)(as * steps);
		if (lo < 0 || hi >= nel)
			goto outside;
	}
	return CLG_OK;

outside:
	return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': %s view %s reaches outside its buffer of %zu bytes",
			clg_op_name(c->op), be->info.name, role, clg_shape_str(v, sh, sizeof(sh)), v->buf->size);
}

static int same_dims(const clg_view *a, const clg_view *b, int n)
{
	for (int d = 0; d < n; d++)
		if (a->shape[d] != b->shape[d])
			return 0;
	return 1;
}

/* The shape rules of each op kind (see clg_ops.def), checked once here for every backend. */
static clg_status check_shapes(clg_backend *be, const clg_op_call *c, int nsrc)
{
	const clg_view *d = &c->dst, *a = &c->src[0], *b = &c->src[1];
	char s0[128], s1[128], s2[128];
	int ok = 1, nd = d->ndim;

	switch (op_table[c->op].kind) {
	case EW:
	case ROW:
		for (int s = 0; s < nsrc; s++)
			ok &= c->src[s].ndim == nd && same_dims(&c->src[s], d, nd);
		break;
	case REDUCE:
		ok = a->ndim >= nd && same_dims(a, d, nd);
		break;
	case OTHER:
		break;
	case OPTIM: /* parameter and state: one shape, contiguous (they are updated in place) */
		ok = clg_view_is_contiguous(d);
		for (int s = 0; s < nsrc; s++)
			ok &= c->src[s].ndim == nd && same_dims(&c->src[s], d, nd) && clg_view_is_contiguous(&c->src[s]);
		break;
	case GEMM:
		ok = (nd == 2 || nd == 3) && a->ndim == nd && b->ndim == nd &&
		     a->shape[nd - 2] == d->shape[nd - 2] && b->shape[nd - 1] == d->shape[nd - 1] &&
		     a->shape[nd - 1] == b->shape[nd - 2] &&
		     (nd == 2 || (a->shape[0] == d->shape[0] && b->shape[0] == d->shape[0]));
		break;
	}
	if (ok)
		return CLG_OK;
	return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': shapes do not fit: src0 %s, src1 %s, dst %s",
			clg_op_name(c->op), be->info.name, nsrc > 0 ? clg_shape_str(a, s0, sizeof(s0)) : "-",
			nsrc > 1 ? clg_shape_str(b, s1, sizeof(s1)) : "-", clg_shape_str(d, s2, sizeof(s2)));
}

int clg_backend_has_op(clg_backend *be, clg_op op)
{
	if (!be || (unsigned)op >= CLG_OP_COUNT)
		return 0;
	if (be->first_use)
		be->first_use(be, op, 0);
	return be->ops[op] != NULL;
}

/* CLGRAD_SYNC=1: every op waits for the device before it returns. */
static int sync_each_op(void)
{
	return clg_cfg_bool(CLG_CFG_SYNC);
}

clg_status clg_run(clg_backend *be, const clg_op_call *c)
{
	static const char *roles[] = {"src0", "src1", "src2", "src3", "src4", "src5", "src6", "src7"};
	clg_status st;
	int nsrc;

	if (!be || !c || (unsigned)c->op >= CLG_OP_COUNT)
		return clg_fail(CLG_ERR_INVALID, "clg_run: bad backend, call or op id");
	nsrc = clg_op_nsrc(c->op);
	st = check_view(be, c, &c->dst, "dst");
	for (int s = 0; !st && s < nsrc; s++) {
		st = check_view(be, c, &c->src[s], roles[s]);
		/* indices are int32 whatever the data's dtype; the int8 ops mix float32 and packed int32
		 * (their own check, clg_int8_check) */
		if (!st && c->src[s].dtype != c->dst.dtype && c->op != CLG_OP_ARGMAX && c->op != CLG_OP_INT8_QUANT &&
		    c->op != CLG_OP_INT8_DEQUANT && !(c->op == CLG_OP_CAST && c->src[s].dtype != CLG_I32 && c->dst.dtype != CLG_I32) &&
		    !(c->src[s].dtype == CLG_I32 && (c->op == CLG_OP_INDEX_SELECT || c->op == CLG_OP_INDEX_ADD || c->op == CLG_OP_ONE_HOT)))
			st = clg_fail(CLG_ERR_DTYPE, "op '%s' on device '%s': %s is %s but dst is %s",
				      clg_op_name(c->op), be->info.name, roles[s],
				      clg_dtype_name(c->src[s].dtype), clg_dtype_name(c->dst.dtype));
	}
	/* one check for every backend: float16 where the op's kind has the float16 path */
	for (int s = -1; !st && s < nsrc; s++) {
		const clg_view *v = s < 0 ? &c->dst : &c->src[s];
		if (clg_dtype_is_half_storage(v->dtype) && !clg_op_accepts_f16(c->op))
			st = clg_fail(CLG_ERR_DTYPE, "op '%s' on device '%s': %s is %s, which this op does not support "
				      "(16-bit storage works with the elementwise, reduction, softmax, layer norm, GEMM, im2col, col2im, pooling and fused ops)",
				      clg_op_name(c->op), be->info.name, s < 0 ? "dst" : roles[s], clg_dtype_name(v->dtype));
	}
	if (!st)
		st = check_shapes(be, c, nsrc);
	if (st)
		return st;
	if (be->first_use) { /* the op's first use: its self-test may route it before it runs */
		int half = c->dst.dtype == CLG_F16;
		for (int s = 0; s < nsrc; s++)
			half |= c->src[s].dtype == CLG_F16;
		be->first_use(be, c->op, half);
	}
	if (!be->ops[c->op])
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' is not supported on device '%s'",
				clg_op_name(c->op), be->info.name);
	clg_crumb("enqueue ", clg_op_name(c->op), " on '", be->info.name, "'");
	if (be->recorder) { /* bench step: the op's launches get its bytes and FLOPs (clg_record.h) */
		const clg_op_call *outer = be->recorder->op;
		int first = be->recorder->n;
		be->recorder->op = c;
		st = be->ops[c->op](be, c);
		clg_record_op_done(be->recorder, c, first);
		be->recorder->op = outer;
	} else if (be->op_timer) { /* waits before and after: the op's own time (clg_op_timer.h) */
		double t0;
		st = clg_synchronize(be);
		t0 = clg_op_timer_now();
		if (!st)
			st = be->ops[c->op](be, c);
		if (!st)
			st = clg_synchronize(be);
		if (!st)
			clg_op_timer_add(be->op_timer, c, clg_op_timer_now() - t0);
	} else {
		st = be->ops[c->op](be, c);
	}
	if (!st && sync_each_op()) { /* a fault is blamed on the op that caused it, not the next read */
		clg_crumb("finishing the queue after ", clg_op_name(c->op), " (CLGRAD_SYNC=1) on '", be->info.name, "'");
		st = be->iface->synchronize(be);
		if (st)
			clg_fail_prefix(st, "op '%s' (CLGRAD_SYNC=1 finished the queue after it): ", clg_op_name(c->op));
	}
	if (st) { /* a device failure (an enqueue, an allocation): say on which shapes */
		char shapes[512];
		size_t at = 0;
		for (int s = -1; s < nsrc && at < sizeof(shapes); s++) {
			const clg_view *v = s < 0 ? &c->dst : &c->src[s];
			at += (size_t)snprintf(shapes + at, sizeof(shapes) - at, "%s%s (", s < 0 ? "" : ", ", s < 0 ? "dst" : roles[s]);
			for (int d = 0; d < v->ndim && at < sizeof(shapes); d++)
				at += (size_t)snprintf(shapes + at, sizeof(shapes) - at, "%s%lld", d ? ", " : "", (long long)v->shape[d]);
			if (at < sizeof(shapes))
				at += (size_t)snprintf(shapes + at, sizeof(shapes) - at, ") %s", clg_dtype_name(v->dtype));
		}
		clg_fail_prefix(st, "%s: ", shapes);
	}
	return st;
}
