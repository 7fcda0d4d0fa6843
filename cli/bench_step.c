/* clgrad bench step: the launch geometry of one training step, and a model of it on a GPU.
 *   clgrad bench step --model mlp|cnn|transformer [--gpu h100|mi300x|a770|rx7900] [--batch N] [--json]
 *                     [--device SPEC]
 * Trains two steps of the model on synthetic data through the trainer (frontend/trainer.c) and
 * records every kernel launch of the second (the first compiles programs and allocates optimizer
 * state): forward, loss, backward, optimizer, and the trainer's running-loss add. Each launch gets
 * its kernel, global and local sizes, work-groups, and the bytes and FLOPs its op's shapes imply
 * (backend/clg_record.h). CLBlast and clFFT calls are one record each, geometry unknown.
 *
 * --gpu: a MODEL, not a measurement, against that GPU's published figures (cli/gpu_specs.c). A
 * launch "fills" the GPU when its parallel work, max(work-items, elements of the op's largest operand),
 * is at least compute units x SIMD width x 4; it is FLAGGED when it fills the GPU yet has fewer
 * work-groups than the GPU has compute units (some sit idle: a GPU-shape regression). The device's
 * compute-unit count is set to the GPU's before the step, so that launchers sizing their grids by
 * it size them as on that GPU; everything else (work-group limits, the GEMM chosen: the own kernels
 * on a CPU device, CLBlast elsewhere; CLGRAD_GEMM picks) is the recording device's. Each launch
 * costs its roofline time max(bytes / bandwidth, FLOPs / fp32 peak), divided by the fraction of the
 * GPU its geometry can use (min(1, groups / CUs) x min(1, work-items a group / SIMD width); 1 where
 * the geometry is unknown), plus 5 us; the sum is the modelled step time. The roofline sum alone
 * (every launch using the whole GPU, no overhead) is reported beside it.
 * Exit status: 0, 1 when the step failed, 2 on usage errors. */
#include "cli.h"
#include "gpu_specs.h"
#include "json_write.h"
#include "opts.h"

#include <clg_record.h>
#include <clgrad_train.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LAUNCH_OVERHEAD_S 5e-6 /* per kernel launch: enqueue to start, a typical GPU driver figure */
#define FILL_WAVES 4           /* SIMD groups per compute unit needed to hide latency */

static const char usage[] =
	"usage: clgrad bench step --model mlp|cnn|transformer [--gpu h100|mi300x|a770|rx7900] [--batch N] [--json]\n"
	"                         [--device SPEC]\n"
	"  records every kernel launch of one training step; --gpu models it on that GPU's published figures\n"
	"  (a model, not a measurement). N in [1, 4096] (default 128).\n";

typedef struct {
	clg_backend *be;
	clg_recorder *rec;
} step_ctx;

/* records the second step only: on after the first ends, off after the second */
static void on_step_end(void *user, const clg_step_info *si)
{
	step_ctx *s = user;
	clg_backend_set_recorder(s->be, si->step == 1 ? s->rec : NULL);
}

static uint32_t rnd(uint32_t *st)
{
	*st = *st * 1664525u + 1013904223u;
	return *st >> 8;
}

clg_status bench_synthetic_data(const clg_model_config *m, int64_t n, clg_dataset *ds)
{
	int lm = clg_model_is_lm(m);
	int64_t img[3] = {1, 28, 28}, seq[1] = {m->seq_len};
	uint32_t st = 12345;
	clg_status s = clg_dataset_init(ds, n, lm ? 1 : 3, lm ? seq : img, lm ? CLG_I32 : CLG_F32,
					lm ? m->seq_len : 1);

	if (s)
		return s;
	ds->num_classes = lm ? (int)m->vocab : 10;
	for (int64_t i = 0; i < ds->n * ds->sample_numel; i++) {
		if (lm)
			ds->xi[i] = (int32_t)(rnd(&st) % (uint32_t)m->vocab);
		else
			ds->x[i] = (float)(rnd(&st) * (1.0 / 16777216.0));
	}
	for (int64_t i = 0; i < ds->n * ds->y_numel; i++)
		ds->y[i] = (int32_t)(rnd(&st) % (uint32_t)ds->num_classes);
	return CLG_OK;
}

