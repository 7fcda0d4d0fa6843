/* Routing decided when a device is first used: a small list of known-bad driver/device
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

/* The routes in force on be (none on the reference backend). The array belongs to be. */
clg_status clg_backend_routes(clg_backend *be, const clg_route **routes, int *n);

#endif
