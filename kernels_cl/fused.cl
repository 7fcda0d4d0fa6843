/* Fused hot-path ops (semantics: backend/clg_ops.def, "fused hot-path ops"): the linear layer's
 * epilogue (bias + activation) and its backward (activation gradient and bias gradient in one
 * pass), softmax cross-entropy forward (loss and each row's logsumexp) and backward.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when either is double.
 * Operands are 2-D (N, C) or 1-D views at any strides, described by fgeom: operand 0 is the dst,
 * 1..4 the sources; a 1-D operand's stride is in rs. Activations: 0 none, 1 relu, 2 gelu. */
#ifdef USE_FP64
#define K(x) x
#else
#define K(x) x##f
#endif

typedef struct {
	int N, C, act;
	int off[5]; /* element offsets of dst, src0..src3 */
	int rs[5];  /* row strides (the only stride of a 1-D operand) */
	int cs[5];  /* column strides */
} fgeom;

#define AT(k, n, j) (g.off[k] + (n) * g.rs[k] + (j) * g.cs[k])
#define AT1(k, n) (g.off[k] + (n) * g.rs[k])

ACC act_(int a, ACC u)
{
	if (a == 1)
		return u > (ACC)0 ? u : (ACC)0;
	if (a == 2)
		return K(0.5) * u * erfc(-u * K(0.70710678118654752440));
	return u;
}

ACC act_grad_(int a, ACC u)
{
	if (a == 1)
		return u > (ACC)0 ? (ACC)1 : (ACC)0;
	if (a == 2)
		return K(0.5) * erfc(-u * K(0.70710678118654752440)) +
		       u * exp(-K(0.5) * u * u) * K(0.39894228040143267794);
	return (ACC)1;
}

/* bias_act and bias_act_backward come twice: NAME guards the range; NAME_x has no guard, for
 * launches whose global size is exactly the work (the host picks it when the work-group size
 * divides it): PoCL then vectorises with plain instead of masked loads and stores, several times
 * faster on AVX2 CPUs. */

/* one work-item per element, i = n * C + j (columns fastest: the bias is read along a row) */
#define BIAS_ACT_BODY                                                                              \
	int n = i / g.C, j = i - n * g.C;                                                          \
	d[AT(0, n, j)] = (T)act_(g.act, (ACC)x[AT(1, n, j)] + (ACC)b[AT1(2, j)]);

__kernel void bias_act(const fgeom g, __global T *d, __global const T *x, __global const T *b)
{
	int i = get_global_id(0);
	if (i >= g.N * g.C)
		return;
	BIAS_ACT_BODY
}

__kernel void bias_act_x(const fgeom g, __global T *d, __global const T *x, __global const T *b)
{
	int i = get_global_id(0);
	BIAS_ACT_BODY
}

/* one work-item per column j: walks the rows, writes dz and sums it into db (beta = p0) */
#define BIAS_ACT_BACKWARD_BODY                                                                     \
	ACC acc = (ACC)0;                                                                          \
	for (int n = 0; n < g.N; n++) {                                                            \
		ACC v = gr[AT(1, n, j)];                                                           \
		if (g.act)                                                                         \
			v *= act_grad_(g.act, t[AT(2, n, j)]);                                     \
		dz[AT(0, n, j)] = (T)v;                                                            \
		acc += v;                                                                          \
	}                                                                                          \
	ACC old = beta != (ACC)0 ? beta * (ACC)db[AT1(3, j)] : (ACC)0;                             \
	db[AT1(3, j)] = (T)(old + acc);

__kernel void bias_act_backward(const fgeom g, __global T *dz, __global const T *gr, __global const T *t,
				__global T *db, const ACC beta)
{
	int j = get_global_id(0);
	if (j >= g.C)
		return;
	BIAS_ACT_BACKWARD_BODY
}

__kernel void bias_act_backward_x(const fgeom g, __global T *dz, __global const T *gr, __global const T *t,
				  __global T *db, const ACC beta)
{
	int j = get_global_id(0);
	BIAS_ACT_BACKWARD_BODY
}

/* GPU shape of bias_act_backward (CLG_KFAM_FUSED = gpu): 2-D work-groups of (TC, TR) work-items,
 * TC = get_local_size(0) columns (adjacent lanes on adjacent columns: coalesced when columns are
 * contiguous) by TR = get_local_size(1), a power of two, rows. Group (cx, b) takes the columns of
 * tile cx and rows [b * rb, (b + 1) * rb), each work-item every TR-th row of them; the TR partial
 * sums of a column are combined in local memory (scratch: TR * TC ACC). With one row block the
 * group writes db itself; otherwise it writes part[b * C + j] and bias_act_backward_sum adds the
 * blocks in order b = 0, 1, ...: the result does not depend on timing. */
