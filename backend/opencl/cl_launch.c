/* Launch geometry from the device's limits: every work-group size and every dynamic local-memory
 * request of the backend goes through here, so a GPU with a small or odd maximum (192, 256, 1024)
 * or little local memory gets a legal launch instead of CL_INVALID_WORK_GROUP_SIZE. */
#include "cl_internal.h"

#include <stdio.h>

static size_t pow2_floor(size_t v)
{
	while (v & (v - 1))
		v &= v - 1;
	return v;
}

size_t clg_cl_local_size(clg_backend *be, cl_kernel k, size_t want)
{
	clg_cl *cl = clg_cl_of(be);
	size_t local = want, kwg = 0, items[3] = {0, 0, 0};

	if (be->info.max_wg_size && local > be->info.max_wg_size)
		local = (size_t)be->info.max_wg_size;
	if (!cl->max_item0 && clGetDeviceInfo(cl->device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(items), items, NULL) ==
				      CL_SUCCESS)
		cl->max_item0 = items[0]; /* asked once */
	if (cl->max_item0 && local > cl->max_item0)
		local = cl->max_item0;
	/* the kernel's own limit (registers, private and local memory it uses) */
	if (k && clGetKernelWorkGroupInfo(k, cl->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(kwg), &kwg, NULL) ==
			 CL_SUCCESS && kwg && local > kwg)
		local = kwg;
	if (local == want)
		return want ? want : 1;
	/* tree reductions halve the group: a maximum such as 192 gives 128 */
	local = pow2_floor(local);
	return local ? local : 1;
}

size_t clg_cl_group_size(clg_backend *be, cl_kernel k, int64_t n)
{
	size_t local = clg_cl_local_size(be, k, clg_cl_of(be)->wg_size);

	while (local > 1 && (int64_t)local / 2 >= n)
		local /= 2;
	return local;
}

size_t clg_cl_spread(clg_backend *be, size_t items, size_t local)
{
	size_t cus = be->info.compute_units ? be->info.compute_units : 1;

	while (local > SPREAD_MIN && (items + local - 1) / local < cus)
		local /= 2;
	return local;
}

size_t clg_cl_local_mem_free(clg_backend *be, cl_kernel k)
{
	cl_ulong used = 0;
	uint64_t total = be->info.local_mem;

	if (k)
		clGetKernelWorkGroupInfo(k, clg_cl_of(be)->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(used), &used, NULL);
	return total > used ? (size_t)(total - used) : 0;
}

clg_status clg_cl_check_local_mem(clg_backend *be, cl_kernel k, size_t bytes, const char *op)
{
	size_t avail = clg_cl_local_mem_free(be, k);

	if (bytes <= avail)
		return CLG_OK;
	return clg_fail(CLG_ERR_UNSUPPORTED,
			"op '%s' on device '%s': needs %zu bytes of local memory per work-group, the device has %zu "
			"free (CL_DEVICE_LOCAL_MEM_SIZE %llu)",
			op, be->info.name, bytes, avail, (unsigned long long)be->info.local_mem);
}

cl_int clg_cl_enqueue(clg_backend *be, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local)
{
	clg_cl *cl = clg_cl_of(be);
	double t0 = clg_now();
	cl_int err = clEnqueueNDRangeKernel(cl->queue, k, dims, NULL, global, local, 0, NULL, NULL);

	cl->stats.enqueue_seconds += clg_now() - t0;
	return err;
}

clg_status clg_cl_launch_2d(clg_backend *be, cl_kernel k, const size_t items[2], const size_t local[2],
			    const char *op)
{
	size_t global[2];
	cl_int err;

	if (items[0] == 0 || items[1] == 0)
		return CLG_OK;
	for (int d = 0; d < 2; d++)
		global[d] = (items[d] + local[d] - 1) / local[d] * local[d];
	err = clg_cl_fault(be, CLG_FAULT_ENQUEUE);
	if (err == CL_SUCCESS)
		err = clg_cl_enqueue(be, k, 2, global, local);
	if (err != CL_SUCCESS)
		return clg_cl_fail(be, op, err, "clEnqueueNDRangeKernel(global %zux%zu, local %zux%zu)%s", global[0],
				   global[1], local[0], local[1], clg_cl_fault_note());
	clg_cl_of(be)->stats.n_launch++;
	if (be->recorder)
		clg_cl_record(be, k, 2, global, local);
	return CLG_OK;
}

void clg_cl_record(clg_backend *be, cl_kernel k, int dims, const size_t *global, const size_t *local)
{
	char name[256] = "?";

	if (clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(name), name, NULL) != CL_SUCCESS)
		snprintf(name, sizeof(name), "?");
	clg_record_launch(be, name, dims, global, local);
}
