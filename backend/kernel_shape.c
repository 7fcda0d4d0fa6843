/* One choice of kernel shape (CPU or GPU) per device and kernel family, shared by every family
 * that has both shapes: CLGRAD_KERNEL_SHAPE, else a stored measurement, else the device type. */
#include "clg_internal.h"
#include "clg_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const family_names[CLG_KFAM_COUNT] = {"row", "reduce", "fused", "conv", "attention", "gemm"};

const char *clg_kernel_family_name(clg_kernel_family f)
{
	return f >= 0 && f < CLG_KFAM_COUNT ? family_names[f] : "?";
}

const char *clg_kernel_shape_name(clg_kernel_shape s) { return s == CLG_SHAPE_GPU ? "gpu" : "cpu"; }

static int parse_shape(const char *s, size_t n, clg_kernel_shape *out)
{
	if (n == 3 && !strncmp(s, "cpu", 3))
		*out = CLG_SHAPE_CPU;
	else if (n == 3 && !strncmp(s, "gpu", 3))
		*out = CLG_SHAPE_GPU;
	else
		return -1;
	return 0;
}

/* Parses CLGRAD_KERNEL_SHAPE into forced[f] (-1: not forced). "cpu", "gpu", or a comma list of
 * family=shape. Fails with CLG_ERR_INVALID naming the variable and what it accepts. */
static clg_status env_shapes(int forced[CLG_KFAM_COUNT])
{
	const char *env = clg_cfg_str(CLG_CFG_KERNEL_SHAPE), *p;
	clg_kernel_shape s;

	for (int f = 0; f < CLG_KFAM_COUNT; f++)
		forced[f] = -1;
	if (!env || !*env)
		return CLG_OK;
	if (!parse_shape(env, strlen(env), &s)) {
		for (int f = 0; f < CLG_KFAM_COUNT; f++)
			forced[f] = (int)s;
		return CLG_OK;
	}
	for (p = env; *p;) {
		size_t n = strcspn(p, ","), klen = strcspn(p, "=");
		int f;
		if (klen >= n)
			goto bad;
		for (f = 0; f < CLG_KFAM_COUNT; f++)
			if (strlen(family_names[f]) == klen && !strncmp(p, family_names[f], klen))
				break;
		if (f == CLG_KFAM_COUNT || parse_shape(p + klen + 1, n - klen - 1, &s))
			goto bad;
		forced[f] = (int)s;
		p += n + (p[n] == ',');
	}
	return CLG_OK;
bad:
	return clg_fail(CLG_ERR_INVALID,
			"CLGRAD_KERNEL_SHAPE='%s': expected 'cpu', 'gpu' or a list such as 'row=gpu,conv=cpu' "
			"(families: row, reduce, fused, conv, attention, gemm)", env);
}

clg_status clg_kernel_shape_init(clg_backend *be)
{
	int forced[CLG_KFAM_COUNT];
	clg_status st = env_shapes(forced);

	if (st)
		return st;
	for (int f = 0; f < CLG_KFAM_COUNT; f++) {
		if (forced[f] >= 0) {
			be->shape[f] = (clg_kernel_shape)forced[f];
			snprintf(be->shape_why[f], sizeof(be->shape_why[f]), "CLGRAD_KERNEL_SHAPE");
		} else {
			int cpu = be->info.type == CLG_DEV_CPU || be->info.type == CLG_DEV_REF;
			be->shape[f] = cpu ? CLG_SHAPE_CPU : CLG_SHAPE_GPU;
			snprintf(be->shape_why[f], sizeof(be->shape_why[f]), "device type %s",
				 clg_device_type_name(be->info.type));
		}
	}
	return CLG_OK;
}

clg_kernel_shape clg_backend_kernel_shape(const clg_backend *be, clg_kernel_family f, const char **why)
{
	if (f < 0 || f >= CLG_KFAM_COUNT) {
		if (why)
			*why = "unknown family";
		return CLG_SHAPE_CPU;
	}
	if (why)
		*why = be->shape_why[f];
	return be->shape[f];
}

void clg_backend_set_kernel_shape(clg_backend *be, clg_kernel_family f, clg_kernel_shape s, const char *why)
{
	if (f < 0 || f >= CLG_KFAM_COUNT || !strcmp(be->shape_why[f], "CLGRAD_KERNEL_SHAPE"))
		return;
	be->shape[f] = s;
	snprintf(be->shape_why[f], sizeof(be->shape_why[f]), "%s", why ? why : "set");
}
