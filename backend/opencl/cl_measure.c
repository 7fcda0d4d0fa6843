/* Device measurements for `clgrad compare` (see clg_measure.h): peaks from kernels_cl/peak.cl
 * timed on a profiling queue of the device's context, the program binary round trip, and cold
 * build / warm load times of the embedded programs. */
#include "cl_internal.h"
#include "../clg_measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_cl(clg_backend *be) { return be && be->iface && !strcmp(be->iface->kind, "opencl"); }

/* State of one peaks measurement. */
typedef struct {
	clg_backend *be;
	clg_cl *cl;
	cl_command_queue q;  /* in-order, profiling enabled */
	clg_peak_result *r;
	int quick;
	double target_s;     /* one timed run should last about this long */
	int reps;
	double deadline;     /* no new measurement starts after this (clg_measure_now) */
	int out_of_time;
	char f32_opts[256];  /* float32 options of every peak.cl kernel but the fp64 / fp16 ones */
} meas;

static double elapsed_of(meas *m, cl_event ev, double wall)
{
	cl_ulong a = 0, b = 0;
	if (m->r->profiled &&
	    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(a), &a, NULL) == CL_SUCCESS &&
	    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(b), &b, NULL) == CL_SUCCESS && b >= a)
		return 1e-9 * (double)(b - a);
	return wall;
}

/* Runs k over `global` work-items in groups of `local`; *secs: its time (device profile, else wall). */
static clg_status run_kernel(meas *m, cl_kernel k, const char *what, size_t global, size_t local, double *secs)
{
	cl_event ev = NULL;
	double t0 = clg_measure_now();
	cl_int err = clEnqueueNDRangeKernel(m->q, k, 1, NULL, &global, &local, 0, NULL, &ev);

	if (err != CL_SUCCESS)
		return clg_cl_fail(m->be, "measure", err, "%s: clEnqueueNDRangeKernel(global %zu, local %zu)", what, global,
				   local);
	err = clWaitForEvents(1, &ev);
	*secs = elapsed_of(m, ev, clg_measure_now() - t0);
	clReleaseEvent(ev);
	if (err != CL_SUCCESS)
		return clg_cl_fail(m->be, "measure", err, "%s: clWaitForEvents", what);
	return CLG_OK;
}

static clg_status set_arg(meas *m, cl_kernel k, int i, size_t size, const void *v, const char *what)
{
	cl_int err = clSetKernelArg(k, (cl_uint)i, size, v);
	return err == CL_SUCCESS ? CLG_OK : clg_cl_fail(m->be, "measure", err, "%s: clSetKernelArg(%d)", what, i);
}

/* Work-group size for k: the backend's, within the kernel's limit. */
static size_t group_size(meas *m, cl_kernel k)
{
	return clg_cl_local_size(m->be, k, m->cl->wg_size);
}

static int time_left(meas *m)
{
	if (clg_measure_now() > m->deadline)
		m->out_of_time = 1;
	return !m->out_of_time;
}

