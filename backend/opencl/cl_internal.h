/* State and helpers private to the OpenCL backend. */
#ifndef CLG_CL_INTERNAL_H
#define CLG_CL_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "../clg_internal.h"
#include "../clg_record.h"

typedef struct {
	size_t capacity;
	cl_mem mem;
} clg_cl_cached_mem;

typedef struct {
	cl_event event;
	void *staging;   /* host copy kept alive until the upload completes */
} clg_cl_pending;

/* A pinned upload staging slot (cl_staging.c). */
typedef struct {
	cl_mem mem;      /* CL_MEM_ALLOC_HOST_PTR, mapped for its lifetime at host */
	void *host;
	size_t cap;
	cl_event busy;   /* the last upload from it, until seen complete */
} clg_cl_stage;
#define CLG_CL_STAGE_SLOTS 4

typedef struct {
	uint64_t key;    /* hash of (program name, options) or (program, options, kernel) */
	cl_program program;
	cl_kernel kernel;
} clg_cl_cache_entry;

typedef struct {
	cl_platform_id platform;
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;
	size_t wg_size;                  /* work-group size for 1-D kernels */
	size_t max_item0;                /* CL_DEVICE_MAX_WORK_ITEM_SIZES[0] (0: unknown) */
	/* sub-group reductions for the GPU-shaped row kernels: 0 none (or CLGRAD_SUBGROUPS=0),
	 * 1 cl_intel_subgroups (OpenCL C 1.2 builds), 2 cl_khr_subgroups (needs OpenCL C 2.0 builds) */
	int subgroups;
	int fma_single, fma_double;      /* fp config has CL_FP_FMA: kernels built with -DUSE_FMA */

	clg_cl_cached_mem *cached;       /* freed buffers kept for reuse */
	int ncached, capcached;
	clg_cl_pending *pending;         /* uploads in flight */
	int npending, cappending;

	clg_cl_cache_entry *programs, *kernels;
	int nprograms, capprograms, nkernels, capkernels;

	clg_stats stats;
	struct clg_cl_store_job *store;         /* program binaries to write at close (cl_program_store.c) */
	struct clg_cl_selftest *selftest; /* routes from the known-bad list and self-test (cl_selftest.c) */
	struct clg_cl_fft *fft;          /* clFFT plans (cl_ops_fft.c) */
	int fft_told;                    /* the FFT path was noted (CLGRAD_DEBUG) */
	char workload[64];               /* the last clg_precompile's workload: new programs are listed under it */
	int fault_armed;                 /* open complete: CLGRAD_FAULT counts this device's events */
	cl_mem gemm_tmp;                 /* CLBlast's indirect GEMM scratch (cl_gemm.c), grown as needed */
	size_t gemm_tmp_size;
	clg_cl_stage stage[CLG_CL_STAGE_SLOTS]; /* pinned upload staging (cl_staging.c) */
	int stage_next;
	int gemm_env_applied;            /* $CLGRAD_GEMM_MIN_INDIRECT given to CLBlast (cl_clblast.c) */
	int gemm_vw[2];                  /* the own GEMM's untuned vector width, float and double (0: not
	                                  * asked yet; cl_gemm.c) */
	int gemm_wg;                     /* work-items a group along q of gemm_op, measured by `clgrad tune`
	                                  * (a `gemmwg` line; 0: none stored, 1 is used) */
} clg_cl;

static inline clg_cl *clg_cl_of(clg_backend *be) { return (clg_cl *)be->ctx; }

/* Upload staging (cl_staging.c): host memory for an n-byte upload in a pinned slot (*slot), or
 * NULL (too large, every slot in flight, or the driver refused): the caller copies privately. */
void *clg_cl_stage_get(clg_backend *be, size_t n, int *slot);
/* The upload from slot was enqueued as ev (the slot keeps ev and releases it). */
void clg_cl_stage_busy(clg_backend *be, int slot, cl_event ev);
/* Waits for and releases every slot (at close). */
void clg_cl_stage_free(clg_backend *be);

const char *clg_cl_error_name(cl_int err);
/* Fails with CLG_ERR_OPENCL (or CLG_ERR_OOM for allocation failures), naming op, device and err. */
clg_status clg_cl_fail(clg_backend *be, const char *op, cl_int err, const char *fmt, ...) CLG_PRINTF(4, 5);

/* enumeration */
clg_status clg_cl_device_ids(int device_index, cl_platform_id *platform, cl_device_id *device);

