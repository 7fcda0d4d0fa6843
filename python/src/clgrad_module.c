/* clgrad._C: the CPython extension over the C library. It owns clgrad.Tensor (a reference to one
 * clg_tensor), the optimizer type and the device table, and turns every C status into an exception
 * carrying the library's message. Everything naturally Python (operators with scalars, indexing,
 * nn.Module, parameter groups, data loaders) lives in the package's .py files, over these calls. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <clgrad.h>
#include <clgrad_train.h>
#include <clgrad_data.h>
#include <clgrad_safetensors.h>
#include <clgrad_compare.h>
#include <clg_op_timer.h>

#include "clgrad_py.h"

#include <string.h>

#define MAX_DEVICES 64

typedef struct {
	PyObject_HEAD
	clg_tensor *t;
} TensorObject;

typedef struct {
	PyObject_HEAD
	clg_optimizer *opt;
	PyObject *params; /* the Tensors it steps: kept alive with it */
} OptimObject;

static PyTypeObject TensorType, OptimType;
/* The class new tensors are made of: clgrad.Tensor (a Python subclass that adds the operators),
 * registered by the package at import (_set_tensor_class). */
static PyTypeObject *tensor_class = &TensorType;
static PyObject *Error, *ShapeError, *DTypeError, *DeviceError, *OOMError, *UnsupportedError, *FormatError,
	*StateError, *BuildError, *IOErrorC;
static clg_backend *backends[MAX_DEVICES];

/* ---- errors ------------------------------------------------------------------------------- */

static PyObject *exception_of(clg_status s)
{
	switch (s) {
	case CLG_ERR_SHAPE: return ShapeError;
	case CLG_ERR_DTYPE: return DTypeError;
	case CLG_ERR_DEVICE: return DeviceError;
	case CLG_ERR_OOM: return OOMError;
	case CLG_ERR_UNSUPPORTED: return UnsupportedError;
	case CLG_ERR_FORMAT: return FormatError;
	case CLG_ERR_STATE: return StateError;
	case CLG_ERR_BUILD: return BuildError;
	case CLG_ERR_IO: return IOErrorC;
	case CLG_ERR_INVALID: return PyExc_ValueError;
	default: return Error;
	}
}

/* Raises the exception of status s with the library's message; returns NULL. */
static PyObject *raise_status(clg_status s)
{
	const char *msg = clg_last_error();
	PyErr_SetString(exception_of(s), msg && *msg ? msg : clg_status_name(s));
	return NULL;
}

/* ---- devices ------------------------------------------------------------------------------ */

/* The open backend of device index (opened at first use, kept until exit), or NULL with an
 * exception set. */
static clg_backend *backend_of(int index)
{
	clg_status st;

	if (index < 0 || index >= MAX_DEVICES) {
		PyErr_Format(DeviceError, "device %d: no such device", index);
		return NULL;
	}
	if (!backends[index]) {
		Py_BEGIN_ALLOW_THREADS
		st = clg_backend_open(index, &backends[index]);
		Py_END_ALLOW_THREADS
		if (st)
			return (clg_backend *)raise_status(st);
	}
	return backends[index];
}

static int index_of(clg_backend *be)
{
	for (int i = 0; i < MAX_DEVICES; i++)
		if (backends[i] == be)
			return i;
	return -1;
}

static PyObject *py_devices(PyObject *self, PyObject *args)
{
	const clg_device_info *list;
	int n;
	clg_status st = clg_devices(&list, &n);
	PyObject *out;

	if (st)
		return raise_status(st);
	if (!(out = PyList_New(n)))
		return NULL;
	for (int i = 0; i < n; i++) {
		const clg_device_info *d = &list[i];
		PyObject *o = Py_BuildValue(
			"{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:K,s:K,s:K,s:O,s:O,s:O,s:O,s:s}", "index", d->index, "type",
			clg_device_type_name(d->type), "platform", d->platform, "platform_vendor", d->platform_vendor,
			"vendor", d->vendor, "name", d->name, "version", d->cl_version, "driver", d->driver_version,
			"compute_units", d->compute_units, "global_mem", (unsigned long long)d->global_mem, "local_mem",
			(unsigned long long)d->local_mem, "max_alloc", (unsigned long long)d->max_alloc, "fp16",
			d->has_fp16 ? Py_True : Py_False, "fp64", d->has_fp64 ? Py_True : Py_False, "subgroups",
			d->has_subgroups ? Py_True : Py_False, "simulator",
			clg_device_is_simulator(d) ? Py_True : Py_False, "crashed", d->crashed);
		if (!o) {
			Py_DECREF(out);
			return NULL;
		}
		PyList_SET_ITEM(out, i, o);
	}
	return out;
}

static PyObject *py_select_device(PyObject *self, PyObject *args)
{
	const char *spec = NULL;
	int index;
	clg_status st;

	if (!PyArg_ParseTuple(args, "|z", &spec))
		return NULL;
	if ((st = clg_device_select(spec, &index)))
		return raise_status(st);
	return PyLong_FromLong(index);
}

static PyObject *py_memory_stats(PyObject *self, PyObject *args)
{
	int index;
	clg_backend *be;
	clg_stats s;

	if (!PyArg_ParseTuple(args, "i", &index) || !(be = backend_of(index)))
		return NULL;
	clg_backend_stats(be, &s);
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "bytes_in_use", (unsigned long long)s.bytes_in_use,
			     "bytes_peak", (unsigned long long)s.bytes_peak, "bytes_cached",
			     (unsigned long long)s.bytes_cached, "n_alloc", (unsigned long long)s.n_alloc, "n_build",
			     (unsigned long long)s.n_build, "n_launch", (unsigned long long)s.n_launch, "n_upload",
			     (unsigned long long)s.n_upload, "n_download", (unsigned long long)s.n_download);
}

/* The per-op timer of `clgrad train --profile` (clg_op_timer.h) on a device, for
 * clgrad.profile_ops(): while set, every op waits for the device before and after it. */
static clg_op_timer op_timers[MAX_DEVICES];

static PyObject *py_op_timer_start(PyObject *self, PyObject *args)
{
	int index;
	clg_backend *be;

	if (!PyArg_ParseTuple(args, "i", &index) || !(be = backend_of(index)))
		return NULL;
	clg_op_timer_clear(&op_timers[index]);
	clg_backend_set_op_timer(be, &op_timers[index]);
	Py_RETURN_NONE;
}

/* _C.op_timer_stop(index): [(op, calls, seconds)], longest first; the timer taken off the device */
static PyObject *py_op_timer_stop(PyObject *self, PyObject *args)
{
	int index;
	clg_backend *be;
	clg_op_timer *t;
	PyObject *rows;

	if (!PyArg_ParseTuple(args, "i", &index) || !(be = backend_of(index)))
		return NULL;
	t = &op_timers[index];
	clg_backend_set_op_timer(be, NULL);
	clg_op_timer_sort(t);
	if (!(rows = PyList_New(t->n)))
		goto out;
	for (int i = 0; i < t->n; i++) {
		PyObject *r = Py_BuildValue("(sLd)", t->e[i].key, (long long)t->e[i].calls, t->e[i].seconds);
		if (!r) {
			Py_CLEAR(rows);
			goto out;
		}
		PyList_SET_ITEM(rows, i, r);
	}
out:
	clg_op_timer_clear(t);
	return rows;
}

static PyObject *py_synchronize(PyObject *self, PyObject *args)
{
	int index;
	clg_backend *be;
	clg_status st;

	if (!PyArg_ParseTuple(args, "i", &index) || !(be = backend_of(index)))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_synchronize(be);
	Py_END_ALLOW_THREADS
	if (st)
		return raise_status(st);
	Py_RETURN_NONE;
}

/* ---- configuration ------------------------------------------------------------------------ */

static PyObject *py_config_set(PyObject *self, PyObject *args)
{
	const char *name, *value;
	clg_status st;

	if (!PyArg_ParseTuple(args, "sz", &name, &value))
		return NULL;
	if ((st = clg_config_set(name, value)))
		return raise_status(st);
	Py_RETURN_NONE;
}

static PyObject *py_config_get(PyObject *self, PyObject *args)
{
	const char *name, *v;

	if (!PyArg_ParseTuple(args, "s", &name))
		return NULL;
	if (!(v = clg_config_get(name))) {
		PyErr_Format(PyExc_KeyError, "config: no option '%s' (clgrad.config.options() lists them)", name);
		return NULL;
	}
	return PyUnicode_FromString(v);
}

static PyObject *py_config_options(PyObject *self, PyObject *args)
{
	static const char *sources[] = {"default", "environment", "set"};
	PyObject *out = PyList_New(0);

	for (int o = 0; out && o < CLG_CFG_COUNT; o++) {
		const clg_option_info *in = clg_config_info((clg_cfg)o);
		PyObject *row;
		if (in->scope == CLG_SCOPE_SCRIPT)
			continue;
		row = Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "name", in->name, "type",
				    clg_config_type_name(in->type), "default", in->default_value, "choices", in->choices,
				    "scope", clg_config_scope_name(in->scope), "value", clg_cfg_str((clg_cfg)o), "source",
				    sources[clg_config_source((clg_cfg)o)]);
		if (!row || PyList_Append(out, row)) {
			Py_XDECREF(row);
			Py_CLEAR(out);
			break;
		}
		Py_DECREF(row);
	}
	return out;
}

/* ---- tensors: conversion ------------------------------------------------------------------ */

static const char *dtype_names[CLG_DTYPE_COUNT] = {"float32", "float16", "float64", "int32", "bfloat16"};

static int dtype_from(PyObject *o, clg_dtype *out)
{
	const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;

	for (int d = 0; s && d < CLG_DTYPE_COUNT; d++) {
		if (!strcmp(s, dtype_names[d])) {
			*out = (clg_dtype)d;
			return 1;
		}
	}
	if (!PyErr_Occurred())
		PyErr_Format(PyExc_TypeError, "dtype: expected one of float32, float16, bfloat16, float64, int32, got %R", o);
	return 0;
}

/* A new Tensor owning t (the owner's reference), or the library's exception where t is NULL. */
static PyObject *wrap(clg_tensor *t)
{
	TensorObject *o;

	if (!t)
		return raise_status(clg_last_status() ? clg_last_status() : CLG_ERR_STATE);
	if (!(o = (TensorObject *)tensor_class->tp_alloc(tensor_class, 0))) {
		clg_free(t);
		return NULL;
	}
	o->t = clg_unscope(t); /* the Python object owns it: it may outlive a C scope open now (a trainer's step) */
	return (PyObject *)o;
}

static int is_tensor(PyObject *o) { return PyObject_TypeCheck(o, &TensorType); }

