/* The reference backend: host memory and plain C loops. It defines what "right" means. */
#include "ref_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	clg_stats stats;
} ref_ctx;

static clg_status ref_alloc(clg_backend *be, size_t size, clg_buffer **out)
{
	ref_ctx *rc = be->ctx;
	size_t cap = (size + 63) / 64 * 64;
	clg_buffer *b;
	void *p = NULL;

	*out = NULL;
	if (cap < size || posix_memalign(&p, 64, cap) != 0)
		return clg_fail(CLG_ERR_OOM, "op 'alloc' on device 'reference': cannot allocate %zu bytes of host memory", size);
	b = calloc(1, sizeof(*b));
	if (!b) {
		free(p);
		return clg_fail(CLG_ERR_OOM, "op 'alloc' on device 'reference': out of host memory");
	}
	b->backend = be;
	b->handle = p;
	b->size = size;
	b->capacity = cap;
	rc->stats.n_alloc++;
	rc->stats.bytes_in_use += cap;
	if (rc->stats.bytes_in_use > rc->stats.bytes_peak)
		rc->stats.bytes_peak = rc->stats.bytes_in_use;
	*out = b;
	return CLG_OK;
}

static void ref_free(clg_backend *be, clg_buffer *b)
{
	ref_ctx *rc = be->ctx;
	rc->stats.bytes_in_use -= b->capacity;
	free(b->handle);
	free(b);
}

static clg_status ref_upload(clg_backend *be, clg_buffer *dst, size_t offset, const void *src, size_t n)
{
	(void)be;
	memcpy((char *)dst->handle + offset, src, n);
	return CLG_OK;
}

static clg_status ref_download(clg_backend *be, clg_buffer *src, size_t offset, void *dst, size_t n)
{
	(void)be;
	memcpy(dst, (const char *)src->handle + offset, n);
	return CLG_OK;
}

static clg_status ref_synchronize(clg_backend *be)
{
	(void)be;
	return CLG_OK;
}

static void ref_stats(clg_backend *be, clg_stats *out) { *out = ((ref_ctx *)be->ctx)->stats; }
static void ref_trim(clg_backend *be) { (void)be; }

static void ref_reset_peak(clg_backend *be)
{
	ref_ctx *rc = be->ctx;
	rc->stats.bytes_peak = rc->stats.bytes_in_use;
}

static void ref_close(clg_backend *be)
{
	free(be->ctx);
	free(be);
}

static const clg_backend_iface ref_iface = {
	.kind = "ref",
	.close = ref_close,
	.alloc = ref_alloc,
	.free = ref_free,
	.upload = ref_upload,
	.download = ref_download,
	.synchronize = ref_synchronize,
	.stats = ref_stats,
	.trim = ref_trim,
	.reset_peak = ref_reset_peak,
};

clg_status clg_ref_open(clg_backend **out)
{
	const clg_device_info *list;
	int count;
	clg_backend *be;
	clg_status st = clg_devices(&list, &count);

	*out = NULL;
	if (st)
		return st;
	be = calloc(1, sizeof(*be));
	if (!be || !(be->ctx = calloc(1, sizeof(ref_ctx)))) {
		free(be);
		return clg_fail(CLG_ERR_OOM, "open reference backend: out of host memory");
	}
	be->iface = &ref_iface;
	be->info = list[0];
	st = clg_kernel_shape_init(be); /* the reference has one shape; this checks the variable */
	if (st) {
		free(be->ctx);
		free(be);
		return st;
	}
	clg_ref_register_ops(be);
	*out = be;
	return CLG_OK;
}
