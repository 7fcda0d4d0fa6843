/* clgrad backend interface: devices, buffers, strided views and the op table.
 *
 * Ownership: a clg_backend owns every clg_buffer allocated from it; free each buffer with
 * clg_buffer_free() before clg_backend_close(). Functions that can fail return clg_status;
 * on failure clg_last_error() (thread-local) says what failed: op, device, shapes, OpenCL error.
 * The library never exits or aborts on user or driver errors.
 */
#ifndef CLG_BACKEND_H
#define CLG_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	CLG_OK = 0,
	CLG_ERR_INVALID,     /* bad argument from the caller */
	CLG_ERR_SHAPE,       /* shapes do not fit together */
	CLG_ERR_DTYPE,       /* wrong or unavailable dtype */
	CLG_ERR_DEVICE,      /* unknown device, or operands on different devices */
	CLG_ERR_UNSUPPORTED, /* op not available on this device */
	CLG_ERR_OOM,         /* host or device memory exhausted, or allocation too large */
	CLG_ERR_BUILD,       /* a kernel failed to compile: the message carries the build log */
	CLG_ERR_OPENCL,      /* any other OpenCL or CLBlast failure */
	CLG_ERR_IO,          /* file system error */
	CLG_ERR_FORMAT,      /* malformed file */
	CLG_ERR_STATE,       /* call out of order, e.g. use after free */
} clg_status;

