/* The device list (reference backend + every OpenCL device) and device selection. */
#include "clg_internal.h"
#include "clg_config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

static clg_device_info *devices;
static int ndevices;
static clg_status enum_status;
static char enum_error[1024];
static pthread_once_t once = PTHREAD_ONCE_INIT;

const char *clg_device_type_name(clg_device_type t)
{
	static const char *names[] = {"ref", "cpu", "gpu", "accelerator", "other"};
	return (unsigned)t <= CLG_DEV_OTHER ? names[t] : "?";
}

static void enumerate(void)
{
	clg_device_info *cl = NULL;
	int ncl = 0;

	enum_status = clg_cl_enumerate(&cl, &ncl, 1);
	if (enum_status)
		snprintf(enum_error, sizeof(enum_error), "%s", clg_last_error());
	devices = calloc((size_t)ncl + 1, sizeof(*devices));
	if (!devices) {
		free(cl);
		enum_status = CLG_ERR_OOM;
		snprintf(enum_error, sizeof(enum_error), "device list: out of host memory");
		return;
	}
	devices[0].index = 0;
	devices[0].type = CLG_DEV_REF;
	snprintf(devices[0].platform, sizeof(devices[0].platform), "clgrad");
	snprintf(devices[0].platform_vendor, sizeof(devices[0].platform_vendor), "clgrad");
	snprintf(devices[0].vendor, sizeof(devices[0].vendor), "clgrad");
	snprintf(devices[0].name, sizeof(devices[0].name), "reference");
	snprintf(devices[0].driver_version, sizeof(devices[0].driver_version), "plain C");
	devices[0].compute_units = 1;
	devices[0].has_fp64 = 1;
	if (ncl)
		memcpy(devices + 1, cl, (size_t)ncl * sizeof(*cl));
	for (int i = 1; i <= ncl; i++) {
		clg_crash_state(&devices[i]); /* a crash an earlier run left on record (cl_crash.c) */
		clg_half_record_read(&devices[i]); /* the last float16 self-test's verdict (cl_half_record.c) */
	}
	ndevices = ncl + 1;
	free(cl);
}

clg_status clg_devices(const clg_device_info **list, int *count)
{
	pthread_once(&once, enumerate);
	*list = devices;
	*count = ndevices;
	if (!devices)
		return clg_fail(enum_status, "%s", enum_error);
	/* A failing OpenCL platform still leaves the reference backend usable. */
	if (enum_status)
		clg_debug("OpenCL enumeration: %s", enum_error);
	return CLG_OK;
}

int clg_device_is_simulator(const clg_device_info *d)
{
	return clg_contains_nocase(d->name, "oclgrind") || clg_contains_nocase(d->platform, "oclgrind");
}

/* The first device of type t; for the default, never a simulator or a device on record as crashed */
static int first_of_type(const clg_device_info *list, int count, clg_device_type t, int usable_only)
{
	for (int i = 1; i < count; i++)
		if (list[i].type == t && (!usable_only || (!clg_device_is_simulator(&list[i]) && !list[i].crashed[0])))
			return i;
	return -1;
}

clg_status clg_device_select(const char *spec, int *index)
{
	const clg_device_info *list;
	int count, i;
	char *end;
	long n;
	clg_status st = clg_devices(&list, &count);

	*index = -1;
	if (st)
		return st;
	if (!spec || !*spec)
		spec = clg_cfg_str(CLG_CFG_DEVICE);
	if (!spec || !*spec) {
		i = first_of_type(list, count, CLG_DEV_GPU, 1);
		if (i < 0)
			i = first_of_type(list, count, CLG_DEV_CPU, 1);
		*index = i < 0 ? 0 : i;
		return CLG_OK;
	}
	n = strtol(spec, &end, 10);
	if (*end == 0) {
		if (n < 0 || n >= count)
			return clg_fail(CLG_ERR_DEVICE, "device '%s': index out of range (0..%d; see `clgrad devices`)",
					spec, count - 1);
		*index = (int)n;
		return CLG_OK;
	}
	if (!strcasecmp(spec, "ref")) {
		*index = 0;
		return CLG_OK;
	}
	if (!strcasecmp(spec, "cpu") || !strcasecmp(spec, "gpu")) {
		i = first_of_type(list, count, tolower((unsigned char)spec[0]) == 'c' ? CLG_DEV_CPU : CLG_DEV_GPU, 0);
		if (i < 0)
			return clg_fail(CLG_ERR_DEVICE, "device '%s': no OpenCL %s device present (see `clgrad devices`)",
					spec, spec);
		*index = i;
		return CLG_OK;
	}
	for (i = 1; i < count; i++) {
		/* the platform's vendor too: "pocl" is only in PoCL's ("The pocl project") */
		if (clg_contains_nocase(list[i].name, spec) || clg_contains_nocase(list[i].platform, spec) ||
		    clg_contains_nocase(list[i].platform_vendor, spec)) {
			*index = i;
			return CLG_OK;
		}
	}
	return clg_fail(CLG_ERR_DEVICE,
			"device '%s': no device matches (use an index, ref, cpu, gpu, or part of a platform, vendor or device name; see `clgrad devices`)",
			spec);
}