/* Multiply-add rate of peak_mad_<width> built with opts, in GFLOP/s (0 when nothing accepted). */
static clg_status mad_rate(meas *m, const char *opts, const char *tname, size_t esize, int width, double ceiling,
			   double *gflops)
{
	char kname[32], what[48];
	cl_kernel k;
	clg_buffer *out = NULL;
	size_t local, global;
	cl_int iters = 1;
	cl_mem mem;
	float a = 1.25f;
	double secs[64], s = 0;
	int nrep = 0;
	unsigned cu = m->be->info.compute_units ? m->be->info.compute_units : 1;
	double t0 = clg_measure_now();
	clg_status st;

	*gflops = 0;
	snprintf(kname, sizeof(kname), "peak_mad_%d", width);
	snprintf(what, sizeof(what), "%s%d", tname, width);
	if ((st = clg_cl_kernel(m->be, "peak", opts, kname, &k)))
		return st;
	local = group_size(m, k);
	/* enough work-items for every compute unit several times over, or one group when slow */
	global = m->r->scaled_down ? local : local * cu * 8;
	if ((st = clg_buffer_alloc(m->be, global * (size_t)width * esize, &out)))
		return st;
	mem = (cl_mem)out->handle;
	if ((st = set_arg(m, k, 0, sizeof(mem), &mem, what)) || (st = set_arg(m, k, 1, sizeof(a), &a, what)) ||
	    (st = set_arg(m, k, 2, sizeof(iters), &iters, what)) || (st = run_kernel(m, k, what, global, local, &s)))
		goto out_free; /* the first run pays for the driver's code generation: untimed */
	/* grow the chain until a run lasts about target_s / 2 */
	for (;;) {
		double f;
		if ((st = set_arg(m, k, 2, sizeof(iters), &iters, what)) ||
		    (st = run_kernel(m, k, what, global, local, &s)))
			goto out_free;
		if (s >= m->target_s / 2 || iters >= (1 << 24) || !time_left(m))
			break;
		f = s > 0 ? m->target_s / s : 16;
		f = f > 16 ? 16 : f < 2 ? 2 : f;
		iters = (cl_int)(iters * f);
	}
	/* many short runs (the best one is the peak): on a shared machine a short run can find every
	 * core free, as the short kernels of real work (a GEMM) do, where a long one cannot */
	for (nrep = 0; nrep < 8 * m->reps && time_left(m); nrep++)
		if ((st = run_kernel(m, k, what, global, local, &secs[nrep])))
			goto out_free;
	/* 8 chains x 32 mads x 2 flops per lane and iteration (peak.cl) */
	*gflops = clg_measure_best(m->r, what, secs, nrep, 2.0 * 8 * 32 * width * (double)iters * (double)global, 1e-9,
				   ceiling);
	clg_debug("measure: %s: %zu work-items x %d iterations: %.1f GFLOP/s (%d runs, %.3f s in all)", what, global,
		  (int)iters, *gflops, nrep, clg_measure_now() - t0);
out_free:
	clg_buffer_free(out);
	return st;
}

/* Best rate over the vector widths of one type; 0 and a note when the type cannot be built. */
static clg_status type_peak(meas *m, const char *opts, const char *tname, size_t esize, double ceiling, double *best,
			    int *best_width)
{
	static const int all[] = {1, 2, 4, 8, 16}, few[] = {1, 8};
	const int *w = m->quick || m->r->scaled_down ? few : all;
	int nw = m->quick || m->r->scaled_down ? 2 : 5;
	cl_program prog;
	clg_status st;

	*best = 0;
	*best_width = 0;
	if ((st = clg_cl_program(m->be, "peak", opts, &prog)))
		return st;
	for (int i = 0; i < nw && time_left(m); i++) {
		double g;
		if ((st = mad_rate(m, opts, tname, esize, w[i], ceiling, &g)))
			return st;
		if (g > *best) {
			*best = g;
			*best_width = w[i];
		}
	}
	return CLG_OK;
}

