/* hello_devices: lists every device, then adds two vectors with clg_run on the default device.
 * Build against an installed clgrad:
 *   cc hello_devices.c $(pkg-config --cflags --libs --static clgrad) -o hello_devices */
#include <clgrad/clgrad.h>
#include <stdio.h>

#define FAIL(what) do { fprintf(stderr, "%s: %s\n", what, clg_last_error()); goto out; } while (0)

int main(void)
{
	const clg_device_info *list;
	float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, z[4] = {0};
	clg_buffer *bx = NULL, *by = NULL, *bz = NULL;
	clg_backend *be = NULL;
	clg_op_call call = {.op = CLG_OP_ADD};
	int n, dev, rc = 1;

	if (clg_devices(&list, &n) || clg_device_select(NULL, &dev))
		FAIL("devices");
	for (int i = 0; i < n; i++)
		printf("%c%d %-4s %s (%s)\n", i == dev ? '*' : ' ', i, clg_device_type_name(list[i].type),
		       list[i].name, list[i].platform);
	if (clg_backend_open(dev, &be) || clg_buffer_alloc(be, sizeof(x), &bx) ||
	    clg_buffer_alloc(be, sizeof(y), &by) || clg_buffer_alloc(be, sizeof(z), &bz))
		FAIL("open");
	if (clg_buffer_upload(bx, 0, x, sizeof(x)) || clg_buffer_upload(by, 0, y, sizeof(y)))
		FAIL("upload");
	clg_view_contiguous(&call.src[0], bx, CLG_F32, 1, (int64_t[]){4});
	clg_view_contiguous(&call.src[1], by, CLG_F32, 1, (int64_t[]){4});
	clg_view_contiguous(&call.dst, bz, CLG_F32, 1, (int64_t[]){4});
	if (clg_run(be, &call) || clg_buffer_download(bz, 0, z, sizeof(z)))  /* download waits */
		FAIL("add");
	printf("add on '%s': %g %g %g %g\n", list[dev].name, z[0], z[1], z[2], z[3]);
	rc = (z[0] == 11 && z[1] == 22 && z[2] == 33 && z[3] == 44) ? 0 : 1;
out:
	clg_buffer_free(bx);
	clg_buffer_free(by);
	clg_buffer_free(bz);
	clg_backend_close(be);
	return rc;
}
