/* Routing: a known-bad list of driver/device combinations (applied at open) and a quick self-test
 * of the ops against the reference backend (each op's cases at its first use: first_use, called
 * by clg_run before the op runs), so that an op a device gets wrong is never silently used.
 *
 *   1. Known-bad list: the static table below plus $CLGRAD_KNOWN_BAD
 *      ("op:fallback|unsupported:why;..."), matched by case-insensitive substrings of platform,
 *      device name and driver version.
 *   2. Self-test (unless CLGRAD_SELFTEST=0): small cases of every op family run on the device
 *      and on the reference backend and compared (cl_selftest_cases.c); where CLBlast serves
 *      GEMM, its cases run a second time on CLBlast's indirect path (gemm_cases_indirect); where
 *      the device computes float16 in half (cl_khr_fp16), float16 cases of elementwise, reduction,
 *      row and GEMM ops follow, and one wrong or failing turns native half off for the device
 *      (float16 computed in float32, said on stderr and in the cached result: half_test).
 *      The open runs no case: an op's cases run at its first clg_run (or clg_backend_has_op),
 *      before the op does; the float16 cases at the first call with a float16 operand;
 *      clg_backend_routes and clg_backend_selftest_info run whatever is still pending.
 *      The result is cached in <cache dir>/selftest-<key>.txt (cl_selftest_cache.c), keyed by
 *      device, driver, platform, the kernel sources (so an edited kernel is re-tested), the
 *      library's own sources (clg_build_id: a fixed launcher is re-tested too), the GEMM choice
 *      and the known-bad routes, and lists the ops tested so far.
 *   3. Routes: GEMM falls back to one implementation forced (clg_cl_gemm_forced, cl_tune.h: the
 *      own kernels, or CLBlast on CPU devices where the own kernels are the default; the
 *      self-test takes the first that passes); any other op becomes unsupported (its op table
 *      entry is cleared, so clg_run fails with CLG_ERR_UNSUPPORTED naming op and device).
 *
 * Only wrong results are routed. An op that fails loudly (a build error, an OpenCL error) keeps
 * failing loudly where it is used; for GEMM the other implementation is tried as well. */
#include "cl_selftest_internal.h"
#include "cl_tune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- known-bad list ------------------------------------------------------------------------ */

typedef struct {
	const char *platform, *device, *driver; /* case-insensitive substrings; NULL matches anything */
	clg_op op;
	clg_route_action action;
	const char *why;
} known_bad;

/* Every entry names its evidence folder in docs/known-bad/ (the minimal kernel or host program
 * that shows the failure, how to run it, the upstream report) in its reason, which `clgrad
 * compare` links; docs/known-bad/README.md lists them all, crashes (no route) included.
 * Matched by family (a substring every member's name shares), not by one model's exact name: a
 * CLBlast bug from its tuning parameters or a compiler tends to reach a family's neighbours, and
 * the self-test (which forces CLBlast's indirect path, where these were seen) would find a member
 * that is not affected only at sizes it does not reach. */
static const known_bad known_bad_table[] = {
	/* Apple M-series GPUs: SGEMM wrong (max diff ~300) for square sizes >= 1152 with the M1
	 * tuning parameters, https://github.com/CNugteren/CLBlast/issues/542 (2024) */
	{"Apple", "Apple M", NULL, CLG_OP_GEMM, CLG_ROUTE_FALLBACK,
	 "known-bad: CLBlast SGEMM wrong for sizes >= 1152 on Apple M-series (CLBlast#542, docs/known-bad/clblast-sgemm); "
	 "using own GEMM kernels"},
	/* Intel Arc GPUs: SGEMM fails CLBlast's correctness tests (A770, CLBlast 1.6.2),
	 * https://github.com/CNugteren/CLBlast/issues/533 and
	 * https://github.com/intel/compute-runtime/issues/728 (2024) */
	{NULL, "Arc(TM)", NULL, CLG_OP_GEMM, CLG_ROUTE_FALLBACK,
	 "known-bad: CLBlast SGEMM wrong on Intel Arc (CLBlast#533, compute-runtime#728, docs/known-bad/clblast-sgemm); "
	 "using own GEMM kernels"},
};

