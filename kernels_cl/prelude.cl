/* Prepended by the host to every kernel program (backend/opencl/cl_program.c); not a program.
 * Holds what every program shares:
 *   - the cl_khr_fp64 pragma when the host asks for double (-DUSE_FP64; the host passes it only to
 *     devices that report fp64);
 *   - element access: LOAD(p, i) reads element i of p as ACC, STORE(p, i, v) writes ACC v there.
 *     With -DUSE_HALF_STORAGE (T=half, ACC=float) through core OpenCL C 1.2's vload_half /
 *     vstore_half_rte: half is storage only (no half-precision extension needed), float32
 *     arithmetic, one rounding to nearest even on store. Otherwise plain indexing;
 *   - MAXD, the most dims a geometry struct describes (CLG_MAX_DIMS on the host). */
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifdef USE_HALF_STORAGE
#define LOAD(p, i) vload_half((size_t)(i), (p))
#define STORE(p, i, v) vstore_half_rte((ACC)(v), (size_t)(i), (p))
#else
#define LOAD(p, i) ((ACC)(p)[i])
#define STORE(p, i, v) ((p)[i] = (T)(v))
#endif

#define MAXD 6