/* The clg_tensor of a Tensor argument (borrowed), or NULL with TypeError naming the argument. */
static clg_tensor *tensor_arg(PyObject *o, const char *what)
{
	if (!is_tensor(o)) {
		PyErr_Format(PyExc_TypeError, "%s: expected a clgrad.Tensor, got %.100s", what, Py_TYPE(o)->tp_name);
		return NULL;
	}
	return ((TensorObject *)o)->t;
}

/* NULL for None, else as tensor_arg; *ok 0 on a wrong type. */
static clg_tensor *opt_tensor_arg(PyObject *o, const char *what, int *ok)
{
	*ok = 1;
	if (!o || o == Py_None)
		return NULL;
	clg_tensor *t = tensor_arg(o, what);
	*ok = t != NULL;
	return t;
}

/* A shape from a sequence of ints into shape[CLG_MAX_DIMS]; -1 with an exception on a bad one. */
static int shape_from(PyObject *seq, int64_t *shape, int max, const char *what)
{
	PyObject *fast = PySequence_Fast(seq, "shape: expected a sequence of ints");
	Py_ssize_t n;

	if (!fast)
		return -1;
	n = PySequence_Fast_GET_SIZE(fast);
	if (n > max) {
		Py_DECREF(fast);
		PyErr_Format(ShapeError, "%s: %zd dims, at most %d", what, n, max);
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *v = PySequence_Fast_GET_ITEM(fast, i);
		if (!PyLong_Check(v)) {
			Py_DECREF(fast);
			PyErr_Format(PyExc_TypeError, "%s: dim %zd is %.50s, not an int", what, i, Py_TYPE(v)->tp_name);
			return -1;
		}
		shape[i] = PyLong_AsLongLong(v);
	}
	Py_DECREF(fast);
	return (int)n;
}

static PyObject *shape_tuple(const clg_tensor *t)
{
	int n = clg_ndim(t);
	const int64_t *s = clg_shape(t);
	PyObject *out = PyTuple_New(n);

	for (int i = 0; out && i < n; i++)
		PyTuple_SET_ITEM(out, i, PyLong_FromLongLong(s[i]));
	return out;
}

/* _C.from_buffer(buffer, shape, dtype, device): a tensor holding a copy of the buffer's bytes
 * (C order, numel * itemsize of dtype). */
static PyObject *py_from_buffer(PyObject *self, PyObject *args)
{
	PyObject *data, *shape_obj, *dt_obj;
	int device, nd;
	int64_t shape[16], numel = 1;
	clg_dtype dt;
	clg_backend *be;
	Py_buffer view;
	clg_tensor *t;

	if (!PyArg_ParseTuple(args, "OOOi", &data, &shape_obj, &dt_obj, &device) || !dtype_from(dt_obj, &dt) ||
	    (nd = shape_from(shape_obj, shape, 16, "tensor")) < 0 || !(be = backend_of(device)))
		return NULL;
	for (int i = 0; i < nd; i++)
		numel *= shape[i];
	if (PyObject_GetBuffer(data, &view, PyBUF_C_CONTIGUOUS) < 0)
		return NULL;
	if ((size_t)view.len != (size_t)numel * clg_dtype_size(dt)) {
		PyBuffer_Release(&view);
		PyErr_Format(ShapeError, "tensor: %zd bytes of data for %lld %s elements (%zu bytes)", view.len,
			     (long long)numel, dtype_names[dt], (size_t)numel * clg_dtype_size(dt));
		return NULL;
	}
	t = clg_from_host(be, dt, nd, shape, view.buf);
	PyBuffer_Release(&view);
	return wrap(t);
}

/* _C.full(shape, value, dtype, device) */
static PyObject *py_full(PyObject *self, PyObject *args)
{
	PyObject *shape_obj, *dt_obj;
	double v;
	int device, nd;
	int64_t shape[16];
	clg_dtype dt;
	clg_backend *be;

	if (!PyArg_ParseTuple(args, "OdOi", &shape_obj, &v, &dt_obj, &device) || !dtype_from(dt_obj, &dt) ||
	    (nd = shape_from(shape_obj, shape, 16, "full")) < 0 || !(be = backend_of(device)))
		return NULL;
	return wrap(clg_full(be, dt, nd, shape, v));
}

static PyObject *py_arange(PyObject *self, PyObject *args)
{
	long long n;
	PyObject *dt_obj;
	int device;
	clg_dtype dt;
	clg_backend *be;

	if (!PyArg_ParseTuple(args, "LOi", &n, &dt_obj, &device) || !dtype_from(dt_obj, &dt) || !(be = backend_of(device)))
		return NULL;
	return wrap(clg_arange(be, dt, n));
}

/* _C.random(kind, shape, seed, dtype, device): kind "uniform" [0, 1) or "normal" */
static PyObject *py_random(PyObject *self, PyObject *args)
{
	const char *kind;
	PyObject *shape_obj, *dt_obj;
	unsigned long long seed;
	int device, nd;
	int64_t shape[16];
	clg_dtype dt;
	clg_backend *be;

	if (!PyArg_ParseTuple(args, "sOKOi", &kind, &shape_obj, &seed, &dt_obj, &device) || !dtype_from(dt_obj, &dt) ||
	    (nd = shape_from(shape_obj, shape, 16, kind)) < 0 || !(be = backend_of(device)))
		return NULL;
	return wrap(!strcmp(kind, "normal") ? clg_randn(be, dt, nd, shape, seed) : clg_rand(be, dt, nd, shape, seed));
}

/* ---- Tensor type --------------------------------------------------------------------------- */

static void tensor_dealloc(TensorObject *self)
{
	clg_free(self->t);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Tensor(other): a new Python object sharing other's clg_tensor (Parameter(t) uses it). */
static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	PyObject *src;
	TensorObject *o;

	if (!PyArg_ParseTuple(args, "O!", &TensorType, &src))
		return NULL;
	if (!(o = (TensorObject *)type->tp_alloc(type, 0)))
		return NULL;
	o->t = clg_retain(((TensorObject *)src)->t);
	return (PyObject *)o;
}

static PyObject *tensor_shape(TensorObject *self, void *c) { return shape_tuple(self->t); }
static PyObject *tensor_dtype(TensorObject *self, void *c) { return PyUnicode_FromString(dtype_names[clg_dtype_of(self->t)]); }
static PyObject *tensor_device_index(TensorObject *self, void *c) { return PyLong_FromLong(index_of(clg_device_of(self->t))); }
static PyObject *tensor_requires_grad(TensorObject *self, void *c) { return PyBool_FromLong(clg_requires_grad(self->t)); }

static int tensor_set_requires_grad(TensorObject *self, PyObject *v, void *c)
{
	int on = v ? PyObject_IsTrue(v) : 0;
	if (on < 0)
		return -1;
	clg_set_requires_grad(self->t, on);
	return 0;
}

static PyObject *tensor_grad(TensorObject *self, void *c)
{
	clg_tensor *g = clg_grad(self->t);
	if (!g)
		Py_RETURN_NONE;
	return wrap(clg_retain(g));
}

static int tensor_set_grad(TensorObject *self, PyObject *v, void *c)
{
	if (v && v != Py_None) {
		PyErr_SetString(PyExc_TypeError, "Tensor.grad: only None can be assigned (zero_grad)");
		return -1;
	}
	clg_zero_grad(self->t);
	return 0;
}

static PyObject *tensor_numel(TensorObject *self, PyObject *a) { return PyLong_FromLongLong(clg_numel(self->t)); }
static PyObject *tensor_is_contiguous(TensorObject *self, PyObject *a) { return PyBool_FromLong(clg_is_contiguous(self->t)); }

/* The tensor's values as bytes (C order, its dtype). */
static PyObject *tensor_tobytes(TensorObject *self, PyObject *a)
{
	size_t n = (size_t)clg_numel(self->t) * clg_dtype_size(clg_dtype_of(self->t));
	PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
	clg_status st;

	if (!out)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_to_host(self->t, PyBytes_AS_STRING(out), n);
	Py_END_ALLOW_THREADS
	if (st) {
		Py_DECREF(out);
		return raise_status(st);
	}
	return out;
}

static PyObject *tensor_item(TensorObject *self, PyObject *a)
{
	double v;
	clg_status st;

	Py_BEGIN_ALLOW_THREADS
	st = clg_item(self->t, &v);
	Py_END_ALLOW_THREADS
	if (st)
		return raise_status(st);
	if (clg_dtype_of(self->t) == CLG_I32)
		return PyLong_FromDouble(v);
	return PyFloat_FromDouble(v);
}

/* backward(gradient=None, retain_graph=False) */
static PyObject *tensor_backward(TensorObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"gradient", "retain_graph", NULL};
	PyObject *g_obj = Py_None;
	int retain = 0, ok;
	clg_tensor *g;
	clg_status st;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op", names, &g_obj, &retain))
		return NULL;
	g = opt_tensor_arg(g_obj, "backward(gradient)", &ok);
	if (!ok)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_backward_ex(self->t, g, retain);
	Py_END_ALLOW_THREADS
	if (st)
		return raise_status(st);
	Py_RETURN_NONE;
}

static PyObject *tensor_detach(TensorObject *self, PyObject *a) { return wrap(clg_detach(self->t)); }
static PyObject *tensor_contiguous(TensorObject *self, PyObject *a) { return wrap(clg_contiguous(self->t)); }

static PyObject *tensor_to_device(TensorObject *self, PyObject *args)
{
	int device;
	clg_backend *be;

	if (!PyArg_ParseTuple(args, "i", &device) || !(be = backend_of(device)))
		return NULL;
	if (be == clg_device_of(self->t)) {
		Py_INCREF(self);
		return (PyObject *)self;
	}
	return wrap(clg_to_device(self->t, be));
}

static PyObject *tensor_assign(TensorObject *self, PyObject *args)
{
	PyObject *src;
	clg_status st;

	if (!PyArg_ParseTuple(args, "O!", &TensorType, &src))
		return NULL;
	if ((st = clg_assign(self->t, ((TensorObject *)src)->t)))
		return raise_status(st);
	Py_RETURN_NONE;
}

static PyObject *tensor_same(TensorObject *self, PyObject *other)
{
	return PyBool_FromLong(is_tensor(other) && ((TensorObject *)other)->t == self->t);
}


/* ---- arithmetic in C: the per-op path of `a + b` (Python's method call and a table lookup would
 * add microseconds to every op) ---- */

enum { AR_ADD, AR_SUB, AR_MUL, AR_DIV };
static const char *const ar_names[] = {"add", "sub", "mul", "div"};

/* a OP b with a Tensor on either side: two tensors, or a Tensor and a Python int or float (one
 * affine op); anything else goes to Tensor._slow_binop (numpy arrays, other scalars). */
