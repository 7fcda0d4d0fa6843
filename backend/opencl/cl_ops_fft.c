/* OpenCL FFT ops (clg_ops.def, FFT_* and COMPLEX_MUL).
 *
 * Transforms go through clFFT where it can do the length, else through Bluestein's chirp-z or our
 * direct-sum kernels (kernels_cl/fft.cl):
 *   - clFFT implements lengths whose prime factors are 2, 3, 5, 7, 11 and 13; any other length
 *     (17, 1009, ...) runs Bluestein's chirp-z (bluestein(): a convolution through clFFT transforms
 *     of a power of two >= 2n - 1, O(n log n)), or the O(n^2) direct sum where its work n^2 batch
 *     is small (CLGRAD_FFT_DIRECT_MAX, measured);
 *   - $CLGRAD_FFT=clfft|planar|own|bluestein|auto (default auto) forces a path: clfft fails with
 *     CLG_ERR_UNSUPPORTED on a length it cannot do, planar is clfft with complex-to-complex
 *     transforms on clFFT's planar layout (the fallback below, for tests), own runs the kernels
 *     at every length, bluestein runs the chirp-z at every length (its inner transforms on clFFT);
 *   - where clfftSetup fails (the library cannot start on this machine), auto uses the kernels;
 *   - where clFFT's generated kernels do not build on a device, auto tries clFFT's planar layout
 *     (complex-to-complex: re and im copied into separate planes and back), then the own kernels,
 *     for that plan from then on. Intel's OpenCL CPU compiler rejects clFFT's interleaved
 *     complex-to-complex kernels of many lengths (8, 12, 1000, 1024: an implicit float2 * to
 *     float4 * conversion), while its planar ones build; clFFT still bakes the failing plan
 *     (printing the build log) and the enqueue fails with CL_INVALID_PROGRAM.
 * clg_cl_fft_path_of() says which path a device takes for a length, and why; clg_cl_fft_plans()
 * lists the plans made, each with the path it ended on.
 *
 * Both paths work on packed operands: rows of the transform one after another from offset 0.
 * A source view that is not packed (strided, offset) is first copied into a temporary buffer with
 * the COPY op; a dst that is not packed receives the result through one. The C2R source is always
 * copied, as clFFT may overwrite the input of an out-of-place complex-to-real transform, and the
 * imaginary parts of its DC and Nyquist bins are zeroed in the copy: batched real transforms pack
 * two rows into one complex transform, which mixes the rows unless the spectrum is Hermitian.
 * Temporaries, clFFT's scratch buffer included, come from the backend's caching allocator; the
 * in-order queue makes their reuse safe as soon as the transform is enqueued.
 *
 * clfftSetup runs on first use, once while any backend uses clFFT; plans are cached per backend
 * (so per context and device) by (transform, precision, length, batch, direction, scale, layout
 * and distances), baked once on the backend's queue, and destroyed with the backend
 * (clg_cl_fft_free). When the last backend that made plans closes, clfftTeardown runs before its
 * context goes (clFFT's repository holds programs of the contexts it served: released after their
 * context, Oclgrind corrupts its heap); a later use sets clFFT up again. At exit, a setup still
 * alive (backends never closed, contexts alive) is torn down too, or clFFT complains. One lock
 * guards the setup state, the user count and the plan caches. clFFT status codes become clgrad
 * errors naming the op, the device and the shapes. */
#include "cl_internal.h"

#include "../clg_fft.h"
#include "../clg_fft_internal.h"

#include <clFFT.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- clFFT: setup, status codes, plans ----------------------------------------------------- */

static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
/* guarded by plan_lock */
static int setup_done;                      /* clfftSetup was called and not torn down since */
static clfftStatus setup_status = CLFFT_SUCCESS;
static int fft_users;                       /* open backends holding plans */
static int exit_hook;                       /* teardown_at_exit is registered */

static void teardown_at_exit(void)
{
	pthread_mutex_lock(&plan_lock);
	if (setup_done && setup_status == CLFFT_SUCCESS)
		clfftTeardown();
	setup_done = 0;
	pthread_mutex_unlock(&plan_lock);
}

/* Sets clFFT up unless it is (called with plan_lock held); returns the setup's status. */
static clfftStatus setup_locked(void)
{
	if (!setup_done) {
		/* filled here rather than by the header's clfftInitSetupData: a C99 inline definition
		 * without an external one, which fails to link where the compiler does not inline it */
		clfftSetupData data = {.major = clfftVersionMajor, .minor = clfftVersionMinor, .patch = clfftVersionPatch,
				       .debugFlags = 0};
		setup_status = clfftSetup(&data);
		setup_done = 1;
		if (setup_status == CLFFT_SUCCESS && !exit_hook)
			exit_hook = atexit(teardown_at_exit) == 0;
	}
	return setup_status;
}

static const char *fft_status_name(clfftStatus s)
{
	switch (s) {
	case CLFFT_BUGCHECK: return "CLFFT_BUGCHECK";
	case CLFFT_NOTIMPLEMENTED: return "CLFFT_NOTIMPLEMENTED";
	case CLFFT_TRANSPOSED_NOTIMPLEMENTED: return "CLFFT_TRANSPOSED_NOTIMPLEMENTED";
	case CLFFT_FILE_NOT_FOUND: return "CLFFT_FILE_NOT_FOUND";
	case CLFFT_FILE_CREATE_FAILURE: return "CLFFT_FILE_CREATE_FAILURE";
	case CLFFT_VERSION_MISMATCH: return "CLFFT_VERSION_MISMATCH";
	case CLFFT_INVALID_PLAN: return "CLFFT_INVALID_PLAN";
	case CLFFT_DEVICE_NO_DOUBLE: return "CLFFT_DEVICE_NO_DOUBLE";
	case CLFFT_DEVICE_MISMATCH: return "CLFFT_DEVICE_MISMATCH";
	default: return clg_cl_error_name((cl_int)s);
	}
}

