/* Model definitions: mlp (784-512-512-10), cnn (conv 32 - pool - conv 64 - pool - fc 128 - fc 10),
 * a small character-level transformer decoder (model_transformer.c), a GPT-2-class decoder
 * (model_gpt.c) and a small global-filter
 * network (model_gfnet.c). Sequential runs each linear followed by relu as
 * one clg_linear_act (the bias and the activation fused after the GEMM, frontend/nn.c); the
 * modules and the checkpoint names stay PyTorch's. */
#include "clgrad_models.h"
#include "fe_internal.h"

#include <string.h>

static clg_module *mlp(clg_backend *be, uint64_t seed)
{
	clg_module *m[] = {
		clg_nn_flatten(),
		clg_nn_linear(be, 784, 512, 1, CLG_INIT_DEFAULT, seed + 1),
		clg_nn_relu(),
		clg_nn_linear(be, 512, 512, 1, CLG_INIT_DEFAULT, seed + 2),
		clg_nn_relu(),
		clg_nn_linear(be, 512, 10, 1, CLG_INIT_DEFAULT, seed + 3),
	};
	return clg_nn_sequential(m, (int)(sizeof(m) / sizeof(m[0])));
}

static clg_module *cnn(clg_backend *be, uint64_t seed)
{
	clg_module *m[] = {
		clg_nn_conv2d(be, 1, 32, 3, 1, 1, 1, 1, CLG_INIT_DEFAULT, seed + 1),
		clg_nn_relu(),
		clg_nn_max_pool2d(2, 2, 0),
		clg_nn_conv2d(be, 32, 64, 3, 1, 1, 1, 1, CLG_INIT_DEFAULT, seed + 2),
		clg_nn_relu(),
		clg_nn_max_pool2d(2, 2, 0),
		clg_nn_flatten(),
		clg_nn_linear(be, 64 * 7 * 7, 128, 1, CLG_INIT_DEFAULT, seed + 3),
		clg_nn_relu(),
		clg_nn_linear(be, 128, 10, 1, CLG_INIT_DEFAULT, seed + 4),
	};
	return clg_nn_sequential(m, (int)(sizeof(m) / sizeof(m[0])));
}

int clg_model_is_lm(const clg_model_config *cfg) { return !strcmp(cfg->name, "transformer") || !strcmp(cfg->name, "gpt"); }

clg_module *clg_transformer_build(clg_backend *be, const clg_model_config *cfg, uint64_t seed);
clg_module *clg_gfnet_build(clg_backend *be, const clg_model_config *cfg, uint64_t seed);
clg_module *clg_gpt_build(clg_backend *be, const clg_model_config *cfg, uint64_t seed);

clg_module *clg_model_build(clg_backend *be, const clg_model_config *cfg, uint64_t seed)
{
	if (!strcmp(cfg->name, "mlp"))
		return mlp(be, seed);
	if (!strcmp(cfg->name, "cnn"))
		return cnn(be, seed);
	if (!strcmp(cfg->name, "transformer"))
		return clg_transformer_build(be, cfg, seed);
	if (!strcmp(cfg->name, "gpt"))
		return clg_gpt_build(be, cfg, seed);
	if (!strcmp(cfg->name, "gfnet"))
		return clg_gfnet_build(be, cfg, seed);
	/* clg_last_status() too: a binding reads it to pick the error (an earlier failure's was left) */
	fe_fail(clg_fail(CLG_ERR_INVALID, "unknown model '%s' (" CLG_MODEL_NAMES ")", cfg->name));
	return NULL;
}