/* allocator */
clg_status clg_cl_alloc(clg_backend *be, size_t size, clg_buffer **out);
void clg_cl_free(clg_backend *be, clg_buffer *buf);
void clg_cl_trim(clg_backend *be);

/* Fault injection (tests, cl_fault.c): CLGRAD_FAULT=alloc:N|enqueue:N|build:N|read:N|write:N|count
 * (the kinds in clg_internal.h). A bad CLGRAD_FAULT value fails the open. */
clg_status clg_cl_fault_check(void);
/* Counts one device event (once the open is complete); the error to report instead of calling
 * the driver, or CL_SUCCESS. */
cl_int clg_cl_fault(clg_backend *be, clg_fault_kind kind);
/* " [injected by CLGRAD_FAULT]" when this thread's last fault check fired, else "". */
const char *clg_cl_fault_note(void);
/* CLGRAD_FAULT=count: the tallies on stderr. */
void clg_cl_fault_report(clg_backend *be);

/* programs and kernels */
/* The source of a kernel program by name ("elementwise" for kernels_cl/elementwise.cl). */
clg_status clg_cl_program_source(const char *name, const char **src, size_t *len, char **owned);
/* Embedded program names, NULL-terminated (prelude.cl is not a program: it starts every one). */
const char *const *clg_cl_program_names(void);
/* The embedded kernel sources (kernels_embedded.c, generated by cmake/embed_kernels.cmake with the
 * same layout): cl_program.c reads them, tests/test_cache.c times them. */
struct clg_embedded_kernel {
	const char *name;
	const unsigned char *data;
	size_t size;
};
extern const struct clg_embedded_kernel clg_embedded_kernels[];
extern const int clg_embedded_kernel_count;
/* A hash of the library's C sources and headers (build_id.c, generated by cmake/build_id.cmake):
 * cached results that depend on host code are keyed by it. */
extern const char clg_build_id[];
clg_status clg_cl_program(clg_backend *be, const char *name, const char *options, cl_program *out);
/* 1 where clg_cl_kernel builds each kernel in a program of its own (CLGRAD_KERNEL_SUBSETS) */
int clg_cl_kernel_subsets(clg_backend *be);
clg_status clg_cl_kernel(clg_backend *be, const char *program, const char *options, const char *kernel,
			 cl_kernel *out);
/* Writes prog's binary to path in the disk cache (dir); _later: now, or at close on PoCL
 * (CLGRAD_STORE_BINARIES, cl_program_store.c), which clg_cl_store_finish does. */
void clg_cl_store_binary(clg_backend *be, cl_program prog, const char *dir, const char *path, const uint64_t key[2]);
void clg_cl_store_later(clg_backend *be, cl_program prog, const char *dir, const char *path, const uint64_t key[2]);
void clg_cl_store_finish(clg_backend *be);
/* Builds options common to every program for this device and dtype ("-DT=float ..."). */
void clg_cl_dtype_options(clg_backend *be, clg_dtype t, char *buf, size_t len);
void clg_cl_release_programs(clg_backend *be);
/* The cache folder (CLGRAD_CACHE_DIR, else $XDG_CACHE_HOME/clgrad, else ~/.cache/clgrad), or ""
 * when disabled; shared by the program cache, the self-test result and the tuning result. */
void clg_cl_cache_dir(char *buf, size_t len);
/* Why a program-cache entry read from disk (a 48-byte header: magic, format, key, payload size
 * and hash; then the binary) is rejected for key, or NULL when it may be handed to the driver. */
const char *clg_cl_cache_entry_check(const char *data, size_t len, const uint64_t key[2]);
/* mkdir -p; 0 on success. */
int clg_cl_mkdir_p(const char *path);
/* Writes head then body to path atomically: a temporary file in the same folder, fsync, rename.
 * 0 on success; otherwise -1, the temporary removed and err saying which step failed and why. */
int clg_cl_write_atomic(const char *path, const void *head, size_t head_len, const void *body, size_t body_len,
			char *err, size_t errlen);

/* Known-bad list and first-use self-test (cl_selftest.c): routes ops away from wrong results
 * once the op table is filled; never fails the open. */
void clg_cl_selftest_open(clg_backend *be);
void clg_cl_selftest_free(clg_backend *be);

