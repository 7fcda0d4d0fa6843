/* Internal helpers shared by the backends: error reporting and small utilities. */
#ifndef CLG_INTERNAL_H
#define CLG_INTERNAL_H

#include "clg_backend.h"
#include "clg_backend_impl.h"
#include "clg_config.h"

#include <stdio.h>
#include <stdarg.h>

#if defined(__GNUC__)
#define CLG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLG_PRINTF(a, b)
#endif

/* Prefixes the current message with more context ("op 'gemm' on device 'x': " + old message). */
clg_status clg_fail_prefix(clg_status s, const char *fmt, ...) CLG_PRINTF(2, 3);
/* Records s (unless CLG_OK) as clg_last_status()'s answer; clg_fail and clg_fail_prefix call it. */
void clg_note_status(clg_status s);
/* Debug output to stderr when CLGRAD_DEBUG is set. */
void clg_debug(const char *fmt, ...) CLG_PRINTF(1, 2);
int clg_debug_enabled(void);

/* Removes "<path>.tmp.<pid>[.*]" files next to path whose writing process is gone (kill(pid, 0)
 * fails with ESRCH) and which were not modified for a minute: what an atomic writer killed before
 * its rename leaves. Called by every atomic writer before it writes path (stale_tmp.c). Returns
 * the number removed. */
int clg_remove_stale_temps(const char *path);

/* Reference and OpenCL backends. */
clg_status clg_ref_open(clg_backend **out);
clg_status clg_cl_open(int device_index, clg_backend **out);
/* Fills be->shape from CLGRAD_KERNEL_SHAPE and the device type (kernel_shape.c); fails on a bad
 * variable. Called by each backend's open before its ops are registered. */
clg_status clg_kernel_shape_init(clg_backend *be);
/* Fault injection for tests (opencl/cl_fault.c, CLGRAD_FAULT=KIND:N): the kinds of events counted. */
typedef enum { CLG_FAULT_ALLOC, CLG_FAULT_ENQUEUE, CLG_FAULT_BUILD, CLG_FAULT_READ, CLG_FAULT_WRITE,
	       CLG_FAULT_KINDS } clg_fault_kind;
/* Counts one file read or write (CLG_FAULT_READ, CLG_FAULT_WRITE); 1 when it is to fail: the caller
 * fails as with EIO and adds clg_fault_note() to its message. */
int clg_fault_file(clg_fault_kind kind);
/* " [injected by CLGRAD_FAULT]" when this thread's last fault check fired, else "". */
const char *clg_fault_note(void);
/* fopen for reading, counted as a file read (NULL with EIO when injected). */
FILE *clg_fopen_read(const char *path, const char *mode);
/* Crash records (opencl/cl_crash.c): an in-progress marker for a device's self-test and program builds
 * (they nest), the record a crashed earlier run left (fills d->crashed), its removal after a
 * complete forced open, and whether CLGRAD_FORCE_DEVICE asks to use a crashed device anyway. */
void clg_crash_marker_begin(const clg_device_info *d, const char *what);
void clg_crash_marker_end(const clg_device_info *d);
void clg_crash_state(clg_device_info *d);
void clg_crash_clear(const clg_device_info *d);
int clg_force_device(void);
/* A device's identity in the records kept in the cache folder: platform, name and driver. */
uint64_t clg_device_key(const clg_device_info *d);
/* The float16 self-test's verdict kept per device (opencl/cl_half_record.c) so that `clgrad devices`,
 * which opens no device, can say native half is off: stored after each self-test, read into
 * d->half_off when the devices are listed. */
void clg_half_record_store(const clg_device_info *d);
void clg_half_record_read(clg_device_info *d);
/* Fills the OpenCL part of the device list (indices from first_index on). */
clg_status clg_cl_enumerate(clg_device_info **list, int *count, int first_index);


/* Shapes, dtypes and parameters of the index family's ops (RAND_*, INDEX_*), checked by both
 * backends' implementations (defined in backend/ref/ref_ops_index.c). */
clg_status clg_index_check(clg_backend *be, const clg_op_call *c);

/* Whether an op takes float16 operands (its kind is EW, REDUCE or ROW; common.c). */
int clg_op_accepts_f16(clg_op op);


#endif
