/* The tensor API: values of views and broadcasting, device copies, scopes, no-grad, and the
 * errors a user meets (mismatched shapes, dtypes, devices, backward twice, bad reshape). */
#include "test_util.h"

#include <math.h>
#include <string.h>

static void expect_values(clg_tensor *t, const float *want, int n, const char *what)
{
	float got[64];
	CHECK(clg_numel(t) == n, "%s: %lld elements, want %d", what, (long long)clg_numel(t), n);
	if (clg_numel(t) != n || clg_to_host(t, got, sizeof(float) * (size_t)n) != CLG_OK)
		return;
	for (int i = 0; i < n; i++)
		CHECK(fabsf(got[i] - want[i]) < 1e-5f, "%s[%d] = %g, want %g", what, i, got[i], want[i]);
}

static void test_device(clg_backend *be, clg_backend *other)
{
	const float a6[] = {1, 2, 3, 4, 5, 6};
	clg_tensor *a, *t, *s, *e, *b, *y;

	clg_scope_begin();
	a = clg_from_host(be, CLG_F32, CLG_SHAPE(2, 3), a6);
	/* transpose + contiguous: (3, 2) */
	t = clg_contiguous(clg_transpose(a, 0, 1));
	expect_values(t, (float[]){1, 4, 2, 5, 3, 6}, 6, "transpose");
	/* slice with a step: columns 0 and 2 */
	s = clg_contiguous(clg_slice(a, 1, 0, 3, 2));
	expect_values(s, (float[]){1, 3, 4, 6}, 4, "slice");
	/* broadcasting add: (2, 3) + (3) */
	b = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){10, 20, 30});
	expect_values(clg_add(a, b), (float[]){11, 22, 33, 14, 25, 36}, 6, "broadcast add");
	/* (2, 1) * (1, 3) -> outer product */
	e = clg_mul(clg_reshape(clg_arange(be, CLG_F32, 2), CLG_SHAPE(2, 1)), clg_reshape(b, CLG_SHAPE(1, 3)));
	expect_values(e, (float[]){0, 0, 0, 10, 20, 30}, 6, "outer product");
	/* reductions */
	expect_values(clg_sum(a, 1, (int[]){0}, 0), (float[]){5, 7, 9}, 3, "sum axis 0");
	expect_values(clg_mean(a, 1, (int[]){-1}, 1), (float[]){2, 5}, 2, "mean axis -1 keepdim");
	CHECK(clg_ndim(clg_mean(a, 1, (int[]){-1}, 1)) == 2, "keepdim keeps the rank");
	/* reshape with -1 */
	y = clg_reshape(a, CLG_SHAPE(-1, 2));
	CHECK(y && clg_shape(y)[0] == 3 && clg_shape(y)[1] == 2, "reshape -1 inferred");
	/* copy to another device and back */
	if (other) {
		clg_tensor *o = clg_to_device(t, other);
		CHECK(o && clg_device_of(o) == other, "to_device lands on the other device");
		expect_values(o, (float[]){1, 4, 2, 5, 3, 6}, 6, "to_device");
		/* ops across devices are refused with a clear message */
		CHECK(clg_add(o, t) == NULL && clg_last_status() == CLG_ERR_DEVICE, "cross-device add refused");
		CHECK(strstr(clg_last_error(), "different devices") != NULL, "message: %s", clg_last_error());
	}
	/* int32 tensors (indices) are copied and filled exactly, beyond float's 2^24 */
	{
		int32_t ids[6] = {1, 2, 3, 16777217, 5, -6}, got[6];
		clg_tensor *it = clg_from_host(be, CLG_I32, CLG_SHAPE(2, 3), ids);
		clg_tensor *tc = clg_contiguous(clg_transpose(it, 0, 1));
		CHECK(tc && clg_to_host(tc, got, sizeof(got)) == CLG_OK && got[1] == 16777217 && got[5] == -6,
		      "int32 transpose copy on %s: %s", be->info.name, clg_last_error());
		clg_tensor *f = clg_full(be, CLG_I32, CLG_SHAPE(3), 7);
		CHECK(f && clg_to_host(f, got, 3 * sizeof(int32_t)) == CLG_OK && got[0] == 7 && got[2] == 7,
		      "int32 fill on %s", be->info.name);
	}
	/* errors: shapes that do not broadcast, dtype mix, bad reshape, bad axis */
	CHECK(clg_add(a, clg_ones(be, CLG_F32, CLG_SHAPE(4))) == NULL && clg_last_status() == CLG_ERR_SHAPE,
	      "(2,3) + (4) refused");
	CHECK(strstr(clg_last_error(), "add") && strstr(clg_last_error(), "(2, 3)") && strstr(clg_last_error(), "(4,)") &&
	      strstr(clg_last_error(), be->info.name), "message names op, shapes and device: %s", clg_last_error());
	if (be->info.has_fp64) {
		CHECK(clg_add(a, clg_ones(be, CLG_F64, CLG_SHAPE(3))) == NULL && clg_last_status() == CLG_ERR_DTYPE,
		      "float32 + float64 refused");
	}
	CHECK(clg_reshape(a, CLG_SHAPE(4, 2)) == NULL && clg_last_status() == CLG_ERR_SHAPE, "bad reshape refused");
	CHECK(clg_sum(a, 1, (int[]){5}, 0) == NULL && clg_last_status() == CLG_ERR_INVALID, "bad axis refused");
	CHECK(clg_matmul(a, a) == NULL && clg_last_status() == CLG_ERR_SHAPE, "(2,3) @ (2,3) refused");
	/* a NULL input propagates without replacing the first error */
	CHECK(clg_relu(clg_reshape(a, CLG_SHAPE(5))) == NULL && strstr(clg_last_error(), "reshape"),
	      "first error kept: %s", clg_last_error());
	clg_scope_end();
}

