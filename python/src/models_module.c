/* clgrad._C.Model: a built-in model of the C library (frontend/clgrad_models.h: mlp, cnn,
 * transformer, gpt, gfnet) with its tensors, forward, text generation and the gpt model's KV cache
 * and GPT-2 weights (clgrad_generate.h); the core of clgrad.models. In a file of its own. */
#include "clgrad_py.h"

#include <clgrad_checkpoint.h>
#include <clgrad_generate.h>
#include <clgrad_models.h>
#include <clgrad_train.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	PyObject_HEAD
	clg_module *m;
	clg_model_config cfg;
	char name[32]; /* the model's name (clg_ckpt_meta.model_name's size) */
} ModelObject;

typedef struct {
	PyObject_HEAD
	clg_kv_cache *c;
	PyObject *model; /* the Model it caches for (kept alive with it) */
} CacheObject;

static PyTypeObject ModelType, CacheType;

static void model_dealloc(ModelObject *self)
{
	if (self->m)
		clg_module_free(self->m);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static void cache_dealloc(CacheObject *self)
{
	clg_kv_cache_free(self->c);
	Py_XDECREF(self->model);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* _C.model_defaults() -> the trainer's default sizes; _C.gpt_preset(name) -> a preset's */
static PyObject *config_dict(const clg_model_config *c)
{
	return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:d}", "vocab", (long long)c->vocab, "seq_len", (long long)c->seq_len,
			     "dim", (long long)c->dim, "heads", (long long)c->heads, "layers", (long long)c->layers,
			     "dropout", c->dropout);
}

static PyObject *py_model_defaults(PyObject *self, PyObject *unused)
{
	clg_train_config t = clg_train_config_default();
	return config_dict(&t.model);
}

static PyObject *py_gpt_preset(PyObject *self, PyObject *args)
{
	const char *name;
	clg_model_config c = {.name = "gpt"};
	clg_status st;

	if (!PyArg_ParseTuple(args, "s", &name))
		return NULL;
	if ((st = clg_gpt_preset(name, &c)))
		return clgrad_py_raise(st);
	return config_dict(&c);
}

/* _C.model_build(name, device, vocab, seq_len, dim, heads, layers, dropout, recompute, seed) */
static PyObject *py_model_build(PyObject *self, PyObject *args)
{
	const char *name;
	int device, recompute;
	long long vocab, seq_len, dim, heads, layers;
	unsigned long long seed;
	double dropout;
	clg_backend *be;
	ModelObject *o;

	if (!PyArg_ParseTuple(args, "siLLLLLdpK", &name, &device, &vocab, &seq_len, &dim, &heads, &layers, &dropout,
			      &recompute, &seed) ||
	    !(be = clgrad_py_backend(device)))
		return NULL;
	if (strlen(name) >= sizeof(o->name))
		return PyErr_Format(PyExc_ValueError, "model: no built-in model '%s' (%s)", name, CLG_MODEL_NAMES);
	if (!(o = PyObject_New(ModelObject, &ModelType)))
		return NULL;
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->cfg = (clg_model_config){.name = o->name, .vocab = vocab, .seq_len = seq_len, .dim = dim, .heads = heads,
				    .layers = layers, .dropout = dropout, .recompute = recompute};
	if (!(o->m = clg_model_build(be, &o->cfg, seed))) {
		Py_DECREF(o);
		return clgrad_py_raise(clg_last_status() ? clg_last_status() : CLG_ERR_INVALID);
	}
	return (PyObject *)o;
}

static PyObject *py_model_is_lm(PyObject *self, PyObject *args)
{
	clg_model_config c = {0};

	if (!PyArg_ParseTuple(args, "s", &c.name))
		return NULL;
	return PyBool_FromLong(clg_model_is_lm(&c));
}

/* _C.gfnet_block(x, params (9 tensors)) */
static PyObject *py_gfnet_block(PyObject *self, PyObject *args)
{
	PyObject *a, *seq, *fast;
	clg_tensor *x, *p[CLG_GFNET_BLOCK_PARAMS];

	if (!PyArg_ParseTuple(args, "OO", &a, &seq) || !(x = clgrad_py_tensor(a, "gfnet_block(x)")) ||
	    !(fast = PySequence_Fast(seq, "gfnet_block: params: expected a sequence of tensors")))
		return NULL;
	if (PySequence_Fast_GET_SIZE(fast) != CLG_GFNET_BLOCK_PARAMS) {
		Py_DECREF(fast);
		return PyErr_Format(PyExc_ValueError, "gfnet_block: %d parameters expected, got %zd", CLG_GFNET_BLOCK_PARAMS,
				    PySequence_Fast_GET_SIZE(fast));
	}
	for (int i = 0; i < CLG_GFNET_BLOCK_PARAMS; i++)
		if (!(p[i] = clgrad_py_tensor(PySequence_Fast_GET_ITEM(fast, i), "gfnet_block(params)"))) {
			Py_DECREF(fast);
			return NULL;
		}
	Py_DECREF(fast);
	return clgrad_py_wrap(clg_gfnet_block(x, p));
}

