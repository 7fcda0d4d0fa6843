/* Training tasks (clgrad_train.h): the built-in losses and metrics (classification, language
 * modelling, regression, reconstruction), one step's transform-forward-loss shared by the trainer
 * and its replicas, and evaluation without a trainer. */
#include "trainer_internal.h"
#include "fe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- built-in losses and metrics ---- */

/* out as target's shape when their sizes agree (a model's (B, 1) output for (B) targets must not
 * broadcast to (B, B)); a new reference, NULL with the message naming both shapes. */
static clg_tensor *as_target(const char *task, clg_tensor *out, clg_tensor *target)
{
	if (!out || !target)
		return fe_fail(clg_last_status() ? clg_last_status()
						 : clg_fail(CLG_ERR_INVALID, "%s: no %s", task, out ? "target" : "output"));
	if (clg_numel(out) != clg_numel(target))
		return fe_fail(clg_fail(CLG_ERR_SHAPE,
					"%s on %s: the model gave %lld values for a batch of %lld target values (output "
					"dims %d, first %lld; target dims %d, first %lld)",
					task, clg_device_of(out)->info.name, (long long)clg_numel(out),
					(long long)clg_numel(target), clg_ndim(out), clg_ndim(out) ? (long long)clg_shape(out)[0] : 1LL,
					clg_ndim(target), clg_ndim(target) ? (long long)clg_shape(target)[0] : 1LL));
	return clg_reshape(out, clg_ndim(target), clg_shape(target));
}

/* cross-entropy of logits (N, C) against one-hot rows reshaped to (N, C) */
static clg_tensor *xent_loss(void *user, clg_tensor *out, clg_tensor *target)
{
	clg_tensor *t, *l;
	(void)user;
	if (!out || !target)
		return fe_fail(clg_last_status() ? clg_last_status() : clg_fail(CLG_ERR_INVALID, "cross-entropy: no %s",
										    out ? "labels" : "logits"));
	if (clg_ndim(out) < 2)
		return fe_fail(clg_fail(CLG_ERR_SHAPE, "classification on %s: the model gave %d-D output, not logits (B, C)",
					clg_device_of(out)->info.name, clg_ndim(out)));
	/* logits (B, T, V) of a language model: rows of V */
	t = clg_reshape(target, CLG_SHAPE(-1, clg_shape(out)[clg_ndim(out) - 1]));
	clg_tensor *o = clg_ndim(out) == 2 ? out : clg_reshape(out, CLG_SHAPE(-1, clg_shape(out)[clg_ndim(out) - 1]));
	l = clg_cross_entropy(o, t, 0.0);
	clg_free(t);
	if (o != out)
		clg_free(o);
	return l;
}

/* correct predictions of a batch: argmax of the logits against argmax of the one-hot rows */
static clg_status accuracy(void *user, clg_tensor *out, clg_tensor *target, double *sum, double *count)
{
	if (!out || !target || clg_ndim(out) < 1)
		return clg_fail(CLG_ERR_INVALID, "accuracy: no %s", target ? "logits" : "labels");
	int64_t C = clg_shape(out)[clg_ndim(out) - 1], rows = clg_numel(out) / (C > 0 ? C : 1);
	clg_tensor *o = clg_reshape(out, CLG_SHAPE(rows, C)), *t = clg_reshape(target, CLG_SHAPE(-1, C));
	clg_tensor *po = clg_argmax(o), *pt = clg_argmax(t);
	int32_t *a = malloc(sizeof(int32_t) * (size_t)(2 * rows + 1));
	clg_status st = !po || !pt ? clg_last_status()
		      : !a	   ? clg_fail(CLG_ERR_OOM, "accuracy: out of host memory for %lld rows", (long long)rows)
		      : clg_numel(pt) != rows
			  ? clg_fail(CLG_ERR_SHAPE, "accuracy: %lld rows of logits for %lld of labels", (long long)rows,
				     (long long)clg_numel(pt))
			  : CLG_OK;
	(void)user;
	if (!st)
		st = clg_to_host(po, a, sizeof(int32_t) * (size_t)rows);
	if (!st)
		st = clg_to_host(pt, a + rows, sizeof(int32_t) * (size_t)rows);
	for (int64_t i = 0; !st && i < rows; i++)
		*sum += a[i] == a[rows + i];
	*count += (double)rows;
	free(a);
	clg_free(po), clg_free(pt), clg_free(o), clg_free(t);
	return st;
}