/* The GEMM implementation a device does not use by default: the fallback (CLBlast on CPU
 * devices, where the own kernels are the default; the own kernels elsewhere). */
static clg_cl_gemm_impl gemm_other(clg_backend *be)
{
	return be->info.type == CLG_DEV_CPU ? CLG_CL_GEMM_CLBLAST : CLG_CL_GEMM_OWN;
}

static const char *gemm_impl_name(clg_cl_gemm_impl i)
{
	return i == CLG_CL_GEMM_OWN ? "own kernels" : i == CLG_CL_GEMM_CLBLAST ? "CLBlast" : "default";
}

static clg_status gemm_routed(clg_backend *be, const clg_op_call *c)
{
	return clg_cl_gemm_forced(be, c, clg_cl_of(be)->selftest->gemm_impl, NULL);
}

static void gemm_force(clg_backend *be, clg_cl_gemm_impl impl)
{
	struct clg_cl_selftest *s = clg_cl_of(be)->selftest;
	s->gemm_impl = impl;
	be->ops[CLG_OP_GEMM] = impl == CLG_CL_GEMM_AUTO ? s->gemm_fn : gemm_routed;
}

static int matches(const char *hay, const char *needle) { return !needle || clg_contains_nocase(hay, needle); }

/* ---- routes ---------------------------------------------------------------------------------- */

int clg_st_find_route(const struct clg_cl_selftest *s, clg_op op)
{
	for (int i = 0; i < s->nroutes; i++)
		if (s->routes[i].op == op)
			return i;
	return -1;
}

/* Records and applies a route (the first one for an op wins). A fallback exists for GEMM only;
 * asked of another op it becomes unsupported. */
void clg_st_add_route(clg_backend *be, clg_op op, clg_route_action action, const char *why)
{
	struct clg_cl_selftest *s = clg_cl_of(be)->selftest;
	int at = clg_st_find_route(s, op);
	clg_route *r;

	if (at >= 0) {
		/* the first route for an op stands, unless its fallback turns out wrong as well */
		r = &s->routes[at];
		if (r->action != CLG_ROUTE_FALLBACK || action != CLG_ROUTE_UNSUPPORTED)
			return;
		r->action = CLG_ROUTE_UNSUPPORTED;
		s->gemm_impl = CLG_CL_GEMM_AUTO;
		be->ops[op] = NULL;
		snprintf(r->why, sizeof(r->why), "%s", why);
		clg_debug("device '%s': op '%s' routed to unsupported: %s", be->info.name, clg_op_name(op), r->why);
		return;
	}
	if (s->nroutes == MAX_ROUTES)
		return;
	r = &s->routes[s->nroutes++];
	r->op = op;
	r->action = action == CLG_ROUTE_FALLBACK && op != CLG_OP_GEMM ? CLG_ROUTE_UNSUPPORTED : action;
	snprintf(r->why, sizeof(r->why), "%s%s", why,
		 r->action != action ? " (no fallback for this op: unsupported)" : "");
	if (r->action == CLG_ROUTE_FALLBACK)
		gemm_force(be, s->gemm_impl != CLG_CL_GEMM_AUTO ? s->gemm_impl : gemm_other(be));
	else
		be->ops[op] = NULL;
	clg_debug("device '%s': op '%s' routed to %s: %s", be->info.name, clg_op_name(op),
		  r->action == CLG_ROUTE_FALLBACK ? "fallback" : "unsupported", r->why);
}

