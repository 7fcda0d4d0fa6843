/* The caching allocator: reuse within a size bucket, separate buckets for different sizes,
 * in-use / peak / cached accounting, trim; the huge-page buffers of CPU devices; and the reference
 * backend's in-use / peak. */
#include "test_util.h"

#include <CL/cl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static clg_stats stats_of(clg_backend *be)
{
	clg_stats s;
	clg_backend_stats(be, &s);
	return s;
}

static void expect_bytes(clg_backend *be, uint64_t in_use, uint64_t peak, uint64_t cached, const char *what)
{
	clg_stats s = stats_of(be);
	CHECK(s.bytes_in_use == in_use, "%s: bytes_in_use %llu, want %llu", what, (unsigned long long)s.bytes_in_use,
	      (unsigned long long)in_use);
	CHECK(s.bytes_peak == peak, "%s: bytes_peak %llu, want %llu", what, (unsigned long long)s.bytes_peak,
	      (unsigned long long)peak);
	CHECK(s.bytes_cached == cached, "%s: bytes_cached %llu, want %llu", what, (unsigned long long)s.bytes_cached,
	      (unsigned long long)cached);
}

/* A buffer is usable: what goes in comes back out. */
static void roundtrip(clg_buffer *b, unsigned seed, const char *what)
{
	size_t n = b->size / sizeof(float);
	float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
	if (!x || !y) {
		CHECK(0, "out of host memory");
	} else if (n) {
		t_fill_uniform(x, n, seed, -1, 1);
		CHECK_OK(clg_buffer_upload(b, 0, x, n * sizeof(float)));
		CHECK_OK(clg_buffer_download(b, 0, y, n * sizeof(float)));
		CHECK(memcmp(x, y, n * sizeof(float)) == 0, "%s: data changed in a round trip", what);
	}
	free(x);
	free(y);
}

