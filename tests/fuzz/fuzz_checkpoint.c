/* Fuzz target: the checkpoint loader (clg_ckpt_read_meta, clg_ckpt_load) into a tiny transformer
 * on the reference backend with Adam's two state slots per parameter. Input: the file. */
#include "fuzz.h"

#include <clgrad.h>
#include <clgrad_checkpoint.h>
#include <clgrad_nn.h>
#include <clgrad_optim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The model of the seed corpus's checkpoint (made by this model and optimizer). */
static const clg_model_config tiny = {"transformer", 5, 4, 8, 2, 1};
static clg_backend *be;
static clg_module *model;
static clg_optimizer *opt;

static int setup(void)
{
	clg_named_tensors params = {0};
	clg_opt_config oc = {.kind = CLG_OPT_ADAM, .lr = 1e-3};

	if (model)
		return 0;
	if (clg_backend_open(0, &be) || !(model = clg_model_build(be, &tiny, 1)) ||
	    clg_module_state(model, 0, &params) || !(opt = clg_optimizer_new(&oc, params.tensors, params.n))) {
		fprintf(stderr, "fuzz_checkpoint: setup: %s\n", clg_last_error());
		abort();
	}
	clg_named_tensors_free(&params);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	clg_ckpt_meta m;
	clg_status st;
	int fd;

	if (size > (1 << 20) || setup())
		return 0;
	fd = fuzz_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	st = clg_ckpt_read_meta(path, &m);
	if (!st) {
		FUZZ_REQUIRE(memchr(m.model_name, 0, sizeof(m.model_name)) && memchr(m.loader, 0, sizeof(m.loader)),
			     "unterminated metadata");
		st = clg_ckpt_load(path, model, opt);
		if (!st)
			fuzz_accepted++;
	}
	if (st)
		FUZZ_REQUIRE(clg_last_error()[0], "a failure without a message (%s)", clg_status_name(st));
	close(fd);
	return 0;
}

#ifdef FUZZ_CHECKPOINT_SEED
/* cc -DFUZZ_CHECKPOINT_SEED ... : writes the seed checkpoint of the tiny model to argv[1] */
int main(int argc, char **argv)
{
	clg_ckpt_meta m = {.model = tiny, .epochs_done = 1, .opt_steps = 3, .seed = 1, .lr = 1e-3, .batch = 2};
	snprintf(m.model_name, sizeof(m.model_name), "transformer");
	snprintf(m.optimizer, sizeof(m.optimizer), "adam");
	snprintf(m.loader, sizeof(m.loader), "seed=1 epoch=1 pos=0");
	snprintf(m.schedule, sizeof(m.schedule), "constant");
	setup();
	if (argc < 2 || clg_ckpt_save(argv[1], model, opt, &m)) {
		fprintf(stderr, "%s\n", clg_last_error());
		return 1;
	}
	return 0;
}
#endif
