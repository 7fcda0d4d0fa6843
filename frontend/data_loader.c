/* Datasets in host memory (allocation, statistics, normalisation), one-hot labels, and the batch
 * loader: deterministic shuffling, batching, resumable state, and uploads prepared one batch ahead.
 */
#include "clgrad_data.h"
#include "fe_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- datasets ---------------------------------------------------------------------------- */

clg_status clg_dataset_init(clg_dataset *ds, int64_t n, int ndim, const int64_t *shape, clg_dtype x_dtype,
			    int64_t y_numel)
{
	return clg_dataset_init_ex(ds, n, ndim, shape, x_dtype, y_numel, CLG_I32);
}

clg_status clg_dataset_init_ex(clg_dataset *ds, int64_t n, int ndim, const int64_t *shape, clg_dtype x_dtype,
			       int64_t y_numel, clg_dtype y_dtype)
{
	int64_t numel = 1;
	size_t nx;

	if (!ds)
		return clg_fail(CLG_ERR_INVALID, "dataset init: NULL dataset");
	memset(ds, 0, sizeof(*ds));
	if (n < 0 || y_numel < 0)
		return clg_fail(CLG_ERR_INVALID, "dataset init: negative count (n %" PRId64 ", labels per sample %" PRId64 ")",
				n, y_numel);
	if (ndim < 0 || ndim > CLG_DATA_MAX_DIMS || (ndim > 0 && !shape))
		return clg_fail(CLG_ERR_SHAPE, "dataset init: a sample has %d dims (at most %d)", ndim, CLG_DATA_MAX_DIMS);
	if (x_dtype != CLG_F32 && x_dtype != CLG_I32)
		return clg_fail(CLG_ERR_DTYPE, "dataset init: samples must be f32 or i32, not %s", clg_dtype_name(x_dtype));
	if (y_dtype != CLG_F32 && y_dtype != CLG_I32)
		return clg_fail(CLG_ERR_DTYPE, "dataset init: targets must be i32 labels or f32 values, not %s",
				clg_dtype_name(y_dtype));
	for (int d = 0; d < ndim; d++) {
		if (shape[d] <= 0 || shape[d] > ((int64_t)1 << 40) / numel)
			return clg_fail(CLG_ERR_SHAPE, "dataset init: bad sample dim %d of size %" PRId64, d, shape[d]);
		numel *= shape[d];
		ds->shape[d] = shape[d];
	}
	if (n > 0 && (numel > ((int64_t)1 << 40) / n || y_numel > ((int64_t)1 << 40) / n))
		return clg_fail(CLG_ERR_OOM, "dataset init: %" PRId64 " samples of %" PRId64 " values is too large", n, numel);
	ds->n = n;
	ds->ndim = ndim;
	ds->sample_numel = numel;
	ds->x_dtype = x_dtype;
	ds->y_numel = y_numel;
	nx = (size_t)(n * numel);
	if (x_dtype == CLG_F32)
		ds->x = calloc(nx ? nx : 1, sizeof(float));
	else
		ds->xi = calloc(nx ? nx : 1, sizeof(int32_t));
	if (y_numel && y_dtype == CLG_I32)
		ds->y = calloc(n > 0 ? (size_t)(n * y_numel) : 1, sizeof(int32_t));
	else if (y_numel)
		ds->yf = calloc(n > 0 ? (size_t)(n * y_numel) : 1, sizeof(float));
	if ((!ds->x && !ds->xi) || (y_numel && !ds->y && !ds->yf)) {
		clg_dataset_free(ds);
		return clg_fail(CLG_ERR_OOM, "dataset init: out of host memory for %" PRId64 " samples of %" PRId64 " values",
				n, numel);
	}
	return CLG_OK;
}

void clg_dataset_free(clg_dataset *ds)
{
	if (!ds)
		return;
	free(ds->x);
	free(ds->xi);
	free(ds->y);
	free(ds->yf);
	memset(ds, 0, sizeof(*ds));
}

static clg_status check_channels(const char *what, const clg_dataset *ds, int nchan)
{
	if (!ds || !ds->x)
		return clg_fail(CLG_ERR_INVALID, "%s: the dataset has no float features", what);
	if (nchan <= 0 || ds->sample_numel % nchan != 0)
		return clg_fail(CLG_ERR_INVALID, "%s: %d channels do not divide a sample of %" PRId64 " values", what,
				nchan, ds->sample_numel);
	if (ds->n == 0)
		return clg_fail(CLG_ERR_INVALID, "%s: empty dataset", what);
	return CLG_OK;
}