/* ---- Model methods ---- */

/* state() -> [(name, Tensor, is_param)], the module's own tensors */
static PyObject *model_state(ModelObject *self, PyObject *unused)
{
	clg_named_tensors l = {0};
	clg_status st = clg_module_state(self->m, 1, &l);
	PyObject *out;

	if (st)
		return clgrad_py_raise(st);
	out = PyList_New(0);
	for (int i = 0; out && i < l.n; i++) {
		PyObject *t = clgrad_py_wrap(clg_retain(l.tensors[i]));
		PyObject *row = t ? Py_BuildValue("(sNO)", l.names[i], t, l.is_param[i] ? Py_True : Py_False) : NULL;
		if (!row || PyList_Append(out, row))
			Py_CLEAR(out);
		Py_XDECREF(row);
	}
	clg_named_tensors_free(&l);
	return out;
}

static PyObject *model_forward(ModelObject *self, PyObject *arg)
{
	clg_tensor *x = clgrad_py_tensor(arg, "model(input)");
	return x ? clgrad_py_wrap(clg_module_forward(self->m, x)) : NULL;
}

static PyObject *model_train(ModelObject *self, PyObject *args)
{
	int mode;

	if (!PyArg_ParseTuple(args, "p", &mode))
		return NULL;
	clg_module_train(self->m, mode);
	Py_RETURN_NONE;
}

static PyObject *model_to(ModelObject *self, PyObject *args)
{
	int device;
	clg_backend *be;
	clg_status st;

	if (!PyArg_ParseTuple(args, "i", &device) || !(be = clgrad_py_backend(device)))
		return NULL;
	if ((st = clg_module_to(self->m, be)))
		return clgrad_py_raise(st);
	Py_RETURN_NONE;
}

static PyObject *model_num_params(ModelObject *self, PyObject *unused)
{
	return PyLong_FromLongLong(clg_module_num_params(self->m));
}

static PyObject *model_gpt2(ModelObject *self, PyObject *args)
{
	const char *path;
	int save;
	clg_status st;

	if (!PyArg_ParseTuple(args, "sp", &path, &save))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = save ? clg_gpt_save_gpt2(self->m, path) : clg_gpt_load_gpt2(self->m, path);
	Py_END_ALLOW_THREADS
	if (st)
		return clgrad_py_raise(st);
	Py_RETURN_NONE;
}

typedef struct {
	PyObject *on_token;         /* callable(id) -> truthy to stop, or NULL */
	const clg_tokenizer *tok;   /* for stop strings, or NULL */
	int failed;                 /* a Python exception is pending */
} gen_user;

static size_t gen_token_text(void *user, int32_t id, char *buf, size_t cap)
{
	gen_user *u = user;
	const unsigned char *b;
	size_t len;

	if (!u->tok || clg_tokenizer_token(u->tok, id, &b, &len))
		return 0;
	len = len < cap ? len : cap;
	memcpy(buf, b, len);
	return len;
}

static int gen_on_token(void *user, int32_t id)
{
	gen_user *u = user;
	PyObject *r;
	int stop;

	if (!u->on_token)
		return 0;
	if (!(r = PyObject_CallFunction(u->on_token, "i", (int)id))) {
		u->failed = 1;
		return 1;
	}
	stop = PyObject_IsTrue(r);
	Py_DECREF(r);
	if (stop < 0) {
		u->failed = 1;
		return 1;
	}
	return stop;
}

/* generate(prompt ids, max_new_tokens, temperature, top_k, top_p, seed, stop_ids, stop strings,
 * tokenizer or None, on_token or None, context, no_cache) -> ids; the GIL stays held (on_token
 * is Python) */