static clg_tensor *mse(void *user, clg_tensor *out, clg_tensor *target)
{
	clg_tensor *o, *l;
	(void)user;
	if (target && clg_dtype_of(target) == CLG_I32)
		return fe_fail(clg_fail(CLG_ERR_DTYPE, "regression on %s: int32 labels are not float targets (a dataset with "
						       "yf: clg_dataset_init_ex with CLG_F32 targets)",
					clg_device_of(target)->info.name));
	o = as_target("mse loss", out, target);
	l = clg_mse_loss(o, target);
	clg_free(o);
	return l;
}

/* the sum of squared errors and the number of values (the device sums, one value comes back) */
static clg_status squared_error(void *user, clg_tensor *out, clg_tensor *target, double *sum, double *count)
{
	clg_tensor *o = as_target("squared error", out, target), *d = clg_sub(o, target), *d2 = clg_mul(d, d);
	clg_tensor *s = clg_sum(d2, 0, NULL, 0);
	double v = 0;
	clg_status st = s ? clg_item(s, &v) : clg_last_status();
	(void)user;
	*sum += v;
	*count += target ? (double)clg_numel(target) : 0;
	clg_free(o), clg_free(d), clg_free(d2), clg_free(s);
	return st;
}

static double rmse_final(void *user, double sum, double count) { return (void)user, count > 0 ? sqrt(sum / count) : NAN; }

static double psnr_final(void *user, double sum, double count)
{
	double peak = user ? *(const double *)user : 1.0;
	return count > 0 ? 10.0 * log10(peak * peak / (sum / count)) : NAN;
}

/* the target of a reconstruction is the input */
static clg_status self_target(void *user, clg_tensor *x, clg_tensor *y, int training, clg_tensor **input,
			      clg_tensor **target)
{
	(void)user, (void)y, (void)training;
	*input = x;
	*target = x;
	return CLG_OK;
}

static const clg_task tasks[] = {
	{"classification", 1, 1, NULL, xent_loss, accuracy, NULL, "accuracy"},
	{"language_model", 1, 1, NULL, xent_loss, NULL, NULL, NULL},
	{"regression", 0, 1, NULL, mse, squared_error, rmse_final, "rmse"},
	{"reconstruction", 0, 0, self_target, mse, squared_error, psnr_final, "psnr"},
	{"reconstruction_mse", 0, 0, self_target, mse, squared_error, NULL, "mse"},
};

const clg_task *clg_task_classification(void) { return &tasks[0]; }
const clg_task *clg_task_language_model(void) { return &tasks[1]; }
const clg_task *clg_task_regression(void) { return &tasks[2]; }
const clg_task *clg_task_reconstruction(void) { return &tasks[3]; }
const clg_task *clg_task_reconstruction_mse(void) { return &tasks[4]; }

const clg_task *clg_task_by_name(const char *name)
{
	for (size_t i = 0; name && i < sizeof(tasks) / sizeof(tasks[0]); i++)
		if (!strcmp(tasks[i].name, name))
			return &tasks[i];
	return NULL;
}

/* ---- one batch ---- */

