/* A size-bucketed caching allocator for device buffers.
 * Sizes round up to buckets of 2^k or 1.5 * 2^k bytes (at most a third wasted), so a freed buffer
 * is reused by the next request of the same bucket without a driver call. */
#include "cl_internal.h"

#include <stdlib.h>

static size_t bucket_size(size_t n)
{
	size_t p = 256;
	if (n <= p)
		return p;
	while (p < n) {
		if (p + p / 2 >= n)
			return p + p / 2;
		if (p > SIZE_MAX / 2)
			return n;
		p *= 2;
	}
	return p;
}

static clg_status new_mem(clg_backend *be, size_t cap, cl_mem *out)
{
	clg_cl *cl = clg_cl_of(be);
	cl_int err;

	*out = clCreateBuffer(cl->context, CL_MEM_READ_WRITE, cap, NULL, &err);
	if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY) {
		clg_cl_trim(be);  /* give cached buffers back to the driver, then try once more */
		*out = clCreateBuffer(cl->context, CL_MEM_READ_WRITE, cap, NULL, &err);
	}
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, "alloc", err, "clCreateBuffer of %zu bytes (%llu in use)", cap,
				   (unsigned long long)cl->stats.bytes_in_use);
	return CLG_OK;
}

clg_status clg_cl_alloc(clg_backend *be, size_t size, clg_buffer **out)
{
	clg_cl *cl = clg_cl_of(be);
	size_t cap = bucket_size(size);
	clg_buffer *b;
	cl_mem mem = NULL;
	clg_status st;

	*out = NULL;
	if (size > be->info.max_alloc)
		return clg_fail(CLG_ERR_OOM,
				"op 'alloc' on device '%s': %zu bytes exceed the device's largest allocation (%llu bytes)",
				be->info.name, size, (unsigned long long)be->info.max_alloc);
	if (cap > be->info.max_alloc)
		cap = size;
	if (clg_cl_fault(be, CLG_FAULT_ALLOC) != CL_SUCCESS)
		return clg_cl_fail(be, "alloc", CL_MEM_OBJECT_ALLOCATION_FAILURE, "buffer of %zu bytes (%llu in use)%s", size,
				   (unsigned long long)cl->stats.bytes_in_use, clg_cl_fault_note());
	cl->stats.n_alloc++;
	for (int i = 0; i < cl->ncached; i++) {
		if (cl->cached[i].capacity == cap) {
			mem = cl->cached[i].mem;
			cl->cached[i] = cl->cached[--cl->ncached];
			cl->stats.bytes_cached -= cap;
			cl->stats.n_reuse++;
			break;
		}
	}
	if (!mem) {
		/* Drivers often allocate lazily, so keep our own account against the device's memory. */
		if (cl->stats.bytes_in_use + cl->stats.bytes_cached + cap > be->info.global_mem)
			clg_cl_trim(be);
		if (cl->stats.bytes_in_use + cap > be->info.global_mem)
			return clg_fail(CLG_ERR_OOM,
					"op 'alloc' on device '%s': %zu bytes do not fit (%llu of %llu bytes in use)",
					be->info.name, size, (unsigned long long)cl->stats.bytes_in_use,
					(unsigned long long)be->info.global_mem);
		st = new_mem(be, cap, &mem);
		if (st)
			return st;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		clReleaseMemObject(mem);
		return clg_fail(CLG_ERR_OOM, "op 'alloc' on device '%s': out of host memory", be->info.name);
	}
	b->backend = be;
	b->handle = mem;
	b->size = size;
	b->capacity = cap;
	cl->stats.bytes_in_use += cap;
	if (cl->stats.bytes_in_use > cl->stats.bytes_peak)
		cl->stats.bytes_peak = cl->stats.bytes_in_use;
	*out = b;
	return CLG_OK;
}

void clg_cl_free(clg_backend *be, clg_buffer *b)
{
	clg_cl *cl = clg_cl_of(be);

	cl->stats.bytes_in_use -= b->capacity;
	if (cl->ncached == cl->capcached) {
		int cap = cl->capcached ? 2 * cl->capcached : 32;
		void *p = realloc(cl->cached, (size_t)cap * sizeof(*cl->cached));
		if (!p) { /* cannot cache it: release it instead */
			clReleaseMemObject((cl_mem)b->handle);
			free(b);
			return;
		}
		cl->cached = p;
		cl->capcached = cap;
	}
	/* Safe to reuse at once: the in-order queue runs later users after earlier ones. */
	cl->cached[cl->ncached].capacity = b->capacity;
	cl->cached[cl->ncached].mem = (cl_mem)b->handle;
	cl->ncached++;
	cl->stats.bytes_cached += b->capacity;
	free(b);
}

void clg_cl_trim(clg_backend *be)
{
	clg_cl *cl = clg_cl_of(be);
	for (int i = 0; i < cl->ncached; i++)
		clReleaseMemObject(cl->cached[i].mem);
	cl->ncached = 0;
	cl->stats.bytes_cached = 0;
}
