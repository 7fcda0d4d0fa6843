/* A Python nn.Module as a clg_module (clgrad_py.h): the C module tree that clgrad.Trainer's C
 * trainer trains, mirroring the Python module (one C module per submodule, under the same names,
 * holding the very clg_tensors of its Parameters and buffers), whose root's forward calls the
 * Python module with the GIL taken; and the keeping of a Python exception raised inside a C call
 * until the call returns. */
#include "clgrad_py.h"

#include <string.h>

/* Keeps the pending Python exception (the first one only) and returns the status that stops the
 * C side; the GIL is held. */
clg_status clgrad_py_stash_error(clgrad_py_stash *s, const char *where)
{
	if (!PyErr_Occurred())
		PyErr_SetString(PyExc_RuntimeError, clg_last_error());
	if (!s->type)
		PyErr_Fetch(&s->type, &s->value, &s->tb);
	else
		PyErr_Clear();
	return clg_fail(CLG_ERR_STATE, "trainer: a Python exception in %s", where);
}

/* Raises the kept exception if there is one (returns 1), else leaves things as they are (0). */
int clgrad_py_stash_restore(clgrad_py_stash *s)
{
	if (!s->type)
		return 0;
	PyErr_Restore(s->type, s->value, s->tb);
	s->type = s->value = s->tb = NULL;
	return 1;
}

void clgrad_py_stash_clear(clgrad_py_stash *s)
{
	Py_CLEAR(s->type);
	Py_CLEAR(s->value);
	Py_CLEAR(s->tb);
}

/* ---- a Python nn.Module as a clg_module ---------------------------------------------------- */

typedef struct {
	PyObject *module; /* the Python Module (a strong reference) */
	clgrad_py_stash *stash;  /* where the forward's exceptions go (the Trainer's) */
} shim_root;

/* A new tensor in the current scope that is t (a view, with t's graph behind it): what a forward
 * or loss hands the C trainer, which leaves it to the step's scope. t stays the Python object's. */
clg_tensor *clgrad_py_scoped_alias(clg_tensor *t)
{
	int perm[CLG_MAX_DIMS];
	for (int d = 0; d < clg_ndim(t); d++)
		perm[d] = d;
	return clg_permute(t, perm);
}

/* The Python module's training mode follows the C module's (the trainer's evaluation sets it). */
int clgrad_py_sync_mode(PyObject *module, int training)
{
	PyObject *cur = PyObject_GetAttrString(module, "training"), *r;
	int now;

	if (!cur)
		return -1;
	now = PyObject_IsTrue(cur);
	Py_DECREF(cur);
	if (now < 0)
		return -1;
	if (now == !!training)
		return 0;
	r = PyObject_CallMethod(module, "train", "O", training ? Py_True : Py_False);
	Py_XDECREF(r);
	return r ? 0 : -1;
}

/* Calls the Python fn(a, b) (b may be NULL) on views of the C tensors; the result as a scoped
 * tensor, or NULL with the exception kept. a keeps its graph (the output of a forward); b is
 * data (the batch, the target). */
clg_tensor *clgrad_py_call(PyObject *fn, clg_tensor *a, int a_graph, clg_tensor *b, clgrad_py_stash *stash,
			       const char *where)
{
	PyObject *ao = clgrad_py_wrap(a_graph ? clgrad_py_scoped_alias(a) : clg_detach(a)), *bo = NULL, *res = NULL;
	clg_tensor *out = NULL, *t;

	if (!ao)
		goto out;
	if (b && !(bo = clgrad_py_wrap(clg_detach(b))))
		goto out;
	res = bo ? PyObject_CallFunctionObjArgs(fn, ao, bo, NULL) : PyObject_CallFunctionObjArgs(fn, ao, NULL);
	if (res && (t = clgrad_py_tensor(res, where)) != NULL)
		out = clgrad_py_scoped_alias(t);
	if (!out && !PyErr_Occurred())
		clgrad_py_raise(clg_last_status() ? clg_last_status() : CLG_ERR_STATE);
out:
	if (!out)
		clgrad_py_stash_error(stash, where);
	Py_XDECREF(res);
	Py_XDECREF(bo);
	Py_XDECREF(ao);
	return out;
}

static clg_tensor *shim_forward(clg_module *m, clg_tensor *x)
{
	shim_root *r = m->data;
	PyGILState_STATE g = PyGILState_Ensure();
	clg_tensor *out = NULL;

	if (clgrad_py_sync_mode(r->module, m->training))
		clgrad_py_stash_error(r->stash, "the model's train()/eval()");
	else
		out = clgrad_py_call(r->module, x, 0, NULL, r->stash, "the model's forward");
	PyGILState_Release(g);
	return out;
}

static void shim_destroy(clg_module *m)
{
	shim_root *r = m->data;
	PyGILState_STATE g;

	if (!r)
		return;
	g = PyGILState_Ensure();
	Py_XDECREF(r->module);
	PyGILState_Release(g);
	free(r);
}

