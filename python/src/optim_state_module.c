/* clgrad._C's access to a C optimizer's state (clgrad_optim.h: clg_optimizer_state, set_state,
 * set_steps), for clgrad.optim.Optimizer.state_dict / load_state_dict in PyTorch's layout. In a
 * file of its own beside clgrad_module.c's Optimizer type. */
#include "clgrad_py.h"

/* _C.optimizer_state(opt, i, slot) -> the state tensor (the optimizer's own, as PyTorch's
 * state_dict holds its buffers) or None before the first step / for a kind without it */
static PyObject *py_optimizer_state(PyObject *self, PyObject *args)
{
	PyObject *o;
	int i, slot;
	clg_optimizer *opt;
	clg_tensor *t;

	if (!PyArg_ParseTuple(args, "Oii", &o, &i, &slot) || !(opt = clgrad_py_optimizer(o, "optimizer_state")))
		return NULL;
	if (!(t = clg_optimizer_state(opt, i, slot)))
		Py_RETURN_NONE;
	return clgrad_py_wrap(clg_retain(t));
}

/* _C.optimizer_set_state(opt, i, slot, t): t's values copied into the slot (made if absent) */
static PyObject *py_optimizer_set_state(PyObject *self, PyObject *args)
{
	PyObject *o, *v;
	int i, slot;
	clg_optimizer *opt;
	clg_tensor *t;
	clg_status st;

	if (!PyArg_ParseTuple(args, "OiiO", &o, &i, &slot, &v) || !(opt = clgrad_py_optimizer(o, "optimizer_set_state")) ||
	    !(t = clgrad_py_tensor(v, "optimizer_set_state(value)")))
		return NULL;
	if ((st = clg_optimizer_set_state(opt, i, slot, t)))
		return clgrad_py_raise(st);
	Py_RETURN_NONE;
}

/* _C.optimizer_set_steps(opt, steps): the step count (Adam's bias correction reads it) */
static PyObject *py_optimizer_set_steps(PyObject *self, PyObject *args)
{
	PyObject *o;
	long long steps;
	clg_optimizer *opt;

	if (!PyArg_ParseTuple(args, "OL", &o, &steps) || !(opt = clgrad_py_optimizer(o, "optimizer_set_steps")))
		return NULL;
	if (steps < 0)
		return PyErr_Format(PyExc_ValueError, "optimizer: step count %lld, expected >= 0", steps);
	clg_optimizer_set_steps(opt, steps);
	Py_RETURN_NONE;
}

static PyMethodDef optim_state_methods[] = {
	{"optimizer_state", py_optimizer_state, METH_VARARGS, "optimizer_state(opt, i, slot) -> Tensor or None"},
	{"optimizer_set_state", py_optimizer_set_state, METH_VARARGS, "optimizer_set_state(opt, i, slot, t)"},
	{"optimizer_set_steps", py_optimizer_set_steps, METH_VARARGS, "optimizer_set_steps(opt, steps)"},
	{NULL},
};

int clgrad_py_optim_state_init(PyObject *m) { return PyModule_AddFunctions(m, optim_state_methods); }