int clg_st_op_by_name(const char *name, size_t len, clg_op *out)
{
	for (int op = 0; op < CLG_OP_COUNT; op++) {
		const char *n = clg_op_name((clg_op)op);
		if (strlen(n) == len && !strncmp(n, name, len)) {
			*out = (clg_op)op;
			return 0;
		}
	}
	return -1;
}

/* $CLGRAD_KNOWN_BAD="op:fallback|unsupported:why;...": entries for every OpenCL device. A
 * malformed entry is skipped (with a debug message), never fatal. */
static void apply_env_known_bad(clg_backend *be)
{
	const char *e = clg_cfg_str(CLG_CFG_KNOWN_BAD);

	while (e && *e) {
		const char *end = strchr(e, ';'), *c1, *c2;
		size_t n = end ? (size_t)(end - e) : strlen(e);
		clg_route_action action;
		clg_op op;
		char why[160];

		c1 = memchr(e, ':', n);
		c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - e)) : NULL;
		if (!c1 || clg_st_op_by_name(e, (size_t)(c1 - e), &op)) {
			clg_debug("CLGRAD_KNOWN_BAD: skipping '%.*s' (want op:fallback|unsupported:why)", (int)n, e);
			goto next;
		}
		{
			size_t alen = (c2 ? (size_t)(c2 - c1) : n - (size_t)(c1 - e)) - 1;
			if (alen == 8 && !strncmp(c1 + 1, "fallback", 8)) {
				action = CLG_ROUTE_FALLBACK;
			} else if (alen == 11 && !strncmp(c1 + 1, "unsupported", 11)) {
				action = CLG_ROUTE_UNSUPPORTED;
			} else {
				clg_debug("CLGRAD_KNOWN_BAD: skipping '%.*s' (action: fallback or unsupported)", (int)n, e);
				goto next;
			}
		}
		snprintf(why, sizeof(why), "known-bad (CLGRAD_KNOWN_BAD): %.*s", c2 ? (int)(n - (size_t)(c2 + 1 - e)) : 0,
			 c2 ? c2 + 1 : "");
		clg_st_add_route(be, op, action, why);
next:
		e = end ? end + 1 : NULL;
	}
}

/* The user's entries first: for one op, the first route wins. */
static void apply_known_bad(clg_backend *be)
{
	const clg_device_info *i = &be->info;

	apply_env_known_bad(be);
	for (size_t k = 0; k < sizeof(known_bad_table) / sizeof(known_bad_table[0]); k++) {
		const known_bad *b = &known_bad_table[k];
		if (matches(i->platform, b->platform) && matches(i->name, b->device) &&
		    matches(i->driver_version, b->driver))
			clg_st_add_route(be, b->op, b->action, b->why);
	}
}

/* ---- running the self-test ------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Whether GEMM with impl (AUTO: as the op table runs it) reaches CLBlast here. */
static int clblast_serves(clg_backend *be, clg_cl_gemm_impl impl)
{
	const char *e = clg_cfg_str(CLG_CFG_GEMM);

	if (impl != CLG_CL_GEMM_AUTO)
		return impl == CLG_CL_GEMM_CLBLAST;
	if (e && !strcmp(e, "clblast"))
		return 1;
	if (e && !strcmp(e, "own"))
		return 0;
	return be->info.type != CLG_DEV_CPU;
}

/* The GEMM cases again on CLBlast's indirect path (Xgemm on padded copies, where its known bugs
 * were seen): it serves products of T^3 and more only (T: 128 on Intel GPUs, 704 by default,
 * 1472 on NVIDIA), far beyond the cases' sizes, so T is set to 1 for the run and then back to
 * the value in force before, whatever the run did. */
