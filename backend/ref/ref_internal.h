/* Private to the reference backend: op registration and the strided-view helpers its loops share. */
#ifndef CLG_REF_INTERNAL_H
#define CLG_REF_INTERNAL_H
#include "../clg_internal.h"

void clg_ref_register_ops(clg_backend *be);
/* op families, each in ref_ops_<family>.c */
void clg_ref_register_conv(clg_backend *be);
void clg_ref_register_index(clg_backend *be);
void clg_ref_register_norm(clg_backend *be);
void clg_ref_register_optim(clg_backend *be);
void clg_ref_register_fused(clg_backend *be); /* ref_ops_fused.c */
void clg_ref_register_addnorm(clg_backend *be); /* ref_ops_addnorm.c */
void clg_ref_register_quant(clg_backend *be); /* ref_ops_quant.c */
void clg_ref_register_fft(clg_backend *be);   /* ref_ops_fft.c */
void clg_ref_register_attention(clg_backend *be); /* ref_ops_attention.c */
/* ROW ops (softmax family), in ref_ops_row.c. */
clg_status clg_ref_row(clg_backend *be, const clg_op_call *c);
/* Calls fn for every row (the last dim) of the call's operands: v[k] the dst and sources, off[k]
 * the row's first element, cs[k] the element stride within the row, C the row length. */
typedef void (*clg_ref_row_fn)(const clg_op_call *c, const clg_view *const *v, const int64_t *off, const int64_t *cs,
			       int64_t C);
clg_status clg_ref_each_row(const clg_op_call *c, clg_ref_row_fn fn);

/* Element `off` of a view's buffer, widened to double (exactly, float16 included). */
static inline double clg_ref_load(const clg_view *v, int64_t off)
{
	const void *p = v->buf->handle;
	switch (v->dtype) {
	case CLG_F64: return ((const double *)p)[off];
	case CLG_I32: return ((const int32_t *)p)[off];
	case CLG_F16: return clg_half_to_float(((const uint16_t *)p)[off]);
	case CLG_BF16: return clg_bf16_to_float(((const uint16_t *)p)[off]);
	default: return ((const float *)p)[off];
	}
}

/* Stores x rounded to the view's dtype. float16 is rounded as the devices do it: they compute in
 * float32 and round that to half (vstore_half_rte), so x goes to float first, then to half (to
 * nearest even both times). */
static inline void clg_ref_store(const clg_view *v, int64_t off, double x)
{
	void *p = v->buf->handle;
	switch (v->dtype) {
	case CLG_F64: ((double *)p)[off] = x; break;
	case CLG_I32: ((int32_t *)p)[off] = (int32_t)x; break;
	case CLG_F16: ((uint16_t *)p)[off] = clg_float_to_half((float)x); break;
	case CLG_BF16: ((uint16_t *)p)[off] = clg_float_to_bf16((float)x); break;
	default: ((float *)p)[off] = (float)x; break;
	}
}

/* Steps a multi-index over `shape` (ndim dims), keeping each of the nv operands' element offsets
 * in off[]; returns 0 after the last index (idx and off are then back at the start). */
static inline int clg_ref_next_index(int ndim, const int64_t *shape, int64_t *idx, const clg_view *const *v,
				     int nv, int64_t *off)
{
	for (int d = ndim - 1; d >= 0; d--) {
		if (++idx[d] < shape[d]) {
			for (int k = 0; k < nv; k++)
				off[k] += v[k]->stride[d];
			return 1;
		}
		idx[d] = 0;
		for (int k = 0; k < nv; k++)
			off[k] -= v[k]->stride[d] * (shape[d] - 1);
	}
	return 0;
}

#endif
