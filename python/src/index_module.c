/* clgrad._C's index ops, seeded random streams and the 1-D / fused conv and norm ops that
 * clgrad_module.c's bindings do not reach (frontend/clgrad_index.h, clgrad_conv.h, clgrad_norm.h,
 * clgrad.h's switches): in a file of their own beside clgrad_module.c's op bindings. */
#include "clgrad_py.h"

#include <string.h>

/* _C.gather(x, dim, idx) and _C.index_select(x, dim, idx): idx int32 */
static PyObject *py_gather(PyObject *self, PyObject *args)
{
	PyObject *a, *i;
	int dim;
	clg_tensor *x, *idx;

	if (!PyArg_ParseTuple(args, "OiO", &a, &dim, &i) || !(x = clgrad_py_tensor(a, "gather(input)")) ||
	    !(idx = clgrad_py_tensor(i, "gather(index)")))
		return NULL;
	return clgrad_py_wrap(clg_gather(x, dim, idx));
}

static PyObject *py_index_select(PyObject *self, PyObject *args)
{
	PyObject *a, *i;
	int dim;
	clg_tensor *x, *idx;

	if (!PyArg_ParseTuple(args, "OiO", &a, &dim, &i) || !(x = clgrad_py_tensor(a, "index_select(input)")) ||
	    !(idx = clgrad_py_tensor(i, "index_select(index)")))
		return NULL;
	return clgrad_py_wrap(clg_index_select(x, dim, idx));
}

/* _C.rng_draw(kind, shape, seed, offset, a, b, dtype, device) -> (tensor, next offset): kind
 * "uniform" in [a, b) or "normal" (mean a, std b), drawn at the stream position (seed, offset) */
static PyObject *py_rng_draw(PyObject *self, PyObject *args)
{
	const char *kind;
	PyObject *shape_obj, *dt_obj, *t;
	unsigned long long seed, offset;
	double a, b;
	int device, nd;
	int64_t shape[CLG_MAX_DIMS];
	clg_dtype dt;
	clg_backend *be;
	clg_rng g;

	if (!PyArg_ParseTuple(args, "sOKKddOi", &kind, &shape_obj, &seed, &offset, &a, &b, &dt_obj, &device) ||
	    !clgrad_py_dtype(dt_obj, &dt) || (nd = clgrad_py_shape(shape_obj, shape, CLG_MAX_DIMS, kind)) < 0 ||
	    !(be = clgrad_py_backend(device)))
		return NULL;
	g = clg_rng_init(seed);
	g.offset = offset;
	t = clgrad_py_wrap(!strcmp(kind, "normal") ? clg_rng_normal(&g, be, dt, nd, shape, a, b)
						   : clg_rng_uniform(&g, be, dt, nd, shape, a, b));
	return t ? Py_BuildValue("(NK)", t, (unsigned long long)g.offset) : NULL;
}

/* _C.dropout_rng(x, p, seed, offset, training) -> (tensor, next offset) */
static PyObject *py_dropout_rng(PyObject *self, PyObject *args)
{
	PyObject *a, *t;
	double p;
	unsigned long long seed, offset;
	int training;
	clg_tensor *x;
	clg_rng g;

	if (!PyArg_ParseTuple(args, "OdKKp", &a, &p, &seed, &offset, &training) || !(x = clgrad_py_tensor(a, "dropout")))
		return NULL;
	g = clg_rng_init(seed);
	g.offset = offset;
	t = clgrad_py_wrap(clg_dropout_rng(x, p, &g, training));
	return t ? Py_BuildValue("(NK)", t, (unsigned long long)g.offset) : NULL;
}

/* _C.conv1d(x, w, b or None, padding, kind): kind "auto" (clg_conv1d: the FFT above the device's
 * crossover), "fft" or "im2col" */
static PyObject *py_conv1d(PyObject *self, PyObject *args)
{
	PyObject *a, *wo, *bo;
	long long pad;
	const char *kind;
	clg_tensor *x, *w, *b = NULL;

	if (!PyArg_ParseTuple(args, "OOOLs", &a, &wo, &bo, &pad, &kind) || !(x = clgrad_py_tensor(a, "conv1d(input)")) ||
	    !(w = clgrad_py_tensor(wo, "conv1d(weight)")) || (bo != Py_None && !(b = clgrad_py_tensor(bo, "conv1d(bias)"))))
		return NULL;
	if (!strcmp(kind, "fft"))
		return clgrad_py_wrap(clg_conv1d_fft(x, w, b, pad));
	if (!strcmp(kind, "im2col"))
		return clgrad_py_wrap(clg_conv1d_im2col(x, w, b, pad));
	if (!strcmp(kind, "auto"))
		return clgrad_py_wrap(clg_conv1d(x, w, b, pad));
	PyErr_Format(PyExc_ValueError, "conv1d: method expected 'auto', 'fft' or 'im2col', got '%s'", kind);
	return NULL;
}

/* _C.conv1d_fft_from(device) -> (kernel size from which conv1d takes the FFT, why) */
static PyObject *py_conv1d_fft_from(PyObject *self, PyObject *args)
{
	int device, k;
	const char *why = "";
	clg_backend *be;

	if (!PyArg_ParseTuple(args, "i", &device) || !(be = clgrad_py_backend(device)))
		return NULL;
	k = clg_conv1d_fft_from(be, &why);
	return Py_BuildValue("(is)", k, why ? why : "");
}