clg_status clg_dataset_channel_stats(const clg_dataset *ds, int nchan, float *mean, float *std)
{
	clg_status st = check_channels("dataset stats", ds, nchan);
	int64_t per;
	double *acc;

	if (st)
		return st;
	per = ds->sample_numel / nchan;
	acc = calloc(2 * (size_t)nchan, sizeof(double));
	if (!acc)
		return clg_fail(CLG_ERR_OOM, "dataset stats: out of host memory");
	/* two passes (mean, then squared deviations) in double for accuracy */
	for (int64_t i = 0; i < ds->n; i++)
		for (int c = 0; c < nchan; c++) {
			const float *p = ds->x + i * ds->sample_numel + c * per;
			for (int64_t k = 0; k < per; k++)
				acc[c] += p[k];
		}
	for (int c = 0; c < nchan; c++)
		acc[c] /= (double)ds->n * (double)per;
	for (int64_t i = 0; i < ds->n; i++)
		for (int c = 0; c < nchan; c++) {
			const float *p = ds->x + i * ds->sample_numel + c * per;
			for (int64_t k = 0; k < per; k++)
				acc[nchan + c] += (p[k] - acc[c]) * (p[k] - acc[c]);
		}
	for (int c = 0; c < nchan; c++) {
		mean[c] = (float)acc[c];
		std[c] = (float)sqrt(acc[nchan + c] / ((double)ds->n * (double)per));
	}
	free(acc);
	return CLG_OK;
}

clg_status clg_dataset_normalize(clg_dataset *ds, int nchan, const float *mean, const float *std)
{
	clg_status st = check_channels("dataset normalize", ds, nchan);
	int64_t per;

	if (st)
		return st;
	for (int c = 0; c < nchan; c++)
		if (!(std[c] > 0) || !isfinite(std[c]) || !isfinite(mean[c]))
			return clg_fail(CLG_ERR_INVALID, "dataset normalize: channel %d has mean %g and std %g (std must be > 0)",
					c, mean[c], std[c]);
	per = ds->sample_numel / nchan;
	for (int64_t i = 0; i < ds->n; i++)
		for (int c = 0; c < nchan; c++) {
			float *p = ds->x + i * ds->sample_numel + c * per;
			float m = mean[c], inv = 1.0f / std[c];
			for (int64_t k = 0; k < per; k++)
				p[k] = (p[k] - m) * inv;
		}
	return CLG_OK;
}

/* ---- one-hot ----------------------------------------------------------------------------- */

clg_status clg_one_hot_host(const int32_t *labels, int64_t n, int num_classes, float *out)
{
	if (n < 0 || num_classes <= 0 || (n > 0 && (!labels || !out)))
		return clg_fail(CLG_ERR_INVALID, "one_hot: bad arguments (n %" PRId64 ", %d classes)", n, num_classes);
	memset(out, 0, (size_t)n * (size_t)num_classes * sizeof(float));
	for (int64_t i = 0; i < n; i++) {
		if (labels[i] < 0 || labels[i] >= num_classes)
			return clg_fail(CLG_ERR_INVALID, "one_hot: label %" PRId32 " at position %" PRId64 " is outside [0, %d)",
					labels[i], i, num_classes);
		out[i * num_classes + labels[i]] = 1.0f;
	}
	return CLG_OK;
}

clg_status clg_one_hot(clg_backend *be, const int32_t *labels, int64_t n, int num_classes, clg_tensor **out)
{
	float *host;
	clg_status st;
	int64_t shape[2] = {n, num_classes};

	if (!out)
		return clg_fail(CLG_ERR_INVALID, "one_hot: NULL output");
	*out = NULL;
	if (n < 0 || num_classes <= 0)
		return clg_fail(CLG_ERR_INVALID, "one_hot: bad arguments (n %" PRId64 ", %d classes)", n, num_classes);
	host = malloc((size_t)(n ? n : 1) * (size_t)num_classes * sizeof(float));
	if (!host)
		return clg_fail(CLG_ERR_OOM, "one_hot: out of host memory for (%" PRId64 ", %d)", n, num_classes);
	st = clg_one_hot_host(labels, n, num_classes, host);
	if (!st) {
		*out = clg_from_host(be, CLG_F32, 2, shape, host);
		if (!*out)
			st = clg_last_status() ? clg_last_status() : CLG_ERR_INVALID;
	}
	free(host);
	return st;
}

