/* compare section "peaks": the device's peak rates, measured as clpeak does (backend/clg_measure.h):
 * fp32 / fp16 / fp64 multiply-add rate, global memory bandwidth, host <-> device transfer rates and
 * kernel launch latency. On the reference device they are the host's C equivalents. Plus the FFT
 * rate (float32 complex-to-complex, length 1024, 5 N log2 N flops per transform, best of a few
 * warm calls) and which FFT implementation the device runs it with ("clfft", "planar", "own",
 * "bluestein" or "reference"; backend/clg_fft.h). */
#include "compare.h"

#include "clg_fft.h"
#include "clg_measure.h"

#include <stdlib.h>
#include <string.h>

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

/* clg_fft_path's words as the report's short ones */
static const char *fft_path_word(const char *p)
{
	return !strcmp(p, "clFFT") ? "clfft" : !strcmp(p, "clFFT planar") ? "planar" : !strcmp(p, "own kernels") ? "own"
	       : !strcmp(p, "Bluestein") ? "bluestein" : !strcmp(p, "reference") ? "reference" : p;
}

/* GFLOP/s of a forward float32 C2C transform of (batch, n) rows (best of reps after a warm-up), and
 * the path it took; 0 and the error in *path on a failure */
static double fft_rate(clg_backend *be, int64_t n, int64_t batch, int reps, const char **path)
{
	size_t elems = (size_t)(batch * n * 2);
	clg_buffer *in = NULL, *out = NULL;
	float *h = malloc(sizeof(float) * elems);
	clg_op_call c = {.op = CLG_OP_FFT_C2C};
	double best = 0;

	*path = NULL;
	if (!h || clg_buffer_alloc(be, sizeof(float) * elems, &in) || clg_buffer_alloc(be, sizeof(float) * elems, &out))
		goto out;
	for (size_t i = 0; i < elems; i++)
		h[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
	if (clg_buffer_upload(in, 0, h, sizeof(float) * elems) || clg_synchronize(be))
		goto out;
	clg_view_contiguous(&c.src[0], in, CLG_F32, 3, (int64_t[]){batch, n, 2});
	clg_view_contiguous(&c.dst, out, CLG_F32, 3, (int64_t[]){batch, n, 2});
	c.f[0] = 1;
	for (int r = -1; r < reps; r++) {
		double t0 = clg_measure_now(), s;
		if (clg_run(be, &c) || clg_synchronize(be)) {
			best = 0;
			goto out;
		}
		s = clg_measure_now() - t0;
		if (r >= 0 && s > 0 && (best == 0 || s < best))
			best = s;
	}
	*path = fft_path_word(clg_fft_path_batch(be, CLG_OP_FFT_C2C, n, batch, NULL));
	best = best > 0 ? 5.0 * (double)n * 10.0 * (double)batch / best * 1e-9 : 0; /* log2 1024 = 10 */
out:
	clg_buffer_free(in);
	clg_buffer_free(out);
	free(h);
	return best;
}

int compare_peaks(clg_backend *dev, const compare_opts *o, json_writer *w, compare_peak_values *out)
{
	const char *fft_path;
	double fft_gflops;
	int is_ref = !strcmp(dev->iface->kind, "ref");
	int64_t fft_batch = o->tiny ? 2 : o->quick || is_ref ? 16 : 256;

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
	fft_gflops = fft_rate(dev, 1024, fft_batch, o->tiny ? 1 : 3, &fft_path);
	key_rate(w, "fft_gflops", fft_gflops);
	json_key_str(w, "fft_path", fft_path);
	json_key_int(w, "fft_batch", fft_batch);
	if (!fft_path)
		json_key_str(w, "fft_error", clg_last_error());
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
