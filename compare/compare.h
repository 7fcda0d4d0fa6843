/* clgrad compare: the contract between the driver (cmd_compare.c: child process per device,
 * watchdog, merge, reports, scores) and the sections each child runs on its device.
 *
 * A child ("clgrad compare --worker INDEX ...") opens one device, runs the selected sections in
 * the order below and writes one JSON file:
 *   { "schema": "clgrad-compare-device/1", "device": {"index": i, "name": s, "type": s},
 *     "sections": { "<section>": { ...members the section wrote..., "elapsed_s": x }, ... },
 *     "elapsed_s": x }
 * The driver opens and closes each section's object (and adds "elapsed_s"); a section writes
 * only its members. A section returns 0 when it ran (its findings, failures included, are in
 * its members) and nonzero when it could not run at all; it then has written "error": message.
 * Every section must also work on the reference device (index 0): where a measurement makes no
 * sense there (compile times, say) it writes null and says why in "note".
 *
 * Section members (the driver's reports and scores read exactly these; add members freely, but
 * change none of these without changing the driver, docs/COMPARE.md and the schema check):
 *
 * capabilities: every clg_device_info field under its own name (platform, platform_vendor,
 *   vendor, name, cl_version, clc_version, driver_version, extensions (array of names),
 *   compute_units, clock_mhz, global_mem, local_mem,
 *   max_alloc, max_wg_size, timer_resolution_ns, has_fp16, has_fp64, has_subgroups,
 *   has_int_dot, has_il), plus "max_alloc_ratio" (max_alloc / global_mem) and
 *   "binary_roundtrip" (true / false / null when not applicable) with "binary_roundtrip_note".
 * peaks: "fp32_gflops", "fp16_gflops", "fp64_gflops" (null where the type is absent),
 *   "bandwidth_gbs", "h2d_gbs", "d2h_gbs", "launch_latency_us", "fft_gflops" (float32 C2C of
 *   length 1024, "fft_batch" rows) and "fft_path" ("clfft"|"planar"|"own"|"bluestein"|
 *   "reference": the FFT implementation the device runs it with; null with "fft_error" when it
 *   failed), and "rejected": array of
 *   {"what", "value", "why"} for timings thrown away as impossible (above the measured peak).
 * compile: "programs": array of {"name", "ok", "cold_s", "warm_s", "log"} (log: build log when
 *   the build failed, else null), "total_cold_s", "total_warm_s", "driver_cache_disabled" (bool).
 * roofline: "points": array of {"name", "kind" ("gemm"|"conv"|"ew"|"fft"), "flops", "bytes",
 *   "seconds", "gflops", "gbs", "intensity" (flops/byte), "fraction_of_peak" (of the roofline
 *   bound min(fp32 peak, intensity * bandwidth))}.
 * ops: "ops": array of {"op" (name; " f16" suffix for the float16 cases), "pass", "fail",
 *   "unsupported", "worst_err", "threshold"}; "grad": array of {"case", "ok", "worst_rel_err",
 *   "tol"} ("ok": null where the device cannot run the case); "totals": {"pass", "fail",
 *   "unsupported", "grad_pass", "grad_fail"}; "routed": array of {"op", "action"
 *   ("fallback"|"unsupported"), "why"} from the device's self-test and known-bad list.
 * train: "runs": array of {"model" ("mlp"|"cnn"|"transformer"), "steps", "batch", "losses"
 *   (array, one per step, same seed and batches on every device), "step_ms_median",
 *   "samples_per_s", "repeat_identical" (the run repeated gives bit-identical losses), "error"
 *   (null or message)}. The driver computes each run's divergence from the reference device's
 *   losses (max relative difference over the steps).
 */
#ifndef CLGRAD_COMPARE_H
#define CLGRAD_COMPARE_H

#include "json_write.h"

#include <clgrad.h>
#include <clg_backend_impl.h> /* the comparison reads backends' fields */

typedef struct {
	int quick;              /* --quick: the whole run in under 2 minutes */
	const char *out_dir;    /* the run's folder: a section may write files under it */
	const char *data_dir;   /* Fashion-MNIST IDX files (train section) */
	int device_index;       /* this child's device (position in clg_devices) */
	int tiny;               /* a simulator (Oclgrind): use the smallest workloads there are */
} compare_opts;

/* Peak rates of one device, from the peaks section; the roofline section reads them. Zero where
 * unmeasured. */
typedef struct {
	double fp32_gflops, fp16_gflops, fp64_gflops;
	double bandwidth_gbs, h2d_gbs, d2h_gbs, launch_latency_us;
} compare_peak_values;

/* ref: the reference backend (always open); dev: the device under test (may be ref itself). */
/* dev NULL: only what the device list knows (written before the device is opened, so that a
 * device that crashes while opening still reports its capabilities) */
int compare_capabilities(const clg_device_info *d, clg_backend *dev, const compare_opts *o, json_writer *w);
int compare_peaks(clg_backend *dev, const compare_opts *o, json_writer *w, compare_peak_values *out);
int compare_compile(clg_backend *dev, const compare_opts *o, json_writer *w);
int compare_roofline(clg_backend *dev, const compare_opts *o, const compare_peak_values *peaks,
		     json_writer *w);
int compare_ops(clg_backend *ref, clg_backend *dev, const compare_opts *o, json_writer *w);
int compare_train(clg_backend *ref, clg_backend *dev, const compare_opts *o, json_writer *w);
/* "train_seed" and "train" (each run's model, steps, batch and sizes) of a mode, for the
 * workload in report.json (compare/compare_workload.c) */
void compare_train_workload(int quick, json_writer *w);

#endif