/* ---- deterministic shuffling ------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, bound) without modulo bias (rejection of the low remainder). */
static uint64_t bounded(uint64_t *s, uint64_t bound)
{
	uint64_t threshold = (0 - bound) % bound, r;
	do
		r = splitmix64(s);
	while (r < threshold);
	return r % bound;
}

/* The order of epoch `epoch`: identity, or a Fisher-Yates shuffle seeded from (seed, epoch). */
static void make_order(int64_t *perm, int64_t n, uint64_t seed, uint64_t epoch, int shuffle)
{
	uint64_t s = seed, e = epoch;
	for (int64_t i = 0; i < n; i++)
		perm[i] = i;
	if (!shuffle)
		return;
	s = splitmix64(&s) ^ (splitmix64(&e) * 0xd6e8feb86659fd93ULL);
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = (int64_t)bounded(&s, (uint64_t)i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* ---- subsets ----------------------------------------------------------------------------- */

clg_status clg_dataset_select(const clg_dataset *src, const int64_t *idx, int64_t n, clg_dataset *out)
{
	clg_status st;
	int64_t sn, yn;

	if (!out)
		return clg_fail(CLG_ERR_INVALID, "dataset select: NULL output");
	memset(out, 0, sizeof(*out));
	if (!src || (!src->x && !src->xi) || n < 0 || (n > 0 && !idx))
		return clg_fail(CLG_ERR_INVALID, "dataset select: %s", !src || (!src->x && !src->xi) ? "no source dataset"
												  : "bad index list");
	for (int64_t i = 0; i < n; i++)
		if (idx[i] < 0 || idx[i] >= src->n)
			return clg_fail(CLG_ERR_INVALID, "dataset select: index %" PRId64 " (position %" PRId64
					") is outside [0, %" PRId64 ")", idx[i], i, src->n);
	st = clg_dataset_init_ex(out, n, src->ndim, src->shape, src->x_dtype, src->y || src->yf ? src->y_numel : 0,
				 src->yf ? CLG_F32 : CLG_I32);
	if (st)
		return st;
	out->num_classes = src->num_classes;
	sn = src->sample_numel, yn = src->y_numel;
	for (int64_t i = 0; i < n; i++) {
		int64_t s = idx[i];
		if (src->x)
			memcpy(out->x + i * sn, src->x + s * sn, sizeof(float) * (size_t)sn);
		else
			memcpy(out->xi + i * sn, src->xi + s * sn, sizeof(int32_t) * (size_t)sn);
		if (src->y)
			memcpy(out->y + i * yn, src->y + s * yn, sizeof(int32_t) * (size_t)yn);
		else if (src->yf)
			memcpy(out->yf + i * yn, src->yf + s * yn, sizeof(float) * (size_t)yn);
	}
	return CLG_OK;
}

clg_status clg_dataset_subset(const clg_dataset *src, int64_t start, int64_t count, clg_dataset *out)
{
	int64_t *idx;
	clg_status st;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!src || !out)
		return clg_fail(CLG_ERR_INVALID, "dataset subset: NULL dataset");
	if (count == -1 && start >= 0 && start <= src->n)
		count = src->n - start;
	if (start < 0 || count < 0 || start > src->n || count > src->n - start)
		return clg_fail(CLG_ERR_INVALID, "dataset subset: samples [%" PRId64 ", %" PRId64 " + %" PRId64
				") are outside [0, %" PRId64 ")", start, start, count, src->n);
	idx = malloc(sizeof(*idx) * (size_t)(count + 1));
	if (!idx)
		return clg_fail(CLG_ERR_OOM, "dataset subset: out of host memory");
	for (int64_t i = 0; i < count; i++)
		idx[i] = start + i;
	st = clg_dataset_select(src, idx, count, out);
	free(idx);
	return st;
}

clg_status clg_dataset_split(const clg_dataset *src, int64_t n_a, uint64_t seed, clg_dataset *a, clg_dataset *b)
{
	int64_t *perm;
	clg_status st;

	if (a)
		memset(a, 0, sizeof(*a));
	if (b)
		memset(b, 0, sizeof(*b));
	if (!src || !a)
		return clg_fail(CLG_ERR_INVALID, "dataset split: NULL dataset");
	if (n_a < 0 || n_a > src->n)
		return clg_fail(CLG_ERR_INVALID, "dataset split: %" PRId64 " samples of %" PRId64, n_a, src->n);
	perm = malloc(sizeof(*perm) * (size_t)(src->n + 1));
	if (!perm)
		return clg_fail(CLG_ERR_OOM, "dataset split: out of host memory");
	make_order(perm, src->n, seed, 0, seed != 0);
	st = clg_dataset_select(src, perm, n_a, a);
	if (!st && b)
		st = clg_dataset_select(src, perm + n_a, src->n - n_a, b);
	if (st) {
		clg_dataset_free(a);
		if (b)
			clg_dataset_free(b);
	}
	free(perm);
	return st;
}

/* ---- loader ------------------------------------------------------------------------------ */

struct clg_loader {
	const clg_dataset *ds;
	int64_t batch;
	int flags;
	int64_t usable;          /* samples per epoch (n, or n rounded down to whole batches) */
	clg_loader_state cur;    /* what the next clg_loader_next hands out */
	clg_loader_state ahead;  /* the cursor after the batch prepared ahead */
	int64_t *perm;           /* order of epoch perm_epoch */
	uint64_t perm_epoch;
	uint64_t perm_seed;
	int perm_valid;
	void *hx;                /* host staging for one batch */
	int32_t *hy;
	float *hoh;              /* one-hot staging */
	/* the batch prepared ahead */
	int have_next;
	int next_end;            /* it is the end-of-epoch marker */
	clg_backend *next_be;
	clg_tensor *next_x, *next_y;
};

clg_status clg_loader_new(const clg_dataset *ds, int64_t batch, uint64_t seed, int flags, clg_loader **out)
{
	clg_loader *l;
	size_t xs;

	if (!out)
		return clg_fail(CLG_ERR_INVALID, "loader: NULL output");
	*out = NULL;
	if (!ds || (!ds->x && !ds->xi) || ds->n <= 0)
		return clg_fail(CLG_ERR_INVALID, "loader: empty or missing dataset");
	if (batch <= 0)
		return clg_fail(CLG_ERR_INVALID, "loader: batch size %" PRId64 " (must be > 0)", batch);
	if (flags & ~(CLG_LOADER_SHUFFLE | CLG_LOADER_DROP_LAST | CLG_LOADER_ONE_HOT))
		return clg_fail(CLG_ERR_INVALID, "loader: unknown flags 0x%x", (unsigned)flags);
	if ((flags & CLG_LOADER_DROP_LAST) && ds->n < batch)
		return clg_fail(CLG_ERR_INVALID, "loader: drop_last with %" PRId64 " samples and batch %" PRId64
				" leaves no batch", ds->n, batch);
	if ((flags & CLG_LOADER_ONE_HOT) && (!ds->y || ds->num_classes <= 0))
		return clg_fail(CLG_ERR_INVALID, "loader: one-hot labels asked for a dataset without %s",
				ds->yf ? "labels (it holds float targets)" : "labels or classes");
	if (ds->y && ds->yf)
		return clg_fail(CLG_ERR_INVALID, "loader: a dataset with both labels y and float targets yf");
	if (batch > ds->n)
		batch = ds->n;
	l = calloc(1, sizeof(*l));
	if (!l)
		return clg_fail(CLG_ERR_OOM, "loader: out of host memory");
	l->ds = ds;
	l->batch = batch;
	l->flags = flags;
	l->usable = (flags & CLG_LOADER_DROP_LAST) ? ds->n - ds->n % batch : ds->n;
	l->cur.seed = l->ahead.seed = seed;
	xs = ds->x ? sizeof(float) : sizeof(int32_t);
	l->perm = malloc((size_t)ds->n * sizeof(int64_t));
	l->hx = malloc((size_t)(batch * ds->sample_numel) * xs);
	if (ds->y || ds->yf)
		l->hy = malloc((size_t)(batch * ds->y_numel) * sizeof(int32_t)); /* or float targets */
	if (flags & CLG_LOADER_ONE_HOT)
		l->hoh = malloc((size_t)(batch * ds->y_numel) * (size_t)ds->num_classes * sizeof(float));
	if (!l->perm || !l->hx || ((ds->y || ds->yf) && !l->hy) || ((flags & CLG_LOADER_ONE_HOT) && !l->hoh)) {
		clg_loader_free(l);
		return clg_fail(CLG_ERR_OOM, "loader: out of host memory for batches of %" PRId64, batch);
	}
	*out = l;
	return CLG_OK;
}

static void drop_next(clg_loader *l)
{
	clg_free(l->next_x);
	clg_free(l->next_y);
	l->next_x = l->next_y = NULL;
	l->have_next = 0;
	l->next_end = 0;
	l->next_be = NULL;
	l->ahead = l->cur;
}

void clg_loader_free(clg_loader *l)
{
	if (!l)
		return;
	drop_next(l);
	free(l->perm);
	free(l->hx);
	free(l->hy);
	free(l->hoh);
	free(l);
}

int64_t clg_loader_batches_per_epoch(const clg_loader *l)
{
	return l ? (l->usable + l->batch - 1) / l->batch : 0;
}

/* Gathers the batch at cursor *c into the host staging buffers and advances *c; *count = 0 for
 * the end-of-epoch marker (the cursor then moves to the next epoch). */
static void gather(clg_loader *l, clg_loader_state *c, int64_t *count)
{
	const clg_dataset *ds = l->ds;
	int64_t k;

	if (c->pos >= l->usable) {
		c->epoch++;
		c->pos = 0;
		*count = 0;
		return;
	}
	if (!l->perm_valid || l->perm_epoch != c->epoch || l->perm_seed != c->seed) {
		make_order(l->perm, ds->n, c->seed, c->epoch, l->flags & CLG_LOADER_SHUFFLE);
		l->perm_epoch = c->epoch;
		l->perm_seed = c->seed;
		l->perm_valid = 1;
	}
	k = l->usable - c->pos < l->batch ? l->usable - c->pos : l->batch;
	for (int64_t i = 0; i < k; i++) {
		int64_t s = l->perm[c->pos + i];
		if (ds->x)
			memcpy((float *)l->hx + i * ds->sample_numel, ds->x + s * ds->sample_numel,
			       (size_t)ds->sample_numel * sizeof(float));
		else
			memcpy((int32_t *)l->hx + i * ds->sample_numel, ds->xi + s * ds->sample_numel,
			       (size_t)ds->sample_numel * sizeof(int32_t));
		if (ds->y)
			memcpy(l->hy + i * ds->y_numel, ds->y + s * ds->y_numel, (size_t)ds->y_numel * sizeof(int32_t));
		else if (ds->yf)
			memcpy(l->hy + i * ds->y_numel, ds->yf + s * ds->y_numel, (size_t)ds->y_numel * sizeof(float));
	}
	c->pos += k;
	*count = k;
}

/* Gathers the batch at l->ahead and enqueues its upload to be (kept as l->next_*). */
static clg_status prepare(clg_loader *l, clg_backend *be)
{
	const clg_dataset *ds = l->ds;
	int64_t k, xshape[CLG_MAX_DIMS], yshape[3];
	int yndim = 1;
	clg_loader_state c = l->ahead;
	clg_status st = CLG_OK;

	gather(l, &c, &k);
	if (k == 0) {
		l->next_end = 1;
		goto done;
	}
	xshape[0] = k;
	for (int d = 0; d < ds->ndim; d++)
		xshape[d + 1] = ds->shape[d];
	l->next_x = fe_own(clg_from_host(be, ds->x_dtype, ds->ndim + 1, xshape, l->hx));
	if (!l->next_x)
		goto fail;
	if (ds->y || ds->yf) {
		yshape[0] = k;
		if (ds->y_numel > 1)
			yshape[yndim++] = ds->y_numel;
		if (l->flags & CLG_LOADER_ONE_HOT) {
			st = clg_one_hot_host(l->hy, k * ds->y_numel, ds->num_classes, l->hoh);
			if (st) {
				clg_fail_prefix(st, "loader batch at epoch %" PRIu64 " position %" PRId64 ": ", l->ahead.epoch,
						l->ahead.pos);
				goto fail_status;
			}
			yshape[yndim++] = ds->num_classes;
			l->next_y = fe_own(clg_from_host(be, CLG_F32, yndim, yshape, l->hoh));
		} else {
			l->next_y = fe_own(clg_from_host(be, ds->yf ? CLG_F32 : CLG_I32, yndim, yshape, l->hy));
		}
		if (!l->next_y)
			goto fail;
	}
done:
	l->have_next = 1;
	l->next_be = be;
	l->ahead = c;
	return CLG_OK;
fail:
	st = clg_last_status() ? clg_last_status() : CLG_ERR_INVALID;
fail_status:
	drop_next(l);
	return st;
}

/* Hands an internally owned tensor to the caller under clgrad's ownership rules: a new tensor
 * object over the same storage, owned by the current scope if one is open. */
static clg_tensor *hand_out(clg_tensor *t)
{
	clg_tensor *r;
	if (!t)
		return NULL;
	r = fe_view_of(t, &t->v);
	clg_free(t);
	return r;
}

clg_status clg_loader_next(clg_loader *l, clg_backend *be, clg_tensor **x, clg_tensor **y)
{
	clg_tensor *rx, *ry;
	clg_status st;

	if (x)
		*x = NULL;
	if (y)
		*y = NULL;
	if (!l || !be || !x)
		return clg_fail(CLG_ERR_INVALID, "loader next: NULL loader, device or output");
	if (l->have_next && l->next_be != be)
		drop_next(l);
	if (!l->have_next) {
		st = prepare(l, be);
		if (st)
			return st;
	}
	/* take the prepared batch */
	if (l->next_end) {
		l->cur.epoch++;
		l->cur.pos = 0;
		rx = ry = NULL;
	} else {
		l->cur.pos += clg_shape(l->next_x)[0];
		rx = hand_out(l->next_x);
		ry = hand_out(l->next_y);
		if (!rx || (l->next_y && !ry)) {
			l->next_x = l->next_y = NULL;
			clg_free(rx);
			clg_free(ry);
			drop_next(l);
			return clg_fail(CLG_ERR_OOM, "loader next: out of host memory");
		}
	}
	l->next_x = l->next_y = NULL;
	l->have_next = 0;
	l->next_end = 0;
	/* Prepare the one after it while the device works. A failure here is not this batch's: the
	 * next call prepares again from the same position and reports it. */
	(void)prepare(l, be);
	*x = rx;
	if (y)
		*y = ry;
	else
		clg_free(ry);
	return CLG_OK;
}

clg_status clg_loader_next_host(clg_loader *l, void *x, int32_t *y, int64_t *count)
{
	int64_t k;
	const clg_dataset *ds;

	if (count)
		*count = 0;
	if (!l || !x || !count)
		return clg_fail(CLG_ERR_INVALID, "loader next_host: NULL loader, buffer or count");
	ds = l->ds;
	drop_next(l);
	gather(l, &l->cur, &k);
	l->ahead = l->cur;
	memcpy(x, l->hx, (size_t)(k * ds->sample_numel) * (ds->x ? sizeof(float) : sizeof(int32_t)));
	if (y && (ds->y || ds->yf))
		memcpy(y, l->hy, (size_t)(k * ds->y_numel) * sizeof(int32_t));
	*count = k;
	return CLG_OK;
}

void clg_loader_get_state(const clg_loader *l, clg_loader_state *st)
{
	if (l && st)
		*st = l->cur;
}

clg_status clg_loader_set_state(clg_loader *l, const clg_loader_state *st)
{
	if (!l || !st)
		return clg_fail(CLG_ERR_INVALID, "loader set_state: NULL loader or state");
	if (st->pos < 0 || st->pos > l->ds->n)
		return clg_fail(CLG_ERR_INVALID, "loader set_state: position %" PRId64 " outside [0, %" PRId64 "]", st->pos,
				l->ds->n);
	drop_next(l);
	l->cur = *st;
	l->ahead = *st;
	return CLG_OK;
}

clg_status clg_loader_state_format(const clg_loader_state *st, char *buf, size_t len)
{
	int n;
	if (!st || !buf)
		return clg_fail(CLG_ERR_INVALID, "loader state format: NULL argument");
	n = snprintf(buf, len, "seed=%" PRIu64 " epoch=%" PRIu64 " pos=%" PRId64, st->seed, st->epoch, st->pos);
	if (n < 0 || (size_t)n >= len)
		return clg_fail(CLG_ERR_INVALID, "loader state format: buffer of %zu bytes is too small", len);
	return CLG_OK;
}

/* A decimal number without sign or leading junk; advances *p. */
static int parse_u64(const char **p, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return 1;
}

clg_status clg_loader_state_parse(const char *s, clg_loader_state *st)
{
	const char *p = s;
	uint64_t seed, epoch, pos;
	if (!s || !st)
		return clg_fail(CLG_ERR_INVALID, "loader state parse: NULL argument");
	if (strncmp(p, "seed=", 5) || (p += 5, !parse_u64(&p, &seed)) || strncmp(p, " epoch=", 7) ||
	    (p += 7, !parse_u64(&p, &epoch)) || strncmp(p, " pos=", 5) || (p += 5, !parse_u64(&p, &pos)) || *p ||
	    pos > (uint64_t)INT64_MAX)
		return clg_fail(CLG_ERR_FORMAT, "loader state parse: '%.80s' is not 'seed=S epoch=E pos=P'", s);
	st->seed = seed;
	st->epoch = epoch;
	st->pos = (int64_t)pos;
	return CLG_OK;
}
