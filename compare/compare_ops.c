/* compare section "ops": the op suite (suite/op_suite.c) and the gradient checks
 * (suite/grad_suite.c) on one device against the reference backend, per op, plus the routes the
 * device's self-test and known-bad list put in force (clg_backend_routes). Members are listed in
 * compare.h; besides them: "mode" (what ran and why), "failures" (the first failed cases with
 * their messages), "ops_elapsed_s" and "grad_elapsed_s".
 *
 * How much runs: everything in a full run; with --quick a few cases of at most 64 elements per
 * operand for each op and format, and the quick gradient subset; on a simulator (Oclgrind) always small cases and few gradient
 * checks; on the reference device, which is compared with itself (it passes by construction and
 * proves the harness), a quick subset of small cases. */
#include "compare.h"

#include "clg_selftest.h"
#include "grad_suite.h"
#include "op_suite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_FAILURES 40   /* failed cases listed with their messages */
#define PROGRESS_EVERY_S 10 /* a progress line on stderr (the worker's log) this often */

typedef struct {
	int device_index;
	int done, failed;
	double start, last;
} ops_progress;

typedef struct {
	op_suite_opts ops;
	grad_suite_opts grad;
	const char *why;
	ops_progress progress;
} ops_plan;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Says every few seconds how far the suite got, so that a device killed by the watchdog (a
 * compiler hang, cold kernel builds) leaves a trace of where it was. */
static void on_case(const op_case_result *r, void *ctx)
{
	ops_progress *p = ctx;
	double t = now_s();

	p->done++;
	p->failed += r->outcome == OP_CASE_FAIL;
	if (t - p->last >= PROGRESS_EVERY_S) {
		fprintf(stderr, "compare ops: device %d: %d cases done (%d failed), at %s (%.0f s)\n", p->device_index,
			p->done, p->failed, r->name, t - p->start);
		p->last = t;
	}
}

/* The reference device: compared with itself. */
static int is_reference(clg_backend *ref, clg_backend *dev, const compare_opts *o)
{
	return dev == ref || o->device_index == 0;
}

static void plan_for(clg_backend *ref, clg_backend *dev, const compare_opts *o, ops_plan *p)
{
	memset(p, 0, sizeof(*p));
	if (is_reference(ref, dev, o)) {
		p->ops.small = p->ops.quick = 1;
		p->grad.quick = 1;
		p->grad.max_cases = 4;
		p->why = "reference device compared with itself (passes by construction, proves the harness): "
			 "a quick subset of small cases, 4 gradient checks";
	} else if (o->tiny) { /* a simulator (the worker decides) */
		p->ops.small = 1;
		p->ops.quick = o->quick;
		p->grad.quick = 1;
		p->grad.max_cases = o->quick ? 2 : 4;
		p->grad.skip_ref_pass = 1;
		p->why = o->quick ? "simulator, quick: a quick subset of small cases, 2 gradient checks"
				  : "simulator: small cases only, 4 gradient checks";
	} else if (o->quick) { /* the docs' 2 minutes: every small case took 3-4 on the 2-core machine */
		p->ops.small = p->ops.quick = 1;
		p->grad.quick = 1;
		p->grad.skip_ref_pass = 1;
		p->why = "quick: a few small cases per op and format (at most 64 elements per operand), the "
			 "quick gradient subset";
	} else {
		p->grad.skip_ref_pass = 1;
		p->why = "full: every case and every gradient check";
	}
}

static const char *outcome_name(op_case_outcome x)
{
	return x == OP_CASE_PASS ? "pass" : x == OP_CASE_FAIL ? "fail" : "unsupported";
}

static void write_ops(json_writer *w, const op_suite_report *rep)
{
	int listed = 0, failed = 0;

	json_key(w, "ops");
	json_begin_array(w);
	for (int i = 0; i < rep->nops; i++) {
		const op_result *t = &rep->ops[i];
		json_begin_object(w);
		json_key_str(w, "op", t->op);
		json_key_int(w, "pass", t->pass);
		json_key_int(w, "fail", t->fail);
		json_key_int(w, "unsupported", t->unsupported);
		json_key_num(w, "worst_err", t->worst_err); /* null when nothing was compared */
		json_key_num(w, "threshold", t->threshold);
		json_key_str(w, "worst_case", t->worst_case[0] ? t->worst_case : NULL);
		if (isinf(t->worst_err))
			json_key_str(w, "worst_err_note", "NaN/Inf positions differ from the reference");
		json_end_object(w);
	}
	json_end_array(w);
	json_key(w, "failures");
	json_begin_array(w);
	for (int i = 0; i < rep->ncases; i++) {
		const op_case_result *r = &rep->cases[i];
		if (r->outcome != OP_CASE_FAIL)
			continue;
		if (failed++ >= MAX_FAILURES)
			continue;
		listed++;
		json_begin_object(w);
		json_key_str(w, "case", r->name);
		json_key_str(w, "op", r->op);
		json_key_str(w, "outcome", outcome_name(r->outcome));
		json_key_num(w, "err", r->err);
		json_key_num(w, "threshold", r->threshold);
		json_key_str(w, "message", r->message);
		json_end_object(w);
	}
	json_end_array(w);
	json_key_int(w, "failures_not_listed", failed - listed);
}

