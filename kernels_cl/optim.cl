/* Optimizer updates, one work-item per parameter element, in place (see clg_ops.def for the
 * parameters: they mirror torch.optim.SGD and torch.optim.Adam / AdamW).
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when either is double.
 * Every tensor is contiguous and starts at the given element offset. */

/* Each update comes twice: NAME guards i < n; NAME_x has no guard, for launches whose global size
 * is exactly n (the host picks it when the work-group size divides n): without the guard PoCL
 * vectorises with plain instead of masked loads and stores. */

#define SGD_ARGS                                                                                   \
	const int n, __global T *p, const int op, __global const T *g, const int og, __global T *buf, \
		const int ob, const ACC lr, const ACC momentum, const ACC wd, const ACC dampening,   \
		const int nesterov, const int first

#define SGD_BODY(i)                                                                                \
	ACC x = p[op + i];                                                                         \
	ACC d = (ACC)g[og + i] + wd * x;                                                           \
	if (momentum != (ACC)0) {                                                                  \
		ACC b = first ? d : momentum * (ACC)buf[ob + i] + ((ACC)1 - dampening) * d;      \
		buf[ob + i] = (T)b;                                                                \
		d = nesterov ? d + momentum * b : b;                                               \
	}                                                                                          \
	p[op + i] = (T)(x - lr * d);

#if CLG_WANT(sgd_step)
__kernel void sgd_step(SGD_ARGS)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	SGD_BODY(i)
}
#endif

#if CLG_WANT(sgd_step_x)
__kernel void sgd_step_x(SGD_ARGS)
{
	int i = get_global_id(0);
	SGD_BODY(i)
}
#endif

/* omb1, omb2: 1 - beta1 and 1 - beta2, taken by the host in double and rounded once (1 - beta2
 * from an already rounded float beta2 = 0.9999 is 1.66e-4 too large); bc1, bc2 the host's bias
 * corrections 1 - beta^t */
#define ADAM_ARGS                                                                                  \
	const int n, __global T *p, const int op, __global const T *g, const int og, __global T *m,   \
		const int om, __global T *v, const int ov, __global T *vmax, const int ovm,          \
		const ACC lr, const ACC beta1, const ACC beta2, const ACC eps, const ACC wd,         \
		const ACC bc1, const ACC bc2, const ACC omb1, const ACC omb2, const int decoupled,   \
		const int amsgrad

#define ADAM_BODY(i)                                                                               \
	ACC x = p[op + i];                                                                         \
	ACC d = g[og + i];                                                                         \
	if (decoupled)                                                                             \
		x *= (ACC)1 - lr * wd;                                                             \
	else                                                                                       \
		d += wd * x;                                                                       \
	ACC m1 = beta1 * (ACC)m[om + i] + omb1 * d;                                                \
	ACC v1 = beta2 * (ACC)v[ov + i] + omb2 * d * d;                                            \
	m[om + i] = (T)m1;                                                                         \
	v[ov + i] = (T)v1;                                                                         \
	if (amsgrad) { /* the largest second moment so far (vmax may be v itself: then unused) */  \
		v1 = fmax((ACC)vmax[ovm + i], v1);                                                  \
		vmax[ovm + i] = (T)v1;                                                             \
	}                                                                                          \
	p[op + i] = (T)(x - lr * (m1 / bc1) / (sqrt(v1 / bc2) + eps));

#if CLG_WANT(adam_step)
__kernel void adam_step(ADAM_ARGS)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	ADAM_BODY(i)
}
#endif

#if CLG_WANT(adam_step_x)
__kernel void adam_step_x(ADAM_ARGS)
{
	int i = get_global_id(0);
	ADAM_BODY(i)
}
#endif
