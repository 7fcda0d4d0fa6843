/* GEMM through CLBlast. Each operand is used as stored: a view with unit stride in its last dim is
 * row-major, one with unit stride in its second-last dim is a transposed row-major matrix. */
#include "cl_internal.h"

#include <clblast_c.h>

typedef struct {
	CLBlastTranspose trans;
	size_t ld;
} gemm_layout;

/* rows x cols view -> (transpose flag, leading dimension) for row-major CLBlast, or -1. */
static int layout_of(const clg_view *v, gemm_layout *l)
{
	int nd = v->ndim;
	int64_t rows = v->shape[nd - 2], cols = v->shape[nd - 1];
	int64_t sr = v->stride[nd - 2], sc = v->stride[nd - 1];

	if ((sc == 1 || cols == 1) && (rows == 1 || sr >= cols)) {
		l->trans = CLBlastTransposeNo;
		l->ld = (size_t)(rows == 1 ? (cols > 0 ? cols : 1) : sr);
		return 0;
	}
	if ((sr == 1 || rows == 1) && (cols == 1 || sc >= rows)) {
		l->trans = CLBlastTransposeYes;
		l->ld = (size_t)(cols == 1 ? (rows > 0 ? rows : 1) : sc);
		return 0;
	}
	return -1;
}

clg_status clg_cl_gemm(clg_backend *be, const clg_op_call *c)
{
	const clg_view *A = &c->src[0], *B = &c->src[1], *C = &c->dst;
	int nd = C->ndim;
	size_t M = (size_t)C->shape[nd - 2], N = (size_t)C->shape[nd - 1], K = (size_t)A->shape[nd - 1];
	size_t batch = nd == 3 ? (size_t)C->shape[0] : 1;
	gemm_layout la, lb, lc;
	cl_command_queue q = clg_cl_of(be)->queue;
	CLBlastStatusCode s;
	char sa[64], sb[64], sc[64];

	if (C->dtype != CLG_F32)
		return clg_fail(CLG_ERR_DTYPE, "op 'gemm' on device '%s': dtype %s is not supported (float32 only)",
				be->info.name, clg_dtype_name(C->dtype));
	if (layout_of(A, &la) || layout_of(B, &lb) || layout_of(C, &lc) || lc.trans != CLBlastTransposeNo)
		return clg_fail(CLG_ERR_INVALID,
				"op 'gemm' on device '%s': operands need unit stride in one of their last two dims (dst in its last): A %s, B %s, C %s",
				be->info.name, clg_shape_str(A, sa, sizeof(sa)), clg_shape_str(B, sb, sizeof(sb)),
				clg_shape_str(C, sc, sizeof(sc)));
	if (M == 0 || N == 0 || batch == 0)
		return CLG_OK;
	if (K == 0) { /* C = beta * C */
		clg_op_call sc_call = {.op = CLG_OP_SCALE, .dst = *C, .f = {c->f[1], 0}};
		sc_call.src[0] = *C;
		return clg_run(be, &sc_call);
	}
	if (batch == 1) {
		s = CLBlastSgemm(CLBlastLayoutRowMajor, la.trans, lb.trans, M, N, K, (float)c->f[0],
				 (cl_mem)A->buf->handle, (size_t)A->offset, la.ld,
				 (cl_mem)B->buf->handle, (size_t)B->offset, lb.ld, (float)c->f[1],
				 (cl_mem)C->buf->handle, (size_t)C->offset, lc.ld, &q, NULL);
	} else {
		s = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, la.trans, lb.trans, M, N, K, (float)c->f[0],
					       (cl_mem)A->buf->handle, (size_t)A->offset, la.ld, (size_t)A->stride[0],
					       (cl_mem)B->buf->handle, (size_t)B->offset, lb.ld, (size_t)B->stride[0],
					       (float)c->f[1], (cl_mem)C->buf->handle, (size_t)C->offset, lc.ld,
					       (size_t)C->stride[0], batch, &q, NULL);
	}
	if (s != CLBlastSuccess)
		return clg_cl_fail(be, "gemm", (cl_int)s, "CLBlast SGEMM %zux%zux%zu (batch %zu): A %s, B %s, C %s",
				   M, N, K, batch, clg_shape_str(A, sa, sizeof(sa)), clg_shape_str(B, sb, sizeof(sb)),
				   clg_shape_str(C, sc, sizeof(sc)));
	return CLG_OK;
}
