/* CLBlast's switch between its two GEMM paths (the GemmRoutine parameter
 * XGEMM_MIN_INDIRECT_SIZE, T: m*n*k < T^3 runs the XgemmDirect kernel, larger products the
 * indirect path, Xgemm on padded copies). CLBlast 1.5 can set it (CLBlastOverrideParameters)
 * but not say what it is, so the value in force is found by asking CLBlastSGemmTempBufferSize,
 * which reads the same setting: an operand at offset 1 needs a scratch copy on the indirect path
 * only, so the scratch size is 0 exactly when m*n*k < T^3. */
#include "cl_tune.h"

#include <clblast_c.h>
#include <stdlib.h>

#define T_MAX 100000 /* above any real threshold; T_MAX^3 still fits in size_t */

static CLBlastPrecision precision_of(clg_dtype t)
{
	return t == CLG_F64 ? CLBlastPrecisionDouble : CLBlastPrecisionSingle;
}

/* Whether an m x 1 x 1 GEMM (m = x^3) takes the indirect path. */
static int indirect_at(clg_backend *be, clg_dtype t, size_t x, CLBlastStatusCode *s)
{
	cl_command_queue q = clg_cl_of(be)->queue;
	size_t m = x * x * x, need = 0;

	*s = t == CLG_F64 ? CLBlastDGemmTempBufferSize(CLBlastLayoutColMajor, CLBlastTransposeNo, CLBlastTransposeNo, m, 1,
						       1, 1, m + 1, 0, 1, 0, m, &q, &need)
			  : CLBlastSGemmTempBufferSize(CLBlastLayoutColMajor, CLBlastTransposeNo, CLBlastTransposeNo, m, 1,
						       1, 1, m + 1, 0, 1, 0, m, &q, &need);
	return need > 0;
}

clg_status clg_cl_clblast_min_indirect(clg_backend *be, clg_dtype t, size_t *out)
{
	CLBlastStatusCode s = CLBlastSuccess;
	size_t lo = 1, hi = T_MAX;

	/* the least T with T^3 on the indirect path (1: every product is) */
	if (!indirect_at(be, t, hi, &s)) {
		if (s != CLBlastSuccess)
			return clg_cl_fail(be, "gemm", (cl_int)s, "CLBlastGemmTempBufferSize");
		*out = T_MAX;
		return CLG_OK;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (indirect_at(be, t, mid, &s))
			hi = mid;
		else if (s != CLBlastSuccess)
			return clg_cl_fail(be, "gemm", (cl_int)s, "CLBlastGemmTempBufferSize");
		else
			lo = mid + 1;
	}
	*out = lo;
	return CLG_OK;
}

clg_status clg_cl_clblast_set_min_indirect(clg_backend *be, clg_dtype t, size_t T)
{
	const char *name = "XGEMM_MIN_INDIRECT_SIZE";
	CLBlastStatusCode s = CLBlastOverrideParameters(clg_cl_of(be)->device, "GemmRoutine", precision_of(t), 1, &name, &T);

	if (s != CLBlastSuccess)
		return clg_cl_fail(be, "gemm", (cl_int)s, "CLBlastOverrideParameters(GemmRoutine %s=%zu, %s)", name, T,
				   clg_dtype_name(t));
	return CLG_OK;
}

clg_status clg_cl_clblast_env_min_indirect(clg_backend *be)
{
	unsigned long long v = (unsigned long long)clg_cfg_int(CLG_CFG_GEMM_MIN_INDIRECT);
	clg_status st;

	if (clg_cl_of(be)->gemm_env_applied || !v)
		return CLG_OK;
	if ((st = clg_cl_clblast_set_min_indirect(be, CLG_F32, (size_t)v)) ||
	    (st = clg_cl_clblast_set_min_indirect(be, CLG_F64, (size_t)v)))
		return st;
	clg_cl_of(be)->gemm_env_applied = 1;
	return CLG_OK;
}