static const clg_module_ops shim_root_ops = {.kind = "python", .forward = shim_forward, .destroy = shim_destroy};
static const clg_module_ops shim_child_ops = {.kind = "python submodule"};

typedef struct {
	clg_backend *be;
	clg_tensor **seen; /* tensors added so far: a tensor two modules share is the first one's */
	int nseen, capseen;
} shim_build_ctx;

static int seen_before(shim_build_ctx *c, clg_tensor *t)
{
	for (int i = 0; i < c->nseen; i++)
		if (c->seen[i] == t)
			return 1;
	if (c->nseen == c->capseen) {
		int cap = c->capseen ? 2 * c->capseen : 64;
		void *p = realloc(c->seen, (size_t)cap * sizeof(*c->seen));
		if (!p)
			return -1;
		c->seen = p;
		c->capseen = cap;
	}
	c->seen[c->nseen++] = t;
	return 0;
}

/* Adds the tensors of one of mod's dicts ("_parameters" or "_buffers") to m; -1 with an exception. */
static int add_tensors(shim_build_ctx *c, clg_module *m, PyObject *mod, const char *dict, int params,
		       const char *prefix)
{
	PyObject *d = PyObject_GetAttrString(mod, dict), *key, *val;
	Py_ssize_t pos = 0;
	int rc = -1;

	if (!d)
		return -1;
	if (!PyDict_Check(d)) {
		PyErr_Format(PyExc_TypeError, "Trainer: %s%s is not a dict (is the model a clgrad.nn.Module?)", prefix, dict);
		goto out;
	}
	while (PyDict_Next(d, &pos, &key, &val)) {
		const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
		clg_tensor *t;
		int seen;

		if (val == Py_None)
			continue;
		if (!name || !(t = clgrad_py_tensor(val, "Trainer: a model's parameter or buffer")))
			goto out;
		if (clg_device_of(t) != c->be) {
			PyErr_Format(PyExc_ValueError, "Trainer: %s%s is on device %d, the trainer's is %d (model.to(device) first)",
				     prefix, name, clgrad_py_device_index(clg_device_of(t)), clgrad_py_device_index(c->be));
			goto out;
		}
		if ((seen = seen_before(c, t)) < 0) {
			PyErr_NoMemory();
			goto out;
		}
		/* a frozen parameter (requires_grad off) rides along as a buffer: saved, not stepped */
		if (!seen && clg_module_add_tensor(m, name, clg_retain(t), params && clg_requires_grad(t))) {
			clgrad_py_raise(clg_last_status());
			goto out;
		}
	}
	rc = 0;
out:
	Py_DECREF(d);
	return rc;
}

/* The C module mirroring the Python module mod (and its children, under the same names), or NULL
 * with an exception. prefix: mod's state-name prefix, for messages. */
static clg_module *shim_tree(shim_build_ctx *c, PyObject *mod, int root, const char *prefix)
{
	clg_module *m = clg_module_new(root ? &shim_root_ops : &shim_child_ops);
	PyObject *kids = NULL, *key, *val;
	Py_ssize_t pos = 0;
	char sub[512];

	if (!m) {
		clgrad_py_raise(clg_last_status());
		return NULL;
	}
	if (add_tensors(c, m, mod, "_parameters", 1, prefix) || add_tensors(c, m, mod, "_buffers", 0, prefix) ||
	    !(kids = PyObject_GetAttrString(mod, "_modules")))
		goto fail;
	if (!PyDict_Check(kids)) {
		PyErr_Format(PyExc_TypeError, "Trainer: %s_modules is not a dict (is the model a clgrad.nn.Module?)", prefix);
		goto fail;
	}
	while (PyDict_Next(kids, &pos, &key, &val)) {
		const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
		clg_module *child;

		if (val == Py_None)
			continue;
		if (!name)
			goto fail;
		snprintf(sub, sizeof(sub), "%s%s.", prefix, name);
		if (!(child = shim_tree(c, val, 0, sub)))
			goto fail;
		if (clg_module_add_child(m, name, child)) { /* child freed by the add */
			clgrad_py_raise(clg_last_status());
			goto fail;
		}
	}
	Py_DECREF(kids);
	return m;
fail:
	Py_XDECREF(kids);
	clg_module_free(m);
	return NULL;
}

/* The shim of Python module mod on be (its tensors must be there), or NULL with an exception. */
clg_module *clgrad_py_shim_build(PyObject *mod, clg_backend *be, clgrad_py_stash *stash)
{
	shim_build_ctx c = {.be = be};
	shim_root *r = calloc(1, sizeof(*r));
	clg_module *m = r ? shim_tree(&c, mod, 1, "") : NULL;

	free(c.seen);
	if (!r) {
		PyErr_NoMemory();
		return NULL;
	}
	if (!m) {
		free(r);
		return NULL;
	}
	Py_INCREF(mod);
	r->module = mod;
	r->stash = stash;
	m->data = r;
	return m;
}
