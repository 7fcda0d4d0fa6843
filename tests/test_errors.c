/* Errors come back as status codes with messages that say what failed (op, device, shapes, sizes),
 * the backend stays usable afterwards, and the library never exits: reaching the end proves it. */
#include "test_util.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define HAS(msg, part) (strstr((msg), (part)) != NULL)

/* Expects call to fail with `want` and every part (NULL-terminated) in the message. */
static void expect_fail(clg_status got, clg_status want, const char *what, const char *const *parts)
{
	const char *msg = clg_last_error();
	printf("  %-40s -> %s: %s\n", what, clg_status_name(got), msg);
	CHECK(got == want, "%s: got %s, want %s", what, clg_status_name(got), clg_status_name(want));
	CHECK(msg[0] != 0, "%s: empty message", what);
	for (int i = 0; parts && parts[i]; i++)
		CHECK(HAS(msg, parts[i]), "%s: message '%s' lacks '%s'", what, msg, parts[i]);
}

#define PARTS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Proof of life: c = a + b on fresh buffers gives the right answer. */
static void check_usable(clg_backend *be, const char *after)
{
	enum { N = 19 };
	clg_buffer *a = NULL, *b = NULL, *c = NULL;
	float x[N], y[N], z[N];
	int64_t sh[1] = {N};
	clg_op_call call = {.op = CLG_OP_ADD};
	int bad = 0;

	for (int i = 0; i < N; i++) {
		x[i] = (float)i;
		y[i] = 100.0f;
	}
	if (clg_buffer_alloc(be, sizeof(x), &a) || clg_buffer_alloc(be, sizeof(x), &b) ||
	    clg_buffer_alloc(be, sizeof(x), &c)) {
		CHECK(0, "'%s' unusable after %s: %s", be->info.name, after, clg_last_error());
		goto out;
	}
	CHECK_OK(clg_buffer_upload(a, 0, x, sizeof(x)));
	CHECK_OK(clg_buffer_upload(b, 0, y, sizeof(y)));
	clg_view_contiguous(&call.src[0], a, CLG_F32, 1, sh);
	clg_view_contiguous(&call.src[1], b, CLG_F32, 1, sh);
	clg_view_contiguous(&call.dst, c, CLG_F32, 1, sh);
	CHECK_OK(clg_run(be, &call));
	CHECK_OK(clg_buffer_download(c, 0, z, sizeof(z)));
	for (int i = 0; i < N; i++)
		bad += z[i] != (float)i + 100.0f;
	CHECK(bad == 0, "'%s' after %s: %d wrong sums", be->info.name, after, bad);
out:
	clg_buffer_free(a);
	clg_buffer_free(b);
	clg_buffer_free(c);
}

static void check_oom(clg_backend *be)
{
	clg_buffer *b = (clg_buffer *)(uintptr_t)1;
	clg_stats before, after;
	size_t huge = (size_t)1 << 50;
	char size_str[32];

	clg_backend_stats(be, &before);
	snprintf(size_str, sizeof(size_str), "%zu", huge);
	clg_clear_error();
	expect_fail(clg_buffer_alloc(be, huge, &b), CLG_ERR_OOM, "alloc 2^50 bytes", PARTS(be->info.name, size_str));
	CHECK(b == NULL, "failed alloc left a buffer pointer");
	clg_backend_stats(be, &after);
	CHECK(after.bytes_in_use == before.bytes_in_use, "failed alloc changed bytes_in_use");
	/* just over the device's largest allocation fails the same way */
	if (be->info.max_alloc < SIZE_MAX) {
		snprintf(size_str, sizeof(size_str), "%zu", (size_t)be->info.max_alloc + 1);
		expect_fail(clg_buffer_alloc(be, (size_t)be->info.max_alloc + 1, &b), CLG_ERR_OOM, "alloc max_alloc + 1",
			    PARTS(be->info.name, size_str));
	}
	check_usable(be, "an absurd allocation");
}

