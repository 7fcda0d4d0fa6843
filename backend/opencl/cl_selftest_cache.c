/* The self-test's cached result: <cache dir>/selftest-<key>.txt, keyed by device, driver,
 * platform, every kernel source, the library's build identity, the GEMM settings and the routes
 * in force before it; its lines: the GEMM implementation routed to, native half off, each route,
 * and each op tested ("tested <op>", "tested half": the self-test at first use reads them to skip
 * what an earlier process tested). Written to a temporary name and renamed; rewritten after each
 * first-use test (two processes writing at once may lose the other's lines: those ops are then
 * tested again, never wrongly trusted). */
#include "cl_selftest_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(uint64_t h, const char *s) { return clg_hash64(h, s ? s : "", s ? strlen(s) + 1 : 1); }

/* The library's build identity; CLGRAD_TEST_BUILD_ID stands in for a rebuilt library in tests. */
static const char *build_id(void)
{
#ifdef CLGRAD_TEST_HOOKS
	const char *e = clg_cfg_str(CLG_CFG_TEST_BUILD_ID);
	if (e && *e)
		return e;
#endif
	return clg_build_id;
}

/* What the result depends on: device, driver, platform, every kernel source (a folder in
 * $CLGRAD_KERNEL_DIR included), the library's sources, the GEMM choice and the routes already in
 * force. */
void clg_st_result_key(clg_backend *be, uint64_t key[2])
{
	const clg_device_info *i = &be->info;
	const struct clg_cl_selftest *s = clg_cl_of(be)->selftest;
	const char *const *names = clg_cl_program_names();
	uint32_t fmt = SELFTEST_FORMAT;
	uint64_t src = CLG_HASH_SEED;

	for (int k = 0; names[k]; k++) {
		const char *text;
		char *owned = NULL;
		size_t len;
		src = hash_str(src, names[k]);
		if (clg_cl_program_source(names[k], &text, &len, &owned) == CLG_OK)
			src = clg_hash64(src, text, len);
		else
			src = hash_str(src, "(unreadable)");
		free(owned);
	}
	for (int k = 0; k < 2; k++) {
		uint64_t h = k ? CLG_HASH_SEED ^ 0x9e3779b97f4a7c15ULL : CLG_HASH_SEED;
		h = clg_hash64(h, &fmt, sizeof(fmt));
		h = hash_str(h, i->platform);
		h = hash_str(h, i->platform_version);
		h = hash_str(h, i->name);
		h = hash_str(h, i->driver_version);
		h = clg_hash64(h, &src, sizeof(src));
		h = hash_str(h, build_id());
		h = hash_str(h, clg_cfg_str(CLG_CFG_GEMM));
		h = hash_str(h, clg_cfg_str(CLG_CFG_GEMM_TILE));
		h = hash_str(h, clg_cfg_str(CLG_CFG_GEMM_MIN_INDIRECT));
		h = clg_hash64(h, &s->gemm_impl, sizeof(s->gemm_impl));
		for (int r = 0; r < s->nroutes; r++) {
			int v[2] = {(int)s->routes[r].op, (int)s->routes[r].action};
			h = clg_hash64(h, v, sizeof(v));
		}
		key[k] = h;
	}
}

