/* CSV files of numbers: one sample per line, an optional header line, an optional integer label
 * column. Cells may be quoted ("1.5", with "" for a quote); quoted cells never span lines. */
#include "clgrad_data.h"
#include "fe_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CSV_MAX_LABEL (1 << 20)

/* Splits one line (NUL-terminated, no '\n') into cells in place: unquotes, trims blanks. The
 * array *cells grows as needed. Returns the number of cells, -1 for a bad quote, -2 without memory. */
static int split_cells(char *line, char delim, char ***cells, int *cap)
{
	int n = 0;
	char *p = line;
#define BLANK(c) (((c) == ' ' || (c) == '\t') && (c) != delim) /* a tab delimiter is no blank */
	for (;;) {
		char *start, *w, end;
		while (BLANK(*p))
			p++;
		start = w = p;
		if (*p == '"') {
			start = w = ++p;
			for (;;) {
				if (*p == '\0')
					return -1;
				if (*p == '"') {
					if (p[1] == '"') {
						*w++ = '"';
						p += 2;
						continue;
					}
					p++;
					break;
				}
				*w++ = *p++;
			}
			while (BLANK(*p))
				p++;
			if (*p != delim && *p != '\0')
				return -1;
		} else {
			while (*p != delim && *p != '\0')
				p++;
			w = p;
			while (w > start && BLANK(w[-1]))
				w--;
		}
		end = *p;
		*w = '\0'; /* w <= p: at worst this overwrites the delimiter, already read into end */
		if (n == *cap) {
			int ncap = *cap ? 2 * *cap : 16;
			char **c2 = realloc(*cells, (size_t)ncap * sizeof(**cells));
			if (!c2)
				return -2;
			*cells = c2;
			*cap = ncap;
		}
		(*cells)[n++] = start;
		if (end == '\0')
			return n;
		p++;
	}
#undef BLANK
}

static int parse_number(const char *s, float *out)
{
	char *end;
	double v;
	if (!*s || strpbrk(s, "xX"))
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || fabs(v) > 3.4028234663852886e38)
		return 0;
	*out = (float)v;
	return 1;
}

static int parse_label(const char *s, int32_t *out)
{
	long long v = 0;
	if (!*s)
		return 0;
	if (*s == '+')
		s++;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
		if (v > CSV_MAX_LABEL)
			return 0;
	}
	*out = (int32_t)v;
	return 1;
}

clg_status clg_csv_read(const char *path, const clg_csv_opts *opts, clg_dataset *ds)
{
	clg_csv_opts o = {',', -1, CLG_CSV_NO_LABEL};
	char *buf = NULL, *line, **cells = NULL;
	size_t len = 0;
	int ncols = -1, maxcells = 0;
	int64_t lineno = 0, rows = 0, cap = 0, nfeat = 0;
	float *x = NULL;
	int32_t *y = NULL, maxl = -1;
	clg_status st;

	if (!ds)
		return clg_fail(CLG_ERR_INVALID, "csv: NULL dataset");
	memset(ds, 0, sizeof(*ds));
	if (!path)
		return clg_fail(CLG_ERR_INVALID, "csv: NULL path");
	if (opts)
		o = *opts;
	if (!o.delim)
		o.delim = ',';
	if (o.delim == '"' || o.delim == '\n' || o.delim == '\r' || o.header < -1 || o.header > 1 ||
	    o.label_col < CLG_CSV_NO_LABEL)
		return clg_fail(CLG_ERR_INVALID, "csv %s: bad options (delimiter %d, header %d, label column %d)", path,
				o.delim, o.header, o.label_col);
	st = clg_read_text_file(path, SIZE_MAX / 4, &buf, &len);
	if (st)
		return st;
	line = buf;
	while (line) {
		char *nl = strchr(line, '\n'), *p;
		int nc, isheader = 0, col_ok = 1;
		int64_t k = 0;

		lineno++;
		if (nl)
			*nl = '\0';
		p = line + strlen(line);
		if (p > line && p[-1] == '\r')
			p[-1] = '\0';
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p == '\0')
			goto next; /* blank line */
		nc = split_cells(line, o.delim, &cells, &maxcells);
		if (nc == -2) {
			st = clg_fail(CLG_ERR_OOM, "%s: out of host memory", path);
			goto out;
		}
		if (nc < 0) {
			st = clg_fail(CLG_ERR_FORMAT, "%s:%" PRId64 ": unterminated or misplaced quote", path, lineno);
			goto out;
		}
		if (ncols < 0) {
			ncols = nc;
			if (o.label_col != CLG_CSV_NO_LABEL && o.label_col >= ncols) {
				st = clg_fail(CLG_ERR_FORMAT, "%s:%" PRId64 ": label column %d, but the line has %d columns", path,
					      lineno, o.label_col, ncols);
				goto out;
			}
			nfeat = ncols - (o.label_col != CLG_CSV_NO_LABEL);
			if (nfeat <= 0) {
				st = clg_fail(CLG_ERR_FORMAT, "%s:%" PRId64 ": no feature columns", path, lineno);
				goto out;
			}
			if (o.header == 1) {
				isheader = 1;
			} else if (o.header == -1) {
				for (int i = 0; i < nc && col_ok; i++) {
					float f;
					int32_t l;
					col_ok = i == o.label_col ? parse_label(cells[i], &l) : parse_number(cells[i], &f);
				}
				isheader = !col_ok;
			}
			if (isheader)
				goto next;
		}
		if (nc != ncols) {
			st = clg_fail(CLG_ERR_FORMAT, "%s:%" PRId64 ": %d columns, expected %d", path, lineno, nc, ncols);
			goto out;
		}
		if (rows == cap) {
			int64_t ncap = cap ? 2 * cap : 256;
			float *x2 = realloc(x, (size_t)(ncap * nfeat) * sizeof(float));
			int32_t *y2;
			if (x2)
				x = x2;
			y2 = realloc(y, (size_t)ncap * sizeof(int32_t));
			if (y2)
				y = y2;
			if (!x2 || !y2) {
				st = clg_fail(CLG_ERR_OOM, "%s: out of host memory at line %" PRId64, path, lineno);
				goto out;
			}
			cap = ncap;
		}
		for (int i = 0; i < nc; i++) {
			if (i == o.label_col) {
				if (!parse_label(cells[i], &y[rows])) {
					st = clg_fail(CLG_ERR_FORMAT,
						      "%s:%" PRId64 ": column %d: label '%.40s' is not an integer in [0, %d]", path,
						      lineno, i + 1, cells[i], CSV_MAX_LABEL);
					goto out;
				}
				maxl = y[rows] > maxl ? y[rows] : maxl;
			} else if (!parse_number(cells[i], &x[rows * nfeat + k++])) {
				st = clg_fail(CLG_ERR_FORMAT, "%s:%" PRId64 ": column %d: '%.40s' is not a finite number", path,
					      lineno, i + 1, cells[i]);
				goto out;
			}
		}
		rows++;
	next:
		line = nl ? nl + 1 : NULL;
	}
	if (rows == 0) {
		st = clg_fail(CLG_ERR_FORMAT, "%s: no data rows", path);
		goto out;
	}
	ds->n = rows;
	ds->ndim = 1;
	ds->shape[0] = nfeat;
	ds->sample_numel = nfeat;
	ds->x_dtype = CLG_F32;
	ds->x = x;
	x = NULL;
	if (o.label_col != CLG_CSV_NO_LABEL) {
		ds->y_numel = 1;
		ds->y = y;
		ds->num_classes = maxl + 1;
		y = NULL;
	}
out:
	free(x);
	free(y);
	free(cells);
	free(buf);
	return st;
}
