// SPDX-License-Identifier: MIT
/* The float16 self-test's verdict per device, kept in the cache folder as half-off-<key>.txt
 * (key: clg_device_key) so that listing the devices, which opens none, reports native half as off
 * where the last self-test on that device and driver turned it off. The self-test itself decides
 * at every open (cl_selftest.c); this is only what the listing shows. */
#include "cl_internal.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The record's path in buf; dir gets the cache folder. -1 when caching is off. */
static int record_path(const clg_device_info *d, char *dir, size_t dlen, char *path, size_t len)
{
	clg_cl_cache_dir(dir, dlen);
	if (!dir[0])
		return -1;
	snprintf(path, len, "%s/half-off-%016llx.txt", dir, (unsigned long long)clg_device_key(d));
	return 0;
}

void clg_half_record_store(const clg_device_info *d)
{
	char dir[4096], path[4200], text[256];

	if (!d->has_fp16 || record_path(d, dir, sizeof(dir), path, sizeof(path)))
		return;
	if (!d->half_off[0]) {
		unlink(path);
		return;
	}
	snprintf(text, sizeof(text), "clgrad-half-off 1\n%.200s\n", d->half_off);
	if (clg_cl_mkdir_p(dir) != 0 || clg_write_file_atomic(path, text, strlen(text)) != CLG_OK) {
		clg_debug("half record %s: not written (%s)", path, clg_last_error());
		clg_clear_error();
	}
}

void clg_half_record_read(clg_device_info *d)
{
	char dir[4096], path[4200], line[256];
	FILE *f;

	d->half_off[0] = 0;
	if (!d->has_fp16 || record_path(d, dir, sizeof(dir), path, sizeof(path)))
		return;
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && !strcmp(line, "clgrad-half-off 1\n") && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(d->half_off, sizeof(d->half_off), "%.199s", line);
	}
	fclose(f);
}