static clg_status fft_status_class(clfftStatus s)
{
	switch ((int)s) {
	case CLFFT_NOTIMPLEMENTED: case CLFFT_TRANSPOSED_NOTIMPLEMENTED: return CLG_ERR_UNSUPPORTED;
	case CLFFT_DEVICE_NO_DOUBLE: return CLG_ERR_DTYPE;
	case CL_OUT_OF_HOST_MEMORY: case CL_OUT_OF_RESOURCES: case CL_MEM_OBJECT_ALLOCATION_FAILURE:
	case CL_INVALID_BUFFER_SIZE: return CLG_ERR_OOM;
	case CL_BUILD_PROGRAM_FAILURE: case CL_COMPILER_NOT_AVAILABLE: return CLG_ERR_BUILD;
	default: return CLG_ERR_OPENCL;
	}
}

typedef struct {
	clg_op op;
	clg_dtype dtype;
	int64_t n, batch;
	int inverse;
	double scale;
	size_t in_dist, out_dist; /* strides are 1: operands are packed */
	int planar;               /* C2C on separate re and im planes (the fallback, see fft_run) */
} plan_key;

typedef struct {
	plan_key key;
	clfftPlanHandle plan;
	size_t tmp_bytes;
	clfftStatus broken;  /* != CLFFT_SUCCESS: clFFT failed to run it, the own kernels do */
} fft_plan;

struct clg_cl_fft {
	fft_plan *plans;
	int n, cap;
};

void clg_cl_fft_free(clg_backend *be)
{
	struct clg_cl_fft *f = clg_cl_of(be)->fft;
	if (!f)
		return;
	pthread_mutex_lock(&plan_lock);
	for (int i = 0; i < f->n; i++)
		clfftDestroyPlan(&f->plans[i].plan);
	free(f->plans);
	free(f);
	clg_cl_of(be)->fft = NULL;
	if (--fft_users == 0 && setup_done && setup_status == CLFFT_SUCCESS) {
		clfftTeardown(); /* before this backend's context is released */
		setup_done = 0;
	}
	pthread_mutex_unlock(&plan_lock);
}

/* "op 'fft_c2c' on device 'x': clFFT <what> (length n, batch b, single) for src0 .. dst ..: NAME (code)" */
static clg_status fft_fail(clg_backend *be, const clg_op_call *c, const plan_key *k, clfftStatus s, const char *what)
{
	char s0[128], s1[128];
	return clg_fail(fft_status_class(s), "op '%s' on device '%s': clFFT %s (length %lld, batch %lld, %s, %s) for src0 "
			"%s, dst %s: %s (%d)", clg_op_name(c->op), be->info.name, what, (long long)k->n,
			(long long)k->batch, k->dtype == CLG_F64 ? "double" : "single", k->inverse ? "inverse" : "forward",
			clg_shape_str(&c->src[0], s0, sizeof(s0)), clg_shape_str(&c->dst, s1, sizeof(s1)),
			fft_status_name(s), (int)s);
}

/* Creates and bakes the plan of key k (called with plan_lock held). */
static clg_status make_plan(clg_backend *be, const clg_op_call *c, const plan_key *k, fft_plan *out)
{
	clg_cl *cl = clg_cl_of(be);
	size_t len = (size_t)k->n, one = 1;
	clfftLayout lin = CLFFT_COMPLEX_INTERLEAVED, lout = CLFFT_COMPLEX_INTERLEAVED;
	clfftStatus s;
	const char *what = "clfftCreateDefaultPlan";

	memset(out, 0, sizeof(*out));
	out->key = *k;
	if (k->planar)
		lin = lout = CLFFT_COMPLEX_PLANAR;
	else if (k->op == CLG_OP_FFT_R2C)
		lin = CLFFT_REAL, lout = CLFFT_HERMITIAN_INTERLEAVED;
	else if (k->op == CLG_OP_FFT_C2R)
		lin = CLFFT_HERMITIAN_INTERLEAVED, lout = CLFFT_REAL;
	s = clfftCreateDefaultPlan(&out->plan, cl->context, CLFFT_1D, &len);
#define STEP(call)                              \
	do {                                    \
		if (s == CLFFT_SUCCESS) {       \
			what = #call;           \
			s = call;               \
		}                               \
	} while (0)
	STEP(clfftSetPlanPrecision(out->plan, k->dtype == CLG_F64 ? CLFFT_DOUBLE : CLFFT_SINGLE));
	STEP(clfftSetLayout(out->plan, lin, lout));
	STEP(clfftSetResultLocation(out->plan, CLFFT_OUTOFPLACE));
	STEP(clfftSetPlanBatchSize(out->plan, (size_t)k->batch));
	STEP(clfftSetPlanInStride(out->plan, CLFFT_1D, &one));
	STEP(clfftSetPlanOutStride(out->plan, CLFFT_1D, &one));
	STEP(clfftSetPlanDistance(out->plan, k->in_dist, k->out_dist));
	STEP(clfftSetPlanScale(out->plan, CLFFT_FORWARD, (cl_float)k->scale));
	STEP(clfftSetPlanScale(out->plan, CLFFT_BACKWARD, (cl_float)k->scale));
	STEP(clfftBakePlan(out->plan, 1, &cl->queue, NULL, NULL));
	STEP(clfftGetTmpBufSize(out->plan, &out->tmp_bytes));
#undef STEP
	if (s != CLFFT_SUCCESS) {
		if (out->plan)
			clfftDestroyPlan(&out->plan);
		return fft_fail(be, c, k, s, what);
	}
	return CLG_OK;
}