static PyObject *model_generate(ModelObject *self, PyObject *args)
{
	PyObject *prompt_o, *stop_ids_o, *stop_o, *tok_o, *cb, *ret = NULL, *stop_fast = NULL;
	long long max_new, top_k, context;
	double temperature, top_p;
	unsigned long long seed;
	int no_cache;
	clg_generate_opts o = {0};
	gen_user u = {0};
	int32_t *prompt = NULL, *stop_ids = NULL, *out = NULL;
	const char **stops = NULL;
	size_t np = 0, nstop_ids = 0;
	int64_t n_out = 0;
	Py_ssize_t nstop = 0;
	clg_status st;

	if (!PyArg_ParseTuple(args, "OLdLdKOOOOLp", &prompt_o, &max_new, &temperature, &top_k, &top_p, &seed,
			      &stop_ids_o, &stop_o, &tok_o, &cb, &context, &no_cache))
		return NULL;
	if (max_new < 0)
		return PyErr_Format(PyExc_ValueError, "generate: max_new_tokens %lld, expected >= 0", max_new);
	if (tok_o != Py_None && !(u.tok = clgrad_py_tokenizer(tok_o, "generate(tokenizer)")))
		return NULL;
	u.on_token = cb == Py_None ? NULL : cb;
	if (!(prompt = clgrad_py_ids(prompt_o, &np, "generate(prompt)")))
		return NULL;
	if (!(stop_ids = clgrad_py_ids(stop_ids_o, &nstop_ids, "generate(stop_ids)")))
		goto out;
	if (!(stop_fast = PySequence_Fast(stop_o, "generate: stop: expected a sequence of strings")))
		goto out;
	nstop = PySequence_Fast_GET_SIZE(stop_fast);
	if (nstop && !u.tok) {
		PyErr_SetString(PyExc_ValueError, "generate: stop strings need the tokenizer (tokenizer=)");
		goto out;
	}
	if (!(stops = PyMem_RawCalloc((size_t)(nstop ? nstop : 1), sizeof(*stops))) ||
	    !(out = PyMem_RawMalloc(sizeof(int32_t) * (size_t)(max_new ? max_new : 1)))) {
		PyErr_NoMemory();
		goto out;
	}
	for (Py_ssize_t i = 0; i < nstop; i++) {
		PyObject *v = PySequence_Fast_GET_ITEM(stop_fast, i);
		if (!PyBytes_Check(v)) {
			PyErr_Format(PyExc_TypeError, "generate: stop %zd is %.50s, not bytes", i, Py_TYPE(v)->tp_name);
			goto out;
		}
		stops[i] = PyBytes_AS_STRING(v);
	}
	o = (clg_generate_opts){.max_new_tokens = max_new, .temperature = temperature, .top_k = top_k, .top_p = top_p,
				.seed = seed, .stop_ids = stop_ids, .n_stop_ids = (int)nstop_ids, .stop = stops,
				.n_stop = (int)nstop, .token_text = gen_token_text, .on_token = gen_on_token, .user = &u,
				.context = context, .no_cache = no_cache};
	st = clg_generate(self->m, prompt, (int64_t)np, &o, out, &n_out);
	if (u.failed) /* the callback's exception */
		goto out;
	ret = st ? clgrad_py_raise(st) : clgrad_py_id_list(out, (size_t)n_out);
out:
	PyMem_RawFree(out);
	PyMem_RawFree(stops);
	Py_XDECREF(stop_fast);
	PyMem_RawFree(stop_ids);
	PyMem_RawFree(prompt);
	return ret;
}

/* kv_cache(batch, max_len) -> KVCache (gpt models) */
static PyObject *model_kv_cache(ModelObject *self, PyObject *args)
{
	long long batch, max_len;
	CacheObject *o;
	clg_status st;

	if (!PyArg_ParseTuple(args, "LL", &batch, &max_len))
		return NULL;
	if (!(o = PyObject_New(CacheObject, &CacheType)))
		return NULL;
	o->c = NULL;
	Py_INCREF(self);
	o->model = (PyObject *)self;
	if ((st = clg_kv_cache_new(self->m, batch, max_len, &o->c))) {
		Py_DECREF(o);
		return clgrad_py_raise(st);
	}
	return (PyObject *)o;
}

/* ckpt_load(path): parameters and buffers from a `clgrad train --save` checkpoint */
static PyObject *model_ckpt_load(ModelObject *self, PyObject *args)
{
	const char *path;
	clg_status st;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = clg_ckpt_load(path, self->m, NULL);
	Py_END_ALLOW_THREADS
	if (st)
		return clgrad_py_raise(st);
	Py_RETURN_NONE;
}

