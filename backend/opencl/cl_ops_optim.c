/* OpenCL launchers of the fused optimizer updates (kernels_cl/optim.cl): one launch per call, over
 * one parameter or, from frontend/optim.c, over the arena that holds all of them (on a GPU each
 * launch costs ~5 us and small parameters leave most compute units idle). */
#include "cl_internal.h"

#include <stdio.h>

/* Scalar kernel arguments in the compute type of the program (float or double): the call's f[0..7],
 * then for ADAM_STEP 1 - beta1 and 1 - beta2 (taken in double from the call's f[1], f[2]). */
typedef struct {
	int f64;
	float f[10];
	double d[10];
} scalars;

static const void *scalar(const scalars *s, int k) { return s->f64 ? (const void *)&s->d[k] : (const void *)&s->f[k]; }

/* One launch of the update over elements [start, start + n) of every operand: NAME_x (no guard)
 * when the groups cover n exactly, else NAME. */
static clg_status optim_launch(clg_backend *be, const clg_op_call *c, const char *opts, const scalars *sc,
			       const cl_mem *mem, const cl_int *off, const cl_int *flags, cl_int start, cl_int n,
			       size_t local)
{
	int adam = c->op == CLG_OP_ADAM_STEP, exact = (size_t)n % local == 0;
	cl_int o[5];
	char kname[32];
	cl_kernel k;
	clg_status st;

	for (int j = 0; j < (adam ? 5 : 3); j++)
		o[j] = off[j] + start;
	snprintf(kname, sizeof(kname), "%s%s", adam ? "adam_step" : "sgd_step", exact ? "_x" : "");
	if ((st = clg_cl_kernel(be, "optim", opts, kname, &k)))
		return st;
	/* a power of two dividing the last: still exact */
	local = clg_cl_spread(be, (size_t)n, clg_cl_local_size(be, k, local));
	{
		size_t ps = sc->f64 ? sizeof(double) : sizeof(float), is = sizeof(cl_int), ms = sizeof(cl_mem);
		if (adam) {
			size_t sizes[] = {is, ms, is, ms, is, ms, is, ms, is, ms, is, ps, ps, ps, ps, ps, ps, ps, ps, ps, is, is};
			const void *vals[] = {&n, &mem[0], &o[0], &mem[1], &o[1], &mem[2], &o[2], &mem[3], &o[3], &mem[4],
					      &o[4], scalar(sc, 0), scalar(sc, 1), scalar(sc, 2), scalar(sc, 3), scalar(sc, 4),
					      scalar(sc, 5), scalar(sc, 6), scalar(sc, 8), scalar(sc, 9), &flags[0], &flags[1]};
			st = clg_cl_set_args(be, k, "adam_step", 22, sizes, vals);
		} else {
			size_t sizes[] = {is, ms, is, ms, is, ms, is, ps, ps, ps, ps, is, is};
			const void *vals[] = {&n, &mem[0], &o[0], &mem[1], &o[1], &mem[2], &o[2], scalar(sc, 0),
					      scalar(sc, 1), scalar(sc, 2), scalar(sc, 3), &flags[0], &flags[1]};
			st = clg_cl_set_args(be, k, "sgd_step", 13, sizes, vals);
		}
	}
	if (st)
		return st;
	return clg_cl_launch_1d(be, k, (size_t)n, local, clg_op_name(c->op));
}

static clg_status optim_run(clg_backend *be, const clg_op_call *c)
{
	int adam = c->op == CLG_OP_ADAM_STEP, nsrc = adam ? 4 : 2;
	cl_int n = (cl_int)clg_view_numel(&c->dst), off[5], flags[2] = {(cl_int)c->i[0], (cl_int)c->i[1]}, bulk;
	int cpu;
	cl_mem mem[5];
	scalars sc = {.f64 = c->dst.dtype == CLG_F64};
	char opts[256];
	size_t local = clg_cl_of(be)->wg_size;
	clg_status st = clg_cl_check_dtype(be, c, c->dst.dtype);

	for (int j = 0; !st && j <= nsrc; j++) {
		const clg_view *v = j ? &c->src[j - 1] : &c->dst;
		st = clg_cl_check_int_range(be, c, v);
		mem[j] = (cl_mem)v->buf->handle;
		off[j] = (cl_int)v->offset;
	}
	if (st || n == 0)
		return st;
	for (int j = 0; j < 8; j++) {
		sc.f[j] = (float)c->f[j];
		sc.d[j] = c->f[j];
	}
	/* (1 - beta) in double, rounded once: the kernel taking it from the rounded float beta2 =
	 * 0.9999 got it 1.66e-4 too large and shrank Adam's early steps by 8.3e-5 (the bias
	 * corrections f[5], f[6] arrive in double already) */
	for (int j = 0; j < 2; j++) {
		sc.d[8 + j] = 1 - c->f[1 + j];
		sc.f[8 + j] = (float)sc.d[8 + j];
	}
	clg_cl_dtype_options(be, c->dst.dtype, opts, sizeof(opts));
	/* CPU shape: the whole groups through the unguarded kernel and the rest (fewer than a group)
	 * through the guarded one: over the optimizer's arena of all parameters (n rarely a multiple of
	 * the group) PoCL's masked vector accesses made the single guarded launch about twice as slow.
	 * GPU shape: one launch (a guard costs a GPU nothing; a second launch of one group does). */
	cpu = clg_backend_kernel_shape(be, CLG_KFAM_FUSED, NULL) == CLG_SHAPE_CPU;
	bulk = cpu ? (cl_int)((size_t)n / local * local) : 0;
	st = bulk ? optim_launch(be, c, opts, &sc, mem, off, flags, 0, bulk, local) : CLG_OK;
	if (!st && bulk < n)
		st = optim_launch(be, c, opts, &sc, mem, off, flags, bulk, n - bulk, local);
	return st;
}

void clg_cl_register_optim(clg_backend *be)
{
	be->ops[CLG_OP_SGD_STEP] = optim_run;
	be->ops[CLG_OP_ADAM_STEP] = optim_run;
}