static void check_run_errors(clg_backend *be, clg_backend *other)
{
	const char *dev = be->info.name;
	clg_buffer *a = NULL, *b = NULL, *c = NULL, *ob = NULL;
	clg_op_call call;
	int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s6[1] = {6}, s8[1] = {8};
	clg_status st;
	int is_cl = strcmp(be->iface->kind, "opencl") == 0;

	printf("device '%s' (%s):\n", dev, be->iface->kind);
	if (clg_buffer_alloc(be, 6 * sizeof(float), &a) || clg_buffer_alloc(be, 6 * sizeof(float), &b) ||
	    clg_buffer_alloc(be, 64 * sizeof(float), &c) || clg_buffer_alloc(other, 6 * sizeof(float), &ob)) {
		CHECK(0, "buffers: %s", clg_last_error());
		goto out;
	}

	/* shape mismatch */
	memset(&call, 0, sizeof(call));
	call.op = CLG_OP_ADD;
	clg_view_contiguous(&call.src[0], a, CLG_F32, 2, s23);
	clg_view_contiguous(&call.src[1], b, CLG_F32, 2, s32);
	clg_view_contiguous(&call.dst, c, CLG_F32, 2, s23);
	expect_fail(clg_run(be, &call), CLG_ERR_SHAPE, "add (2,3) + (3,2)", PARTS("add", dev, "(2, 3)", "(3, 2)"));
	/* different rank */
	clg_view_contiguous(&call.src[1], b, CLG_F32, 1, s6);
	expect_fail(clg_run(be, &call), CLG_ERR_SHAPE, "add (2,3) + (6,)", PARTS("add", dev, "(2, 3)", "(6,)"));

	/* operands on different devices */
	clg_view_contiguous(&call.src[1], ob, CLG_F32, 2, s23);
	expect_fail(clg_run(be, &call), CLG_ERR_DEVICE, "add with src1 on another device",
		    PARTS("add", dev, other->info.name));
	clg_view_contiguous(&call.src[1], b, CLG_F32, 2, s23);
	clg_view_contiguous(&call.dst, ob, CLG_F32, 2, s23);
	expect_fail(clg_run(be, &call), CLG_ERR_DEVICE, "add with dst on another device",
		    PARTS("add", dev, other->info.name));
	/* ... and the other backend refuses this device's buffers too */
	expect_fail(clg_run(other, &call), CLG_ERR_DEVICE, "add run on the other backend", PARTS("add", dev));
	clg_view_contiguous(&call.dst, c, CLG_F32, 2, s23);
	CHECK_OK(clg_run(be, &call)); /* the good call still works */

	/* views reaching outside their buffers */
	clg_view_contiguous(&call.src[0], a, CLG_F32, 1, s8);
	clg_view_contiguous(&call.src[1], b, CLG_F32, 1, s8);
	clg_view_contiguous(&call.dst, c, CLG_F32, 1, s8);
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "view of 8 floats on a 6-float buffer",
		    PARTS("add", dev, "outside", "src0"));
	clg_view_contiguous(&call.src[0], a, CLG_F32, 1, s6);
	call.src[0].offset = 1;
	clg_view_contiguous(&call.src[1], b, CLG_F32, 1, s6);
	clg_view_contiguous(&call.dst, c, CLG_F32, 1, s6);
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "offset 1 + 6 floats on a 6-float buffer",
		    PARTS(dev, "outside"));
	call.src[0].offset = 0;
	call.src[0].stride[0] = 2;
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "stride 2 x 6 on a 6-float buffer", PARTS(dev, "outside"));
	call.src[0].stride[0] = -1;
	call.src[0].offset = 2;
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "negative stride below the start", PARTS(dev, "outside"));
	call.src[0].offset = 5; /* reversed view, in bounds */
	CHECK_OK(clg_run(be, &call));
	/* strides so large that the extent of the view overflows 64-bit arithmetic */
	call.src[0].offset = 0;
	call.src[0].stride[0] = (int64_t)1 << 62; /* (2^62 + 1) * 4 bytes wraps to 4 */
	call.src[0].shape[0] = call.src[1].shape[0] = call.dst.shape[0] = 2;
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "stride 2^62 (byte extent wraps)", PARTS(dev, "outside"));
	call.src[0].shape[0] = call.src[1].shape[0] = call.dst.shape[0] = 5; /* 4 * 2^62 wraps to 0 */
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "stride 2^62 x 5 (element extent wraps)", PARTS(dev, "outside"));
	call.src[0].stride[0] = INT64_MIN / 2;
	call.src[0].offset = 3;
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "stride -2^62 x 5", PARTS(dev, "outside"));
	clg_view_contiguous(&call.src[0], a, CLG_F32, 1, s6);
	clg_view_contiguous(&call.src[1], b, CLG_F32, 1, s6);
	clg_view_contiguous(&call.dst, c, CLG_F32, 1, s6);
	call.src[0].offset = INT64_MAX;
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "offset INT64_MAX", PARTS(dev, "outside"));
	call.src[0].offset = 0;
	call.src[0].stride[0] = 1;
	{ /* shape (2^32, 2^32) x strides (2^32, 1) on 2 dims also overflows */
		clg_view big = call.src[0];
		big.ndim = 2;
		big.shape[0] = big.shape[1] = (int64_t)1 << 32;
		big.stride[0] = (int64_t)1 << 32;
		big.stride[1] = 1;
		clg_op_call neg = {.op = CLG_OP_NEG, .src = {big}, .dst = big};
		neg.dst.buf = c;
		expect_fail(clg_run(be, &neg), CLG_ERR_INVALID, "(2^32, 2^32) view on a small buffer", PARTS(dev, "outside"));
	}
	clg_view_contiguous(&call.src[1], b, CLG_F64, 1, s6); /* 48 bytes on a 24-byte buffer */
	clg_view_contiguous(&call.src[0], b, CLG_F64, 1, s6);
	clg_view_contiguous(&call.dst, c, CLG_F64, 1, s6);
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "float64 view too big for its buffer", PARTS(dev, "outside"));

	/* dtype mismatch between operands */
	clg_view_contiguous(&call.src[0], a, CLG_F32, 1, s6);
	clg_view_contiguous(&call.src[1], b, CLG_F32, 1, s6);
	call.src[1].dtype = CLG_I32;
	clg_view_contiguous(&call.dst, c, CLG_F32, 1, s6);
	expect_fail(clg_run(be, &call), CLG_ERR_DTYPE, "add float32 + int32", PARTS("add", dev, "int32", "float32"));
	call.src[1].dtype = CLG_F32;
	call.dst.dtype = CLG_F64; /* c holds 64 floats: 6 doubles fit */
	expect_fail(clg_run(be, &call), CLG_ERR_DTYPE, "add float32 + float32 -> float64",
		    PARTS("add", dev, "float64", "src0"));
	/* float16: the elementwise ops take it on every device (storage, float32 compute); an op
	 * without a float16 path refuses it in clg_run, the same on every backend */
	clg_view_contiguous(&call.src[0], a, CLG_F16, 1, s6);
	clg_view_contiguous(&call.src[1], b, CLG_F16, 1, s6);
	clg_view_contiguous(&call.dst, c, CLG_F16, 1, s6);
	CHECK_OK(clg_run(be, &call));
	{
		int64_t s22h[2] = {2, 2};
		clg_op_call mm = {.op = CLG_OP_GEMM, .f = {1, 0}};
		clg_view_contiguous(&mm.src[0], a, CLG_F16, 2, s22h);
		clg_view_contiguous(&mm.src[1], b, CLG_F16, 2, s22h);
		clg_view_contiguous(&mm.dst, c, CLG_F16, 2, s22h);
		CHECK_OK(clg_run(be, &mm)); /* GEMM takes 16-bit operands (float32 accumulation) */
		mm.src[1].dtype = CLG_F32;
		expect_fail(clg_run(be, &mm), CLG_ERR_DTYPE, "gemm float16 @ float32", PARTS("gemm", dev, "float32", "float16"));
		clg_op_call sgd = {.op = CLG_OP_SGD_STEP, .f = {0.1}};
		clg_view_contiguous(&sgd.src[0], a, CLG_F16, 1, s6);
		clg_view_contiguous(&sgd.src[1], b, CLG_F16, 1, s6);
		clg_view_contiguous(&sgd.dst, c, CLG_F16, 1, s6);
		expect_fail(clg_run(be, &sgd), CLG_ERR_DTYPE, "sgd_step in float16", PARTS("sgd_step", dev, "float16"));
	}
	/* bad op id, missing buffer */
	call.op = CLG_OP_COUNT;
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "op id out of range", NULL);
	call.op = (clg_op)-1;
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "negative op id", NULL);
	call.op = CLG_OP_ADD;
	clg_view_contiguous(&call.src[0], a, CLG_F32, 1, s6);
	clg_view_contiguous(&call.src[1], NULL, CLG_F32, 1, s6);
	clg_view_contiguous(&call.dst, c, CLG_F32, 1, s6);
	expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "src1 without a buffer", PARTS("add", dev, "src1"));

	/* GEMM with an operand strided in both of its last two dims */
	if (is_cl) {
		int64_t s44[2] = {4, 4};
		memset(&call, 0, sizeof(call));
		call.op = CLG_OP_GEMM;
		call.f[0] = 1;
		clg_view_contiguous(&call.src[0], c, CLG_F32, 2, s44);
		call.src[0].stride[0] = 8;
		call.src[0].stride[1] = 2;
		clg_view_contiguous(&call.src[1], c, CLG_F32, 2, s44);
		clg_view_contiguous(&call.dst, c, CLG_F32, 2, s44);
		call.dst.offset = 40;
		st = clg_run(be, &call);
		expect_fail(st, CLG_ERR_INVALID, "gemm with A strides (8, 2)", PARTS("gemm", dev, "stride", "(4, 4)"));
		/* the same with B */
		clg_view_contiguous(&call.src[0], c, CLG_F32, 2, s44);
		call.src[1].stride[0] = 2;
		call.src[1].stride[1] = 8;
		expect_fail(clg_run(be, &call), CLG_ERR_INVALID, "gemm with B strides (2, 8)", PARTS("gemm", dev, "stride"));
		/* (GEMM in float64 is offered where the device has fp64, so it is no longer expected to
		 * fail here; GEMM in float16 is refused on every device, checked above) */
	}
	/* GEMM with inner dimensions that do not agree */
	{
		int64_t s23g[2] = {2, 3}, s22[2] = {2, 2};
		memset(&call, 0, sizeof(call));
		call.op = CLG_OP_GEMM;
		clg_view_contiguous(&call.src[0], a, CLG_F32, 2, s23g);
		clg_view_contiguous(&call.src[1], b, CLG_F32, 2, s23g);
		clg_view_contiguous(&call.dst, c, CLG_F32, 2, s22);
		expect_fail(clg_run(be, &call), CLG_ERR_SHAPE, "gemm (2,3) @ (2,3)", PARTS("gemm", dev, "(2, 3)", "(2, 2)"));
	}

	/* transfers out of range */
	{
		float tmp[8] = {0};
		char sz[32];
		snprintf(sz, sizeof(sz), "%zu", a->size);
		expect_fail(clg_buffer_upload(a, 0, tmp, 7 * sizeof(float)), CLG_ERR_INVALID, "upload 28 bytes into 24",
			    PARTS("upload", dev, sz));
		expect_fail(clg_buffer_upload(a, 20, tmp, 8), CLG_ERR_INVALID, "upload [20, 28) into 24", PARTS("upload", dev));
		expect_fail(clg_buffer_download(a, 4, tmp, 6 * sizeof(float)), CLG_ERR_INVALID, "download [4, 28) of 24",
			    PARTS("download", dev, sz));
		expect_fail(clg_buffer_download(a, 25, tmp, 0), CLG_ERR_INVALID, "download at offset 25 of 24",
			    PARTS("download", dev));
		expect_fail(clg_buffer_upload(a, SIZE_MAX - 2, tmp, 4), CLG_ERR_INVALID, "upload at offset SIZE_MAX - 2",
			    PARTS("upload", dev));
		expect_fail(clg_buffer_download(a, 8, tmp, SIZE_MAX - 4), CLG_ERR_INVALID, "download SIZE_MAX - 4 bytes",
			    PARTS("download", dev));
		expect_fail(clg_buffer_upload(NULL, 0, tmp, 4), CLG_ERR_INVALID, "upload to NULL", NULL);
		/* edges that are fine */
		CHECK_OK(clg_buffer_upload(a, 20, tmp, 4));
		CHECK_OK(clg_buffer_download(a, 24, tmp, 0));
	}
	check_usable(be, "rejected calls");
