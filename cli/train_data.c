/* clgrad train / eval: the data a model reads (Fashion-MNIST or another IDX folder, CIFAR-10, a
 * text through its tokenizer), loaded beside the device's start. */
#define _GNU_SOURCE /* realpath */
#include "train_cmd.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	const char *dir;
	clg_dataset *ds;
	clg_status st;
	char msg[1024];
} split_job;

static void *split_thread(void *arg)
{
	split_job *j = arg;
	j->st = clg_dataset_load_idx(j->dir, "t10k", j->ds);
	if (j->st)
		snprintf(j->msg, sizeof(j->msg), "%s", clg_last_error());
	return NULL;
}

/* --tokenizer's default: chars for the transformer (what its checkpoints have always read), bytes
 * for a language model of another name. */
static const char *lm_default_tokenizer(const clg_model_config *m)
{
	return !strcmp(m->name, "transformer") ? "chars" : "bytes";
}

clg_status train_load_data(train_opts *o, data_sets *d)
{
	clg_status st;
	memset(d, 0, sizeof(*d));
	d->lm = clg_model_is_lm(&o->cfg.model);
	if (d->lm) {
		const char *path = o->data ? o->data : o->lm_text ? o->lm_text : DEFAULT_TEXT;
		/* a checkpoint's tokenizer encodes the text unless --tokenizer names one (then compared) */
		st = clg_text_load_tok(path, 0.1, o->tokenizer ? NULL : o->ckpt_tok,
				       o->tokenizer ? o->tokenizer : lm_default_tokenizer(&o->cfg.model), &d->text);
		if (st == CLG_ERR_IO && !o->data && o->lm_text) { /* the checkpoint's text moved or was removed */
			char msg[1024];
			snprintf(msg, sizeof(msg), "%s", clg_last_error());
			st = clg_fail(st, "the text the checkpoint was trained on: %s; give a text with --data", msg);
		} else if (st && o->ckpt_tok && !o->tokenizer) {
			char msg[1024], desc[64];
			snprintf(msg, sizeof(msg), "%s", clg_last_error());
			clg_tokenizer_describe(o->ckpt_tok, desc, sizeof(desc));
			st = clg_fail(st, "the checkpoint's tokenizer (%s) cannot encode the text: %s", desc, msg);
		}
		if (!st)
			st = clg_text_windows(&d->text, 0, o->cfg.model.seq_len, o->cfg.model.seq_len, &d->train);
		if (!st)
			st = clg_text_windows(&d->text, 1, o->cfg.model.seq_len, o->cfg.model.seq_len, &d->test);
		o->cfg.model.vocab = d->text.vocab_size;
		if (!st)
			d->unigram = lm_unigram_loss(&d->text);
		if (!st)
			st = clg_tokenizer_to_string(d->text.tok, &d->tok_str);
		if (!st) {
			clg_ckpt_fingerprint(d->text.bytes, d->text.hash, d->fingerprint, sizeof(d->fingerprint));
			/* absolute: eval finds the text from any folder */
			if (!realpath(path, d->text_path))
				snprintf(d->text_path, sizeof(d->text_path), "%s", path);
			o->cfg.tokenizer = d->tok_str;
			o->cfg.data = d->fingerprint;
			o->cfg.data_path = d->text_path;
		}
	} else {
		const char *dir = o->data ? o->data : DEFAULT_IMAGES;
		float mean, sd;
		/* the two splits decompress at once, one on a thread of its own */
		split_job job = {.dir = dir, .ds = &d->test};
		pthread_t tid;
		int threaded = pthread_create(&tid, NULL, split_thread, &job) == 0;
		if (!threaded)
			split_thread(&job);
		st = clg_dataset_load_idx(dir, "train", &d->train);
		if (threaded)
			pthread_join(tid, NULL);
		if (!st && job.st)
			st = clg_fail(job.st, "%s", job.msg);
		/* normalise both splits with the training split's statistics */
		if (!st)
			st = clg_dataset_channel_stats(&d->train, 1, &mean, &sd);
		if (!st)
			st = clg_dataset_normalize(&d->train, 1, &mean, &sd);
		if (!st)
			st = clg_dataset_normalize(&d->test, 1, &mean, &sd);
	}
	if (!st && o->limit > 0 && o->limit < d->train.n) /* a quick run on the first samples */
		d->train.n = o->limit;
	if (!st && o->limit > 0 && o->limit < d->test.n)
		d->test.n = o->limit;
	return st;
}

void train_free_data(data_sets *d)
{
	clg_dataset_free(&d->train);
	clg_dataset_free(&d->test);
	clg_text_free(&d->text);
	free(d->tok_str);
	d->tok_str = NULL;
}

void *train_data_thread(void *arg)
{
	data_job *j = arg;
	if (j->d->loaded)
		return NULL;
	j->st = train_load_data(j->o, j->d);
	if (j->st)
		snprintf(j->msg, sizeof(j->msg), "%s", clg_last_error());
	return NULL;
}