static PyObject *tensor_arith(PyObject *a, PyObject *b, int op)
{
	int ta = is_tensor(a), tb = is_tensor(b);
	PyObject *t = ta ? a : b, *o = ta ? b : a;
	clg_tensor *x = ((TensorObject *)t)->t;
	double s;

	if (ta && tb) {
		clg_tensor *y = ((TensorObject *)b)->t;
		x = ((TensorObject *)a)->t;
		return wrap(op == AR_ADD ? clg_add(x, y) : op == AR_SUB ? clg_sub(x, y) : op == AR_MUL ? clg_mul(x, y)
										 : clg_div(x, y));
	}
	if ((PyFloat_CheckExact(o) || PyLong_CheckExact(o)) && !(op == AR_DIV && !ta)) {
		s = PyFloat_AsDouble(o);
		if (s == -1 && PyErr_Occurred())
			return NULL;
		switch (op) {
		case AR_ADD: return wrap(clg_affine(x, 1.0, s));
		case AR_SUB: return wrap(ta ? clg_affine(x, 1.0, -s) : clg_affine(x, -1.0, s));
		case AR_MUL: return wrap(clg_affine(x, s, 0.0));
		default: return wrap(clg_affine(x, 1.0 / s, 0.0)); /* x / s; s / x takes the slow path */
		}
	}
	return PyObject_CallMethod(t, "_slow_binop", "sOO", ar_names[op], a, b);
}

static PyObject *tensor_nb_add(PyObject *a, PyObject *b) { return tensor_arith(a, b, AR_ADD); }
static PyObject *tensor_nb_sub(PyObject *a, PyObject *b) { return tensor_arith(a, b, AR_SUB); }
static PyObject *tensor_nb_mul(PyObject *a, PyObject *b) { return tensor_arith(a, b, AR_MUL); }
static PyObject *tensor_nb_div(PyObject *a, PyObject *b) { return tensor_arith(a, b, AR_DIV); }
static PyObject *tensor_nb_neg(PyObject *a) { return wrap(clg_neg(((TensorObject *)a)->t)); }

static PyNumberMethods tensor_number = {
	.nb_add = tensor_nb_add,
	.nb_subtract = tensor_nb_sub,
	.nb_multiply = tensor_nb_mul,
	.nb_true_divide = tensor_nb_div,
	.nb_negative = tensor_nb_neg,
};

static PyMethodDef tensor_methods[] = {
	{"numel", (PyCFunction)tensor_numel, METH_NOARGS, "number of elements"},
	{"is_contiguous", (PyCFunction)tensor_is_contiguous, METH_NOARGS, NULL},
	{"tobytes", (PyCFunction)tensor_tobytes, METH_NOARGS, "the values as bytes (a copy from the device)"},
	{"item", (PyCFunction)tensor_item, METH_NOARGS, "the value of a one-element tensor"},
	{"backward", (PyCFunction)(void (*)(void))tensor_backward, METH_VARARGS | METH_KEYWORDS,
	 "backward(gradient=None, retain_graph=False)"},
	{"detach", (PyCFunction)tensor_detach, METH_NOARGS, "the same storage, cut from the graph"},
	{"contiguous", (PyCFunction)tensor_contiguous, METH_NOARGS, NULL},
	{"_to_index", (PyCFunction)tensor_to_device, METH_VARARGS, NULL},
	{"_assign", (PyCFunction)tensor_assign, METH_VARARGS, NULL},
	{"_same", (PyCFunction)tensor_same, METH_O, NULL},
	{NULL},
};

static PyGetSetDef tensor_getset[] = {
	{"shape", (getter)tensor_shape, NULL, "the shape, a tuple", NULL},
	{"dtype", (getter)tensor_dtype, NULL, "the dtype's name", NULL},
	{"_device_index", (getter)tensor_device_index, NULL, NULL, NULL},
	{"requires_grad", (getter)tensor_requires_grad, (setter)tensor_set_requires_grad, NULL, NULL},
	{"grad", (getter)tensor_grad, (setter)tensor_set_grad, "the gradient after backward, or None", NULL},
	{NULL},
};

static PyTypeObject TensorType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.TensorBase",
	.tp_basicsize = sizeof(TensorObject),
	.tp_dealloc = (destructor)tensor_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "A tensor on one device (clgrad.Tensor adds the operators and methods).",
	.tp_as_number = &tensor_number,
	.tp_methods = tensor_methods,
	.tp_getset = tensor_getset,
	.tp_new = tensor_new,
};

/* ---- ops ----------------------------------------------------------------------------------- */

typedef clg_tensor *(*unary_fn)(clg_tensor *);
typedef clg_tensor *(*binary_fn)(clg_tensor *, clg_tensor *);

static const struct {
	const char *name;
	unary_fn fn;
} unary_ops[] = {
	{"neg", clg_neg},       {"exp", clg_exp},         {"log", clg_log},        {"tanh", clg_tanh},
	{"relu", clg_relu},     {"sigmoid", clg_sigmoid}, {"gelu", clg_gelu},      {"silu", clg_silu},
	{"gelu_tanh", clg_gelu_tanh},
	{"abs", clg_abs},       {"sqrt", clg_sqrt},       {"rsqrt", clg_rsqrt},    {"max", clg_max},
	{"min", clg_min},       {"argmax", clg_argmax},   {"softmax", clg_softmax}, {"log_softmax", clg_log_softmax},
};

static const struct {
	const char *name;
	binary_fn fn;
} binary_ops[] = {
	{"add", clg_add}, {"sub", clg_sub}, {"mul", clg_mul}, {"div", clg_div}, {"pow", clg_pow},
	{"matmul", clg_matmul}, {"nll_loss", clg_nll_loss}, {"mse_loss", clg_mse_loss}, {"embedding", clg_embedding},
};

/* _C.unary(name, x) */
static PyObject *py_unary(PyObject *self, PyObject *args)
{
	const char *name;
	PyObject *a;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "sO", &name, &a) || !(x = tensor_arg(a, name)))
		return NULL;
	for (size_t i = 0; i < sizeof(unary_ops) / sizeof(unary_ops[0]); i++)
		if (!strcmp(name, unary_ops[i].name))
			return wrap(unary_ops[i].fn(x));
	PyErr_Format(PyExc_ValueError, "no unary op '%s'", name);
	return NULL;
}

/* _C.binary(name, a, b) */
static PyObject *py_binary(PyObject *self, PyObject *args)
{
	const char *name;
	PyObject *a, *b;
	clg_tensor *x, *y;

	if (!PyArg_ParseTuple(args, "sOO", &name, &a, &b) || !(x = tensor_arg(a, name)) || !(y = tensor_arg(b, name)))
		return NULL;
	for (size_t i = 0; i < sizeof(binary_ops) / sizeof(binary_ops[0]); i++)
		if (!strcmp(name, binary_ops[i].name))
			return wrap(binary_ops[i].fn(x, y));
	PyErr_Format(PyExc_ValueError, "no binary op '%s'", name);
	return NULL;
}

static PyObject *py_compare(PyObject *self, PyObject *args)
{
	PyObject *a, *b;
	int cmp;
	clg_tensor *x, *y;

	if (!PyArg_ParseTuple(args, "OOi", &a, &b, &cmp) || !(x = tensor_arg(a, "compare")) || !(y = tensor_arg(b, "compare")))
		return NULL;
	return wrap(clg_compare(x, y, (clg_cmp)cmp));
}

static PyObject *py_where(PyObject *self, PyObject *args)
{
	PyObject *c, *a, *b;
	clg_tensor *tc, *ta, *tb;

	if (!PyArg_ParseTuple(args, "OOO", &c, &a, &b) || !(tc = tensor_arg(c, "where(condition)")) ||
	    !(ta = tensor_arg(a, "where(input)")) || !(tb = tensor_arg(b, "where(other)")))
		return NULL;
	return wrap(clg_where(tc, ta, tb));
}

/* _C.affine(x, alpha, beta): alpha * x + beta */
static PyObject *py_affine(PyObject *self, PyObject *args)
{
	PyObject *a;
	double alpha, beta;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "Odd", &a, &alpha, &beta) || !(x = tensor_arg(a, "affine")))
		return NULL;
	return wrap(clg_affine(x, alpha, beta));
}

/* _C.clamp_tensor(x, lo, hi): tensor bounds, either may be None */
static PyObject *py_clamp_tensor(PyObject *self, PyObject *args)
{
	PyObject *a, *lo, *hi;
	int ok1, ok2;
	clg_tensor *x, *tl, *th;

	(void)self;
	if (!PyArg_ParseTuple(args, "OOO", &a, &lo, &hi) || !(x = tensor_arg(a, "clamp")))
		return NULL;
	tl = opt_tensor_arg(lo, "clamp(min)", &ok1);
	th = opt_tensor_arg(hi, "clamp(max)", &ok2);
	if (!ok1 || !ok2)
		return NULL;
	return wrap(clg_clamp_tensor(x, tl, th));
}

/* _C.scalar_op(name, x, s): leaky_relu(x, slope), clamp(x, lo, hi) take doubles */
static PyObject *py_clamp(PyObject *self, PyObject *args)
{
	PyObject *a;
	double lo, hi;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "Odd", &a, &lo, &hi) || !(x = tensor_arg(a, "clamp")))
		return NULL;
	return wrap(clg_clamp(x, lo, hi));
}

static PyObject *py_leaky_relu(PyObject *self, PyObject *args)
{
	PyObject *a;
	double slope;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "Od", &a, &slope) || !(x = tensor_arg(a, "leaky_relu")))
		return NULL;
	return wrap(clg_leaky_relu(x, slope));
}

/* _C.reduce(name, x, axes or None, keepdim): sum or mean */
static PyObject *py_reduce(PyObject *self, PyObject *args)
{
	const char *name;
	PyObject *a, *axes_obj;
	int keepdim, axes[16], n = 0;
	int64_t ax[16];
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "sOOp", &name, &a, &axes_obj, &keepdim) || !(x = tensor_arg(a, name)))
		return NULL;
	if (axes_obj != Py_None) {
		if ((n = shape_from(axes_obj, ax, 16, name)) < 0)
			return NULL;
		for (int i = 0; i < n; i++)
			axes[i] = (int)ax[i];
	}
	return wrap(!strcmp(name, "mean") ? clg_mean(x, n, axes, keepdim) : clg_sum(x, n, axes, keepdim));
}

/* reshape(x, shape) or expand(x, shape): a view op taking a shape */
static PyObject *shape_op(PyObject *args, const char *name,
			  clg_tensor *(*fn)(clg_tensor *, int, const int64_t *))
{
	PyObject *a, *shape_obj;
	int64_t shape[16];
	int nd;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "OO", &a, &shape_obj) || !(x = tensor_arg(a, name)) ||
	    (nd = shape_from(shape_obj, shape, 16, name)) < 0)
		return NULL;
	return wrap(fn(x, nd, shape));
}