__kernel void bias_act_backward_tiles(const fgeom g, __global T *restrict dz, __global const T *restrict gr,
				      __global const T *restrict t, __global T *restrict db, const ACC beta,
				      const int rb, __global ACC *restrict part, __local ACC *scratch)
{
	int lx = get_local_id(0), ly = get_local_id(1), tc = get_local_size(0), tr = get_local_size(1);
	int j = get_global_id(0), b = get_group_id(1), n_end = min(g.N, (b + 1) * rb);
	ACC acc = (ACC)0;

	if (j < g.C)
		for (int n = b * rb + ly; n < n_end; n += tr) {
			ACC v = gr[AT(1, n, j)];
			if (g.act)
				v *= act_grad_(g.act, t[AT(2, n, j)]);
			dz[AT(0, n, j)] = (T)v;
			acc += v;
		}
	scratch[ly * tc + lx] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int k = tr / 2; k > 0; k >>= 1) {
		if (ly < k)
			scratch[ly * tc + lx] += scratch[(ly + k) * tc + lx];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (ly != 0 || j >= g.C)
		return;
	if (get_num_groups(1) > 1) {
		part[b * g.C + j] = scratch[lx];
	} else {
		ACC old = beta != (ACC)0 ? beta * (ACC)db[AT1(3, j)] : (ACC)0;
		db[AT1(3, j)] = (T)(old + scratch[lx]);
	}
}

/* db[j] = beta * db[j] + part[0 * C + j] + part[1 * C + j] + ... (nb row blocks), one work-item a column */
__kernel void bias_act_backward_sum(const fgeom g, __global T *restrict db, const ACC beta, const int nb,
				    __global const ACC *restrict part)
{
	int j = get_global_id(0);
	ACC acc = (ACC)0;

	if (j >= g.C)
		return;
	for (int b = 0; b < nb; b++)
		acc += part[b * g.C + j];
	ACC old = beta != (ACC)0 ? beta * (ACC)db[AT1(3, j)] : (ACC)0;
	db[AT1(3, j)] = (T)(old + acc);
}

/* One work-group (of a power-of-two size) for the whole batch: work-item l takes rows l, l + L, ...,
 * stores each row's logsumexp, and the group adds the rows' losses in a fixed order. */
__kernel void softmax_xent(const fgeom g, __global T *loss, __global const T *x, __global const T *t,
			   __global T *lse, const ACC scale, __local ACC *part)
{
	int l = get_local_id(0), L = get_local_size(0);
	ACC sum = (ACC)0;
	for (int n = l; n < g.N; n += L) {
		ACC m = -INFINITY, s = (ACC)0, ts = (ACC)0, tx = (ACC)0;
		for (int j = 0; j < g.C; j++)
			m = fmax(m, (ACC)x[AT(1, n, j)]);
		for (int j = 0; j < g.C; j++) {
			ACC xv = x[AT(1, n, j)], tv = t[AT(2, n, j)];
			s += exp(xv - m);
			ts += tv;
			tx += tv * xv;
		}
		ACC r = m + log(s);
		lse[AT1(3, n)] = (T)r;
		sum += r * ts - tx;
	}
	part[l] = sum;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int h = L / 2; h > 0; h /= 2) {
		if (l < h)
			part[l] += part[l + h];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (l == 0)
		loss[g.off[0]] = (T)(scale * part[0]);
}

/* one work-item per row: (softmax * sum(t) - t) * scale * g */
__kernel void softmax_xent_backward(const fgeom g, __global T *d, __global const T *x, __global const T *t,
				    __global const T *lse, __global const T *gl, const ACC scale)
{
	int n = get_global_id(0);
	if (n >= g.N)
		return;
	ACC ts = (ACC)0, r = lse[AT1(3, n)], k = scale * (ACC)gl[g.off[4]];
	for (int j = 0; j < g.C; j++)
		ts += (ACC)t[AT(2, n, j)];
	for (int j = 0; j < g.C; j++)
		d[AT(0, n, j)] = (T)(k * (exp((ACC)x[AT(1, n, j)] - r) * ts - (ACC)t[AT(2, n, j)]));
}