out:
	clg_buffer_free(a);
	clg_buffer_free(b);
	clg_buffer_free(c);
	clg_buffer_free(ob);
}

static void check_device_errors(int n)
{
	clg_backend *be = (clg_backend *)(uintptr_t)1;
	int idx;
	char num[16];

	printf("device selection:\n");
	expect_fail(clg_backend_open(-1, &be), CLG_ERR_DEVICE, "open device -1", PARTS("-1"));
	CHECK(be == NULL, "failed open left a backend pointer");
	snprintf(num, sizeof(num), "%d", n);
	expect_fail(clg_backend_open(n, &be), CLG_ERR_DEVICE, "open device n", PARTS(num));
	expect_fail(clg_backend_open(1000000, &be), CLG_ERR_DEVICE, "open device 1000000", PARTS("1000000"));

	clg_config_set("DEVICE", "nonsense");
	expect_fail(clg_device_select(NULL, &idx), CLG_ERR_DEVICE, "CLGRAD_DEVICE=nonsense", PARTS("nonsense"));
	CHECK(idx == -1, "failed select gave index %d", idx);
	clg_config_set("DEVICE", "99999");
	expect_fail(clg_device_select(NULL, &idx), CLG_ERR_DEVICE, "CLGRAD_DEVICE=99999", PARTS("99999"));
	clg_config_set("DEVICE", NULL);
	CHECK_OK(clg_device_select(NULL, &idx));
	expect_fail(clg_buffer_alloc(NULL, 4, &(clg_buffer *){0}), CLG_ERR_INVALID, "alloc without a backend", NULL);
	clg_clear_error();
	CHECK(clg_last_error()[0] == 0, "clg_clear_error left '%s'", clg_last_error());
	/* the status follows the message: a failure reported by clg_fail alone (as a NULL-returning
	 * function may) must not leave clg_last_status() at an earlier failure's */
	expect_fail(clg_fail(CLG_ERR_DTYPE, "first"), CLG_ERR_DTYPE, "a dtype failure", NULL);
	expect_fail(clg_fail(CLG_ERR_IO, "second"), CLG_ERR_IO, "an I/O failure after it", NULL);
	CHECK(clg_last_status() == CLG_ERR_IO, "clg_last_status() %s after clg_fail(CLG_ERR_IO), not I/O error",
	      clg_status_name(clg_last_status()));
	CHECK(strcmp(clg_status_name(CLG_ERR_OOM), clg_status_name(CLG_ERR_SHAPE)) != 0, "status names");
	CHECK(strcmp(clg_status_name((clg_status)999), "unknown status") == 0, "name of an unknown status");
}

