/* GPT-2's own layout into the gpt model (frontend/gpt_io.c), against numpy: DIR holds
 * gpt2.safetensors (GPT-2's names under "transformer.", Conv1D weights (in, out), lm_head and the
 * mask buffers) and ref.safetensors (ids and the logits of numpy's forward), both written by
 * tests/check_gpt2_numpy.py. On every device: the model of ref's dims loads the weights and its
 * logits match numpy's; a model of other dims is refused naming the tensor. The reference backend
 * then writes DIR/out.safetensors in GPT-2's layout, which the script checks.
 * usage: test_gpt2_load DIR */
#include "test_util.h"

#include <clgrad_generate.h>
#include <math.h>
#include <safetensors.h>
#include <string.h>

int main(int argc, char **argv)
{
	char path[4096], wpath[4096];
	clg_st_file *ref = NULL;
	const clg_st_tensor *ids, *logits;
	const clg_device_info *list;
	int n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: test_gpt2_load DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/ref.safetensors", argv[1]);
	snprintf(wpath, sizeof(wpath), "%s/gpt2.safetensors", argv[1]);
	CHECK_OK(clg_st_open(path, &ref));
	if (!ref)
		return t_finish("test_gpt2_load");
	ids = clg_st_find(ref, "ids");
	logits = clg_st_find(ref, "logits");
	clg_model_config cfg = {.name = "gpt", .vocab = strtoll(clg_st_meta(ref, "vocab"), NULL, 10),
				.seq_len = strtoll(clg_st_meta(ref, "seq_len"), NULL, 10),
				.dim = strtoll(clg_st_meta(ref, "dim"), NULL, 10),
				.heads = strtoll(clg_st_meta(ref, "heads"), NULL, 10),
				.layers = strtoll(clg_st_meta(ref, "layers"), NULL, 10)};
	CHECK_OK(clg_devices(&list, &n));
	for (int idx = 0; ids && logits && idx < n; idx++) {
		clg_backend *be = NULL;
		clg_module *m;
		float *got = malloc(logits->nbytes);
		if (clg_backend_open(idx, &be)) {
			CHECK(0, "open %d: %s", idx, clg_last_error());
			free(got);
			continue;
		}
		m = clg_model_build(be, &cfg, 1);
		CHECK(m && !clg_gpt_load_gpt2(m, wpath), "load on %s: %s", be->info.name, clg_last_error());
		clg_module_train(m, 0);
		clg_scope_begin();
		clg_tensor *x = clg_from_host(be, CLG_I32, ids->ndim, ids->shape, ids->data);
		clg_tensor *y = m ? clg_module_forward(m, x) : NULL;
		CHECK(y && clg_numel(y) == logits->numel && !clg_to_host(y, got, logits->nbytes), "forward on %s: %s",
		      be->info.name, clg_last_error());
		if (y && clg_numel(y) == logits->numel) {
			const float *want = logits->data;
			double worst = 0, scale = 0;
			for (int64_t i = 0; i < logits->numel; i++) {
				worst = fmax(worst, fabs(got[i] - want[i]));
				scale = fmax(scale, fabs(want[i]));
			}
			printf("%s: logits within %.3g of numpy's (largest %.3g)\n", be->info.name, worst, scale);
			CHECK(worst <= 1e-4 * fmax(1, scale), "%s: logits differ from numpy's by %g", be->info.name, worst);
		}
		clg_scope_end();
		if (idx == 0 && m) {
			snprintf(path, sizeof(path), "%s/out.safetensors", argv[1]);
			CHECK_OK(clg_gpt_save_gpt2(m, path));
		}
		/* a model one head wider is refused, naming the tensor and GPT-2's (in, out) */
		clg_model_config other = cfg;
		other.dim += other.heads;
		clg_module *o = clg_model_build(be, &other, 1);
		CHECK(o && clg_gpt_load_gpt2(o, wpath) == CLG_ERR_FORMAT && strstr(clg_last_error(), "wte.weight"),
		      "other dims: %s", clg_last_error());
		clg_module_free(o);
		clg_module_free(m);
		clg_backend_close(be);
		free(got);
	}
	clg_st_close(ref);
	return t_finish("test_gpt2_load");
}
