/* Gradient checks (suite/grad_suite.c): the analytic gradients on the reference (float32) and on
 * every OpenCL device against central differences in double on the reference. Each failed check
 * of a case counts.
 *
 * usage: test_grad [--case NAME[,NAME...]] [--device SUBSTRING] [--with "NAME=VALUE ..."]...
 *   --with   run the cases under this configuration (clg_config_set; the devices opened again under
 *            it); repeated: once under each, in one process, as test_ops --with. */
#include "grad_suite.h"
#include "test_util.h"

#include <string.h>

#define MAX_WITH 16

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
	int n, nres = 0, nwith = 0, total = 0, ok = 0;
	const char *with[MAX_WITH];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--case") && i + 1 < argc)
			opts.only = argv[++i];
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			dev_filter = argv[++i];
		else if (!strcmp(argv[i], "--with") && i + 1 < argc && nwith < MAX_WITH)
			with[nwith++] = argv[++i];
		else {
			fprintf(stderr, "usage: test_grad [--case NAME[,NAME...]] [--device SUBSTRING] [--with \"NAME=VALUE ...\"]...\n");
			return 2;
		}
	}
	t_require_opencl();
	CHECK_OK(clg_devices(&list, &n));
	CHECK_OK(clg_backend_open(0, &ref));
	for (int w = 0; w < (nwith ? nwith : 1); w++) {
		t_with_saved saved = {0};
		int ndevs = 0;
		if (nwith) {
			if (t_with_apply(with[w], &saved)) {
				t_failures++;
				continue;
			}
			printf("with %s\n", with[w]);
			fflush(stdout);
		}
		for (int i = 1; i < n && ndevs < 16; i++) {
			if (dev_filter && !strstr(list[i].name, dev_filter) && !strstr(list[i].platform, dev_filter))
				continue;
			CHECK_OK(clg_backend_open(i, &devs[ndevs]));
			if (devs[ndevs])
				ndevs++;
		}
		/* the reference's own float32 pass does not depend on the device options: once */
		opts.skip_ref_pass = w > 0;
		if (ref)
			CHECK_OK(grad_suite_run(ref, devs, ndevs, &opts, &res, &nres));
		for (int i = 0; i < nres; i++) {
			total += !res[i].ref_pass;
			ok += !res[i].ref_pass && res[i].outcome == GRAD_OK;
		}
		free(res);
		res = NULL;
		for (int i = 0; i < ndevs; i++)
			clg_backend_close(devs[i]);
		t_with_restore(&saved);
	}
	printf("gradient cases: %d run on the devices (case x device%s), %d without a failed check\n", total,
	       nwith > 1 ? " x --with" : "", ok);
	clg_backend_close(ref);
	return t_finish("test_grad");
}
