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
/* A new clgrad._C.Dataset owning *ds (moved in), or NULL with the exception of st (or on failure,
 * *ds freed). */
PyObject *clgrad_py_dataset_wrap(clg_status st, clg_dataset *ds);
/* The C optimizer of a clgrad._C.Optimizer (borrowed), or NULL with TypeError naming what. */
clg_optimizer *clgrad_py_optimizer(PyObject *o, const char *what);
/* The open backend of device index, or NULL with DeviceError. */
clg_backend *clgrad_py_backend(int index);
int clgrad_py_device_index(clg_backend *be);
/* A dtype from its name (clgrad.float32's), a shape from a sequence of ints into shape[max] (its
 * dims, or -1): 0 / -1 with an exception on a bad one. */
int clgrad_py_dtype(PyObject *o, clg_dtype *out);
int clgrad_py_shape(PyObject *seq, int64_t *shape, int max, const char *what);
/* Raises the exception class of status s with the library's message; returns NULL. */
PyObject *clgrad_py_raise(clg_status s);

/* module_shim.c. The first Python exception raised inside a C call, kept until the call returns:
 * stash_error keeps the pending exception (the first one only; the GIL held) and returns the
 * status that stops the C side; stash_restore raises the kept one (1) or does nothing (0). */
typedef struct {
	PyObject *type, *value, *tb;
} clgrad_py_stash;
clg_status clgrad_py_stash_error(clgrad_py_stash *s, const char *where);
int clgrad_py_stash_restore(clgrad_py_stash *s);
void clgrad_py_stash_clear(clgrad_py_stash *s);
/* The Python module's training mode set to training (its train() called where it differs); -1
 * with an exception. */
int clgrad_py_sync_mode(PyObject *module, int training);
/* fn(a[, b]) on Python views of C tensors (a with its graph where a_graph; b as data), its result
 * as a new tensor in the current scope, or NULL with the exception kept in stash. */
clg_tensor *clgrad_py_call(PyObject *fn, clg_tensor *a, int a_graph, clg_tensor *b, clgrad_py_stash *stash,
			   const char *where);
/* The C module of Python module mod on be (its tensors must be there: ValueError otherwise), its
 * forward's exceptions kept in stash; NULL with an exception. */
clg_module *clgrad_py_shim_build(PyObject *mod, clg_backend *be, clgrad_py_stash *stash);

/* trainer_module.c: adds clgrad._C.Trainer to the module; -1 with an exception on failure. */
int clgrad_py_trainer_init(PyObject *m);
/* attention_module.c: adds clgrad._C.attention_qkv. */
int clgrad_py_attention_init(PyObject *m);
/* fft_module.c: _C.fft, _C.complex_mul. */
int clgrad_py_fft_init(PyObject *m);
/* index_module.c: _C.gather, index_select, rng_draw, dropout_rng, conv1d, the fused ops' switches. */
int clgrad_py_index_init(PyObject *m);
/* optim_state_module.c: _C.optimizer_state, optimizer_set_state, optimizer_set_steps. */
int clgrad_py_optim_state_init(PyObject *m);
/* data_module.c: _C.dataset_subset, dataset_select, dataset_split. */
int clgrad_py_data_init(PyObject *m);
/* tokenizer_module.c: _C.Tokenizer and its makers; text_module.c: _C.text_load, text_read, text_hash. */
int clgrad_py_tokenizer_init(PyObject *m);
int clgrad_py_text_init(PyObject *m);
/* A new Tokenizer owning tok, or NULL with st's exception (tok freed); the tokenizer of one
 * (borrowed), or NULL with TypeError naming what. */
PyObject *clgrad_py_tokenizer_wrap(clg_status st, clg_tokenizer *tok);
const clg_tokenizer *clgrad_py_tokenizer(PyObject *o, const char *what);
/* A sequence of ints as a new int32 array of *n (PyMem_RawFree), or NULL with TypeError; n ids as a list. */
int32_t *clgrad_py_ids(PyObject *seq, size_t *n, const char *what);
PyObject *clgrad_py_id_list(const int32_t *ids, size_t n);
/* models_module.c: _C.model_build, gpt_preset, model_defaults, model_is_lm, gfnet_block. */
int clgrad_py_models_init(PyObject *m);
/* checkpoint_module.c: _C.checkpoint (activation recomputation over a Python function). */
int clgrad_py_checkpoint_init(PyObject *m);
/* A new tensor of the current scope that is t (a view with t's graph behind it). */
clg_tensor *clgrad_py_scoped_alias(clg_tensor *t);

#endif
