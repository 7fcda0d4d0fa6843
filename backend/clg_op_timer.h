/* Per-op timing for `clgrad train --profile`: while a timer is set on a
 * backend, clg_run waits for the device before and after each op and adds the wall time to the
 * op's entry, keyed by the op and its shapes ("gemm (4096, 64) K 64"). Waiting after every op
 * costs a round trip per op, so a timed step is slower than a plain one; the shares are what the
 * timer is for. Off by default (be->op_timer is NULL: one pointer test per op).
 * With CLGRAD_OP_TIMER=cpu the time is the process's CPU time instead of the wall's: on a CPU
 * device whose runtime works in this process (PoCL, Intel's), the op's work across all cores, and
 * far less disturbed by other processes on a shared machine than the wall time. */
#ifndef CLG_OP_TIMER_H
#define CLG_OP_TIMER_H

#include "clg_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	char key[96];
	int64_t calls;
	double seconds;
} clg_op_time;

typedef struct clg_op_timer {
	clg_op_time *e;
	int n, cap;
	int dropped;   /* ops not counted: a failed allocation */
	double total;  /* seconds over every entry */
} clg_op_timer;

/* Sets (or with NULL clears) the timer of be; the caller owns t. */
void clg_backend_set_op_timer(clg_backend *be, clg_op_timer *t);
void clg_op_timer_clear(clg_op_timer *t); /* frees the entries, keeps t usable */
void clg_op_timer_sort(clg_op_timer *t);  /* longest first */
/* "op (dst dims)", GEMM with " K k": the key an op call is counted under. */
void clg_op_timer_key(const clg_op_call *c, char *buf, size_t len);
/* The clock ops are timed by: wall (clg_now), or process CPU time with CLGRAD_OP_TIMER=cpu. */
double clg_op_timer_now(void);
/* For clg_run: the op call c took seconds. */
void clg_op_timer_add(clg_op_timer *t, const clg_op_call *c, double seconds);

#ifdef __cplusplus
}
#endif
#endif
