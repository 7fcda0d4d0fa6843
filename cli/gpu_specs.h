/* Published GPU figures for the launch-geometry model of `clgrad bench step` (cli/gpu_specs.c). */
#ifndef CLGRAD_GPU_SPECS_H
#define CLGRAD_GPU_SPECS_H

typedef struct {
	const char *key;      /* --gpu name: h100, mi300x, a770, rx7900 */
	const char *name;
	int compute_units;    /* SMs / CUs / Xe-cores */
	int wave;             /* SIMD width work-items run in: warp, wavefront */
	double bandwidth_gbs; /* memory bandwidth, GB/s */
	double fp32_tflops;   /* vector fp32 peak, TFLOP/s */
	const char *source;   /* where the figures come from */
} gpu_spec;

/* The row for key, or NULL. */
const gpu_spec *gpu_spec_find(const char *key);

#endif
