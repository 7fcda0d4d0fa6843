/* clgrad._C.checkpoint: activation recomputation over a Python function (clg_checkpoint_ex,
 * frontend/clgrad.h), the core of clgrad.utils.checkpoint.checkpoint. The function is called with
 * the GIL held, once in the forward (no graph recorded) and again in the backward; the call keeps
 * a reference to it until its graph node goes (user_free). */
#include "clgrad_py.h"

#define CKPT_OUTS 8 /* the C library's most outputs */

typedef struct {
	PyObject *fn;          /* fn(*tensors) -> Tensor or tuple of Tensors (a strong reference) */
	int nin, nout;         /* fn's arguments; the outputs it returned on its first run */
	int refs;              /* the C call's (user_free) and _C.checkpoint's while it runs */
	clgrad_py_stash stash; /* the first run's exception, raised again by _C.checkpoint */
} ckpt_user;

/* user_free, and _C.checkpoint's own release: the last one frees */
static void ckpt_user_free(void *p)
{
	ckpt_user *u = p;
	PyGILState_STATE g = PyGILState_Ensure();

	if (--u->refs == 0) {
		clgrad_py_stash_clear(&u->stash);
		Py_XDECREF(u->fn);
		PyMem_RawFree(u);
	}
	PyGILState_Release(g);
}

/* The Python exception as the C status that stops the call: kept (the first run) for
 * _C.checkpoint to raise, its text in the C message (a re-run in backward reports it that way). */
static clg_status ckpt_error(ckpt_user *u)
{
	PyObject *t, *v, *tb, *s;
	const char *txt = "";
	clg_status st;

	if (!PyErr_Occurred())
		PyErr_SetString(PyExc_RuntimeError, clg_last_error());
	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	s = v ? PyObject_Str(v) : NULL;
	if (s && !(txt = PyUnicode_AsUTF8(s))) {
		PyErr_Clear();
		txt = "";
	}
	st = clg_fail(CLG_ERR_STATE, "checkpoint: the function raised %s%s%s%s", t ? ((PyTypeObject *)t)->tp_name : "",
		      clg_recomputing() ? " on its re-run in backward" : "", *txt ? ": " : "", txt);
	Py_XDECREF(s);
	if (!u->stash.type) {
		u->stash.type = t;
		u->stash.value = v;
		u->stash.tb = tb;
	} else {
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
	}
	return st;
}

static clg_status ckpt_call_gil(ckpt_user *u, clg_tensor *const *in, clg_tensor **out);

/* the backward may run with the GIL released (Tensor.backward lets other threads run) */
static clg_status ckpt_call(void *user, clg_tensor *const *in, clg_tensor **out)
{
	PyGILState_STATE g = PyGILState_Ensure();
	clg_status st = ckpt_call_gil(user, in, out);

	PyGILState_Release(g);
	return st;
}

/* clg_checkpoint_fn: fn on Python views of in[] (their graph behind them on the re-run); each
 * output as a tensor of the current scope; outputs past fn's count are aliases of its first (the
 * C call needs the count up front; _C.checkpoint drops them). */
