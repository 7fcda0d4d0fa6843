/* Training progress: a one-line bar with samples/s, loss and ETA on a terminal, plain lines
 * otherwise. */
#ifndef CLGRAD_PROGRESS_H
#define CLGRAD_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#include <clgrad.h> /* clg_now */

typedef struct {
	FILE *out;
	int tty;              /* redraw one line (terminal) or print every `every` steps */
	int64_t total;        /* steps in the epoch */
	int64_t every;        /* plain mode: print every this many steps */
	double start;         /* seconds */
	double last_draw;
	const char *label;    /* "epoch 1/5" */
} clg_progress;

/* A rate to at least three significant digits, never in exponent form: 1.09, 86.3, 863, 12345,
 * 0.0123 ("-" when not finite or negative). */
void clg_fmt_rate(char *buf, size_t len, double x);

void clg_progress_begin(clg_progress *p, FILE *out, const char *label, int64_t total);
/* Whether clg_progress_update at this step will draw (so a caller reads the loss only then). */
int clg_progress_due(const clg_progress *p, int64_t step);
/* Draws the bar (call it when clg_progress_due says so): step done (1-based), samples seen so far
 * in the epoch, the mean loss so far. */
void clg_progress_update(clg_progress *p, int64_t step, int64_t samples, double loss);
/* Ends the bar's line. */
void clg_progress_end(clg_progress *p);

#endif
