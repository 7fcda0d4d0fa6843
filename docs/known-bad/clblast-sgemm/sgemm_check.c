/* sgemm_check: CLBlast's SGEMM against a plain loop on one device, the check behind clgrad's two
 * CLBlast known-bad entries (Apple M-series, CLBlast#542: wrong from square sizes 1152 up; Intel
 * Arc, CLBlast#533 and compute-runtime#728: wrong in CLBlast's own tests). No clgrad code.
 *   cc -O2 -o sgemm_check docs/known-bad/clblast-sgemm/sgemm_check.c -lclblast -lOpenCL
 *   ./sgemm_check [N [PLATFORM_PART]]   (N: square size, default 1152; first device of the first
 *                                         platform whose name contains PLATFORM_PART)
 * Prints the largest |CLBlast - loop| over C = A B (A, B uniform in [-1, 1]) and exits 1 when it
 * exceeds 1e-3 * N (float32 rounding of an N-term dot product stays far below), 2 on an error. */
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1152;
	const char *want = argc > 2 ? argv[2] : NULL;
	cl_platform_id plats[16];
	cl_uint np = 0;
	cl_device_id dev = NULL;
	char pname[256] = "", dname[256] = "", driver[128] = "";
	int rc = 2;

	if (n == 0 || clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)
		return 2;
	for (cl_uint i = 0; i < np && !dev; i++) {
		clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof(pname), pname, NULL);
		if (want && !strstr(pname, want))
			continue;
		if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
			dev = NULL;
	}
	if (!dev) {
		fprintf(stderr, "sgemm_check: no device%s%s\n", want ? " on a platform matching " : "", want ? want : "");
		return 2;
	}
	clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof(dname), dname, NULL);
	clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof(driver), driver, NULL);
	float *a = malloc(n * n * sizeof(float)), *b = malloc(n * n * sizeof(float)), *c = malloc(n * n * sizeof(float));
	cl_int err;
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
	cl_mem da = NULL, db = NULL, dc = NULL;
	if (!a || !b || !c || err != CL_SUCCESS)
		goto out;
	srand(1);
	for (size_t i = 0; i < n * n; i++) {
		a[i] = 2.0f * rand() / RAND_MAX - 1;
		b[i] = 2.0f * rand() / RAND_MAX - 1;
	}
	da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * n * sizeof(float), a, &err);
	db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * n * sizeof(float), b, &err);
	dc = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * n * sizeof(float), NULL, &err);
	if (!da || !db || !dc)
		goto out;
	CLBlastStatusCode st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0f,
					    da, 0, n, db, 0, n, 0.0f, dc, 0, n, &q, NULL);
	if (st != CLBlastSuccess || clEnqueueReadBuffer(q, dc, CL_TRUE, 0, n * n * sizeof(float), c, 0, NULL, NULL)) {
		fprintf(stderr, "sgemm_check: CLBlastSgemm: status %d\n", (int)st);
		goto out;
	}
	double worst = 0;
	for (size_t i = 0; i < n; i += n / 64 + 1) /* 64 rows, every column: the loop stays cheap */
		for (size_t j = 0; j < n; j++) {
			double s = 0;
			for (size_t k = 0; k < n; k++)
				s += (double)a[i * n + k] * b[k * n + j];
			worst = fmax(worst, fabs(s - c[i * n + j]));
		}
	rc = worst > 1e-3 * (double)n;
	printf("%s / %s / driver %s: SGEMM %zux%zux%zu, max |CLBlast - loop| = %.3g: %s\n", pname, dname, driver, n, n, n,
	       worst, rc ? "WRONG" : "ok");
out:
	if (dc)
		clReleaseMemObject(dc);
	if (db)
		clReleaseMemObject(db);
	if (da)
		clReleaseMemObject(da);
	if (q)
		clReleaseCommandQueue(q);
	if (ctx)
		clReleaseContext(ctx);
	free(a);
	free(b);
	free(c);
	return rc;
}
