/* clgrad._C.Trainer: the C trainer (frontend/clgrad_train.h) driven from Python (clgrad/trainer.py
 * wraps it). The model is a built-in one by name, or a Python nn.Module: then the trainer trains a
 * tree of C modules mirroring the Python one (one per submodule, holding the very clg_tensors of
 * its Parameters and buffers), whose root's forward calls the Python module. So the C trainer's
 * optimizer (groups without decay for biases and norms), schedule, clipping, mixed precision,
 * evaluation, checkpoints and resume all act on the Python model's own tensors, and no training
 * loop is written twice.
 *
 * The GIL stays held through a run (a backend is used by one thread at a time: no other Python
 * thread may queue work on it meanwhile); the callbacks take it with PyGILState_Ensure all the
 * same. A Python exception raised inside the run (the forward, a loss, a callback, Ctrl-C seen by
 * the check before each step) is kept, stops the run through a failing status, and is raised
 * again, unchanged, when clg_trainer_run returns. */
#include "clgrad_py.h"

#include <clgrad_train.h>

#include <string.h>

/* ---- the Trainer object -------------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	clg_trainer *t;
	clg_train_config cfg;
	clg_backend *bes[CLG_TRAIN_MAX_DEVICES];
	int nbes;
	char name[32];        /* cfg.model.name */
	PyObject *save;       /* the bytes cfg.save points into, or NULL */
	PyObject *model;      /* the Python Module, or NULL (a built-in model) */
	PyObject *train, *test; /* the Datasets the C trainer borrows */
	PyObject *loss_fn;    /* a Python loss(output, target), or NULL: the task's */
	clg_task task;        /* the task, with loss_fn as its loss where given */
	PyObject *sink;       /* during run(): the object whose _step_end / _epoch_begin / _epoch_end get the news */
	int64_t log_every;    /* sink._step_end: every this many steps and at an epoch's last (0: never) */
	int64_t steps;        /* of the epoch running */
	clgrad_py_stash stash;
} TrainerObject;

static clg_module *build_python(clg_backend *be, uint64_t seed, void *user)
{
	TrainerObject *self = user;
	(void)seed; /* the Python model was initialised by its own code (clgrad.manual_seed) */
	clg_module *m = clgrad_py_shim_build(self->model, be, &self->stash);
	if (!m)
		clgrad_py_stash_error(&self->stash, "building the model");
	return m;
}

static clg_tensor *python_loss(void *user, clg_tensor *out, clg_tensor *target)
{
	TrainerObject *self = user;
	PyGILState_STATE g = PyGILState_Ensure();
	clg_tensor *l = clgrad_py_call(self->loss_fn, out, 1, target, &self->stash, "the loss");
	PyGILState_Release(g);
	return l;
}

