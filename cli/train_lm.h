/* What `clgrad train --resume` and `clgrad eval` check of a checkpoint against the command line and
 * the text (cli/train_lm.c): the model configuration, the tokenizer, the training text. Each
 * refusal is one line naming what differs (through clg_fail, for report_error). */
#ifndef CLGRAD_CLI_TRAIN_LM_H
#define CLGRAD_CLI_TRAIN_LM_H

#include <clgrad_checkpoint.h>
#include <data.h>

/* Cross-entropy (nats) of the validation part under the training part's token frequencies
 * (add-one smoothed): the baseline a language model must beat. */
double lm_unigram_loss(const clg_text *t);
/* The factor from nats a token of the validation part to bits a byte of it (its tokens over its
 * bytes, over ln 2): a loss comparable across tokenizers. */
double lm_bits_a_byte(const clg_text *t);

/* The model options given on the command line (--model, --seq-len, --dim, --heads, --layers) that
 * differ from the checkpoint's model: CLG_ERR_INVALID naming each, else CLG_OK. */
clg_status lm_check_model_args(int argc, char **argv, const char *path, const clg_ckpt_meta *m);

/* After the text was loaded for a checkpoint's language model: ckpt_tok is the checkpoint's
 * tokenizer (NULL: an old checkpoint without one). Refuses another tokenizer (--tokenizer), an old checkpoint's vocabulary of another size than the text's characters and, for
 * --resume (eval 0), another training text; for eval a text other than the training one is fine
 * (its tokenizer covered it, or loading had failed): *note gets the line to print, "" if none. */
clg_status lm_check_text(const char *path, const clg_ckpt_meta *m, const clg_tokenizer *ckpt_tok,
			 const clg_text *text, const char *text_path, const char *fingerprint, int eval, char *note,
			 size_t note_len);

#endif
