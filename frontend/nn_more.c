/* Modules of the ops issue 31 added for PyTorch users: GroupNorm, RMSNorm, ConvTranspose2d and
 * Upsample. PyTorch's parameter names and defaults. */
#include "fe_internal.h"

#include <stdlib.h>
#include <string.h>

static void free_data(clg_module *m) { free(m->data); }

/* A module with a private copy of size bytes at p as its data. */
static clg_module *with_copy(const clg_module_ops *ops, const void *p, size_t size)
{
	clg_module *m = clg_module_new(ops);
	if (m && !(m->data = malloc(size))) {
		free(m);
		fe_fail(clg_fail(CLG_ERR_OOM, "module '%s': out of host memory", ops->kind));
		return NULL;
	}
	if (m)
		memcpy(m->data, p, size);
	return m;
}

/* A module's tensor by name (NULL when absent: no affine parameters). */
static clg_tensor *tensor_named(clg_module *m, const char *name)
{
	for (int k = 0; k < m->ntensors; k++)
		if (!strcmp(m->tensor_names[k], name))
			return m->tensors[k];
	return NULL;
}

/* ---- GroupNorm, RMSNorm ---- */

typedef struct {
	int64_t groups;
	int ndims;
	double eps;
} norm_data;

static clg_tensor *groupnorm_forward(clg_module *m, clg_tensor *x)
{
	const norm_data *d = m->data;
	return clg_group_norm(x, d->groups, tensor_named(m, "weight"), tensor_named(m, "bias"), d->eps);
}

static clg_tensor *rmsnorm_forward(clg_module *m, clg_tensor *x)
{
	const norm_data *d = m->data;
	return clg_rms_norm(x, d->ndims, tensor_named(m, "weight"), d->eps);
}

static const clg_module_ops groupnorm_ops = {"group_norm", groupnorm_forward, free_data, NULL};
static const clg_module_ops rmsnorm_ops = {"rms_norm", rmsnorm_forward, free_data, NULL};

clg_module *clg_nn_group_norm(clg_backend *be, int64_t groups, int64_t channels, double eps, int affine)
{
	clg_module *m;
	if (groups < 1 || channels < 1 || channels % groups) {
		fe_fail(clg_fail(CLG_ERR_INVALID, "group_norm module: %lld channels do not split into %lld groups",
				 (long long)channels, (long long)groups));
		return NULL;
	}
	m = with_copy(&groupnorm_ops, &(norm_data){.groups = groups, .eps = eps}, sizeof(norm_data));
	if (m && affine &&
	    (clg_module_add_tensor(m, "weight", clg_ones(be, CLG_F32, CLG_SHAPE(channels)), 1) ||
	     clg_module_add_tensor(m, "bias", clg_zeros(be, CLG_F32, CLG_SHAPE(channels)), 1))) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

clg_module *clg_nn_rms_norm(clg_backend *be, int ndims, const int64_t *shape, double eps, int affine)
{
	clg_module *m;
	if (ndims < 1 || ndims > CLG_MAX_DIMS) {
		fe_fail(clg_fail(CLG_ERR_INVALID, "rms_norm module: %d normalised dims (1 to %d)", ndims, CLG_MAX_DIMS));
		return NULL;
	}
	m = with_copy(&rmsnorm_ops, &(norm_data){.ndims = ndims, .eps = eps}, sizeof(norm_data));
	if (m && affine && clg_module_add_tensor(m, "weight", clg_ones(be, CLG_F32, ndims, shape), 1)) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

/* ---- ConvTranspose2d ---- */

typedef struct {
	int64_t stride, pad, out_pad, dil, groups;
} convt_data;

static clg_tensor *convt_forward(clg_module *m, clg_tensor *x)
{
	const convt_data *d = m->data;
	return clg_conv_transpose2d(x, tensor_named(m, "weight"), tensor_named(m, "bias"), d->stride, d->stride, d->pad,
				    d->pad, d->out_pad, d->out_pad, d->dil, d->dil, d->groups);
}

static const clg_module_ops convt_ops = {"conv_transpose2d", convt_forward, free_data, NULL};

clg_module *clg_nn_conv_transpose2d(clg_backend *be, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad,
				    int64_t output_padding, int64_t groups, int64_t dilation, int bias, uint64_t seed)
{
	clg_module *m;
	double bound;
	if (groups < 1 || in < 1 || out < 1 || k < 1 || in % groups || out % groups) {
		fe_fail(clg_fail(CLG_ERR_INVALID, "conv_transpose2d module: %lld and %lld channels do not split into %lld groups (kernel %lld)",
				 (long long)in, (long long)out, (long long)groups, (long long)k));
		return NULL;
	}
	/* PyTorch's fan-in of a transposed weight (in, out / groups, k, k) is its dim 1 times k * k */
	bound = clg_init_bound(CLG_INIT_DEFAULT, out / groups * k * k, in * k * k);
	m = with_copy(&convt_ops,
		      &(convt_data){.stride = stride, .pad = pad, .out_pad = output_padding, .dil = dilation, .groups = groups},
		      sizeof(convt_data));
	if (m && (clg_module_add_tensor(m, "weight", clg_init_uniform(be, CLG_SHAPE(in, out / groups, k, k), bound, seed), 1) ||
		  (bias && clg_module_add_tensor(m, "bias", clg_init_uniform(be, CLG_SHAPE(out), bound, seed + 1), 1)))) {
		clg_module_free(m);
		return NULL;
	}
	return m;
}

/* ---- Upsample ---- */

typedef struct {
	int nsp, has_size, align_corners;
	clg_interp mode;
	int64_t size[2];
	double scale[2];
} upsample_data;

static clg_tensor *upsample_forward(clg_module *m, clg_tensor *x)
{
	const upsample_data *d = m->data;
	if (x && x->v.ndim != d->nsp + 2)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "module 'upsample': made for %d spatial dims, x has %d dims", d->nsp,
					x->v.ndim));
	return clg_interpolate(x, d->has_size ? d->size : NULL, d->has_size ? NULL : d->scale, d->mode, d->align_corners);
}

static const clg_module_ops upsample_ops = {"upsample", upsample_forward, free_data, NULL};

clg_module *clg_nn_upsample(int nsp, const int64_t *size, const double *scale_factor, clg_interp mode, int align_corners)
{
	upsample_data d = {.nsp = nsp, .has_size = size != NULL, .align_corners = align_corners, .mode = mode};
	if (nsp < 1 || nsp > 2 || (!size) == (!scale_factor)) {
		fe_fail(clg_fail(CLG_ERR_INVALID, "upsample module: %d spatial dims (1 or 2) and either a size or a scale factor", nsp));
		return NULL;
	}
	for (int k = 0; k < nsp; k++) {
		if (size)
			d.size[k] = size[k];
		else
			d.scale[k] = scale_factor[k];
	}
	return with_copy(&upsample_ops, &d, sizeof(d));
}
