/* `clgrad tune`'s work-group width of the own CPU GEMM's gemm_op (cl_gemm.c, clg_cl_gemm_op_wg):
 * the tuned shapes that run gemm_op are timed with groups of 1 (the untuned width; timed just
 * before and just after each shape's candidates, the faster kept) and of each candidate width
 * along q, each run checked against the shape's reference result, and the width faster over those
 * shapes together (geometric mean of the per-shape speed-ups, so the CNN's large products do not
 * drown the MLP's) is kept as the `gemmwg` line of the tune file, where it beats 1 by a margin.
 * Mesa's llvmpipe runs a group as one loop over 8-lane SIMD batches, where 1 leaves 7 lanes idle
 * (it kept 16: 4.3x over the MLP's and CNN's products). The tile search after this runs under the
 * width chosen. */
#include "cl_tune_internal.h"

#include <math.h>
#include <stdio.h>

/* a width other than 1 must be this much faster (geometric mean over the shapes) */
#define WG_MARGIN 0.9
/* shapes measured even past the time given */
#define WG_MIN_SHAPES 4

static const int candidates[] = {4, 8, 16, 32};
#define NCAND ((int)(sizeof(candidates) / sizeof(candidates[0])))

/* Seconds of one own-kernel run of shape x at gemm_op width w (0 where it fails or computes wrong:
 * *why says which); abort_over as clg_cl_tune_measure's. */
static double time_at(tuner *t, tshape *x, int w, double abort_over, const char **why)
{
	double s = 0;

	clg_cl_of(t->be)->gemm_wg = w;
	clg_cl_tune_measure(t, x, CLG_CL_GEMM_OWN, &t->def_tile, abort_over, &s, why);
	return s > 0 ? s : 0;
}

void clg_cl_tune_gemm_wg(tuner *t, double until, tune_data *d)
{
	clg_cl *cl = clg_cl_of(t->be);
	double base_ms = 0, best_ms = 0, best_lg = 0, lg[NCAND] = {0}, ms[NCAND] = {0};
	int best = 1, n = 0, ok[NCAND];

	d->gemm_wg = 0;
	if (clg_cfg_int(CLG_CFG_GEMM_WG) > 0) {
		clg_cl_tune_say(t, "gemm_op work-group: forced by CLGRAD_GEMM_WG=%lld, not measured",
				(long long)clg_cfg_int(CLG_CFG_GEMM_WG));
		return;
	}
	if (clg_backend_kernel_shape(t->be, CLG_KFAM_GEMM, NULL) == CLG_SHAPE_GPU) {
		clg_cl_tune_say(t, "gemm_op work-group: the GEMM runs in the gpu shape (gemm_tiles): not measured");
		return;
	}
	for (int c = 0; c < NCAND; c++)
		ok[c] = 1;
	for (int i = 0; i < t->n; i++) {
		tshape *x = &t->s[i];
		double s[NCAND], s1, s1b;
		const char *why = NULL;
		int any = 0;
		if (!x->usable || x->dot || !(x->t_own_def > 0))
			continue;
		/* the first WG_MIN_SHAPES (the MLP's, where the search lists them first) whatever the
		 * budget: on llvmpipe the kernel shapes and the first pass alone can take it */
		if (n >= WG_MIN_SHAPES && clg_cl_tune_elapsed(t) > until) {
			clg_cl_tune_say(t, "gemm_op work-group: budget reached after %d shapes", n);
			break;
		}
		/* a group of one timed just before and just after the candidates, the faster kept: a
		 * shared machine's slow spell then favours no width but the untuned one */
		if (!(s1 = time_at(t, x, 1, 0, &why)))
			continue;
		for (int c = 0; c < NCAND; c++) {
			s[c] = 0;
			if (!ok[c])
				continue;
			/* a candidate 3x slower than a group of one is timed once */
			s[c] = time_at(t, x, candidates[c], 3 * s1, &why);
			if (!s[c]) {
				clg_cl_tune_say(t, "gemm_op work-group %d: %s on %s: not a candidate", candidates[c],
						why ? why : "failed", x->r->label);
				ok[c] = 0;
			}
			any |= ok[c];
		}
		if ((s1b = time_at(t, x, 1, 0, &why)) > 0 && s1b < s1)
			s1 = s1b;
		cl->gemm_wg = 1;
		if (!any)
			break;
		n++;
		base_ms += 1e3 * s1;
		for (int c = 0; c < NCAND; c++)
			if (ok[c]) {
				lg[c] += log(s1 / s[c]);
				ms[c] += 1e3 * s[c];
			}
		clg_cl_tune_say(t, "gemm_op work-group %-18s 1: %.2f ms, 4: %.2f, 8: %.2f, 16: %.2f, 32: %.2f", x->r->label,
				1e3 * s1, 1e3 * s[0], 1e3 * s[1], 1e3 * s[2], 1e3 * s[3]);
	}
	for (int c = 0; c < NCAND && n > 0; c++)
		if (ok[c] && lg[c] > best_lg) {
			best_lg = lg[c];
			best = candidates[c];
			best_ms = ms[c];
		}
	if (n > 0 && best > 1 && exp(-best_lg / n) < WG_MARGIN) {
		d->gemm_wg = best;
		d->gemm_wg_ms[0] = base_ms;
		d->gemm_wg_ms[1] = best_ms;
		/* the shapes' own times under the width kept: the tile search starts from them */
		for (int i = 0; i < t->n; i++) {
			tshape *x = &t->s[i];
			const char *why = NULL;
			double s;
			if (!x->usable || x->dot || !(x->t_own_def > 0))
				continue;
			if ((s = time_at(t, x, best, 0, &why)) > 0) {
				x->t_own = x->t_own_def = s;
				if (t->be->info.type == CLG_DEV_CPU)
					x->t_default = s;
			}
		}
		clg_cl_tune_say(t, "gemm_op work-group: %d work-items kept (%.2fx a group of one over %d shapes)", best,
				exp(best_lg / n), n);
	} else {
		clg_cl_tune_say(t, "gemm_op work-group: 1 kept (%s)", n ? "no width clearly faster" : "no shape measured");
	}
	cl->gemm_wg = d->gemm_wg;
}