static void gemm_cases_indirect(clg_backend *be, clg_backend *ref, const clg_st_cases *l, clg_st_result *res,
				clg_selftest_info *info)
{
	clg_cl_gemm_impl impl;
	clg_cl_gemm_tile tile;
	size_t T = 0;

	/* what a GEMM call would apply first: the tune file, $CLGRAD_GEMM_MIN_INDIRECT */
	clg_cl_tune_lookup(be, 0, 0, 1, 1, 1, 1, &impl, &tile);
	if (clg_cl_clblast_env_min_indirect(be) || clg_cl_clblast_min_indirect(be, CLG_F32, &T) ||
	    (T > 1 && clg_cl_clblast_set_min_indirect(be, CLG_F32, 1))) {
		clg_debug("self-test on '%s': CLBlast's indirect path not tested: %s", be->info.name, clg_last_error());
		clg_clear_error();
		return;
	}
	clg_debug("self-test on '%s': GEMM cases on CLBlast's indirect path (its switch at %zu^3 set to 1^3)",
		  be->info.name, T);
	{
		unsigned char want[CLG_OP_COUNT] = {0};
		want[CLG_OP_GEMM] = 1;
		clg_st_cases_run(l, be, ref, want, res, info);
	}
	if (T > 1 && clg_cl_clblast_set_min_indirect(be, CLG_F32, T)) {
		clg_debug("self-test on '%s': %s", be->info.name, clg_last_error());
		clg_clear_error();
	}
}

/* Sets native half off on be, with why, and says so once on stderr (a float16 result computed in
 * float32 instead is slower, never wrong). */
void clg_st_half_off(clg_backend *be, const char *why)
{
	snprintf(be->info.half_off, sizeof(be->info.half_off), "%s", why);
	fprintf(stderr, "clgrad: device '%s': native float16 is off: %s; float16 is computed in float32\n",
		be->info.name, why);
}

/* Devices that compute float16 in half (cl_khr_fp16): the float16 cases; one wrong or failing
 * turns native half off for the device. */
static void half_test(clg_backend *be, clg_backend *ref, clg_selftest_info *info)
{
	clg_st_cases *l = clg_half_native(&be->info) ? clg_st_half_cases_new() : NULL;
	clg_st_result *res = l ? calloc(CLG_OP_COUNT, sizeof(*res)) : NULL;
	char why[200];

	if (!res)
		goto out;
	clg_st_cases_run(l, be, ref, NULL, res, info);
	for (int op = 0; op < CLG_OP_COUNT; op++) {
		const clg_st_result *r = &res[op];
		if (r->failed)
			snprintf(why, sizeof(why), "self-test: float16 %s wrong in half (normalized error %.2g > %.2g)",
				 clg_op_name((clg_op)op), r->worst, r->tol);
		else if (r->errored)
			snprintf(why, sizeof(why), "self-test: float16 %s fails in half (%s)", clg_op_name((clg_op)op),
				 clg_status_name(r->status));
		else
			continue;
		clg_st_half_off(be, why);
		break;
	}
out:
	free(res);
	clg_st_cases_free(l);
}

/* The routes res calls for, for the ops in want (GEMM: each implementation forced is tried before
 * giving up on it). */