/* Copy and read bandwidth over buffers of n bytes. */
static clg_status bandwidth(meas *m, size_t n)
{
	cl_kernel kc, kr;
	clg_buffer *src = NULL, *dst = NULL;
	cl_mem ms, md;
	size_t lc, lr, gc, gr;
	cl_int per = 16;
	float zero = 0.5f;
	double secs[16];
	int nrep = 0;
	cl_int err;
	clg_status st;

	if ((st = clg_cl_kernel(m->be, "peak", m->f32_opts, "peak_copy", &kc)) ||
	    (st = clg_cl_kernel(m->be, "peak", m->f32_opts, "peak_read", &kr)))
		return st;
	lc = group_size(m, kc);
	lr = group_size(m, kr);
	gc = n / 16 / lc * lc;          /* float4 per work-item */
	gr = n / 16 / (size_t)per / lr * lr;
	if (!gc || !gr)
		return clg_fail(CLG_ERR_INVALID, "bandwidth: %zu bytes is too small", n);
	if ((st = clg_buffer_alloc(m->be, n, &src)) || (st = clg_buffer_alloc(m->be, n, &dst)))
		goto out_free;
	ms = (cl_mem)src->handle;
	md = (cl_mem)dst->handle;
	/* touch every page before timing */
	err = clEnqueueFillBuffer(m->q, ms, &zero, sizeof(zero), 0, n, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clEnqueueFillBuffer(m->q, md, &zero, sizeof(zero), 0, n, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clFinish(m->q);
	if (err != CL_SUCCESS) {
		st = clg_cl_fail(m->be, "measure", err, "bandwidth: clEnqueueFillBuffer of %zu bytes", n);
		goto out_free;
	}
	if ((st = set_arg(m, kc, 0, sizeof(ms), &ms, "copy")) || (st = set_arg(m, kc, 1, sizeof(md), &md, "copy")) ||
	    (st = run_kernel(m, kc, "copy", gc, lc, &secs[0])))
		goto out_free;
	for (nrep = 0; nrep < m->reps && time_left(m); nrep++)
		if ((st = run_kernel(m, kc, "copy", gc, lc, &secs[nrep])))
			goto out_free;
	m->r->copy_gbs = clg_measure_best(m->r, "copy", secs, nrep, 2.0 * 16 * (double)gc, 1e-9, 0);
	if ((st = set_arg(m, kr, 0, sizeof(ms), &ms, "read")) || (st = set_arg(m, kr, 1, sizeof(md), &md, "read")) ||
	    (st = set_arg(m, kr, 2, sizeof(per), &per, "read")) || (st = run_kernel(m, kr, "read", gr, lr, &secs[0])))
		goto out_free;
	for (nrep = 0; nrep < m->reps && time_left(m); nrep++)
		if ((st = run_kernel(m, kr, "read", gr, lr, &secs[nrep])))
			goto out_free;
	m->r->read_gbs = clg_measure_best(m->r, "read", secs, nrep, 16.0 * (double)per * (double)gr, 1e-9, 0);
	m->r->bandwidth_gbs = m->r->copy_gbs > m->r->read_gbs ? m->r->copy_gbs : m->r->read_gbs;
out_free:
	clg_buffer_free(src);
	clg_buffer_free(dst);
	return st;
}

/* Host-to-device and device-to-host rates: blocking transfers of n bytes from pageable memory. */
static clg_status transfers(meas *m, size_t n)
{
	clg_buffer *buf = NULL;
	char *host = malloc(n);
	double secs[2][16];
	int nrep[2] = {0, 0};
	clg_status st = CLG_OK;

	if (!host)
		return clg_fail(CLG_ERR_OOM, "transfers: out of host memory for %zu bytes", n);
	memset(host, 3, n);
	if ((st = clg_buffer_alloc(m->be, n, &buf)))
		goto out_free;
	for (int dir = 0; dir < 2; dir++) {
		for (int i = -1; i < m->reps && time_left(m); i++) { /* i = -1: warm-up */
			cl_event ev = NULL;
			double t0 = clg_measure_now(), s;
			cl_int err = dir == 0 ? clEnqueueWriteBuffer(m->q, (cl_mem)buf->handle, CL_TRUE, 0, n, host, 0,
								     NULL, &ev)
					      : clEnqueueReadBuffer(m->q, (cl_mem)buf->handle, CL_TRUE, 0, n, host, 0,
								    NULL, &ev);
			if (err != CL_SUCCESS) {
				st = clg_cl_fail(m->be, "measure", err, "%s of %zu bytes",
						 dir ? "clEnqueueReadBuffer" : "clEnqueueWriteBuffer", n);
				goto out_free;
			}
			s = elapsed_of(m, ev, clg_measure_now() - t0);
			clReleaseEvent(ev);
			if (i >= 0)
				secs[dir][nrep[dir]++] = s;
		}
	}
	m->r->h2d_gbs = clg_measure_best(m->r, "h2d", secs[0], nrep[0], (double)n, 1e-9, 0);
	m->r->d2h_gbs = clg_measure_best(m->r, "d2h", secs[1], nrep[1], (double)n, 1e-9, 0);
out_free:
	clg_buffer_free(buf);
	free(host);
	return st;
}

/* Median wall time of an empty kernel from enqueue to completion on the device's own queue. */
static clg_status latency(meas *m, int count)
{
	cl_kernel k;
	clg_buffer *buf = NULL;
	cl_mem mem;
	double *t = malloc((size_t)count * sizeof(*t));
	size_t one = 1;
	int n = 0;
	clg_status st;

	if (!t)
		return clg_fail(CLG_ERR_OOM, "latency: out of host memory");
	if ((st = clg_cl_kernel(m->be, "peak", m->f32_opts, "peak_empty", &k)) ||
	    (st = clg_buffer_alloc(m->be, 64, &buf)))
		goto out_free;
	mem = (cl_mem)buf->handle;
	if ((st = set_arg(m, k, 0, sizeof(mem), &mem, "empty")))
		goto out_free;
	for (int i = -3; i < count; i++) { /* three warm-up launches */
		char why[160];
		double t0 = clg_measure_now();
		cl_int err = clEnqueueNDRangeKernel(m->cl->queue, k, 1, NULL, &one, &one, 0, NULL, NULL);
		if (err == CL_SUCCESS)
			err = clFinish(m->cl->queue);
		if (err != CL_SUCCESS) {
			st = clg_cl_fail(m->be, "measure", err, "latency: empty kernel");
			goto out_free;
		}
		t0 = clg_measure_now() - t0;
		if (i < 0)
			continue;
		if (clg_measure_implausible(t0, 1, 0, clg_measure_clock_resolution(), why, sizeof(why)))
			clg_measure_reject(m->r, "launch", 1e6 * t0, why);
		else
			t[n++] = t0;
		/* a simulator: a handful of launches says enough */
		if (i == 4 && clg_measure_median(t, n) > 2e-3) {
			m->r->scaled_down = 1;
			break;
		}
	}
	m->r->launch_latency_us = 1e6 * clg_measure_median(t, n);
out_free:
	clg_buffer_free(buf);
	free(t);
	return st;
}

clg_status clg_measure_peaks(clg_backend *be, int quick, clg_peak_result *out)
{
	meas m = {.be = be, .r = out, .quick = quick};
	const clg_device_info *d;
	char opts[256], why[400] = "";
	double ceiling, t_start = clg_measure_now();
	size_t n;
	cl_int err;
	clg_status st;

	if (!is_cl(be))
		return clg_measure_host_peaks(be, quick, out);
	memset(out, 0, sizeof(*out));
	d = &be->info;
	m.cl = clg_cl_of(be);
	m.q = clCreateCommandQueue(m.cl->context, m.cl->device, CL_QUEUE_PROFILING_ENABLE, &err);
	out->profiled = err == CL_SUCCESS;
	if (!out->profiled)
		m.q = clCreateCommandQueue(m.cl->context, m.cl->device, 0, &err);
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, "measure", err, "clCreateCommandQueue");
	out->resolution_s = out->profiled ? 1e-9 * (double)(d->timer_resolution_ns ? d->timer_resolution_ns : 1)
					  : clg_measure_clock_resolution();
	m.reps = quick ? 3 : 5;
	m.target_s = quick ? 0.001 : 0.0015;
	m.deadline = t_start + (quick ? 8.0 : 30.0);
	/* Oclgrind simulates every instruction: tiny sizes (so does a slow first launch, below) */
	out->scaled_down = quick >= 2 || clg_contains_nocase(d->name, "oclgrind") || clg_contains_nocase(d->platform, "oclgrind");

	clg_cl_dtype_options(be, CLG_F32, m.f32_opts, sizeof(m.f32_opts)); /* with -DUSE_FMA where fused */
	if ((st = latency(&m, out->scaled_down ? 5 : quick ? 50 : 200)))
		goto out_release;
	if (out->scaled_down) {
		m.reps = 1;
		m.target_s = 0.002;
	}
	/* generous physical ceiling: 256 lanes per compute unit, 2 flops each per clock */
	ceiling = 2.0 * 256 * (double)d->compute_units * (double)d->clock_mhz * 1e6;

	if ((st = type_peak(&m, m.f32_opts, "float", 4, ceiling, &out->fp32_gflops, &out->fp32_width)))
		goto out_release;
	if (d->has_fp64 && time_left(&m)) {
		clg_cl_dtype_options(be, CLG_F64, opts, sizeof(opts)); /* -DUSE_FMA as for float */
		st = type_peak(&m, opts, "double", 8, ceiling, &out->fp64_gflops, &out->fp64_width);
		if (st) { /* the other figures still stand */
			snprintf(why, sizeof(why), "; fp64 reported but failed: %.150s", clg_last_error());
			out->fp64_gflops = 0;
			st = CLG_OK;
		}
	}
	if (d->has_fp16 && time_left(&m)) {
		/* native half arithmetic: only here, and only with cl_khr_fp16 reported; the prelude
		 * needs the storage option with T=half (its float-accumulating loads; without it Intel's
		 * compiler refused `ACC16 v = VLOAD16(...)`, half16 into float16) */
		st = type_peak(&m, "-DT=half -DACC=float -DUSE_HALF_STORAGE -DPEAK_FP16 -cl-std=CL1.2", "half", 2, 4 * ceiling,
			       &out->fp16_gflops, &out->fp16_width);
		if (st) {
			size_t k = strlen(why);
			snprintf(why + k, sizeof(why) - k, "; fp16 reported but failed: %.150s", clg_last_error());
			out->fp16_gflops = 0;
			st = CLG_OK;
		}
	}

	/* buffers well above a CPU's last-level cache, within the allocation limit */
	n = out->scaled_down ? (size_t)1 << 20 : (size_t)(quick ? 64 : 128) << 20;
	while (n > ((size_t)1 << 20) && (n > d->max_alloc / 2 || n > d->global_mem / 8))
		n /= 2;
	if (time_left(&m) && (st = bandwidth(&m, n)))
		goto out_release;
	/* (a simulator's transfers are plain copies: big enough to last 100 timer resolutions) */
	if (time_left(&m) && (st = transfers(&m, out->scaled_down ? (size_t)16 << 20 : n)))
		goto out_release;

	snprintf(out->note, sizeof(out->note),
		 "%s; fp = best over vector widths %s of 8 chains x %d-mad loops per work-item (peak.cl; fma() where the "
		 "fp config has CL_FP_FMA, else mad()); bandwidth "
		 "= max of a float4 copy (read + write bytes) and a float4 read, %zu MiB buffers; h2d/d2h = blocking "
		 "transfers of %zu MiB from pageable memory; launch latency = median wall time of an empty kernel, "
		 "enqueue to clFinish; best of %d runs (%d of about %.1f ms for each multiply-add width), each checked "
		 "by the rejection rule%s%s%s",
		 out->profiled ? "kernel and transfer times from event profiling" : "wall-clock times",
		 quick || out->scaled_down ? "1, 8" : "1-16", 32, n >> 20, out->scaled_down ? (size_t)16 : n >> 20, m.reps,
		 8 * m.reps, 1e3 * m.target_s,
		 out->scaled_down ? "; scaled down: a slow device (simulator)" : "",
		 m.out_of_time ? "; time budget reached, some measurements skipped" : "", why);
out_release:
	clReleaseCommandQueue(m.q);
	return st;
}

/* ---- program binaries -------------------------------------------------------------------------- */

static char *build_log(cl_program prog, cl_device_id dev)
{
	size_t len = 0;
	char *log;
	clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
	log = calloc(len + 1, 1);
	if (log && len)
		clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, len, log, NULL);
	return log;
}

