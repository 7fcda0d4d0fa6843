/* A size-bucketed caching allocator for device buffers.
 * Sizes round up to buckets of 2^k or 1.5 * 2^k bytes (at most a third wasted), so a freed buffer
 * is reused by the next request of the same bucket without a driver call. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#include "cl_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* ---- huge pages for the large buffers of CPU devices ----
 * A CPU runtime backs a buffer with ordinary malloc'd memory: 4 KiB pages, so a kernel streaming
 * through an im2col matrix or a conv output (tens of MiB) misses the TLB every 4 KiB, and the first
 * touch of each buffer takes a page fault per 4 KiB (the first step's ~100k faults for the CNN).
 * Buffers of HUGE_MIN bytes and more get memory of our own instead, 2 MiB aligned and advised for
 * transparent huge pages (MADV_HUGEPAGE: honoured in the kernel's default "madvise" mode), handed to
 * the runtime with CL_MEM_USE_HOST_PTR (zero-copy on CPU runtimes) and unmapped by the buffer's
 * destructor callback. CLGRAD_HUGEPAGES=0 turns it off; any failure falls back to the plain
 * buffer. */
#define HUGE_ALIGN ((size_t)2 << 20)
#define HUGE_MIN ((size_t)2 << 20)

typedef struct {
	void *base;
	size_t len;
} huge_map;

static void CL_CALLBACK huge_unmap(cl_mem mem, void *user)
{
	huge_map *m = user;
	(void)mem;
	munmap(m->base, m->len);
	free(m);
}

static int huge_wanted(const clg_backend *be, size_t cap)
{
	return be->info.type == CLG_DEV_CPU && cap >= HUGE_MIN && clg_cfg_bool(CLG_CFG_HUGEPAGES);
}

/* A buffer of cap bytes on 2 MiB-aligned anonymous memory advised for huge pages, or NULL. */
static cl_mem huge_mem(clg_backend *be, size_t cap)
{
	clg_cl *cl = clg_cl_of(be);
	size_t len = cap + HUGE_ALIGN;
	huge_map *m = malloc(sizeof(*m));
	char *raw, *p;
	cl_mem mem;
	cl_int err;

	if (!m || len < cap)
		goto fail_map;
	raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		goto fail_map;
	/* keep [p, p + cap) with p 2 MiB aligned; give back the rest on either side */
	p = (char *)(((uintptr_t)raw + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1));
	if (p > raw)
		munmap(raw, (size_t)(p - raw));
	if (raw + len > p + cap)
		munmap(p + cap, (size_t)(raw + len - (p + cap)));
	*m = (huge_map){.base = p, .len = cap};
#ifdef MADV_HUGEPAGE
	madvise(p, cap, MADV_HUGEPAGE); /* advice only: without it the pages are small, nothing else changes */
#endif
	mem = clCreateBuffer(cl->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, cap, p, &err);
	if (err != CL_SUCCESS)
		goto fail_buffer;
	if (clSetMemObjectDestructorCallback(mem, huge_unmap, m) != CL_SUCCESS) {
		clReleaseMemObject(mem); /* the runtime may still hold p: leak it rather than unmap it */
		return NULL;
	}
	return mem;
fail_buffer:
	munmap(m->base, m->len);
fail_map:
	free(m);
	return NULL;
}

static clg_status new_mem(clg_backend *be, size_t cap, cl_mem *out)
{
	clg_cl *cl = clg_cl_of(be);
	cl_int err;

	*out = huge_wanted(be, cap) ? huge_mem(be, cap) : NULL;
	if (*out)
		return CLG_OK;
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