static void check_cl_allocator(clg_backend *be)
{
	clg_buffer *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	clg_stats s0, s;
	uint64_t cap_a, cap_b, peak;
	void *mem_a, *mem_b;

	printf("device '%s':\n", be->info.name);
	s0 = stats_of(be);
	CHECK(s0.bytes_in_use == 0 && s0.bytes_peak == 0 && s0.bytes_cached == 0 && s0.n_alloc == 0 && s0.n_reuse == 0,
	      "a fresh backend has non-zero allocator stats");

	/* bucket sizes: at least the request, less than 1.5x over it (above the 256-byte minimum) */
	{
		static const size_t sizes[] = {1, 100, 256, 257, 1000, 1024, 1025, 1536, 1537, 3000, 100000, 1 << 20,
					       (1 << 20) + 1, 3 << 20};
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			clg_buffer *t = NULL;
			CHECK_OK(clg_buffer_alloc(be, sizes[i], &t));
			if (!t)
				continue;
			CHECK(t->size == sizes[i], "size %zu recorded as %zu", sizes[i], t->size);
			CHECK(t->capacity >= sizes[i], "size %zu got capacity %zu", sizes[i], t->capacity);
			CHECK(t->capacity <= 256 || t->capacity * 2 < sizes[i] * 3, "size %zu got capacity %zu (over 1.5x)",
			      sizes[i], t->capacity);
			CHECK(stats_of(be).bytes_in_use == t->capacity, "in use %llu with one buffer of capacity %zu",
			      (unsigned long long)stats_of(be).bytes_in_use, t->capacity);
			clg_buffer_free(t);
		}
		be->iface->trim(be);
		s = stats_of(be);
		CHECK(s.bytes_in_use == 0 && s.bytes_cached == 0, "after freeing and trimming: in use %llu, cached %llu",
		      (unsigned long long)s.bytes_in_use, (unsigned long long)s.bytes_cached);
		peak = s.bytes_peak;
		CHECK(peak >= (3 << 20), "peak %llu below the largest buffer", (unsigned long long)peak);
	}

	/* alloc / free / alloc of one size reuses the buffer */
	s0 = stats_of(be);
	CHECK_OK(clg_buffer_alloc(be, 1000, &a));
	if (!a)
		return;
	cap_a = a->capacity;
	mem_a = a->handle;
	CHECK(cap_a == 1024, "1000 bytes went to bucket %llu, want 1024", (unsigned long long)cap_a);
	expect_bytes(be, cap_a, peak, 0, "one live buffer");
	clg_buffer_free(a);
	expect_bytes(be, 0, peak, cap_a, "freed into the cache");
	CHECK_OK(clg_buffer_alloc(be, 1000, &a));
	s = stats_of(be);
	CHECK(s.n_reuse == s0.n_reuse + 1, "n_reuse %llu -> %llu, want +1", (unsigned long long)s0.n_reuse,
	      (unsigned long long)s.n_reuse);
	CHECK(s.n_alloc == s0.n_alloc + 2, "n_alloc %llu -> %llu, want +2", (unsigned long long)s0.n_alloc,
	      (unsigned long long)s.n_alloc);
	CHECK(a && a->handle == mem_a, "reuse did not hand back the cached cl_mem");
	expect_bytes(be, cap_a, peak, 0, "reused buffer");
	if (a)
		roundtrip(a, 1, "reused buffer");

	/* a size in the same bucket reuses too; the next bucket does not */
	clg_buffer_free(a);
	s0 = stats_of(be);
	CHECK_OK(clg_buffer_alloc(be, 1024, &a));
	CHECK(stats_of(be).n_reuse == s0.n_reuse + 1 && a && a->handle == mem_a, "1024 bytes did not reuse the 1024 bucket");
	clg_buffer_free(a);
	s0 = stats_of(be);
	CHECK_OK(clg_buffer_alloc(be, 1025, &b));
	if (!b)
		return;
	cap_b = b->capacity;
	mem_b = b->handle;
	CHECK(cap_b == 1536, "1025 bytes went to bucket %llu, want 1536", (unsigned long long)cap_b);
	CHECK(stats_of(be).n_reuse == s0.n_reuse, "1025 bytes reused a 1024-byte buffer");
	CHECK(mem_b != mem_a, "two live buffers share a cl_mem");
	expect_bytes(be, cap_b, peak, cap_a, "1536 live, 1024 cached");

	/* two buckets cached at once; each request finds its own */
	clg_buffer_free(b);
	expect_bytes(be, 0, peak, cap_a + cap_b, "both buckets cached");
	s0 = stats_of(be);
	CHECK_OK(clg_buffer_alloc(be, 1500, &c)); /* 1536 bucket */
	CHECK_OK(clg_buffer_alloc(be, 900, &d));  /* 1024 bucket */
	s = stats_of(be);
	CHECK(s.n_reuse == s0.n_reuse + 2, "two cached buckets: n_reuse +%llu, want +2",
	      (unsigned long long)(s.n_reuse - s0.n_reuse));
	CHECK(c && c->handle == mem_b && c->capacity == cap_b, "1500 bytes did not get the cached 1536 buffer");
	CHECK(d && d->handle == mem_a && d->capacity == cap_a, "900 bytes did not get the cached 1024 buffer");
	expect_bytes(be, cap_a + cap_b, peak, 0, "both reused");
	/* a third size with both buckets in use: a new buffer */
	s0 = stats_of(be);
	CHECK_OK(clg_buffer_alloc(be, 300, &a)); /* 384 bucket */
	CHECK(stats_of(be).n_reuse == s0.n_reuse, "300 bytes reused something");
	CHECK(a && a->capacity == 384, "300 bytes in bucket %zu, want 384", a ? a->capacity : 0);
	expect_bytes(be, cap_a + cap_b + 384, peak, 0, "three live");
	if (c)
		roundtrip(c, 2, "1500-byte buffer");
	if (d)
		roundtrip(d, 3, "900-byte buffer");
	clg_buffer_free(a);
	clg_buffer_free(c);
	clg_buffer_free(d);
	expect_bytes(be, 0, peak, cap_a + cap_b + 384, "three cached");

	/* trim empties the cache: the next request allocates anew */
	be->iface->trim(be);
	expect_bytes(be, 0, peak, 0, "trimmed");
	s0 = stats_of(be);
	CHECK_OK(clg_buffer_alloc(be, 1000, &a));
	CHECK(stats_of(be).n_reuse == s0.n_reuse, "reuse after trim");
	if (a)
		roundtrip(a, 4, "buffer after trim");
	clg_buffer_free(a);
	be->iface->trim(be);

	/* peak: two 1 MiB buffers live at once, then one 512 KiB */
	{
		clg_backend *fresh = NULL;
		clg_buffer *m1 = NULL, *m2 = NULL, *m3 = NULL;
		uint64_t mib = 1 << 20;
		CHECK_OK(clg_backend_open(be->info.index, &fresh));
		if (!fresh)
			return;
		CHECK_OK(clg_buffer_alloc(fresh, mib, &m1));
		CHECK_OK(clg_buffer_alloc(fresh, mib, &m2));
		expect_bytes(fresh, 2 * mib, 2 * mib, 0, "two MiB live");
		clg_buffer_free(m1);
		clg_buffer_free(m2);
		expect_bytes(fresh, 0, 2 * mib, 2 * mib, "two MiB cached");
		CHECK_OK(clg_buffer_alloc(fresh, mib / 2, &m3));
		expect_bytes(fresh, mib / 2, 2 * mib, 2 * mib, "512 KiB live (new bucket), two MiB cached");
		CHECK(stats_of(fresh).n_reuse == 0, "512 KiB reused a 1 MiB buffer");
		clg_buffer_free(m3);
		CHECK_OK(clg_buffer_alloc(fresh, mib, &m1));
		CHECK_OK(clg_buffer_alloc(fresh, mib, &m2));
		CHECK_OK(clg_buffer_alloc(fresh, mib, &m3));
		expect_bytes(fresh, 3 * mib, 3 * mib, mib / 2, "three MiB live: new peak");
		CHECK(stats_of(fresh).n_reuse == 2, "n_reuse %llu, want 2", (unsigned long long)stats_of(fresh).n_reuse);
		clg_buffer_free(m1);
		clg_buffer_free(m2);
		clg_buffer_free(m3);
		/* closing with buffers cached releases them (no leak checks here, but no crash) */
		clg_backend_close(fresh);
	}
	/* stats of one instance are its own: the other instance's allocations did not show up */
	expect_bytes(be, 0, peak, 0, "original instance untouched");
}

