/* GEMM tuning for an OpenCL device (`clgrad tune`).
 *
 * clg_tune_run() measures float32 GEMM on the shapes training makes (and square ones) with:
 *   - clgrad's own kernels (kernels_cl/gemm.cl) under several register tiles;
 *   - CLBlast under its default parameters and under candidates of a bounded random + greedy
 *     search over legal Xgemm / XgemmDirect parameters (set with CLBlastOverrideParameters), plus
 *     the size at which CLBlast switches from XgemmDirect to Xgemm (GemmRoutine);
 * and per shape keeps the faster implementation (a change from the device's default needs a
 * clear margin, so noise does not flip choices). Every candidate's result is compared with the
 * own kernels' default result (itself checked on the host): a candidate that computes wrong
 * numbers is rejected and never stored.
 *
 * The result is a small text file in the cache folder ($CLGRAD_CACHE_DIR, else
 * $XDG_CACHE_HOME/clgrad, else ~/.cache/clgrad), named after a hash of the platform, its version,
 * the device name and the driver version (which the file repeats and the loader checks), written
 * to a temporary name and renamed. The OpenCL backend loads it when it opens the device and
 * applies it: CLBlast parameters, per shape (a stored shape or a near one with the same layout)
 * the GEMM implementation and tile, and per kernel family the shape measured faster (before the
 * GEMM search, each family's representative op is timed under both kernel shapes and checked
 * against the reference backend; backend/opencl/cl_tune_kshape.c). A missing, corrupt or foreign file is ignored (with a
 * CLGRAD_DEBUG message). $CLGRAD_TUNE=0 ignores stored results; $CLGRAD_GEMM and
 * $CLGRAD_GEMM_TILE still win over them.
 *
 * Note: CLBlast offers no way back to its defaults once parameters are overridden, so after a
 * search the process keeps the best CLBlast parameters found (or, when none beat the defaults,
 * the last candidate tried); processes started later apply what was stored.
 */
#ifndef CLG_TUNE_H
#define CLG_TUNE_H

#include "clg_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	CLG_TUNE_SHAPES_TRAINING = 1, /* the MLP's and the CNN's products at batch 128 */
	CLG_TUNE_SHAPES_SQUARE = 2,   /* 256^3, 512^3, 1024^3 */
	CLG_TUNE_SHAPES_ALL = 3,
	CLG_TUNE_SHAPES_SMALL = 4,    /* a few small shapes (tests) */
} clg_tune_shapes;

typedef struct {
	double budget_s;         /* no new candidate starts after this many seconds; <= 0: 60 */
	clg_tune_shapes shapes;  /* 0: all */
	int dry_run;             /* measure and report; store nothing, apply nothing */
	unsigned seed;           /* of the random search (same seed, same candidates) */
	/* one line of progress (no newline) per step; NULL: quiet */
	void (*progress)(void *user, const char *line);
	void *user;
} clg_tune_options;

#define CLG_TUNE_MAX_SHAPES 32

typedef struct {
	char label[40];              /* where the shape comes from */
	int64_t m, n, k, batch;      /* C (batch, m, n) = op(A) @ op(B) */
	int ta, tb;                  /* operand stored transposed */
	int shared_a, cols_b;        /* A batch stride 0; B_b = columns of one (K, batch*N) matrix */
	double default_gflops;       /* untuned: the device's default implementation and tile */
	double own_gflops;           /* own kernels, best tile (0: not measured) */
	double clblast_default_gflops; /* 0: not measured */
	double clblast_gflops;       /* CLBlast with the best parameters found (0: not measured) */
	double tuned_gflops;         /* the choice */
	int is_default;              /* the choice is the default configuration (tuned = default) */
	char choice[16];             /* "own" or "clblast" */
	char tile[32];               /* own tile "TMxTN/VW dot DMxDN" */
} clg_tune_shape;

typedef struct {
	int nshapes;
	clg_tune_shape shape[CLG_TUNE_MAX_SHAPES];
	int candidates;              /* configurations measured (own tiles and CLBlast parameters) */
	int rejected;                /* of which failed to build or run, or computed wrong numbers */
	double elapsed_s;
	int clblast_tuned;           /* CLBlast parameters were searched and stored */
	char clblast_xgemm[256];     /* "MWG=64 NWG=64 ..." or "" */
	char clblast_direct[256];
	unsigned long min_indirect;  /* XGEMM_MIN_INDIRECT_SIZE, 0 when not tuned */
	int stored;                  /* the file was written */
	char path[1024];             /* the tune file (where it was or would be written) */
} clg_tune_report;

/* Runs the search on an OpenCL device (CLG_ERR_UNSUPPORTED on the reference backend), stores the
 * result unless dry_run, and applies it to this process. */
clg_status clg_tune_run(clg_backend *be, const clg_tune_options *o, clg_tune_report *r);

/* The tune file of this device (it may not exist); CLG_ERR_IO when there is no cache folder. */
clg_status clg_tune_file_path(clg_backend *be, char *buf, size_t len);

typedef struct {
	int loaded;            /* a tune file was found valid and applied */
	int nshapes;           /* shape entries in it */
	int clblast_params;    /* it set CLBlast parameters */
	int disabled;          /* $CLGRAD_TUNE=0 */
	char path[1024];
	char note[256];        /* why nothing was loaded, or what of it was not, when so */
} clg_tune_state;

/* Loads (once per device and process) and reports the stored tune result of this device. */
clg_status clg_tune_state_of(clg_backend *be, clg_tune_state *out);

/* Which implementation a float32 GEMM of this shape runs with on this device, as a word
 * ("own 6x16/8 dot 4x3 (tuned)", "clblast (default)", "ref"). */
clg_status clg_tune_gemm_choice(clg_backend *be, int64_t m, int64_t n, int64_t k, int64_t batch, int ta, int tb,
				char *buf, size_t len);

/* The FFT convolution crossover of a device (`clgrad tune`, cli/conv_fft_time.c): conv1d of a
 * kernel size >= min_k runs through the FFT (frontend/conv_choice.c), below it im2col + GEMM;
 * min_k = 0: the FFT was slower at every kernel size measured. Stored as a `fftconv` line of the
 * tune file; the times at the largest kernel size measured are kept for reports. */
typedef struct {
	int min_k;
	int k_max;              /* the largest kernel size measured */
	double us_fft, us_im2col; /* at k_max */
} clg_tune_fft_conv;

/* Stores c in the device's tune file (keeping what it holds) and uses it from now on in this
 * process; CLG_ERR_UNSUPPORTED on the reference backend. */
clg_status clg_tune_store_fft_conv(clg_backend *be, const clg_tune_fft_conv *c);
/* The stored crossover of be's device: 1 and *c, else 0 (none stored, CLGRAD_TUNE=0, reference). */
int clg_tune_fft_conv_of(clg_backend *be, clg_tune_fft_conv *c);

/* A float32 GEMM operand view over buf: (rows, cols), stored transposed when trans, rows ld
 * apart (0: packed), with a leading batch dim of batch_stride when batch > 1 (the layouts
 * clgrad tune and clgrad bench measure). */
void clg_gemm_operand_view(clg_view *v, clg_buffer *buf, int64_t batch, int64_t rows, int64_t cols, int trans,
			   int64_t batch_stride, int64_t ld);

#ifdef __cplusplus
}
#endif
#endif