/* The cached plan of key k, made on first use; unless strict, a plan of the same transform and
 * length (other batch or scale) that clFFT failed to run stands for it (broken, not made). */
static clg_status get_plan(clg_backend *be, const clg_op_call *c, const plan_key *k, int strict, fft_plan *out)
{
	clg_cl *cl = clg_cl_of(be);
	struct clg_cl_fft *f;
	clg_status st = CLG_OK;

	pthread_mutex_lock(&plan_lock);
	if (!cl->fft) {
		clfftStatus s = setup_locked(); /* (torn down since the path was chosen, by another close) */
		if (s != CLFFT_SUCCESS) {
			st = fft_fail(be, c, k, s, "clfftSetup");
			goto unlock;
		}
		if (!(cl->fft = calloc(1, sizeof(*cl->fft)))) {
			st = clg_fail(CLG_ERR_OOM, "op '%s' on device '%s': out of host memory", clg_op_name(c->op),
				      be->info.name);
			goto unlock;
		}
		fft_users++;
	}
	f = cl->fft;
	for (int i = 0; i < f->n; i++) {
		if (!memcmp(&f->plans[i].key, k, sizeof(*k))) {
			*out = f->plans[i];
			goto unlock;
		}
	}
	for (int i = 0; !strict && i < f->n; i++) {
		const plan_key *o = &f->plans[i].key;
		if (f->plans[i].broken && o->op == k->op && o->dtype == k->dtype && o->n == k->n && o->inverse == k->inverse &&
		    o->planar == k->planar) {
			*out = f->plans[i];
			goto unlock;
		}
	}
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 16;
		void *p = realloc(f->plans, sizeof(*f->plans) * (size_t)cap);
		if (!p) {
			st = clg_fail(CLG_ERR_OOM, "op '%s' on device '%s': out of host memory", clg_op_name(c->op),
				      be->info.name);
			goto unlock;
		}
		f->plans = p;
		f->cap = cap;
	}
	st = make_plan(be, c, k, &f->plans[f->n]);
	if (!st)
		*out = f->plans[f->n++];
unlock:
	pthread_mutex_unlock(&plan_lock);
	return st;
}

/* Records that clFFT could not run plan k (status s): later calls take the own kernels. */
static void mark_broken(clg_backend *be, const plan_key *k, clfftStatus s)
{
	struct clg_cl_fft *f = clg_cl_of(be)->fft;
	pthread_mutex_lock(&plan_lock);
	for (int i = 0; f && i < f->n; i++)
		if (!memcmp(&f->plans[i].key, k, sizeof(*k)))
			f->plans[i].broken = s;
	pthread_mutex_unlock(&plan_lock);
}

/* Whether a clFFT failure says its kernels do not build or run on this device. */
static int kernel_failure(clfftStatus s)
{
	return s == CLFFT_INVALID_PROGRAM || s == CLFFT_INVALID_PROGRAM_EXECUTABLE || s == CLFFT_BUILD_PROGRAM_FAILURE ||
	       s == CLFFT_INVALID_KERNEL || s == CLFFT_INVALID_KERNEL_NAME || s == CLFFT_INVALID_KERNEL_DEFINITION;
}

int clg_cl_fft_plans(clg_backend *be, char *buf, size_t len)
{
	struct clg_cl_fft *f = clg_cl_of(be)->fft;
	size_t p = 0;
	int n = 0;

	if (len)
		buf[0] = 0;
	pthread_mutex_lock(&plan_lock);
	for (int i = 0; f && i < f->n; i++, n++) {
		const plan_key *k = &f->plans[i].key;
		int w = snprintf(p < len ? buf + p : NULL, p < len ? len - p : 0, "%s%s n=%lld batch=%lld scale %g %s: %s%s%s\n",
				 clg_op_name(k->op), k->inverse && k->op == CLG_OP_FFT_C2C ? " inverse" : "",
				 (long long)k->n, (long long)k->batch, k->scale, k->dtype == CLG_F64 ? "double" : "single",
				 f->plans[i].broken ? "failed on this device, not used (" : k->planar ? "clFFT, planar" : "clFFT",
				 f->plans[i].broken ? fft_status_name(f->plans[i].broken) : "", f->plans[i].broken ? ")" : "");
		if (w > 0)
			p += (size_t)w;
	}
	pthread_mutex_unlock(&plan_lock);
	return n;
}

/* ---- path choice ---------------------------------------------------------------------------- */

/* Lengths clFFT cannot do run the direct O(n^2) sum while its work n^2 batch is below
 * CLGRAD_FFT_DIRECT_MAX (default 32768), and Bluestein's chirp-z from there. Measured with
 * `clgrad bench fft --lengths 17,31,61,127,257 --batches 1,64,1024` (float32 C2C; CLGRAD_FFT=bluestein
 * for the other side) on PoCL: one row of 17 or 61, direct 0.02 / 0.05 ms against Bluestein's
 * 0.25-0.29 ms (its five launches and three transforms); one row of 127 (16129) 0.20 against 0.28
 * ms; 64 rows of 17 (18496) a tie at 0.22 ms; 64 rows of 31 (61504) 0.76 against 0.16 ms; beyond,
 * Bluestein by far (257 x 1024: 151 against 1972 ms; 4099 x 64: 211 ms against 74 s). Intel's CPU
 * runtime vectorises the direct sum well: there the two meet near n^2 batch = 1e6 (127 x 64: 1.19
 * against 0.97 ms; 61 x 64, 238e3: 0.28 against 0.45 ms), so between 32768 and 1e6 it loses up to
 * 1.6x; beyond, Bluestein wins there too (257 x 1024: 226 against 272 ms; 4099 x 64: 228 ms
 * against 5.1 s). */