/* The losses' options and max/min dims: refused with messages naming the op, the device and the
 * shapes or the value; ONE_HOT's operands checked by clg_run. */
static void check_loss_errors(clg_backend *be)
{
	const char *dev = be->info.name;
	float xs[12] = {0};
	int32_t ys[3] = {0, 1, 2};
	clg_loss_opts o = CLG_LOSS_OPTS_INIT;
	clg_tensor *x = clg_from_host(be, CLG_F32, CLG_SHAPE(3, 4), xs), *y = clg_from_host(be, CLG_I32, CLG_SHAPE(3), ys);
	clg_tensor *y2 = clg_from_host(be, CLG_I32, CLG_SHAPE(3, 1), ys), *w = clg_from_host(be, CLG_F32, CLG_SHAPE(3), xs);
	clg_tensor *t = clg_from_host(be, CLG_F32, CLG_SHAPE(3, 4), xs), *r;

	printf("losses and max/min dims on '%s':\n", dev);
	r = clg_cross_entropy_ex(x, y2, NULL);
	expect_fail(r ? CLG_OK : clg_last_status(), CLG_ERR_SHAPE, "cross_entropy (3, 4) with int32 (3, 1)",
		    PARTS("cross_entropy", dev, "(3, 4)", "(3, 1)", "int32"));
	clg_free(r);
	o.reduction = (clg_reduction)7;
	r = clg_cross_entropy_ex(x, y, &o);
	expect_fail(r ? CLG_OK : clg_last_status(), CLG_ERR_INVALID, "cross_entropy reduction 7",
		    PARTS("cross_entropy", dev, "7"));
	clg_free(r);
	o.reduction = CLG_REDUCTION_MEAN;
	o.label_smoothing = 1.5;
	r = clg_cross_entropy_ex(x, y, &o);
	expect_fail(r ? CLG_OK : clg_last_status(), CLG_ERR_INVALID, "cross_entropy label_smoothing 1.5",
		    PARTS("cross_entropy", dev, "1.5"));
	clg_free(r);
	o.label_smoothing = 0;
	o.weight = w;
	r = clg_nll_loss_ex(x, y, &o);
	expect_fail(r ? CLG_OK : clg_last_status(), CLG_ERR_SHAPE, "nll_loss weight (3) for 4 classes",
		    PARTS("nll_loss", dev, "weight", "(3,)", "(3, 4)"));
	clg_free(r);
	o.weight = NULL;
	o.ignore_index = 0;
	r = clg_cross_entropy_ex(x, t, &o);
	expect_fail(r ? CLG_OK : clg_last_status(), CLG_ERR_INVALID, "cross_entropy dense targets, ignore_index 0",
		    PARTS("cross_entropy", dev, "ignore_index", "dense"));
	clg_free(r);
	r = clg_max_dim(x, 2, 0, NULL);
	expect_fail(r ? CLG_OK : clg_last_status(), CLG_ERR_SHAPE, "max_dim dim 2 of (3, 4)",
		    PARTS("max", dev, "dim 2", "(3, 4)"));
	clg_free(r);
	r = clg_argmin_dim(x, -3, 1);
	expect_fail(r ? CLG_OK : clg_last_status(), CLG_ERR_SHAPE, "argmin_dim dim -3 of (3, 4)",
		    PARTS("argmin", dev, "dim -3", "(3, 4)"));
	clg_free(r);
	{ /* ONE_HOT: int32 indices, (N) values and indices for an (N, C) dst */
		clg_op_call c = {.op = CLG_OP_ONE_HOT};
		clg_buffer *bd = NULL, *bv = NULL;
		int64_t s34[2] = {3, 4}, s3[1] = {3};
		if (!clg_buffer_alloc(be, 12 * sizeof(float), &bd) && !clg_buffer_alloc(be, 12 * sizeof(float), &bv)) {
			clg_view_contiguous(&c.dst, bd, CLG_F32, 2, s34);
			clg_view_contiguous(&c.src[0], bv, CLG_F32, 1, s3);
			clg_view_contiguous(&c.src[1], bv, CLG_F32, 1, s3);
			expect_fail(clg_run(be, &c), CLG_ERR_DTYPE, "one_hot with float32 indices", PARTS("one_hot", dev, "int32"));
			clg_view_contiguous(&c.src[0], bv, CLG_F32, 2, s34);
			clg_view_contiguous(&c.src[1], bv, CLG_I32, 1, s3);
			expect_fail(clg_run(be, &c), CLG_ERR_SHAPE, "one_hot values (3, 4)", PARTS("one_hot", dev, "(3, 4)"));
		}
		clg_buffer_free(bd);
		clg_buffer_free(bv);
	}
	clg_free(x);
	clg_free(y);
	clg_free(y2);
	clg_free(w);
	clg_free(t);
}

/* If anything calls exit() before main reaches its end, fail instead of passing with its status. */
static int reached_end;
static void exit_guard(void)
{
	if (!reached_end) {
		fprintf(stderr, "test_errors: the process exited before the end of the test\n");
		_exit(1);
	}
}

int main(void)
{
	const clg_device_info *list;
	int n;
	clg_backend *ref = NULL;

	t_require_opencl();
	atexit(exit_guard);
	clg_config_set("KERNEL_DIR", NULL);
	CHECK_OK(clg_devices(&list, &n));
	check_device_errors(n);
	CHECK_OK(clg_backend_open(0, &ref));
	if (!ref) {
		reached_end = 1;
		return t_finish("test_errors");
	}
	check_loss_errors(ref);
	for (int i = 1; i < n; i++) {
		clg_backend *be = NULL;
		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		printf("out of memory on '%s':\n", be->info.name);
		check_oom(be);
		check_run_errors(be, ref);
		check_run_errors(ref, be);
		clg_backend_close(be);
	}
	clg_backend_close(ref);
	printf("the library never exited: reached the end\n");
	reached_end = 1;
	return t_finish("test_errors");
}
