#include "clgrad_checkpoint.h"

#include <safetensors.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Format 2: the transformer's Q, K and V projections are one (D, 3 D) layer (block children 0 ln1,
 * 1 qkv, 2 out, 3 ln2, 4 fc1, 5 fc2); format 1 had three (D, D) layers there, whose tensor names
 * a format-2 model would misread (same names, other roles): refused by name below. Other models'
 * tensors are the same in both. */
#define CKPT_FORMAT "clgrad-checkpoint-2"

/* NULL when the file's format and model fit this clgrad, else why not (static text). */
static const char *format_problem(const char *fmt, const char *model)
{
	if (fmt && !strcmp(fmt, CKPT_FORMAT))
		return NULL;
	if (fmt && !strcmp(fmt, "clgrad-checkpoint-1"))
		return model && !strcmp(model, "transformer")
			       ? "a transformer of format clgrad-checkpoint-1, from before its Q, K and V projections became one "
				 "(D, 3 D) layer; convert it with scripts/ckpt_upgrade.py OLD NEW"
			       : NULL;
	return "not a clgrad checkpoint";
}

clg_status clg_ckpt_save(const char *path, clg_module *model, clg_optimizer *opt, const clg_ckpt_meta *m)
{
	clg_st_writer *w = NULL;
	clg_named_tensors l = {0}, p = {0};
	char name[300], num[64];
	clg_status st = clg_st_writer_new(&w);

	if (!st)
		st = clg_module_state(model, 1, &l);
	for (int i = 0; !st && i < l.n; i++) {
		snprintf(name, sizeof(name), "model.%s", l.names[i]);
		st = clg_st_writer_add_tensor(w, name, l.tensors[i]);
	}
	/* optim.J.slot: the state of the model's J-th trainable tensor in module order, wherever the
	 * optimizer's groups put it */
	if (!st && opt)
		st = clg_module_state(model, 0, &p);
	for (int j = 0; !st && opt && j < p.n; j++) {
		int i = clg_optimizer_index_of(opt, p.tensors[j]);
		for (int slot = 0; !st && slot < CLG_OPT_STATE_SLOTS; slot++) {
			clg_tensor *s = clg_optimizer_state(opt, i, slot);
			if (!s)
				continue;
			snprintf(name, sizeof(name), "optim.%d.%d", j, slot);
			st = clg_st_writer_add_tensor(w, name, s);
		}
	}
#define META(k, v) \
	if (!st)   \
	st = clg_st_writer_meta(w, k, v)
	META("format", CKPT_FORMAT);
	META("model", m->model.name);
	snprintf(num, sizeof(num), "%lld", (long long)m->model.vocab);
	META("vocab", num);
	snprintf(num, sizeof(num), "%lld", (long long)m->model.seq_len);
	META("seq_len", num);
	snprintf(num, sizeof(num), "%lld", (long long)m->model.dim);
	META("dim", num);
	snprintf(num, sizeof(num), "%lld", (long long)m->model.heads);
	META("heads", num);
	snprintf(num, sizeof(num), "%lld", (long long)m->model.layers);
	META("layers", num);
	if (m->model.dropout > 0) { /* gpt's; absent means 0 */
		snprintf(num, sizeof(num), "%.17g", m->model.dropout);
		META("dropout", num);
	}
	snprintf(num, sizeof(num), "%lld", (long long)m->epochs_done);
	META("epochs_done", num);
	snprintf(num, sizeof(num), "%lld", (long long)(opt ? clg_optimizer_steps(opt) : m->opt_steps));
	META("optimizer_steps", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)m->seed);
	META("seed", num);
	META("optimizer", m->optimizer);
	META("loader", m->loader);
	META("schedule", m->schedule);
	snprintf(num, sizeof(num), "%.17g", m->lr);
	META("lr", num);
	snprintf(num, sizeof(num), "%.17g", m->momentum);
	META("momentum", num);
	snprintf(num, sizeof(num), "%.17g", m->weight_decay);
	META("weight_decay", num);
	snprintf(num, sizeof(num), "%.17g", m->clip);
	META("clip", num);
	snprintf(num, sizeof(num), "%lld", (long long)m->batch);
	META("batch", num);
	snprintf(num, sizeof(num), "%lld", (long long)m->warmup);
	META("warmup", num);
	if (m->tokenizer)
		META("tokenizer", m->tokenizer);
	if (m->data[0])
		META("data", m->data);
	if (m->data_path[0])
		META("data_path", m->data_path);
#undef META
	if (!st)
		st = clg_st_write(w, path);
	clg_named_tensors_free(&l);
	clg_named_tensors_free(&p);
	clg_st_writer_free(w);
	return st;
}

static int64_t meta_int(clg_st_file *f, const char *key)
{
	const char *v = clg_st_meta(f, key);
	return v ? strtoll(v, NULL, 10) : 0;
}

static double meta_double(clg_st_file *f, const char *key)
{
	const char *v = clg_st_meta(f, key);
	return v ? strtod(v, NULL) : 0;
}

