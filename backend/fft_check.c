/* Operand rules of the FFT ops (clg_ops.def, FFT_* and COMPLEX_MUL). */
#include "clg_fft_internal.h"

#include <math.h>

int clg_fft_radices_ok(int64_t n)
{
	static const int64_t radix[] = {2, 3, 5, 7, 11, 13};
	if (n < 1)
		return 0;
	for (size_t r = 0; r < sizeof(radix) / sizeof(radix[0]); r++)
		while (n % radix[r] == 0)
			n /= radix[r];
	return n == 1;
}

static int same_lead(const clg_view *a, const clg_view *b, int nb)
{
	for (int d = 0; d < nb; d++)
		if (a->shape[d] != b->shape[d])
			return 0;
	return 1;
}

clg_status clg_fft_check(clg_backend *be, const clg_op_call *c, clg_fft_geom *g)
{
	const clg_view *s = &c->src[0], *d = &c->dst;
	const char *op = clg_op_name(c->op);
	char s0[128], s1[128], s2[128];
	clg_fft_geom tmp;
	int ok;

	if (!g)
		g = &tmp;
	if ((d->dtype != CLG_F32 && d->dtype != CLG_F64) || s->dtype != d->dtype)
		return clg_fail(CLG_ERR_DTYPE, "op '%s' on device '%s': operands are %s and %s; FFT ops take float32 or "
				"float64 (complex numbers as (re, im) pairs in a last dim of 2)", op, be->info.name,
				clg_dtype_name(s->dtype), clg_dtype_name(d->dtype));
	if (c->op == CLG_OP_COMPLEX_MUL) {
		const clg_view *b = &c->src[1];
		ok = d->ndim >= 1 && s->ndim == d->ndim && b->ndim == d->ndim && d->shape[d->ndim - 1] == 2 &&
		     same_lead(s, d, d->ndim) && same_lead(b, d, d->ndim);
		if (!ok)
			return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': src0 %s, src1 %s and dst %s must be one "
					"shape (..., 2)", op, be->info.name, clg_shape_str(s, s0, sizeof(s0)),
					clg_shape_str(b, s1, sizeof(s1)), clg_shape_str(d, s2, sizeof(s2)));
		if (c->i[0] != 0 && c->i[0] != 1)
			return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': i[0] (conjugate src1) is %lld, not 0 or 1",
					op, be->info.name, (long long)c->i[0]);
		return CLG_OK;
	}
	if (!isfinite(c->f[0]))
		return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': scale f[0] = %g is not finite", op,
				be->info.name, c->f[0]);
	switch (c->op) {
	case CLG_OP_FFT_C2C:
		g->nb = d->ndim - 2;
		ok = d->ndim >= 2 && s->ndim == d->ndim && same_lead(s, d, d->ndim) && d->shape[d->ndim - 1] == 2;
		g->n = g->bins = ok ? d->shape[d->ndim - 2] : 0;
		if (ok && c->i[0] != 0 && c->i[0] != 1)
			return clg_fail(CLG_ERR_INVALID, "op '%s' on device '%s': i[0] (inverse) is %lld, not 0 or 1", op,
					be->info.name, (long long)c->i[0]);
		break;
	case CLG_OP_FFT_R2C:
		g->nb = s->ndim - 1;
		g->n = s->ndim >= 1 ? s->shape[s->ndim - 1] : 0;
		g->bins = g->n / 2 + 1;
		ok = s->ndim >= 1 && d->ndim == s->ndim + 1 && same_lead(s, d, g->nb) && d->shape[d->ndim - 1] == 2 &&
		     d->shape[d->ndim - 2] == g->bins;
		break;
	case CLG_OP_FFT_C2R:
		g->nb = d->ndim - 1;
		g->n = d->ndim >= 1 ? d->shape[d->ndim - 1] : 0;
		g->bins = g->n / 2 + 1;
		ok = d->ndim >= 1 && s->ndim == d->ndim + 1 && same_lead(s, d, g->nb) && s->shape[s->ndim - 1] == 2 &&
		     s->shape[s->ndim - 2] == g->bins;
		break;
	default:
		ok = 0;
		break;
	}
	if (!ok || g->n < 1)
		return clg_fail(CLG_ERR_SHAPE, "op '%s' on device '%s': src0 %s and dst %s do not fit (%s, length >= 1)",
				op, be->info.name, clg_shape_str(s, s0, sizeof(s0)), clg_shape_str(d, s1, sizeof(s1)),
				c->op == CLG_OP_FFT_C2C ? "(..., N, 2) -> (..., N, 2)"
				: c->op == CLG_OP_FFT_R2C ? "(..., N) -> (..., N/2+1, 2)" : "(..., N/2+1, 2) -> (..., N)");
	g->batch = 1;
	for (int k = 0; k < g->nb; k++)
		g->batch *= d->shape[k];
	return CLG_OK;
}