static int64_t direct_max(void)
{
	return clg_cfg_int(CLG_CFG_FFT_DIRECT_MAX);
}

clg_cl_fft_path clg_cl_fft_path_of(clg_backend *be, int64_t n, const char **why)
{
	return clg_cl_fft_path_batch(be, n, 1, why);
}

clg_cl_fft_path clg_cl_fft_path_batch(clg_backend *be, int64_t n, int64_t batch, const char **why)
{
	const char *e = clg_cfg_str(CLG_CFG_FFT);
	const char *dummy;

	clfftStatus setup;

	if (!why)
		why = &dummy;
	pthread_mutex_lock(&plan_lock);
	setup = setup_locked();
	pthread_mutex_unlock(&plan_lock);
	(void)be;
	if (e && !strcmp(e, "own")) {
		*why = "CLGRAD_FFT=own";
		return CLG_CL_FFT_OWN;
	}
	if (e && (!strcmp(e, "clfft") || !strcmp(e, "planar"))) {
		*why = !strcmp(e, "clfft") ? "CLGRAD_FFT=clfft" : "CLGRAD_FFT=planar";
		return setup == CLFFT_SUCCESS && clg_fft_radices_ok(n) ? CLG_CL_FFT_CLFFT : CLG_CL_FFT_NONE;
	}
	if (setup != CLFFT_SUCCESS) {
		*why = "clfftSetup failed";
		return CLG_CL_FFT_OWN;
	}
	if (e && !strcmp(e, "bluestein")) {
		*why = "CLGRAD_FFT=bluestein";
		return CLG_CL_FFT_BLUESTEIN;
	}
	if (!clg_fft_radices_ok(n)) {
		if ((double)n * (double)n * (double)(batch > 1 ? batch : 1) >= (double)direct_max()) {
			*why = "a prime factor above 13, n^2 batch large: Bluestein over clFFT";
			return CLG_CL_FFT_BLUESTEIN;
		}
		*why = "a prime factor above 13, n^2 batch small: the direct sum";
		return CLG_CL_FFT_OWN;
	}
	*why = "radices 2, 3, 5, 7, 11, 13";
	return CLG_CL_FFT_CLFFT;
}

/* ---- packing -------------------------------------------------------------------------------- */

/* Whether v is packed: contiguous from offset 0 of its buffer. */
static int packed(const clg_view *v) { return v->offset == 0 && clg_view_is_contiguous(v); }

/* A packed temporary of v's shape and dtype (*buf owns it); copies v into it when copy is set. */
static clg_status temp_like(clg_backend *be, const clg_view *v, int copy, clg_buffer **buf, clg_view *tv)
{
	size_t bytes = (size_t)clg_view_numel(v) * clg_dtype_size(v->dtype);
	clg_status st = clg_buffer_alloc(be, bytes ? bytes : 1, buf);
	if (st)
		return st;
	clg_view_contiguous(tv, *buf, v->dtype, v->ndim, v->shape);
	if (copy) {
		clg_op_call cc = {.op = CLG_OP_COPY};
		cc.dst = *tv;
		cc.src[0] = *v;
		st = clg_run(be, &cc);
	}
	return st;
}

/* Zeroes the imaginary parts clg_ops.def says C2R ignores (DC, and Nyquist of an even n) in the
 * packed (batch, bins, 2) spectrum v. */
static clg_status zero_hermitian_imag(clg_backend *be, const clg_fft_geom *g, const clg_view *v)
{
	clg_op_call f = {.op = CLG_OP_FILL};
	clg_status st;

	f.dst = *v;
	f.dst.ndim = 1;
	f.dst.shape[0] = g->batch;
	f.dst.stride[0] = 2 * g->bins;
	f.dst.offset = 1;
	st = clg_run(be, &f);
	if (!st && g->n % 2 == 0 && g->n > 1) {
		f.dst.offset = 2 * (g->bins - 1) + 1;
		st = clg_run(be, &f);
	}
	return st;
}

/* ---- the transforms ------------------------------------------------------------------------- */

/* clFFT takes a plan's scale as a cl_float (clfftSetPlanScale), so a double transform whose scale
 * float cannot hold exactly (1/5, 1/sqrt(8), ...) came back off by float's rounding of it: an
 * irfft of length 5 to 1.5e-8, of 7 to 4.4e-8, where the own kernels give 3e-16. Such a transform
 * runs with clFFT's scale 1 and the exact scale applied after it (scaled_after, one SCALE pass). */
static int scaled_after(const clg_op_call *c)
{
	return c->dst.dtype == CLG_F64 && (double)(float)c->f[0] != c->f[0];
}

/* Runs the transform through clFFT. *fall_back is set (and CLG_OK returned) when auto should run the
 * own kernels instead: the plan is known broken, or its kernels just failed on this device. */