static void route_results(clg_backend *be, clg_backend *ref, const unsigned char *want, clg_st_result *res,
			  clg_selftest_info *info)
{
	const clg_st_cases *l = clg_cl_of(be)->selftest->cases;
	clg_st_result *res2 = res + CLG_OP_COUNT;
	char why[200];

	for (int op = 0; op < CLG_OP_COUNT; op++) {
		clg_st_result *r = &res[op];
		if (!want[op])
			continue;
		if (r->errored)
			clg_debug("self-test on '%s': op '%s' fails to run (%s): %s", be->info.name, clg_op_name((clg_op)op),
				  clg_status_name(r->status), r->msg);
		if (op == CLG_OP_GEMM && (r->failed || r->errored) && clg_st_find_route(clg_cl_of(be)->selftest, op) < 0) {
			/* try each implementation forced (the fallback first) before giving up on GEMM */
			clg_cl_gemm_impl cand[2] = {gemm_other(be), gemm_other(be) == CLG_CL_GEMM_OWN ? CLG_CL_GEMM_CLBLAST
											  : CLG_CL_GEMM_OWN};
			unsigned char only_gemm[CLG_OP_COUNT] = {0};
			int found = -1;
			only_gemm[CLG_OP_GEMM] = 1;
			for (int k = 0; k < 2 && found < 0; k++) {
				memset(&res2[CLG_OP_GEMM], 0, sizeof(res2[CLG_OP_GEMM]));
				gemm_force(be, cand[k]);
				clg_st_cases_run(l, be, ref, only_gemm, res2, info);
				if (cand[k] == CLG_CL_GEMM_CLBLAST)
					gemm_cases_indirect(be, ref, l, res2, info);
				if (!res2[CLG_OP_GEMM].failed && !res2[CLG_OP_GEMM].errored)
					found = k;
			}
			gemm_force(be, CLG_CL_GEMM_AUTO);
			if (found >= 0) {
				if (r->failed)
					snprintf(why, sizeof(why), "self-test: gemm wrong (error %.2g > %.2g); using %s", r->worst,
						 r->tol, gemm_impl_name(cand[found]));
				else
					snprintf(why, sizeof(why), "self-test: gemm fails (%s); using %s",
						 clg_status_name(r->status), gemm_impl_name(cand[found]));
				clg_cl_of(be)->selftest->gemm_impl = cand[found];
				clg_st_add_route(be, CLG_OP_GEMM, CLG_ROUTE_FALLBACK, why);
				continue;
			}
			if (!r->failed)
				continue; /* fails loudly both ways: it reports itself where used */
			snprintf(why, sizeof(why), "self-test: gemm wrong with both implementations (error %.2g > %.2g)",
				 r->worst, r->tol);
			clg_st_add_route(be, CLG_OP_GEMM, CLG_ROUTE_UNSUPPORTED, why);
			continue;
		}
		if (r->failed) {
			snprintf(why, sizeof(why), "self-test: %s wrong (normalized error %.2g > %.2g)", clg_op_name((clg_op)op),
				 r->worst, r->tol);
			clg_st_add_route(be, (clg_op)op, CLG_ROUTE_UNSUPPORTED, why);
		}
	}
}

/* ---- testing at first use -------------------------------------------------------------------- */

static void first_use(clg_backend *be, clg_op op, int half);

/* Whether anything is left to test; the hook goes when nothing is. */
static void update_hook(clg_backend *be)
{
	const struct clg_cl_selftest *s = clg_cl_of(be)->selftest;
	int any = s->half_pending;

	for (int op = 0; op < CLG_OP_COUNT && !any; op++)
		any = s->pending[op];
	be->first_use = any ? first_use : NULL;
}

/* Runs the float32 cases of the ops in want still pending (and the float16 cases when half is
 * set and they are pending), routes what they find, stores the result. Each op's pending mark
 * goes before its cases run: the cases call the op through clg_run. */
