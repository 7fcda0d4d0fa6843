/* One OpenCL backend instance per device: context, in-order queue, transfers. */
#include "cl_internal.h"
#include "cl_tune.h"

#include <stdlib.h>
#include <string.h>

/* Frees the staging copies of uploads that have completed (all of them when wait is set). */
static void reap_uploads(clg_cl *cl, int wait)
{
	int kept = 0;
	for (int i = 0; i < cl->npending; i++) {
		cl_int status = CL_COMPLETE;
		clg_cl_pending *p = &cl->pending[i];
		if (!wait)
			clGetEventInfo(p->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL);
		else
			clWaitForEvents(1, &p->event);
		if (status <= CL_COMPLETE) { /* complete, or failed (negative): either way it is done */
			clReleaseEvent(p->event);
			free(p->staging);
		} else {
			cl->pending[kept++] = *p;
		}
	}
	cl->npending = kept;
}

static clg_status cl_upload(clg_backend *be, clg_buffer *dst, size_t offset, const void *src, size_t n)
{
	clg_cl *cl = clg_cl_of(be);
	cl_event ev = NULL;
	void *staging;
	int slot;
	cl_int err;

	reap_uploads(cl, 0);
	if (cl->npending == cl->cappending) {
		int cap = cl->cappending ? 2 * cl->cappending : 16;
		void *p = realloc(cl->pending, (size_t)cap * sizeof(*cl->pending));
		if (!p)
			return clg_fail(CLG_ERR_OOM, "upload to device '%s': out of host memory", be->info.name);
		cl->pending = p;
		cl->cappending = cap;
	}
	/* The caller may reuse src at once, so the asynchronous write reads a copy: in a pinned
	 * staging slot, else a private one freed when the write has completed. */
	staging = clg_cl_stage_get(be, n, &slot);
	if (!staging)
		staging = malloc(n);
	if (!staging)
		return clg_fail(CLG_ERR_OOM, "upload of %zu bytes to device '%s': out of host memory", n, be->info.name);
	memcpy(staging, src, n);
	err = clg_cl_fault(be, CLG_FAULT_ENQUEUE);
	if (err == CL_SUCCESS)
		err = clEnqueueWriteBuffer(cl->queue, (cl_mem)dst->handle, CL_FALSE, offset, n, staging, 0, NULL, &ev);
	if (err != CL_SUCCESS) {
		if (slot < 0)
			free(staging);
		return clg_cl_fail(be, "upload", err, "clEnqueueWriteBuffer of %zu bytes%s", n, clg_cl_fault_note());
	}
	cl->stats.n_upload++;
	if (slot >= 0) {
		clg_cl_stage_busy(be, slot, ev);
		return CLG_OK;
	}
	cl->pending[cl->npending].event = ev;
	cl->pending[cl->npending].staging = staging;
	cl->npending++;
	return CLG_OK;
}

static clg_status cl_download(clg_backend *be, clg_buffer *src, size_t offset, void *dst, size_t n)
{
	cl_int err = clg_cl_fault(be, CLG_FAULT_ENQUEUE);
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(clg_cl_of(be)->queue, (cl_mem)src->handle, CL_TRUE, offset, n, dst, 0, NULL, NULL);
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, "download", err, "clEnqueueReadBuffer of %zu bytes%s", n, clg_cl_fault_note());
	reap_uploads(clg_cl_of(be), 0);
	clg_cl_of(be)->stats.n_download++;
	return CLG_OK;
}

static clg_status cl_download_start(clg_backend *be, clg_buffer *src, size_t offset, void *dst, size_t n, void **done)
{
	clg_cl *cl = clg_cl_of(be);
	cl_event ev = NULL;
	cl_int err = clg_cl_fault(be, CLG_FAULT_ENQUEUE);
	if (err == CL_SUCCESS)
		err = clEnqueueReadBuffer(cl->queue, (cl_mem)src->handle, CL_FALSE, offset, n, dst, 0, NULL, &ev);
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, "download", err, "clEnqueueReadBuffer (non-blocking) of %zu bytes%s", n,
				   clg_cl_fault_note());
	clFlush(cl->queue); /* so that it starts while the host goes on */
	cl->stats.n_download++;
	*done = ev;
	return CLG_OK;
}