static PyObject *py_reshape(PyObject *self, PyObject *args) { return shape_op(args, "reshape", clg_reshape); }
static PyObject *py_expand(PyObject *self, PyObject *args) { return shape_op(args, "expand", clg_expand); }

static PyObject *py_permute(PyObject *self, PyObject *args)
{
	PyObject *a, *perm_obj;
	int64_t p[16];
	int perm[16], nd;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "OO", &a, &perm_obj) || !(x = tensor_arg(a, "permute")) ||
	    (nd = shape_from(perm_obj, p, 16, "permute")) < 0)
		return NULL;
	if (nd != clg_ndim(x)) {
		PyErr_Format(ShapeError, "permute: %d dims given for a tensor of %d", nd, clg_ndim(x));
		return NULL;
	}
	for (int i = 0; i < nd; i++)
		perm[i] = (int)(p[i] < 0 ? p[i] + nd : p[i]);
	return wrap(clg_permute(x, perm));
}

static PyObject *py_transpose(PyObject *self, PyObject *args)
{
	PyObject *a;
	int d0, d1;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "Oii", &a, &d0, &d1) || !(x = tensor_arg(a, "transpose")))
		return NULL;
	return wrap(clg_transpose(x, d0, d1));
}

static PyObject *py_slice(PyObject *self, PyObject *args)
{
	PyObject *a;
	int dim;
	long long start, end, step;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "OiLLL", &a, &dim, &start, &end, &step) || !(x = tensor_arg(a, "slice")))
		return NULL;
	return wrap(clg_slice(x, dim, start, end, step));
}

static PyObject *py_cast(PyObject *self, PyObject *args)
{
	PyObject *a, *dt_obj;
	clg_dtype dt;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "OO", &a, &dt_obj) || !(x = tensor_arg(a, "to(dtype)")) || !dtype_from(dt_obj, &dt))
		return NULL;
	return wrap(clg_cast(x, dt));
}

static PyObject *py_linear(PyObject *self, PyObject *args)
{
	PyObject *a, *w, *b = Py_None;
	int act = 0, ok;
	clg_tensor *x, *tw, *tb;

	if (!PyArg_ParseTuple(args, "OO|Oi", &a, &w, &b, &act) || !(x = tensor_arg(a, "linear(input)")) ||
	    !(tw = tensor_arg(w, "linear(weight)")))
		return NULL;
	tb = opt_tensor_arg(b, "linear(bias)", &ok);
	if (!ok)
		return NULL;
	return wrap(act ? clg_linear_act(x, tw, tb, (clg_act)act) : clg_linear(x, tw, tb));
}

/* _C.loss(kind, input, target, reduction, ignore_index, weight or None, label_smoothing): kind
 * "cross_entropy" (logits) or "nll" (log-probabilities); the class dim last; target int32
 * indices (input's shape without the class dim) or dense rows of input's dtype */
static PyObject *py_loss(PyObject *self, PyObject *args)
{
	const char *kind, *red;
	PyObject *a, *t, *w;
	long long ignore;
	clg_loss_opts o = CLG_LOSS_OPTS_INIT;
	clg_tensor *x, *y;
	int ok;

	if (!PyArg_ParseTuple(args, "sOOsLOd", &kind, &a, &t, &red, &ignore, &w, &o.label_smoothing) ||
	    !(x = tensor_arg(a, "loss(input)")) || !(y = tensor_arg(t, "loss(target)")))
		return NULL;
	o.weight = opt_tensor_arg(w, "loss(weight)", &ok);
	if (!ok)
		return NULL;
	if (!strcmp(red, "mean") || !strcmp(red, "sum") || !strcmp(red, "none")) {
		o.reduction = red[0] == 'm' ? CLG_REDUCTION_MEAN : red[0] == 's' ? CLG_REDUCTION_SUM : CLG_REDUCTION_NONE;
	} else {
		PyErr_Format(PyExc_ValueError, "reduction: expected 'mean', 'sum' or 'none', got '%s'", red);
		return NULL;
	}
	o.ignore_index = ignore;
	return wrap(!strcmp(kind, "nll") ? clg_nll_loss_ex(x, y, &o) : clg_cross_entropy_ex(x, y, &o));
}

/* _C.extreme(kind, x, dim, keepdim): kind "max" or "min" -> (values, int32 indices) */
static PyObject *py_extreme(PyObject *self, PyObject *args)
{
	const char *kind;
	PyObject *a, *v;
	int dim, keepdim;
	clg_tensor *x, *idx = NULL, *val;

	if (!PyArg_ParseTuple(args, "sOip", &kind, &a, &dim, &keepdim) || !(x = tensor_arg(a, kind)))
		return NULL;
	val = !strcmp(kind, "min") ? clg_min_dim(x, dim, keepdim, &idx) : clg_max_dim(x, dim, keepdim, &idx);
	if (!(v = wrap(val))) {
		clg_free(idx);
		return NULL;
	}
	return Py_BuildValue("(NN)", v, wrap(idx));
}

/* _C.arg_extreme(kind, x, dim, keepdim): argmax or argmin over dim */
static PyObject *py_arg_extreme(PyObject *self, PyObject *args)
{
	const char *kind;
	PyObject *a;
	int dim, keepdim;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "sOip", &kind, &a, &dim, &keepdim) || !(x = tensor_arg(a, kind)))
		return NULL;
	return wrap(!strcmp(kind, "argmin") ? clg_argmin_dim(x, dim, keepdim) : clg_argmax_dim(x, dim, keepdim));
}

static PyObject *py_layer_norm(PyObject *self, PyObject *args)
{
	PyObject *a, *g = Py_None, *b = Py_None;
	double eps;
	int ok1, ok2;
	clg_tensor *x, *tg, *tb;

	if (!PyArg_ParseTuple(args, "OOOd", &a, &g, &b, &eps) || !(x = tensor_arg(a, "layer_norm")))
		return NULL;
	tg = opt_tensor_arg(g, "layer_norm(weight)", &ok1);
	tb = opt_tensor_arg(b, "layer_norm(bias)", &ok2);
	if (!ok1 || !ok2)
		return NULL;
	return wrap(clg_layer_norm(x, tg, tb, eps));
}

/* _C.group_norm(x, groups, weight, bias, eps) */
static PyObject *py_group_norm(PyObject *self, PyObject *args)
{
	PyObject *a, *g, *b;
	long long groups;
	double eps;
	int ok1, ok2;
	clg_tensor *x, *tg, *tb;

	(void)self;
	if (!PyArg_ParseTuple(args, "OLOOd", &a, &groups, &g, &b, &eps) || !(x = tensor_arg(a, "group_norm")))
		return NULL;
	tg = opt_tensor_arg(g, "group_norm(weight)", &ok1);
	tb = opt_tensor_arg(b, "group_norm(bias)", &ok2);
	if (!ok1 || !ok2)
		return NULL;
	return wrap(clg_group_norm(x, groups, tg, tb, eps));
}

/* _C.rms_norm(x, ndims, weight, eps): eps < 0 for eps=None */
static PyObject *py_rms_norm(PyObject *self, PyObject *args)
{
	PyObject *a, *g;
	int ndims, ok;
	double eps;
	clg_tensor *x, *tg;

	(void)self;
	if (!PyArg_ParseTuple(args, "OiOd", &a, &ndims, &g, &eps) || !(x = tensor_arg(a, "rms_norm")))
		return NULL;
	tg = opt_tensor_arg(g, "rms_norm(weight)", &ok);
	if (!ok)
		return NULL;
	return wrap(clg_rms_norm(x, ndims, tg, eps));
}

static PyObject *py_batch_norm(PyObject *self, PyObject *args)
{
	PyObject *a, *g, *b, *rm, *rv;
	double momentum, eps;
	int training, ok[4];
	clg_tensor *x, *t[4];

	if (!PyArg_ParseTuple(args, "OOOOOddp", &a, &g, &b, &rm, &rv, &momentum, &eps, &training) ||
	    !(x = tensor_arg(a, "batch_norm")))
		return NULL;
	t[0] = opt_tensor_arg(g, "batch_norm(weight)", &ok[0]);
	t[1] = opt_tensor_arg(b, "batch_norm(bias)", &ok[1]);
	t[2] = opt_tensor_arg(rm, "batch_norm(running_mean)", &ok[2]);
	t[3] = opt_tensor_arg(rv, "batch_norm(running_var)", &ok[3]);
	if (!ok[0] || !ok[1] || !ok[2] || !ok[3])
		return NULL;
	return wrap(clg_batch_norm(x, t[0], t[1], t[2], t[3], momentum, eps, training));
}

/* _C.conv2d(x, w, b, (sh, sw), (ph, pw), (dh, dw), groups) */
static PyObject *py_conv2d(PyObject *self, PyObject *args)
{
	PyObject *a, *w, *b;
	long long sh, sw, ph, pw, dh, dw, groups;
	int ok;
	clg_tensor *x, *tw, *tb;

	if (!PyArg_ParseTuple(args, "OOO(LL)(LL)(LL)L", &a, &w, &b, &sh, &sw, &ph, &pw, &dh, &dw, &groups) ||
	    !(x = tensor_arg(a, "conv2d(input)")) || !(tw = tensor_arg(w, "conv2d(weight)")))
		return NULL;
	tb = opt_tensor_arg(b, "conv2d(bias)", &ok);
	if (!ok)
		return NULL;
	return wrap(clg_conv2d(x, tw, tb, sh, sw, ph, pw, dh, dw, groups));
}

/* _C.conv_transpose2d(x, w, b, (sh, sw), (ph, pw), (oph, opw), (dh, dw), groups) */
static PyObject *py_conv_transpose2d(PyObject *self, PyObject *args)
{
	PyObject *a, *w, *b;
	long long sh, sw, ph, pw, oh, ow, dh, dw, groups;
	int ok;
	clg_tensor *x, *tw, *tb;

	(void)self;
	if (!PyArg_ParseTuple(args, "OOO(LL)(LL)(LL)(LL)L", &a, &w, &b, &sh, &sw, &ph, &pw, &oh, &ow, &dh, &dw, &groups) ||
	    !(x = tensor_arg(a, "conv_transpose2d(input)")) || !(tw = tensor_arg(w, "conv_transpose2d(weight)")))
		return NULL;
	tb = opt_tensor_arg(b, "conv_transpose2d(bias)", &ok);
	if (!ok)
		return NULL;
	return wrap(clg_conv_transpose2d(x, tw, tb, sh, sw, ph, pw, oh, ow, dh, dw, groups));
}

/* _C.interpolate(x, size or None, scale_factor or None, linear, align_corners): size a tuple of
 * ints, scale_factor of floats, one per spatial dim */
