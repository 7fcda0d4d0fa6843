/* clgrad smoke [--device SPEC]: a small GEMM + bias + ReLU + sum on a device, checked against
 * the reference backend. Proves the whole path (kernels, CLBlast, transfers) end to end. */
#include "cli.h"
#include "opts.h"

#include <clg_selftest.h>
#include <clgrad.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { M = 64, K = 48, N = 32 };

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* loss = sum(relu(A @ B + bias)) over rows and columns; the per-row sums come back in rows[M]. */
static clg_status forward(clg_backend *be, const float *a, const float *b, const float *bias, float *rows)
{
	clg_buffer *ba = NULL, *bb = NULL, *bbias = NULL, *bc = NULL, *bs = NULL;
	clg_view A, B, C, Bias, S;
	clg_op_call call;
	clg_status st;

	if ((st = clg_buffer_alloc(be, sizeof(float) * M * K, &ba)) || (st = clg_buffer_alloc(be, sizeof(float) * K * N, &bb)) ||
	    (st = clg_buffer_alloc(be, sizeof(float) * N, &bbias)) || (st = clg_buffer_alloc(be, sizeof(float) * M * N, &bc)) ||
	    (st = clg_buffer_alloc(be, sizeof(float) * M, &bs)))
		goto out;
	if ((st = clg_buffer_upload(ba, 0, a, sizeof(float) * M * K)) || (st = clg_buffer_upload(bb, 0, b, sizeof(float) * K * N)) ||
	    (st = clg_buffer_upload(bbias, 0, bias, sizeof(float) * N)))
		goto out;
	clg_view_contiguous(&A, ba, CLG_F32, 2, (int64_t[]){M, K});
	clg_view_contiguous(&B, bb, CLG_F32, 2, (int64_t[]){K, N});
	clg_view_contiguous(&C, bc, CLG_F32, 2, (int64_t[]){M, N});
	clg_view_contiguous(&S, bs, CLG_F32, 1, (int64_t[]){M});
	Bias = C;                     /* bias broadcast over rows: stride 0 */
	Bias.buf = bbias;
	Bias.stride[0] = 0;

	memset(&call, 0, sizeof(call));
	call.op = CLG_OP_GEMM;
	call.src[0] = A;
	call.src[1] = B;
	call.dst = C;
	call.f[0] = 1.0;
	if ((st = clg_run(be, &call)))
		goto out;
	call.op = CLG_OP_ADD;
	call.src[0] = C;
	call.src[1] = Bias;
	if ((st = clg_run(be, &call)))
		goto out;
	call.op = CLG_OP_RELU;
	if ((st = clg_run(be, &call)))
		goto out;
	call.op = CLG_OP_SUM;
	call.dst = S;
	if ((st = clg_run(be, &call)))
		goto out;
	st = clg_buffer_download(bs, 0, rows, sizeof(float) * M);
out:
	clg_buffer_free(ba);
	clg_buffer_free(bb);
	clg_buffer_free(bbias);
	clg_buffer_free(bc);
	clg_buffer_free(bs);
	return st;
}

int cmd_smoke(int argc, char **argv)
{
	const char *spec = NULL;
	const clg_device_info *list;
	float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N), bias[N], ref[M], dev[M];
	clg_backend *rb = NULL, *db = NULL;
	int idx, n, rc = 1;
	double t0, t1, worst = 0, scale = 0;

	const cli_opt opts[] = {CLI_OPT_STR("device", &spec)};
	cli_spec cs = {.cmd = "smoke", .usage = "usage: clgrad smoke [--device SPEC]\n", .opts = opts, .n = CLI_N(opts)};

	if ((rc = cli_parse(&cs, argc, argv)) >= 0)
		goto out;
	rc = 1;
	if (!a || !b) {
		fprintf(stderr, "clgrad smoke: out of memory\n");
		goto out;
	}
	srand(1);
	for (int i = 0; i < M * K; i++)
		a[i] = (float)rand() / (float)RAND_MAX - 0.5f;
	for (int i = 0; i < K * N; i++)
		b[i] = (float)rand() / (float)RAND_MAX - 0.5f;
	for (int i = 0; i < N; i++)
		bias[i] = 0.1f * (float)(i % 5) - 0.2f;

	if (clg_devices(&list, &n) || clg_device_select(spec, &idx) || clg_backend_open(0, &rb) ||
	    clg_backend_open(idx, &db)) {
		rc = report_error("smoke");
		goto out;
	}
	printf("smoke: sum(relu(A(%dx%d) @ B(%dx%d) + bias)) on device %d '%s' (%s)\n", M, K, K, N, idx,
	       list[idx].name, list[idx].platform);
	if (forward(rb, a, b, bias, ref)) {
		rc = report_error("smoke");
		goto out;
	}
	t0 = now();
	if (forward(db, a, b, bias, dev)) {
		rc = report_error("smoke");
		goto out;
	}
	t1 = now();
	for (int i = 0; i < M; i++) {
		worst = fmax(worst, fabs((double)dev[i] - ref[i]));
		scale = fmax(scale, fabs((double)ref[i]));
	}
	printf("smoke: first run %.3f s (includes kernel compilation or cache load)\n", t1 - t0);
	printf("smoke: max |device - reference| = %.3g (scale %.3g): %s\n", worst, scale,
	       worst <= 1e-4 * (scale + 1) ? "OK" : "MISMATCH");
	rc = worst <= 1e-4 * (scale + 1) ? 0 : 1;
	{ /* the rest of the device's self-test: its ops otherwise run their cases at their first use */
		clg_selftest_info si;
		const clg_route *routes;
		int nroutes = 0;
		if (!clg_backend_selftest_info(db, &si) && !clg_backend_routes(db, &routes, &nroutes) && si.enabled)
			printf("smoke: self-test of every op: %d cases run here%s, %d wrong, %d route(s)%s\n", si.cases_run,
			       si.from_cache ? " (the rest from the cached result)" : "", si.cases_failed, nroutes,
			       nroutes ? " (clgrad compare lists them)" : "");
	}
out:
	clg_backend_close(db);
	clg_backend_close(rb);
	free(a);
	free(b);
	return rc;
}
