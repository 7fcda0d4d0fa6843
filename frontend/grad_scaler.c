/* Dynamic loss scaling (clgrad_train.h), the rules of PyTorch's GradScaler: the loss is multiplied
 * by the scale before backward so that small float16 gradients do not flush to zero; before the
 * step the gradients are checked for inf/NaN on their devices and divided by the scale. A step
 * with a non-finite gradient is skipped and the scale multiplied by backoff; after `interval`
 * good steps in a row it is multiplied by growth. */
#include "clgrad_train.h"

#include <math.h>

void clg_grad_scaler_init(clg_grad_scaler *s, double initial_scale)
{
	*s = (clg_grad_scaler){.scale = initial_scale > 0 ? initial_scale : 65536.0, .growth = 2.0, .backoff = 0.5,
			       .interval = 2000};
}

/* Whether any gradient holds inf or NaN: sum(g * 0) is NaN exactly then. One read per call, and
 * none of the gradients leaves its device. */
static clg_status any_non_finite(clg_tensor *const *params, int n, int *bad)
{
	clg_tensor *acc = NULL;
	double v = 0;
	clg_status st = CLG_OK;

	clg_scope_begin();
	for (int i = 0; !st && i < n; i++) {
		clg_tensor *g = clg_grad(params[i]);
		if (!g)
			continue;
		clg_tensor *s = clg_sum(clg_affine(g, 0.0, 0.0), 0, NULL, 0);
		acc = acc ? clg_add(acc, s) : s;
		if (!acc)
			st = clg_last_status();
	}
	if (!st && acc)
		st = clg_item(acc, &v);
	clg_scope_end();
	*bad = isnan(v);
	return st;
}

clg_status clg_grad_scaler_unscale(clg_grad_scaler *s, clg_tensor *const *params, int n, int *ok)
{
	int bad = 0;
	clg_status st = any_non_finite(params, n, &bad);

	*ok = 0;
	if (st)
		return st;
	if (bad) {
		s->scale *= s->backoff;
		s->good = 0;
		s->skipped++;
		return CLG_OK;
	}
	clg_scope_begin();
	for (int i = 0; !st && i < n; i++) {
		clg_tensor *g = clg_grad(params[i]);
		if (g)
			st = clg_assign(g, clg_affine(g, 1.0 / s->scale, 0.0));
	}
	clg_scope_end();
	if (st)
		return st;
	*ok = 1;
	if (++s->good >= s->interval) {
		s->scale *= s->growth;
		s->good = 0;
	}
	return CLG_OK;
}