typedef struct {
	double roofline_s; /* max(bytes / bandwidth, FLOPs / peak): the whole GPU busy */
	double use;        /* fraction of the GPU the geometry can keep busy (1 when unknown) */
	double t_s;        /* roofline_s / use + launch overhead */
	int fills;         /* enough parallel work to fill the GPU */
	int flagged;       /* fills it, yet fewer work-groups than compute units */
	int known;         /* work-groups known (not a library call, not left to the driver) */
} launch_model;

static void model_launch(const clg_launch_record *l, const gpu_spec *g, launch_model *o)
{
	double work = fmax((double)l->items, (double)l->elems);
	double t_mem = l->bytes / (g->bandwidth_gbs * 1e9), t_flop = l->flops / (g->fp32_tflops * 1e12);

	o->known = l->dims > 0 && l->groups > 0;
	o->use = 1;
	if (o->known) { /* idle compute units, and idle SIMD lanes in groups narrower than a wave */
		double per_group = (double)l->items / (double)l->groups;
		o->use = fmin(1.0, (double)l->groups / g->compute_units) * fmin(1.0, per_group / g->wave);
	}
	o->roofline_s = fmax(t_mem, t_flop);
	o->t_s = o->roofline_s / o->use + LAUNCH_OVERHEAD_S;
	o->fills = work >= (double)g->compute_units * g->wave * FILL_WAVES;
	o->flagged = o->known && o->fills && l->groups < g->compute_units;
}

static void geom_str(const clg_launch_record *l, int local, char *buf, size_t len)
{
	size_t at = 0;

	if (!l->dims || (local && !l->local[0])) {
		snprintf(buf, len, "-");
		return;
	}
	for (int d = 0; d < l->dims && at < len; d++)
		at += (size_t)snprintf(buf + at, len - at, "%s%zu", d ? "x" : "", local ? l->local[d] : l->global[d]);
}

static void json_sizes(json_writer *w, const char *key, const clg_launch_record *l, int local)
{
	json_key(w, key);
	if (!l->dims || (local && !l->local[0])) {
		json_null(w);
		return;
	}
	json_begin_array(w);
	for (int d = 0; d < l->dims; d++)
		json_int(w, (int64_t)(local ? l->local[d] : l->global[d]));
	json_end_array(w);
}