/* ops */
void clg_cl_register_ops(clg_backend *be);
/* op families, each in cl_ops_<family>.c */
void clg_cl_register_conv(clg_backend *be);
void clg_cl_register_index(clg_backend *be);
void clg_cl_register_norm(clg_backend *be);
void clg_cl_register_optim(clg_backend *be);
void clg_cl_register_fused(clg_backend *be); /* cl_ops_fused.c */
void clg_cl_register_addnorm(clg_backend *be); /* cl_ops_addnorm.c */
void clg_cl_register_quant(clg_backend *be); /* cl_ops_quant.c */
void clg_cl_register_fft(clg_backend *be);   /* cl_ops_fft.c */
void clg_cl_fft_free(clg_backend *be);       /* destroys the backend's clFFT plans */
/* Which implementation runs an FFT of length n on this device, and why (static text). */
typedef enum { CLG_CL_FFT_CLFFT, CLG_CL_FFT_OWN, CLG_CL_FFT_NONE, CLG_CL_FFT_BLUESTEIN } clg_cl_fft_path;
clg_cl_fft_path clg_cl_fft_path_of(clg_backend *be, int64_t n, const char **why); /* batch 1 */
/* ... for batch rows of length n (the direct sum and Bluestein split by the work n^2 batch) */
clg_cl_fft_path clg_cl_fft_path_batch(clg_backend *be, int64_t n, int64_t batch, const char **why);
/* The plans made so far, one line each with the path it runs on, into buf; returns how many. */
int clg_cl_fft_plans(clg_backend *be, char *buf, size_t len);
void clg_cl_register_attention(clg_backend *be); /* cl_ops_attention.c */
clg_status clg_cl_gemm(clg_backend *be, const clg_op_call *c);
clg_status clg_cl_gemm_bias_act(clg_backend *be, const clg_op_call *c); /* GEMM_BIAS_ACT, cl_gemm.c */
/* GELU over contiguous float32 / float64 under the CPU shape of family fused (cl_ops_fused.c): whether
 * it applies, and the launch; the elementwise kernels otherwise */
int clg_cl_gelu_v16_fits(clg_backend *be, const clg_op_call *c);
clg_status clg_cl_gelu_v16(clg_backend *be, const clg_op_call *c);
/* bench step's recorder (clg_record.h): one launch of kernel k as enqueued (local NULL: the
 * driver's choice). Call only where be->recorder is set: it asks the kernel's name. */
void clg_cl_record(clg_backend *be, cl_kernel k, int dims, const size_t *global, const size_t *local);
clg_status clg_cl_row(clg_backend *be, const clg_op_call *c); /* softmax family, cl_ops_row.c */

/* Geometry of the ROW-kind kernels (softmax.cl's sgeom, norm.cl's ngeom: keep them in step). */
#define CLG_CL_ROW_NOPS 3 /* dst and up to two sources */
typedef struct {
	cl_int nd, C;
	cl_int shape[CLG_MAX_DIMS];
	cl_int off[CLG_CL_ROW_NOPS];
	cl_int st[CLG_CL_ROW_NOPS][CLG_MAX_DIMS];
	cl_int cst[CLG_CL_ROW_NOPS];
} clg_cl_row_geom;
/* The row geometry of nv operands of one shape (dst first): the last dim is the row; the leading
 * dims drop their size-1 entries and merge where contiguous in every operand. Returns the number
 * of rows (cl_ops_row.c). */
int64_t clg_cl_row_geometry(const clg_view *const *v, int nv, clg_cl_row_geom *g);
/* Launches program's "<op>_rows" kernel, one work-group per row: arguments (geometry, dst, src0,
 * src1, [eps = f[0] when with_eps,] local scratch of scratch_per_item ACC per work-item); or, where
 * the device's shape of family "row" is CPU, "<op>_rows_cpu", one work-item per row, whose last
 * argument is the number of rows instead of the scratch. */
clg_status clg_cl_row_launch(clg_backend *be, const clg_op_call *c, const char *program, int with_eps,
			     int scratch_per_item);
/* Rows a work-item in the CPU shape: 16 for softmax, log-softmax, layer norm (both ways) and the
 * cross-entropy forward over rows of C = 16, 32, 48 or 64 contiguous elements (<op>_rows16_cpu); 4,
 * where pipelined (log-softmax: log_softmax_rows4_cpu), over other contiguous rows of 16 or more;
 * else 1. Only where the blocks leave no compute unit idle; CLGRAD_ROWS16=0 never, =1 wherever
 * the rows allow (tests run both). */
