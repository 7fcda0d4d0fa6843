/* GEMM tuning inside the OpenCL backend: what cl_gemm.c (the GEMM itself), cl_selftest.c and the
 * tuner (cl_tune_file.c: the tune file, applying it; cl_tune.c: the search; cl_tune_clblast.c)
 * share. The tuner's own types are in cl_tune_internal.h; the public side is backend/clg_tune.h. */
#ifndef CLG_CL_TUNE_H
#define CLG_CL_TUNE_H

#include "cl_internal.h"
#include "clg_tune.h"

typedef enum { CLG_CL_GEMM_AUTO, CLG_CL_GEMM_CLBLAST, CLG_CL_GEMM_OWN } clg_cl_gemm_impl;

/* Tile of the own kernels (kernels_cl/gemm.cl): gemm_op TM x TN in vectors of VW; gemm_dot DM x DN. */
typedef struct {
	int tm, tn, vw;
	int dm, dn;
} clg_cl_gemm_tile;

/* The untuned tile for this device and dtype (from its preferred vector width). */
void clg_cl_gemm_default_tile(clg_backend *be, clg_dtype t, clg_cl_gemm_tile *g);
/* Whether a tile is one the kernels accept (TN a multiple of VW, sizes in range). */
int clg_cl_gemm_tile_valid(const clg_cl_gemm_tile *g);
/* Whether the own CPU GEMM runs A @ B^T (A as stored) as gemm_op on B^T packed (else gemm_dot). */
int clg_cl_gemm_op_for_bt(int64_t M, int64_t N, int64_t K);
/* Work-items a work-group along q (dim 1) of gemm_op and gemm_op_bias_act: $CLGRAD_GEMM_WG, else
 * the device's measured `gemmwg` (cl->gemm_wg), else 1. */
int clg_cl_gemm_op_wg(clg_backend *be);
/* A GEMM call (already checked, as clg_cl_gemm checks it) with one implementation forced and,
 * for the own kernels, the given tile (NULL: the default tile). For the tuner; ignores
 * $CLGRAD_GEMM, $CLGRAD_GEMM_TILE and stored tune results. */
clg_status clg_cl_gemm_forced(clg_backend *be, const clg_op_call *c, clg_cl_gemm_impl impl,
			      const clg_cl_gemm_tile *tile);

/* What the stored tune result says for a float32 GEMM of this shape: 1 and *impl, *tile when an
 * entry applies (same layout, same batching, a near shape), else 0. Loads and applies the tune
 * file (CLBlast parameters included) on the first call for a device; never fails (a bad file is
 * ignored with a CLGRAD_DEBUG message). ta, tb: operand stored transposed. */
int clg_cl_tune_lookup(clg_backend *be, int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t batch,
		       clg_cl_gemm_impl *impl, clg_cl_gemm_tile *tile);

/* Applies the kernel shapes the tune file of be's device stores (loading it first) through
 * clg_backend_set_kernel_shape; CLGRAD_KERNEL_SHAPE still wins, CLGRAD_TUNE=0 skips them. At
 * device open. */
void clg_cl_tune_apply_shapes(clg_backend *be);

/* CLBlast's GemmRoutine switch (cl_clblast.c): products with m*n*k < T^3 run its XgemmDirect
 * kernel, larger ones its indirect path. The T in force for be's device and dtype (float32 or
 * float64), tune file or override included. */
clg_status clg_cl_clblast_min_indirect(clg_backend *be, clg_dtype t, size_t *T);
/* Sets T (CLBlastOverrideParameters; 1 sends every product to the indirect path). */
clg_status clg_cl_clblast_set_min_indirect(clg_backend *be, clg_dtype t, size_t T);
/* Applies $CLGRAD_GEMM_MIN_INDIRECT=T (float32 and float64), if set, once per backend. */
clg_status clg_cl_clblast_env_min_indirect(clg_backend *be);

#endif