clg_status clg_binary_roundtrip(clg_backend *be, int *ok, char *note, size_t len)
{
	enum { N = 64 };
	clg_cl *cl;
	char opts[256];
	size_t binlen = 0;
	unsigned char *bin = NULL;
	cl_program prog = NULL, prog2 = NULL;
	cl_kernel k = NULL;
	cl_mem mem = NULL;
	cl_int err, binerr = CL_SUCCESS, out[N];
	size_t global = N;
	int bad = 0;
	clg_status st = CLG_OK;

	*ok = -1;
	if (!is_cl(be)) {
		snprintf(note, len, "not applicable: the reference backend has no kernel programs");
		return CLG_OK;
	}
	cl = clg_cl_of(be);
	clg_cl_dtype_options(be, CLG_F32, opts, sizeof(opts)); /* the peaks' program: one build for both */
	/* peak.cl as the library holds it (built, or loaded from the disk cache: owned by be) */
	if (clg_cl_program(be, "peak", opts, &prog) != CLG_OK) {
		*ok = 0;
		snprintf(note, len, "building peak.cl failed: %.300s", clg_last_error());
		return CLG_OK;
	}
	if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(binlen), &binlen, NULL) != CL_SUCCESS || !binlen) {
		snprintf(note, len, "the driver offers no program binaries");
		return CLG_OK;
	}
	if (!(bin = malloc(binlen)))
		return clg_fail(CLG_ERR_OOM, "binary round trip: out of host memory");
	*ok = 0;
	if ((err = clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL)) != CL_SUCCESS) {
		snprintf(note, len, "CL_PROGRAM_BINARIES failed (%s)", clg_cl_error_name(err));
		goto out_free;
	}
	prog2 = clCreateProgramWithBinary(cl->context, 1, &cl->device, &binlen, (const unsigned char **)&bin, &binerr,
					  &err);
	if (err != CL_SUCCESS || binerr != CL_SUCCESS) {
		snprintf(note, len, "clCreateProgramWithBinary refused the %zu-byte binary (%s, %s)", binlen,
			 clg_cl_error_name(err), clg_cl_error_name(binerr));
		goto out_free;
	}
	if ((err = clBuildProgram(prog2, 1, &cl->device, opts, NULL, NULL)) != CL_SUCCESS) {
		char *log = build_log(prog2, cl->device);
		snprintf(note, len, "building the re-created program failed (%s): %.200s", clg_cl_error_name(err),
			 log ? log : "");
		free(log);
		goto out_free;
	}
	k = clCreateKernel(prog2, "peak_iota", &err);
	if (err == CL_SUCCESS)
		mem = clCreateBuffer(cl->context, CL_MEM_READ_WRITE, sizeof(out), NULL, &err);
	if (err == CL_SUCCESS)
		err = clSetKernelArg(k, 0, sizeof(mem), &mem);
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel(cl->queue, k, 1, NULL, &global, NULL, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(cl->queue, mem, CL_TRUE, 0, sizeof(out), out, 0, NULL, NULL);
	if (err != CL_SUCCESS) {
		snprintf(note, len, "running a kernel of the re-created program failed (%s)", clg_cl_error_name(err));
		goto out_free;
	}
	for (int i = 0; i < N; i++)
		bad += out[i] != 3 * i + 1;
	*ok = bad == 0;
	if (bad)
		snprintf(note, len, "the re-created program's peak_iota wrote %d wrong values of %d", bad, N);
	else
		snprintf(note, len, "peak.cl's %zu-byte binary re-created, built and ran peak_iota correctly", binlen);
out_free:
	if (mem)
		clReleaseMemObject(mem);
	if (k)
		clReleaseKernel(k);
	if (prog2)
		clReleaseProgram(prog2);
	free(bin);
	return st;
}