const char *clg_status_name(clg_status s);
/* Seconds on a monotonic clock (for durations). */
double clg_now(void);
/* Message of the last failure on this thread ("" if none). Valid until the next failure. */
const char *clg_last_error(void);
void clg_clear_error(void);
/* Sets this thread's error message and returns s (for code built on clgrad: custom modules, tools). */
clg_status clg_fail(clg_status s, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

typedef enum { CLG_F32, CLG_F16, CLG_F64, CLG_I32, CLG_BF16, CLG_DTYPE_COUNT } clg_dtype;
size_t clg_dtype_size(clg_dtype t);
const char *clg_dtype_name(clg_dtype t);

/* float16 (IEEE binary16) host data: CLG_F16 tensors hold these bits (uint16_t per element) on
 * every device. float -> half rounds to nearest even (65520 and up become inf); subnormals,
 * signed zeros, inf and NaN are kept. Ops on float16 compute in float32 (see clg_run). */
float clg_half_to_float(uint16_t h);
uint16_t clg_float_to_half(float f);
/* bfloat16 (the top 16 bits of a float32: float32's exponent, 7 bits of mantissa) host data:
 * CLG_BF16 tensors hold these bits on every device, stored and loaded with integer ops only, and
 * computed in float32 like float16. float -> bfloat16 rounds to nearest even; NaN stays NaN. */
float clg_bf16_to_float(uint16_t b);
uint16_t clg_float_to_bf16(float f);
/* float16 or bfloat16: the 16-bit storage formats (the same ops take both) */
static inline int clg_dtype_is_half_storage(clg_dtype t) { return t == CLG_F16 || t == CLG_BF16; }

/* ---- devices ---------------------------------------------------------------------------- */

typedef enum { CLG_DEV_REF, CLG_DEV_CPU, CLG_DEV_GPU, CLG_DEV_ACCEL, CLG_DEV_OTHER } clg_device_type;

typedef struct {
	int index;                /* position in clg_devices(); 0 is the reference backend */
	clg_device_type type;
	char platform[128];
	char platform_version[128];
	char platform_vendor[128];  /* CL_PLATFORM_VENDOR: whose OpenCL stack (PoCL, Intel...) */
	char vendor[128];         /* CL_DEVICE_VENDOR: who made the hardware */
	char name[128];
	char cl_version[128];     /* CL_DEVICE_VERSION ("OpenCL 3.0 PoCL HSTR: <triple>-<cpu>" passes 64) */
	char clc_version[64];     /* CL_DEVICE_OPENCL_C_VERSION */
	char driver_version[64];
	char il_version[64];      /* CL_DEVICE_IL_VERSION, "" when absent */
	char extensions[4096];    /* CL_DEVICE_EXTENSIONS, space-separated (cut at a name if longer) */
	unsigned compute_units;
	unsigned clock_mhz;
	uint64_t global_mem;
	uint64_t local_mem;
	uint64_t max_alloc;
	uint64_t max_wg_size;
	uint64_t timer_resolution_ns;
	int has_fp16;             /* cl_khr_fp16 (as probed; float16 tensors do not need it) */
	char half_off[200];       /* "" or why native half is off though has_fp16: its self-test found it
				   * wrong (float16 is then computed in float32, as without cl_khr_fp16) */
	int has_fp64;             /* cl_khr_fp64 or a double-precision config */
	int has_subgroups;        /* cl_khr_subgroups or cl_intel_subgroups */
	int has_int_dot;          /* cl_khr_integer_dot_product */
	int has_il;               /* cl_khr_il_program or an IL version */
	char crashed[256];        /* "" or how an earlier run crashed on it ("SIGSEGV while ..."): not used
				   * again unless CLGRAD_FORCE_DEVICE=1 (backend/opencl/cl_crash.c) */
} clg_device_info;

const char *clg_device_type_name(clg_device_type t);
/* Whether needle occurs in hay, ignoring ASCII case: how a device spec matches a device or
 * platform name (clg_device_select), and how tools recognise a driver or a simulator by name. */
int clg_contains_nocase(const char *hay, const char *needle);
/* Whether the device is a simulator (Oclgrind): correct but orders of magnitude slower, never a default */
int clg_device_is_simulator(const clg_device_info *d);
/* Every device this process can use: the reference backend first, then each OpenCL device of each
 * platform the ICD loader reports. Enumerated once; the array lives until process exit. */
clg_status clg_devices(const clg_device_info **list, int *count);
/* Resolve a device spec: an index, "ref", "cpu", "gpu", or a case-insensitive substring of the
 * platform or device name. NULL or "" means $CLGRAD_DEVICE, else the first GPU, else the first
 * OpenCL CPU device (neither a simulator nor a device on record as crashed), else the reference
 * backend. */
clg_status clg_device_select(const char *spec, int *index);
/* The cache folder the library keeps its files in (CLGRAD_CACHE_DIR, else $XDG_CACHE_HOME/clgrad,
 * else ~/.cache/clgrad), created if missing, for tools that keep small files beside them.
 * CLG_ERR_IO when caching is off (CLGRAD_CACHE_DIR=0) or the folder cannot be made. */
clg_status clg_cache_folder(char *buf, size_t len);
/* Writes n bytes to path atomically: a temporary file in the same folder, fsync, rename. */
clg_status clg_write_file_atomic(const char *path, const void *data, size_t n);

/* Crash breadcrumbs (opencl/cl_crash.c): the step the library is at, set as it builds programs, runs the
 * self-test and enqueues ops (the five parts are concatenated into a fixed global). For a
 * fatal-signal handler: the text, a signal's name, and clg_crash_note_signal, which appends
 * "crashed: SIG while <step>" to this process's in-progress markers so that the next run marks
 * the device crashed. The last two are async-signal-safe. */
void clg_crumb(const char *a, const char *b, const char *c, const char *d, const char *e);
const char *clg_crumb_text(void);
const char *clg_crash_signal_name(int sig);
int clg_crash_note_signal(int sig); /* how many markers it wrote to */

/* ---- backends and buffers --------------------------------------------------------------- */

typedef struct clg_backend clg_backend;

typedef struct clg_buffer {
	clg_backend *backend;
	void *handle;     /* host pointer (ref) or cl_mem (OpenCL) */
	size_t size;      /* bytes asked for */
	size_t capacity;  /* bytes held (the allocator's bucket) */
} clg_buffer;

#define CLG_MAX_DIMS 6
#define CLG_MAX_SRC 8 /* ATTENTION_BWD reads six operands and writes two more in place */

/* A strided view of a buffer: what every op reads and writes. Offset and strides count elements. */
typedef struct {
	clg_buffer *buf;
	clg_dtype dtype;
	int ndim;
	int64_t offset;
	int64_t shape[CLG_MAX_DIMS];
	int64_t stride[CLG_MAX_DIMS];
} clg_view;

typedef enum {
#define CLG_OP(id, name, nsrc, kind) CLG_OP_##id,
#include "clg_ops.def"
#undef CLG_OP
	CLG_OP_COUNT
} clg_op;

const char *clg_op_name(clg_op op);
int clg_op_nsrc(clg_op op);
/* Whether an op is of the elementwise kind (see clg_ops.def). */
int clg_op_is_elementwise(clg_op op);

typedef struct {
	clg_op op;
	clg_view src[CLG_MAX_SRC];
	clg_view dst;
	double f[8];      /* float parameters (alpha, beta, slope, ...) */
	int64_t i[8];     /* integer parameters (kernel sizes, strides, seeds, ...) */
} clg_op_call;

typedef clg_status (*clg_op_fn)(clg_backend *be, const clg_op_call *call);

typedef struct {
	/* allocator */
	uint64_t bytes_in_use;    /* held by live buffers (bucket sizes) */
	uint64_t bytes_peak;      /* highest bytes_in_use since the backend opened or the last
				   * clg_backend_reset_peak (the trainer resets it each step) */
	uint64_t bytes_cached;    /* freed buffers kept for reuse */
	uint64_t n_alloc;         /* clg_buffer_alloc calls */
	uint64_t n_reuse;         /* of which served from the cache */
	/* program cache */
	uint64_t n_build;         /* programs compiled from source */
	uint64_t n_disk_load;     /* programs loaded from the disk cache */
	uint64_t n_disk_reject;   /* disk entries found corrupt or foreign, then rebuilt */
	uint64_t n_mem_hit;       /* programs found in memory */
	/* commands (train --profile): kernels enqueued (a CLBlast or clFFT call counts as one: their
	 * own kernels are not seen), host-to-device writes, device-to-host reads */
	uint64_t n_launch;
	uint64_t n_upload;
	uint64_t n_download;
	/* host seconds inside the runtime's kernel enqueues, and inside CLBlast and clFFT calls whole
	 * (train --profile: how much of the host's time per step is the driver's) */
	double enqueue_seconds;
} clg_stats;

/* The interface every backend implements (ggml style: function pointers + context). */
typedef struct {
	const char *kind;  /* "ref" or "opencl" */
	void (*close)(clg_backend *be);
	clg_status (*alloc)(clg_backend *be, size_t size, clg_buffer **out);
	void (*free)(clg_backend *be, clg_buffer *buf);
	/* Asynchronous where the device allows: src may be reused as soon as upload returns. */
	clg_status (*upload)(clg_backend *be, clg_buffer *dst, size_t offset, const void *src, size_t n);
	/* Blocks until the data is on the host (and so until every earlier op finished). */
	clg_status (*download)(clg_backend *be, clg_buffer *src, size_t offset, void *dst, size_t n);
	/* Optional (NULL: download). Starts a download behind the ops already queued and returns at
	 * once; *done (NULL when already complete) is passed to wait, which blocks until dst holds the
	 * data and releases *done. dst must stay valid until then. */
	clg_status (*download_start)(clg_backend *be, clg_buffer *src, size_t offset, void *dst, size_t n, void **done);
	clg_status (*wait)(clg_backend *be, void *done);
	clg_status (*synchronize)(clg_backend *be);
	void (*stats)(clg_backend *be, clg_stats *out);
	/* Drop cached free buffers. */
	void (*trim)(clg_backend *be);
	/* Optional (NULL: the mark is never restarted). Restart the high-water mark: bytes_peak =
	 * bytes_in_use. */
	void (*reset_peak)(clg_backend *be);
} clg_backend_iface;

/* ---- kernel shapes ---------------------------------------------------------------------- */
/* Kernel families come in two shapes: CPU (a work-item per row or block, vector loads, no
 * barriers) and GPU (a work-group or sub-group per row or tile, coalesced loads, reductions in
 * local memory). One mechanism picks the shape per device and family (backend/kernel_shape.c):
 *   1. CLGRAD_KERNEL_SHAPE: "cpu" or "gpu" for every family, or "row=gpu,conv=cpu" per family;
 *   2. else a measured choice stored by `clgrad tune` (clg_backend_set_kernel_shape);
 *   3. else the device type: CPU devices (and the reference) take CPU, all others GPU.
 * Both shapes compute the same thing and both run in the op suite on every device. */
typedef enum { CLG_SHAPE_CPU, CLG_SHAPE_GPU } clg_kernel_shape;
typedef enum {
	CLG_KFAM_ROW,        /* softmax, log-softmax, layer norm, row reductions, softmax cross-entropy,
			      * one_hot */
	CLG_KFAM_REDUCE,     /* sums/means over leading dims (column reductions); index_add's last
			      * counting-sort pass (CPU: 16 elements of a row a work-item) */
	CLG_KFAM_FUSED,      /* bias+activation backward (softmax cross-entropy is a row kernel); the
			      * optimizer updates' launches (CPU: unguarded groups + guarded rest) */
	CLG_KFAM_CONV,       /* im2col/col2im, pooling */
	CLG_KFAM_ATTENTION,  /* fused scaled dot-product attention */
	CLG_KFAM_GEMM,       /* the own GEMM kernel: register-tiled (CPU) or local-memory tiled (GPU) */
	CLG_KFAM_COUNT
} clg_kernel_family;

const char *clg_kernel_family_name(clg_kernel_family f);           /* "row", "reduce", ... */
const char *clg_kernel_shape_name(clg_kernel_shape s);             /* "cpu" or "gpu" */

/* The backend's fields are private to the library (backend/clg_backend_impl.h); users read the
 * device through clg_backend_info. */
const clg_device_info *clg_backend_info(const clg_backend *be);

/* The shape backend be uses for family f; *why (may be NULL) says where the choice came from
 * ("CLGRAD_KERNEL_SHAPE", "measured by clgrad tune: gpu 123 us vs cpu 456 us", "device type cpu"). */
clg_kernel_shape clg_backend_kernel_shape(const clg_backend *be, clg_kernel_family f, const char **why);
/* Sets the shape of family f for this backend unless CLGRAD_KERNEL_SHAPE forces it (the
 * variable wins); why is copied. For `clgrad tune`'s stored choices and for tools. */
void clg_backend_set_kernel_shape(clg_backend *be, clg_kernel_family f, clg_kernel_shape s, const char *why);

/* 1 where float16 elementwise ops compute in half on the device: it reports cl_khr_fp16 and
 * $CLGRAD_NATIVE_HALF is not 0 ("fp16: native"); 0: float16 is storage only, computed in float32
 * ("fp16: storage only"). Reductions, row ops and GEMM accumulate in float32 either way. */
int clg_half_native(const clg_device_info *d);

clg_status clg_backend_open(int device_index, clg_backend **out);
void clg_backend_close(clg_backend *be);

clg_status clg_buffer_alloc(clg_backend *be, size_t size, clg_buffer **out);
void clg_buffer_free(clg_buffer *buf);
clg_status clg_buffer_upload(clg_buffer *dst, size_t offset, const void *src, size_t n);
clg_status clg_buffer_download(clg_buffer *src, size_t offset, void *dst, size_t n);
/* A download that overlaps the device's work: started now, complete after clg_buffer_wait(). */
clg_status clg_buffer_download_start(clg_buffer *src, size_t offset, void *dst, size_t n, void **done);
clg_status clg_buffer_wait(clg_backend *be, void *done);
clg_status clg_synchronize(clg_backend *be);
void clg_backend_stats(clg_backend *be, clg_stats *out);
/* A new high-water mark from now: bytes_peak becomes bytes_in_use (what a step adds on top of what
 * lives across steps is then bytes_peak at its end). */
void clg_backend_reset_peak(clg_backend *be);

/* Views */
void clg_view_contiguous(clg_view *v, clg_buffer *buf, clg_dtype dtype, int ndim, const int64_t *shape);
int64_t clg_view_numel(const clg_view *v);
int clg_view_is_contiguous(const clg_view *v);
/* "(2, 3, 4)" into buf; returns buf. */
const char *clg_shape_str(const clg_view *v, char *buf, size_t len);

/* What a caller needs to know of some ops' geometry (the frontend's conv, pooling and attention;
 * the backends' full checks are in clg_conv_internal.h and clg_attention_internal.h). */
/* Output positions along one axis of IM2COL and the pools: floor((in + 2 pad - dil (k - 1) - 1) /
 * stride) + 1, or -1 when the (dilated) kernel is larger than the padded input or a parameter is
 * out of range (k, stride, dil >= 1, pad >= 0, all below 2^31). Implemented in
 * backend/ref/ref_ops_conv.c. */
int64_t clg_conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil);
/* The pools' output positions: clg_conv_out_size, or with ceil_mode PyTorch's rule: ceil instead
 * of floor, less one where the last window would start past the input and its left padding. */
int64_t clg_pool_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil, int ceil_mode);
/* Largest Dh and Dv of ATTENTION_FWD / ATTENTION_BWD (the OpenCL kernels size private rows and local
 * tiles by it); the frontend composes wider heads from the unfused ops. */
#define CLG_ATTENTION_DMAX 256

/* Checks the call (operand count, devices, dtypes, bounds) and enqueues it. float16 operands are
 * accepted by the ops of kind EW, REDUCE, ROW and GEMM only (CLG_ERR_DTYPE elsewhere, on every
 * backend): they are read exactly, computed in float32 (the reference backend: in double, then
 * rounded to float; elementwise ops in half where clg_half_native) and each result is rounded once
 * to float16, to nearest even. CAST is the one op whose source dtype differs from its dst's. */
clg_status clg_run(clg_backend *be, const clg_op_call *call);
/* Whether be runs op (its op table entry is set), once the op's first-use self-test has run (it
 * may route the op away): what a caller choosing between a fused op and its composite asks. */
int clg_backend_has_op(clg_backend *be, clg_op op);

#ifdef __cplusplus
}
#endif
#endif
