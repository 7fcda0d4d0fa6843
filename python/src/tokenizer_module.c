/* clgrad._C.Tokenizer: the C library's tokenizers (frontend/clgrad_tokenizer.h: bytes, chars,
 * byte-level BPE), the core of clgrad.text.Tokenizer. In a file of its own beside clgrad_module.c. */
#include "clgrad_py.h"

#include <stdlib.h>

typedef struct {
	PyObject_HEAD
	clg_tokenizer *tok;
} TokObject;

static PyTypeObject TokType;

static void tok_dealloc(TokObject *self)
{
	clg_tokenizer_free(self->tok);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

PyObject *clgrad_py_tokenizer_wrap(clg_status st, clg_tokenizer *tok)
{
	TokObject *o;

	if (st) {
		clg_tokenizer_free(tok);
		return clgrad_py_raise(st);
	}
	if (!(o = PyObject_New(TokObject, &TokType))) {
		clg_tokenizer_free(tok);
		return NULL;
	}
	o->tok = tok;
	return (PyObject *)o;
}

const clg_tokenizer *clgrad_py_tokenizer(PyObject *o, const char *what)
{
	if (!PyObject_TypeCheck(o, &TokType)) {
		PyErr_Format(PyExc_TypeError, "%s: expected a clgrad.text.Tokenizer, got %.100s", what, Py_TYPE(o)->tp_name);
		return NULL;
	}
	return ((TokObject *)o)->tok;
}

/* ids (a sequence of ints) into a new int32 array of *n; NULL with an exception */
int32_t *clgrad_py_ids(PyObject *seq, size_t *n, const char *what)
{
	PyObject *fast = PySequence_Fast(seq, "ids: expected a sequence of ints");
	int32_t *ids;

	if (!fast)
		return NULL;
	*n = (size_t)PySequence_Fast_GET_SIZE(fast);
	if (!(ids = PyMem_RawMalloc(sizeof(int32_t) * (*n ? *n : 1)))) {
		Py_DECREF(fast);
		PyErr_NoMemory();
		return NULL;
	}
	for (size_t i = 0; i < *n; i++) {
		PyObject *v = PySequence_Fast_GET_ITEM(fast, (Py_ssize_t)i);
		long x = PyLong_AsLong(v);
		if ((x == -1 && PyErr_Occurred()) || x < INT32_MIN || x > INT32_MAX) {
			PyErr_Clear();
			PyErr_Format(PyExc_TypeError, "%s: id %zu is %.50s, not an int32", what, i, Py_TYPE(v)->tp_name);
			PyMem_RawFree(ids);
			Py_DECREF(fast);
			return NULL;
		}
		ids[i] = (int32_t)x;
	}
	Py_DECREF(fast);
	return ids;
}

/* a list of n ids */
PyObject *clgrad_py_id_list(const int32_t *ids, size_t n)
{
	PyObject *l = PyList_New((Py_ssize_t)n);

	for (size_t i = 0; l && i < n; i++) {
		PyObject *v = PyLong_FromLong(ids[i]);
		if (!v) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, v);
	}
	return l;
}

/* ---- making one ---- */

static PyObject *py_tok_bytes(PyObject *self, PyObject *unused)
{
	clg_tokenizer *t = NULL;
	clg_status st = clg_tokenizer_bytes(&t);
	return clgrad_py_tokenizer_wrap(st, t);
}

/* _C.tokenizer_chars(text bytes) / _C.tokenizer_bpe(text bytes, vocab_size) */
static PyObject *py_tok_chars(PyObject *self, PyObject *args)
{
	const char *s;
	Py_ssize_t len;
	clg_tokenizer *t = NULL;
	clg_status st;

	if (!PyArg_ParseTuple(args, "y#", &s, &len))
		return NULL;
	st = clg_tokenizer_chars(s, (size_t)len, &t);
	return clgrad_py_tokenizer_wrap(st, t);
}

