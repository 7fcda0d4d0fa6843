/* clgrad._C's discrete Fourier transforms (frontend/clgrad_fft.h), the core of clgrad.fft: complex
 * tensors are float tensors with a trailing dim of 2 (re, im), the C library's layout. In a file of
 * its own beside clgrad_module.c's op bindings. */
#include "clgrad_py.h"

#include <string.h>

/* numpy's / torch.fft's norm names; NULL (None) is "backward" */
static int norm_from(const char *s, clg_fft_norm *out)
{
	if (!s || !strcmp(s, "backward"))
		*out = CLG_FFT_NORM_BACKWARD;
	else if (!strcmp(s, "ortho"))
		*out = CLG_FFT_NORM_ORTHO;
	else if (!strcmp(s, "forward"))
		*out = CLG_FFT_NORM_FORWARD;
	else {
		PyErr_Format(PyExc_ValueError, "norm: expected 'backward', 'ortho', 'forward' or None, got '%s'", s);
		return 0;
	}
	return 1;
}

/* _C.fft(kind, x, norm[, n, m]): kind fft, ifft, rfft, irfft (n: the output length, <= 0 as the C
 * library's), fft2, ifft2, rfft2, irfft2 (n, m: the output's h and w) */
static PyObject *py_fft(PyObject *self, PyObject *args)
{
	const char *kind, *norm_s = NULL;
	PyObject *a;
	long long n = 0, m = 0;
	clg_fft_norm norm;
	clg_tensor *x;

	if (!PyArg_ParseTuple(args, "sOz|LL", &kind, &a, &norm_s, &n, &m) || !norm_from(norm_s, &norm) ||
	    !(x = clgrad_py_tensor(a, kind)))
		return NULL;
	if (!strcmp(kind, "fft"))
		return clgrad_py_wrap(clg_fft(x, norm));
	if (!strcmp(kind, "ifft"))
		return clgrad_py_wrap(clg_ifft(x, norm));
	if (!strcmp(kind, "rfft"))
		return clgrad_py_wrap(clg_rfft(x, norm));
	if (!strcmp(kind, "irfft"))
		return clgrad_py_wrap(clg_irfft(x, n, norm));
	if (!strcmp(kind, "fft2"))
		return clgrad_py_wrap(clg_fft2(x, norm));
	if (!strcmp(kind, "ifft2"))
		return clgrad_py_wrap(clg_ifft2(x, norm));
	if (!strcmp(kind, "rfft2"))
		return clgrad_py_wrap(clg_rfft2(x, norm));
	if (!strcmp(kind, "irfft2"))
		return clgrad_py_wrap(clg_irfft2(x, n, m, norm));
	PyErr_Format(PyExc_ValueError, "no transform '%s'", kind);
	return NULL;
}

/* _C.complex_mul(a, b, conj_b): (..., 2) * (..., 2), broadcasting */
static PyObject *py_complex_mul(PyObject *self, PyObject *args)
{
	PyObject *a, *b;
	int conj_b;
	clg_tensor *x, *y;

	if (!PyArg_ParseTuple(args, "OOp", &a, &b, &conj_b) || !(x = clgrad_py_tensor(a, "complex_mul(a)")) ||
	    !(y = clgrad_py_tensor(b, "complex_mul(b)")))
		return NULL;
	return clgrad_py_wrap(clg_complex_mul(x, y, conj_b));
}

static PyMethodDef fft_methods[] = {
	{"fft", py_fft, METH_VARARGS, "fft(kind, x, norm[, n, m]): clgrad_fft.h's transforms"},
	{"complex_mul", py_complex_mul, METH_VARARGS, "complex_mul(a (..., 2), b (..., 2), conj_b)"},
	{NULL},
};

int clgrad_py_fft_init(PyObject *m) { return PyModule_AddFunctions(m, fft_methods); }
