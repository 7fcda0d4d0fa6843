/* What the tuner's files share (cl_tune_file.c: the CLBlast parameter tables, the tune file,
 * applying it; cl_tune.c: the search, clg_tune_run; cl_tune_clblast.c: CLBlast's search). The
 * short parameter names are CLBlast's own; only these three files see them. */
#ifndef CLG_CL_TUNE_INTERNAL_H
#define CLG_CL_TUNE_INTERNAL_H

#include "cl_tune.h"

#define TUNE_MAX_ENTRIES 64

/* CLBlast's parameters of Xgemm (NX), of XgemmDirect (ND), and GemmRoutine's one (its name) */
enum { GEMMK, KREG, KWG, KWI, MDIMA, MDIMC, MWG, NDIMB, NDIMC, NWG, SA, SB, STRM, STRN, VWM, VWN, NX };
enum { KWID, MDIMAD, MDIMCD, NDIMBD, NDIMCD, PADA, PADB, VWMD, VWND, WGD, ND };
extern const char *const clg_cl_tune_xg_names[NX];
extern const char *const clg_cl_tune_xd_names[ND];
extern const char *const clg_cl_tune_gr_name;

typedef struct {
	size_t max_wg, max_item[2], local_mem;
	int cpu; /* CPU devices: work-groups of at most 64 (PoCL builds large ones very slowly) */
} dev_limits;

typedef struct {
	int ta, tb;
	int64_t m, n, k, batch;
	clg_cl_gemm_impl impl;
	clg_cl_gemm_tile tile;
	double default_gflops, tuned_gflops;
	char label[40]; /* written as a comment; not read back */
} tune_entry;

/* A measured kernel shape of one family (`kshape` line): the faster shape, both times in us */
typedef struct {
	int has;
	clg_kernel_shape shape;
	double us_cpu, us_gpu;
} tune_kshape;

typedef struct {
	int has_xg, has_xd, has_gr;
	size_t xg[NX], xd[ND], gr;
	tune_entry e[TUNE_MAX_ENTRIES];
	int ne;
	tune_kshape ks[CLG_KFAM_COUNT];
	int has_fftconv;
	clg_tune_fft_conv fftconv;  /* `fftconv` line: conv1d through the FFT from this kernel size */
	int has_owndef;
	clg_cl_gemm_tile owndef;    /* `owndefault` line: the untuned tile the shapes were measured against */
	int gemm_wg;                /* `gemmwg` line: gemm_op's work-items a group (0: no line) */
	double gemm_wg_ms[2];       /* the measured shapes' summed times at 1 and at gemm_wg, ms */
} tune_data;

typedef struct {
	clg_tune_shape *r;              /* the report's row */
	clg_buffer *a, *b, *c;
	float *ha, *hb, *ref;           /* host copies of A, B; the checked result */
	size_t na, nb, nc;
	clg_op_call call;
	int usable;                     /* the reference result exists */
	int dot;                        /* the own kernels run gemm_dot (only B transposed) */
	double t_default;               /* seconds, untuned (the device's default implementation) */
	double t_own_def, t_own;        /* own kernels: default tile, best tile */
	double t_cb_default, t_cb;      /* CLBlast: default parameters, the kept tuned ones */
	double t_ind, t_dir;            /* best Xgemm (indirect) and XgemmDirect times during the search */
	double t_ind_cand, t_dir_cand;  /* this candidate's */
	clg_cl_gemm_tile own_tile;
} tshape;

typedef struct {
	clg_backend *be;
	const clg_tune_options *o;
	clg_tune_report *r;
	tshape s[CLG_TUNE_MAX_SHAPES];
	int n;
	double t0, budget;
	clg_cl_gemm_tile def_tile;
	dev_limits L;
	unsigned rng;
	cl_command_queue saved_queue; /* the backend's queue, while the tuner runs on a profiling one */
} tuner;

typedef struct {
	int direct;             /* searching XgemmDirect (else Xgemm) */
	size_t best[NX];        /* best parameters (ND used for direct) */
	double best_score;      /* geometric mean GFLOP/s */
	int have;
	int touched;            /* CLBlast's parameters were overridden by the search */
} cb_search;