static void test_autograd(clg_backend *be)
{
	clg_tensor *w, *x, *y, *l, *g;
	double v;

	clg_scope_begin();
	w = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){1, -2, 3});
	clg_set_requires_grad(w, 1);
	x = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){4, 5, 6});
	/* l = sum(w * x): dl/dw = x */
	l = clg_sum(clg_mul(w, x), 0, NULL, 0);
	CHECK_OK(clg_backward(l));
	expect_values(clg_grad(w), (float[]){4, 5, 6}, 3, "grad");
	/* gradients accumulate across backward calls until zeroed */
	l = clg_sum(clg_mul(w, x), 0, NULL, 0);
	CHECK_OK(clg_backward(l));
	expect_values(clg_grad(w), (float[]){8, 10, 12}, 3, "accumulated grad");
	/* backward twice through a freed graph fails cleanly */
	CHECK(clg_backward(l) == CLG_ERR_STATE, "second backward refused");
	CHECK(strstr(clg_last_error(), "retain_graph") != NULL, "message: %s", clg_last_error());
	/* ... unless the graph is retained */
	clg_zero_grad(w);
	l = clg_sum(clg_mul(w, x), 0, NULL, 0);
	CHECK_OK(clg_backward_ex(l, NULL, 1));
	CHECK_OK(clg_backward_ex(l, NULL, 0));
	expect_values(clg_grad(w), (float[]){8, 10, 12}, 3, "retained graph, two backwards");
	/* a tensor without requires_grad, and a non-scalar root without a gradient */
	CHECK(clg_backward(x) == CLG_ERR_STATE, "backward of a constant refused");
	y = clg_mul(w, x);
	CHECK(clg_backward(y) == CLG_ERR_SHAPE, "non-scalar backward without a gradient refused");
	/* no-grad scope records nothing */
	clg_no_grad_begin();
	y = clg_mul(w, x);
	clg_no_grad_end();
	CHECK(!clg_requires_grad(y), "no_grad output does not require grad");
	/* detach cuts the graph but shares values */
	g = clg_detach(w);
	CHECK(!clg_requires_grad(g), "detached tensor does not require grad");
	CHECK_OK(clg_item(clg_sum(g, 0, NULL, 0), &v));
	CHECK(fabs(v - 2.0) < 1e-6, "detached values: sum %g", v);
	/* freeing an input before backward does not break backward */
	clg_zero_grad(w);
	{
		clg_tensor *x2 = clg_from_host(be, CLG_F32, CLG_SHAPE(3), (float[]){1, 1, 1});
		clg_tensor *p = clg_mul(w, x2);
		clg_free(x2);
		l = clg_sum(p, 0, NULL, 0);
		clg_free(p);
		CHECK_OK(clg_backward(l));
		expect_values(clg_grad(w), (float[]){1, 1, 1}, 3, "grad after freeing inputs");
	}
	clg_scope_end();
}

static void test_scopes(clg_backend *be)
{
	clg_stats before, after;
	clg_tensor *kept;

	clg_backend_stats(be, &before);
	clg_scope_begin();
	clg_scope_begin();
	kept = clg_keep(clg_ones(be, CLG_F32, CLG_SHAPE(1000)));
	for (int i = 0; i < 10; i++)
		clg_add(clg_ones(be, CLG_F32, CLG_SHAPE(1000)), kept);
	clg_scope_end();
	/* the inner scope freed its tensors; kept lives in the outer one */
	double v;
	CHECK_OK(clg_item(clg_sum(kept, 0, NULL, 0), &v));
	CHECK(v == 1000, "kept tensor survives its scope (sum %g)", v);
	clg_scope_end();
	clg_backend_stats(be, &after);
	CHECK(after.bytes_in_use == before.bytes_in_use, "scopes free everything: %llu bytes in use, %llu before",
	      (unsigned long long)after.bytes_in_use, (unsigned long long)before.bytes_in_use);
}

int main(void)
{
	const clg_device_info *list;
	clg_backend *ref = NULL;
	int n;

	t_require_opencl();
	CHECK_OK(clg_devices(&list, &n));
	CHECK_OK(clg_backend_open(0, &ref));
	for (int i = 0; i < n; i++) {
		clg_backend *be = NULL;
		CHECK_OK(clg_backend_open(i, &be));
		if (!be)
			continue;
		printf("device %d: %s\n", i, be->info.name);
		test_device(be, i ? ref : NULL);
		test_autograd(be);
		test_scopes(be);
		clg_backend_close(be);
	}
	clg_backend_close(ref);
	return t_finish("test_tensor");
}
