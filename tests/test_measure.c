/* The measurements behind `clgrad compare` (backend/clg_measure.h) and its sections capabilities,
 * peaks, compile and roofline (compare/compare_*.c), on the reference backend and every OpenCL device:
 *   - the rejection rule throws away impossible timings (faked ones: a zero time, one under 100
 *     timer resolutions, a rate above the ceiling, a glitch far above the median) and keeps
 *     possible ones; the roofline section given faked tiny peaks rejects every point;
 *   - peaks are positive and plausible (fp32 above 1 GFLOP/s, bandwidth above 1 GB/s, launch
 *     latency below 1 s; fp64 measured exactly where the device has it);
 *   - program binaries round-trip on PoCL (null on the reference backend);
 *   - the compile section reports every program built, and a program from a CLGRAD_KERNEL_DIR copy
 *     with a syntax error as failed, with the compiler's build log;
 *   - the roofline section's GEMM points lie in (0, 1.1] of the bound from the measured peaks.
 * Sections write into memory and are parsed back with the CLI's JSON reader. */
#include "test_util.h"

#include "clg_measure.h"
#include "compare.h"
#include "json_read.h"

#include <math.h>
#include <string.h>

#ifndef CLG_TEST_KERNEL_SRC_DIR
#error "CMake passes the kernels_cl folder as CLG_TEST_KERNEL_SRC_DIR"
#endif

enum { S_CAPS, S_PEAKS, S_COMPILE, S_ROOFLINE };
static const char *const section_names[] = {"capabilities", "peaks", "compile", "roofline"};

/* Runs one section into memory and parses what it wrote (NULL, and a failed check, if invalid). */
static jv *run_section(int which, clg_backend *be, const compare_opts *o, compare_peak_values *pk)
{
	char *buf = NULL, err[200];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_writer w;
	jv *v;
	int rc = 0;
	double t0 = clg_measure_now();

	if (!f) {
		CHECK(0, "open_memstream failed");
		return NULL;
	}
	json_init(&w, f, 0);
	json_begin_object(&w);
	switch (which) {
	case S_CAPS: rc = compare_capabilities(&be->info, be, o, &w); break;
	case S_PEAKS: rc = compare_peaks(be, o, &w, pk); break;
	case S_COMPILE: rc = compare_compile(be, o, &w); break;
	default: rc = compare_roofline(be, o, pk, &w); break;
	}
	json_end_object(&w);
	fclose(f);
	printf("%s on '%s' (%.2f s): %s\n", section_names[which], be->info.name, clg_measure_now() - t0, buf);
	CHECK(rc == 0, "section %s on '%s' returned %d", section_names[which], be->info.name, rc);
	v = jv_parse(buf, err, sizeof(err));
	CHECK(v != NULL, "section %s wrote invalid JSON: %s", section_names[which], err);
	free(buf);
	return v;
}

static void check_rule(void)
{
	char why[160];
	clg_peak_result r;
	/* 10 ms per run except one 10x faster: a timer glitch */
	double secs[5] = {0.010, 0.011, 0.001, 0.010, 0.012}, best;

	CHECK(clg_measure_implausible(0, 1e9, 0, 1e-9, why, sizeof(why)), "a zero time accepted");
	CHECK(clg_measure_implausible(-1e-3, 1e9, 0, 1e-9, why, sizeof(why)), "a negative time accepted");
	CHECK(clg_measure_implausible(50e-9, 1, 0, 1e-9, why, sizeof(why)) && strstr(why, "100 timer"),
	      "50 ns with a 1 ns timer accepted (%s)", why);
	CHECK(clg_measure_implausible(1.0, 2e12, 1e12, 1e-9, why, sizeof(why)) && strstr(why, "ceiling"),
	      "2 TFLOP/s against a 1 TFLOP/s peak accepted (%s)", why);
	CHECK(!clg_measure_implausible(1.0, 1.05e12, 1e12, 1e-9, why, sizeof(why)), "105%% of the peak rejected: %s",
	      why);
	CHECK(!clg_measure_implausible(1e-3, 1e6, 0, 1e-9, why, sizeof(why)), "a plain timing rejected: %s", why);

	memset(&r, 0, sizeof(r));
	r.resolution_s = 1e-9;
	best = clg_measure_best(&r, "fake", secs, 5, 1e9, 1e-9, 0);
	CHECK(fabs(best - 100) < 1e-6, "best of the fake timings %g GFLOP/s, want 100 (the glitch thrown away)",
	      best);
	CHECK(r.nrejected == 1 && strstr(r.rejected[0].what, "rep 2") && fabs(r.rejected[0].value - 1000) < 1e-6,
	      "%d rejected, first '%s' %g", r.nrejected, r.nrejected ? r.rejected[0].what : "",
	      r.nrejected ? r.rejected[0].value : 0.0);
	/* 100, 30 and 10 GFLOP/s: no rate corroborates another; the median stands, 100 is thrown away */
	{
		double spread[3] = {0.01, 1.0 / 30, 0.1};
		memset(&r, 0, sizeof(r));
		r.resolution_s = 1e-9;
		best = clg_measure_best(&r, "spread", spread, 3, 1e9, 1e-9, 0);
		CHECK(fabs(best - 30) < 1e-6 && r.nrejected == 1, "spread: best %g, %d rejected", best, r.nrejected);
	}
	/* with a known ceiling of 50 GFLOP/s, nothing above 55 survives */
	memset(&r, 0, sizeof(r));
	r.resolution_s = 1e-9;
	best = clg_measure_best(&r, "fake", secs, 5, 1e9, 1e-9, 50e9);
	CHECK(best == 0 && r.nrejected == 5, "ceiling 50 GFLOP/s: best %g, %d rejected", best, r.nrejected);
}