static clg_status ckpt_call_gil(ckpt_user *u, clg_tensor *const *in, clg_tensor **out)
{
	PyObject *args = NULL, *res = NULL;
	Py_ssize_t nin = u->nin, n;
	clg_status st = CLG_OK;

	if (!(args = PyTuple_New(nin)))
		return ckpt_error(u);
	for (Py_ssize_t k = 0; k < nin; k++) {
		PyObject *o = clgrad_py_wrap(clgrad_py_scoped_alias(in[k]));
		if (!o) {
			Py_DECREF(args);
			return ckpt_error(u);
		}
		PyTuple_SET_ITEM(args, k, o);
	}
	res = PyObject_Call(u->fn, args, NULL);
	Py_DECREF(args);
	if (!res)
		return ckpt_error(u);
	if (PyTuple_Check(res)) {
		n = PyTuple_GET_SIZE(res);
		if (n < 1 || n > CKPT_OUTS) {
			PyErr_Format(PyExc_ValueError, "checkpoint: the function returned %zd tensors (1 to %d)", n, CKPT_OUTS);
			st = ckpt_error(u);
			goto out;
		}
	} else {
		n = 1;
	}
	if (u->nout == 0)
		u->nout = (int)n;
	else if (u->nout != n) {
		PyErr_Format(PyExc_ValueError, "checkpoint: the function returned %zd tensors on its re-run, %d at first", n,
			     u->nout);
		st = ckpt_error(u);
		goto out;
	}
	for (int i = 0; i < CKPT_OUTS && !st; i++) {
		PyObject *o = PyTuple_Check(res) ? PyTuple_GET_ITEM(res, i < n ? i : 0) : res;
		clg_tensor *t = clgrad_py_tensor(o, "checkpoint: the function's result");
		if (!t || !(out[i] = clgrad_py_scoped_alias(t)))
			st = ckpt_error(u);
	}
out:
	Py_DECREF(res);
	return st;
}

/* _C.checkpoint(fn, tensors) -> the tuple of fn's outputs */
static PyObject *py_checkpoint(PyObject *self, PyObject *args)
{
	PyObject *fn, *seq, *fast = NULL, *ret = NULL;
	clg_tensor *in[CKPT_OUTS] = {0}, *out[CKPT_OUTS] = {0};
	Py_ssize_t nin;
	ckpt_user *u;
	clg_status st;

	if (!PyArg_ParseTuple(args, "OO", &fn, &seq))
		return NULL;
	if (!PyCallable_Check(fn))
		return PyErr_Format(PyExc_TypeError, "checkpoint: function: expected a callable, got %.100s",
				    Py_TYPE(fn)->tp_name);
	if (!(fast = PySequence_Fast(seq, "checkpoint: expected a sequence of tensors")))
		return NULL;
	nin = PySequence_Fast_GET_SIZE(fast);
	if (nin < 1 || nin > CKPT_OUTS) {
		PyErr_Format(PyExc_ValueError, "checkpoint: %zd tensor arguments (1 to %d)", nin, CKPT_OUTS);
		goto out_fast;
	}
	for (Py_ssize_t k = 0; k < nin; k++)
		if (!(in[k] = clgrad_py_tensor(PySequence_Fast_GET_ITEM(fast, k), "checkpoint: argument")))
			goto out_fast;
	if (!(u = PyMem_RawCalloc(1, sizeof(*u)))) {
		PyErr_NoMemory();
		goto out_fast;
	}
	Py_INCREF(fn);
	u->fn = fn;
	u->refs = 2;
	u->nin = (int)nin;
	st = clg_checkpoint_ex(ckpt_call, u, ckpt_user_free, (int)nin, in, CKPT_OUTS, out);
	if (st) {
		if (!clgrad_py_stash_restore(&u->stash))
			clgrad_py_raise(st);
		goto out_user;
	}
	if (!(ret = PyTuple_New(u->nout)))
		goto out_outs;
	for (int i = 0; i < u->nout; i++) {
		PyObject *o = clgrad_py_wrap(out[i]);
		out[i] = NULL;
		if (!o) {
			Py_CLEAR(ret);
			break;
		}
		PyTuple_SET_ITEM(ret, i, o);
	}
out_outs:
	for (int i = 0; i < CKPT_OUTS; i++)
		clg_free(out[i]); /* the padding (and what is left after a failure) */
out_user:
	ckpt_user_free(u);
out_fast:
	Py_DECREF(fast);
	return ret;
}

static PyMethodDef checkpoint_methods[] = {
	{"checkpoint", py_checkpoint, METH_VARARGS, "checkpoint(fn, tensors) -> fn(*tensors)'s outputs, recomputed in backward"},
	{NULL},
};

int clgrad_py_checkpoint_init(PyObject *m) { return PyModule_AddFunctions(m, checkpoint_methods); }
