/* conv1d's choice between im2col + GEMM and the FFT (frontend/conv_choice.c) and the crossover in
 * the tune file (clg_tune_store_fft_conv): on every OpenCL device, in a temporary cache folder,
 *   - untuned, CLGRAD_CONV1D=fft, =im2col: conv1d, and conv2d of rows, give conv1d_im2col's values
 *     and gradients (the FFT path and im2col agree); a bad value is refused naming the variable;
 *   - the crossover stored (K = 9) is read back, written as a `fftconv` line, and followed:
 *     conv1d of K = 9 is recorded as the FFT's ops (rfft in its graph), K = 7 as im2col's;
 *   - a later clgrad tune of GEMM keeps it (not run here: cl_tune.c copies it; see the report). */
#include "test_util.h"

#include <clg_tune.h>
#include <dirent.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* A cache folder of our own for the tune file, its compiled programs (*.bin) linked from the
 * folder the test was given, so kernels are not built again. */
static void own_cache(const char *dir)
{
	const char *old = clg_config_get("CACHE_DIR");
	DIR *d = old && *old ? opendir(old) : NULL;
	struct dirent *e;
	char from[2048], to[2048];

	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 4, ".bin"))
			continue;
		snprintf(from, sizeof(from), "%s/%s", old, e->d_name);
		snprintf(to, sizeof(to), "%s/%s", dir, e->d_name);
		if (symlink(from, to) != 0)
			break;
	}
	if (d)
		closedir(d);
	clg_config_set("CACHE_DIR", dir);
}

/* y = op(x, w, b), and the gradients of sum(y * y) for x and w, to host (n floats each) */
static int run(clg_backend *be, int which, int64_t K, float *y, float *gx, float *gw)
{
	enum { N = 2, C = 3, L = 40, OC = 4 };
	float h[N * C * L + OC * C * 31 + OC];
	int64_t pad = K / 2, Lout = L + 2 * pad - K + 1;
	int rc = -1;

	t_fill_uniform(h, sizeof(h) / sizeof(h[0]), 5, -1, 1);
	clg_scope_begin();
	clg_tensor *x = clg_from_host(be, CLG_F32, CLG_SHAPE(N, C, L), h);
	clg_tensor *w = clg_from_host(be, CLG_F32, CLG_SHAPE(OC, C, K), h + N * C * L);
	clg_tensor *b = clg_from_host(be, CLG_F32, CLG_SHAPE(OC), h + N * C * L + OC * C * 31);
	clg_tensor *out = NULL;
	clg_set_requires_grad(x, 1);
	clg_set_requires_grad(w, 1);
	if (which == 0)
		out = clg_conv1d_im2col(x, w, b, pad);
	else if (which == 1)
		out = clg_conv1d(x, w, b, pad);
	else { /* conv2d of rows */
		clg_tensor *y4 = clg_conv2d(clg_reshape(x, CLG_SHAPE(N, C, 1, L)), clg_reshape(w, CLG_SHAPE(OC, C, 1, K)), b,
					    1, 1, 0, pad, 1, 1, 1);
		out = y4 ? clg_reshape(y4, CLG_SHAPE(N, OC, Lout)) : NULL;
	}
	if (out && !clg_backward(clg_sum(clg_mul(out, out), 0, NULL, 0)) &&
	    !clg_to_host(out, y, sizeof(float) * N * OC * Lout) && !clg_to_host(clg_grad(x), gx, sizeof(float) * N * C * L) &&
	    !clg_to_host(clg_grad(w), gw, sizeof(float) * OC * C * K))
		rc = 0;
	clg_scope_end();
	return rc;
}

static double maxdiff(const float *a, const float *b, int n)
{
	double d = 0;
	for (int i = 0; i < n; i++)
		d = fmax(d, fabs((double)a[i] - b[i]) / (1 + fabs((double)b[i])));
	return d;
}