/* ckpt_save(path, tokenizer or None, epochs_done, seed): a checkpoint `clgrad generate` / `eval` read */
static PyObject *model_ckpt_save(ModelObject *self, PyObject *args)
{
	const char *path;
	PyObject *to;
	long long epochs;
	unsigned long long seed;
	const clg_tokenizer *tok = NULL;
	char *ts = NULL;
	clg_ckpt_meta meta = {0};
	clg_status st;

	if (!PyArg_ParseTuple(args, "sOLK", &path, &to, &epochs, &seed) ||
	    (to != Py_None && !(tok = clgrad_py_tokenizer(to, "save_checkpoint(tokenizer)"))))
		return NULL;
	if (tok && (st = clg_tokenizer_to_string(tok, &ts)))
		return clgrad_py_raise(st);
	meta.model = self->cfg;
	snprintf(meta.model_name, sizeof(meta.model_name), "%s", self->name);
	meta.model.name = meta.model_name;
	meta.epochs_done = epochs;
	meta.seed = seed;
	meta.tokenizer = ts;
	Py_BEGIN_ALLOW_THREADS
	st = clg_ckpt_save(path, self->m, NULL, &meta);
	Py_END_ALLOW_THREADS
	free(ts);
	if (st)
		return clgrad_py_raise(st);
	Py_RETURN_NONE;
}

static PyMethodDef model_methods[] = {
	{"state", (PyCFunction)model_state, METH_NOARGS, "[(name, Tensor, is_param)]"},
	{"forward", (PyCFunction)model_forward, METH_O, NULL},
	{"train", (PyCFunction)model_train, METH_VARARGS, NULL},
	{"to", (PyCFunction)model_to, METH_VARARGS, "to(device index): every tensor moved (new tensors)"},
	{"num_params", (PyCFunction)model_num_params, METH_NOARGS, NULL},
	{"gpt2", (PyCFunction)model_gpt2, METH_VARARGS, "gpt2(path, save): GPT-2's safetensors layout"},
	{"generate", (PyCFunction)model_generate, METH_VARARGS, NULL},
	{"kv_cache", (PyCFunction)model_kv_cache, METH_VARARGS, "kv_cache(batch, max_len) -> KVCache"},
	{"ckpt_load", (PyCFunction)model_ckpt_load, METH_VARARGS, NULL},
	{"ckpt_save", (PyCFunction)model_ckpt_save, METH_VARARGS, NULL},
	{NULL},
};

static PyTypeObject ModelType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.Model",
	.tp_basicsize = sizeof(ModelObject),
	.tp_dealloc = (destructor)model_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A built-in model of the C library (frontend/clgrad_models.h).",
	.tp_methods = model_methods,
};

/* ---- KVCache ---- */

/* forward(ids (B, T) int32) -> logits (B * T, vocab) at the positions after those held */
static PyObject *cache_forward(CacheObject *self, PyObject *arg)
{
	clg_tensor *ids = clgrad_py_tensor(arg, "KVCache.forward(ids)"), *y;

	if (!ids)
		return NULL;
	clg_no_grad_begin();
	y = clg_gpt_forward_cached(((ModelObject *)self->model)->m, self->c, ids);
	clg_no_grad_end();
	return clgrad_py_wrap(y);
}

static PyObject *cache_len(CacheObject *self, PyObject *unused) { return PyLong_FromLongLong(clg_kv_cache_len(self->c)); }

static PyObject *cache_reset(CacheObject *self, PyObject *unused)
{
	clg_kv_cache_reset(self->c);
	Py_RETURN_NONE;
}

static PyMethodDef cache_methods[] = {
	{"forward", (PyCFunction)cache_forward, METH_O, NULL},
	{"len", (PyCFunction)cache_len, METH_NOARGS, "positions held"},
	{"reset", (PyCFunction)cache_reset, METH_NOARGS, NULL},
	{NULL},
};

static PyTypeObject CacheType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.KVCache",
	.tp_basicsize = sizeof(CacheObject),
	.tp_dealloc = (destructor)cache_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A gpt model's KV cache (frontend/clgrad_generate.h).",
	.tp_methods = cache_methods,
};

/* ---- training checkpoints (clgrad_checkpoint.h) ---- */