static clg_status run_clfft(clg_backend *be, const clg_op_call *c, const clg_fft_geom *g, cl_mem *in, cl_mem *out,
			    int planar, int strict, int *fall_back)
{
	plan_key k;
	fft_plan p = {0};
	clg_buffer *tmp = NULL;
	clfftStatus s;
	double t0;
	clg_status st;
	cl_command_queue q = clg_cl_of(be)->queue;

	memset(&k, 0, sizeof(k)); /* padding too: keys are compared with memcmp */
	k.op = c->op;
	k.dtype = c->dst.dtype;
	k.n = g->n;
	k.batch = g->batch;
	k.inverse = c->op == CLG_OP_FFT_C2R || (c->op == CLG_OP_FFT_C2C && c->i[0]);
	k.scale = scaled_after(c) ? 1.0 : c->f[0];
	k.in_dist = (size_t)(c->op == CLG_OP_FFT_C2R ? g->bins : g->n);
	k.out_dist = (size_t)(c->op == CLG_OP_FFT_R2C ? g->bins : g->n);
	k.planar = planar;
	*fall_back = 0;
	st = get_plan(be, c, &k, strict, &p);
	if (st)
		return st;
	if (p.broken && !strict) {
		*fall_back = 1;
		return CLG_OK;
	}
	if (p.tmp_bytes) {
		st = clg_buffer_alloc(be, p.tmp_bytes, &tmp);
		if (st)
			return st;
	}
	t0 = clg_now();
	s = clfftEnqueueTransform(p.plan, k.inverse ? CLFFT_BACKWARD : CLFFT_FORWARD, 1, &q, 0, NULL, NULL, in, out,
				  tmp ? (cl_mem)tmp->handle : NULL);
	clg_cl_of(be)->stats.enqueue_seconds += clg_now() - t0;
	clg_buffer_free(tmp);
	if (s != CLFFT_SUCCESS && kernel_failure(s) && !strict) {
		mark_broken(be, &k, s);
		clg_debug("fft on '%s': clFFT's %s kernels for %s length %lld failed (%s): %s", be->info.name,
			  planar ? "planar" : "interleaved", clg_op_name(c->op), (long long)k.n, fft_status_name(s),
			  planar || c->op != CLG_OP_FFT_C2C ? "the own kernels run it" : "trying the planar layout");
		*fall_back = 1;
		return CLG_OK;
	}
	if (s != CLFFT_SUCCESS)
		return fft_fail(be, c, &k, s, "clfftEnqueueTransform");
	clg_cl_of(be)->stats.n_launch++;
	if (be->recorder) /* clFFT's own kernels are not seen */
		clg_record_library(be, "clFFT", 0, 0, 0, 0);
	return CLG_OK;
}

static clg_status run_own(clg_backend *be, const clg_op_call *c, const clg_fft_geom *g, cl_mem in, cl_mem out)
{
	const char *op = clg_op_name(c->op);
	const char *kname = c->op == CLG_OP_FFT_C2C ? "dft_c2c" : c->op == CLG_OP_FFT_R2C ? "dft_r2c" : "dft_c2r";
	int f64 = c->dst.dtype == CLG_F64;
	cl_int n = (cl_int)g->n, batch = (cl_int)g->batch;
	double sign64 = c->op == CLG_OP_FFT_C2C && c->i[0] ? 1 : -1, scale64 = c->f[0];
	float sign32 = (float)sign64, scale32 = (float)scale64;
	size_t items = (size_t)g->batch * (size_t)(c->op == CLG_OP_FFT_R2C ? g->bins : g->n);
	char opts[256];
	cl_kernel k;
	clg_status st;

	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	st = clg_cl_kernel(be, "fft", opts, kname, &k);
	if (st)
		return st;
	{
		size_t is = sizeof(cl_int), fs = f64 ? sizeof(double) : sizeof(float), ms = sizeof(cl_mem);
		size_t sizes[] = {is, is, fs, fs, ms, ms};
		const void *vals[] = {&n, &batch, f64 ? (const void *)&sign64 : &sign32,
				      f64 ? (const void *)&scale64 : &scale32, &in, &out};
		st = clg_cl_set_args(be, k, op, 6, sizes, vals);
	}
	if (st)
		return st;
	return clg_cl_launch_1d(be, k, items, clg_cl_of(be)->wg_size, op);
}

/* The (..., n) plane of part p (0 re, 1 im) of the complex view v (..., n, 2). */
static clg_view plane_of(const clg_view *v, int p)
{
	clg_view r = *v;
	r.ndim = v->ndim - 1;
	r.offset = v->offset + p * v->stride[v->ndim - 1];
	return r;
}

/* C2C through clFFT on separate re and im planes: the source's parts copied into packed planes,
 * transformed, copied into the dst's parts. *fall_back as run_clfft. */
static clg_status run_planar(clg_backend *be, const clg_op_call *c, const clg_fft_geom *g, int strict, int *fall_back)
{
	clg_buffer *b[4] = {0};
	clg_view pv[4];
	cl_mem in[2], out[2];
	clg_status st = CLG_OK;

	for (int j = 0; !st && j < 4; j++) {
		clg_view part = plane_of(j < 2 ? &c->src[0] : &c->dst, j % 2);
		st = temp_like(be, &part, j < 2, &b[j], &pv[j]);
	}
	if (!st) {
		in[0] = (cl_mem)b[0]->handle, in[1] = (cl_mem)b[1]->handle;
		out[0] = (cl_mem)b[2]->handle, out[1] = (cl_mem)b[3]->handle;
		st = run_clfft(be, c, g, in, out, 1, strict, fall_back);
	}
	for (int p = 0; !st && !*fall_back && p < 2; p++) {
		clg_op_call cc = {.op = CLG_OP_COPY};
		cc.dst = plane_of(&c->dst, p);
		cc.src[0] = pv[2 + p];
		st = clg_run(be, &cc);
	}
	for (int j = 0; j < 4; j++)
		clg_buffer_free(b[j]);
	return st;
}

