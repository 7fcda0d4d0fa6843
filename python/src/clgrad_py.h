/* What the extension's C files share (clgrad_module.c defines these; trainer_module.c uses them):
 * the Tensor and Dataset objects, devices and the exceptions, so the trainer's binding lives in a
 * file of its own. */
#ifndef CLGRAD_PY_H
#define CLGRAD_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <clgrad.h>
#include <clgrad_data.h>

/* A new clgrad.Tensor owning t (the caller's reference, taken out of any scope), or NULL with the
 * library's exception where t is NULL. */
PyObject *clgrad_py_wrap(clg_tensor *t);
/* The clg_tensor of a Tensor (borrowed), or NULL with TypeError naming what. */
clg_tensor *clgrad_py_tensor(PyObject *o, const char *what);
/* The dataset of a clgrad._C.Dataset (borrowed), or NULL with TypeError naming what. */
const clg_dataset *clgrad_py_dataset(PyObject *o, const char *what);
/* The open backend of device index, or NULL with DeviceError. */
clg_backend *clgrad_py_backend(int index);
int clgrad_py_device_index(clg_backend *be);
/* Raises the exception class of status s with the library's message; returns NULL. */
PyObject *clgrad_py_raise(clg_status s);

/* trainer_module.c: adds clgrad._C.Trainer to the module; -1 with an exception on failure. */
int clgrad_py_trainer_init(PyObject *m);
/* attention_module.c: adds clgrad._C.attention_qkv. */
int clgrad_py_attention_init(PyObject *m);

#endif
