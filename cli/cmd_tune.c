/* clgrad tune [--device SPEC] [--budget SECONDS] [--shapes training|square|all|small] [--dry-run]
 *             [--seed N] [--status] [--fft-conv]
 * Tunes float32 GEMM for one OpenCL device (backend/clg_tune.h): a progress line per candidate,
 * then a table of the default against the tuned rate per shape, and where the result was stored;
 * then the FFT conv crossover: conv1d through the FFT against im2col + GEMM (the tuned GEMM) over
 * kernel sizes 3 to 31 (cli/conv_fft_time.c), the smallest size from which the FFT wins stored in
 * the tune file (clg_tune_store_fft_conv), which conv1d then follows (frontend/conv_choice.c).
 * --fft-conv measures the crossover only; --shapes small (a quick tune, for tests) skips it. --status prints what a process would load for the
 * device, and tunes nothing. */
#include "cli.h"
#include "opts.h"

#include <clg_tune.h>
#include <clgrad.h>
#include <stdlib.h>
#include <string.h>

static void progress(void *user, const char *line)
{
	(void)user;
	printf("%s\n", line);
	fflush(stdout);
}

static const char usage[] =
	"usage: clgrad tune [--device SPEC] [--budget SECONDS] [--shapes training|square|all|small] [--dry-run]\n"
	"                   [--seed N] [--status] [--fft-conv]\n";

static int print_status(clg_backend *be)
{
	clg_tune_state s;
	char choice[96];

	if (clg_tune_state_of(be, &s))
		return report_error("tune");
	printf("device: %s\n", be->info.name);
	printf("tune file: %s\n", s.path[0] ? s.path : "(none)");
	if (s.loaded) {
		printf("loaded: %d shapes, CLBlast parameters %s\n", s.nshapes, s.clblast_params ? "set" : "default");
		if (s.note[0])
			printf("note: %s\n", s.note);
	} else {
		printf("not loaded: %s\n", s.note);
	}
	clg_tune_gemm_choice(be, 1024, 1024, 1024, 1, 0, 0, choice, sizeof(choice));
	printf("GEMM 1024x1024x1024 runs with: %s\n", choice);
	for (int f = 0; f < CLG_KFAM_COUNT; f++) {
		const char *why = NULL;
		clg_kernel_shape k = clg_backend_kernel_shape(be, (clg_kernel_family)f, &why);
		printf("kernel shape %s: %s (%s)\n", clg_kernel_family_name((clg_kernel_family)f), clg_kernel_shape_name(k),
		       why);
	}
	{
		clg_tune_fft_conv c;
		const char *why;
		if (clg_tune_fft_conv_of(be, &c))
			printf("fft conv: stored crossover K = %d (0: never; at K = %d fft %.0f us, im2col %.0f us)\n", c.min_k,
			       c.k_max, c.us_fft, c.us_im2col);
		int from = clg_conv1d_fft_from(be, &why);
		printf("conv1d through the FFT from K = %d (%s; 0: never)\n", from, why);
	}
	return 0;
}

/* The FFT conv crossover, measured and (unless dry_run) stored. */
static int tune_fft_conv(clg_backend *be, int dry_run)
{
	int64_t k[CONV_FFT_NK];
	double f[CONV_FFT_NK], i[CONV_FFT_NK];
	clg_tune_fft_conv c = {0};
	int n;

	printf("\n");
	n = conv_fft_sweep(be, 5, stdout, k, f, i);
	if (n <= 0) {
		if (clg_last_status())
			report_error("tune");
		return 1;
	}
	c.min_k = conv_fft_crossover(k, f, i, n);
	c.k_max = (int)k[n - 1];
	c.us_fft = f[n - 1];
	c.us_im2col = i[n - 1];
	printf("fft conv crossover: %s%d\n", c.min_k ? "the FFT from K = " : "none, im2col at every K: ", c.min_k);
	if (dry_run) {
		printf("dry run: crossover not stored\n");
		return 0;
	}
	if (clg_tune_store_fft_conv(be, &c))
		return report_error("tune");
	printf("stored with the tune file\n");
	return 0;
}

