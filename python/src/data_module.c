/* clgrad._C's dataset subsets (clgrad_data.h: clg_dataset_subset, select, split), the core of
 * clgrad.data.Subset and random_split: each a copy that owns its arrays. In a file of its own beside
 * clgrad_module.c's Dataset type. */
#include "clgrad_py.h"

/* _C.dataset_subset(ds, start, count): samples [start, start + count) (count -1: to the end) */
static PyObject *py_dataset_subset(PyObject *self, PyObject *args)
{
	PyObject *o;
	long long start, count;
	const clg_dataset *src;
	clg_dataset out = {0};

	if (!PyArg_ParseTuple(args, "OLL", &o, &start, &count) || !(src = clgrad_py_dataset(o, "dataset_subset")))
		return NULL;
	return clgrad_py_dataset_wrap(clg_dataset_subset(src, start, count, &out), &out);
}

/* _C.dataset_select(ds, indices): the samples at indices (a sequence of ints), in that order */
static PyObject *py_dataset_select(PyObject *self, PyObject *args)
{
	PyObject *o, *seq, *fast, *ret = NULL;
	const clg_dataset *src;
	clg_dataset out = {0};
	int64_t *idx;
	Py_ssize_t n;
	clg_status st;

	if (!PyArg_ParseTuple(args, "OO", &o, &seq) || !(src = clgrad_py_dataset(o, "dataset_select")) ||
	    !(fast = PySequence_Fast(seq, "Subset: indices: expected a sequence of ints")))
		return NULL;
	n = PySequence_Fast_GET_SIZE(fast);
	if (!(idx = PyMem_RawMalloc(sizeof(int64_t) * (size_t)(n ? n : 1)))) {
		PyErr_NoMemory();
		goto out_fast;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *v = PySequence_Fast_GET_ITEM(fast, i);
		idx[i] = PyLong_AsLongLong(v);
		if (idx[i] == -1 && PyErr_Occurred()) {
			PyErr_Format(PyExc_TypeError, "Subset: index %zd is %.50s, not an int", i, Py_TYPE(v)->tp_name);
			goto out_idx;
		}
	}
	st = clg_dataset_select(src, idx, n, &out);
	ret = clgrad_py_dataset_wrap(st, &out);
out_idx:
	PyMem_RawFree(idx);
out_fast:
	Py_DECREF(fast);
	return ret;
}

/* _C.dataset_split(ds, n_a, seed) -> (a, b): the first n_a samples of the permutation of seed (the
 * loader's epoch-0 shuffle; seed 0: the file's order) and the rest */
static PyObject *py_dataset_split(PyObject *self, PyObject *args)
{
	PyObject *o, *pa, *pb;
	long long n_a;
	unsigned long long seed;
	const clg_dataset *src;
	clg_dataset a = {0}, b = {0};
	clg_status st;

	if (!PyArg_ParseTuple(args, "OLK", &o, &n_a, &seed) || !(src = clgrad_py_dataset(o, "dataset_split")))
		return NULL;
	st = clg_dataset_split(src, n_a, seed, &a, &b);
	if (st)
		return clgrad_py_raise(st);
	if (!(pa = clgrad_py_dataset_wrap(CLG_OK, &a))) {
		clg_dataset_free(&b);
		return NULL;
	}
	if (!(pb = clgrad_py_dataset_wrap(CLG_OK, &b))) {
		Py_DECREF(pa);
		return NULL;
	}
	return Py_BuildValue("(NN)", pa, pb);
}

static PyMethodDef data_methods[] = {
	{"dataset_subset", py_dataset_subset, METH_VARARGS, "dataset_subset(ds, start, count) -> Dataset"},
	{"dataset_select", py_dataset_select, METH_VARARGS, "dataset_select(ds, indices) -> Dataset"},
	{"dataset_split", py_dataset_split, METH_VARARGS, "dataset_split(ds, n_a, seed) -> (Dataset, Dataset)"},
	{NULL},
};

int clgrad_py_data_init(PyObject *m) { return PyModule_AddFunctions(m, data_methods); }
