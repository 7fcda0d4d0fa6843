/* Gradient checks (suite/grad_suite.c): the analytic gradients on the reference (float32) and on
 * every OpenCL device against central differences in double on the reference. Each failed check
 * of a case counts.
 *
 * usage: test_grad [--case NAME[,NAME...]] [--device SUBSTRING] */
#include "grad_suite.h"
#include "test_util.h"

#include <string.h>

/* A case's failed checks, reported as they happen. */
static void on_result(const grad_result *r, void *ctx)
{
	if (r->nfail) {
		fprintf(stderr, "test_grad: %d failed check(s) in %s on %s%s:\n%s\n", r->nfail, r->name, r->device,
			r->outcome == GRAD_CANNOT_RUN ? " (the device cannot run it)" : "", r->message);
		t_failures += r->nfail;
	}
}

int main(int argc, char **argv)
{
	const char *dev_filter = NULL;
	grad_suite_opts opts = {.verbose = 1, .on_result = on_result};
	const clg_device_info *list;
	clg_backend *ref = NULL, *devs[16];
	grad_result *res = NULL;
	int n, ndevs = 0, nres = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--case") && i + 1 < argc)
			opts.only = argv[++i];
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			dev_filter = argv[++i];
	}
	t_require_opencl();
	CHECK_OK(clg_devices(&list, &n));
	CHECK_OK(clg_backend_open(0, &ref));
	for (int i = 1; i < n && ndevs < 16; i++) {
		if (dev_filter && !strstr(list[i].name, dev_filter) && !strstr(list[i].platform, dev_filter))
			continue;
		CHECK_OK(clg_backend_open(i, &devs[ndevs]));
		if (devs[ndevs])
			ndevs++;
	}
	if (ref)
		CHECK_OK(grad_suite_run(ref, devs, ndevs, &opts, &res, &nres));
	free(res);
	for (int i = 0; i < ndevs; i++)
		clg_backend_close(devs[i]);
	clg_backend_close(ref);
	return t_finish("test_grad");
}
