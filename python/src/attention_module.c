/* clgrad._C.attention_qkv: multi-head attention over one packed projection (clg_attention_qkv,
 * frontend/clgrad_norm.h), the fast path of clgrad.nn.MultiheadAttention's self-attention: the
 * heads are strided views of the projection's output, no copies forward or backward. In a file
 * of its own beside clgrad_module.c's op bindings. */
#include "clgrad_py.h"

/* _C.attention_qkv(qkv, heads, causal): qkv (B, T, 3 D) -> (B, T, D) */
static PyObject *py_attention_qkv(PyObject *self, PyObject *args)
{
	PyObject *a;
	long long heads;
	int causal;
	clg_tensor *qkv;

	if (!PyArg_ParseTuple(args, "OLp", &a, &heads, &causal) || !(qkv = clgrad_py_tensor(a, "attention_qkv(qkv)")))
		return NULL;
	return clgrad_py_wrap(clg_attention_qkv(qkv, heads, causal));
}

static PyMethodDef attention_methods[] = {
	{"attention_qkv", py_attention_qkv, METH_VARARGS, "attention_qkv(qkv (B, T, 3 D), heads, causal) -> (B, T, D)"},
	{NULL},
};

int clgrad_py_attention_init(PyObject *m) { return PyModule_AddFunctions(m, attention_methods); }