/* CPU devices: a buffer of 2 MiB and more lies on memory of clgrad's own, 2 MiB aligned for huge
 * pages and passed with CL_MEM_USE_HOST_PTR (backend/opencl/cl_alloc.c); smaller ones, other
 * devices and CLGRAD_HUGEPAGES=0 take the driver's. Either way the data survive a round trip, and
 * freeing, trimming (the destructor callback unmaps) and allocating again work. */
static void check_huge_pages(clg_backend *be)
{
	static const size_t sizes[] = {1 << 20, 2 << 20, 3 << 20, (5 << 20) + 7, 2 << 20};
	const size_t huge = (size_t)2 << 20;

	for (int off = 0; off < 2; off++) {
		if (off)
			clg_config_set("HUGEPAGES", "0");
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			clg_buffer *b = NULL;
			cl_mem_flags flags = 0;
			void *host = NULL;
			int want;
			CHECK_OK(clg_buffer_alloc(be, sizes[i], &b));
			if (!b)
				continue;
			want = !off && be->info.type == CLG_DEV_CPU && b->capacity >= huge;
			CHECK(clGetMemObjectInfo((cl_mem)b->handle, CL_MEM_FLAGS, sizeof(flags), &flags, NULL) == CL_SUCCESS &&
				      clGetMemObjectInfo((cl_mem)b->handle, CL_MEM_HOST_PTR, sizeof(host), &host, NULL) == CL_SUCCESS,
			      "clGetMemObjectInfo on a buffer of %zu bytes", sizes[i]);
			CHECK(!!(flags & CL_MEM_USE_HOST_PTR) == want, "%zu bytes (capacity %zu, huge pages %s): "
			      "CL_MEM_USE_HOST_PTR %s, want %s", sizes[i], b->capacity, off ? "off" : "on",
			      flags & CL_MEM_USE_HOST_PTR ? "set" : "clear", want ? "set" : "clear");
			CHECK(!want || ((uintptr_t)host & (huge - 1)) == 0, "%zu bytes at %p: not 2 MiB aligned", sizes[i], host);
			roundtrip(b, 10 + (unsigned)i, off ? "large buffer, huge pages off" : "large buffer");
			clg_buffer_free(b);
			if (i == 2)
				be->iface->trim(be); /* the next 2 MiB request allocates anew after an unmap */
		}
		be->iface->trim(be);
	}
	clg_config_set("HUGEPAGES", NULL);
}

static void check_ref(void)
{
	clg_backend *be = NULL;
	clg_buffer *a = NULL, *b = NULL;
	clg_stats s;

	printf("reference backend\n");
	CHECK_OK(clg_backend_open(0, &be));
	if (!be)
		return;
	expect_bytes(be, 0, 0, 0, "ref fresh");
	CHECK_OK(clg_buffer_alloc(be, 100, &a));
	CHECK_OK(clg_buffer_alloc(be, 1000, &b));
	if (a && b) {
		uint64_t ca = a->capacity, cb = b->capacity;
		CHECK(ca >= 100 && cb >= 1000, "ref capacities %llu %llu", (unsigned long long)ca, (unsigned long long)cb);
		expect_bytes(be, ca + cb, ca + cb, 0, "ref two live");
		roundtrip(b, 5, "ref buffer");
		clg_buffer_free(a);
		a = NULL;
		expect_bytes(be, cb, ca + cb, 0, "ref one freed");
		be->iface->trim(be);
		expect_bytes(be, cb, ca + cb, 0, "ref trim");
		clg_buffer_free(b);
		b = NULL;
		expect_bytes(be, 0, ca + cb, 0, "ref all freed");
	}
	clg_backend_stats(be, &s);
	CHECK(s.n_alloc == 2, "ref n_alloc %llu", (unsigned long long)s.n_alloc);
	clg_buffer_free(a);
	clg_buffer_free(b);
	clg_backend_close(be);
}

int main(void)
{
	const clg_device_info *list;
	int n;

	t_require_opencl();
	CHECK_OK(clg_devices(&list, &n));
	check_ref();
	for (int i = 1; i < n; i++) {
		clg_backend *be = NULL;
		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		check_cl_allocator(be);
		check_huge_pages(be);
		clg_backend_close(be);
	}
	return t_finish("test_alloc");
}
