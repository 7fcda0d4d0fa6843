/* Pinned staging for uploads: a small ring of buffers allocated by the driver in host memory
 * (CL_MEM_ALLOC_HOST_PTR), each mapped once when made, so an upload copies the caller's data into
 * memory the device can read directly (on GPUs: pinned, one DMA) instead of into a fresh malloc
 * per upload. A slot is reused once its last upload has completed; with every slot still in
 * flight, or for an upload above STAGE_MAX, the caller takes a private host copy instead. */
#include "cl_internal.h"

#define STAGE_MIN ((size_t)1 << 20)  /* a slot's least size, so that small uploads share one */
#define STAGE_MAX ((size_t)16 << 20) /* larger uploads are rare (weights at start): no pinning */

static int slot_idle(clg_cl_stage *s)
{
	cl_int status = CL_COMPLETE;

	if (!s->busy)
		return 1;
	clGetEventInfo(s->busy, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, NULL);
	if (status > CL_COMPLETE)
		return 0;
	clReleaseEvent(s->busy); /* complete, or failed: either way done with the memory */
	s->busy = NULL;
	return 1;
}

static void slot_release(clg_cl *cl, clg_cl_stage *s)
{
	if (s->busy) {
		clWaitForEvents(1, &s->busy);
		clReleaseEvent(s->busy);
	}
	if (s->mem && s->host)
		clEnqueueUnmapMemObject(cl->queue, s->mem, s->host, 0, NULL, NULL);
	if (s->mem)
		clReleaseMemObject(s->mem);
	*s = (clg_cl_stage){0};
}

void *clg_cl_stage_get(clg_backend *be, size_t n, int *slot)
{
	clg_cl *cl = clg_cl_of(be);
	cl_int err;

	*slot = -1;
	if (n == 0 || n > STAGE_MAX)
		return NULL;
	for (int k = 0; k < CLG_CL_STAGE_SLOTS; k++) {
		int i = (cl->stage_next + k) % CLG_CL_STAGE_SLOTS;
		clg_cl_stage *s = &cl->stage[i];
		size_t cap = n < STAGE_MIN ? STAGE_MIN : n;

		if (!slot_idle(s))
			continue;
		if (s->cap < n) { /* too small, or not made yet: (re)made at the size asked */
			slot_release(cl, s);
			s->mem = clCreateBuffer(cl->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, cap, NULL, &err);
			if (err != CL_SUCCESS) {
				s->mem = NULL;
				return NULL;
			}
			s->host = clEnqueueMapBuffer(cl->queue, s->mem, CL_TRUE, CL_MAP_WRITE, 0, cap, 0, NULL, NULL, &err);
			if (err != CL_SUCCESS || !s->host) {
				s->host = NULL;
				slot_release(cl, s);
				return NULL;
			}
			s->cap = cap;
		}
		cl->stage_next = (i + 1) % CLG_CL_STAGE_SLOTS;
		*slot = i;
		return s->host;
	}
	return NULL;
}

void clg_cl_stage_busy(clg_backend *be, int slot, cl_event ev)
{
	clg_cl_of(be)->stage[slot].busy = ev;
}

void clg_cl_stage_free(clg_backend *be)
{
	clg_cl *cl = clg_cl_of(be);

	for (int i = 0; i < CLG_CL_STAGE_SLOTS; i++)
		slot_release(cl, &cl->stage[i]);
	if (cl->queue)
		clFinish(cl->queue); /* the unmaps */
}