/* Reads a cached result: routes to apply. Returns 0 when the file exists and is complete. */
int clg_st_load_result(clg_backend *be, const char *path, const uint64_t key[2])
{
	FILE *f = clg_fopen_read(path, "r");
	char line[512], want[64];
	int ok = 0;
	struct {
		clg_op op;
		clg_route_action action;
		char why[200];
	} found[MAX_ROUTES];
	int n = 0;
	clg_cl_gemm_impl gemm = CLG_CL_GEMM_AUTO;
	char half[200] = "";
	unsigned char tested[CLG_OP_COUNT] = {0};
	int tested_half = 0;
	struct clg_cl_selftest *s = clg_cl_of(be)->selftest;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "clgrad-selftest %u %016llx%016llx\n", SELFTEST_FORMAT, (unsigned long long)key[0],
		 (unsigned long long)key[1]);
	if (!fgets(line, sizeof(line), f) || strcmp(line, want) != 0)
		goto out;
	while (fgets(line, sizeof(line), f)) {
		char name[64], action[16];
		int at = 0;
		if (!strcmp(line, "end\n")) {
			ok = 1;
			break;
		}
		if (!strncmp(line, "half off ", 9)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(half, sizeof(half), "%.199s", line + 9);
			continue;
		}
		if (!strcmp(line, "tested half\n")) {
			tested_half = 1;
			continue;
		}
		if (!strncmp(line, "tested ", 7)) {
			clg_op op;
			line[strcspn(line, "\n")] = 0;
			if (clg_st_op_by_name(line + 7, strlen(line + 7), &op))
				goto out;
			tested[op] = 1;
			continue;
		}
		if (!strcmp(line, "gemm own\n") || !strcmp(line, "gemm clblast\n")) {
			gemm = line[5] == 'o' ? CLG_CL_GEMM_OWN : CLG_CL_GEMM_CLBLAST;
			continue;
		}
		if (n == MAX_ROUTES || sscanf(line, "route %63s %15s %n", name, action, &at) != 2 || !at ||
		    clg_st_op_by_name(name, strlen(name), &found[n].op))
			goto out;
		if (!strcmp(action, "fallback"))
			found[n].action = CLG_ROUTE_FALLBACK;
		else if (!strcmp(action, "unsupported"))
			found[n].action = CLG_ROUTE_UNSUPPORTED;
		else
			goto out;
		line[strcspn(line, "\n")] = 0;
		snprintf(found[n].why, sizeof(found[n].why), "%s", line + at);
		n++;
	}
out:
	fclose(f);
	if (!ok)
		return -1;
	if (gemm != CLG_CL_GEMM_AUTO && clg_st_find_route(clg_cl_of(be)->selftest, CLG_OP_GEMM) < 0)
		clg_cl_of(be)->selftest->gemm_impl = gemm;
	if (half[0])
		clg_st_half_off(be, half);
	for (int k = 0; k < n; k++)
		clg_st_add_route(be, found[k].op, found[k].action, found[k].why);
	for (int op = 0; op < CLG_OP_COUNT; op++)
		if (tested[op])
			s->tested[op] = 1, s->pending[op] = 0;
	if (tested_half)
		s->half_tested = 1, s->half_pending = 0;
	return 0;
}

/* Writes the routes (the known-bad ones too: one may have been found wrong as a fallback) to a
 * temporary file and renames it into place. */
void clg_st_store_result(clg_backend *be, const char *dir, const char *path, const uint64_t key[2])
{
	const struct clg_cl_selftest *s = clg_cl_of(be)->selftest;
	char err[9000];
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (clg_cl_mkdir_p(dir) != 0) {
		clg_debug("self-test cache: cannot create %s: %s", dir, strerror(errno));
		return;
	}
	f = open_memstream(&text, &len);
	if (!f) {
		clg_debug("self-test cache: out of host memory");
		return;
	}
	fprintf(f, "clgrad-selftest %u %016llx%016llx\n", SELFTEST_FORMAT, (unsigned long long)key[0],
		(unsigned long long)key[1]);
	if (s->gemm_impl != CLG_CL_GEMM_AUTO)
		fprintf(f, "gemm %s\n", s->gemm_impl == CLG_CL_GEMM_OWN ? "own" : "clblast");
	if (be->info.half_off[0])
		fprintf(f, "half off %s\n", be->info.half_off);
	if (s->half_tested)
		fputs("tested half\n", f);
	for (int op = 0; op < CLG_OP_COUNT; op++)
		if (s->tested[op])
			fprintf(f, "tested %s\n", clg_op_name((clg_op)op));
	for (int r = 0; r < s->nroutes; r++)
		fprintf(f, "route %s %s %s\n", clg_op_name(s->routes[r].op),
			s->routes[r].action == CLG_ROUTE_FALLBACK ? "fallback" : "unsupported", s->routes[r].why);
	fputs("end\n", f);
	if (fclose(f) != 0)
		clg_debug("self-test cache: out of host memory");
	else if (clg_cl_write_atomic(path, text, len, NULL, 0, err, sizeof(err)) != 0)
		clg_debug("self-test cache: %s", err);
	free(text);
}

