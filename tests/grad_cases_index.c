/* Gradient-check cases of the index family (see tests/test_grad.h): dropout (fixed seed, so the
 * mask is the same in every evaluation and on every device), embedding, index_select, gather and
 * concat. The checker makes the inputs float; the int32 index tensors are built here, on the
 * inputs' device. Indices repeat, so gradients must accumulate. */
#include "test_grad.h"

static clg_tensor *indices(clg_tensor *like, int ndim, const int64_t *shape, const int32_t *data)
{
	return clg_from_host(clg_device_of(like), CLG_I32, ndim, shape, data);
}

/* y * y keeps the function non-linear, so a wrong mask or row shows in the gradient */
static clg_tensor *square(clg_tensor *y)
{
	clg_tensor *s = clg_mul(y, y);
	clg_free(y);
	return s;
}

static clg_tensor *f_dropout(clg_tensor **x) { return square(clg_dropout(x[0], 0.4, 1234, 1)); }
static clg_tensor *f_dropout_eval(clg_tensor **x) { return square(clg_dropout(x[0], 0.4, 1234, 0)); }

static clg_tensor *f_dropout_rng(clg_tensor **x)
{
	/* two draws from one generator: different masks, both replayed in backward */
	clg_rng g = clg_rng_init(99);
	clg_tensor *a = clg_dropout_rng(x[0], 0.5, &g, 1), *b = clg_dropout_rng(x[0], 0.25, &g, 1);
	clg_tensor *y = clg_mul(a, b);
	clg_free(a);
	clg_free(b);
	return y;
}

static clg_tensor *f_embedding(clg_tensor **x)
{
	/* table (7, 3), indices (2, 4) with repeats and one out of range (a zero row, no gradient) */
	static const int32_t ix[8] = {3, 0, 6, 3, 1, 3, 9, 0};
	clg_tensor *i = indices(x[0], CLG_SHAPE(2, 4), ix), *y = clg_embedding(x[0], i);
	clg_free(i);
	return square(y);
}

static clg_tensor *f_embedding_transposed(clg_tensor **x)
{
	/* the same through a transposed (non-contiguous) index view */
	static const int32_t ix[6] = {2, 4, 4, 0, 1, 2};
	clg_tensor *i = indices(x[0], CLG_SHAPE(2, 3), ix), *it = clg_transpose(i, 0, 1);
	clg_tensor *y = clg_embedding(x[0], it);
	clg_free(i);
	clg_free(it);
	return square(y);
}

static clg_tensor *f_index_select0(clg_tensor **x)
{
	static const int32_t ix[5] = {4, 1, 1, 5, 0};
	clg_tensor *i = indices(x[0], CLG_SHAPE(5), ix), *y = clg_index_select(x[0], 0, i);
	clg_free(i);
	return square(y);
}

static clg_tensor *f_index_select1(clg_tensor **x)
{
	/* x (3, 5, 2) along dim 1 */
	static const int32_t ix[4] = {2, 0, 4, 2};
	clg_tensor *i = indices(x[0], CLG_SHAPE(4), ix), *y = clg_index_select(x[0], 1, i);
	clg_free(i);
	return square(y);
}

static clg_tensor *f_gather_last(clg_tensor **x)
{
	/* x (3, 5), indices (3, 4) along the last dim */
	static const int32_t ix[12] = {0, 4, 4, 1, 2, 2, 3, 0, 1, 4, 0, 1};
	clg_tensor *i = indices(x[0], CLG_SHAPE(3, 4), ix), *y = clg_gather(x[0], 1, i);
	clg_free(i);
	return square(y);
}

static clg_tensor *f_gather0(clg_tensor **x)
{
	/* x (4, 3) along dim 0 with indices (2, 2): smaller than x in dim 1 too */
	static const int32_t ix[4] = {3, 0, 3, 2};
	clg_tensor *i = indices(x[0], CLG_SHAPE(2, 2), ix), *y = clg_gather(x[0], 0, i);
	clg_free(i);
	return square(y);
}

static clg_tensor *f_concat1(clg_tensor **x)
{
	clg_tensor *y = clg_concat(x, 3, 1);
	return square(y);
}

static clg_tensor *f_concat0(clg_tensor **x)
{
	clg_tensor *y = clg_concat(x, 2, 0);
	return square(y);
}

static clg_tensor *f_concat_many(clg_tensor **x)
{
	/* more inputs than a graph node holds, some repeated: their gradients add up */
	clg_tensor *ts[7] = {x[0], x[1], x[0], x[2], x[1], x[0], x[2]};
	return square(clg_concat(ts, 7, -1));
}

static const gcase cases[] = {
	{"dropout", 1, {2}, {{4, 6}}, -1, 1, f_dropout},
	{"dropout_eval", 1, {2}, {{3, 4}}, -1, 1, f_dropout_eval},
	{"dropout_rng", 1, {3}, {{2, 3, 5}}, -1, 1, f_dropout_rng},
	{"embedding", 1, {2}, {{7, 3}}, -1, 1, f_embedding},
	{"embedding_transposed_idx", 1, {2}, {{5, 4}}, -1, 1, f_embedding_transposed},
	{"index_select_dim0", 1, {2}, {{6, 4}}, -1, 1, f_index_select0},
	{"index_select_dim1", 1, {3}, {{3, 5, 2}}, -1, 1, f_index_select1},
	{"gather_lastdim", 1, {2}, {{3, 5}}, -1, 1, f_gather_last},
	{"gather_dim0", 1, {2}, {{4, 3}}, -1, 1, f_gather0},
	{"concat_dim1", 3, {2, 2, 2}, {{2, 3}, {2, 1}, {2, 4}}, -1, 1, f_concat1},
	{"concat_dim0", 2, {3, 3}, {{2, 3, 2}, {1, 3, 2}}, -1, 1, f_concat0},
	{"concat_many", 3, {2, 2, 2}, {{2, 2}, {2, 3}, {2, 1}}, -1, 1, f_concat_many},
};

const gcase *grad_cases_index(int *n)
{
	*n = (int)(sizeof(cases) / sizeof(cases[0]));
	return cases;
}
