/* The bytes a language model trains on (clg_text_read): a file as it is, or a folder of texts
 * joined, such as the fortune cookie databases of Debian's fortunes packages
 * (/usr/share/games/fortunes: 47 files, 2.6 MB). And the text's fingerprint. */
#include "data.h"
#include "fe_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_FILES 4096

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The folder's regular files (not links: fortune's .u8 names link to the files), names not ending
 * in ".dat" (fortune's indexes) nor starting with '.', sorted. */
static clg_status list_folder(const char *dir, char ***names, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	clg_status st = CLG_OK;

	*names = NULL;
	*n = 0;
	if (!d)
		return clg_fail(CLG_ERR_IO, "%s: cannot open the folder: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		struct stat sb;
		size_t len = strlen(e->d_name);
		char **p;
		if (e->d_name[0] == '.' || (len >= 4 && !strcmp(e->d_name + len - 4, ".dat")))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &sb) || !S_ISREG(sb.st_mode))
			continue;
		if (*n == MAX_FILES) {
			st = clg_fail(CLG_ERR_FORMAT, "%s: more than %d files: not a corpus folder", dir, MAX_FILES);
			break;
		}
		if (!(p = realloc(*names, (size_t)(*n + 1) * sizeof(char *))) || !(p[*n] = strdup(e->d_name))) {
			if (p)
				*names = p;
			st = clg_fail(CLG_ERR_OOM, "%s: out of host memory listing the folder", dir);
			break;
		}
		*names = p;
		(*n)++;
	}
	closedir(d);
	if (!st && *n == 0)
		st = clg_fail(CLG_ERR_FORMAT, "%s: no text files in the folder", dir);
	if (!st)
		qsort(*names, (size_t)*n, sizeof(char *), by_name);
	return st;
}

/* The line at i: its end (past the newline) in *next, its length without "\n" or "\r\n". */
static size_t line_at(const char *s, size_t n, size_t i, size_t *next)
{
	const char *nl = memchr(s + i, '\n', n - i);
	size_t ll;
	*next = nl ? (size_t)(nl - s) + 1 : n;
	ll = *next - i - (nl != NULL);
	if (ll && s[i + ll - 1] == '\r')
		ll--;
	return ll;
}

/* Whether a line of s[0, n) is exactly "%" (a fortune cookie file's separator). */
static int has_separator(const char *s, size_t n)
{
	for (size_t i = 0, next; i < n; i = next)
		if (line_at(s, n, i, &next) == 1 && s[i] == '%')
			return 1;
	return 0;
}

/* Appends a file's text to out: a cookie file's fortunes each followed by the line "%" (empty
 * ones dropped, a missing last newline added), another file as it is with a final newline. */
static void append_text(const char *s, size_t n, char *out, size_t *len)
{
	size_t k = *len;
	if (!has_separator(s, n)) {
		memcpy(out + k, s, n);
		k += n;
		if (n && s[n - 1] != '\n')
			out[k++] = '\n';
		*len = k;
		return;
	}
	for (size_t i = 0; i < n;) {
		/* one fortune: lines up to a "%" line or the end */
		size_t start = i, end = i;
		while (i < n) {
			size_t next, ll = line_at(s, n, i, &next);
			if (ll == 1 && s[i] == '%') {
				i = next;
				break;
			}
			i = next;
			end = next;
		}
		if (end > start) {
			int blank = 1;
			for (size_t j = start; j < end && blank; j++)
				blank = s[j] == '\n' || s[j] == '\r' || s[j] == ' ' || s[j] == '\t';
			if (blank)
				continue;
			memcpy(out + k, s + start, end - start);
			k += end - start;
			if (s[end - 1] != '\n')
				out[k++] = '\n';
			out[k++] = '%';
			out[k++] = '\n';
		}
	}
	*len = k;
}

clg_status clg_text_read(const char *path, char **out, size_t *len)
{
	struct stat sb;
	char **names = NULL, *buf = NULL, fpath[4096];
	size_t cap = 0, n = 0;
	int nf = 0;
	clg_status st;

	if (!path || !out || !len)
		return clg_fail(CLG_ERR_INVALID, "text read: NULL argument");
	*out = NULL;
	*len = 0;
	if (stat(path, &sb) || !S_ISDIR(sb.st_mode))
		return clg_read_text_file(path, CLG_TEXT_MAX_BYTES, out, len);
	st = list_folder(path, &names, &nf);
	for (int f = 0; !st && f < nf; f++) {
		char *s = NULL;
		size_t sn = 0;
		snprintf(fpath, sizeof(fpath), "%s/%s", path, names[f]);
		st = clg_read_text_file(fpath, CLG_TEXT_MAX_BYTES, &s, &sn);
		/* a fortune grows by at most 3 bytes ("\n%\n"), and a fortune has at least one byte */
		if (!st && n + 4 * sn + 2 > CLG_TEXT_MAX_BYTES)
			st = clg_fail(CLG_ERR_FORMAT, "%s: the folder's texts exceed the %zu-byte limit of a text", path,
				      CLG_TEXT_MAX_BYTES);
		if (!st && n + 4 * sn + 2 > cap) {
			size_t nc = 2 * (n + 4 * sn + 2);
			char *p = realloc(buf, nc);
			if (!p)
				st = clg_fail(CLG_ERR_OOM, "%s: out of host memory for %zu bytes", path, nc);
			else {
				buf = p;
				cap = nc;
			}
		}
		if (!st)
			append_text(s, sn, buf, &n);
		free(s);
	}
	for (int f = 0; f < nf; f++)
		free(names[f]);
	free(names);
	if (st) {
		free(buf);
		return st;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return CLG_OK;
}

uint64_t clg_text_hash(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, 64 bits */
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}