static clg_status cl_wait(clg_backend *be, void *done)
{
	cl_event ev = done;
	cl_int status = CL_COMPLETE, err = clWaitForEvents(1, &ev);
	if (err == CL_SUCCESS)
		err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL);
	clReleaseEvent(ev);
	reap_uploads(clg_cl_of(be), 0);
	if (err != CL_SUCCESS || status < 0)
		return clg_cl_fail(be, "download", err != CL_SUCCESS ? err : status, "waiting for a non-blocking read");
	return CLG_OK;
}

static clg_status cl_synchronize(clg_backend *be)
{
	clg_cl *cl = clg_cl_of(be);
	cl_int err = clFinish(cl->queue);
	reap_uploads(cl, 1);
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, "synchronize", err, "clFinish");
	return CLG_OK;
}

static void cl_stats(clg_backend *be, clg_stats *out) { *out = clg_cl_of(be)->stats; }

static void cl_reset_peak(clg_backend *be)
{
	clg_cl *cl = clg_cl_of(be);
	cl->stats.bytes_peak = cl->stats.bytes_in_use;
}

static void cl_close(clg_backend *be)
{
	clg_cl *cl = clg_cl_of(be);
	clg_cl_fault_report(be);
	if (cl->queue) {
		clFinish(cl->queue);
		reap_uploads(cl, 1);
	}
	clg_cl_stage_free(be);
	clg_cl_fft_free(be); /* plans hold buffers and kernels of the context */
	clg_cl_trim(be);
	clg_cl_store_finish(be); /* before the programs go: the queue holds references */
	clg_cl_release_programs(be);
	clg_cl_selftest_free(be);
	if (cl->gemm_tmp)
		clReleaseMemObject(cl->gemm_tmp);
	if (cl->queue)
		clReleaseCommandQueue(cl->queue);
	if (cl->context)
		clReleaseContext(cl->context);
	free(cl->pending);
	free(cl->cached);
	free(cl);
	free(be);
}

static const clg_backend_iface cl_iface = {
	.kind = "opencl",
	.close = cl_close,
	.alloc = clg_cl_alloc,
	.free = clg_cl_free,
	.upload = cl_upload,
	.download = cl_download,
	.download_start = cl_download_start,
	.wait = cl_wait,
	.synchronize = cl_synchronize,
	.stats = cl_stats,
	.trim = clg_cl_trim,
	.reset_peak = cl_reset_peak,
};

/* Whether the device's fp config of that type has CL_FP_FMA: fma() fused in hardware (elsewhere it
 * may be emulated, so the kernels take mad() there) */
static int fused_fma(cl_device_id d, cl_device_info which)
{
	cl_device_fp_config fpc = 0;
	return clGetDeviceInfo(d, which, sizeof(fpc), &fpc, NULL) == CL_SUCCESS && (fpc & CL_FP_FMA);
}

/* Which sub-group built-ins the row kernels may use (clg_cl.subgroups), probed from the device's
 * extensions and OpenCL C version. CLGRAD_SUBGROUPS=0 turns them off, =khr builds as for
 * cl_khr_subgroups (OpenCL C 2.0) on any device with sub-groups and OpenCL C 2.0 or later: the
 * tests compare the paths on the one runtime at hand. */
