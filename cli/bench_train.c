/* clgrad bench train: training speed and device memory of a named model in float32 and in mixed
 * precision, side by side on one device.
 *   clgrad bench train --model mlp|cnn|transformer [--precision fp32|mixed|both] [--batch N]
 *                      [--steps S] [--json] [--device SPEC]
 * Each precision trains its own trainer (frontend/trainer.c, the same seed) for two epochs of S
 * steps on random samples in the model's input shape; the first epoch compiles the programs and
 * allocates the optimizer state, the second is reported: samples/s, ms a step, the device's peak
 * bytes in one step (the allocator's high-water mark, reset as each step begins) and the bytes live
 * between steps (parameters, float32 masters, optimizer state). Exit status: 0, 1 when a run
 * failed, 2 on usage errors. */
#include "cli.h"
#include "opts.h"

#include <clgrad_train.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: clgrad bench train --model mlp|cnn|transformer [--precision fp32|mixed|both] [--batch N]\n"
	"                          [--steps S] [--json] [--device SPEC]\n"
	"  trains two epochs of S random batches (default 20) per precision and reports the second:\n"
	"  samples/s and the device's peak bytes in a step, float32 against mixed.\n";

typedef struct {
	clg_epoch_info last; /* the second epoch's */
	int have;
} bench_epoch;

static clg_status on_epoch(void *user, const clg_epoch_info *e)
{
	bench_epoch *b = user;
	if (e->epoch == 2) {
		b->last = *e;
		b->have = 1;
	}
	return CLG_OK;
}

static int run_one(clg_backend *be, const clg_train_config *base, clg_precision p, const clg_dataset *ds,
		   bench_epoch *out)
{
	clg_train_config cfg = *base;
	clg_train_callbacks cb = {.user = out, .epoch_end = on_epoch};
	clg_trainer *t = NULL;
	int rc = 1;

	cfg.precision = p;
	if (clg_trainer_new(be, &cfg, ds, NULL, &t) || clg_trainer_run(t, &cb))
		goto out;
	rc = out->have ? 0 : 1;
out:
	clg_trainer_free(t);
	return rc;
}

int bench_train(int argc, char **argv)
{
	const char *model = NULL, *prec = "both", *spec = NULL;
	int64_t batch = 128, steps = 20;
	int json = 0, idx, rc = 1, np = 0;
	const cli_opt opts[] = {
		CLI_OPT_CHOICE("model", &model, "mlp|cnn|transformer"),
		CLI_OPT_CHOICE("precision", &prec, "fp32|mixed|both"),
		CLI_OPT_I64("batch", &batch, 1, 4096),
		CLI_OPT_I64("steps", &steps, 1, 100000),
		CLI_OPT_FLAG("json", &json),
		CLI_OPT_STR("device", &spec),
	};
	cli_spec cs = {.cmd = "bench train", .usage = usage, .opts = opts, .n = CLI_N(opts)};
	clg_train_config cfg = clg_train_config_default();
	clg_precision ps[2];
	bench_epoch res[2] = {{{0}, 0}, {{0}, 0}};
	clg_dataset ds = {0};
	clg_backend *be = NULL;
	json_writer w;

	rc = cli_parse(&cs, argc, argv);
	if (rc >= 0)
		return rc;
	rc = 1;
	if (!model)
		return cli_error("bench train", "--model is required (mlp, cnn or transformer)");
	if (strcmp(prec, "mixed"))
		ps[np++] = CLG_PRECISION_FP32;
	if (strcmp(prec, "fp32"))
		ps[np++] = CLG_PRECISION_MIXED;
	cfg.model.name = model;
	cfg.model.vocab = 65; /* a character vocabulary */
	cfg.batch = batch;
	cfg.epochs = 2;
	if (bench_select_device(spec, &idx) || clg_backend_open(idx, &be) ||
	    bench_synthetic_data(&cfg.model, steps * batch, &ds)) {
		report_error("bench train");
		goto out;
	}
	for (int i = 0; i < np; i++)
		if (run_one(be, &cfg, ps[i], &ds, &res[i])) {
			report_error("bench train");
			goto out;
		}
	if (json) {
		json_init(&w, stdout, 1);
		json_begin_object(&w);
		json_key_str(&w, "schema", "clgrad-bench-train/1");
		json_key_str(&w, "device", be->info.name);
		json_key_str(&w, "model", model);
		json_key_int(&w, "batch", batch);
		json_key_int(&w, "steps", steps);
		json_key(&w, "runs");
		json_begin_array(&w);
		for (int i = 0; i < np; i++) {
			const clg_epoch_info *e = &res[i].last;
			json_begin_object(&w);
			json_key_str(&w, "precision", clg_precision_name(ps[i]));
			json_key_num(&w, "samples_per_s", (double)e->samples / e->seconds);
			json_key_num(&w, "step_ms", 1e3 * e->seconds / (double)e->steps);
			json_key_int(&w, "peak_step_bytes", (int64_t)e->peak_bytes[0]);
			json_key_int(&w, "live_bytes", (int64_t)e->live_bytes[0]);
			json_key_num(&w, "train_loss", e->train_loss);
			json_end_object(&w);
		}
		json_end_array(&w);
		json_end_object(&w);
		printf("\n");
	} else {
		printf("train %s on %s, batch %lld, second epoch of %lld random batches:\n", model, be->info.name,
		       (long long)batch, (long long)steps);
		for (int i = 0; i < np; i++) {
			const clg_epoch_info *e = &res[i].last;
			printf("  %-5s %9.1f samples/s  %8.2f ms a step  peak %8.2f MiB a step  live %8.2f MiB  loss %.4f\n",
			       clg_precision_name(ps[i]), (double)e->samples / e->seconds, 1e3 * e->seconds / (double)e->steps,
			       e->peak_bytes[0] / 1048576.0, e->live_bytes[0] / 1048576.0, e->train_loss);
		}
		if (np == 2)
			printf("  mixed / fp32: speed %.2fx, peak memory %.2fx\n",
			       (res[0].last.seconds / res[1].last.seconds),
			       (double)res[1].last.peak_bytes[0] / (double)res[0].last.peak_bytes[0]);
	}
	rc = 0;
out:
	clg_dataset_free(&ds);
	clg_backend_close(be);
	return rc;
}
