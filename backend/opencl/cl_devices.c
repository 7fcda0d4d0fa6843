/* Enumerates every OpenCL platform and device through the ICD loader and describes each. */
#include "cl_internal.h"

#include <stdlib.h>
#include <string.h>

/* ids[i] belongs to the device at list position first_index + i */
static cl_platform_id *plat_ids;
static cl_device_id *dev_ids;
static int ndev, first;

/* A string property, cut to len - 1 bytes if longer: asking with a too-small buffer fails
 * (PoCL's CL_DEVICE_VERSION names the CPU and passes 64 bytes on an avx512 host). */
static void info_text(cl_platform_id p, cl_device_id d, cl_uint what, char *buf, size_t len)
{
	size_t need = 0;
	char *tmp = NULL;
	cl_int err;

	buf[0] = 0;
	err = d ? clGetDeviceInfo(d, what, 0, NULL, &need) : clGetPlatformInfo(p, what, 0, NULL, &need);
	if (err != CL_SUCCESS || need == 0 || !(tmp = calloc(need + 1, 1)))
		return;
	err = d ? clGetDeviceInfo(d, what, need, tmp, NULL) : clGetPlatformInfo(p, what, need, tmp, NULL);
	if (err == CL_SUCCESS) {
		strncpy(buf, tmp, len - 1);
		buf[len - 1] = 0;
	}
	free(tmp);
}

static void info_str(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
	info_text(NULL, d, what, buf, len);
}

static uint64_t info_u64(cl_device_id d, cl_device_info what, size_t size)
{
	uint64_t v = 0;
	if (size == 4) {
		cl_uint u = 0;
		clGetDeviceInfo(d, what, 4, &u, NULL);
		v = u;
	} else {
		clGetDeviceInfo(d, what, size, &v, NULL);
	}
	return v;
}

/* the extension names, single spaces between them; a name that does not fit is left out whole */
static void extension_list(const char *ext, char *out, size_t len)
{
	size_t used = 0;

	out[0] = 0;
	while (*ext) {
		size_t n;
		ext += strspn(ext, " \t\n");
		n = strcspn(ext, " \t\n");
		if (!n)
			break;
		if (used + (used > 0) + n + 1 > len)
			break;
		if (used)
			out[used++] = ' ';
		memcpy(out + used, ext, n);
		used += n;
		out[used] = 0;
		ext += n;
	}
}

static void describe(cl_platform_id p, cl_device_id d, clg_device_info *info)
{
	cl_device_type type = 0;
	char *ext = NULL;
	size_t extlen = 0;

	info_text(p, NULL, CL_PLATFORM_NAME, info->platform, sizeof(info->platform));
	info_text(p, NULL, CL_PLATFORM_VERSION, info->platform_version, sizeof(info->platform_version));
	info_text(p, NULL, CL_PLATFORM_VENDOR, info->platform_vendor, sizeof(info->platform_vendor));
	info_str(d, CL_DEVICE_VENDOR, info->vendor, sizeof(info->vendor));
	info_str(d, CL_DEVICE_NAME, info->name, sizeof(info->name));
	info_str(d, CL_DEVICE_VERSION, info->cl_version, sizeof(info->cl_version));
	info_str(d, CL_DEVICE_OPENCL_C_VERSION, info->clc_version, sizeof(info->clc_version));
	info_str(d, CL_DRIVER_VERSION, info->driver_version, sizeof(info->driver_version));
	info_str(d, 0x105B /* CL_DEVICE_IL_VERSION, 2.1+ */, info->il_version, sizeof(info->il_version));

	clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	info->type = (type & CL_DEVICE_TYPE_GPU) ? CLG_DEV_GPU : (type & CL_DEVICE_TYPE_CPU) ? CLG_DEV_CPU
		   : (type & CL_DEVICE_TYPE_ACCELERATOR) ? CLG_DEV_ACCEL : CLG_DEV_OTHER;
	info->compute_units = (unsigned)info_u64(d, CL_DEVICE_MAX_COMPUTE_UNITS, 4);
	info->clock_mhz = (unsigned)info_u64(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, 4);
	info->global_mem = info_u64(d, CL_DEVICE_GLOBAL_MEM_SIZE, 8);
	info->local_mem = info_u64(d, CL_DEVICE_LOCAL_MEM_SIZE, 8);
	info->max_alloc = info_u64(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8);
	info->max_wg_size = info_u64(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t));
	info->timer_resolution_ns = info_u64(d, CL_DEVICE_PROFILING_TIMER_RESOLUTION, sizeof(size_t));

	if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &extlen) == CL_SUCCESS &&
	    (ext = calloc(extlen + 1, 1)) && clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, extlen, ext, NULL) == CL_SUCCESS) {
		/* Extensions are probed, never assumed: a device gets a feature only if it names it. */
		info->has_fp16 = strstr(ext, "cl_khr_fp16") != NULL;
		info->has_fp64 = strstr(ext, "cl_khr_fp64") != NULL;
		info->has_subgroups = strstr(ext, "cl_khr_subgroups") || strstr(ext, "cl_intel_subgroups");
		info->has_int_dot = strstr(ext, "cl_khr_integer_dot_product") != NULL;
		info->has_il = strstr(ext, "cl_khr_il_program") || info->il_version[0];
		extension_list(ext, info->extensions, sizeof(info->extensions));
	}
	if (!info->has_fp64 && info_u64(d, 0x1032 /* CL_DEVICE_DOUBLE_FP_CONFIG */, 8))
		info->has_fp64 = 1;
	free(ext);
}

