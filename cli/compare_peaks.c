/* compare section "peaks": the device's peak rates, measured as clpeak does (backend/clg_measure.h):
 * fp32 / fp16 / fp64 multiply-add rate, global memory bandwidth, host <-> device transfer rates and
 * kernel launch latency. On the reference device they are the host's C equivalents. */
#include "compare.h"

#include "clg_measure.h"

#include <math.h>
#include <stdio.h>

static void key_rate(json_writer *w, const char *key, double v)
{
	/* 0: not measured (a type the device lacks, or nothing accepted) */
	json_key(w, key);
	if (v > 0)
		json_num(w, v);
	else
		json_null(w);
}

int compare_peaks(clg_backend *dev, const compare_opts *o, json_writer *w, compare_peak_values *out)
{
	clg_peak_result r;
	clg_status st;

	*out = (compare_peak_values){0};
	st = clg_measure_peaks(dev, o->tiny ? 2 : o->quick ? 1 : 0, &r);
	if (st) {
		json_key_str(w, "error", clg_last_error());
		return 1;
	}
	out->fp32_gflops = r.fp32_gflops;
	out->fp16_gflops = r.fp16_gflops;
	out->fp64_gflops = r.fp64_gflops;
	out->bandwidth_gbs = r.bandwidth_gbs;
	out->h2d_gbs = r.h2d_gbs;
	out->d2h_gbs = r.d2h_gbs;
	out->launch_latency_us = r.launch_latency_us;

	key_rate(w, "fp32_gflops", r.fp32_gflops);
	key_rate(w, "fp16_gflops", r.fp16_gflops);
	key_rate(w, "fp64_gflops", r.fp64_gflops);
	key_rate(w, "bandwidth_gbs", r.bandwidth_gbs);
	key_rate(w, "h2d_gbs", r.h2d_gbs);
	key_rate(w, "d2h_gbs", r.d2h_gbs);
	key_rate(w, "launch_latency_us", r.launch_latency_us);
	json_key(w, "vector_width");
	json_begin_object(w);
	json_key_int(w, "fp32", r.fp32_width);
	json_key_int(w, "fp16", r.fp16_width);
	json_key_int(w, "fp64", r.fp64_width);
	json_end_object(w);
	key_rate(w, "copy_gbs", r.copy_gbs);
	key_rate(w, "read_gbs", r.read_gbs);
	json_key_bool(w, "profiled", r.profiled);
	json_key_bool(w, "scaled_down", r.scaled_down);
	json_key_num(w, "timer_resolution_s", r.resolution_s);
	json_key(w, "rejected");
	json_begin_array(w);
	for (int i = 0; i < r.nrejected && i < CLG_MEASURE_MAX_REJECTED; i++) {
		json_begin_object(w);
		json_key_str(w, "what", r.rejected[i].what);
		json_key_num(w, "value", r.rejected[i].value);
		json_key_str(w, "why", r.rejected[i].why);
		json_end_object(w);
	}
	json_end_array(w);
	if (r.nrejected > CLG_MEASURE_MAX_REJECTED)
		json_key_int(w, "rejected_not_listed", r.nrejected - CLG_MEASURE_MAX_REJECTED);
	json_key_str(w, "note", r.note);
	return 0;
}
