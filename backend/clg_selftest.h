/* Routing decided when a device and each of its ops is first used: a small list of known-bad driver/device
 * combinations and a quick self-test of ops against the reference backend (cached by driver
 * version). An op that fails is routed to a portable fallback or marked unsupported (its op
 * table entry cleared, so clg_run reports CLG_ERR_UNSUPPORTED naming op and device): never
 * silently wrong. */
#ifndef CLG_SELFTEST_H
#define CLG_SELFTEST_H

#include "clg_backend.h"

typedef enum { CLG_ROUTE_FALLBACK, CLG_ROUTE_UNSUPPORTED } clg_route_action;

typedef struct {
	clg_op op;
	clg_route_action action;
	char why[200];  /* "known-bad: ..." or "self-test: ..." */
} clg_route;

/* The routes in force on be (none on the reference backend), once every op's cases have run
 * (those still pending run first). The array belongs to be. */
clg_status clg_backend_routes(clg_backend *be, const clg_route **routes, int *n);

/* What the self-test did on be (all zero on the reference backend). Each op's cases run at its
 * first use (clg_run, clg_backend_has_op), before its first result; the result is cached per
 * driver version and kernel sources in $CLGRAD_CACHE_DIR with the ops tested, so a later process
 * tests only ops it has not seen. This call and clg_backend_routes first run every case still
 * pending: they report the whole test. CLGRAD_SELFTEST=0 turns it off (the known-bad list and
 * $CLGRAD_KNOWN_BAD="op:fallback|unsupported:why;..." still apply); CLGRAD_DEBUG prints the routes. */
typedef struct {
	int enabled;        /* 0 under CLGRAD_SELFTEST=0 */
	int from_cache;     /* the result was read from the cache, no case ran */
	int cases_run;      /* cases run on the device (GEMM's again with the other implementation) */
	int cases_failed;   /* of which gave a wrong result */
	int cases_error;    /* of which failed to run (reported where the op is used, not routed) */
	double seconds;     /* what the known-bad list, the cache lookup and the cases run so far took */
} clg_selftest_info;

clg_status clg_backend_selftest_info(clg_backend *be, clg_selftest_info *out);

#endif
