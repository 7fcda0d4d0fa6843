/* clgrad._C.Text: a text for a language model as the C library reads and encodes it
 * (frontend/clgrad_data.h: clg_text_load_tok, clg_text_windows, clg_text_read, clg_text_hash), the
 * core of clgrad.text.Text and clgrad.data.TextDataset. In a file of its own beside clgrad_module.c. */
#include "clgrad_py.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	PyObject_HEAD
	clg_text t;
} TextObject;

static PyTypeObject TextType;

static void text_dealloc(TextObject *self)
{
	clg_text_free(&self->t);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* _C.text_load(path, val_fraction, tokenizer or None, spec or None) */
static PyObject *py_text_load(PyObject *self, PyObject *args)
{
	const char *path, *spec = NULL;
	double val;
	PyObject *to;
	const clg_tokenizer *tok = NULL;
	TextObject *o;
	clg_status st;

	if (!PyArg_ParseTuple(args, "sdOz", &path, &val, &to, &spec) ||
	    (to != Py_None && !(tok = clgrad_py_tokenizer(to, "Text(tokenizer)"))))
		return NULL;
	if (!(o = PyObject_New(TextObject, &TextType)))
		return NULL;
	memset(&o->t, 0, sizeof(o->t));
	Py_BEGIN_ALLOW_THREADS
	st = clg_text_load_tok(path, val, tok, spec, &o->t);
	Py_END_ALLOW_THREADS
	if (st) {
		Py_DECREF(o);
		return clgrad_py_raise(st);
	}
	return (PyObject *)o;
}

/* _C.text_read(path) -> bytes (a file, or a folder's texts joined) */
static PyObject *py_text_read(PyObject *self, PyObject *args)
{
	const char *path;
	char *s = NULL;
	size_t len = 0;
	clg_status st;
	PyObject *ret;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_text_read(path, &s, &len);
	Py_END_ALLOW_THREADS
	ret = st ? clgrad_py_raise(st) : PyBytes_FromStringAndSize(s, (Py_ssize_t)len);
	free(s);
	return ret;
}

static PyObject *py_text_hash(PyObject *self, PyObject *args)
{
	const char *s;
	Py_ssize_t len;

	if (!PyArg_ParseTuple(args, "y#", &s, &len))
		return NULL;
	return PyLong_FromUnsignedLongLong(clg_text_hash(s, (size_t)len));
}

/* windows(val, seq_len, stride) -> Dataset */
static PyObject *text_windows(TextObject *self, PyObject *args)
{
	int val;
	long long seq_len, stride;
	clg_dataset ds = {0};

	if (!PyArg_ParseTuple(args, "pLL", &val, &seq_len, &stride))
		return NULL;
	return clgrad_py_dataset_wrap(clg_text_windows(&self->t, val, seq_len, stride, &ds), &ds);
}

/* ids() -> bytes of the int32 ids (numpy.frombuffer reads them) */
static PyObject *text_ids(TextObject *self, PyObject *unused)
{
	return PyBytes_FromStringAndSize((const char *)self->t.ids, (Py_ssize_t)(sizeof(int32_t) * (size_t)self->t.n));
}

static PyObject *text_tokenizer(TextObject *self, PyObject *unused)
{
	clg_tokenizer *t = NULL;
	clg_status st = clg_tokenizer_clone(self->t.tok, &t);
	return clgrad_py_tokenizer_wrap(st, t);
}

static PyObject *text_info(TextObject *self, PyObject *unused)
{
	return Py_BuildValue("{s:i,s:L,s:L,s:L,s:K,s:L}", "vocab_size", self->t.vocab_size, "n", (long long)self->t.n,
			     "n_train", (long long)self->t.n_train, "bytes", (long long)self->t.bytes, "hash",
			     (unsigned long long)self->t.hash, "bytes_train", (long long)self->t.bytes_train);
}

static PyMethodDef text_methods[] = {
	{"windows", (PyCFunction)text_windows, METH_VARARGS, "windows(val, seq_len, stride) -> Dataset"},
	{"ids", (PyCFunction)text_ids, METH_NOARGS, NULL},
	{"tokenizer", (PyCFunction)text_tokenizer, METH_NOARGS, "a copy of its tokenizer"},
	{"info", (PyCFunction)text_info, METH_NOARGS, NULL},
	{NULL},
};

static PyTypeObject TextType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.Text",
	.tp_basicsize = sizeof(TextObject),
	.tp_dealloc = (destructor)text_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A text encoded by the C library (frontend/clgrad_data.h).",
	.tp_methods = text_methods,
};

static PyMethodDef text_module_methods[] = {
	{"text_load", py_text_load, METH_VARARGS, "text_load(path, val_fraction, tokenizer, spec) -> Text"},
	{"text_read", py_text_read, METH_VARARGS, "text_read(path) -> bytes"},
	{"text_hash", py_text_hash, METH_VARARGS, "text_hash(bytes) -> FNV-1a 64"},
	{NULL},
};

int clgrad_py_text_init(PyObject *m)
{
	if (PyType_Ready(&TextType) < 0)
		return -1;
	return PyModule_AddFunctions(m, text_module_methods);
}
