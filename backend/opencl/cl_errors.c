/* OpenCL error names and the backend's error reporting. */
#include "cl_internal.h"

#include <stdio.h>

const char *clg_cl_error_name(cl_int err)
{
	switch (err) {
#define E(x) case x: return #x;
	E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
	E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
	E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH)
	E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
	E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
	E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
	E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE)
	E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
	E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
	E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
	E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
	E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION)
	E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
	E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
	E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
	E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
	E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
	E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
	E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
	case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
	/* CLBlast's own codes extend OpenCL's. */
	case -2048: return "CLBlastNotImplemented";
	case -2046: return "CLBlastInvalidMatrixA";
	case -2045: return "CLBlastInvalidMatrixB";
	case -2044: return "CLBlastInvalidMatrixC";
	case -2041: return "CLBlastDatabaseError";
	case -2040: return "CLBlastUnknownError";
	case -2039: return "CLBlastUnexpectedError";
	case -1024: return "CLBlastKernelLaunchError";
	case -1023: return "CLBlastKernelRunError";
	default: break;
	}
	if (err <= -2000 && err > -2100)
		return "CLBlast error";
	if (err <= -1000 && err > -2000)
		return "CLBlast argument error";
	return "unknown OpenCL error";
}

clg_status clg_cl_fail(clg_backend *be, const char *op, cl_int err, const char *fmt, ...)
{
	char detail[2048];
	va_list ap;
	clg_status s = CLG_ERR_OPENCL;

	if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
	    err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE)
		s = CLG_ERR_OOM;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return clg_fail(s, "op '%s' on device '%s': %s (%s, %d)", op, be ? be->info.name : "?", detail,
			clg_cl_error_name(err), (int)err);
}

uint64_t clg_hash64(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
