/* INDEX_ADD (embedding backward) on one device, by each OpenCL path: the scan (every dst row reads
 * all M indices) and the counting sort with each bucket sorted or ordered by block ranks
 * (backend/opencl/cl_ops_index.c), chosen by $CLGRAD_INDEX_ADD. dst (V, D) += rows of src (M, D)
 * at M indices drawn uniformly from [0, V).
 * Prints the median of R timed calls (each followed by clg_synchronize, after one warm-up call)
 * per path, and checks that the paths' results are bit-identical.
 * usage: bench_index_add [--device N] [--rounds R] [V M D]   (default device 1, the first OpenCL one; R 10, 50000 8192 64) */
#include "clg_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median seconds of rounds calls of c on path, the last result downloaded into out (dst zeroed first). */
static int time_path(clg_backend *be, const clg_op_call *c, const char *path, int rounds, float *zero, float *out,
		     size_t dbytes, double *med)
{
	double t[64];
	setenv("CLGRAD_INDEX_ADD", path, 1);
	for (int r = -1; r < rounds; r++) {
		double t0;
		if (clg_buffer_upload(c->dst.buf, 0, zero, dbytes) || clg_synchronize(be))
			return -1;
		t0 = now();
		if (clg_run(be, c) || clg_synchronize(be))
			return -1;
		if (r >= 0)
			t[r] = now() - t0;
	}
	qsort(t, (size_t)rounds, sizeof(double), cmp_double);
	*med = t[rounds / 2];
	return clg_buffer_download(c->dst.buf, 0, out, dbytes) ? -1 : 0;
}

int main(int argc, char **argv)
{
	int dev = 1, rounds = 10, rc = 1, pos = 0;
	int64_t dims[3] = {50000, 8192, 64};
	clg_backend *be = NULL;
	clg_buffer *b[3] = {NULL, NULL, NULL};
	clg_op_call c = {.op = CLG_OP_INDEX_ADD};
	static const char *const paths[3] = {"scan", "sort", "rank"};
	float *zero = NULL, *src = NULL, *out[3] = {NULL, NULL, NULL};
	int32_t *ix = NULL;
	double med[3];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < argc)
			dev = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (pos < 3)
			dims[pos++] = atoll(argv[i]);
	}
	rounds = rounds < 1 ? 1 : rounds > 64 ? 64 : rounds;
	{
		int64_t V = dims[0], M = dims[1], D = dims[2];
		size_t dbytes = (size_t)(V * D) * sizeof(float), sbytes = (size_t)(M * D) * sizeof(float);
		zero = calloc((size_t)(V * D), sizeof(float));
		out[0] = malloc(dbytes), out[1] = malloc(dbytes), out[2] = malloc(dbytes);
		src = malloc(sbytes);
		ix = malloc((size_t)M * sizeof(int32_t));
		if (!zero || !out[0] || !out[1] || !out[2] || !src || !ix)
			goto out;
		srand(1);
		for (int64_t i = 0; i < M * D; i++)
			src[i] = (float)rand() / (float)RAND_MAX - 0.5f;
		for (int64_t i = 0; i < M; i++)
			ix[i] = (int32_t)(rand() % V);
		if (clg_backend_open(dev, &be) || clg_buffer_alloc(be, dbytes, &b[0]) || clg_buffer_alloc(be, sbytes, &b[1]) ||
		    clg_buffer_alloc(be, (size_t)M * sizeof(int32_t), &b[2]) || clg_buffer_upload(b[1], 0, src, sbytes) ||
		    clg_buffer_upload(b[2], 0, ix, (size_t)M * sizeof(int32_t))) {
			fprintf(stderr, "bench_index_add: %s\n", clg_last_error());
			goto out;
		}
		clg_view_contiguous(&c.dst, b[0], CLG_F32, 2, (int64_t[]){V, D});
		clg_view_contiguous(&c.src[0], b[1], CLG_F32, 2, (int64_t[]){M, D});
		clg_view_contiguous(&c.src[1], b[2], CLG_I32, 1, (int64_t[]){M});
		for (int p = 0; p < 3; p++) {
			if (time_path(be, &c, paths[p], rounds, zero, out[p], dbytes, &med[p])) {
				fprintf(stderr, "bench_index_add: %s\n", clg_last_error());
				goto out;
			}
		}
		rc = memcmp(out[0], out[1], dbytes) != 0 || memcmp(out[0], out[2], dbytes) != 0;
		printf("index_add V=%lld M=%lld D=%lld on %s: scan %.3f ms, sort %.3f ms (%.1fx), rank %.3f ms (%.1fx), "
		       "results %s\n", (long long)V, (long long)M, (long long)D, clg_backend_info(be)->name, 1e3 * med[0], 1e3 * med[1],
		       med[0] / med[1], 1e3 * med[2], med[0] / med[2], rc ? "DIFFER" : "bit-identical");
	}
out:
	for (int k = 0; k < 3; k++)
		clg_buffer_free(b[k]);
	if (be)
		clg_backend_close(be);
	free(zero), free(src), free(out[0]), free(out[1]), free(out[2]), free(ix);
	return rc;
}