clg_status clg_task_check(const clg_task *task, const clg_dataset *ds, const char *what)
{
	const char *name = task && task->name ? task->name : "(unnamed)";
	if (!task || !task->loss)
		return clg_fail(CLG_ERR_INVALID, "%s: task '%s' has no loss function", what, name);
	if (ds && task->one_hot && (!ds->y || ds->num_classes <= 0))
		return clg_fail(CLG_ERR_INVALID, "%s: task '%s' needs class labels, and the dataset has %s", what, name,
				ds->yf ? "float targets" : "none");
	if (ds && task->needs_targets && !ds->y && !ds->yf)
		return clg_fail(CLG_ERR_INVALID, "%s: task '%s' needs targets, and the dataset has none", what, name);
	return CLG_OK;
}

clg_status clg_task_forward(const clg_task *task, void *user, clg_module *model, clg_tensor *x, clg_tensor *y,
			    int training, clg_tensor **out, clg_tensor **target, clg_tensor **loss)
{
	clg_tensor *in = x, *tg = y;
	clg_status st = CLG_OK;

	/* nothing here is freed: what the transform, the model and the loss make is the step's scope's */
	*out = *target = *loss = NULL;
	if (task->transform) {
		in = tg = NULL;
		st = task->transform(user, x, y, training, &in, &tg);
		if (!st && !in)
			st = clg_fail(CLG_ERR_INVALID, "task '%s': the transform gave no input", task->name ? task->name : "");
		if (st)
			return st;
	}
	*out = clg_module_forward(model, in);
	*loss = *out ? task->loss(user, *out, tg) : NULL;
	*target = tg;
	if (!*loss)
		st = clg_last_status() ? clg_last_status()
				       : clg_fail(CLG_ERR_INVALID, "task '%s': no loss", task->name ? task->name : "");
	return st;
}

clg_status clg_evaluate_on(clg_module *model, clg_backend *be, const clg_dataset *ds, const clg_task *task, void *user,
			   int64_t batch, clg_dtype autocast, double *metric, double *loss)
{
	clg_loader *l = NULL;
	int64_t seen = 0;
	double total = 0, msum = 0, mcount = 0;
	int was_training = model ? model->training : 1;
	clg_status st;

	if (metric)
		*metric = NAN;
	if (loss)
		*loss = NAN;
	if (!task)
		task = clg_task_classification();
	if (!model || !be || !ds)
		return clg_fail(CLG_ERR_INVALID, "evaluate: no %s", !model ? "model" : !be ? "device" : "dataset");
	st = clg_task_check(task, ds, "evaluate");
	if (!st)
		st = clg_loader_new(ds, batch, 0, task->one_hot ? CLG_LOADER_ONE_HOT : 0, &l);
	if (st)
		return st;
	clg_module_train(model, 0);
	clg_no_grad_begin();
	if (autocast != CLG_F32)
		clg_autocast_begin(autocast);
	while (!st) {
		clg_tensor *x, *y, *out, *target, *lt;
		double v;
		clg_scope_begin();
		st = clg_loader_next(l, be, &x, &y);
		if (st || !x) {
			clg_scope_end();
			break;
		}
		int64_t b = clg_shape(x)[0];
		st = clg_task_forward(task, user, model, x, y, 0, &out, &target, &lt);
		if (!st)
			st = clg_item(lt, &v);
		if (!st && task->metric)
			st = task->metric(user, out, target, &msum, &mcount);
		if (!st) {
			total += v * (double)b; /* a mean over samples, whatever the batch size */
			seen += b;
		}
		clg_scope_end();
	}
	if (autocast != CLG_F32)
		clg_autocast_end();
	clg_no_grad_end();
	clg_module_train(model, was_training);
	clg_loader_free(l);
	if (metric && task->metric && mcount > 0)
		*metric = task->metric_final ? task->metric_final(user, msum, mcount) : msum / mcount;
	if (loss && seen)
		*loss = total / (double)seen;
	return st;
}

clg_status clg_evaluate(clg_module *model, clg_backend *be, const clg_dataset *ds, const clg_task *task, void *user,
			int64_t batch, double *metric, double *loss)
{
	return clg_evaluate_on(model, be, ds, task, user, batch, CLG_F32, metric, loss);
}