static PyObject *py_interpolate(PyObject *self, PyObject *args)
{
	PyObject *a, *so, *fo;
	int linear, align, n = 0;
	int64_t size[2];
	double sf[2];
	clg_tensor *x;

	(void)self;
	if (!PyArg_ParseTuple(args, "OOOpp", &a, &so, &fo, &linear, &align) || !(x = tensor_arg(a, "interpolate")))
		return NULL;
	for (int k = 0; k < 2; k++) {
		PyObject *o = k ? fo : so;
		if (o == Py_None)
			continue;
		if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) < 1 || PyTuple_GET_SIZE(o) > 2) {
			PyErr_SetString(PyExc_TypeError, "interpolate: size and scale_factor must be tuples of 1 or 2 numbers");
			return NULL;
		}
		n = (int)PyTuple_GET_SIZE(o);
		for (int i = 0; i < n; i++) {
			if (k)
				sf[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(o, i));
			else
				size[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(o, i));
		}
		if (PyErr_Occurred())
			return NULL;
	}
	if (n && n != clg_ndim(x) - 2) {
		PyErr_Format(PyExc_ValueError, "interpolate: %d sizes or scale factors for %d spatial dims", n, clg_ndim(x) - 2);
		return NULL;
	}
	return wrap(clg_interpolate(x, so == Py_None ? NULL : size, fo == Py_None ? NULL : sf,
				    linear ? CLG_INTERP_LINEAR : CLG_INTERP_NEAREST, align));
}

/* _C.pool2d(kind, x, (kh, kw), (sh, sw), (ph, pw)[, (dh, dw), ceil_mode, count_include_pad]): kind
 * "max" or "avg" (whose dilation must be 1) */
static PyObject *py_pool2d(PyObject *self, PyObject *args)
{
	const char *kind;
	PyObject *a;
	long long kh, kw, sh, sw, ph, pw, dh = 1, dw = 1;
	int ceil_mode = 0, count_pad = 1;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "sO(LL)(LL)(LL)|(LL)pp", &kind, &a, &kh, &kw, &sh, &sw, &ph, &pw, &dh, &dw, &ceil_mode,
			      &count_pad) ||
	    !(x = tensor_arg(a, "pool2d")))
		return NULL;
	return wrap(!strcmp(kind, "avg") ? clg_avg_pool2d_ex(x, kh, kw, sh, sw, ph, pw, ceil_mode, count_pad)
					 : clg_max_pool2d_ex(x, kh, kw, sh, sw, ph, pw, dh, dw, ceil_mode));
}

static PyObject *py_dropout(PyObject *self, PyObject *args)
{
	PyObject *a;
	double p;
	unsigned long long seed;
	int training;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "OdKp", &a, &p, &seed, &training) || !(x = tensor_arg(a, "dropout")))
		return NULL;
	return wrap(clg_dropout(x, p, seed, training));
}

/* sdpa(q, k, v, causal, dropout_p[, seed, scale, attn_mask]): clg_scaled_dot_product_attention_ex */
static PyObject *py_sdpa(PyObject *self, PyObject *args)
{
	PyObject *q, *k, *v, *mask = Py_None;
	int causal;
	unsigned long long seed = 0;
	double p, scale = 0;
	clg_tensor *tq, *tk, *tv;
	clg_attention_opts o = CLG_ATTENTION_OPTS_INIT;

	if (!PyArg_ParseTuple(args, "OOOpd|KdO", &q, &k, &v, &causal, &p, &seed, &scale, &mask) ||
	    !(tq = tensor_arg(q, "attention(query)")) || !(tk = tensor_arg(k, "attention(key)")) ||
	    !(tv = tensor_arg(v, "attention(value)")))
		return NULL;
	if (mask != Py_None && !(o.attn_mask = tensor_arg(mask, "attention(attn_mask)")))
		return NULL;
	o.causal = causal, o.dropout_p = p, o.seed = (uint64_t)seed, o.scale = scale;
	return wrap(clg_scaled_dot_product_attention_ex(tq, tk, tv, &o));
}

static PyObject *py_concat(PyObject *self, PyObject *args)
{
	PyObject *seq, *fast;
	int dim;
	clg_tensor *ts[64], *out;
	Py_ssize_t n;

	if (!PyArg_ParseTuple(args, "Oi", &seq, &dim) || !(fast = PySequence_Fast(seq, "cat: expected a sequence")))
		return NULL;
	n = PySequence_Fast_GET_SIZE(fast);
	if (n < 1 || n > 64) {
		Py_DECREF(fast);
		PyErr_Format(PyExc_ValueError, "cat: %zd tensors (1..64)", n);
		return NULL;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		if (!(ts[i] = tensor_arg(PySequence_Fast_GET_ITEM(fast, i), "cat"))) {
			Py_DECREF(fast);
			return NULL;
		}
	}
	out = clg_concat(ts, (int)n, dim);
	Py_DECREF(fast);
	return wrap(out);
}

/* _C.rnn_cell(kind, x, h, c or None, w_ih, w_hh, b_ih or None, b_hh or None): kind "gru" -> h';
 * "lstm" -> (h', c') (clg_gru_cell, clg_lstm_cell) */
static PyObject *py_rnn_cell(PyObject *self, PyObject *args)
{
	const char *kind;
	PyObject *o[7];
	clg_tensor *t[7], *h2 = NULL, *c2 = NULL, *out;
	static const char *names[] = {"input", "hx", "cx", "weight_ih", "weight_hh", "bias_ih", "bias_hh"};
	int ok = 1;
	clg_status st;

	if (!PyArg_ParseTuple(args, "sOOOOOOO", &kind, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6]))
		return NULL;
	for (int i = 0; ok && i < 7; i++)
		t[i] = opt_tensor_arg(o[i], names[i], &ok);
	if (!ok)
		return NULL;
	if (!strcmp(kind, "gru")) {
		out = clg_gru_cell(t[0], t[1], t[3], t[4], t[5], t[6]);
		return wrap(out);
	}
	if ((st = clg_lstm_cell(t[0], t[1], t[2], t[3], t[4], t[5], t[6], &h2, &c2)))
		return raise_status(st);
	return Py_BuildValue("(NN)", wrap(h2), wrap(c2));
}

/* ---- autograd state ------------------------------------------------------------------------ */

static PyObject *py_set_tensor_class(PyObject *self, PyObject *cls)
{
	if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &TensorType)) {
		PyErr_SetString(PyExc_TypeError, "_set_tensor_class: expected a subclass of TensorBase");
		return NULL;
	}
	Py_INCREF(cls); /* kept for the life of the process */
	tensor_class = (PyTypeObject *)cls;
	Py_RETURN_NONE;
}

static PyObject *py_no_grad_begin(PyObject *self, PyObject *a)
{
	clg_no_grad_begin();
	Py_RETURN_NONE;
}

static PyObject *py_no_grad_end(PyObject *self, PyObject *a)
{
	clg_no_grad_end();
	Py_RETURN_NONE;
}

static PyObject *py_grad_enabled(PyObject *self, PyObject *a) { return PyBool_FromLong(clg_grad_enabled()); }

/* ---- optimizers ---------------------------------------------------------------------------- */

static void optim_dealloc(OptimObject *self)
{
	clg_optimizer_free(self->opt);
	Py_XDECREF(self->params);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* _C.Optimizer(kind, params, lr, momentum, dampening, nesterov, beta1, beta2, eps, weight_decay,
 * amsgrad=False):
 * kind "sgd", "adam" or "adamw"; one fused launch a step over all of params. */
static PyObject *optim_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	const char *kind;
	PyObject *params;
	clg_opt_config c = {0};
	clg_tensor *ts[4096];
	OptimObject *o;
	Py_ssize_t n;

	if (!PyArg_ParseTuple(args, "sO!dddpdddd|p", &kind, &PyList_Type, &params, &c.lr, &c.momentum, &c.dampening,
			      &c.nesterov, &c.beta1, &c.beta2, &c.eps, &c.weight_decay, &c.amsgrad))
		return NULL;
	c.kind = !strcmp(kind, "adam") ? CLG_OPT_ADAM : !strcmp(kind, "adamw") ? CLG_OPT_ADAMW : CLG_OPT_SGD;
	n = PyList_GET_SIZE(params);
	if (n < 1 || n > 4096) {
		PyErr_Format(PyExc_ValueError, "optimizer: %zd parameters (1..4096 a group)", n);
		return NULL;
	}
	for (Py_ssize_t i = 0; i < n; i++)
		if (!(ts[i] = tensor_arg(PyList_GET_ITEM(params, i), "optimizer(params)")))
			return NULL;
	if (!(o = (OptimObject *)type->tp_alloc(type, 0)))
		return NULL;
	if (!(o->opt = clg_optimizer_new(&c, ts, (int)n))) {
		Py_DECREF(o);
		return raise_status(clg_last_status() ? clg_last_status() : CLG_ERR_INVALID);
	}
	Py_INCREF(params);
	o->params = params;
	return (PyObject *)o;
}

static PyObject *optim_step(OptimObject *self, PyObject *a)
{
	clg_status st;

	Py_BEGIN_ALLOW_THREADS
	st = clg_optimizer_step(self->opt);
	Py_END_ALLOW_THREADS
	if (st)
		return raise_status(st);
	Py_RETURN_NONE;
}

static PyObject *optim_zero_grad(OptimObject *self, PyObject *a)
{
	clg_optimizer_zero_grad(self->opt);
	Py_RETURN_NONE;
}

static PyObject *optim_get_lr(OptimObject *self, void *c) { return PyFloat_FromDouble(clg_optimizer_lr(self->opt)); }

static int optim_set_lr(OptimObject *self, PyObject *v, void *c)
{
	double lr = v ? PyFloat_AsDouble(v) : -1;
	if (lr == -1 && PyErr_Occurred())
		return -1;
	clg_optimizer_set_lr(self->opt, lr);
	return 0;
}

static PyObject *optim_get_steps(OptimObject *self, void *c) { return PyLong_FromLongLong(clg_optimizer_steps(self->opt)); }

static PyMethodDef optim_methods[] = {
	{"step", (PyCFunction)optim_step, METH_NOARGS, "one update of every parameter"},
	{"zero_grad", (PyCFunction)optim_zero_grad, METH_NOARGS, NULL},
	{NULL},
};

static PyGetSetDef optim_getset[] = {
	{"lr", (getter)optim_get_lr, (setter)optim_set_lr, NULL, NULL},
	{"steps", (getter)optim_get_steps, NULL, NULL, NULL},
	{NULL},
};

static PyTypeObject OptimType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.Optimizer",
	.tp_basicsize = sizeof(OptimObject),
	.tp_dealloc = (destructor)optim_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A fused C optimizer over one parameter group.",
	.tp_methods = optim_methods,
	.tp_getset = optim_getset,
	.tp_new = optim_new,
};

