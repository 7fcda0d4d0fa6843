#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

void clg_progress_begin(clg_progress *p, FILE *out, const char *label, int64_t total)
{
	p->out = out;
	p->tty = isatty(fileno(out));
	p->total = total;
	p->every = total >= 10 ? total / 10 : 1;
	p->start = p->last_draw = clg_now();
	p->label = label;
}

void clg_fmt_rate(char *buf, size_t len, double x)
{
	if (!(x >= 0) || isinf(x))
		snprintf(buf, len, "-");
	else if (x >= 100 || x == 0)
		snprintf(buf, len, "%.0f", x);
	else if (x >= 10)
		snprintf(buf, len, "%.1f", x);
	else if (x >= 1)
		snprintf(buf, len, "%.2f", x);
	else
		snprintf(buf, len, "%.3g", x); /* 0.123, 0.0123: "%g" leaves out the exponent down to 1e-4 */
}

static void fmt_time(char *buf, size_t len, double s)
{
	if (!(s >= 0) || s > 1e7)
		snprintf(buf, len, "--:--");
	else if (s >= 3600)
		snprintf(buf, len, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
	else
		snprintf(buf, len, "%02d:%02d", (int)s / 60, (int)s % 60);
}

int clg_progress_due(const clg_progress *p, int64_t step)
{
	if (step == p->total)
		return 1;
	return p->tty ? clg_now() - p->last_draw >= 0.1 : step % p->every == 0;
}

void clg_progress_update(clg_progress *p, int64_t step, int64_t samples, double loss)
{
	double t = clg_now(), el = t - p->start, rate = el > 0 ? (double)samples / el : 0;
	double eta = step > 0 ? el / (double)step * (double)(p->total - step) : -1;
	char etas[32], els[32], rates[32];

	clg_fmt_rate(rates, sizeof(rates), rate);
	fmt_time(etas, sizeof(etas), eta);
	fmt_time(els, sizeof(els), el);
	if (p->tty) {
		enum { WIDTH = 24 };
		char bar[WIDTH + 1];
		int fill = p->total > 0 ? (int)(WIDTH * step / p->total) : 0;
		p->last_draw = t;
		for (int i = 0; i < WIDTH; i++)
			bar[i] = i < fill ? '#' : '.';
		bar[WIDTH] = 0;
		fprintf(p->out, "\r%s [%s] %lld/%lld  %s samples/s  loss %.4f  %s elapsed, ETA %s ", p->label, bar,
			(long long)step, (long long)p->total, rates, loss, els, etas);
	} else {
		fprintf(p->out, "%s step %lld/%lld  %s samples/s  loss %.4f  elapsed %s  ETA %s\n", p->label,
			(long long)step, (long long)p->total, rates, loss, els, etas);
	}
	fflush(p->out);
}

void clg_progress_end(clg_progress *p)
{
	if (p->tty)
		fputc('\n', p->out);
	fflush(p->out);
}
