#define _GNU_SOURCE
#include "test_util.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

int t_failures;

int t_opencl_count(void)
{
	const clg_device_info *list;
	int n;
	if (clg_devices(&list, &n) != CLG_OK)
		return 0;
	return n - 1;
}

void t_require_opencl(void)
{
	if (t_opencl_count() == 0) {
		printf("no OpenCL device present: skipped\n");
		exit(SKIP_CODE);
	}
}

void t_fill_uniform(float *x, size_t n, unsigned seed, float lo, float hi)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL * (seed + 1);
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		x[i] = lo + (hi - lo) * (float)((s >> 40) * (1.0 / 16777216.0));
	}
}

char *t_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *p;
	if (!base || !*base)
		base = "/tmp";
	if (asprintf(&p, "%s/clgrad-test-XXXXXX", base) < 0)
		return NULL;
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

void t_rmtree(const char *path)
{
	char *cmd;
	if (path && asprintf(&cmd, "rm -rf '%s'", path) >= 0) {
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", path);
		free(cmd);
	}
}

int t_finish(const char *name)
{
	printf("%s: %s (%d failed checks)\n", name, t_failures ? "FAILED" : "passed", t_failures);
	return t_failures ? 1 : 0;
}