/* cfg[key] as a double / int64 / string (default where absent or None); -1 with an exception. */
static int cfg_double(PyObject *d, const char *key, double *out)
{
	PyObject *v = PyDict_GetItemString(d, key);
	if (!v || v == Py_None)
		return 0;
	*out = PyFloat_AsDouble(v);
	return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static int cfg_int(PyObject *d, const char *key, int64_t *out)
{
	PyObject *v = PyDict_GetItemString(d, key);
	if (!v || v == Py_None)
		return 0;
	*out = PyLong_AsLongLong(v);
	return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int cfg_str(PyObject *d, const char *key, const char **out)
{
	PyObject *v = PyDict_GetItemString(d, key);
	if (!v || v == Py_None)
		return 0;
	if (!PyUnicode_Check(v)) {
		PyErr_Format(PyExc_TypeError, "Trainer: %s: expected a str, got %.100s", key, Py_TYPE(v)->tp_name);
		return -1;
	}
	return (*out = PyUnicode_AsUTF8(v)) ? 0 : -1;
}

static int bad_name(const char *what, const char *name, const char *accepted)
{
	PyErr_Format(PyExc_ValueError, "Trainer: %s '%s': expected %s", what, name, accepted);
	return -1;
}

/* The configuration from the dict Python passes (clgrad/trainer.py names every key). */
static int parse_config(TrainerObject *self, PyObject *d)
{
	clg_train_config *c = &self->cfg;
	const char *opt = "adam", *sched = "constant", *prec = "fp32", *task = NULL, *save = NULL, *name = NULL;
	int64_t nesterov = 0, amsgrad = 0, wd_all = 0, fixed = 0;
	double b1 = 0, b2 = 0;

	*c = clg_train_config_default();
	if (cfg_str(d, "optimizer", &opt) || cfg_str(d, "schedule", &sched) || cfg_str(d, "precision", &prec) ||
	    cfg_str(d, "task", &task) || cfg_str(d, "save", &save) || cfg_str(d, "name", &name))
		return -1;
	if (clg_opt_kind_parse(opt, &c->optim.kind))
		return bad_name("optimizer", opt, "sgd, adam or adamw");
	if (clg_lr_kind_parse(sched, &c->schedule))
		return bad_name("schedule", sched, "constant, step or cosine");
	if (clg_precision_parse(prec, &c->precision))
		return bad_name("precision", prec, "fp32 or mixed");
	if (task && !(c->task = clg_task_by_name(task)))
		return bad_name("task", task,
				"classification, language_model, regression, reconstruction or reconstruction_mse");
	c->optim.weight_decay = c->optim.kind == CLG_OPT_ADAMW ? 0.01 : 0; /* PyTorch's defaults */
	if (cfg_double(d, "lr", &c->optim.lr) || cfg_double(d, "momentum", &c->optim.momentum) ||
	    cfg_double(d, "dampening", &c->optim.dampening) || cfg_int(d, "nesterov", &nesterov) ||
	    cfg_double(d, "beta1", &b1) || cfg_double(d, "beta2", &b2) || cfg_double(d, "eps", &c->optim.eps) ||
	    cfg_double(d, "weight_decay", &c->optim.weight_decay) || cfg_int(d, "amsgrad", &amsgrad) ||
	    cfg_int(d, "weight_decay_all", &wd_all) || cfg_int(d, "warmup", &c->warmup) ||
	    cfg_int(d, "epochs", &c->epochs) || cfg_int(d, "batch", &c->batch) || cfg_double(d, "clip", &c->clip) ||
	    cfg_int(d, "stop_after", &c->stop_after) || cfg_int(d, "max_steps", &c->max_steps) ||
	    cfg_double(d, "loss_scale", &c->loss_scale) || cfg_int(d, "fixed_shares", &fixed) ||
	    cfg_int(d, "vocab", &c->model.vocab) || cfg_int(d, "seq_len", &c->model.seq_len) ||
	    cfg_int(d, "dim", &c->model.dim) || cfg_int(d, "heads", &c->model.heads) ||
	    cfg_int(d, "layers", &c->model.layers) || cfg_int(d, "log_every", &self->log_every))
		return -1;
	{
		PyObject *s = PyDict_GetItemString(d, "seed");
		if (s && s != Py_None && (c->seed = PyLong_AsUnsignedLongLongMask(s)) == (uint64_t)-1 && PyErr_Occurred())
			return -1;
	}
	c->optim.nesterov = (int)nesterov;
	c->optim.amsgrad = (int)amsgrad;
	c->optim.beta1 = b1;
	c->optim.beta2 = b2;
	c->weight_decay_all = (int)wd_all;
	c->fixed_shares = (int)fixed;
	if (name)
		snprintf(self->name, sizeof(self->name), "%s", name);
	c->model.name = self->name;
	if (save) {
		if (!(self->save = PyUnicode_EncodeFSDefault(PyDict_GetItemString(d, "save"))))
			return -1;
		c->save = PyBytes_AS_STRING(self->save);
	}
	return 0;
}

/* _C.Trainer(model, config, devices): model a built-in's name or a Python Module (one device) */
static int trainer_init(TrainerObject *self, PyObject *args, PyObject *kw)
{
	PyObject *model, *config, *devices, *loss = NULL;
	Py_ssize_t n;

	if (self->nbes) {
		PyErr_SetString(PyExc_RuntimeError, "Trainer: already initialised");
		return -1;
	}
	if (!PyArg_ParseTuple(args, "OO!O!|O", &model, &PyDict_Type, &config, &PyTuple_Type, &devices, &loss))
		return -1;
	n = PyTuple_GET_SIZE(devices);
	if (n < 1 || n > CLG_TRAIN_MAX_DEVICES) {
		PyErr_Format(PyExc_ValueError, "Trainer: %zd devices (expected 1 to %d)", n, CLG_TRAIN_MAX_DEVICES);
		return -1;
	}
	if (!PyUnicode_Check(model) && n > 1) {
		PyErr_SetString(PyExc_ValueError, "Trainer: a Python model trains on one device (devices=[...] is for the "
						  "built-in models)");
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		long idx = PyLong_AsLong(PyTuple_GET_ITEM(devices, i));
		if ((idx == -1 && PyErr_Occurred()) || !(self->bes[i] = clgrad_py_backend((int)idx)))
			return -1;
	}
	self->nbes = (int)n;
	if (PyUnicode_Check(model)) {
		const char *s = PyUnicode_AsUTF8(model);
		if (!s)
			return -1;
		snprintf(self->name, sizeof(self->name), "%s", s);
	} else {
		snprintf(self->name, sizeof(self->name), "%s", Py_TYPE(model)->tp_name);
		Py_INCREF(model);
		self->model = model;
	}
	if (parse_config(self, config))
		return -1;
	if (self->model) {
		self->cfg.build = build_python;
		self->cfg.build_user = self;
	}
	if (loss && loss != Py_None) {
		if (!PyCallable_Check(loss)) {
			PyErr_SetString(PyExc_TypeError, "Trainer: loss: expected a callable loss(output, target)");
			return -1;
		}
		self->task = *(self->cfg.task ? self->cfg.task : clg_task_classification());
		self->task.loss = python_loss;
		Py_INCREF(loss);
		self->loss_fn = loss;
		self->cfg.task = &self->task;
		self->cfg.task_user = self;
	}
	return 0;
}

static void trainer_dealloc(TrainerObject *self)
{
	clg_trainer_free(self->t);
	clgrad_py_stash_clear(&self->stash);
	Py_XDECREF(self->model);
	Py_XDECREF(self->train);
	Py_XDECREF(self->test);
	Py_XDECREF(self->loss_fn);
	Py_XDECREF(self->save);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* NULL with the exception of a failed C call: the kept Python one where there is one. */
static PyObject *fail(TrainerObject *self, clg_status st)
{
	if (clgrad_py_stash_restore(&self->stash))
		return NULL;
	return clgrad_py_raise(st);
}

/* setup(train, test=None): makes the C trainer over these Datasets (kept alive here) */
static PyObject *trainer_setup(TrainerObject *self, PyObject *args)
{
	PyObject *train, *test = Py_None;
	const clg_dataset *dtrain, *dtest = NULL;
	clg_status st;

	if (!PyArg_ParseTuple(args, "O|O", &train, &test) || !(dtrain = clgrad_py_dataset(train, "fit(train)")) ||
	    (test != Py_None && !(dtest = clgrad_py_dataset(test, "fit(test)"))))
		return NULL;
	if (self->t) {
		PyErr_SetString(PyExc_RuntimeError, "Trainer: set up already");
		return NULL;
	}
	st = clg_trainer_new_multi(self->bes, self->nbes, &self->cfg, dtrain, dtest, &self->t);
	if (st)
		return fail(self, st);
	Py_INCREF(train);
	self->train = train;
	if (dtest) {
		Py_INCREF(test);
		self->test = test;
	}
	Py_RETURN_NONE;
}

static int need_trainer(TrainerObject *self)
{
	if (self->t)
		return 0;
	PyErr_SetString(PyExc_RuntimeError, "Trainer: call fit() first (the C trainer is made over its datasets)");
	return -1;
}

/* A Python model's training mode as the C model's (the trainer's evaluation left it so). */
static int follow_mode(TrainerObject *self)
{
	return self->model && self->t ? clgrad_py_sync_mode(self->model, clg_trainer_model(self->t)->training) : 0;
}

/* ---- callbacks of a run (the GIL is held throughout; Ensure is cheap then) ---- */

static clg_status on_step_begin(void *user, int64_t step)
{
	TrainerObject *self = user;
	PyGILState_STATE g = PyGILState_Ensure();
	clg_status st = CLG_OK;

	(void)step;
	if (self->stash.type) /* a callback's exception after the last step */
		st = clg_fail(CLG_ERR_STATE, "trainer: a Python exception in a callback");
	else if (PyErr_CheckSignals()) /* Ctrl-C: KeyboardInterrupt, between two steps */
		st = clgrad_py_stash_error(&self->stash, "a signal handler");
	PyGILState_Release(g);
	return st;
}

static void on_epoch_begin(void *user, int64_t epoch, int64_t epochs, int64_t steps)
{
	TrainerObject *self = user;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *r;

	self->steps = steps;
	if (!self->stash.type) {
		r = PyObject_CallMethod(self->sink, "_epoch_begin", "LLL", (long long)epoch, (long long)epochs,
					(long long)steps);
		if (!r)
			clgrad_py_stash_error(&self->stash, "on_epoch_begin");
		Py_XDECREF(r);
	}
	PyGILState_Release(g);
}

static int on_loss_due(void *user, int64_t step)
{
	TrainerObject *self = user;
	return self->log_every > 0 && (step % self->log_every == 0 || step == self->steps);
}

static void on_step_end(void *user, const clg_step_info *si)
{
	TrainerObject *self = user;
	PyGILState_STATE g;
	PyObject *r;

	if (!on_loss_due(user, si->step))
		return;
	g = PyGILState_Ensure();
	if (!self->stash.type) {
		r = PyObject_CallMethod(self->sink, "_step_end", "{s:L,s:L,s:L,s:L,s:d,s:d}", "epoch", (long long)si->epoch,
					"step", (long long)si->step, "steps", (long long)si->steps, "samples",
					(long long)si->samples, "loss", si->loss, "step_loss", si->step_loss);
		if (!r)
			clgrad_py_stash_error(&self->stash, "on_step_end");
		Py_XDECREF(r);
	}
	PyGILState_Release(g);
}

static PyObject *per_device(const uint64_t *v, int n)
{
	PyObject *l = PyList_New(n);
	for (int i = 0; l && i < n; i++) {
		PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
		if (!x) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, i, x);
	}
	return l;
}

static PyObject *epoch_dict(const clg_epoch_info *e)
{
	PyObject *peak = per_device(e->peak_bytes, e->replicas), *live = per_device(e->live_bytes, e->replicas);
	PyObject *d = peak && live ? Py_BuildValue(
		"{s:L,s:L,s:L,s:L,s:d,s:d,s:d,s:z,s:d,s:d,s:d,s:d,s:z,s:i,s:d,s:L,s:O,s:O,s:K,s:d}", "epoch",
		(long long)e->epoch, "epochs", (long long)e->epochs, "steps", (long long)e->steps, "samples",
		(long long)e->samples, "train_loss", e->train_loss, "test_acc", e->test_acc, "test_metric", e->test_metric,
		"metric_name", e->metric_name, "test_loss", e->test_loss, "seconds", e->seconds, "host_seconds",
		e->host_seconds, "lr", e->lr, "saved", e->saved, "replicas", e->replicas, "loss_scale", e->loss_scale,
		"skipped_steps", (long long)e->skipped_steps, "peak_bytes", peak, "live_bytes", live, "launches",
		(unsigned long long)e->launches, "samples_per_s", e->seconds > 0 ? (double)e->samples / e->seconds : 0.0)
		: NULL;
	Py_XDECREF(peak);
	Py_XDECREF(live);
	return d;
}

static clg_status on_epoch_end(void *user, const clg_epoch_info *info)
{
	TrainerObject *self = user;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *d = self->stash.type ? NULL : epoch_dict(info), *r = NULL;
	clg_status st = CLG_OK;

	if (self->stash.type)
		st = clg_fail(CLG_ERR_STATE, "trainer: a Python exception in a callback");
	else if (!d || !(r = PyObject_CallMethod(self->sink, "_epoch_end", "O", d)) || PyErr_CheckSignals())
		st = clgrad_py_stash_error(&self->stash, "on_epoch_end");
	Py_XDECREF(r);
	Py_XDECREF(d);
	PyGILState_Release(g);
	return st;
}

/* run(sink): trains (clg_trainer_run) telling sink._epoch_begin(epoch, epochs, steps),
 * sink._step_end(info) every log_every steps, sink._epoch_end(info) */
static PyObject *trainer_run(TrainerObject *self, PyObject *sink)
{
	clg_train_callbacks cb = {.user = self, .epoch_begin = on_epoch_begin, .loss_due = on_loss_due,
				  .step_end = on_step_end, .epoch_end = on_epoch_end, .step_begin = on_step_begin};
	clg_status st;

	if (need_trainer(self))
		return NULL;
	if (self->sink) {
		PyErr_SetString(PyExc_RuntimeError, "Trainer: fit() is running already");
		return NULL;
	}
	clgrad_py_stash_clear(&self->stash);
	self->sink = sink;
	st = clg_trainer_run(self->t, &cb);
	self->sink = NULL;
	if (!st && follow_mode(self))
		clgrad_py_stash_error(&self->stash, "the model's train()");
	if (st || self->stash.type)
		return fail(self, st);
	Py_RETURN_NONE;
}

/* evaluate(dataset) -> (metric, loss): with the C trainer's task and batch; before fit() (a Python
 * model only) through a model made for the call */
static PyObject *trainer_evaluate(TrainerObject *self, PyObject *arg)
{
	const clg_dataset *ds = clgrad_py_dataset(arg, "evaluate(dataset)");
	double metric = 0, loss = 0;
	clg_status st;

	if (!ds)
		return NULL;
	clgrad_py_stash_clear(&self->stash);
	if (self->t) {
		st = clg_trainer_evaluate(self->t, ds, &metric, &loss);
		if (!st && follow_mode(self))
			st = clgrad_py_stash_error(&self->stash, "the model's train()");
	} else if (self->model) {
		clg_module *m = clgrad_py_shim_build(self->model, self->bes[0], &self->stash);
		const clg_task *task = self->cfg.task ? self->cfg.task : clg_task_classification();
		if (!m)
			return NULL;
		st = clg_evaluate(m, self->bes[0], ds, task, self->cfg.task_user, self->cfg.batch, &metric, &loss);
		if (!st && clgrad_py_sync_mode(self->model, m->training))
			st = clgrad_py_stash_error(&self->stash, "the model's train()");
		clg_module_free(m);
	} else {
		need_trainer(self);
		return NULL;
	}
	if (st || self->stash.type)
		return fail(self, st);
	return Py_BuildValue("dd", metric, loss);
}

/* save(path) / load(path): a checkpoint of the run as it stands (atomic), or resume from one */
static PyObject *trainer_file(TrainerObject *self, PyObject *args, clg_status (*fn)(clg_trainer *, const char *))
{
	PyObject *path;
	clg_status st;

	if (need_trainer(self) || !PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
		return NULL;
	st = fn(self->t, PyBytes_AS_STRING(path));
	Py_DECREF(path);
	if (st)
		return fail(self, st);
	Py_RETURN_NONE;
}

static PyObject *trainer_save(TrainerObject *self, PyObject *args) { return trainer_file(self, args, clg_trainer_save); }
static PyObject *trainer_load(TrainerObject *self, PyObject *args) { return trainer_file(self, args, clg_trainer_load); }

/* state() -> [(name, Tensor)]: the trained model's parameters and buffers (the tensors themselves) */
static PyObject *trainer_state(TrainerObject *self, PyObject *a)
{
	clg_named_tensors l;
	PyObject *out;
	clg_status st;

	if (need_trainer(self))
		return NULL;
	if ((st = clg_module_state(clg_trainer_model(self->t), 1, &l)))
		return clgrad_py_raise(st);
	out = PyList_New(l.n);
	for (int i = 0; out && i < l.n; i++) {
		PyObject *t = clgrad_py_wrap(clg_retain(l.tensors[i]));
		PyObject *item = t ? Py_BuildValue("sN", l.names[i], t) : NULL;
		if (!item) {
			Py_CLEAR(out);
			break;
		}
		PyList_SET_ITEM(out, i, item);
	}
	clg_named_tensors_free(&l);
	return out;
}

static PyObject *trainer_epochs_done(TrainerObject *self, void *c)
{
	return PyLong_FromLongLong(self->t ? clg_trainer_epochs_done(self->t) : 0);
}

static PyObject *trainer_steps_per_epoch(TrainerObject *self, void *c)
{
	return self->t ? PyLong_FromLongLong(clg_trainer_steps_per_epoch(self->t)) : (Py_INCREF(Py_None), Py_None);
}

static PyObject *trainer_metric_name(TrainerObject *self, void *c)
{
	const clg_task *task = self->t ? clg_trainer_task(self->t) : self->cfg.task;
	if (!task) /* before fit(): the default of the model */
		task = self->model || strcmp(self->name, "transformer") ? clg_task_classification() : clg_task_language_model();
	if (!task->metric || !task->metric_name)
		Py_RETURN_NONE;
	return PyUnicode_FromString(task->metric_name);
}

static PyObject *trainer_model_name(TrainerObject *self, void *c) { return PyUnicode_FromString(self->name); }

/* memory_estimate(nparams, rows) -> dict of bytes: what a step needs on the first device */
static PyObject *trainer_memory_estimate(TrainerObject *self, PyObject *args)
{
	long long nparams, rows;
	clg_memory_estimate e = {0};
	clg_status st;

	if (!PyArg_ParseTuple(args, "LL", &nparams, &rows))
		return NULL;
	if ((st = clg_train_memory_estimate(&self->cfg, self->bes[0], nparams, rows, &e)))
		return clgrad_py_raise(st);
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:s,s:O}", "params", (unsigned long long)e.params, "grads",
			     (unsigned long long)e.grads, "optim", (unsigned long long)e.optim, "activations",
			     (unsigned long long)e.activations, "activations_recompute",
			     (unsigned long long)e.activations_recompute, "total", (unsigned long long)e.total, "largest",
			     (unsigned long long)e.largest, "largest_what", e.largest_what ? e.largest_what : "", "exact",
			     e.exact ? Py_True : Py_False);
}

static PyMethodDef trainer_methods[] = {
	{"setup", (PyCFunction)trainer_setup, METH_VARARGS, "setup(train, test=None): the C trainer over these datasets"},
	{"run", (PyCFunction)trainer_run, METH_O, "run(sink): trains to the configured epochs"},
	{"evaluate", (PyCFunction)trainer_evaluate, METH_O, "evaluate(dataset) -> (metric, loss)"},
	{"save", (PyCFunction)trainer_save, METH_VARARGS, "save(path): a checkpoint of the run as it stands"},
	{"load", (PyCFunction)trainer_load, METH_VARARGS, "load(path): resume from a checkpoint"},
	{"state", (PyCFunction)trainer_state, METH_NOARGS, "[(name, Tensor)] of the trained model"},
	{"memory_estimate", (PyCFunction)trainer_memory_estimate, METH_VARARGS, "memory_estimate(nparams, rows) -> dict"},
	{NULL},
};

static PyGetSetDef trainer_getset[] = {
	{"epochs_done", (getter)trainer_epochs_done, NULL, NULL, NULL},
	{"steps_per_epoch", (getter)trainer_steps_per_epoch, NULL, NULL, NULL},
	{"metric_name", (getter)trainer_metric_name, NULL, NULL, NULL},
	{"model_name", (getter)trainer_model_name, NULL, NULL, NULL},
	{NULL},
};

static PyTypeObject TrainerType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "clgrad._C.Trainer",
	.tp_basicsize = sizeof(TrainerObject),
	.tp_dealloc = (destructor)trainer_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The C library's trainer (clgrad.Trainer wraps it).",
	.tp_methods = trainer_methods,
	.tp_getset = trainer_getset,
	.tp_init = (initproc)trainer_init,
	.tp_new = PyType_GenericNew,
};

int clgrad_py_trainer_init(PyObject *m)
{
	if (PyType_Ready(&TrainerType) < 0)
		return -1;
	Py_INCREF(&TrainerType);
	if (PyModule_AddObject(m, "Trainer", (PyObject *)&TrainerType)) {
		Py_DECREF(&TrainerType);
		return -1;
	}
	return 0;
}