/* The roofline section given impossible (tiny) peaks: every point lies far above its bound. */
static void check_roofline_rejects(clg_backend *ref)
{
	compare_opts o = {.quick = 1, .tiny = 1};
	compare_peak_values fake = {.fp32_gflops = 1e-6, .bandwidth_gbs = 1e-6};
	jv *v = run_section(S_ROOFLINE, ref, &o, &fake);

	if (!v)
		return;
	CHECK(jv_len(jv_get(v, "points")) == 0, "%d points plotted against impossible peaks", jv_len(jv_get(v, "points")));
	/* tiny: gemm, conv2d, add and the FFT point */
	CHECK(jv_len(jv_get(v, "rejected")) == 4, "%d of 4 points rejected", jv_len(jv_get(v, "rejected")));
	CHECK(strstr(jv_str(jv_path(v, "rejected.0.why"), ""), "ceiling") != NULL, "why: %s",
	      jv_str(jv_path(v, "rejected.0.why"), "(none)"));
	jv_free(v);
}

static void check_peaks(const jv *v, const clg_device_info *d)
{
	double fp32 = jv_num(jv_get(v, "fp32_gflops")), bw = jv_num(jv_get(v, "bandwidth_gbs"));
	double lat = jv_num(jv_get(v, "launch_latency_us"));
	double h2d = jv_num(jv_get(v, "h2d_gbs")), d2h = jv_num(jv_get(v, "d2h_gbs"));

	CHECK(fp32 > 1, "'%s': fp32 %g GFLOP/s", d->name, fp32);
	CHECK(bw > 1, "'%s': bandwidth %g GB/s", d->name, bw);
	CHECK(h2d > 0.1 && d2h > 0.1, "'%s': h2d %g, d2h %g GB/s", d->name, h2d, d2h);
	CHECK(lat > 0 && lat < 1e6, "'%s': launch latency %g us", d->name, lat);
	CHECK(d->has_fp64 == !jv_is_null(jv_get(v, "fp64_gflops")), "'%s': has_fp64 %d but fp64_gflops %g", d->name,
	      d->has_fp64, jv_num(jv_get(v, "fp64_gflops")));
	if (d->type == CLG_DEV_REF)
		CHECK(jv_is_null(jv_get(v, "fp16_gflops")), "reference: fp16 measured");
	else if (!d->has_fp16)
		CHECK(jv_is_null(jv_get(v, "fp16_gflops")), "'%s': fp16 measured without cl_khr_fp16", d->name);
	CHECK(jv_kind(jv_get(v, "rejected")) == JV_ARR, "no rejected array");
	CHECK(strlen(jv_str(jv_get(v, "note"), "")) > 20, "no note");
}