static void run_pending(clg_backend *be, const unsigned char *want, int half)
{
	clg_cl *cl = clg_cl_of(be);
	struct clg_cl_selftest *s = cl->selftest;
	unsigned char mask[CLG_OP_COUNT] = {0};
	clg_st_result *res = NULL;
	int any = 0, armed = cl->fault_armed;
	struct clg_recorder *recorder = be->recorder;
	struct clg_op_timer *op_timer = be->op_timer;
	int run0 = s->info.cases_run, failed0 = s->info.cases_failed, error0 = s->info.cases_error;
	double t0 = now_s();

	for (int op = 0; op < CLG_OP_COUNT; op++)
		if (want[op] && s->pending[op])
			mask[op] = 1, any = 1, s->pending[op] = 0;
	half = half && s->half_pending;
	if (half)
		s->half_pending = 0;
	update_hook(be);
	if (!any && !half)
		return;
	if (!s->ref && clg_ref_open(&s->ref)) {
		clg_debug("self-test on '%s' skipped: %s", be->info.name, clg_last_error());
		s->info.cases_error++;
		goto out;
	}
	res = calloc(2 * CLG_OP_COUNT, sizeof(*res));
	if (!res) {
		clg_debug("self-test on '%s' skipped: out of host memory", be->info.name);
		s->info.cases_error++;
		goto out;
	}
	/* its launches are not the user's: CLGRAD_FAULT counts those, `bench step` records and
	 * `train --profile` times those; a crash in them is remembered */
	cl->fault_armed = 0;
	be->recorder = NULL;
	be->op_timer = NULL;
	clg_crash_marker_begin(&be->info, "the first-use self-test");
	if (any) {
		clg_st_cases_run(s->cases, be, s->ref, mask, res, &s->info);
		if (mask[CLG_OP_GEMM] && clblast_serves(be, s->gemm_impl))
			gemm_cases_indirect(be, s->ref, s->cases, res, &s->info);
		route_results(be, s->ref, mask, res, &s->info);
		for (int op = 0; op < CLG_OP_COUNT; op++)
			s->tested[op] |= mask[op];
	}
	if (half) {
		half_test(be, s->ref, &s->info);
		s->half_tested = 1;
		clg_half_record_store(&be->info);
	}
	clg_crash_marker_end(&be->info);
	cl->fault_armed = armed;
	be->recorder = recorder;
	be->op_timer = op_timer;
	if (s->have_path && !s->batch)
		clg_st_store_result(be, s->dir, s->path, s->key);
	clg_debug("self-test on '%s': %d cases, %d wrong, %d failed to run, %.3f s (at first use; %d cases so far)",
		  be->info.name, s->info.cases_run - run0, s->info.cases_failed - failed0, s->info.cases_error - error0,
		  now_s() - t0, s->info.cases_run);
	for (int op = 0; op < CLG_OP_COUNT && clg_debug_enabled(); op++)
		if (mask[op])
			clg_debug("self-test on '%s': %s tested%s", be->info.name, clg_op_name((clg_op)op),
				  be->ops[op] ? "" : ", routed to unsupported");
out:
	free(res);
	s->info.seconds += now_s() - t0;
	clg_clear_error();
}

/* The float16 cases' ops: their float32 cases first (a routed op is skipped there too). */
static const clg_op half_ops[] = {CLG_OP_ADD, CLG_OP_MUL, CLG_OP_GELU, CLG_OP_EXP, CLG_OP_SUM, CLG_OP_SOFTMAX,
				  CLG_OP_GEMM};

static void first_use(clg_backend *be, clg_op op, int half)
{
	struct clg_cl_selftest *s = clg_cl_of(be)->selftest;
	unsigned char want[CLG_OP_COUNT] = {0};

	/* GEMM with a fused epilogue runs the GEMM kernels: GEMM's verdict decides whether it may */
	want[op == CLG_OP_GEMM_BIAS_ACT ? CLG_OP_GEMM : op] = 1;
	if (half && s->half_pending)
		for (size_t k = 0; k < sizeof(half_ops) / sizeof(half_ops[0]); k++)
			want[half_ops[k]] = 1;
	run_pending(be, want, half);
}

/* Every op still pending, and the float16 cases: what the routes and the self-test's summary
 * report (clg_backend_routes, clg_backend_selftest_info, `clgrad compare`). */
static void run_all(clg_backend *be)
{
	struct clg_cl_selftest *s = clg_cl_of(be)->selftest;
	unsigned char want[CLG_OP_COUNT];

	if (!be->first_use)
		return;
	memset(want, 1, sizeof(want));
	s->batch = 1;
	run_pending(be, want, 1);
	s->batch = 0;
	if (s->have_path && s->info.cases_run > 0)
		clg_st_store_result(be, s->dir, s->path, s->key);
}

