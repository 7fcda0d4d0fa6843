/* Device list and selection: the reference backend at index 0, every OpenCL device described,
 * clg_device_select's spec forms, and several backends (devices) alive at once. */
#include "test_util.h"

#include <ctype.h>
#include <string.h>

static int contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return 1;
	}
	return n == 0;
}

static int first_of(const clg_device_info *list, int n, clg_device_type t)
{
	for (int i = 1; i < n; i++)
		if (list[i].type == t)
			return i;
	return -1;
}

/* The index the library should pick for a name substring: the first OpenCL device whose name or
 * platform contains it. */
static int first_matching(const clg_device_info *list, int n, const char *sub)
{
	for (int i = 1; i < n; i++)
		if (contains_nocase(list[i].name, sub) || contains_nocase(list[i].platform, sub))
			return i;
	return -1;
}

static void check_list(const clg_device_info *list, int n)
{
	CHECK(n >= 2, "expected the reference backend plus at least one OpenCL device, got %d", n);
	CHECK(list[0].index == 0, "ref index %d", list[0].index);
	CHECK(list[0].type == CLG_DEV_REF, "device 0 has type %s", clg_device_type_name(list[0].type));
	CHECK(!strcmp(clg_device_type_name(CLG_DEV_REF), "ref"), "type name of ref");
	for (int i = 1; i < n; i++) {
		const clg_device_info *d = &list[i];
		printf("device %d: %s | %s (%s) | %s | %s | driver %s | %u CUs | %llu MiB global | %llu MiB max alloc | fp64 %d\n",
		       d->index, clg_device_type_name(d->type), d->platform, d->platform_vendor, d->name, d->cl_version,
		       d->driver_version,
		       d->compute_units, (unsigned long long)(d->global_mem >> 20),
		       (unsigned long long)(d->max_alloc >> 20), d->has_fp64);
		CHECK(d->index == i, "device at %d has index %d", i, d->index);
		CHECK(d->type != CLG_DEV_REF, "OpenCL device %d typed ref", i);
		CHECK(d->platform[0], "device %d: empty platform", i);
		CHECK(d->name[0], "device %d: empty name", i);
		CHECK(d->cl_version[0], "device %d: empty CL_DEVICE_VERSION", i);
		CHECK(!strncmp(d->cl_version, "OpenCL ", 7), "device %d: CL_DEVICE_VERSION '%s'", i, d->cl_version);
		CHECK(d->clc_version[0], "device %d: empty CL_DEVICE_OPENCL_C_VERSION", i);
		CHECK(d->driver_version[0], "device %d: empty driver version", i);
		CHECK(d->platform_vendor[0], "device %d: empty CL_PLATFORM_VENDOR", i);
		CHECK(d->vendor[0], "device %d: empty CL_DEVICE_VENDOR", i);
		CHECK(!strncmp(d->extensions, "cl_", 3), "device %d: extension list '%.60s'", i, d->extensions);
		CHECK(!strstr(d->extensions, "  ") && d->extensions[strlen(d->extensions) - 1] != ' ',
		      "device %d: extension list not single-spaced: '%s'", i, d->extensions);
		CHECK(d->has_fp16 == (strstr(d->extensions, "cl_khr_fp16") != NULL), "device %d: fp16 flag %d vs list", i,
		      d->has_fp16);
		CHECK(d->compute_units > 0, "device %d: compute_units %u", i, d->compute_units);
		CHECK(d->global_mem > 0, "device %d: global_mem 0", i);
		CHECK(d->max_alloc > 0, "device %d: max_alloc 0", i);
		CHECK(d->max_alloc <= d->global_mem, "device %d: max_alloc %llu > global_mem %llu", i,
		      (unsigned long long)d->max_alloc, (unsigned long long)d->global_mem);
		CHECK(d->max_wg_size > 0, "device %d: max_wg_size 0", i);
	}
	/* enumerated once: a second call hands back the same array */
	{
		const clg_device_info *again;
		int n2;
		CHECK_OK(clg_devices(&again, &n2));
		CHECK(again == list && n2 == n, "second clg_devices call differs");
	}
}

static void expect_select(const char *spec, int want)
{
	int idx = -2;
	clg_status s = clg_device_select(spec, &idx);
	CHECK(s == CLG_OK, "select '%s' -> %s: %s", spec ? spec : "(null)", clg_status_name(s), clg_last_error());
	CHECK(idx == want, "select '%s' -> %d, want %d", spec ? spec : "(null)", idx, want);
}

