/* Device measurements for `clgrad compare`: peak rates (measured the way clpeak does), the program
 * binary round trip, cold build and warm load time of each kernel program, and the rule that
 * throws away impossible timings.
 *
 * On an OpenCL device the peaks come from kernels_cl/peak.cl on a profiling queue of the device's
 * context (backend/opencl/cl_measure.c). On the reference backend they are the host's C
 * equivalents (backend/ref/ref_measure.c): a register multiply-add loop compiled with the
 * project's flags, memcpy and read bandwidth, upload / download of the reference backend (both
 * memcpy) and clg_run of a 1-element add as the launch latency. Functions that make no sense on
 * the reference backend (program builds) fail with CLG_ERR_UNSUPPORTED.
 */
#ifndef CLG_MEASURE_H
#define CLG_MEASURE_H

#include "clg_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CLG_MEASURE_MAX_REJECTED 32

/* A timing thrown away as a measurement error. */
typedef struct {
	char what[64];   /* e.g. "float8 rep 2" */
	double value;    /* the rate it implied (GFLOP/s, GB/s), or the time in us for latencies */
	char why[160];
} clg_measure_rejected;

typedef struct {
	/* best accepted rate; 0 where not measured (fp16 / fp64 absent, say) */
	double fp32_gflops, fp16_gflops, fp64_gflops;
	int fp32_width, fp16_width, fp64_width;  /* vector width of the best run */
	double bandwidth_gbs;                    /* max of copy and read */
	double copy_gbs, read_gbs;               /* device copy (read + write bytes), read only */
	double h2d_gbs, d2h_gbs;
	double launch_latency_us;                /* median, enqueue to completion */
	double resolution_s;     /* timer resolution: timings under 100 of these are rejected */
	int profiled;            /* kernel and transfer times from OpenCL event profiling */
	int scaled_down;         /* a slow device (a simulator): tiny sizes */
	char note[1024];         /* how it was measured */
	int nrejected;
	clg_measure_rejected rejected[CLG_MEASURE_MAX_REJECTED];
} clg_peak_result;

/* Measures be's peaks. quick: 0 full; 1 fewer vector widths, smaller buffers, fewer repetitions;
 * 2 tiny sizes, for a simulator (also chosen for a device named Oclgrind or with a slow launch). */
clg_status clg_measure_peaks(clg_backend *be, int quick, clg_peak_result *out);
/* The host equivalents; ref is a reference backend (for the upload, download and launch figures). */
clg_status clg_measure_host_peaks(clg_backend *ref, int quick, clg_peak_result *out);

/* The rejection rule. Returns 1, and says why, when a timing of `seconds` for `work` units (flops,
 * bytes) is impossible: not positive, shorter than 100 timer resolutions, or implying a rate
 * work / seconds above 1.1 x ceiling (checked only when ceiling > 0). Returns 0 otherwise. */
int clg_measure_implausible(double seconds, double work, double ceiling, double resolution_s, char *why,
			    size_t len);
/* The best accepted rate (work / time x unit: 1e-9 for G) of n timed repetitions of work units.
 * Each is checked by clg_measure_implausible against ceiling (none when <= 0), lowered to the
 * highest rate another repetition corroborates (the next lower one within 2 x; the median when
 * none is): a lone rate above that is a timer glitch. Rejections are appended to r; 0 when none
 * is accepted. */
double clg_measure_best(clg_peak_result *r, const char *what, const double *secs, int n, double work,
			double unit, double ceiling);
double clg_measure_median(const double *v, int n);
/* Appends a rejection to r (past CLG_MEASURE_MAX_REJECTED only the count grows). */
void clg_measure_reject(clg_peak_result *r, const char *what, double value, const char *why);

/* Program binaries round trip: takes kernels_cl/peak.cl as the library holds it (built, or loaded
 * from the disk cache), reads CL_PROGRAM_BINARIES, re-creates the program with
 * clCreateProgramWithBinary, builds it and checks the output of a kernel run from it. *ok: 1 / 0, or -1 when not applicable (the reference backend, or a driver
 * that offers no binaries); note says what happened. Returns an error only when it could not try. */
clg_status clg_binary_roundtrip(clg_backend *be, int *ok, char *note, size_t len);

/* The kernel programs the library embeds, NULL-terminated (NULL on the reference backend). */
const char *const *clg_measure_programs(clg_backend *be);
/* The options the library builds every program with on be (float32): "-DT=float ...". */
void clg_measure_program_options(clg_backend *be, char *buf, size_t len);

typedef struct {
	int ok;           /* the build succeeded */
	double seconds;   /* source to built program */
	char *log;        /* build log when !ok (malloc'd: free it), else NULL */
} clg_build_timing;

/* Builds one program from source with the library's options, bypassing the program cache (memory
 * and disk). A failed build is a result (ok = 0, with its log), not an error; errors are for not
 * being able to try (unknown program, no source, reference backend). */
clg_status clg_measure_cold_build(clg_backend *be, const char *program, clg_build_timing *out);

/* Warm load of n programs from the disk cache ($CLGRAD_CACHE_DIR) with the library's options.
 * Each program is requested through be: when that is this process's first load of it from disk,
 * its time is the figure (what a new process pays). A program be already held in memory (or had
 * to build: no entry yet) is loaded again on a second instance of be's device with empty program
 * caches (sharing be's context, so the driver may be faster than in a new process). seconds[i]:
 * the load time, or -1 when program i did not come from disk (cache disabled, or its build
 * failed: then ok[i] = 0 and log[i] the build log or message, malloc'd). ok and log may be NULL. */
clg_status clg_measure_warm_loads(clg_backend *be, const char *const *programs, int n, double *seconds, int *ok,
				  char **log);

/* Monotonic wall clock in seconds, and its resolution. */
double clg_measure_now(void);
double clg_measure_clock_resolution(void);

#ifdef __cplusplus
}
#endif
#endif
