/* compare section "capabilities": what `clgrad devices` knows about the device, the share of its
 * memory one buffer may take, and whether program binaries round-trip (the disk cache relies on
 * it). */
#include "compare.h"

#include "clg_measure.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int compare_capabilities(const clg_device_info *d, clg_backend *dev, const compare_opts *o, json_writer *w)
{
	char note[512];
	int ok = -1;
	clg_status st;

	json_key_str(w, "platform", d->platform);
	json_key_str(w, "platform_version", d->platform_version);
	json_key_str(w, "platform_vendor", d->platform_vendor);
	json_key_str(w, "vendor", d->vendor);
	json_key_str(w, "name", d->name);
	json_key_str(w, "type", clg_device_type_name(d->type));
	json_key_str(w, "cl_version", d->cl_version);
	json_key_str(w, "clc_version", d->clc_version);
	json_key_str(w, "driver_version", d->driver_version);
	json_key_str(w, "il_version", d->il_version);
	json_key(w, "extensions");
	json_begin_array(w);
	for (const char *e = d->extensions; *e;) {
		char one[128];
		size_t n = strcspn(e, " ");
		snprintf(one, sizeof(one), "%.*s", (int)n, e);
		if (n)
			json_str(w, one);
		e += n + (e[n] == ' ');
	}
	json_end_array(w);
	json_key_int(w, "compute_units", d->compute_units);
	json_key_int(w, "clock_mhz", d->clock_mhz);
	json_key_int(w, "global_mem", (int64_t)d->global_mem);
	json_key_int(w, "local_mem", (int64_t)d->local_mem);
	json_key_int(w, "max_alloc", (int64_t)d->max_alloc);
	json_key_int(w, "max_wg_size", (int64_t)d->max_wg_size);
	json_key_int(w, "timer_resolution_ns", (int64_t)d->timer_resolution_ns);
	json_key_bool(w, "has_fp16", d->has_fp16);
	json_key_bool(w, "has_fp64", d->has_fp64);
	json_key_bool(w, "has_subgroups", d->has_subgroups);
	json_key_bool(w, "has_int_dot", d->has_int_dot);
	json_key_bool(w, "has_il", d->has_il);
	/* (the reference backend reports its host memory, or 0: then there is no ratio) */
	json_key_num(w, "max_alloc_ratio", d->global_mem ? (double)d->max_alloc / (double)d->global_mem : NAN);

	if (d->crashed[0])
		json_key_str(w, "crashed", d->crashed);
	if (!dev) { /* written before the device is opened: what the device list knows */
		json_key(w, "binary_roundtrip");
		json_null(w);
		json_key_str(w, "binary_roundtrip_note", "not tried: the device was not open yet");
		return 0;
	}
	st = clg_binary_roundtrip(dev, &ok, note, sizeof(note));
	if (st) {
		ok = 0;
		snprintf(note, sizeof(note), "could not try: %s", clg_last_error());
	}
	json_key(w, "binary_roundtrip");
	if (ok < 0)
		json_null(w);
	else
		json_bool(w, ok);
	json_key_str(w, "binary_roundtrip_note", note);
	return 0;
}
