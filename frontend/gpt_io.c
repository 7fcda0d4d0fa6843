/* The gpt model's weights in GPT-2's own layout (the one Hugging Face's GPT2Model and
 * GPT2LMHeadModel safetensors files use): the same names, optionally under "transformer.", with the
 * four Conv1D weights (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj) stored (in, out), the
 * transposes of clgrad's (out, in) torch.nn.Linear weights. lm_head.weight (tied to wte) and the
 * attention's mask buffers (h.N.attn.bias, h.N.attn.masked_bias) are not weights of the model:
 * skipped on load, not written. docs/API.md, "GPT-2 checkpoints". */
#include "clgrad_generate.h"
#include "gpt_internal.h"

#include <safetensors.h>
#include <stdio.h>
#include <string.h>

/* whether the state name is one of GPT-2's Conv1D weights (stored transposed) */
static int conv1d(const char *name)
{
	static const char *const ends[] = {".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight",
					   ".mlp.c_proj.weight"};
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t e = strlen(ends[i]);
		if (n > e && !strcmp(name + n - e, ends[i]))
			return 1;
	}
	return 0;
}

clg_status clg_gpt_load_gpt2(clg_module *gpt, const char *path)
{
	clg_st_file *f = NULL;
	clg_named_tensors l = {0};
	char name[300], s0[96], s1[96];
	clg_status st;

	if ((st = gpt_dims_of(gpt, &(gpt_dims){0})) || (st = clg_st_open(path, &f)))
		return st;
	st = clg_module_state(gpt, 1, &l);
	/* every name found and every shape right before anything is loaded */
	for (int i = 0; !st && i < l.n; i++) {
		const clg_st_tensor *t = clg_st_find(f, l.names[i]);
		clg_tensor *dst = l.tensors[i];
		int tr = conv1d(l.names[i]), ok;
		if (!t) {
			snprintf(name, sizeof(name), "transformer.%s", l.names[i]);
			t = clg_st_find(f, name);
		}
		if (!t) {
			st = clg_fail(CLG_ERR_FORMAT, "gpt-2 checkpoint '%s': no tensor '%s' (nor 'transformer.%s')", path,
				      l.names[i], l.names[i]);
			break;
		}
		ok = t->ndim == clg_ndim(dst);
		for (int d = 0; ok && d < t->ndim; d++)
			ok = t->shape[tr ? t->ndim - 1 - d : d] == clg_shape(dst)[d];
		if (!ok) {
			clg_view a = {.ndim = t->ndim}, b = {.ndim = clg_ndim(dst)};
			for (int d = 0; d < a.ndim; d++)
				a.shape[d] = t->shape[d];
			for (int d = 0; d < b.ndim; d++)
				b.shape[d] = clg_shape(dst)[d];
			st = clg_fail(CLG_ERR_FORMAT, "gpt-2 checkpoint '%s': '%s' is %s, the model's %s%s", path, t->name,
				      clg_shape_str(&a, s0, sizeof(s0)), clg_shape_str(&b, s1, sizeof(s1)),
				      tr ? " (stored (in, out), as GPT-2's Conv1D)" : "");
			break;
		}
	}
	clg_no_grad_begin();
	for (int i = 0; !st && i < l.n; i++) {
		const clg_st_tensor *t = clg_st_find(f, l.names[i]);
		clg_tensor *src = NULL, *v = NULL, *c = NULL;
		if (!t)
			snprintf(name, sizeof(name), "transformer.%s", l.names[i]);
		st = clg_st_load_tensor(f, t ? l.names[i] : name, clg_device_of(l.tensors[i]), &src);
		/* (in, out) -> (out, in); 16-bit or double files cast to the model's float32 */
		v = st ? NULL : conv1d(l.names[i]) ? clg_transpose(src, 0, 1) : src;
		c = v && clg_dtype_of(v) != clg_dtype_of(l.tensors[i]) ? clg_cast(v, clg_dtype_of(l.tensors[i])) : NULL;
		if (!st)
			st = clg_assign(l.tensors[i], c ? c : v);
		clg_free(c);
		if (v != src)
			clg_free(v);
		clg_free(src);
	}
	clg_no_grad_end();
	clg_named_tensors_free(&l);
	clg_st_close(f);
	return st;
}

clg_status clg_gpt_save_gpt2(clg_module *gpt, const char *path)
{
	clg_st_writer *w = NULL;
	clg_named_tensors l = {0};
	clg_status st;

	if ((st = gpt_dims_of(gpt, &(gpt_dims){0})) || (st = clg_st_writer_new(&w)))
		return st;
	st = clg_module_state(gpt, 1, &l);
	for (int i = 0; !st && i < l.n; i++) {
		/* (out, in) -> GPT-2's (in, out) for the Conv1D weights */
		clg_tensor *tv = conv1d(l.names[i]) ? clg_transpose(l.tensors[i], 0, 1) : NULL;
		clg_tensor *t = tv ? clg_contiguous(tv) : NULL;
		clg_free(tv);
		if (conv1d(l.names[i]) && !t)
			st = clg_last_status();
		if (!st)
			st = clg_st_writer_add_tensor(w, l.names[i], t ? t : l.tensors[i]);
		clg_free(t);
	}
	if (!st)
		st = clg_st_writer_meta(w, "format", "pt");
	if (!st)
		st = clg_st_write(w, path);
	clg_named_tensors_free(&l);
	clg_st_writer_free(w);
	return st;
}