static int probe_subgroups(clg_backend *be)
{
	const char *env = clg_cfg_str(CLG_CFG_SUBGROUPS);
	size_t len = 0;
	char *ext;
	int r = 0;

	if (!be->info.has_subgroups || (env && !strcmp(env, "0")))
		return 0;
	if (clGetDeviceInfo(clg_cl_of(be)->device, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS ||
	    !(ext = calloc(len + 1, 1)))
		return 0;
	if (clGetDeviceInfo(clg_cl_of(be)->device, CL_DEVICE_EXTENSIONS, len, ext, NULL) == CL_SUCCESS) {
		if (env && !strcmp(env, "khr"))
			r = strncmp(be->info.clc_version, "OpenCL C 1.", 11) != 0 ? 2 : 0;
		else if (strstr(ext, "cl_intel_subgroups"))
			r = 1;
		else if (strstr(ext, "cl_khr_subgroups") && strncmp(be->info.clc_version, "OpenCL C 1.", 11) != 0)
			r = 2;
	}
	free(ext);
	return r;
}

clg_status clg_cl_open(int index, clg_backend **out)
{
	const clg_device_info *list;
	int count;
	clg_backend *be = NULL;
	clg_cl *cl = NULL;
	cl_int err;
	clg_status st;

	*out = NULL;
	st = clg_devices(&list, &count);
	if (st)
		return st;
	be = calloc(1, sizeof(*be));
	cl = calloc(1, sizeof(*cl));
	if (!be || !cl) {
		st = clg_fail(CLG_ERR_OOM, "open device %d: out of host memory", index);
		goto err_free;
	}
	be->iface = &cl_iface;
	be->info = list[index];
	be->info.half_off[0] = 0; /* the listing's record of it; this open's self-test decides */
	be->ctx = cl;
	if (be->info.crashed[0] && !clg_force_device()) {
		st = clg_fail(CLG_ERR_DEVICE, "device '%s' crashed clgrad in an earlier run (%s); it is not used again "
			      "unless CLGRAD_FORCE_DEVICE=1", be->info.name, be->info.crashed);
		goto err_free;
	}
	st = clg_cl_device_ids(index, &cl->platform, &cl->device);
	if (st)
		goto err_free;
	cl->context = clCreateContext(NULL, 1, &cl->device, NULL, NULL, &err);
	if (err != CL_SUCCESS) {
		st = clg_cl_fail(be, "open", err, "clCreateContext");
		goto err_free;
	}
	cl->queue = clCreateCommandQueue(cl->context, cl->device, 0, &err);
	if (err != CL_SUCCESS) {
		st = clg_cl_fail(be, "open", err, "clCreateCommandQueue");
		goto err_release_context;
	}
	cl->fma_single = fused_fma(cl->device, CL_DEVICE_SINGLE_FP_CONFIG); /* before any build */
	cl->fma_double = fused_fma(cl->device, CL_DEVICE_DOUBLE_FP_CONFIG);
	st = clg_kernel_shape_init(be); /* before the self-test: it checks the kernels in use */
	if (!st)
		st = clg_cl_fault_check();
	if (st)
		goto err_release_queue;
	clg_cl_tune_apply_shapes(be); /* shapes measured by `clgrad tune`, when stored */
	/* 256 suits most GPUs (CPU devices run one work-item per lane anyway), or the largest power
	 * of two the device allows (cl_launch.c) */
	cl->wg_size = clg_cl_local_size(be, NULL, 256);
	cl->subgroups = probe_subgroups(be);
	clg_cl_register_ops(be);
	/* a crash in the self-test's builds and launches is remembered, not repeated (cl_crash.c) */
	clg_crash_marker_begin(&be->info, "the first-use self-test");
	clg_cl_selftest_open(be); /* may clear or reroute op table entries */
	clg_crash_marker_end(&be->info);
	if (be->info.crashed[0]) /* forced, and it went through: the record goes */
		clg_crash_clear(&be->info);
	cl->fault_armed = 1;
	*out = be;
	return CLG_OK;

err_release_queue:
	clReleaseCommandQueue(cl->queue);
err_release_context:
	clReleaseContext(cl->context);
err_free:
	free(cl);
	free(be);
	return st;
}