int cmd_tune(int argc, char **argv)
{
	const char *spec = NULL;
	clg_tune_options o = {.budget_s = 60, .shapes = CLG_TUNE_SHAPES_ALL, .progress = progress};
	clg_tune_report *r = NULL;
	clg_backend *be = NULL;
	int idx, rc, status = 0, fft_conv = 0;
	int64_t seed = 0;
	const char *shapes = "all";
	const cli_opt opts[] = {
		CLI_OPT_STR("device", &spec),
		CLI_OPT_POS("budget", &o.budget_s, 1e6),
		CLI_OPT_CHOICE("shapes", &shapes, "training|square|all|small"),
		CLI_OPT_I64("seed", &seed, 0, UINT32_MAX),
		CLI_OPT_FLAG("dry-run", &o.dry_run),
		CLI_OPT_FLAG("status", &status),
		CLI_OPT_FLAG("fft-conv", &fft_conv),
	};
	cli_spec cs = {.cmd = "tune", .usage = usage, .opts = opts, .n = CLI_N(opts)};

	if ((rc = cli_parse(&cs, argc, argv)) >= 0)
		return rc;
	rc = 1;
	o.seed = (unsigned)seed;
	o.shapes = !strcmp(shapes, "training") ? CLG_TUNE_SHAPES_TRAINING : !strcmp(shapes, "square") ? CLG_TUNE_SHAPES_SQUARE
		 : !strcmp(shapes, "small") ? CLG_TUNE_SHAPES_SMALL : CLG_TUNE_SHAPES_ALL;
	if (clg_device_select(spec, &idx) || clg_backend_open(idx, &be))
		return report_error("tune");
	if (status) {
		rc = print_status(be);
		goto out;
	}
	if (fft_conv) {
		if (o.shapes == CLG_TUNE_SHAPES_SMALL) { /* (tests: a quick tune) */
		printf("fft conv crossover: not measured with --shapes small (clgrad tune --fft-conv measures it)\n");
		rc = 0;
	} else {
		rc = tune_fft_conv(be, o.dry_run);
	}
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		fprintf(stderr, "clgrad tune: out of memory\n");
		goto out;
	}
	if (clg_tune_run(be, &o, r)) {
		rc = report_error("tune");
		goto out;
	}
	printf("\n%-18s %-22s %9s %9s %9s %9s %9s  %-7s %s\n", "shape", "M x N x K", "default", "own", "CLB def",
	       "CLB tuned", "tuned", "choice", "own tile");
	for (int i = 0; i < r->nshapes; i++) {
		const clg_tune_shape *s = &r->shape[i];
		char dims[48];
		snprintf(dims, sizeof(dims), "%lldx%lldx%lld%s%s%s", (long long)s->m, (long long)s->n, (long long)s->k,
			 s->ta ? " At" : "", s->tb ? " Bt" : "", s->batch > 1 ? " b" : "");
		if (s->batch > 1)
			snprintf(dims + strlen(dims), sizeof(dims) - strlen(dims), "%lld", (long long)s->batch);
		printf("%-18s %-22s %9.1f %9.1f %9.1f %9.1f %9.1f  %-7s %s%s\n", s->label, dims, s->default_gflops,
		       s->own_gflops, s->clblast_default_gflops, s->clblast_gflops, s->tuned_gflops,
		       s->choice[0] ? s->choice : "-", s->tile, s->is_default ? " (default kept)" : "");
	}
	printf("(GFLOP/s, float32, medians; 0.0: not measured; \"own\" and \"CLB\" are the best measured of each, "
	       "\"tuned\" the stored choice)\n");
	printf("candidates: %d measured, %d rejected; %.1f s\n", r->candidates, r->rejected, r->elapsed_s);
	if (r->clblast_tuned)
		printf("CLBlast: Xgemm %s\n        XgemmDirect %s\n        XGEMM_MIN_INDIRECT_SIZE=%lu\n",
		       r->clblast_xgemm, r->clblast_direct, r->min_indirect);
	else
		printf("CLBlast: parameters not tuned (defaults kept)\n");
	if (r->stored)
		printf("stored: %s\n", r->path);
	else
		printf("dry run: nothing stored (would write %s)\n", r->path);
	if (o.shapes == CLG_TUNE_SHAPES_SMALL) { /* (tests: a quick tune) */
		printf("fft conv crossover: not measured with --shapes small (clgrad tune --fft-conv measures it)\n");
		rc = 0;
	} else {
		rc = tune_fft_conv(be, o.dry_run);
	}
out:
	free(r);
	clg_backend_close(be);
	return rc;
}