static clg_status fft_exec(clg_backend *be, const clg_op_call *c, const clg_fft_geom *g, clg_cl_fft_path path,
			   int strict);

/* Bluestein's chirp-z transform of the packed operands in -> out (kernels_cl/fft.cl, bluestein_*):
 * a (batch, m, 2) = x w, zero-padded to m, the smallest power of two >= 2n - 1; its transform times
 * that of the chirp's conjugate (m, 2), taken back; y = scale / m * w q. The length-m transforms
 * run on clFFT (interleaved, else planar, else the direct kernels, as any other). */
static clg_status bluestein(clg_backend *be, const clg_op_call *c, const clg_fft_geom *g, cl_mem in, cl_mem out)
{
	const char *op = clg_op_name(c->op);
	clg_dtype dt = c->dst.dtype;
	int f64 = dt == CLG_F64;
	int mode = c->op == CLG_OP_FFT_C2C ? 0 : c->op == CLG_OP_FFT_R2C ? 1 : 2;
	double sign64 = c->op == CLG_OP_FFT_C2R || (c->op == CLG_OP_FFT_C2C && c->i[0]) ? 1 : -1, scale64;
	float sign32 = (float)sign64, scale32;
	int64_t m = 1;
	clg_buffer *chirp = NULL, *cspec = NULL, *ta = NULL, *tb = NULL;
	clg_view va, vb, vc, vs;
	clg_fft_geom gm = {0}, g1 = {0};
	clg_op_call t = {.op = CLG_OP_FFT_C2C};
	size_t es = clg_dtype_size(dt);
	char opts[256], s0[128];
	cl_kernel k;
	cl_int n32, m32, b32, mode32 = mode;
	clg_status st;

	while (m < 2 * g->n - 1)
		m *= 2;
	if (g->batch * m * 2 > INT32_MAX)
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': src0 %s: Bluestein's padded rows (%lld x %lld "
				"complex) exceed 32-bit indexing", op, be->info.name, clg_shape_str(&c->src[0], s0, sizeof(s0)),
				(long long)g->batch, (long long)m);
	n32 = (cl_int)g->n, m32 = (cl_int)m, b32 = (cl_int)g->batch;
	scale64 = c->f[0] / (double)m;
	scale32 = (float)scale64;
	gm.n = gm.bins = m, gm.batch = g->batch, gm.nb = 1;
	g1 = gm;
	g1.batch = 1, g1.nb = 0;
	st = clg_buffer_alloc(be, (size_t)m * 2 * es, &chirp);
	if (!st)
		st = clg_buffer_alloc(be, (size_t)m * 2 * es, &cspec);
	if (!st)
		st = clg_buffer_alloc(be, (size_t)(g->batch * m) * 2 * es, &ta);
	if (!st)
		st = clg_buffer_alloc(be, (size_t)(g->batch * m) * 2 * es, &tb);
	if (st)
		goto free_bufs;
	clg_view_contiguous(&vc, chirp, dt, 2, (int64_t[]){m, 2});
	clg_view_contiguous(&vs, cspec, dt, 2, (int64_t[]){m, 2});
	clg_view_contiguous(&va, ta, dt, 3, (int64_t[]){g->batch, m, 2});
	clg_view_contiguous(&vb, tb, dt, 3, (int64_t[]){g->batch, m, 2});
	clg_cl_dtype_options(be, dt, opts, sizeof(opts));
	/* the chirp's conjugate and its spectrum (m, 2) */
	st = clg_cl_kernel(be, "fft", opts, "bluestein_chirp", &k);
	if (!st) {
		cl_mem mc = (cl_mem)chirp->handle;
		size_t sizes[] = {sizeof(cl_int), sizeof(cl_int), f64 ? sizeof(double) : sizeof(float), sizeof(cl_mem)};
		const void *vals[] = {&n32, &m32, f64 ? (const void *)&sign64 : &sign32, &mc};
		st = clg_cl_set_args(be, k, op, 4, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, (size_t)m, clg_cl_of(be)->wg_size, op);
	t.f[0] = 1;
	t.src[0] = vc, t.dst = vs;
	t.src[0].ndim = t.dst.ndim = 2;
	if (!st)
		st = fft_exec(be, &t, &g1, CLG_CL_FFT_CLFFT, 0);
	/* a = x w (batch, m, 2), then its spectrum into b */
	if (!st)
		st = clg_cl_kernel(be, "fft", opts, "bluestein_pre", &k);
	if (!st) {
		cl_mem mi = in, ma = (cl_mem)ta->handle;
		size_t is = sizeof(cl_int), fs = f64 ? sizeof(double) : sizeof(float), ms = sizeof(cl_mem);
		size_t sizes[] = {is, is, is, is, fs, ms, ms};
		const void *vals[] = {&n32, &m32, &b32, &mode32, f64 ? (const void *)&sign64 : &sign32, &mi, &ma};
		st = clg_cl_set_args(be, k, op, 7, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, (size_t)(g->batch * m), clg_cl_of(be)->wg_size, op);
	t.src[0] = va, t.dst = vb;
	if (!st)
		st = fft_exec(be, &t, &gm, CLG_CL_FFT_CLFFT, 0);
	/* b *= the chirp's spectrum (broadcast over the batch), back into a */
	if (!st) {
		clg_op_call cm = {.op = CLG_OP_COMPLEX_MUL};
		cm.dst = vb;
		cm.src[0] = vb;
		cm.src[1] = vb;
		cm.src[1].buf = cspec; /* (m, 2) as (batch, m, 2): stride 0 over the batch */
		cm.src[1].stride[0] = 0;
		st = clg_run(be, &cm);
	}
	t.i[0] = 1;
	t.src[0] = vb, t.dst = va;
	if (!st)
		st = fft_exec(be, &t, &gm, CLG_CL_FFT_CLFFT, 0);
	/* y = scale / m * w q */
	if (!st)
		st = clg_cl_kernel(be, "fft", opts, "bluestein_post", &k);
	if (!st) {
		cl_mem ma = (cl_mem)ta->handle, mo = out;
		size_t is = sizeof(cl_int), fs = f64 ? sizeof(double) : sizeof(float), ms = sizeof(cl_mem);
		size_t sizes[] = {is, is, is, is, fs, fs, ms, ms};
		const void *vals[] = {&n32, &m32, &b32, &mode32, f64 ? (const void *)&sign64 : &sign32,
				      f64 ? (const void *)&scale64 : &scale32, &ma, &mo};
		st = clg_cl_set_args(be, k, op, 8, sizes, vals);
	}
	if (!st)
		st = clg_cl_launch_1d(be, k, (size_t)(g->batch * (mode == 1 ? g->bins : g->n)), clg_cl_of(be)->wg_size, op);
free_bufs:
	clg_buffer_free(chirp);
	clg_buffer_free(cspec);
	clg_buffer_free(ta);
	clg_buffer_free(tb);
	return st;
}

static clg_status fft_run(clg_backend *be, const clg_op_call *c)
{
	const char *why, *op = clg_op_name(c->op);
	const char *e = clg_cfg_str(CLG_CFG_FFT);
	clg_fft_geom g;
	clg_cl_fft_path path;
	char s0[128];
	clg_status st = clg_fft_check(be, c, &g);

	if (!st)
		st = clg_cl_check_dtype(be, c, c->dst.dtype);
	if (!st)
		st = clg_cl_check_int_range(be, c, &c->src[0]);
	if (!st)
		st = clg_cl_check_int_range(be, c, &c->dst);
	if (st || g.batch == 0)
		return st;
	path = clg_cl_fft_path_batch(be, g.n, g.batch, &why);
	if (path == CLG_CL_FFT_NONE)
		return clg_fail(CLG_ERR_UNSUPPORTED, "op '%s' on device '%s': length %lld of src0 %s has a prime factor "
				"clFFT cannot do (only 2, 3, 5, 7, 11, 13), and %s", op, be->info.name, (long long)g.n,
				clg_shape_str(&c->src[0], s0, sizeof(s0)), why);
	if (clg_debug_enabled() && !clg_cl_of(be)->fft_told) {
		clg_cl_of(be)->fft_told = 1;
		clg_debug("fft on '%s': length %lld by %s (%s)", be->info.name, (long long)g.n,
			  path == CLG_CL_FFT_CLFFT ? "clFFT" : path == CLG_CL_FFT_BLUESTEIN ? "Bluestein" : "own kernels", why);
	}
	return fft_exec(be, c, &g, path, e && (!strcmp(e, "clfft") || !strcmp(e, "planar")));
}

/* Runs the checked transform c (geometry g) on path (CLFFT, BLUESTEIN or OWN); strict: a clFFT
 * failure is an error rather than a fall-back. */
static clg_status fft_exec(clg_backend *be, const clg_op_call *c, const clg_fft_geom *g, clg_cl_fft_path path,
			   int strict)
{
	clg_buffer *tin = NULL, *tout = NULL;
	clg_view vin, vout;
	clg_status st = CLG_OK;

	vin = c->src[0];
	vout = c->dst;
	/* (a source sharing the dst's buffer is copied too: every path reads and writes apart) */
	if (!packed(&vin) || vin.buf == vout.buf || (c->op == CLG_OP_FFT_C2R && path == CLG_CL_FFT_CLFFT))
		st = temp_like(be, &c->src[0], 1, &tin, &vin);
	if (!st && c->op == CLG_OP_FFT_C2R && path == CLG_CL_FFT_CLFFT)
		st = zero_hermitian_imag(be, g, &vin);
	if (!st && !packed(&vout))
		st = temp_like(be, &c->dst, 0, &tout, &vout);
	if (!st && path == CLG_CL_FFT_CLFFT) {
		const char *e = clg_cfg_str(CLG_CFG_FFT);
		int fall_back = 0;
		cl_mem in = (cl_mem)vin.buf->handle, out = (cl_mem)vout.buf->handle;
		if (e && !strcmp(e, "planar") && c->op == CLG_OP_FFT_C2C)
			fall_back = 1;
		else
			st = run_clfft(be, c, g, &in, &out, 0, strict, &fall_back);
		if (!st && fall_back && c->op == CLG_OP_FFT_C2C) {
			clg_op_call pc = *c; /* the packed operands */
			pc.src[0] = vin, pc.dst = vout;
			st = run_planar(be, &pc, g, strict, &fall_back);
		}
		if (!st && fall_back)
			path = CLG_CL_FFT_OWN;
		if (!st && !fall_back && scaled_after(c)) { /* vout = scale * vout, in double */
			clg_op_call sc = {.op = CLG_OP_SCALE, .f = {c->f[0], 0}};
			sc.dst = sc.src[0] = vout;
			st = clg_run(be, &sc);
		}
	}
	if (!st && path == CLG_CL_FFT_BLUESTEIN)
		st = bluestein(be, c, g, (cl_mem)vin.buf->handle, (cl_mem)vout.buf->handle);
	if (!st && path == CLG_CL_FFT_OWN)
		st = run_own(be, c, g, (cl_mem)vin.buf->handle, (cl_mem)vout.buf->handle);
	if (!st && tout) {
		clg_op_call cc = {.op = CLG_OP_COPY};
		cc.dst = c->dst;
		cc.src[0] = vout;
		st = clg_run(be, &cc);
	}
	clg_buffer_free(tin);
	clg_buffer_free(tout);
	return st;
}

/* ---- complex multiply ----------------------------------------------------------------------- */

/* Must match `cgeom` in kernels_cl/fft.cl. */
typedef struct {
	cl_int nd, n;
	cl_int shape[CLG_MAX_DIMS];
	cl_int off[3];
	cl_int cs[3];
	cl_int st[3][CLG_MAX_DIMS];
} cgeom;

/* Must match CMUL_RUN in kernels_cl/fft.cl: elements of the innermost dim per work-item. */
#define CMUL_RUN 16

static clg_status complex_mul_run(clg_backend *be, const clg_op_call *c)
{
	const clg_view *v[3] = {&c->dst, &c->src[0], &c->src[1]};
	const char *op = clg_op_name(c->op);
	int f64 = c->dst.dtype == CLG_F64, nd;
	cl_int chunks;
	double conj64 = c->i[0] ? -1 : 1;
	float conj32 = (float)conj64;
	cl_mem mem[3];
	char opts[256];
	cgeom g;
	cl_kernel k;
	clg_status st = clg_fft_check(be, c, NULL);

	if (!st)
		st = clg_cl_check_dtype(be, c, c->dst.dtype);
	for (int j = 0; !st && j < 3; j++)
		st = clg_cl_check_int_range(be, c, v[j]);
	if (st)
		return st;
	memset(&g, 0, sizeof(g));
	nd = c->dst.ndim - 1;
	g.nd = nd;
	g.n = 1;
	for (int d = 0; d < nd; d++) {
		g.shape[d] = (cl_int)c->dst.shape[d];
		g.n *= (cl_int)c->dst.shape[d];
	}
	for (int j = 0; j < 3; j++) {
		g.off[j] = (cl_int)v[j]->offset;
		g.cs[j] = (cl_int)v[j]->stride[nd];
		for (int d = 0; d < nd; d++)
			g.st[j][d] = (cl_int)v[j]->stride[d];
		mem[j] = (cl_mem)v[j]->buf->handle;
	}
	if (g.n == 0)
		return CLG_OK;
	if (nd == 0) { /* one complex number: a row of one */
		g.nd = nd = 1;
		g.shape[0] = 1;
	}
	chunks = (cl_int)((g.shape[nd - 1] + CMUL_RUN - 1) / CMUL_RUN);
	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	st = clg_cl_kernel(be, "fft", opts, "complex_mul", &k);
	if (st)
		return st;
	{
		size_t ms = sizeof(cl_mem);
		size_t sizes[] = {sizeof(g), sizeof(cl_int), ms, ms, ms, f64 ? sizeof(double) : sizeof(float)};
		const void *vals[] = {&g, &chunks, &mem[0], &mem[1], &mem[2], f64 ? (const void *)&conj64 : &conj32};
		st = clg_cl_set_args(be, k, op, 6, sizes, vals);
	}
	if (st)
		return st;
	return clg_cl_launch_1d(be, k, (size_t)(g.n / g.shape[nd - 1]) * (size_t)chunks, clg_cl_of(be)->wg_size, op);
}

void clg_cl_register_fft(clg_backend *be)
{
	be->ops[CLG_OP_FFT_C2C] = fft_run;
	be->ops[CLG_OP_FFT_R2C] = fft_run;
	be->ops[CLG_OP_FFT_C2R] = fft_run;
	be->ops[CLG_OP_COMPLEX_MUL] = complex_mul_run;
}

/* ---- clg_fft.h ------------------------------------------------------------------------------ */

const char *clg_fft_path(clg_backend *be, clg_op op, int64_t n, const char **why)
{
	return clg_fft_path_batch(be, op, n, 1, why);
}

const char *clg_fft_path_batch(clg_backend *be, clg_op op, int64_t n, int64_t batch, const char **why)
{
	struct clg_cl_fft *f;
	int broken = 0;

	if (!be || strcmp(be->iface->kind, "opencl")) {
		if (why)
			*why = "the reference backend (double precision DFT)";
		return "reference";
	}
	switch (clg_cl_fft_path_batch(be, n, batch, why)) {
	case CLG_CL_FFT_CLFFT:
		pthread_mutex_lock(&plan_lock);
		f = clg_cl_of(be)->fft;
		/* bit 0: the interleaved plan failed, bit 1: the planar one did, bit 2: a planar one ran */
		for (int i = 0; f && i < f->n; i++) {
			const plan_key *k = &f->plans[i].key;
			if (k->op == op && k->n == n && !k->inverse)
				broken |= f->plans[i].broken ? 1 << k->planar : k->planar ? 4 : 0;
		}
		pthread_mutex_unlock(&plan_lock);
		if ((broken & 2) || ((broken & 1) && op != CLG_OP_FFT_C2C)) {
			if (why)
				*why = "clFFT's kernels failed on this device";
			return "own kernels";
		}
		if (broken & 1) {
			if (why)
				*why = "clFFT's interleaved kernels failed on this device; its planar ones run";
			return "clFFT planar";
		}
		return "clFFT";
	case CLG_CL_FFT_OWN: return "own kernels";
	case CLG_CL_FFT_BLUESTEIN: return "Bluestein";
	default: return "unsupported";
	}
}

int clg_fft_plans(clg_backend *be, char *buf, size_t len)
{
	if (!be || strcmp(be->iface->kind, "opencl")) {
		if (len)
			buf[0] = 0;
		return 0;
	}
	return clg_cl_fft_plans(be, buf, len);
}