static void check_roofline(const jv *v, const clg_device_info *d)
{
	const jv *pts = jv_get(v, "points"), *rej = jv_get(v, "rejected");
	int ngemm = 0;

	for (int i = 0; i < jv_len(pts); i++) {
		const jv *p = jv_at(pts, i);
		double f = jv_num(jv_get(p, "fraction_of_peak"));
		if (strcmp(jv_str(jv_get(p, "kind"), ""), "gemm") != 0)
			continue;
		ngemm++;
		CHECK(f > 0 && f <= 1.1, "'%s': %s at %g of the roofline bound", d->name, jv_str(jv_get(p, "name"), "?"),
		      f);
	}
	/* A GEMM above the measured peak means the peak came out low on a busy machine: a timing,
	 * which a test must not assert (docs/PERFORMANCE.md holds the measurements). What must hold
	 * is that such a point is rejected with its reason instead of plotted above the roof. */
	for (int i = 0; i < jv_len(rej); i++) {
		const char *what = jv_str(jv_get(jv_at(rej, i), "what"), "");
		const char *why = jv_str(jv_get(jv_at(rej, i), "why"), "");
		if (strncmp(what, "gemm", 4) != 0)
			continue;
		ngemm++;
		CHECK(strstr(why, "ceiling") != NULL, "'%s': %s rejected without a reason ('%s')", d->name, what, why);
		printf("note: '%s': %s rejected (%s): the fp32 peak was measured low this time\n", d->name, what, why);
	}
	CHECK(ngemm >= 1, "'%s': no GEMM point measured", d->name);
	CHECK(jv_len(jv_get(v, "failed")) == 0, "'%s': %d points failed: %s", d->name, jv_len(jv_get(v, "failed")),
	      jv_str(jv_path(v, "failed.0.error"), ""));
}

/* Peaks in full mode (more samples, so the roofline bound is near the truth), the rest quick. */
static void check_device(int index)
{
	clg_backend *be = NULL;
	compare_opts o = {.quick = 0, .device_index = index};
	compare_peak_values pk = {0};
	const clg_device_info *d;
	int is_pocl;
	jv *v;

	CHECK_OK(clg_backend_open(index, &be));
	if (!be)
		return;
	d = &be->info;
	is_pocl = strstr(d->platform, "Portable Computing Language") != NULL;
	o.tiny = strstr(d->name, "Oclgrind") != NULL;

	if ((v = run_section(S_CAPS, be, &o, &pk))) {
		int rt = jv_bool(jv_get(v, "binary_roundtrip"));
		CHECK(!strcmp(jv_str(jv_get(v, "name"), ""), d->name), "capabilities name '%s'",
		      jv_str(jv_get(v, "name"), ""));
		if (d->type == CLG_DEV_REF)
			CHECK(jv_is_null(jv_get(v, "binary_roundtrip")), "reference: binary_roundtrip not null");
		else if (is_pocl)
			CHECK(rt == 1, "'%s': binary round trip %d: %s", d->name, rt,
			      jv_str(jv_get(v, "binary_roundtrip_note"), ""));
		else
			CHECK(rt != 0, "'%s': binary round trip failed: %s", d->name,
			      jv_str(jv_get(v, "binary_roundtrip_note"), ""));
		if (d->type != CLG_DEV_REF) {
			double ratio = jv_num(jv_get(v, "max_alloc_ratio"));
			CHECK(ratio > 0 && ratio <= 1, "'%s': max_alloc_ratio %g", d->name, ratio);
		}
		jv_free(v);
	}
	if ((v = run_section(S_PEAKS, be, &o, &pk))) {
		check_peaks(v, d);
		jv_free(v);
	}
	/* the roofline in quick mode, against the peaks just measured */
	o.quick = 1;
	if ((v = run_section(S_ROOFLINE, be, &o, &pk))) {
		check_roofline(v, d);
		jv_free(v);
	}
	if ((v = run_section(S_COMPILE, be, &o, &pk))) {
		const jv *progs = jv_get(v, "programs");
		if (d->type == CLG_DEV_REF) {
			CHECK(jv_len(progs) == 0 && jv_is_null(jv_get(v, "total_cold_s")), "reference: programs listed");
		} else {
			int n = 0;
			while (clg_measure_programs(be)[n])
				n++;
			CHECK(jv_len(progs) == n, "'%s': %d programs listed, %d embedded", d->name, jv_len(progs), n);
			for (int i = 0; i < jv_len(progs); i++) {
				const jv *p = jv_at(progs, i);
				CHECK(jv_bool(jv_get(p, "ok")) == 1 && jv_is_null(jv_get(p, "log")), "'%s': program %s: %s",
				      d->name, jv_str(jv_get(p, "name"), "?"), jv_str(jv_get(p, "log"), ""));
				CHECK(jv_num(jv_get(p, "warm_s")) > 0, "'%s': program %s not loaded from the disk cache",
				      d->name, jv_str(jv_get(p, "name"), "?"));
			}
			CHECK(jv_num(jv_get(v, "total_cold_s")) > 0, "'%s': no cold build timed", d->name);
		}
		jv_free(v);
	}
	clg_backend_close(be);
}