/* cl_tune_file.c */
/* Whether Xgemm parameters p are legal (CLBlast's rules) and fit the device's limits. */
int clg_cl_tune_xg_legal(const size_t *p, const dev_limits *L);
/* Whether XgemmDirect parameters p are legal (CLBlast's rules) and fit the device's limits. */
int clg_cl_tune_xd_legal(const size_t *p, const dev_limits *L);
/* Parses a tune file's text (len bytes, modified in place) into d for be's device (its info only)
 * and limits L; NULL, or why the file is rejected. */
const char *clg_cl_tune_parse(clg_backend *be, char *text, size_t len, tune_data *d, const dev_limits *L);
/* The work-group and local memory limits of be's device. */
void clg_cl_tune_limits_of(clg_backend *be, dev_limits *L);
/* "NAME=V NAME=V ..." of n parameters into buf. */
void clg_cl_tune_params_str(const char *const *names, const size_t *v, int n, char *buf, size_t len);
/* Overrides CLBlast's float32 parameters of one kernel on be's device. */
clg_status clg_cl_tune_clblast_set(clg_backend *be, const char *kernel, const char *const *names, const size_t *v,
				   int n);
/* Writes d (with the shapes' labels as comments) to path atomically. */
clg_status clg_cl_tune_store_file(clg_backend *be, const char *path, const tune_data *d);
/* The tune result this process uses for be's device (loading it first): 1 and *out, else 0. */
int clg_cl_tune_current(clg_backend *be, tune_data *out);
/* From now on this process uses d (just stored at path) for be's device. */
void clg_cl_tune_use(clg_backend *be, const tune_data *d, const char *path);
/* Whether be is an OpenCL device (not the reference backend). */
int clg_cl_tune_is_opencl(clg_backend *be);
/* A tile as "TMxTN/VW dot DMxDN". */
void clg_cl_tune_tile_str(const clg_cl_gemm_tile *t, char *buf, size_t len);

/* cl_tune.c */
/* Seconds since the search started. */
double clg_cl_tune_elapsed(const tuner *t);
/* A progress line (with the elapsed time) to the caller's callback, if any. */
void clg_cl_tune_say(tuner *t, const char *fmt, ...) CLG_PRINTF(2, 3);
/* A pseudo-random number in [0, n) from the search's seeded generator. */
unsigned clg_cl_tune_rnd(tuner *t, unsigned n);
/* GFLOP/s of shape s computed in secs (0 when secs is not positive). */
double clg_cl_tune_gflops_of(const clg_tune_shape *s, double secs);
/* Times and checks one configuration on one shape: *secs, or 0 and *why (see its definition). */
void clg_cl_tune_measure(tuner *t, tshape *x, clg_cl_gemm_impl impl, const clg_cl_gemm_tile *tile, double abort_over,
			 double *secs, const char **why);

/* cl_tune_clblast.c */
/* Measures CLBlast as configured on the shapes; geometric mean GFLOP/s, 0 on a failure (*why). */
double clg_cl_tune_clblast_pass(tuner *t, size_t slot, int all, double lo_mnk, double hi_mnk, double hard_stop,
				const char **why);
/* One phase of the CLBlast search (Xgemm, or XgemmDirect), until the given time. */
void clg_cl_tune_search_clblast_kernel(tuner *t, cb_search *cs, double until, double *compile_est);
/* The GemmRoutine threshold T (m*n*k < T^3 runs XgemmDirect) the measured times favour. */
size_t clg_cl_tune_pick_threshold(const tuner *t);

/* cl_tune_kshape.c */
/* Measures each kernel family's two shapes (checked against the reference backend) until the
 * given time and records the faster right one in d->ks; the shapes in force are restored. */
void clg_cl_tune_kernel_shapes(tuner *t, double until, tune_data *d);

/* cl_tune_wg.c */
/* Measures gemm_op's work-group width along q over the shapes that run it (each timed at 1 in step
 * 1 of the search), until the given time, and records a width clearly faster than 1 in
 * d->gemm_wg; leaves cl->gemm_wg at the width kept (0: one) and the shapes' own times under it. */
void clg_cl_tune_gemm_wg(tuner *t, double until, tune_data *d);

#endif
