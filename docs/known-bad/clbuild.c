/* clbuild: the smallest host program that shows a driver's kernel bug. It builds the
 * concatenation of the given .cl files with the given options on every device of every platform
 * (or those whose platform name contains $CLBUILD_PLATFORM), prints the build's status and log,
 * creates every kernel of the program (or only $CLBUILD_KERNEL: some drivers, rusticl among them,
 * compile a kernel only when it is created), and with --run KERNEL launches
 * KERNEL(__global float *out[, struct]) on N work-items and prints out[0..3]; $CLBUILD_ARG1, a
 * comma-separated list of ints, is then passed by value as the second argument (a struct of ints).
 * No clgrad code: a driver developer can build it alone.
 *   cc -o clbuild docs/known-bad/clbuild.c -lOpenCL
 *   ./clbuild [--run KERNEL N] [--] OPTIONS FILE.cl [FILE.cl...]
 * Exit status: 0 every build (and run) succeeded, 1 one failed; a driver crash ends it by its
 * signal (bash prints "Segmentation fault", status 139). */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *const *files, int n)
{
	size_t len = 0;
	char *buf = malloc(1);

	if (!buf)
		return NULL;
	for (int i = 0; i < n; i++) {
		FILE *f = fopen(files[i], "rb");
		long size;
		char *grown;
		if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
			fprintf(stderr, "clbuild: cannot read %s\n", files[i]);
			if (f)
				fclose(f);
			free(buf);
			return NULL;
		}
		if (!(grown = realloc(buf, len + (size_t)size + 2))) {
			fclose(f);
			free(buf);
			return NULL;
		}
		buf = grown;
		len += fread(buf + len, 1, (size_t)size, f);
		buf[len++] = '\n';
		fclose(f);
	}
	buf[len] = 0;
	return buf;
}

/* builds src on one device (and runs kernel on n items); 0 when all went well */
static int try_device(cl_platform_id p, cl_device_id d, const char *src, const char *opts,
		      const char *kernel, size_t n)
{
	char name[256] = "", driver[128] = "", pname[256] = "", log[16384] = "";
	cl_int err, st;
	cl_context ctx;
	cl_program prog;
	int bad = 0;

	clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(pname), pname, NULL);
	clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof(name), name, NULL);
	clGetDeviceInfo(d, CL_DRIVER_VERSION, sizeof(driver), driver, NULL);
	printf("== %s / %s / driver %s\n", pname, name, driver);
	fflush(stdout); /* before the build: a crash there must not lose the line */
	ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
	if (err != CL_SUCCESS) {
		printf("clCreateContext: error %d\n", err);
		return 1;
	}
	prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	st = err == CL_SUCCESS ? clBuildProgram(prog, 1, &d, opts, NULL, NULL) : err;
	if (prog)
		clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
	printf("build '%s': %s (%d)\n%s%s", opts, st == CL_SUCCESS ? "ok" : "FAILED", st, log,
	       log[0] && log[strlen(log) - 1] != '\n' ? "\n" : "");
	bad = st != CL_SUCCESS;
	if (!bad) { /* the kernels, one at a time, each named before the driver sees it */
		const char *only = getenv("CLBUILD_KERNEL");
		char names[8192] = "";
		clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, sizeof(names) - 1, names, NULL);
		for (char *save = NULL, *kn = strtok_r(names, ";", &save); kn; kn = strtok_r(NULL, ";", &save)) {
			cl_kernel k;
			if (only && strcmp(kn, only))
				continue;
			printf("create kernel %s: ", kn);
			fflush(stdout);
			k = clCreateKernel(prog, kn, &err);
			printf("%s (%d)\n", err == CL_SUCCESS ? "ok" : "FAILED", err);
			bad |= err != CL_SUCCESS;
			if (k)
				clReleaseKernel(k);
		}
	}
	if (!bad && kernel) {
		cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &err);
		cl_kernel k = clCreateKernel(prog, kernel, &err);
		cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
		float h[4] = {0};
		fflush(stdout);
		const char *a1 = getenv("CLBUILD_ARG1");
		int ints[64];
		size_t ni = 0;
		for (const char *c = a1; c && *c && ni < 64; c += *c == ',') {
			char *end;
			ints[ni++] = (int)strtol(c, &end, 10);
			c = end;
		}
		st = clSetKernelArg(k, 0, sizeof(out), &out);
		if (st == CL_SUCCESS && ni)
			st = clSetKernelArg(k, 1, ni * sizeof(int), ints);
		if (st != CL_SUCCESS)
			printf("clSetKernelArg: error %d\n", st);
		if (st == CL_SUCCESS)
			st = clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
		if (st == CL_SUCCESS)
			st = clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof(h) < n * sizeof(float) ? sizeof(h) : n * sizeof(float),
						 h, 0, NULL, NULL);
		printf("run %s on %zu items: %s (%d): out[0..3] = %g %g %g %g\n", kernel, n,
		       st == CL_SUCCESS ? "ok" : "FAILED", st, h[0], h[1], h[2], h[3]);
		bad = st != CL_SUCCESS;
		clReleaseMemObject(out);
		clReleaseKernel(k);
		clReleaseCommandQueue(q);
	}
	clReleaseProgram(prog);
	clReleaseContext(ctx);
	return bad;
}

int main(int argc, char **argv)
{
	const char *kernel = NULL, *want = getenv("CLBUILD_PLATFORM");
	size_t n = 0;
	int a = 1, bad = 0, devices = 0;
	cl_platform_id plats[16];
	cl_uint np = 0;
	char *src;

	if (a + 2 < argc && !strcmp(argv[a], "--run")) {
		kernel = argv[a + 1];
		n = strtoul(argv[a + 2], NULL, 10);
		a += 3;
	}
	if (a < argc && !strcmp(argv[a], "--"))
		a++;
	if (argc - a < 2 || (kernel && n == 0)) {
		fprintf(stderr, "usage: %s [--run KERNEL N] [--] OPTIONS FILE.cl [FILE.cl...]\n", argv[0]);
		return 2;
	}
	if (!(src = slurp((const char *const *)argv + a + 1, argc - a - 1)))
		return 1;
	if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) {
		fprintf(stderr, "clbuild: no OpenCL platform\n");
		free(src);
		return 1;
	}
	for (cl_uint i = 0; i < np; i++) {
		char pname[256] = "";
		cl_device_id devs[16];
		cl_uint nd = 0;
		clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof(pname), pname, NULL);
		if (want && !strstr(pname, want))
			continue;
		if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
			continue;
		for (cl_uint j = 0; j < nd; j++, devices++)
			bad |= try_device(plats[i], devs[j], src, argv[a], kernel, n);
	}
	free(src);
	if (!devices)
		fprintf(stderr, "clbuild: no device%s%s\n", want ? " on a platform matching " : "", want ? want : "");
	return bad || !devices;
}