/* A copy of the kernels whose elementwise.cl has a syntax error: the compile section reports it
 * failed, with the build log, and every other program built. */
static void check_broken(int index)
{
	static const char broken[] = "__kernel void add_c(__global float *d)\n{\n"
				     "\td[0] = clgrad_measure_undeclared;\n\tint x = ;\n}\n";
	const char *const *names;
	clg_backend *be = NULL;
	compare_opts o = {.quick = 1, .device_index = index};
	clg_build_timing bt;
	char *dir = t_tmpdir(), path[4200];
	FILE *f;
	jv *v;

	CHECK(dir != NULL, "no temporary folder");
	if (!dir)
		return;
	CHECK_OK(clg_backend_open(index, &be));
	if (!be)
		goto out_free;
	names = clg_measure_programs(be);
	/* the good ones first, from the embedded sources */
	CHECK_OK(clg_measure_cold_build(be, "elementwise", &bt));
	CHECK(bt.ok && bt.seconds > 0 && !bt.log, "cold build of elementwise: ok %d, %g s", bt.ok, bt.seconds);
	free(bt.log);
	for (int i = 0; names && names[i]; i++) {
		char src[4200], dst[4200], buf[65536];
		FILE *in, *out;
		size_t n;
		snprintf(src, sizeof(src), "%s/%s.cl", CLG_TEST_KERNEL_SRC_DIR, names[i]);
		snprintf(dst, sizeof(dst), "%s/%s.cl", dir, names[i]);
		in = fopen(src, "rb");
		out = fopen(dst, "wb");
		CHECK(in && out, "copying %s", src);
		while (in && out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, n, out);
		if (in)
			fclose(in);
		if (out)
			fclose(out);
	}
	snprintf(path, sizeof(path), "%s/elementwise.cl", dir);
	f = fopen(path, "w");
	CHECK(f != NULL, "cannot write %s", path);
	if (f) {
		fputs(broken, f);
		fclose(f);
	}
	clg_config_set("KERNEL_DIR", dir);
	CHECK_OK(clg_measure_cold_build(be, "elementwise", &bt));
	CHECK(!bt.ok && bt.log && strstr(bt.log, "clgrad_measure_undeclared"), "broken elementwise: ok %d, log %s", bt.ok,
	      bt.log ? bt.log : "(none)");
	free(bt.log);
	if ((v = run_section(S_COMPILE, be, &o, NULL))) {
		const jv *progs = jv_get(v, "programs");
		int seen = 0;
		for (int i = 0; i < jv_len(progs); i++) {
			const jv *p = jv_at(progs, i);
			const char *name = jv_str(jv_get(p, "name"), "?");
			if (!strcmp(name, "elementwise")) {
				seen = 1;
				CHECK(jv_bool(jv_get(p, "ok")) == 0, "broken elementwise reported ok");
				CHECK(strstr(jv_str(jv_get(p, "log"), ""), "clgrad_measure_undeclared") != NULL,
				      "broken elementwise: log lacks the compiler's error: %s", jv_str(jv_get(p, "log"), "(null)"));
			} else {
				CHECK(jv_bool(jv_get(p, "ok")) == 1, "program %s from the copy failed: %s", name,
				      jv_str(jv_get(p, "log"), ""));
			}
		}
		CHECK(seen, "elementwise not listed");
		jv_free(v);
	}
	clg_config_set("KERNEL_DIR", NULL);
	clg_backend_close(be);
out_free:
	t_rmtree(dir);
	free(dir);
}

int main(void)
{
	const clg_device_info *list;
	int n;

	clg_config_set("KERNEL_DIR", NULL);
	check_rule();
	CHECK_OK(clg_devices(&list, &n));
	{
		clg_backend *ref = NULL;
		CHECK_OK(clg_backend_open(0, &ref));
		if (ref)
			check_roofline_rejects(ref);
		clg_backend_close(ref);
	}
	check_device(0);
	for (int i = 1; i < n; i++) {
		printf("device %d: %s (%s)\n", i, list[i].name, list[i].platform);
		check_device(i);
		if (!strstr(list[i].name, "Oclgrind"))
			check_broken(i);
	}
	if (n < 2)
		printf("no OpenCL device: the reference backend only\n");
	return t_finish("test_measure");
}
