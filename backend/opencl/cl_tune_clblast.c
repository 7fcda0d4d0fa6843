/* GEMM tuning: the search over CLBlast's parameters (Xgemm, XgemmDirect, and the GemmRoutine
 * switch between them) for clg_tune_run (cl_tune.c). */
#include "cl_tune_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Values the search draws from (GEMMK 0 and KREG 1 only: the other Xgemm kernel suits few GPUs). */
static const size_t xg_vals[NX][6] = {
	[GEMMK] = {0}, [KREG] = {1},          [KWG] = {8, 16, 32},        [KWI] = {1, 2, 4},
	[MDIMA] = {2, 4, 8, 16, 32},          [MDIMC] = {2, 4, 8, 16, 32}, [MWG] = {16, 32, 64, 128},
	[NDIMB] = {2, 4, 8, 16, 32},          [NDIMC] = {2, 4, 8, 16, 32}, [NWG] = {16, 32, 64, 128},
	[SA] = {0, 1}, [SB] = {0, 1}, [STRM] = {0, 1}, [STRN] = {0, 1}, [VWM] = {1, 2, 4, 8}, [VWN] = {1, 2, 4, 8},
};
static const size_t xd_vals[ND][6] = {
	[KWID] = {2, 8, 16},          [MDIMAD] = {2, 4, 8, 16, 32}, [MDIMCD] = {2, 4, 8, 16, 32},
	[NDIMBD] = {2, 4, 8, 16, 32}, [NDIMCD] = {2, 4, 8, 16, 32}, [PADA] = {0, 1},
	[PADB] = {0, 1},              [VWMD] = {1, 2, 4, 8},        [VWND] = {1, 2, 4, 8},
	[WGD] = {8, 16, 32, 64},
};

static int nvals(const size_t *v)
{
	int n = 1;
	while (n < 6 && v[n])
		n++;
	return n;
}

static void random_params(tuner *t, const size_t (*vals)[6], int n, size_t *p,
			  int (*legal)(const size_t *, const dev_limits *))
{
	for (int tries = 0; tries < 20000; tries++) {
		for (int i = 0; i < n; i++)
			p[i] = vals[i][clg_cl_tune_rnd(t, (unsigned)nvals(vals[i]))];
		if (legal(p, &t->L))
			return;
	}
}

/* p with one parameter moved to a neighbouring value, legal; returns 0 when none was found. */
static int mutate_params(tuner *t, const size_t (*vals)[6], int n, const size_t *from, size_t *p,
			 int (*legal)(const size_t *, const dev_limits *))
{
	for (int tries = 0; tries < 500; tries++) {
		int i = (int)clg_cl_tune_rnd(t, (unsigned)n), nv = nvals(vals[i]), j = 0;
		memcpy(p, from, (size_t)n * sizeof(size_t));
		if (nv < 2)
			continue;
		while (j < nv && vals[i][j] != from[i])
			j++;
		j = j == nv ? (int)clg_cl_tune_rnd(t, (unsigned)nv) : clg_cl_tune_rnd(t, 2) ? (j + 1) % nv : (j + nv - 1) % nv;
		p[i] = vals[i][j];
		/* a second parameter now and then, so steps can cross illegal neighbours */
		if (clg_cl_tune_rnd(t, 3) == 0) {
			int i2 = (int)clg_cl_tune_rnd(t, (unsigned)n);
			p[i2] = vals[i2][clg_cl_tune_rnd(t, (unsigned)nvals(vals[i2]))];
		}
		if (legal(p, &t->L) && memcmp(p, from, (size_t)n * sizeof(size_t)))
			return 1;
	}
	return 0;
}

/* Measures CLBlast as currently configured on the non-batched shapes with lo_mnk <= m*n*k <=
 * hi_mnk (the search) or on all; writes
 * each shape's time to *slot (an offset into tshape). Returns the geometric mean of GFLOP/s over
 * the shapes, 0 when a result was wrong or a call failed (*why). */