static PyObject *meta_dict(const clg_ckpt_meta *m)
{
	PyObject *d = config_dict(&m->model), *rest;

	if (!d)
		return NULL;
	rest = Py_BuildValue("{s:s,s:L,s:L,s:K,s:s,s:s,s:d,s:d,s:d,s:d,s:L,s:L,s:s,s:s,s:s}", "model", m->model_name,
			     "epochs_done", (long long)m->epochs_done, "opt_steps", (long long)m->opt_steps, "seed",
			     (unsigned long long)m->seed, "optimizer", m->optimizer, "loader", m->loader, "lr", m->lr,
			     "momentum", m->momentum, "weight_decay", m->weight_decay, "clip", m->clip, "batch",
			     (long long)m->batch, "warmup", (long long)m->warmup, "schedule", m->schedule, "data", m->data,
			     "data_path", m->data_path);
	if (!rest || PyDict_Update(d, rest)) {
		Py_XDECREF(rest);
		Py_DECREF(d);
		return NULL;
	}
	Py_DECREF(rest);
	return d;
}

/* _C.ckpt_read_meta(path) -> dict */
static PyObject *py_ckpt_read_meta(PyObject *self, PyObject *args)
{
	const char *path;
	clg_ckpt_meta m = {0};
	clg_status st;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	if ((st = clg_ckpt_read_meta(path, &m)))
		return clgrad_py_raise(st);
	return meta_dict(&m);
}

/* _C.ckpt_read_tokenizer(path) -> Tokenizer or None */
static PyObject *py_ckpt_read_tokenizer(PyObject *self, PyObject *args)
{
	const char *path;
	clg_tokenizer *t = NULL;
	clg_status st;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	if ((st = clg_ckpt_read_tokenizer(path, &t)))
		return clgrad_py_raise(st);
	if (!t)
		Py_RETURN_NONE;
	return clgrad_py_tokenizer_wrap(CLG_OK, t);
}

/* _C.ckpt_model(path, device) -> the checkpoint's built-in model, built from its metadata and loaded */
static PyObject *py_ckpt_model(PyObject *self, PyObject *args)
{
	const char *path;
	int device;
	clg_ckpt_meta meta = {0};
	clg_backend *be;
	ModelObject *o;
	clg_status st;

	if (!PyArg_ParseTuple(args, "si", &path, &device) || !(be = clgrad_py_backend(device)))
		return NULL;
	if ((st = clg_ckpt_read_meta(path, &meta)))
		return clgrad_py_raise(st);
	if (!(o = PyObject_New(ModelObject, &ModelType)))
		return NULL;
	o->m = NULL;
	snprintf(o->name, sizeof(o->name), "%s", meta.model_name);
	o->cfg = meta.model;
	o->cfg.name = o->name;
	if (!(o->m = clg_model_build(be, &o->cfg, meta.seed))) {
		Py_DECREF(o);
		return clgrad_py_raise(clg_last_status() ? clg_last_status() : CLG_ERR_FORMAT);
	}
	Py_BEGIN_ALLOW_THREADS
	st = clg_ckpt_load(path, o->m, NULL);
	Py_END_ALLOW_THREADS
	if (st) {
		Py_DECREF(o);
		return clgrad_py_raise(st);
	}
	return (PyObject *)o;
}

/* _C.ckpt_fingerprint(bytes, hash) -> "bytes=N fnv1a64=HEX" */
static PyObject *py_ckpt_fingerprint(PyObject *self, PyObject *args)
{
	long long n;
	unsigned long long h;
	char buf[64];

	if (!PyArg_ParseTuple(args, "LK", &n, &h))
		return NULL;
	clg_ckpt_fingerprint(n, h, buf, sizeof(buf));
	return PyUnicode_FromString(buf);
}

static PyMethodDef models_methods[] = {
	{"model_defaults", py_model_defaults, METH_NOARGS, NULL},
	{"gpt_preset", py_gpt_preset, METH_VARARGS, NULL},
	{"model_build", py_model_build, METH_VARARGS, NULL},
	{"model_is_lm", py_model_is_lm, METH_VARARGS, NULL},
	{"gfnet_block", py_gfnet_block, METH_VARARGS, "gfnet_block(x (B, H, W, D), 9 parameters)"},
	{"ckpt_read_meta", py_ckpt_read_meta, METH_VARARGS, NULL},
	{"ckpt_read_tokenizer", py_ckpt_read_tokenizer, METH_VARARGS, NULL},
	{"ckpt_model", py_ckpt_model, METH_VARARGS, "ckpt_model(path, device) -> Model"},
	{"ckpt_fingerprint", py_ckpt_fingerprint, METH_VARARGS, NULL},
	{NULL},
};

int clgrad_py_models_init(PyObject *m)
{
	if (PyType_Ready(&ModelType) < 0 || PyType_Ready(&CacheType) < 0)
		return -1;
	return PyModule_AddFunctions(m, models_methods);
}
