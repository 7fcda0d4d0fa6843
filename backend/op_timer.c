/* Per-op timing (clg_op_timer.h): entries keyed by op and shapes, summed over the timed ops. */
#include "clg_op_timer.h"
#include "clg_backend_impl.h"
#include "clg_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double clg_op_timer_now(void)
{
	struct timespec t;

	if (!clg_cfg_is(CLG_CFG_OP_TIMER, "cpu"))
		return clg_now();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void clg_backend_set_op_timer(clg_backend *be, clg_op_timer *t)
{
	if (be)
		be->op_timer = t;
}

void clg_op_timer_clear(clg_op_timer *t)
{
	free(t->e);
	memset(t, 0, sizeof(*t));
}

static int longest_first(const void *a, const void *b)
{
	double d = ((const clg_op_time *)b)->seconds - ((const clg_op_time *)a)->seconds;
	return (d > 0) - (d < 0);
}

void clg_op_timer_sort(clg_op_timer *t)
{
	if (t->n > 1)
		qsort(t->e, (size_t)t->n, sizeof(t->e[0]), longest_first);
}

void clg_op_timer_key(const clg_op_call *c, char *buf, size_t len)
{
	size_t p = (size_t)snprintf(buf, len, "%s (", clg_op_name(c->op));

	for (int d = 0; d < c->dst.ndim && p < len; d++)
		p += (size_t)snprintf(buf + p, len - p, "%s%lld", d ? ", " : "", (long long)c->dst.shape[d]);
	if (p < len)
		p += (size_t)snprintf(buf + p, len - p, ")");
	if (p < len && (c->op == CLG_OP_GEMM || c->op == CLG_OP_GEMM_BIAS_ACT) && c->src[0].ndim > 0)
		p += (size_t)snprintf(buf + p, len - p, " K %lld", (long long)c->src[0].shape[c->src[0].ndim - 1]);
	if (p < len && c->dst.dtype != CLG_F32)
		snprintf(buf + p, len - p, " %s", clg_dtype_name(c->dst.dtype));
}

void clg_op_timer_add(clg_op_timer *t, const clg_op_call *c, double seconds)
{
	char key[sizeof(t->e[0].key)];
	int i;

	clg_op_timer_key(c, key, sizeof(key));
	for (i = 0; i < t->n && strcmp(t->e[i].key, key); i++)
		;
	if (i == t->n) {
		if (t->n == t->cap) {
			int cap = t->cap ? 2 * t->cap : 64;
			clg_op_time *p = realloc(t->e, (size_t)cap * sizeof(*p));
			if (!p) {
				t->dropped++;
				return;
			}
			t->e = p;
			t->cap = cap;
		}
		memset(&t->e[i], 0, sizeof(t->e[0]));
		snprintf(t->e[i].key, sizeof(t->e[0].key), "%s", key);
		t->n++;
	}
	t->e[i].calls++;
	t->e[i].seconds += seconds;
	t->total += seconds;
}