static PyObject *py_tok_bpe(PyObject *self, PyObject *args)
{
	const char *s;
	Py_ssize_t len;
	int vocab;
	clg_tokenizer *t = NULL;
	clg_status st;

	if (!PyArg_ParseTuple(args, "y#i", &s, &len, &vocab))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_tokenizer_bpe_learn(s, (size_t)len, vocab, &t);
	Py_END_ALLOW_THREADS
	return clgrad_py_tokenizer_wrap(st, t);
}

/* _C.tokenizer_from_spec(spec, text bytes or None) */
static PyObject *py_tok_from_spec(PyObject *self, PyObject *args)
{
	const char *spec, *s = NULL;
	Py_ssize_t len = 0;
	clg_tokenizer *t = NULL;
	clg_status st;

	if (!PyArg_ParseTuple(args, "sz#", &spec, &s, &len))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_tokenizer_from_spec(spec, s, (size_t)len, &t);
	Py_END_ALLOW_THREADS
	return clgrad_py_tokenizer_wrap(st, t);
}

static PyObject *py_tok_from_string(PyObject *self, PyObject *args)
{
	const char *s;
	clg_tokenizer *t = NULL;
	clg_status st;

	if (!PyArg_ParseTuple(args, "s", &s))
		return NULL;
	st = clg_tokenizer_from_string(s, &t);
	return clgrad_py_tokenizer_wrap(st, t);
}

static PyObject *py_tok_load(PyObject *self, PyObject *args)
{
	const char *path;
	clg_tokenizer *t = NULL;
	clg_status st;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	st = clg_tokenizer_load(path, &t);
	return clgrad_py_tokenizer_wrap(st, t);
}

/* ---- the methods ---- */

static PyObject *tok_encode(TokObject *self, PyObject *args)
{
	const char *s;
	Py_ssize_t len;
	int32_t *ids;
	size_t n = 0;
	clg_status st;
	PyObject *ret;

	if (!PyArg_ParseTuple(args, "y#", &s, &len))
		return NULL;
	if (!(ids = PyMem_RawMalloc(sizeof(int32_t) * (size_t)(len ? len : 1))))
		return PyErr_NoMemory();
	Py_BEGIN_ALLOW_THREADS
	st = clg_tokenizer_encode(self->tok, s, (size_t)len, ids, &n);
	Py_END_ALLOW_THREADS
	ret = st ? clgrad_py_raise(st) : clgrad_py_id_list(ids, n);
	PyMem_RawFree(ids);
	return ret;
}

/* decode(ids) -> bytes (a BPE token may end inside a UTF-8 character) */
static PyObject *tok_decode(TokObject *self, PyObject *arg)
{
	int32_t *ids;
	size_t n, len = 0;
	char *out = NULL;
	clg_status st;
	PyObject *ret;

	if (!(ids = clgrad_py_ids(arg, &n, "decode")))
		return NULL;
	st = clg_tokenizer_decode(self->tok, ids, n, &out, &len);
	PyMem_RawFree(ids);
	ret = st ? clgrad_py_raise(st) : PyBytes_FromStringAndSize(out, (Py_ssize_t)len);
	free(out);
	return ret;
}

static PyObject *tok_token(TokObject *self, PyObject *args)
{
	int id;
	const unsigned char *b;
	size_t len;
	clg_status st;

	if (!PyArg_ParseTuple(args, "i", &id))
		return NULL;
	if ((st = clg_tokenizer_token(self->tok, id, &b, &len)))
		return clgrad_py_raise(st);
	return PyBytes_FromStringAndSize((const char *)b, (Py_ssize_t)len);
}

/* covers(bytes) -> -1 when every byte is covered, else the position of the first that is not */
static PyObject *tok_covers(TokObject *self, PyObject *args)
{
	const char *s;
	Py_ssize_t len;
	size_t pos = 0;

	if (!PyArg_ParseTuple(args, "y#", &s, &len))
		return NULL;
	return PyLong_FromSsize_t(clg_tokenizer_covers(self->tok, s, (size_t)len, &pos) ? -1 : (Py_ssize_t)pos);
}

static PyObject *tok_equal(TokObject *self, PyObject *other)
{
	const clg_tokenizer *o = clgrad_py_tokenizer(other, "equal");
	return o ? PyBool_FromLong(clg_tokenizer_equal(self->tok, o)) : NULL;
}