static void print_json(clg_backend *be, int native_cus, const char *model, int64_t batch, const clg_recorder *r, const gpu_spec *g)
{
	json_writer w;
	double total = 0, roof = 0, bytes = 0, flops = 0;
	int flagged = 0, library = 0;

	json_init(&w, stdout, 1);
	json_begin_object(&w);
	json_key_str(&w, "schema", "clgrad-bench-step/1");
	json_key(&w, "device");
	json_begin_object(&w);
	json_key_str(&w, "name", be->info.name);
	json_key_str(&w, "type", clg_device_type_name(be->info.type));
	json_key_int(&w, "compute_units", native_cus);
	json_end_object(&w);
	json_key_int(&w, "sized_for_compute_units", (int64_t)be->info.compute_units);
	json_key_str(&w, "model", model);
	json_key_int(&w, "batch", batch);
	json_key(&w, "kernel_shapes");
	json_begin_object(&w);
	for (int f = 0; f < CLG_KFAM_COUNT; f++)
		json_key_str(&w, clg_kernel_family_name((clg_kernel_family)f),
			     clg_kernel_shape_name(clg_backend_kernel_shape(be, (clg_kernel_family)f, NULL)));
	json_end_object(&w);
	if (g) {
		json_key(&w, "gpu");
		json_begin_object(&w);
		json_key_str(&w, "key", g->key);
		json_key_str(&w, "name", g->name);
		json_key_int(&w, "compute_units", g->compute_units);
		json_key_int(&w, "wave", g->wave);
		json_key_num(&w, "bandwidth_gbs", g->bandwidth_gbs);
		json_key_num(&w, "fp32_tflops", g->fp32_tflops);
		json_key_num(&w, "launch_overhead_us", LAUNCH_OVERHEAD_S * 1e6);
		json_key_int(&w, "fill_items", (int64_t)g->compute_units * g->wave * FILL_WAVES);
		json_key_str(&w, "source", g->source);
		json_key_str(&w, "note", "a model from published figures, not a measurement");
		json_end_object(&w);
	}
	json_key(&w, "launches");
	json_begin_array(&w);
	for (int i = 0; i < r->n; i++) {
		const clg_launch_record *l = &r->rec[i];
		launch_model m = {0};
		if (g)
			model_launch(l, g, &m);
		total += m.t_s;
		roof += m.roofline_s;
		bytes += l->bytes;
		flops += l->flops;
		flagged += m.flagged;
		library += l->library;
		json_begin_object(&w);
		json_key_int(&w, "index", i);
		json_key_str(&w, "op", l->op);
		json_key_str(&w, "kernel", l->kernel);
		json_key_bool(&w, "library", l->library);
		json_sizes(&w, "global", l, 0);
		json_sizes(&w, "local", l, 1);
		json_key(&w, "work_items");
		l->dims ? json_int(&w, l->items) : json_null(&w);
		json_key(&w, "work_groups");
		l->groups > 0 ? json_int(&w, l->groups) : json_null(&w);
		if (l->m) {
			json_key_int(&w, "gemm_m", l->m);
			json_key_int(&w, "gemm_n", l->n);
			json_key_int(&w, "gemm_k", l->k);
			json_key_int(&w, "gemm_batch", l->batch);
		}
		json_key_int(&w, "elements", l->elems);
		json_key_num(&w, "bytes", l->bytes);
		json_key_num(&w, "flops", l->flops);
		if (g) {
			json_key(&w, "groups_per_cu");
			m.known ? json_num(&w, (double)l->groups / g->compute_units) : json_null(&w);
			json_key_bool(&w, "fills_gpu", m.fills);
			json_key_bool(&w, "flagged", m.flagged);
			json_key_num(&w, "gpu_fraction", m.use);
			json_key_num(&w, "roofline_s", m.roofline_s);
			json_key_num(&w, "model_time_s", m.t_s);
		}
		json_end_object(&w);
	}
	json_end_array(&w);
	json_key(&w, "summary");
	json_begin_object(&w);
	json_key_int(&w, "launches", r->n);
	json_key_int(&w, "library_calls", library);
	json_key_int(&w, "dropped", r->dropped);
	json_key_num(&w, "bytes", bytes);
	json_key_num(&w, "flops", flops);
	if (g) {
		json_key_int(&w, "flagged", flagged);
		json_key_num(&w, "modelled_step_s", total);
		json_key_num(&w, "roofline_step_s", roof);
	}
	json_end_object(&w);
	json_end_object(&w);
	printf("\n");
}

static void print_table(clg_backend *be, int native_cus, const char *model, int64_t batch, const clg_recorder *r, const gpu_spec *g)
{
	double total = 0, roof = 0;
	int flagged = 0;

	printf("device: %s (%d compute units); model %s, batch %lld; one training step (the second), %d launches\n",
	       be->info.name, native_cus, model, (long long)batch, r->n);
	if (g)
		printf("modelled on %s: %d CUs, SIMD %d, %.0f GB/s, %.1f TFLOP/s fp32, %.0f us a launch (a model, not a "
		       "measurement)\n", g->name, g->compute_units, g->wave, g->bandwidth_gbs, g->fp32_tflops,
		       LAUNCH_OVERHEAD_S * 1e6);
	if (g)
		printf("launches sized for its %d compute units (the row, reduce and fused launchers read the count)\n",
		       g->compute_units);
	printf("%4s %-18s %-26s %-14s %-10s %8s %9s %10s", "#", "op", "kernel", "global", "local", "groups", "MB",
	       "MFLOP");
	if (g)
		printf(" %7s %5s %5s %9s", "grp/CU", "fills", "use", "model us");
	printf("\n");
	for (int i = 0; i < r->n; i++) {
		const clg_launch_record *l = &r->rec[i];
		char gl[48], lo[32];
		launch_model m = {0};
		geom_str(l, 0, gl, sizeof(gl));
		geom_str(l, 1, lo, sizeof(lo));
		if (l->library && l->m)
			snprintf(gl, sizeof(gl), "%lldx%lldx%lld", (long long)l->m, (long long)l->n, (long long)l->k);
		printf("%4d %-18.18s %-26.26s %-14s %-10s %8lld %9.3f %10.3f", i, l->op, l->kernel, gl, lo,
		       (long long)l->groups, l->bytes * 1e-6, l->flops * 1e-6);
		if (g) {
			model_launch(l, g, &m);
			total += m.t_s;
			roof += m.roofline_s;
			flagged += m.flagged;
			if (m.known)
				printf(" %7.2f", (double)l->groups / g->compute_units);
			else
				printf(" %7s", "-");
			printf(" %5s %5.2f %9.1f%s", m.fills ? "yes" : "no", m.use, m.t_s * 1e6, m.flagged ? "  FLAG: fewer groups than CUs" : "");
		}
		printf("\n");
	}
	if (g)
		printf("modelled step time on %s: %.1f us over %d launches (roofline alone %.1f us); %d flagged\n",
		       g->name, total * 1e6, r->n, roof * 1e6, flagged);
}