clg_status clg_cl_enumerate(clg_device_info **list, int *count, int first_index)
{
	cl_uint np = 0;
	cl_platform_id *plats = NULL;
	clg_device_info *infos = NULL;
	cl_int err;
	clg_status st = CLG_OK;

	*list = NULL;
	*count = 0;
	first = first_index;
	err = clGetPlatformIDs(0, NULL, &np);
	if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no vendor */ || np == 0)
		return CLG_OK;
	if (err != CL_SUCCESS)
		return clg_cl_fail(NULL, "enumerate", err, "clGetPlatformIDs");
	plats = calloc(np, sizeof(*plats));
	if (!plats)
		return clg_fail(CLG_ERR_OOM, "enumerate: out of host memory");
	clGetPlatformIDs(np, plats, NULL);

	for (cl_uint p = 0; p < np; p++) {
		cl_uint nd = 0;
		cl_device_id *ids;

		if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
			continue;
		ids = calloc(nd, sizeof(*ids));
		void *ni = realloc(infos, (size_t)(ndev + nd) * sizeof(*infos));
		void *np2 = realloc(plat_ids, (size_t)(ndev + nd) * sizeof(*plat_ids));
		if (np2)
			plat_ids = np2;
		void *nd2 = realloc(dev_ids, (size_t)(ndev + nd) * sizeof(*dev_ids));
		if (nd2)
			dev_ids = nd2;
		if (ni)
			infos = ni;
		if (!ids || !ni || !np2 || !nd2) {
			free(ids);
			st = clg_fail(CLG_ERR_OOM, "enumerate: out of host memory");
			goto out_free;
		}
		clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL);
		for (cl_uint i = 0; i < nd; i++) {
			memset(&infos[ndev], 0, sizeof(infos[ndev]));
			describe(plats[p], ids[i], &infos[ndev]);
			infos[ndev].index = first_index + ndev;
			plat_ids[ndev] = plats[p];
			dev_ids[ndev] = ids[i];
			ndev++;
		}
		free(ids);
	}
	*list = infos;
	*count = ndev;
	infos = NULL;
out_free:
	free(infos);
	free(plats);
	return st;
}

clg_status clg_cl_device_ids(int device_index, cl_platform_id *platform, cl_device_id *device)
{
	int i = device_index - first;
	if (i < 0 || i >= ndev)
		return clg_fail(CLG_ERR_DEVICE, "device %d is not an OpenCL device", device_index);
	*platform = plat_ids[i];
	*device = dev_ids[i];
	return CLG_OK;
}