static PyObject *tok_describe(TokObject *self, PyObject *unused)
{
	char buf[128];
	clg_tokenizer_describe(self->tok, buf, sizeof(buf));
	return PyUnicode_FromString(buf);
}

static PyObject *tok_to_string(TokObject *self, PyObject *unused)
{
	char *s = NULL;
	clg_status st = clg_tokenizer_to_string(self->tok, &s);
	PyObject *ret = st ? clgrad_py_raise(st) : PyUnicode_FromString(s);
	free(s);
	return ret;
}

static PyObject *tok_save(TokObject *self, PyObject *args)
{
	const char *path;
	clg_status st;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	if ((st = clg_tokenizer_save(self->tok, path)))
		return clgrad_py_raise(st);
	Py_RETURN_NONE;
}

static PyObject *tok_clone(TokObject *self, PyObject *unused)
{
	clg_tokenizer *t = NULL;
	clg_status st = clg_tokenizer_clone(self->tok, &t);
	return clgrad_py_tokenizer_wrap(st, t);
}

static PyObject *tok_kind(TokObject *self, void *c)
{
	return PyUnicode_FromString(clg_tokenizer_kind_name(clg_tokenizer_kind_of(self->tok)));
}

static PyObject *tok_vocab_size(TokObject *self, void *c) { return PyLong_FromLong(clg_tokenizer_vocab_size(self->tok)); }

static PyMethodDef tok_methods[] = {
	{"encode", (PyCFunction)tok_encode, METH_VARARGS, "encode(bytes) -> list of ids"},
	{"decode", (PyCFunction)tok_decode, METH_O, "decode(ids) -> bytes"},
	{"token", (PyCFunction)tok_token, METH_VARARGS, "token(id) -> its bytes"},
	{"covers", (PyCFunction)tok_covers, METH_VARARGS, "covers(bytes) -> -1, or the first byte not covered"},
	{"equal", (PyCFunction)tok_equal, METH_O, NULL},
	{"describe", (PyCFunction)tok_describe, METH_NOARGS, NULL},
	{"to_string", (PyCFunction)tok_to_string, METH_NOARGS, "the serialised form"},
	{"save", (PyCFunction)tok_save, METH_VARARGS, "save(path), written atomically"},
	{"clone", (PyCFunction)tok_clone, METH_NOARGS, NULL},
	{NULL},
};

static PyGetSetDef tok_getset[] = {
	{"kind", (getter)tok_kind, NULL, "bytes, chars or bpe", NULL},
	{"vocab_size", (getter)tok_vocab_size, NULL, NULL, NULL},
	{NULL},
};

static PyTypeObject TokType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.Tokenizer",
	.tp_basicsize = sizeof(TokObject),
	.tp_dealloc = (destructor)tok_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A tokenizer of the C library (frontend/clgrad_tokenizer.h).",
	.tp_methods = tok_methods,
	.tp_getset = tok_getset,
};

static PyMethodDef tokenizer_methods[] = {
	{"tokenizer_bytes", py_tok_bytes, METH_NOARGS, NULL},
	{"tokenizer_chars", py_tok_chars, METH_VARARGS, "tokenizer_chars(text bytes)"},
	{"tokenizer_bpe", py_tok_bpe, METH_VARARGS, "tokenizer_bpe(text bytes, vocab_size)"},
	{"tokenizer_from_spec", py_tok_from_spec, METH_VARARGS, "tokenizer_from_spec(spec, text bytes or None)"},
	{"tokenizer_from_string", py_tok_from_string, METH_VARARGS, NULL},
	{"tokenizer_load", py_tok_load, METH_VARARGS, NULL},
	{NULL},
};

int clgrad_py_tokenizer_init(PyObject *m)
{
	if (PyType_Ready(&TokType) < 0)
		return -1;
	Py_INCREF(&TokType);
	if (PyModule_AddObject(m, "Tokenizer", (PyObject *)&TokType)) {
		Py_DECREF(&TokType);
		return -1;
	}
	return PyModule_AddFunctions(m, tokenizer_methods);
}
