/* Uploads through the pinned staging ring (backend/opencl/cl_staging.c) on every OpenCL device:
 * many uploads in flight at once (more than the ring's slots, so some take a private copy), the
 * source overwritten right after each call (the upload must have copied it), sizes that make
 * slots grow, one above the pinned limit, and the same region written again and again (the last
 * write wins on the in-order queue); every buffer read back and compared. */
#include "test_util.h"

#include <string.h>

#define NBUF 24

static size_t size_of(int i)
{
	/* bytes: small, around the slots' 1 MiB, up to 3 MiB, and one above the 16 MiB limit */
	static const size_t sizes[] = {4, 1000, 65536, 1u << 20, (1u << 20) + 4, 3u << 20, 40, 17u << 20};
	return sizes[i % (int)(sizeof(sizes) / sizeof(sizes[0]))];
}

static void one_device(int idx)
{
	clg_backend *be = NULL;
	clg_buffer *buf[NBUF] = {0}, *same = NULL;
	size_t max = 17u << 20;
	float *src = malloc(max), *back = malloc(max);
	int bad = 0;

	CHECK_OK(clg_backend_open(idx, &be));
	if (!be || !src || !back)
		goto out;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < NBUF; i++) {
			size_t n = size_of(i) / sizeof(float);
			if (!buf[i])
				CHECK_OK(clg_buffer_alloc(be, n * sizeof(float), &buf[i]));
			if (!buf[i])
				goto out;
			for (size_t j = 0; j < n; j++)
				src[j] = (float)(round * 1000003 + i * 7919 + (int)j);
			CHECK_OK(clg_buffer_upload(buf[i], 0, src, n * sizeof(float)));
			memset(src, 0xff, n * sizeof(float)); /* the caller may reuse src at once */
		}
		/* one region written 10 times in a row, no wait between */
		if (!same)
			CHECK_OK(clg_buffer_alloc(be, 4096, &same));
		for (int w = 0; w < 10 && same; w++) {
			for (int j = 0; j < 1024; j++)
				src[j] = (float)(w * 100000 + j);
			CHECK_OK(clg_buffer_upload(same, 0, src, 4096));
		}
		for (int i = 0; i < NBUF; i++) {
			size_t n = size_of(i) / sizeof(float);
			CHECK_OK(clg_buffer_download(buf[i], 0, back, n * sizeof(float)));
			for (size_t j = 0; j < n && !bad; j++)
				if (back[j] != (float)(round * 1000003 + i * 7919 + (int)j)) {
					CHECK(0, "device %d round %d buffer %d (%zu bytes): element %zu is %g", idx, round, i,
					      n * sizeof(float), j, (double)back[j]);
					bad = 1;
				}
		}
		if (same) {
			CHECK_OK(clg_buffer_download(same, 0, back, 4096));
			for (int j = 0; j < 1024 && !bad; j++)
				if (back[j] != (float)(9 * 100000 + j)) {
					CHECK(0, "device %d round %d: the last of 10 writes did not win at %d (%g)", idx, round, j,
					      (double)back[j]);
					bad = 1;
				}
		}
	}
out:
	for (int i = 0; i < NBUF; i++)
		clg_buffer_free(buf[i]);
	clg_buffer_free(same);
	clg_backend_close(be);
	free(src);
	free(back);
}

int main(void)
{
	t_require_opencl();
	for (int idx = 1; idx <= t_opencl_count(); idx++)
		one_device(idx);
	return t_finish("test_staging");
}