/* ---- program build times ----------------------------------------------------------------------- */

const char *const *clg_measure_programs(clg_backend *be) { return is_cl(be) ? clg_cl_program_names() : NULL; }

void clg_measure_program_options(clg_backend *be, char *buf, size_t len)
{
	if (is_cl(be))
		clg_cl_dtype_options(be, CLG_F32, buf, len);
	else
		snprintf(buf, len, "%s", "");
}

static unsigned cold_builds;

clg_status clg_measure_cold_build(clg_backend *be, const char *program, clg_build_timing *out)
{
	clg_cl *cl;
	const char *src;
	char *owned = NULL, opts[256];
	size_t len;
	cl_program prog;
	cl_int err;
	double t0;
	clg_status st;

	memset(out, 0, sizeof(*out));
	if (!is_cl(be))
		return clg_fail(CLG_ERR_UNSUPPORTED, "cold build of '%s': the reference backend has no kernel programs",
				program);
	cl = clg_cl_of(be);
	clg_cl_dtype_options(be, CLG_F32, opts, sizeof(opts));
	/* A define no kernel reads, new for every build: the drivers key their caches (PoCL's, NVIDIA's)
	 * on source and options, so this build misses them while they stay on for the rest of the
	 * process (PoCL's off made every new work-group size link anew: minutes in compare's ops). */
	snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), " -D CLG_COLD_BUILD=%ld%u", (long)getpid(),
		 ++cold_builds);
	if ((st = clg_cl_program_source(program, &src, &len, &owned)))
		return st;
	t0 = clg_measure_now();
	prog = clCreateProgramWithSource(cl->context, 1, &src, &len, &err);
	if (err != CL_SUCCESS) {
		st = clg_cl_fail(be, "cold build", err, "clCreateProgramWithSource('%s')", program);
		goto out_free;
	}
	err = clBuildProgram(prog, 1, &cl->device, opts, NULL, NULL);
	out->seconds = clg_measure_now() - t0;
	out->ok = err == CL_SUCCESS;
	if (!out->ok) {
		char *log = build_log(prog, cl->device);
		size_t n = (log ? strlen(log) : 0) + 64;
		out->log = malloc(n);
		if (out->log)
			snprintf(out->log, n, "%s (%d):\n%s", clg_cl_error_name(err), (int)err, log ? log : "");
		free(log);
	}
	clReleaseProgram(prog);
