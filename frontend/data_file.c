/* Reading a whole text file for the text readers (CSV, plain text): bounded by what the file
 * holds and by a limit, stopped by a NUL byte. */
#include "fe_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

clg_status clg_read_text_file(const char *path, size_t max, char **out, size_t *len)
{
	FILE *f = clg_fopen_read(path, "rb");
	struct stat sb;
	char *buf = NULL;
	size_t cap = 65536 + 1, n = 0;
	clg_status st = CLG_OK;

	*out = NULL;
	if (!f)
		return clg_fail(CLG_ERR_IO, "%s: cannot open: %s%s", path, strerror(errno), clg_fault_note());
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 0) {
		if ((uint64_t)sb.st_size > (uint64_t)max) {
			st = clg_fail(CLG_ERR_FORMAT, "%s: %lld bytes, larger than the %zu-byte limit of a text file", path,
				      (long long)sb.st_size, max);
			goto out;
		}
		cap = (size_t)sb.st_size + 1;
	} else if (cap > max + 1) {
		cap = max + 1;
	}
	for (;;) {
		size_t got, want;
		if (buf && n + 1 == cap) { /* full: a byte more means the file goes on (it grew, or a pipe) */
			int c = fgetc(f);
			size_t ncap = cap > max / 2 ? max + 1 : 2 * cap;
			char *p;
			if (c == EOF)
				break;
			if (n + 1 > max) {
				st = clg_fail(CLG_ERR_FORMAT, "%s: larger than the %zu-byte limit of a text file", path, max);
				goto out;
			}
			if (!(p = realloc(buf, ncap))) {
				st = clg_fail(CLG_ERR_OOM, "%s: out of host memory for %zu bytes", path, ncap);
				goto out;
			}
			buf = p;
			cap = ncap;
			buf[n++] = (char)c;
			if (!c) {
				st = clg_fail(CLG_ERR_FORMAT, "%s: a NUL byte: not a text file", path);
				goto out;
			}
		} else if (!buf && !(buf = malloc(cap))) {
			st = clg_fail(CLG_ERR_OOM, "%s: out of host memory for %zu bytes", path, cap);
			goto out;
		}
		want = cap - n - 1;
		got = fread(buf + n, 1, want, f);
		if (memchr(buf + n, '\0', got)) {
			st = clg_fail(CLG_ERR_FORMAT, "%s: a NUL byte: not a text file", path);
			goto out;
		}
		n += got;
		if (got < want) /* the end, or an error */
			break;
	}
	if (ferror(f))
		st = clg_fail(CLG_ERR_IO, "%s: read error: %s", path, strerror(errno));
out:
	fclose(f);
	if (st) {
		free(buf);
		return st;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return CLG_OK;
}