int bench_step(int argc, char **argv)
{
	const char *model = NULL, *gpu = NULL, *spec = NULL;
	int64_t batch = 128;
	int json = 0, idx, rc = 1;
	const cli_opt opts[] = {
		CLI_OPT_CHOICE("model", &model, "mlp|cnn|transformer"),
		CLI_OPT_CHOICE("gpu", &gpu, "h100|mi300x|a770|rx7900"),
		CLI_OPT_I64("batch", &batch, 1, 4096),
		CLI_OPT_FLAG("json", &json),
		CLI_OPT_STR("device", &spec),
	};
	cli_spec cs = {.cmd = "bench step", .usage = usage, .opts = opts, .n = CLI_N(opts)};
	clg_train_config cfg = clg_train_config_default();
	clg_train_callbacks cb = {0};
	clg_recorder rec = {0};
	clg_dataset ds = {0};
	clg_backend *be = NULL;
	clg_trainer *t = NULL;
	const gpu_spec *g;
	int native_cus;
	step_ctx sc;

	rc = cli_parse(&cs, argc, argv);
	if (rc >= 0)
		return rc;
	rc = 1;
	g = gpu_spec_find(gpu);
	if (!model)
		return cli_error("bench step", "--model is required (mlp, cnn or transformer)");
	cfg.model.name = model;
	cfg.model.vocab = 65; /* a character vocabulary */
	cfg.batch = batch;
	cfg.epochs = 1;
	cfg.max_steps = 2;
	if (clg_device_select(spec, &idx) || clg_backend_open(idx, &be)) {
		report_error("bench step");
		goto out;
	}
	if (strcmp(be->iface->kind, "opencl")) {
		fprintf(stderr, "clgrad bench step: device '%s' launches no kernels (the reference backend): choose an "
			"OpenCL device with --device\n", be->info.name);
		goto out;
	}
	native_cus = (int)be->info.compute_units;
	/* the launchers that size their grids by compute units (row, reduce, fused) size them for the
	 * modelled GPU, as they would on it */
	if (g)
		be->info.compute_units = (unsigned)g->compute_units;
	if (bench_synthetic_data(&cfg.model, 2 * batch, &ds) || clg_trainer_new(be, &cfg, &ds, NULL, &t)) {
		report_error("bench step");
		goto out;
	}
	sc = (step_ctx){.be = be, .rec = &rec};
	cb.user = &sc;
	cb.step_end = on_step_end;
	if (clg_trainer_run(t, &cb) || clg_synchronize(be)) {
		report_error("bench step");
		goto out;
	}
	clg_backend_set_recorder(be, NULL);
	if (json)
		print_json(be, native_cus, model, batch, &rec, g);
	else
		print_table(be, native_cus, model, batch, &rec, g);
	rc = 0;
out:
	if (be)
		clg_backend_set_recorder(be, NULL);
	clg_trainer_free(t);
	clg_dataset_free(&ds);
	clg_recorder_clear(&rec);
	clg_backend_close(be);
	return rc;
}