/* _C.conv2d_relu_max_pool2d(x, w, b or None, stride, pad, pool_k, pool_stride, pool_pad) */
static PyObject *py_conv_relu_pool(PyObject *self, PyObject *args)
{
	PyObject *a, *wo, *bo;
	long long s, p, pk, ps, pp;
	clg_tensor *x, *w, *b = NULL;

	if (!PyArg_ParseTuple(args, "OOOLLLLL", &a, &wo, &bo, &s, &p, &pk, &ps, &pp) ||
	    !(x = clgrad_py_tensor(a, "conv2d_relu_max_pool2d(input)")) ||
	    !(w = clgrad_py_tensor(wo, "conv2d_relu_max_pool2d(weight)")) ||
	    (bo != Py_None && !(b = clgrad_py_tensor(bo, "conv2d_relu_max_pool2d(bias)"))))
		return NULL;
	return clgrad_py_wrap(clg_conv2d_relu_max_pool2d(x, w, b, s, p, pk, ps, pp));
}

/* _C.add_layer_norm(x, r, weight or None, bias or None, eps) -> (layer_norm(x + r), x + r) */
static PyObject *py_add_layer_norm(PyObject *self, PyObject *args)
{
	PyObject *a, *ro, *go, *bo, *y;
	double eps;
	clg_tensor *x, *r, *g = NULL, *b = NULL, *sum = NULL;

	if (!PyArg_ParseTuple(args, "OOOOd", &a, &ro, &go, &bo, &eps) || !(x = clgrad_py_tensor(a, "add_layer_norm(input)")) ||
	    !(r = clgrad_py_tensor(ro, "add_layer_norm(residual)")) ||
	    (go != Py_None && !(g = clgrad_py_tensor(go, "add_layer_norm(weight)"))) ||
	    (bo != Py_None && !(b = clgrad_py_tensor(bo, "add_layer_norm(bias)"))))
		return NULL;
	if (!(y = clgrad_py_wrap(clg_add_layer_norm(x, r, g, b, eps, &sum)))) {
		clg_free(sum);
		return NULL;
	}
	return Py_BuildValue("(NN)", y, clgrad_py_wrap(sum));
}

/* _C.set_fused_ops(enabled) -> the previous setting; _C.fused_ops_enabled() */
static PyObject *py_set_fused_ops(PyObject *self, PyObject *args)
{
	int on, was = clg_fused_ops_enabled();

	if (!PyArg_ParseTuple(args, "p", &on))
		return NULL;
	clg_set_fused_ops(on);
	return PyBool_FromLong(was);
}

static PyObject *py_fused_ops_enabled(PyObject *self, PyObject *unused)
{
	return PyBool_FromLong(clg_fused_ops_enabled());
}

/* _C.precompile(device, workload or None, dtype) -> programs made ready */
static PyObject *py_precompile(PyObject *self, PyObject *args)
{
	const char *workload = NULL;
	PyObject *dt_obj;
	int device, n = 0;
	clg_dtype dt;
	clg_backend *be;
	clg_status st;

	if (!PyArg_ParseTuple(args, "izO", &device, &workload, &dt_obj) || !clgrad_py_dtype(dt_obj, &dt) ||
	    !(be = clgrad_py_backend(device)))
		return NULL;
	st = clg_precompile(be, workload, dt, &n);
	return st ? clgrad_py_raise(st) : PyLong_FromLong(n);
}

static PyMethodDef index_methods[] = {
	{"gather", py_gather, METH_VARARGS, "gather(x, dim, idx int32)"},
	{"index_select", py_index_select, METH_VARARGS, "index_select(x, dim, idx 1-D int32)"},
	{"rng_draw", py_rng_draw, METH_VARARGS, "rng_draw(kind, shape, seed, offset, a, b, dtype, device) -> (t, offset)"},
	{"dropout_rng", py_dropout_rng, METH_VARARGS, "dropout_rng(x, p, seed, offset, training) -> (t, offset)"},
	{"conv1d", py_conv1d, METH_VARARGS, "conv1d(x, w, b, padding, 'auto' | 'fft' | 'im2col')"},
	{"conv1d_fft_from", py_conv1d_fft_from, METH_VARARGS, "conv1d_fft_from(device) -> (kernel size, why)"},
	{"conv2d_relu_max_pool2d", py_conv_relu_pool, METH_VARARGS, NULL},
	{"add_layer_norm", py_add_layer_norm, METH_VARARGS, "add_layer_norm(x, r, w, b, eps) -> (y, x + r)"},
	{"set_fused_ops", py_set_fused_ops, METH_VARARGS, "set_fused_ops(on) -> the previous setting"},
	{"fused_ops_enabled", py_fused_ops_enabled, METH_NOARGS, NULL},
	{"precompile", py_precompile, METH_VARARGS, "precompile(device, workload, dtype) -> programs ready"},
	{NULL},
};

int clgrad_py_index_init(PyObject *m) { return PyModule_AddFunctions(m, index_methods); }
