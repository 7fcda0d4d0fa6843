/* Fused attention and the first-use self-test (backend/opencl/cl_selftest.c), on every OpenCL
 * device, the self-test on and its cached results in a fresh folder:
 *   - the real kernels: the attention ops pass the self-test and serve
 *     clg_scaled_dot_product_attention, whose output and gradients match the reference backend's;
 *   - argv[1] (a copy of the kernels with a causal mask one key too wide): the forward is routed to
 *     unsupported, and the frontend composes the unfused ops instead: the output and gradients
 *     still match the reference.
 * usage: test_attn_route [MUTANT_KERNEL_DIR] */
#include "test_util.h"

#include <clg_selftest.h>
#include <math.h>
#include <string.h>

enum { B = 1, H = 2, T = 7, D = 8, N = B * H * T * D };

/* causal attention of fixed inputs on be: the output, then dq, dk, dv (4 N floats) */
static int attention_on(clg_backend *be, float *out)
{
	float x[3][N];
	clg_tensor *in[3] = {0}, *y = NULL, *s = NULL;
	int ok = 1;

	for (int i = 0; i < 3; i++) {
		t_fill_uniform(x[i], N, 11u + (unsigned)i, -1, 1);
		in[i] = clg_from_host(be, CLG_F32, CLG_SHAPE(B, H, T, D), x[i]);
		ok &= in[i] != NULL;
		if (in[i])
			clg_set_requires_grad(in[i], 1);
	}
	y = ok ? clg_scaled_dot_product_attention(in[0], in[1], in[2], 1, 0.0) : NULL;
	s = y ? clg_sum(y, 0, NULL, 0) : NULL;
	ok = s && !clg_backward(s) && !clg_to_host(y, out, N * sizeof(float));
	for (int i = 0; ok && i < 3; i++)
		ok = clg_grad(in[i]) && !clg_to_host(clg_grad(in[i]), out + (i + 1) * N, N * sizeof(float));
	CHECK(ok, "attention on '%s': %s", be->info.name, clg_last_error());
	clg_free(s);
	clg_free(y);
	for (int i = 0; i < 3; i++)
		clg_free(in[i]);
	return ok;
}

int main(int argc, char **argv)
{
	const char *mutant = argc > 1 ? argv[1] : NULL;
	char *cache;
	float want[4 * N], got[4 * N];
	clg_backend *ref = NULL;

	t_require_opencl();
	cache = t_tmpdir();
	clg_config_set("CACHE_DIR", cache);
	clg_config_set("SELFTEST", "1");
	clg_config_set("FUSED", NULL);
	if (mutant)
		clg_config_set("KERNEL_DIR", mutant);
	CHECK_OK(clg_backend_open(0, &ref));
	if (ref && attention_on(ref, want)) {
		for (int idx = 1; idx <= t_opencl_count(); idx++) {
			clg_backend *be = NULL;
			const clg_route *r;
			int n, routed = 0;
			double err = 0, scale = 1;

			CHECK_OK(clg_backend_open(idx, &be));
			if (!be)
				continue;
			CHECK_OK(clg_backend_routes(be, &r, &n));
			for (int k = 0; k < n; k++)
				routed |= r[k].op == CLG_OP_ATTENTION_FWD;
			CHECK(routed == (mutant != NULL), "device '%s': attention_fwd %s by the self-test", be->info.name,
			      routed ? "routed" : "not routed");
			CHECK((be->ops[CLG_OP_ATTENTION_FWD] == NULL) == (mutant != NULL),
			      "device '%s': the fused forward is %s", be->info.name,
			      be->ops[CLG_OP_ATTENTION_FWD] ? "still in the op table" : "missing");
			if (attention_on(be, got)) {
				for (int i = 0; i < 4 * N; i++) {
					err = fmax(err, fabs((double)got[i] - want[i]));
					scale = fmax(scale, fabs((double)want[i]));
				}
				CHECK(err / scale < 1e-5, "device '%s': output and gradients off the reference by %g",
				      be->info.name, err / scale);
			}
			printf("%-40s %s, max error %.2g\n", be->info.name,
			       routed ? "fused attention routed away: composed" : "fused attention", err / scale);
			clg_backend_close(be);
		}
	}
	clg_backend_close(ref);
	t_rmtree(cache);
	free(cache);
	return t_finish("test_attn_route");
}
