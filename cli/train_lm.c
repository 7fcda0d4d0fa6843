/* Checks of a language model's checkpoint against the command line and the text (train_lm.h). */
#include "train_lm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double lm_unigram_loss(const clg_text *t)
{
	double *count = calloc((size_t)(t->vocab_size > 0 ? t->vocab_size : 1), sizeof(double)), total = 0, loss = 0;
	if (!count)
		return NAN;
	for (int64_t i = 0; i < t->n_train; i++)
		count[t->ids[i]] += 1;
	for (int v = 0; v < t->vocab_size; v++)
		total += count[v] + 1;
	for (int64_t i = t->n_train; i < t->n; i++)
		loss -= log((count[t->ids[i]] + 1) / total);
	free(count);
	return t->n > t->n_train ? loss / (double)(t->n - t->n_train) : NAN;
}

double lm_bits_a_byte(const clg_text *t)
{
	int64_t bytes = t->bytes - t->bytes_train;
	return bytes > 0 ? (double)(t->n - t->n_train) / (double)bytes / log(2.0) : NAN;
}

/* The value of --name on the command line (the last one given), or NULL. */
static const char *arg_value(int argc, char **argv, const char *name)
{
	const char *v = NULL;
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) || strncmp(argv[i] + 2, name, n))
			continue;
		if (!argv[i][2 + n] && i + 1 < argc)
			v = argv[++i];
		else if (argv[i][2 + n] == '=')
			v = argv[i] + 3 + n;
	}
	return v;
}

clg_status lm_check_model_args(int argc, char **argv, const char *path, const clg_ckpt_meta *m)
{
	static const char *names[] = {"seq-len", "dim", "heads", "layers"};
	const int64_t have[] = {m->model.seq_len, m->model.dim, m->model.heads, m->model.layers};
	const char *model = arg_value(argc, argv, "model");
	char diff[512] = "";
	size_t k = 0;

	if (model && strcmp(model, m->model_name))
		k += (size_t)snprintf(diff + k, sizeof(diff) - k, "%s--model %s (the checkpoint's: %s)", k ? ", " : "", model,
				      m->model_name);
	for (int i = 0; i < 4 && k < sizeof(diff); i++) {
		const char *v = arg_value(argc, argv, names[i]);
		if (v && strtoll(v, NULL, 10) != have[i])
			k += (size_t)snprintf(diff + k, sizeof(diff) - k, "%s--%s %s (the checkpoint's: %lld)", k ? ", " : "",
					      names[i], v, (long long)have[i]);
	}
	if (!k)
		return CLG_OK;
	return clg_fail(CLG_ERR_INVALID, "checkpoint '%s': other model configuration: %s; drop those options (the "
			"checkpoint's configuration is used) or train a new model", path, diff);
}

clg_status lm_check_text(const char *path, const clg_ckpt_meta *m, const clg_tokenizer *ckpt_tok,
			 const clg_text *text, const char *text_path, const char *fingerprint, int eval, char *note,
			 size_t note_len)
{
	char a[64], b[64];

	note[0] = 0;
	if (ckpt_tok) {
		if (!clg_tokenizer_equal(ckpt_tok, text->tok)) { /* only --tokenizer makes another one */
			clg_tokenizer_describe(ckpt_tok, a, sizeof(a));
			clg_tokenizer_describe(text->tok, b, sizeof(b));
			return clg_fail(CLG_ERR_INVALID, "checkpoint '%s': other tokenizer: the checkpoint's is %s, --tokenizer "
					"gives %s%s; drop --tokenizer (the checkpoint's is used)", path, a, b,
					!strcmp(a, b) ? " with other merges or characters" : "");
		}
		if (clg_tokenizer_vocab_size(ckpt_tok) != m->model.vocab)
			return clg_fail(CLG_ERR_FORMAT, "checkpoint '%s': its tokenizer has %d tokens, its model a vocabulary of "
					"%lld", path, clg_tokenizer_vocab_size(ckpt_tok), (long long)m->model.vocab);
	} else if (text->vocab_size != m->model.vocab) {
		clg_tokenizer_describe(text->tok, b, sizeof(b));
		return clg_fail(CLG_ERR_INVALID, "checkpoint '%s' (from before checkpoints stored their tokenizer) has a "
				"vocabulary of %lld tokens, %s gives %s: not the text it was trained on; give that text with "
				"--data", path, (long long)m->model.vocab, text_path, b);
	} else {
		clg_tokenizer_describe(text->tok, b, sizeof(b));
		snprintf(note, note_len, "note: checkpoint '%s' stores no tokenizer (an older clgrad's): %s of %s taken as "
			 "its vocabulary (the sizes agree)", path, b, text_path);
		return CLG_OK;
	}
	if (!m->data[0] || !strcmp(m->data, fingerprint))
		return CLG_OK;
	if (!eval)
		return clg_fail(CLG_ERR_INVALID, "checkpoint '%s': other data: it was trained on %s (%s), not %s (%s); resume "
				"on the same text, or start a new run", path, m->data_path[0] ? m->data_path : "a text",
				m->data, text_path, fingerprint);
	clg_tokenizer_describe(ckpt_tok, a, sizeof(a));
	snprintf(note, note_len, "note: %s is not the text the checkpoint was trained on (%s); its tokenizer (%s) covers "
		 "it: the loss is on this text's last 10%%", text_path, m->data_path[0] ? m->data_path : m->data, a);
	return CLG_OK;
}