/* _C.clip_grad_norm(params, max_norm): the norm before clipping, a one-element tensor */
static PyObject *py_clip_grad_norm(PyObject *self, PyObject *args)
{
	PyObject *params;
	double max_norm;
	clg_tensor *ts[4096], *norm = NULL;
	Py_ssize_t n;
	clg_status st;

	if (!PyArg_ParseTuple(args, "O!d", &PyList_Type, &params, &max_norm))
		return NULL;
	n = PyList_GET_SIZE(params);
	if (n > 4096) {
		PyErr_Format(PyExc_ValueError, "clip_grad_norm_: %zd parameters (at most 4096)", n);
		return NULL;
	}
	for (Py_ssize_t i = 0; i < n; i++)
		if (!(ts[i] = tensor_arg(PyList_GET_ITEM(params, i), "clip_grad_norm_(parameters)")))
			return NULL;
	if ((st = clg_clip_grad_norm(ts, (int)n, max_norm, &norm)))
		return raise_status(st);
	return wrap(norm);
}

/* ---- checkpoints (the C safetensors reader and its atomic writer) ---------------------------- */

/* _C.save_safetensors(path, [(name, tensor)], {key: value}) */
static PyObject *py_save_safetensors(PyObject *self, PyObject *args)
{
	const char *path;
	PyObject *items, *meta, *key, *value;
	clg_st_writer *w = NULL;
	clg_status st;
	Py_ssize_t pos = 0;

	if (!PyArg_ParseTuple(args, "sO!O!", &path, &PyList_Type, &items, &PyDict_Type, &meta))
		return NULL;
	if ((st = clg_st_writer_new(&w)))
		return raise_status(st);
	for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
		const char *name;
		PyObject *t;
		if (!PyArg_ParseTuple(PyList_GET_ITEM(items, i), "sO!", &name, &TensorType, &t))
			goto fail;
		if ((st = clg_st_writer_add_tensor(w, name, ((TensorObject *)t)->t)))
			goto fail_status;
	}
	while (PyDict_Next(meta, &pos, &key, &value)) {
		const char *k = PyUnicode_AsUTF8(key), *v = PyUnicode_AsUTF8(value);
		if (!k || !v)
			goto fail;
		if ((st = clg_st_writer_meta(w, k, v)))
			goto fail_status;
	}
	Py_BEGIN_ALLOW_THREADS
	st = clg_st_write(w, path);
	Py_END_ALLOW_THREADS
	if (st)
		goto fail_status;
	clg_st_writer_free(w);
	Py_RETURN_NONE;
fail_status:
	raise_status(st);
fail:
	clg_st_writer_free(w);
	return NULL;
}

/* _C.load_safetensors(path, device) -> ([(name, tensor)] in file order, {key: value}) */
static PyObject *py_load_safetensors(PyObject *self, PyObject *args)
{
	const char *path;
	int device;
	clg_backend *be;
	clg_st_file *f = NULL;
	PyObject *items = NULL, *meta = NULL, *out = NULL;
	clg_status st;

	if (!PyArg_ParseTuple(args, "si", &path, &device) || !(be = backend_of(device)))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_st_open(path, &f);
	Py_END_ALLOW_THREADS
	if (st)
		return raise_status(st);
	if (!(items = PyList_New(0)) || !(meta = PyDict_New()))
		goto out;
	for (int i = 0; i < clg_st_count(f); i++) {
		const clg_st_tensor *e = clg_st_at(f, i);
		clg_tensor *t = NULL;
		PyObject *pair;
		if ((st = clg_st_load_tensor(f, e->name, be, &t))) {
			raise_status(st);
			goto out;
		}
		if (!(pair = Py_BuildValue("(sN)", e->name, wrap(t))) || PyList_Append(items, pair)) {
			Py_XDECREF(pair);
			goto out;
		}
		Py_DECREF(pair);
	}
	for (int i = 0; i < clg_st_meta_count(f); i++) {
		const char *k, *v;
		PyObject *pv;
		if ((st = clg_st_meta_at(f, i, &k, &v))) {
			raise_status(st);
			goto out;
		}
		if (!(pv = PyUnicode_FromString(v)))
			goto out;
		if (PyDict_SetItemString(meta, k, pv)) {
			Py_DECREF(pv);
			goto out;
		}
		Py_DECREF(pv);
	}
	out = PyTuple_Pack(2, items, meta);
out:
	Py_XDECREF(items);
	Py_XDECREF(meta);
	clg_st_close(f);
	return out;
}

/* ---- mixed precision -------------------------------------------------------------------------- */

static PyObject *py_autocast_begin(PyObject *self, PyObject *args)
{
	PyObject *dt_obj;
	clg_dtype dt;

	if (!PyArg_ParseTuple(args, "O", &dt_obj) || !dtype_from(dt_obj, &dt))
		return NULL;
	if (dt != CLG_F16 && dt != CLG_BF16)
		return PyErr_Format(DTypeError, "autocast: float16 or bfloat16, not %s", dtype_names[dt]);
	clg_autocast_begin(dt);
	Py_RETURN_NONE;
}

static PyObject *py_autocast_end(PyObject *self, PyObject *a)
{
	clg_autocast_end();
	Py_RETURN_NONE;
}

typedef struct {
	PyObject_HEAD
	clg_grad_scaler s;
} ScalerObject;

/* _C.GradScaler(init_scale, growth, backoff, interval) */
static PyObject *scaler_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	double init, growth, backoff;
	long long interval;
	ScalerObject *o;

	if (!PyArg_ParseTuple(args, "dddL", &init, &growth, &backoff, &interval))
		return NULL;
	if (!(init > 0) || !(growth > 1) || !(backoff > 0 && backoff < 1) || interval < 1)
		return PyErr_Format(PyExc_ValueError, "GradScaler: init_scale > 0, growth_factor > 1, backoff_factor in "
				    "(0, 1), growth_interval >= 1 (got %g, %g, %g, %lld)", init, growth, backoff, interval);
	if (!(o = (ScalerObject *)type->tp_alloc(type, 0)))
		return NULL;
	clg_grad_scaler_init(&o->s, init);
	o->s.growth = growth, o->s.backoff = backoff, o->s.interval = interval;
	return (PyObject *)o;
}

/* GradScaler.unscale(params) -> True where every gradient is finite (then divided by the scale) */
static PyObject *scaler_unscale(ScalerObject *self, PyObject *args)
{
	PyObject *params;
	clg_tensor *ts[4096];
	Py_ssize_t n;
	int ok = 0;
	clg_status st;

	if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &params))
		return NULL;
	n = PyList_GET_SIZE(params);
	if (n > 4096)
		return PyErr_Format(PyExc_ValueError, "GradScaler: %zd parameters (at most 4096)", n);
	for (Py_ssize_t i = 0; i < n; i++)
		if (!(ts[i] = tensor_arg(PyList_GET_ITEM(params, i), "GradScaler(params)")))
			return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_grad_scaler_unscale(&self->s, ts, (int)n, &ok);
	Py_END_ALLOW_THREADS
	if (st)
		return raise_status(st);
	return PyBool_FromLong(ok);
}

static PyObject *scaler_scale(ScalerObject *self, void *c) { return PyFloat_FromDouble(self->s.scale); }
static PyObject *scaler_skipped(ScalerObject *self, void *c) { return PyLong_FromLongLong(self->s.skipped); }

static PyMethodDef scaler_methods[] = {
	{"unscale", (PyCFunction)scaler_unscale, METH_VARARGS, NULL},
	{NULL},
};

static PyGetSetDef scaler_getset[] = {
	{"scale", (getter)scaler_scale, NULL, NULL, NULL},
	{"skipped", (getter)scaler_skipped, NULL, NULL, NULL},
	{NULL},
};

static PyTypeObject ScalerType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.GradScaler",
	.tp_basicsize = sizeof(ScalerObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Dynamic loss scaling (clg_grad_scaler).",
	.tp_methods = scaler_methods,
	.tp_getset = scaler_getset,
	.tp_new = scaler_new,
};

/* ---- datasets and the prefetching loader (frontend/clgrad_data.h) ------------------------------------ */

typedef struct {
	PyObject_HEAD
	clg_dataset ds;
} DatasetObject;

typedef struct {
	PyObject_HEAD
	clg_loader *l;
	PyObject *ds; /* the Dataset it reads: borrowed by the C loader, kept alive here */
} LoaderObject;

static PyTypeObject DatasetType, LoaderType;