int clg_cl_rows_per_item(clg_backend *be, int C, int contiguous, int64_t rows, int pipelined);

/* launch helpers (cl_ops.c) */
/* Fails unless dtype t is computable on this device (float32, float64 with fp64, float16 for the
 * ops that take it: clg_op_accepts_f16). */
clg_status clg_cl_check_dtype(clg_backend *be, const clg_op_call *c, clg_dtype t);
/* Fails unless every element of v's buffer is addressable with a 32-bit int. */
clg_status clg_cl_check_int_range(clg_backend *be, const clg_op_call *c, const clg_view *v);
clg_status clg_cl_set_args(clg_backend *be, cl_kernel k, const char *op, int n, const size_t *sizes,
			   const void *const *vals);
/* Enqueues items work-items (rounded up to a multiple of local) in groups of local. */
clg_status clg_cl_launch_1d(clg_backend *be, cl_kernel k, size_t items, size_t local, const char *op);
/* clEnqueueNDRangeKernel on the backend's queue (no offset, no events), its host time counted in
 * stats.enqueue_seconds */
cl_int clg_cl_enqueue(clg_backend *be, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local);

/* launch geometry from the device's limits (cl_launch.c) */
/* A legal 1-D work-group size for kernel k (NULL: the device's limits only): want when it is no
 * larger than CL_KERNEL_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_GROUP_SIZE and
 * CL_DEVICE_MAX_WORK_ITEM_SIZES[0], else the largest power of two below those (a maximum of 192
 * gives 128), so a power-of-two want stays one. Never 0. */
size_t clg_cl_local_size(clg_backend *be, cl_kernel k, size_t want);
/* For launches of independent work-items (no local memory sized by the group): local halved, not
 * below SPREAD_MIN (two NVIDIA warps, one AMD wavefront), while items would give fewer work-groups
 * than the device has compute units, so a launch that could fill a GPU spreads over all of them
 * (clgrad bench step --gpu counts the rest as idle). */
#define SPREAD_MIN 64
size_t clg_cl_spread(clg_backend *be, size_t items, size_t local);
/* Work-group size for a kernel that reduces n elements per group: clg_cl_local_size of the
 * backend's default, halved while still at least twice n. */
size_t clg_cl_group_size(clg_backend *be, cl_kernel k, int64_t n);
/* Bytes of local memory left for dynamic (__local argument) buffers of kernel k:
 * CL_DEVICE_LOCAL_MEM_SIZE less what the kernel declares itself (CL_KERNEL_LOCAL_MEM_SIZE). */
size_t clg_cl_local_mem_free(clg_backend *be, cl_kernel k);
/* Fails (CLG_ERR_UNSUPPORTED, naming op, device and sizes) unless bytes fit clg_cl_local_mem_free. */
clg_status clg_cl_check_local_mem(clg_backend *be, cl_kernel k, size_t bytes, const char *op);
/* Enqueues items[0] x items[1] work-items (each rounded up to a multiple of local) in groups of local. */
clg_status clg_cl_launch_2d(clg_backend *be, cl_kernel k, const size_t items[2], const size_t local[2],
			    const char *op);
/* The same, also halved until scratch_per_item bytes per work-item fit in the local memory the
 * device has beside what the kernel already uses (CL_DEVICE_LOCAL_MEM_SIZE, CL_KERNEL_LOCAL_MEM_SIZE). */
size_t clg_cl_group_size_local(clg_backend *be, cl_kernel k, int64_t n, size_t scratch_per_item);
/* Work-group size for CPU-shaped kernels (a work-item per row or output, `items` of them): small
 * enough to leave several groups per compute unit. */
size_t clg_cl_cpu_group_size(clg_backend *be, cl_kernel k, int64_t items);
/* Options of the row-family programs (softmax, norm, reduce): the dtype's, plus -DUSE_SUBGROUPS
 * (and OpenCL C 2.0 for cl_khr_subgroups) when the GPU shape runs on a device with sub-groups. */
void clg_cl_row_options(clg_backend *be, clg_dtype t, char *buf, size_t len);

/* 64-bit FNV-1a, chained: h = clg_hash64(h, data, n); start with CLG_HASH_SEED. */
#define CLG_HASH_SEED 0xcbf29ce484222325ULL
uint64_t clg_hash64(uint64_t h, const void *data, size_t n);

#endif
