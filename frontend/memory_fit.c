/* Whether a training configuration fits its device, estimated before the first step: the
 * parameters, their gradients and the optimizer's state from the model's size, the activations of
 * one micro-batch from the model's dimensions (the language models; a bound from below for the
 * others), against the device's global memory and its largest allocation (clgrad_train.h). */
#include "trainer_internal.h"

#include <stdio.h>
#include <string.h>

#define F32 4.0 /* bytes: activations, parameters and their state are float32 */

static double mib(uint64_t b) { return (double)b / 1048576.0; }

/* The transformer's (and gpt's: the same layout of a block) activations for rows windows of T tokens (bytes): what one block keeps for
 * backward (in units of rows * T * D floats: the stream and its layer norm's input and output,
 * q, k and v, the attention's output and log-sum-exp, the projection, the second norm, the MLP's
 * 4 D pre-activation and GELU output, the branch), the head's logits with their target, softmax
 * and gradient, and what backward allocates at once for one block. With recompute a block keeps
 * its two inputs and backward holds one block's activations again. Calibrated against the
 * allocator's peak on PoCL (tests/test_memory_fit.c holds the two within a factor). */
static void transformer_activations(const clg_model_config *m, clg_backend *be, int64_t rows, clg_memory_estimate *e)
{
	double n = (double)rows * (double)m->seq_len * (double)m->dim, L = (double)m->layers;
	double H = (double)m->heads, T = (double)m->seq_len, Dh = (double)m->dim / (double)m->heads;
	double logits = (double)rows * T * (double)m->vocab;
	double block = 19 * n + (double)rows * H * T + 4 * (double)rows * T;
	double backward = 10 * n, head = 4 * logits + 3 * n;
	int fused = clg_fused_ops_enabled() && Dh <= CLG_ATTENTION_DMAX && clg_backend_has_op(be, CLG_OP_ATTENTION_FWD) &&
		    clg_backend_has_op(be, CLG_OP_ATTENTION_BWD);

	int drop = !strcmp(m->name, "gpt") && m->dropout > 0;

	if (drop) { /* gpt's dropout: the residual masks, and attention on the composite path */
		block += 3 * n;
		fused = 0;
	}
	if (!fused) /* the composite attention keeps the (T, T) scores and probabilities of every head
		     * (with dropout its mask and the dropped probabilities too), and head-major q, k, v */
		block += (drop ? 4 : 2) * (double)rows * H * T * T + 3 * n;
	e->activations_recompute = (uint64_t)(F32 * (L * 2 * n + block + head + backward));
	e->activations = m->recompute ? e->activations_recompute : (uint64_t)(F32 * (L * block + head + backward));
	e->largest = (uint64_t)(F32 * logits);
	e->largest_what = "the logits (batch x seq len x vocabulary)";
	if (4 * n > logits) {
		e->largest = (uint64_t)(F32 * 4 * n);
		e->largest_what = "the MLP's activations (batch x seq len x 4 dim)";
	}
	if (!fused && (double)rows * H * T * T > 4 * n && (double)rows * H * T * T > logits) {
		e->largest = (uint64_t)(F32 * (double)rows * H * T * T);
		e->largest_what = "the attention scores (batch x heads x seq len x seq len)";
	}
	e->exact = 1;
}

clg_status clg_train_memory_estimate(const clg_train_config *cfg, clg_backend *be, int64_t nparams, int64_t rows,
				     clg_memory_estimate *e)
{
	double p = F32 * (double)nparams, state = 0;

	memset(e, 0, sizeof(*e));
	if (cfg->optim.kind == CLG_OPT_ADAM || cfg->optim.kind == CLG_OPT_ADAMW)
		state = 2 * p; /* the two moments */
	else if (cfg->optim.momentum > 0)
		state = p;
	e->params = (uint64_t)p;
	e->grads = (uint64_t)p;
	e->optim = (uint64_t)state;
	if (cfg->precision == CLG_PRECISION_MIXED)
		e->params += (uint64_t)(p / 2); /* the step's float16 copies of the weights */
	e->largest = 0;
	if (!cfg->build && clg_model_is_lm(&cfg->model) && cfg->model.vocab > 0)
		transformer_activations(&cfg->model, be, rows, e);
	e->total = e->params + e->grads + e->optim + e->activations;
	return CLG_OK;
}

/* The configuration's estimate against each replica's device, before anything runs: a failure
 * names the sizes and what to change. */
clg_status clg_trainer_check_fit(const clg_trainer *t)
{
	const clg_train_config *c = &t->cfg;
	int64_t procs = c->comm ? c->comm->size : 1;

	if (!clg_cfg_bool(CLG_CFG_FIT_CHECK))
		return CLG_OK;
	for (int i = 0; i < t->nrep; i++) {
		clg_backend *be = t->rep[i].be;
		const clg_device_info *d = &be->info;
		int64_t rows = (c->batch + t->nrep * procs - 1) / (t->nrep * procs);
		clg_memory_estimate e;
		char what[512], seq[48] = "";

		if (rows > t->train->n) /* a batch beyond the data is the data */
			rows = t->train->n;
		clg_train_memory_estimate(c, be, clg_module_num_params(t->rep[i].model), rows, &e);
		if (clg_model_is_lm(&c->model))
			snprintf(seq, sizeof(seq), " and seq len %lld", (long long)c->model.seq_len);
		snprintf(what, sizeof(what),
			 "parameters %.1f MiB, gradients %.1f MiB, optimizer state %.1f MiB, activations %s%.1f MiB at batch %lld%s",
			 mib(e.params), mib(e.grads), mib(e.optim), e.exact ? "" : "(not estimated for this model) ",
			 mib(e.activations), (long long)rows, seq);
		if (d->global_mem && e.total > d->global_mem) {
			char hint[256] = "";
			if (e.exact && !c->model.recompute)
				snprintf(hint, sizeof(hint), ", --recompute (activations about %.1f MiB)",
					 mib(e.activations_recompute));
			return clg_fail(CLG_ERR_OOM,
					"trainer: the configuration needs about %.1f MiB on device '%s' (%s), more than its %.1f MiB of "
					"global memory: lower --batch%s%s, or keep the batch with a smaller --batch and --accum-steps "
					"(same gradient, one micro-batch's activations)%s",
					mib(e.total), d->name, what, mib(d->global_mem), clg_model_is_lm(&c->model) ? " or --seq-len" : "",
					hint, e.params + e.grads + e.optim > d->global_mem ? "; the parameters and their state alone "
					"do not fit: a smaller model (--dim, --layers)" : "");
		}
		if (d->max_alloc && e.largest > d->max_alloc)
			return clg_fail(CLG_ERR_OOM,
					"trainer: one tensor, %s, needs about %.1f MiB on device '%s', more than its largest allocation "
					"of %.1f MiB: lower --batch%s (keep the batch with --accum-steps)",
					e.largest_what, mib(e.largest), d->name, mib(d->max_alloc),
					clg_model_is_lm(&c->model) ? " or --seq-len" : "");
	}
	return CLG_OK;
}