static void dataset_dealloc(DatasetObject *self)
{
	clg_dataset_free(&self->ds);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A new Dataset owning ds (moved), or the library's exception where st fails. */
static PyObject *dataset_wrap(clg_status st, clg_dataset *ds)
{
	DatasetObject *o;

	if (st)
		return raise_status(st);
	if (!(o = PyObject_New(DatasetObject, &DatasetType))) {
		clg_dataset_free(ds);
		return NULL;
	}
	o->ds = *ds;
	return (PyObject *)o;
}

/* _C.dataset_idx(dir, split): IDX files (Fashion-MNIST) as (N, 1, 28, 28) floats in [0, 1] */
static PyObject *py_dataset_idx(PyObject *self, PyObject *args)
{
	const char *dir, *split;
	clg_dataset ds = {0};
	clg_status st;

	if (!PyArg_ParseTuple(args, "ss", &dir, &split))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_dataset_load_idx(dir, split, &ds);
	Py_END_ALLOW_THREADS
	return dataset_wrap(st, &ds);
}

static PyObject *py_dataset_cifar10(PyObject *self, PyObject *args)
{
	const char *dir, *split;
	clg_dataset ds = {0};
	clg_status st;

	if (!PyArg_ParseTuple(args, "ss", &dir, &split))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_dataset_load_cifar10(dir, split, &ds);
	Py_END_ALLOW_THREADS
	return dataset_wrap(st, &ds);
}

/* _C.dataset_csv(path, label_col (-1: none), header (-1: detect), delimiter) */
static PyObject *py_dataset_csv(PyObject *self, PyObject *args)
{
	const char *path, *delim;
	int label, header;
	clg_dataset ds = {0};
	clg_csv_opts o = {0};
	clg_status st;

	if (!PyArg_ParseTuple(args, "siis", &path, &label, &header, &delim))
		return NULL;
	o.delim = delim[0];
	o.header = header;
	o.label_col = label < 0 ? CLG_CSV_NO_LABEL : label;
	Py_BEGIN_ALLOW_THREADS
	st = clg_csv_read(path, &o, &ds);
	Py_END_ALLOW_THREADS
	return dataset_wrap(st, &ds);
}

/* _C.dataset_arrays(x, x_shape, x_is_int, y or None, y_numel, num_classes): copies of C-contiguous
 * buffers, x float32 or int32 (n, sample...), y int32 (n, y_numel) */
static PyObject *py_dataset_arrays(PyObject *self, PyObject *args)
{
	PyObject *x, *shape_obj, *y;
	int xint, ncls, nd = -1, yfloat = 0;
	long long y_numel;
	int64_t shape[16];
	Py_buffer xb, yb = {0};
	clg_dataset ds = {0};
	clg_status st;
	size_t xbytes;

	if (!PyArg_ParseTuple(args, "OOpOLi|p", &x, &shape_obj, &xint, &y, &y_numel, &ncls, &yfloat) ||
	    (nd = shape_from(shape_obj, shape, 16, "dataset")) < 1)
		return nd == 0 ? PyErr_Format(ShapeError, "dataset: x needs a sample dim") : NULL;
	if (PyObject_GetBuffer(x, &xb, PyBUF_C_CONTIGUOUS) < 0)
		return NULL;
	if (y != Py_None && PyObject_GetBuffer(y, &yb, PyBUF_C_CONTIGUOUS) < 0) {
		PyBuffer_Release(&xb);
		return NULL;
	}
	/* yfloat: float32 targets (a regression's), else int32 labels */
	st = clg_dataset_init_ex(&ds, shape[0], nd - 1, shape + 1, xint ? CLG_I32 : CLG_F32, y == Py_None ? 0 : y_numel,
				 yfloat ? CLG_F32 : CLG_I32);
	xbytes = st ? 0 : (size_t)ds.n * (size_t)ds.sample_numel * 4;
	if (!st && (size_t)xb.len != xbytes)
		st = clg_fail(CLG_ERR_SHAPE, "dataset: %zd bytes of x for %lld samples of %lld values", xb.len,
			      (long long)ds.n, (long long)ds.sample_numel);
	if (!st && y != Py_None && (size_t)yb.len != (size_t)ds.n * (size_t)y_numel * 4)
		st = clg_fail(CLG_ERR_SHAPE, "dataset: %zd bytes of y for %lld samples of %lld labels", yb.len,
			      (long long)ds.n, y_numel);
	if (!st) {
		memcpy(xint ? (void *)ds.xi : (void *)ds.x, xb.buf, xbytes);
		if (y != Py_None)
			memcpy(yfloat ? (void *)ds.yf : (void *)ds.y, yb.buf, (size_t)yb.len);
		ds.num_classes = ncls;
	}
	PyBuffer_Release(&xb);
	if (y != Py_None)
		PyBuffer_Release(&yb);
	if (st)
		clg_dataset_free(&ds);
	return dataset_wrap(st, &ds);
}

static PyObject *dataset_len(DatasetObject *self, void *c) { return PyLong_FromLongLong(self->ds.n); }
static PyObject *dataset_classes(DatasetObject *self, void *c) { return PyLong_FromLong(self->ds.num_classes); }

static PyObject *dataset_shape(DatasetObject *self, void *c)
{
	PyObject *out = PyTuple_New(self->ds.ndim);
	for (int i = 0; out && i < self->ds.ndim; i++)
		PyTuple_SET_ITEM(out, i, PyLong_FromLongLong(self->ds.shape[i]));
	return out;
}

/* Dataset.normalize(mean list, std list): per channel (the lists' length), in place */
static PyObject *dataset_normalize(DatasetObject *self, PyObject *args)
{
	PyObject *mo, *so;
	float mean[64], std[64];
	Py_ssize_t n;
	clg_status st;

	if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &mo, &PyList_Type, &so))
		return NULL;
	n = PyList_GET_SIZE(mo);
	if (n < 1 || n > 64 || PyList_GET_SIZE(so) != n) {
		PyErr_Format(PyExc_ValueError, "normalize: 1..64 means and as many stds (got %zd and %zd)", n,
			     PyList_GET_SIZE(so));
		return NULL;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		mean[i] = (float)PyFloat_AsDouble(PyList_GET_ITEM(mo, i));
		std[i] = (float)PyFloat_AsDouble(PyList_GET_ITEM(so, i));
	}
	if (PyErr_Occurred())
		return NULL;
	if ((st = clg_dataset_normalize(&self->ds, (int)n, mean, std)))
		return raise_status(st);
	Py_RETURN_NONE;
}

static PyObject *dataset_stats(DatasetObject *self, PyObject *args)
{
	int n;
	float mean[64], std[64];
	clg_status st;
	PyObject *m, *s;

	if (!PyArg_ParseTuple(args, "i", &n))
		return NULL;
	if (n < 1 || n > 64)
		return PyErr_Format(PyExc_ValueError, "channel_stats: 1..64 channels, got %d", n);
	if ((st = clg_dataset_channel_stats(&self->ds, n, mean, std)))
		return raise_status(st);
	m = PyList_New(n);
	s = PyList_New(n);
	for (int i = 0; m && s && i < n; i++) {
		PyList_SET_ITEM(m, i, PyFloat_FromDouble(mean[i]));
		PyList_SET_ITEM(s, i, PyFloat_FromDouble(std[i]));
	}
	return Py_BuildValue("(NN)", m, s);
}

static PyMethodDef dataset_methods[] = {
	{"normalize", (PyCFunction)dataset_normalize, METH_VARARGS, "x = (x - mean[c]) / std[c] per channel"},
	{"channel_stats", (PyCFunction)dataset_stats, METH_VARARGS, "(means, stds) over nchan channels"},
	{NULL},
};

static PyGetSetDef dataset_getset[] = {
	{"n", (getter)dataset_len, NULL, "samples", NULL},
	{"shape", (getter)dataset_shape, NULL, "the shape of one sample", NULL},
	{"num_classes", (getter)dataset_classes, NULL, NULL, NULL},
	{NULL},
};

static PyTypeObject DatasetType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.Dataset",
	.tp_basicsize = sizeof(DatasetObject),
	.tp_dealloc = (destructor)dataset_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Samples held by the C library (frontend/clgrad_data.h).",
	.tp_methods = dataset_methods,
	.tp_getset = dataset_getset,
};

static void loader_dealloc(LoaderObject *self)
{
	clg_loader_free(self->l);
	Py_XDECREF(self->ds);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* _C.Loader(dataset, batch, seed, flags) */
static PyObject *loader_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	PyObject *ds;
	long long batch;
	unsigned long long seed;
	int flags;
	LoaderObject *o;
	clg_status st;

	if (!PyArg_ParseTuple(args, "O!LKi", &DatasetType, &ds, &batch, &seed, &flags))
		return NULL;
	if (!(o = (LoaderObject *)type->tp_alloc(type, 0)))
		return NULL;
	if ((st = clg_loader_new(&((DatasetObject *)ds)->ds, batch, seed, flags, &o->l))) {
		Py_DECREF(o);
		return raise_status(st);
	}
	Py_INCREF(ds);
	o->ds = ds;
	return (PyObject *)o;
}

/* Loader.next(device) -> (x, y or None), or None at the end of an epoch (the next call starts the
 * next one) */
static PyObject *loader_next(LoaderObject *self, PyObject *args)
{
	int device;
	clg_backend *be;
	clg_tensor *x = NULL, *y = NULL;
	clg_status st;
	PyObject *px;

	if (!PyArg_ParseTuple(args, "i", &device) || !(be = backend_of(device)))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_loader_next(self->l, be, &x, &y);
	Py_END_ALLOW_THREADS
	if (st)
		return raise_status(st);
	if (!x)
		Py_RETURN_NONE;
	if (!(px = wrap(x))) {
		clg_free(y);
		return NULL;
	}
	if (!y)
		return Py_BuildValue("(NO)", px, Py_None);
	return Py_BuildValue("(NN)", px, wrap(y));
}

/* Loader.state() -> (seed, epoch, pos): where the next batch comes from */
static PyObject *loader_state(LoaderObject *self, PyObject *a)
{
	clg_loader_state s;
	clg_loader_get_state(self->l, &s);
	return Py_BuildValue("(KKL)", (unsigned long long)s.seed, (unsigned long long)s.epoch, (long long)s.pos);
}

/* Loader.set_state(epoch, pos) */
static PyObject *loader_set_state(LoaderObject *self, PyObject *args)
{
	clg_loader_state s;
	unsigned long long epoch;
	long long pos;
	clg_status st;

	clg_loader_get_state(self->l, &s);
	if (!PyArg_ParseTuple(args, "KL", &epoch, &pos))
		return NULL;
	s.epoch = epoch;
	s.pos = pos;
	if ((st = clg_loader_set_state(self->l, &s)))
		return raise_status(st);
	Py_RETURN_NONE;
}

static PyObject *loader_batches(LoaderObject *self, PyObject *a)
{
	return PyLong_FromLongLong(clg_loader_batches_per_epoch(self->l));
}

static PyMethodDef loader_methods[] = {
	{"next", (PyCFunction)loader_next, METH_VARARGS, NULL},
	{"batches_per_epoch", (PyCFunction)loader_batches, METH_NOARGS, NULL},
	{"state", (PyCFunction)loader_state, METH_NOARGS, NULL},
	{"set_state", (PyCFunction)loader_set_state, METH_VARARGS, NULL},
	{NULL},
};

static PyTypeObject LoaderType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.Loader",
	.tp_basicsize = sizeof(LoaderObject),
	.tp_dealloc = (destructor)loader_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The C library's shuffling, prefetching batch loader over a Dataset.",
	.tp_methods = loader_methods,
	.tp_new = loader_new,
};

/* ---- the comparison mode (compare/clgrad_compare.h; clgrad.compare) ----------------------------- */

/* run_compare(out_dir, worker, devices, suites, quick, timeout, baseline, data_dir, verbose):
 * report.json's path. The run releases the GIL; the library handles SIGINT while it runs (the
 * worker is killed, Python's handler restored), and an interrupted run raises KeyboardInterrupt. */
static PyObject *py_run_compare(PyObject *self, PyObject *args)
{
	clg_compare_options o = clg_compare_defaults();
	clg_compare_result res;
	const char *data = NULL, *baseline = NULL;
	int verbose = 0;
	clg_status st;

	(void)self;
	if (!PyArg_ParseTuple(args, "ssssidzzp:run_compare", &o.out_dir, &o.worker, &o.devices, &o.suites, &o.quick,
			      &o.timeout_s, &baseline, &data, &verbose))
		return NULL;
	o.baseline = baseline;
	o.data_dir = data;
	o.command = "clgrad.compare()";
	o.log = verbose ? stderr : NULL;
	o.table = verbose ? stdout : NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_compare_run(&o, &res);
	Py_END_ALLOW_THREADS
	if (res.interrupted) {
		PyErr_SetString(PyExc_KeyboardInterrupt, clg_last_error());
		return NULL;
	}
	if (st)
		return raise_status(st);
	return Py_BuildValue("(sii)", res.report, res.devices, res.ok);
}