double clg_cl_tune_clblast_pass(tuner *t, size_t slot, int all, double lo_mnk, double hi_mnk, double hard_stop,
				const char **why)
{
	double gsum = 0;
	int ng = 0;

	*why = NULL;
	for (int i = 0; i < t->n; i++) {
		tshape *x = &t->s[i];
		double *dst = (double *)((char *)x + slot), best = x->t_cb ? x->t_cb : x->t_cb_default, secs;
		double mnk = (double)x->r->m * (double)x->r->n * (double)x->r->k;
		*dst = 0;
		if (!x->usable || (!all && (x->r->batch > 1 || mnk < lo_mnk || mnk > hi_mnk)))
			continue;
		if (clg_cl_tune_elapsed(t) > hard_stop) {
			*why = "over the time budget";
			return 0;
		}
		clg_cl_tune_measure(t, x, CLG_CL_GEMM_CLBLAST, NULL, best > 0 ? 3 * best : 0, &secs, why);
		if (!secs)
			return 0;
		*dst = secs;
		gsum += log(clg_cl_tune_gflops_of(x->r, secs));
		ng++;
	}
	return ng ? exp(gsum / ng) : 0;
}

static const size_t xg_seed_cpu[NX] = {[GEMMK] = 0, [KREG] = 1, [KWG] = 32, [KWI] = 2, [MDIMA] = 8, [MDIMC] = 8,
				       [MWG] = 64,  [NDIMB] = 8, [NDIMC] = 8, [NWG] = 64, [SA] = 0,   [SB] = 0,
				       [STRM] = 0,  [STRN] = 0,  [VWM] = 8,   [VWN] = 8};
static const size_t xg_seed_gpu[NX] = {[GEMMK] = 0, [KREG] = 1, [KWG] = 16,  [KWI] = 2,  [MDIMA] = 16, [MDIMC] = 16,
				       [MWG] = 64,  [NDIMB] = 16, [NDIMC] = 16, [NWG] = 64, [SA] = 1,    [SB] = 1,
				       [STRM] = 1,  [STRN] = 1,   [VWM] = 2,    [VWN] = 2};
static const size_t xd_seed_cpu[ND] = {[KWID] = 2, [MDIMAD] = 8, [MDIMCD] = 8, [NDIMBD] = 8, [NDIMCD] = 8,
				       [PADA] = 1, [PADB] = 1,   [VWMD] = 4,   [VWND] = 4,   [WGD] = 32};
static const size_t xd_seed_gpu[ND] = {[KWID] = 2, [MDIMAD] = 16, [MDIMCD] = 16, [NDIMBD] = 16, [NDIMCD] = 16,
				       [PADA] = 1, [PADB] = 1,    [VWMD] = 2,    [VWND] = 2,    [WGD] = 32};