clg_status clg_ckpt_read_meta(const char *path, clg_ckpt_meta *m)
{
	clg_st_file *f = NULL;
	const char *fmt, *v, *why;
	clg_status st = clg_st_open(path, &f);

	memset(m, 0, sizeof(*m));
	if (st)
		return st;
	fmt = clg_st_meta(f, "format");
	if ((why = format_problem(fmt, clg_st_meta(f, "model"))) != NULL) {
		/* fmt lives in f: the message is made before f is closed (found by fuzz_checkpoint) */
		st = clg_fail(CLG_ERR_FORMAT, "checkpoint '%s': %s (format %s)", path, why, fmt ? fmt : "missing");
		clg_st_close(f);
		return st;
	}
	v = clg_st_meta(f, "model");
	snprintf(m->model_name, sizeof(m->model_name), "%s", v ? v : "");
	m->model.name = m->model_name;
	m->model.vocab = meta_int(f, "vocab");
	m->model.seq_len = meta_int(f, "seq_len");
	m->model.dim = meta_int(f, "dim");
	m->model.heads = meta_int(f, "heads");
	m->model.layers = meta_int(f, "layers");
	m->model.dropout = meta_double(f, "dropout");
	m->epochs_done = meta_int(f, "epochs_done");
	m->opt_steps = meta_int(f, "optimizer_steps");
	m->seed = (uint64_t)meta_int(f, "seed");
	v = clg_st_meta(f, "optimizer");
	snprintf(m->optimizer, sizeof(m->optimizer), "%s", v ? v : "");
	v = clg_st_meta(f, "loader");
	snprintf(m->loader, sizeof(m->loader), "%s", v ? v : "");
	v = clg_st_meta(f, "schedule");
	snprintf(m->schedule, sizeof(m->schedule), "%s", v ? v : "constant");
	m->lr = meta_double(f, "lr");
	m->momentum = meta_double(f, "momentum");
	m->weight_decay = meta_double(f, "weight_decay");
	m->clip = meta_double(f, "clip");
	m->batch = meta_int(f, "batch");
	m->warmup = meta_int(f, "warmup");
	v = clg_st_meta(f, "data");
	snprintf(m->data, sizeof(m->data), "%s", v ? v : "");
	v = clg_st_meta(f, "data_path");
	snprintf(m->data_path, sizeof(m->data_path), "%s", v ? v : "");
	clg_st_close(f);
	return CLG_OK;
}

clg_status clg_ckpt_read_tokenizer(const char *path, clg_tokenizer **out)
{
	clg_st_file *f = NULL;
	const char *v;
	clg_status st;

	if (!out)
		return clg_fail(CLG_ERR_INVALID, "checkpoint tokenizer: NULL output");
	*out = NULL;
	st = clg_st_open(path, &f);
	if (st)
		return st;
	v = clg_st_meta(f, "tokenizer");
	if (v && (st = clg_tokenizer_from_string(v, out)) != CLG_OK) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", clg_last_error());
		st = clg_fail(st, "checkpoint '%s': its tokenizer: %s", path, msg);
	}
	clg_st_close(f);
	return st;
}

void clg_ckpt_fingerprint(int64_t bytes, uint64_t hash, char *buf, size_t len)
{
	snprintf(buf, len, "bytes=%lld fnv1a64=%016llx", (long long)bytes, (unsigned long long)hash);
}

clg_status clg_ckpt_load(const char *path, clg_module *model, clg_optimizer *opt)
{
	clg_st_file *f = NULL;
	clg_named_tensors l = {0}, p = {0};
	char name[300];
	clg_status st = clg_st_open(path, &f);

	if (!st) {
		const char *fmt = clg_st_meta(f, "format"), *why = format_problem(fmt, clg_st_meta(f, "model"));
		if (why)
			st = clg_fail(CLG_ERR_FORMAT, "checkpoint '%s': %s (format %s)", path, why, fmt ? fmt : "missing");
	}
	if (!st)
		st = clg_module_state(model, 1, &l);
	for (int i = 0; !st && i < l.n; i++) {
		clg_tensor *t = NULL;
		snprintf(name, sizeof(name), "model.%s", l.names[i]);
		if (!clg_st_find(f, name)) {
			st = clg_fail(CLG_ERR_FORMAT, "checkpoint '%s': no tensor '%s' for this model", path, name);
			break;
		}
		st = clg_st_load_tensor(f, name, clg_device_of(l.tensors[i]), &t);
		if (!st)
			st = clg_assign(l.tensors[i], t);
		clg_free(t);
	}
	/* optim.J.slot is the model's J-th trainable tensor in module order (clg_ckpt_save) */
	if (!st && opt)
		st = clg_module_state(model, 0, &p);
	for (int j = 0; !st && opt && j < p.n; j++) {
		int i = clg_optimizer_index_of(opt, p.tensors[j]);
		for (int slot = 0; !st && i >= 0 && slot < CLG_OPT_STATE_SLOTS; slot++) {
			clg_tensor *t = NULL;
			snprintf(name, sizeof(name), "optim.%d.%d", j, slot);
			if (!clg_st_find(f, name))
				continue;
			st = clg_st_load_tensor(f, name, clg_device_of(p.tensors[j]), &t);
			if (!st)
				st = clg_optimizer_set_state(opt, i, slot, t);
			clg_free(t);
		}
	}
	if (!st && opt) {
		const char *v = clg_st_meta(f, "optimizer_steps");
		clg_optimizer_set_steps(opt, v ? strtoll(v, NULL, 10) : 0);
	}
	clg_named_tensors_free(&l);
	clg_named_tensors_free(&p);
	clg_st_close(f);
	return st;
}
