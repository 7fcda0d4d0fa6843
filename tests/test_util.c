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

int t_with_apply(const char *spec, t_with_saved *saved)
{
	const char *p = spec;

	saved->n = 0;
	while (*p) {
		size_t n = strcspn(p, " "), k = strcspn(p, "=");
		char *item;
		const char *old;
		if (!n) {
			p++;
			continue;
		}
		if (k >= n || saved->n == T_WITH_MAX) {
			fprintf(stderr, "--with '%s': expected up to %d NAME=VALUE items separated by spaces\n", spec, T_WITH_MAX);
			goto fail;
		}
		item = strndup(p, n);
		if (!item)
			goto fail;
		item[k] = '\0';
		old = clg_config_get(item);
		saved->name[saved->n] = item;
		saved->old[saved->n] = old ? strdup(old) : NULL;
		saved->n++;
		if (!old || clg_config_set(item, item + k + 1) != CLG_OK) {
			fprintf(stderr, "--with '%s': %s\n", spec, old ? clg_last_error() : "unknown option");
			goto fail;
		}
		p += n;
	}
	return 0;
fail:
	t_with_restore(saved);
	return -1;
}

void t_with_restore(t_with_saved *saved)
{
	for (int i = saved->n - 1; i >= 0; i--) {
		if (saved->old[i])
			clg_config_set(saved->name[i], saved->old[i]);
		free(saved->name[i]);
		free(saved->old[i]);
	}
	saved->n = 0;
}

int t_finish(const char *name)
{
	printf("%s: %s (%d failed checks)\n", name, t_failures ? "FAILED" : "passed", t_failures);
	return t_failures ? 1 : 0;
}
