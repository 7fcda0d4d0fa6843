/* compare section "compile": every kernel program the library embeds, built with the options the
 * library uses (float32): success or failure with its build log, cold build time (from source,
 * bypassing clgrad's program cache, and the driver's by a define no kernel reads; whether the user
 * turned the driver's cache off as well: "driver_cache_disabled") and warm load time from clgrad's
 * disk cache ($CLGRAD_CACHE_DIR). */
#include "compare.h"

#include "clg_measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In --quick mode only these are cold-built (the two every model uses); all are warm-loaded. */
static const char *const quick_cold[] = {"elementwise", "gemm", NULL};

static int env_is(const char *name, const char *value)
{
	const char *v = clg_config_foreign(name);
	return v && !strcmp(v, value);
}

/* Whether the device driver's own compiled-kernel cache is off in this process, by its switch in
 * the environment (cold builds miss it either way). */
static void driver_cache(clg_backend *dev, json_writer *w)
{
	const char *p = dev->info.platform;
	const char *env = NULL;
	int off = 0;

	if (clg_contains_nocase(p, "portable computing language") || clg_contains_nocase(p, "pocl")) {
		env = "POCL_KERNEL_CACHE=0";
		off = env_is("POCL_KERNEL_CACHE", "0");
	} else if (clg_contains_nocase(p, "nvidia")) {
		env = "CUDA_CACHE_DISABLE=1";
		off = env_is("CUDA_CACHE_DISABLE", "1");
	} else if (clg_contains_nocase(p, "oclgrind")) {
		env = "(none: the simulator keeps no kernel cache)";
		off = 1;
	} else {
		env = "(no known switch for this driver: POCL_KERNEL_CACHE=0 / CUDA_CACHE_DISABLE=1 checked)";
		off = env_is("POCL_KERNEL_CACHE", "0") || env_is("CUDA_CACHE_DISABLE", "1");
	}
	json_key_bool(w, "driver_cache_disabled", off);
	json_key_str(w, "driver_cache_switch", env);
}

static int in_list(const char *name, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], name))
			return 1;
	return 0;
}

int compare_compile(clg_backend *dev, const compare_opts *o, json_writer *w)
{
	const char *const *names = clg_measure_programs(dev);
	const char *cache = clg_cfg_str(CLG_CFG_CACHE_DIR);
	char opts[256];
	int n = 0, ncold = 0, rc = 0;
	double *warm = NULL, total_cold = 0, total_warm = 0;
	int *wok = NULL, nwarm = 0;
	char **wlog = NULL;
	clg_build_timing *cold = NULL;
	clg_status st;

	if (!names) {
		json_key(w, "programs");
		json_begin_array(w);
		json_end_array(w);
		json_key(w, "total_cold_s");
		json_null(w);
		json_key(w, "total_warm_s");
		json_null(w);
		json_key_bool(w, "driver_cache_disabled", 0);
		json_key_str(w, "note", "not applicable: the reference backend runs C loops, it has no kernel programs");
		return 0;
	}
	while (names[n])
		n++;
	clg_measure_program_options(dev, opts, sizeof(opts));
	cold = calloc((size_t)n, sizeof(*cold));
	warm = calloc((size_t)n, sizeof(*warm));
	wok = calloc((size_t)n, sizeof(*wok));
	wlog = calloc((size_t)n, sizeof(*wlog));
	if (!cold || !warm || !wok || !wlog) {
		json_key_str(w, "error", "out of host memory");
		rc = 1;
		goto out_free;
	}
	/* cold builds first: the warm pass below would otherwise have warmed the driver */
	for (int i = 0; i < n; i++) {
		cold[i].seconds = -1;
		if (o->quick && !in_list(names[i], quick_cold))
			continue;
		st = clg_measure_cold_build(dev, names[i], &cold[i]);
		if (st) { /* no source (a CLGRAD_KERNEL_DIR without it): a failure with the message */
			size_t len = strlen(clg_last_error()) + 1;
			cold[i] = (clg_build_timing){.ok = 0, .seconds = -1, .log = malloc(len)};
			if (cold[i].log)
				memcpy(cold[i].log, clg_last_error(), len);
			continue;
		}
		ncold++;
		total_cold += cold[i].seconds;
	}
	st = clg_measure_warm_loads(dev, names, n, warm, wok, wlog);
	if (st) {
		json_key_str(w, "error", clg_last_error());
		rc = 1;
		goto out_free;
	}

	json_key(w, "programs");
	json_begin_array(w);
	for (int i = 0; i < n; i++) {
		int tried_cold = cold[i].seconds >= 0 || cold[i].log;
		int ok = wok[i] && (!tried_cold || cold[i].ok);
		json_begin_object(w);
		json_key_str(w, "name", names[i]);
		json_key_bool(w, "ok", ok);
		json_key_num(w, "cold_s", cold[i].seconds >= 0 ? cold[i].seconds : NAN);
		json_key_num(w, "warm_s", warm[i] >= 0 ? warm[i] : NAN);
		json_key_str(w, "log", ok ? NULL : cold[i].log ? cold[i].log : wlog[i]);
		json_end_object(w);
		if (warm[i] >= 0) {
			nwarm++;
			total_warm += warm[i];
		}
	}
	json_end_array(w);
	json_key_num(w, "total_cold_s", ncold ? total_cold : NAN);
	json_key_num(w, "total_warm_s", nwarm ? total_warm : NAN);
	driver_cache(dev, w);
	json_key_str(w, "options", opts);
	json_key_str(w, "cache_dir", cache && *cache ? cache : NULL);
	{
		char note[512];
		snprintf(note, sizeof(note),
			 "%s; warm = this process's first load from clgrad's disk cache (a program it already held: a "
			 "reload on a second instance with empty program caches; null: not loaded from disk%s); options are the float32 ones every program is built with (gemm "
			 "adds its tile #defines at run time)",
			 o->quick ? "--quick: cold build of elementwise and gemm only (total_cold_s covers those), warm "
				    "load of every program"
				  : "cold build of every program from source, bypassing clgrad's cache and, by a "
				    "define of its own (-D CLG_COLD_BUILD), the driver's",
			 cache && !strcmp(cache, "0") ? ", and CLGRAD_CACHE_DIR=0 disables the cache" : "");
		json_key_str(w, "note", note);
	}
out_free:
	for (int i = 0; i < n; i++) {
		if (cold)
			free(cold[i].log);
		if (wlog)
			free(wlog[i]);
	}
	free(cold);
	free(warm);
	free(wok);
	free(wlog);
	return rc;
}