/* ---- module -------------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
	{"devices", py_devices, METH_NOARGS, "every device, as dicts"},
	{"select_device", py_select_device, METH_VARARGS, "the index of a device spec (None: the default)"},
	{"memory_stats", py_memory_stats, METH_VARARGS, NULL},
	{"synchronize", py_synchronize, METH_VARARGS, NULL},
	{"config_set", py_config_set, METH_VARARGS, NULL},
	{"config_get", py_config_get, METH_VARARGS, NULL},
	{"config_options", py_config_options, METH_NOARGS, NULL},
	{"from_buffer", py_from_buffer, METH_VARARGS, NULL},
	{"full", py_full, METH_VARARGS, NULL},
	{"arange", py_arange, METH_VARARGS, NULL},
	{"random", py_random, METH_VARARGS, NULL},
	{"unary", py_unary, METH_VARARGS, NULL},
	{"binary", py_binary, METH_VARARGS, NULL},
	{"compare", py_compare, METH_VARARGS, NULL},
	{"where", py_where, METH_VARARGS, NULL},
	{"affine", py_affine, METH_VARARGS, NULL},
	{"clamp", py_clamp, METH_VARARGS, NULL},
	{"clamp_tensor", py_clamp_tensor, METH_VARARGS, NULL},
	{"leaky_relu", py_leaky_relu, METH_VARARGS, NULL},
	{"reduce", py_reduce, METH_VARARGS, NULL},
	{"reshape", py_reshape, METH_VARARGS, NULL},
	{"expand", py_expand, METH_VARARGS, NULL},
	{"permute", py_permute, METH_VARARGS, NULL},
	{"transpose", py_transpose, METH_VARARGS, NULL},
	{"slice", py_slice, METH_VARARGS, NULL},
	{"cast", py_cast, METH_VARARGS, NULL},
	{"linear", py_linear, METH_VARARGS, NULL},
	{"loss", py_loss, METH_VARARGS, NULL},
	{"extreme", py_extreme, METH_VARARGS, NULL},
	{"arg_extreme", py_arg_extreme, METH_VARARGS, NULL},
	{"layer_norm", py_layer_norm, METH_VARARGS, NULL},
	{"interpolate", py_interpolate, METH_VARARGS, NULL},
	{"conv_transpose2d", py_conv_transpose2d, METH_VARARGS, NULL},
	{"group_norm", py_group_norm, METH_VARARGS, NULL},
	{"rms_norm", py_rms_norm, METH_VARARGS, NULL},
	{"batch_norm", py_batch_norm, METH_VARARGS, NULL},
	{"conv2d", py_conv2d, METH_VARARGS, NULL},
	{"pool2d", py_pool2d, METH_VARARGS, NULL},
	{"dropout", py_dropout, METH_VARARGS, NULL},
	{"sdpa", py_sdpa, METH_VARARGS, NULL},
	{"concat", py_concat, METH_VARARGS, NULL},
	{"rnn_cell", py_rnn_cell, METH_VARARGS, NULL},
	{"_set_tensor_class", py_set_tensor_class, METH_O, NULL},
	{"clip_grad_norm", py_clip_grad_norm, METH_VARARGS, NULL},
	{"op_timer_start", py_op_timer_start, METH_VARARGS, NULL},
	{"op_timer_stop", py_op_timer_stop, METH_VARARGS, NULL},
	{"save_safetensors", py_save_safetensors, METH_VARARGS, NULL},
	{"dataset_idx", py_dataset_idx, METH_VARARGS, NULL},
	{"autocast_begin", py_autocast_begin, METH_VARARGS, NULL},
	{"autocast_end", py_autocast_end, METH_NOARGS, NULL},
	{"dataset_cifar10", py_dataset_cifar10, METH_VARARGS, NULL},
	{"dataset_csv", py_dataset_csv, METH_VARARGS, NULL},
	{"dataset_arrays", py_dataset_arrays, METH_VARARGS, NULL},
	{"load_safetensors", py_load_safetensors, METH_VARARGS, NULL},
	{"no_grad_begin", py_no_grad_begin, METH_NOARGS, NULL},
	{"no_grad_end", py_no_grad_end, METH_NOARGS, NULL},
	{"grad_enabled", py_grad_enabled, METH_NOARGS, NULL},
	{"run_compare", py_run_compare, METH_VARARGS, "the comparison mode: report.json's path, devices, ok"},
	{NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "clgrad._C", "The C core of clgrad.", -1,
					module_methods};

/* An exception class clgrad.<name> with bases (Error, base) or (base) for Error itself. */
static PyObject *add_exception(PyObject *m, const char *name, PyObject *base, const char *doc)
{
	char full[64];
	PyObject *bases = base == NULL ? NULL : Error ? PyTuple_Pack(2, Error, base) : PyTuple_Pack(1, base);
	PyObject *e;

	snprintf(full, sizeof(full), "clgrad.%s", name);
	e = PyErr_NewExceptionWithDoc(full, doc, bases ? bases : PyExc_RuntimeError, NULL);
	Py_XDECREF(bases);
	if (e && PyModule_AddObject(m, name, e) == 0) {
		Py_INCREF(e);
		return e;
	}
	Py_XDECREF(e);
	return NULL;
}

static void close_backends(void)
{
	for (int i = 0; i < MAX_DEVICES; i++)
		if (backends[i]) {
			clg_backend_close(backends[i]);
			backends[i] = NULL;
		}
}

PyMODINIT_FUNC PyInit__C(void)
{
	PyObject *m;

	if (PyType_Ready(&TensorType) < 0 || PyType_Ready(&OptimType) < 0 || PyType_Ready(&DatasetType) < 0 ||
	    PyType_Ready(&LoaderType) < 0 || PyType_Ready(&ScalerType) < 0 || !(m = PyModule_Create(&module_def)))
		return NULL;
	Py_INCREF(&TensorType);
	Py_INCREF(&OptimType);
	Py_INCREF(&DatasetType);
	Py_INCREF(&LoaderType);
	Py_INCREF(&ScalerType);
	if (PyModule_AddObject(m, "TensorBase", (PyObject *)&TensorType) ||
	    PyModule_AddObject(m, "Optimizer", (PyObject *)&OptimType) ||
	    PyModule_AddObject(m, "Dataset", (PyObject *)&DatasetType) ||
	    PyModule_AddObject(m, "Loader", (PyObject *)&LoaderType) ||
	    PyModule_AddObject(m, "GradScaler", (PyObject *)&ScalerType))
		return NULL;
	PyModule_AddIntConstant(m, "LOADER_SHUFFLE", CLG_LOADER_SHUFFLE);
	PyModule_AddIntConstant(m, "LOADER_DROP_LAST", CLG_LOADER_DROP_LAST);
	PyModule_AddIntConstant(m, "LOADER_ONE_HOT", CLG_LOADER_ONE_HOT);
	if (!(Error = add_exception(m, "Error", PyExc_RuntimeError, "A failure the clgrad library reported.")) ||
	    !(ShapeError = add_exception(m, "ShapeError", PyExc_ValueError, "Shapes that do not fit together.")) ||
	    !(DTypeError = add_exception(m, "DTypeError", PyExc_TypeError, "A wrong or unavailable dtype.")) ||
	    !(DeviceError = add_exception(m, "DeviceError", PyExc_RuntimeError,
					  "An unknown device, or operands on different devices.")) ||
	    !(OOMError = add_exception(m, "OutOfMemoryError", PyExc_MemoryError, "Host or device memory exhausted.")) ||
	    !(UnsupportedError = add_exception(m, "UnsupportedError", PyExc_NotImplementedError,
					       "An op this device does not offer.")) ||
	    !(FormatError = add_exception(m, "FormatError", PyExc_ValueError, "A malformed file.")) ||
	    !(StateError = add_exception(m, "StateError", PyExc_RuntimeError, "A call out of order.")) ||
	    !(BuildError = add_exception(m, "BuildError", PyExc_RuntimeError,
					 "A kernel that failed to compile (the message holds the build log).")) ||
	    !(IOErrorC = add_exception(m, "IOError", PyExc_OSError, "A file system error.")))
		return NULL;
	PyModule_AddIntConstant(m, "CMP_EQ", CLG_CMP_EQ);
	PyModule_AddIntConstant(m, "CMP_LT", CLG_CMP_LT);
	PyModule_AddIntConstant(m, "CMP_LE", CLG_CMP_LE);
	PyModule_AddIntConstant(m, "CMP_GT", CLG_CMP_GT);
	PyModule_AddIntConstant(m, "CMP_GE", CLG_CMP_GE);
	PyModule_AddIntConstant(m, "ACT_RELU", CLG_ACT_RELU);
	PyModule_AddIntConstant(m, "ACT_GELU", CLG_ACT_GELU);
	if (clgrad_py_trainer_init(m) || clgrad_py_attention_init(m) || clgrad_py_fft_init(m) || clgrad_py_index_init(m) ||
	    clgrad_py_checkpoint_init(m) || clgrad_py_optim_state_init(m) || clgrad_py_data_init(m) ||
	    clgrad_py_tokenizer_init(m) || clgrad_py_text_init(m) || clgrad_py_models_init(m))
		return NULL;
	Py_AtExit(close_backends);
	return m;
}

/* ---- for the extension's other files (clgrad_py.h) ------------------------------------------ */

PyObject *clgrad_py_wrap(clg_tensor *t) { return wrap(t); }
clg_tensor *clgrad_py_tensor(PyObject *o, const char *what) { return tensor_arg(o, what); }
clg_backend *clgrad_py_backend(int index) { return backend_of(index); }
int clgrad_py_device_index(clg_backend *be) { return index_of(be); }
PyObject *clgrad_py_raise(clg_status s) { return raise_status(s); }
int clgrad_py_dtype(PyObject *o, clg_dtype *out) { return dtype_from(o, out); }
int clgrad_py_shape(PyObject *seq, int64_t *shape, int max, const char *what) { return shape_from(seq, shape, max, what); }

PyObject *clgrad_py_dataset_wrap(clg_status st, clg_dataset *ds) { return dataset_wrap(st, ds); }

clg_optimizer *clgrad_py_optimizer(PyObject *o, const char *what)
{
	if (!PyObject_TypeCheck(o, &OptimType)) {
		PyErr_Format(PyExc_TypeError, "%s: expected a clgrad._C.Optimizer, got %.100s", what, Py_TYPE(o)->tp_name);
		return NULL;
	}
	return ((OptimObject *)o)->opt;
}

const clg_dataset *clgrad_py_dataset(PyObject *o, const char *what)
{
	if (!PyObject_TypeCheck(o, &DatasetType)) {
		PyErr_Format(PyExc_TypeError, "%s: expected a clgrad.data.Dataset, got %.100s", what, Py_TYPE(o)->tp_name);
		return NULL;
	}
	return &((DatasetObject *)o)->ds;
}
