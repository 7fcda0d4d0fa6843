/* The models `clgrad train` knows by name. */
#ifndef CLGRAD_MODELS_H
#define CLGRAD_MODELS_H

#include <clgrad.h>

typedef struct {
	const char *name;     /* "mlp", "cnn", "transformer" */
	int64_t vocab;        /* transformer: vocabulary size */
	int64_t seq_len;      /* transformer: context length */
	int64_t dim;          /* transformer: model width */
	int64_t heads;        /* transformer: attention heads */
	int64_t layers;       /* transformer: blocks */
} clg_model_config;

/* Builds the model on be with parameters initialised from seed. NULL (with the library's error
 * set) for an unknown name. */
clg_module *clg_model_build(clg_backend *be, const clg_model_config *cfg, uint64_t seed);
/* Whether the model takes token ids (language model) rather than images. */
int clg_model_is_lm(const clg_model_config *cfg);

#endif