/* One phase of the CLBlast search (Xgemm, or XgemmDirect), until the given time. */
void clg_cl_tune_search_clblast_kernel(tuner *t, cb_search *cs, double until, double *compile_est)
{
	const int n = cs->direct ? ND : NX;
	const char *const *names = cs->direct ? clg_cl_tune_xd_names : clg_cl_tune_xg_names;
	const size_t(*vals)[6] = cs->direct ? xd_vals : xg_vals;
	int (*legal)(const size_t *, const dev_limits *) = cs->direct ? clg_cl_tune_xd_legal : clg_cl_tune_xg_legal;
	const int cpu = t->be->info.type == CLG_DEV_CPU;
	const size_t *seeds[2] = {cs->direct ? (cpu ? xd_seed_cpu : xd_seed_gpu) : (cpu ? xg_seed_cpu : xg_seed_gpu),
				  cs->direct ? (cpu ? xd_seed_gpu : xd_seed_cpu) : (cpu ? xg_seed_gpu : xg_seed_cpu)};
	/* GemmRoutine: always the kernel under search (m*n*k below the cube: direct) */
	size_t route = cs->direct ? 100000 : 1;
	size_t slot = cs->direct ? offsetof(tshape, t_dir_cand) : offsetof(tshape, t_ind_cand);
	char ps[400];

	cs->touched = 1;
	if (clg_cl_tune_clblast_set(t->be, "GemmRoutine", &clg_cl_tune_gr_name, &route, 1)) {
		clg_cl_tune_say(t, "clblast: cannot set GemmRoutine: %s", clg_last_error());
		return;
	}
	for (int ci = 0;; ci++) {
		size_t p[NX];
		double t_start = clg_cl_tune_elapsed(t), score;
		const char *why = NULL;

		if (t_start + *compile_est > until)
			break;
		if (ci < 2)
			memcpy(p, seeds[ci], (size_t)n * sizeof(size_t));
		else if (cs->have && ci % 2 == 1 && mutate_params(t, vals, n, cs->best, p, legal))
			; /* greedy: a neighbour of the best */
		else
			random_params(t, vals, n, p, legal);
		if (!legal(p, &t->L))
			continue;
		clg_cl_tune_params_str(names, p, n, ps, sizeof(ps));
		t->r->candidates++;
		if (clg_cl_tune_clblast_set(t->be, cs->direct ? "XgemmDirect" : "Xgemm", names, p, n)) {
			t->r->rejected++;
			clg_cl_tune_say(t, "clblast %s %s: rejected (%s)", cs->direct ? "XgemmDirect" : "Xgemm", ps, clg_last_error());
			continue;
		}
		/* XgemmDirect on the shapes it may serve; Xgemm on all but tiny ones (which go direct) */
		score = cs->direct ? clg_cl_tune_clblast_pass(t, slot, 0, 0, 512.0 * 512 * 512, t->budget * 1.2, &why)
				   : clg_cl_tune_clblast_pass(t, slot, 0, 64.0 * 64 * 64, INFINITY, t->budget * 1.2, &why);
		if (score <= 0) {
			t->r->rejected++;
			clg_cl_tune_say(t, "clblast %s %s: rejected (%s)", cs->direct ? "XgemmDirect" : "Xgemm", ps, why ? why : "failed");
			if (clg_cl_tune_elapsed(t) > t->budget * 1.2)
				break;
			continue;
		}
		clg_cl_tune_say(t, "clblast %s %s: %.1f GF/s geomean (%.1f s)%s", cs->direct ? "XgemmDirect" : "Xgemm", ps, score,
		    clg_cl_tune_elapsed(t) - t_start, score > cs->best_score ? " best so far" : "");
		/* the first candidate's time (compile + runs) estimates the next ones' */
		*compile_est = 0.5 * *compile_est + 0.5 * (clg_cl_tune_elapsed(t) - t_start);
		if (score > cs->best_score) {
			cs->best_score = score;
			memcpy(cs->best, p, (size_t)n * sizeof(size_t));
			cs->have = 1;
			for (int i = 0; i < t->n; i++) {
				tshape *x = &t->s[i];
				if (cs->direct)
					x->t_dir = x->t_dir_cand;
				else
					x->t_ind = x->t_ind_cand;
			}
		}
	}
}

/* The GemmRoutine threshold: shapes with m*n*k < T^3 run XgemmDirect. Picks T among the shapes'
 * own sizes so that the sum over shapes of (time of the path T picks / faster path) is least. */
size_t clg_cl_tune_pick_threshold(const tuner *t)
{
	size_t best_t = 1;
	double best_cost = INFINITY;

	for (int c = -1; c <= t->n; c++) {
		size_t T;
		double cost = 0;
		if (c == -1)
			T = 1;
		else if (c == t->n)
			T = 100000;
		else
			T = (size_t)ceil(cbrt((double)t->s[c].r->m * (double)t->s[c].r->n * (double)t->s[c].r->k)) + 1;
		for (int i = 0; i < t->n; i++) {
			const tshape *x = &t->s[i];
			double mnk = (double)x->r->m * (double)x->r->n * (double)x->r->k, ti, td, tb;
			if (x->r->batch > 1 || !x->usable)
				continue;
			ti = x->t_ind > 0 ? x->t_ind : INFINITY;
			td = x->t_dir > 0 ? x->t_dir : INFINITY;
			tb = fmin(ti, td);
			if (!isfinite(tb))
				continue;
			cost += (mnk < (double)T * (double)T * (double)T ? td : ti) / tb;
		}
		if (cost < best_cost) {
			best_cost = cost;
			best_t = T;
		}
	}
	return best_t;
}
