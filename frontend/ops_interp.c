/* interpolate / Upsample as torch.nn.functional.interpolate, modes nearest and (bi)linear, composed
 * one spatial axis after the other from index_select (a gather of whole rows: O(output) work, its
 * backward an index_add) and, for linear, two gathers blended by per-position weights. The source
 * positions follow PyTorch: nearest floor(dst * scale); linear (dst + 0.5) * scale - 0.5 clamped at
 * 0 (align_corners false) or dst * (in - 1) / (out - 1) (true), scale = in / out, or 1 / the scale
 * factor where one is given (and align_corners is false). */
#include "fe_internal.h"

#include <math.h>
#include <stdlib.h>

/* PyTorch's source scale of one axis: in / out, or 1 / scale factor where given (sf > 0) */
static double axis_scale(int64_t in, int64_t out, double sf, int align_corners)
{
	if (align_corners)
		return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
	return sf > 0 ? 1.0 / sf : (double)in / (double)out;
}

/* x interpolated along dim from in to out positions; NULL on failure */
static clg_tensor *interp_axis(clg_tensor *x, int dim, int64_t out, double sf, clg_interp mode, int align_corners)
{
	clg_backend *be = x->v.buf->backend;
	int64_t in = x->v.shape[dim];
	double scale = axis_scale(in, out, sf, align_corners);
	int32_t *i0 = malloc(sizeof(int32_t) * (size_t)out), *i1 = malloc(sizeof(int32_t) * (size_t)out);
	double *w1 = malloc(sizeof(double) * (size_t)out);
	clg_tensor *t0 = NULL, *t1 = NULL, *g0 = NULL, *g1 = NULL, *wa = NULL, *wb = NULL, *a = NULL, *b = NULL, *y = NULL;

	if (!i0 || !i1 || !w1) {
		fe_fail(clg_fail(CLG_ERR_OOM, "op 'interpolate': out of host memory"));
		goto done;
	}
	for (int64_t o = 0; o < out; o++) {
		if (mode == CLG_INTERP_NEAREST) {
			int64_t s = (int64_t)floor((double)o * scale);
			i0[o] = (int32_t)(s < in - 1 ? s : in - 1);
			continue;
		}
		double src = align_corners ? (double)o * scale : ((double)o + 0.5) * scale - 0.5;
		if (src < 0)
			src = 0;
		int64_t s = (int64_t)src;
		if (s > in - 1)
			s = in - 1;
		i0[o] = (int32_t)s;
		i1[o] = (int32_t)(s < in - 1 ? s + 1 : s);
		w1[o] = src - (double)s;
	}
	t0 = clg_from_host(be, CLG_I32, CLG_SHAPE(out), i0);
	g0 = t0 ? clg_index_select(x, dim, t0) : NULL;
	if (mode == CLG_INTERP_NEAREST || !g0) {
		y = g0;
		g0 = NULL;
		goto done;
	}
	{
		/* weights (out) along dim, broadcast over the dims after it: (out, 1, ...) */
		int nd = x->v.ndim, k = 0;
		int64_t wsh[CLG_MAX_DIMS];
		double *w0 = malloc(sizeof(double) * (size_t)out);
		float *f0 = malloc(sizeof(float) * (size_t)out), *f1 = malloc(sizeof(float) * (size_t)out);
		if (w0 && f0 && f1) {
			for (int64_t o = 0; o < out; o++) {
				w0[o] = 1.0 - w1[o];
				f0[o] = (float)w0[o], f1[o] = (float)w1[o];
			}
			wsh[k++] = out;
			for (int d = dim + 1; d < nd; d++)
				wsh[k++] = 1;
			if (x->v.dtype == CLG_F64) {
				wa = clg_from_host(be, CLG_F64, k, wsh, w0);
				wb = clg_from_host(be, CLG_F64, k, wsh, w1);
			} else {
				wa = clg_from_host(be, CLG_F32, k, wsh, f0);
				wb = clg_from_host(be, CLG_F32, k, wsh, f1);
			}
		} else {
			fe_fail(clg_fail(CLG_ERR_OOM, "op 'interpolate': out of host memory"));
		}
		free(w0);
		free(f0);
		free(f1);
	}
	t1 = wa && wb ? clg_from_host(be, CLG_I32, CLG_SHAPE(out), i1) : NULL;
	g1 = t1 ? clg_index_select(x, dim, t1) : NULL;
	a = g1 ? clg_mul(g0, wa) : NULL;
	b = a ? clg_mul(g1, wb) : NULL;
	y = b ? clg_add(a, b) : NULL;
done:
	free(i0);
	free(i1);
	free(w1);
	clg_free(t0);
	clg_free(t1);
	clg_free(g0);
	clg_free(g1);
	clg_free(wa);
	clg_free(wb);
	clg_free(a);
	clg_free(b);
	return y;
}

clg_tensor *clg_interpolate(clg_tensor *x, const int64_t *size, const double *scale_factor, clg_interp mode,
			    int align_corners)
{
	clg_tensor *y, *t;
	int ns;
	char s0[96];

	if (!fe_check_inputs("interpolate", 1, &x))
		return NULL;
	ns = x->v.ndim - 2;
	if (ns < 1 || ns > 2)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "op 'interpolate' on device '%s': x %s must be (N, C, L) or (N, C, H, W)",
					x->v.buf->backend->info.name, clg_shape_str(&x->v, s0, sizeof(s0))));
	if ((!size) == (!scale_factor))
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'interpolate' on device '%s': give either a size or a scale factor",
					x->v.buf->backend->info.name));
	if (mode != CLG_INTERP_NEAREST && mode != CLG_INTERP_LINEAR)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'interpolate': unknown mode %d (nearest, linear)", (int)mode));
	if (mode == CLG_INTERP_NEAREST && align_corners)
		return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'interpolate' on device '%s': align_corners applies to the linear modes only",
					x->v.buf->backend->info.name));
	if (x->v.dtype != CLG_F32 && x->v.dtype != CLG_F64)
		return fe_fail(clg_fail(CLG_ERR_DTYPE, "op 'interpolate' on device '%s': x is %s (float32 or float64)",
					x->v.buf->backend->info.name, clg_dtype_name(x->v.dtype)));
	y = fe_alias(x);
	for (int k = 0; k < ns && y; k++) {
		int64_t in = x->v.shape[2 + k];
		double sf = scale_factor ? scale_factor[k] : 0;
		int64_t out = size ? size[k] : (int64_t)floor((double)in * sf);
		if (!(sf >= 0) || out < 1 || out > INT32_MAX || in < 1) {
			clg_free(y);
			return fe_fail(clg_fail(CLG_ERR_INVALID, "op 'interpolate' on device '%s': x %s to size %lld along dim %d (scale factor %g): sizes must be at least 1",
						x->v.buf->backend->info.name, clg_shape_str(&x->v, s0, sizeof(s0)), (long long)out,
						2 + k, sf));
		}
		t = interp_axis(y, 2 + k, out, sf, mode, align_corners);
		clg_free(y);
		y = t;
	}
	return y;
}