out_free:
	free(owned);
	return st;
}

clg_status clg_measure_warm_loads(clg_backend *be, const char *const *programs, int n, double *seconds, int *ok,
				  char **log)
{
	clg_cl *cl, fresh;
	clg_backend tmp;
	char opts[256];

	if (!is_cl(be))
		return clg_fail(CLG_ERR_UNSUPPORTED, "warm load: the reference backend has no kernel programs");
	cl = clg_cl_of(be);
	clg_cl_dtype_options(be, CLG_F32, opts, sizeof(opts));
	/* every program gets a disk entry the way the library makes one */
	for (int i = 0; i < n; i++) {
		cl_program prog;
		uint64_t loads = cl->stats.n_disk_load;
		double t0 = clg_measure_now();
		clg_status s = clg_cl_program(be, programs[i], opts, &prog);
		/* this process's first load from disk: what a new process pays (a reload, below, can
		 * be cheaper: the driver may keep what it made from the same binary) */
		seconds[i] = s == CLG_OK && cl->stats.n_disk_load > loads ? clg_measure_now() - t0 : -1;
		if (ok)
			ok[i] = s == CLG_OK;
		if (log) {
			log[i] = NULL;
			if (s) {
				const char *e = clg_last_error();
				log[i] = malloc(strlen(e) + 1);
				if (log[i])
					memcpy(log[i], e, strlen(e) + 1);
			}
		}
	}
	/* Programs this process already held: reloaded on a second instance sharing context, device
	 * and queue but with empty program caches, so that the load comes from disk (or is a build,
	 * when the cache is off), never from memory. */
	fresh = *cl;
	fresh.programs = fresh.kernels = NULL;
	fresh.nprograms = fresh.capprograms = fresh.nkernels = fresh.capkernels = 0;
	memset(&fresh.stats, 0, sizeof(fresh.stats));
	tmp = *be;
	tmp.ctx = &fresh;
	for (int i = 0; i < n; i++) {
		cl_program prog;
		uint64_t before = fresh.stats.n_disk_load;
		double t0;
		if ((ok && !ok[i]) || seconds[i] >= 0)
			continue;
		t0 = clg_measure_now();
		if (clg_cl_program(&tmp, programs[i], opts, &prog) == CLG_OK && fresh.stats.n_disk_load > before)
			seconds[i] = clg_measure_now() - t0;
	}
	clg_cl_release_programs(&tmp);
	return CLG_OK;
}