static void write_grad(json_writer *w, const grad_result *res, int n, int *pass, int *fail, int *cannot)
{
	json_key(w, "grad");
	json_begin_array(w);
	for (int i = 0; i < n; i++) {
		const grad_result *r = &res[i];
		json_begin_object(w);
		json_key_str(w, "case", r->name);
		json_key(w, "ok");
		if (r->outcome == GRAD_CANNOT_RUN)
			json_null(w);
		else
			json_bool(w, r->outcome == GRAD_OK);
		json_key_num(w, "worst_rel_err", r->worst_rel_err);
		json_key_num(w, "tol", r->tol);
		json_key_str(w, "message", r->message[0] ? r->message : NULL);
		json_end_object(w);
		*pass += r->outcome == GRAD_OK;
		*fail += r->outcome == GRAD_FAIL;
		*cannot += r->outcome == GRAD_CANNOT_RUN;
	}
	json_end_array(w);
}

static void write_routes(json_writer *w, clg_backend *dev)
{
	const clg_route *routes = NULL;
	int n = 0;
	clg_status st = clg_backend_routes(dev, &routes, &n);

	json_key(w, "routed");
	json_begin_array(w);
	for (int i = 0; !st && i < n; i++) {
		json_begin_object(w);
		json_key_str(w, "op", clg_op_name(routes[i].op));
		json_key_str(w, "action", routes[i].action == CLG_ROUTE_FALLBACK ? "fallback" : "unsupported");
		json_key_str(w, "why", routes[i].why);
		json_end_object(w);
	}
	json_end_array(w);
	if (st)
		json_key_str(w, "routed_error", clg_last_error());
}

int compare_ops(clg_backend *ref, clg_backend *dev, const compare_opts *o, json_writer *w)
{
	ops_plan plan;
	op_suite_report rep;
	grad_result *gres = NULL;
	int ngres = 0, gpass = 0, gfail = 0, gcannot = 0, rc = 1;
	double t_ops, t_grad, t_end;
	clg_status st;

	plan_for(ref, dev, o, &plan);
	plan.progress.device_index = o->device_index;
	plan.progress.start = plan.progress.last = now_s();
	plan.ops.on_case = on_case;
	plan.ops.ctx = &plan.progress;
	json_key(w, "mode");
	json_begin_object(w);
	json_key_bool(w, "small", plan.ops.small);
	json_key_bool(w, "quick", plan.ops.quick);
	json_key_bool(w, "grad_subset", plan.grad.quick);
	json_key_str(w, "note", plan.why);
	json_end_object(w);

	t_ops = now_s();
	st = op_suite_run(ref, dev, &plan.ops, &rep);
	t_grad = now_s();
	if (st) {
		json_key_str(w, "error", clg_last_error());
		goto free_rep;
	}
	write_ops(w, &rep);
	json_key_num(w, "ops_elapsed_s", t_grad - t_ops);

	/* on the reference device the reference's own float32 pass is the device's */
	st = grad_suite_run(ref, &dev, is_reference(ref, dev, o) ? 0 : 1, &plan.grad, &gres, &ngres);
	t_end = now_s();
	if (st) {
		json_key_str(w, "error", clg_last_error());
		goto free_grad;
	}
	write_grad(w, gres, ngres, &gpass, &gfail, &gcannot);
	json_key_num(w, "grad_elapsed_s", t_end - t_grad);

	json_key(w, "totals");
	json_begin_object(w);
	json_key_int(w, "pass", rep.pass);
	json_key_int(w, "fail", rep.fail);
	json_key_int(w, "unsupported", rep.unsupported);
	json_key_int(w, "grad_pass", gpass);
	json_key_int(w, "grad_fail", gfail);
	json_key_int(w, "grad_cannot_run", gcannot);
	json_end_object(w);
	write_routes(w, dev);
	rc = 0;
free_grad:
	free(gres);
free_rep:
	op_suite_report_free(&rep);
	return rc;
}