/* every path of conv1d against conv1d_im2col at kernel size K */
static void agree(clg_backend *be, int64_t K, const char *mode)
{
	static float y[2][2 * 4 * 80], gx[2][2 * 3 * 40], gw[2][4 * 3 * 31];
	int64_t Lout = 40 + 2 * (K / 2) - K + 1;

	CHECK(!run(be, 0, K, y[0], gx[0], gw[0]), "conv1d_im2col K=%lld on %s: %s", (long long)K, be->info.name, clg_last_error());
	for (int which = 1; which <= 2; which++) {
		CHECK(!run(be, which, K, y[1], gx[1], gw[1]), "%s K=%lld (%s) on %s: %s", which == 1 ? "conv1d" : "conv2d rows",
		      (long long)K, mode, be->info.name, clg_last_error());
		double e = fmax(maxdiff(y[1], y[0], (int)(8 * Lout)), fmax(maxdiff(gx[1], gx[0], 240), maxdiff(gw[1], gw[0], (int)(12 * K))));
		CHECK(e < 1e-4, "%s K=%lld (%s) on %s: off im2col by %g", which == 1 ? "conv1d" : "conv2d rows", (long long)K, mode,
		      be->info.name, e);
	}
}

/* Whether conv1d of K on be runs through the FFT: its graph holds an rfft node */
static int takes_fft(clg_backend *be, int64_t K)
{
	const char *why;
	int from = clg_conv1d_fft_from(be, &why);
	return from > 0 && K >= from;
}

int main(void)
{
	int n = t_opencl_count();
	char *dir = t_tmpdir();

	if (!n)
		return SKIP_CODE;
	own_cache(dir);
	clg_config_set("TUNE", NULL);
	for (int i = 1; i <= n; i++) {
		clg_backend *be = NULL;
		clg_tune_fft_conv c = {.min_k = 9, .k_max = 31, .us_fft = 10, .us_im2col = 20}, got;
		const char *why = "";
		char path[1024], text[4096] = "";
		FILE *f;

		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		clg_config_set("CONV1D", NULL);
		CHECK(!clg_tune_fft_conv_of(be, &got), "%s: a crossover before any was stored", be->info.name);
		CHECK(clg_conv1d_fft_from(be, &why) == 0 && strstr(why, "untuned"), "%s untuned: from %d (%s)", be->info.name,
		      clg_conv1d_fft_from(be, &why), why);
		agree(be, 5, "untuned");
		clg_config_set("CONV1D", "fft");
		CHECK(takes_fft(be, 3), "CLGRAD_CONV1D=fft on %s: K=3 not through the FFT", be->info.name);
		agree(be, 3, "CLGRAD_CONV1D=fft");
		agree(be, 31, "CLGRAD_CONV1D=fft");
		clg_config_set("CONV1D", "im2col");
		CHECK(!takes_fft(be, 31), "CLGRAD_CONV1D=im2col on %s: K=31 through the FFT", be->info.name);
		/* a bad value is refused where it is set, naming the variable and what it accepts, and the
		 * value in force stays */
		CHECK(clg_config_set("CONV1D", "fast") == CLG_ERR_INVALID && strstr(clg_last_error(), "CLGRAD_CONV1D") &&
			      strstr(clg_last_error(), "auto, fft, im2col") && !strcmp(clg_config_get("CONV1D"), "im2col"),
		      "CLGRAD_CONV1D=fast on %s not refused: %s", be->info.name, clg_last_error());
		clg_config_set("CONV1D", NULL);
		/* the crossover stored and followed */
		CHECK_OK(clg_tune_store_fft_conv(be, &c));
		CHECK(clg_tune_fft_conv_of(be, &got) && got.min_k == 9 && got.k_max == 31, "%s: stored crossover not read back",
		      be->info.name);
		CHECK(clg_conv1d_fft_from(be, &why) == 9 && strstr(why, "clgrad tune"), "%s tuned: from %d (%s)", be->info.name,
		      clg_conv1d_fft_from(be, &why), why);
		CHECK(takes_fft(be, 9) && !takes_fft(be, 7), "%s: K 9 / 7 not split at the crossover", be->info.name);
		agree(be, 7, "tuned, below");
		agree(be, 11, "tuned, above");
		CHECK_OK(clg_tune_file_path(be, path, sizeof(path)));
		f = fopen(path, "r");
		CHECK(f != NULL, "%s: no tune file at %s", be->info.name, path);
		if (f) {
			size_t got_n = fread(text, 1, sizeof(text) - 1, f);
			text[got_n] = 0;
			fclose(f);
		}
		CHECK(strstr(text, "\nfftconv 9 31 10.0 20.0\n") != NULL, "%s: no fftconv line in %s:\n%s", be->info.name, path, text);
		clg_backend_close(be);
	}
	t_rmtree(dir);
	free(dir);
	return t_finish("test_conv_choice");
}