void clg_cl_selftest_open(clg_backend *be)
{
	clg_cl *cl = clg_cl_of(be);
	struct clg_cl_selftest *s;
	double t0 = now_s();
	int npending = 0;

	s = cl->selftest = calloc(1, sizeof(*cl->selftest));
	if (!s) {
		clg_debug("self-test on '%s' skipped: out of host memory", be->info.name);
		return;
	}
	s->gemm_fn = be->ops[CLG_OP_GEMM];
	apply_known_bad(be);
	s->info.enabled = clg_cfg_bool(CLG_CFG_SELFTEST);
	if (!s->info.enabled)
		goto done;
	s->cases = clg_st_cases_new();
	if (!s->cases) {
		clg_debug("self-test on '%s' skipped: out of host memory", be->info.name);
		s->info.cases_error++;
		goto done;
	}
	/* nothing runs here: each op's cases run at its first use (first_use, through clg_run) */
	for (int op = 0; op < CLG_OP_COUNT; op++)
		s->pending[op] = be->ops[op] && clg_st_cases_has(s->cases, (clg_op)op);
	s->half_pending = clg_half_native(&be->info);
	clg_cl_cache_dir(s->dir, sizeof(s->dir));
	if (s->dir[0]) {
		clg_st_result_key(be, s->key);
		snprintf(s->path, sizeof(s->path), "%s/selftest-%016llx%016llx.txt", s->dir, (unsigned long long)s->key[0],
			 (unsigned long long)s->key[1]);
		s->have_path = 1;
		if (clg_st_load_result(be, s->path, s->key) == 0) {
			s->info.from_cache = 1;
			clg_debug("self-test on '%s': result from %s", be->info.name, s->path);
		}
	}
	update_hook(be);
	for (int op = 0; op < CLG_OP_COUNT; op++)
		npending += s->pending[op];
	clg_debug("self-test on '%s': %d ops to test at their first use%s", be->info.name, npending,
		  s->half_pending ? ", and the float16 cases at the first float16 op" : "");
done:
	s->info.seconds = now_s() - t0;
	if (s->info.enabled && !s->half_pending)
		clg_half_record_store(&be->info);
	if (clg_debug_enabled()) {
		for (int r = 0; r < s->nroutes; r++) {
			const clg_route *x = &s->routes[r];
			clg_debug("route on '%s': %s -> %s (%s)", be->info.name, clg_op_name(x->op),
				  x->action == CLG_ROUTE_FALLBACK ? "fallback" : "unsupported", x->why);
		}
		if (!s->nroutes)
			clg_debug("routes on '%s': none so far", be->info.name);
	}
}

void clg_cl_selftest_free(clg_backend *be)
{
	struct clg_cl_selftest *s = clg_cl_of(be)->selftest;

	be->first_use = NULL;
	if (s) {
		clg_backend_close(s->ref);
		clg_st_cases_free(s->cases);
	}
	free(s);
	clg_cl_of(be)->selftest = NULL;
}

static struct clg_cl_selftest *state_of(clg_backend *be)
{
	if (!be || !be->iface || strcmp(be->iface->kind, "opencl") != 0)
		return NULL;
	return clg_cl_of(be)->selftest;
}

clg_status clg_backend_routes(clg_backend *be, const clg_route **routes, int *n)
{
	const struct clg_cl_selftest *s = state_of(be);

	if (!be)
		return clg_fail(CLG_ERR_INVALID, "clg_backend_routes: no backend");
	if (s)
		run_all(be);
	*routes = s ? s->routes : NULL;
	*n = s ? s->nroutes : 0;
	return CLG_OK;
}

clg_status clg_backend_selftest_info(clg_backend *be, clg_selftest_info *out)
{
	const struct clg_cl_selftest *s = state_of(be);

	if (!be)
		return clg_fail(CLG_ERR_INVALID, "clg_backend_selftest_info: no backend");
	memset(out, 0, sizeof(*out));
	if (s)
		run_all(be);
	if (s)
		*out = s->info;
	return CLG_OK;
}