static void expect_select_fails(const char *spec, const char *msg_part)
{
	int idx = 5;
	clg_clear_error();
	clg_status s = clg_device_select(spec, &idx);
	CHECK(s == CLG_ERR_DEVICE, "select '%s' -> %s, want device error", spec ? spec : "(null)", clg_status_name(s));
	CHECK(idx == -1, "failed select '%s' left index %d", spec ? spec : "(null)", idx);
	CHECK(strstr(clg_last_error(), msg_part) != NULL, "select '%s': message '%s' lacks '%s'",
	      spec ? spec : "(null)", clg_last_error(), msg_part);
}

static void check_select(const clg_device_info *list, int n)
{
	char spec[64];
	int want_default, cpu = first_of(list, n, CLG_DEV_CPU), gpu = first_of(list, n, CLG_DEV_GPU);

	expect_select("ref", 0);
	expect_select("REF", 0);
	expect_select("0", 0);
	for (int i = 0; i < n; i++) {
		snprintf(spec, sizeof(spec), "%d", i);
		expect_select(spec, i);
	}
	snprintf(spec, sizeof(spec), "%d", n);
	expect_select_fails(spec, spec);
	expect_select_fails("-1", "-1");

	if (cpu > 0) {
		int idx = -1;
		expect_select("cpu", cpu);
		CHECK_OK(clg_device_select("cpu", &idx));
		CHECK(idx > 0 && list[idx].type == CLG_DEV_CPU, "'cpu' picked device %d", idx);
	} else {
		expect_select_fails("cpu", "cpu");
	}
	if (gpu > 0)
		expect_select("gpu", gpu);
	else
		expect_select_fails("gpu", "gpu");

	/* substrings of the platform and device names, in swapped case */
	for (int i = 1; i < n; i++) {
		char sub[16];
		size_t len = strlen(list[i].name), take = len < 6 ? len : 6, start = len > 8 ? 2 : 0;
		memcpy(sub, list[i].name + start, take);
		sub[take] = 0;
		for (char *p = sub; *p; p++)
			*p = (char)(isupper((unsigned char)*p) ? tolower((unsigned char)*p) : toupper((unsigned char)*p));
		/* a purely numeric piece would be read as an index */
		if (strspn(sub, "0123456789") != strlen(sub))
			expect_select(sub, first_matching(list, n, sub));

		len = strlen(list[i].platform);
		take = len < 8 ? len : 8;
		memcpy(sub, list[i].platform, take);
		sub[take] = 0;
		for (char *p = sub; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		if (strspn(sub, "0123456789") != strlen(sub))
			expect_select(sub, first_matching(list, n, sub));
	}
	if (first_matching(list, n, "portable") > 0) {
		expect_select("portable", first_matching(list, n, "portable"));
	}

	expect_select_fails("no-such-device-xyz", "no-such-device-xyz");

	/* NULL and "" read $CLGRAD_DEVICE, else pick the default */
	want_default = gpu > 0 ? gpu : cpu > 0 ? cpu : 0;
	clg_config_set("DEVICE", NULL);
	expect_select(NULL, want_default);
	expect_select("", want_default);
	clg_config_set("DEVICE", "");
	expect_select(NULL, want_default);
	clg_config_set("DEVICE", "ref");
	expect_select(NULL, 0);
	expect_select("", 0);
	snprintf(spec, sizeof(spec), "%d", n - 1);
	clg_config_set("DEVICE", spec);
	expect_select(NULL, n - 1);
	/* an explicit spec wins over the environment */
	expect_select("ref", 0);
	clg_config_set("DEVICE", "bogus-env-device");
	expect_select_fails(NULL, "bogus-env-device");
	expect_select_fails("", "bogus-env-device");
	clg_config_set("DEVICE", NULL);
	expect_select(NULL, want_default);
}

/* Opens the reference backend and every OpenCL device at once and moves distinct data through each. */
static void check_many_open(int n)
{
	enum { N = 1000 };
	clg_backend *be[16] = {0};
	clg_buffer *buf[16] = {0};
	float in[N], out[N];
	int nb = n < 16 ? n : 16;

	for (int i = 0; i < nb; i++) {
		CHECK_OK(clg_backend_open(i, &be[i]));
		if (!be[i])
			continue;
		CHECK(be[i]->info.index == i, "backend %d reports index %d", i, be[i]->info.index);
		CHECK(!strcmp(be[i]->iface->kind, i ? "opencl" : "ref"), "backend %d kind %s", i, be[i]->iface->kind);
		CHECK_OK(clg_buffer_alloc(be[i], sizeof(float) * N, &buf[i]));
		if (!buf[i])
			continue;
		CHECK(buf[i]->backend == be[i] && buf[i]->size == sizeof(float) * N, "buffer %d fields", i);
		for (int k = 0; k < N; k++)
			in[k] = (float)(i * 10000 + k);
		CHECK_OK(clg_buffer_upload(buf[i], 0, in, sizeof(in)));
		/* the upload is asynchronous: overwriting the host copy at once must not matter */
		memset(in, 0xff, sizeof(in));
	}
	/* every device still holds its own data, with all of them alive */
	for (int i = 0; i < nb; i++) {
		int bad = 0;
		if (!buf[i])
			continue;
		memset(out, 0, sizeof(out));
		CHECK_OK(clg_buffer_download(buf[i], 0, out, sizeof(out)));
		for (int k = 0; k < N; k++)
			bad += out[k] != (float)(i * 10000 + k);
		CHECK(bad == 0, "device %d: %d of %d values wrong after round trip", i, bad, N);
		/* partial transfer at an offset */
		float part[3] = {-1.5f, 2.5f, 7.0f}, back[5];
		CHECK_OK(clg_buffer_upload(buf[i], 10 * sizeof(float), part, sizeof(part)));
		CHECK_OK(clg_synchronize(be[i]));
		CHECK_OK(clg_buffer_download(buf[i], 9 * sizeof(float), back, sizeof(back)));
		CHECK(back[0] == (float)(i * 10000 + 9) && back[1] == -1.5f && back[2] == 2.5f && back[3] == 7.0f &&
		      back[4] == (float)(i * 10000 + 13), "device %d: partial transfer wrong: %g %g %g %g %g", i,
		      back[0], back[1], back[2], back[3], back[4]);
	}
	/* explicit copy between devices through the host: last device -> reference */
	if (nb > 1 && buf[0] && buf[nb - 1]) {
		CHECK_OK(clg_buffer_download(buf[nb - 1], 0, out, sizeof(out)));
		CHECK_OK(clg_buffer_upload(buf[0], 0, out, sizeof(out)));
		CHECK_OK(clg_buffer_download(buf[0], 0, in, sizeof(in)));
		CHECK(in[500] == (float)((nb - 1) * 10000 + 500), "copy between devices: %g", in[500]);
	}
	for (int i = 0; i < nb; i++) {
		clg_buffer_free(buf[i]);
		clg_backend_close(be[i]);
	}
	/* the same device opened twice is two independent instances */
	if (n > 1) {
		clg_backend *a = NULL, *b = NULL;
		clg_buffer *ba = NULL, *bb = NULL;
		float x = 1, y = 2, rx = 0, ry = 0;
		CHECK_OK(clg_backend_open(1, &a));
		CHECK_OK(clg_backend_open(1, &b));
		if (a && b && !clg_buffer_alloc(a, 4, &ba) && !clg_buffer_alloc(b, 4, &bb)) {
			CHECK(a != b, "two opens returned one instance");
			CHECK_OK(clg_buffer_upload(ba, 0, &x, 4));
			CHECK_OK(clg_buffer_upload(bb, 0, &y, 4));
			CHECK_OK(clg_buffer_download(ba, 0, &rx, 4));
			CHECK_OK(clg_buffer_download(bb, 0, &ry, 4));
			CHECK(rx == 1 && ry == 2, "two instances of device 1: %g %g", rx, ry);
		}
		clg_buffer_free(ba);
		clg_buffer_free(bb);
		clg_backend_close(a);
		clg_backend_close(b);
	}
}

int main(void)
{
	const clg_device_info *list = NULL;
	int n = 0;

	t_require_opencl();
	CHECK_OK(clg_devices(&list, &n));
	if (!list || n < 1)
		return t_finish("test_devices");
	check_list(list, n);
	check_select(list, n);
	check_many_open(n);
	return t_finish("test_devices");
}
