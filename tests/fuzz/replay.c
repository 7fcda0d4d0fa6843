/* Runs a fuzz target (fuzz.h) over files without libFuzzer: every file named, and every file in
 * every folder named. Exit status 0 when each input ran (a broken contract aborts). */
#define _GNU_SOURCE
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		if (f)
			fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The folder's files in name order (a reproducible run). */
static int run_dir(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	int n = 0, cap = 0, rc = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **p = realloc(names, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(*p));
			if (!p) {
				rc = -1;
				break;
			}
			names = p;
		}
		if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, (size_t)n, sizeof(*names), cmp_str);
	for (int i = 0; i < n; i++) {
		if (!rc && run_file(names[i]) == 0)
			(*count)++;
		else
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|FOLDER...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) != 0 || (S_ISDIR(sb.st_mode) ? run_dir(argv[i], &count) : run_file(argv[i])) != 0) {
			fprintf(stderr, "replay: %s: cannot read\n", argv[i]);
			return 1;
		}
		count += !S_ISDIR(sb.st_mode);
	}
	printf("replay: %d input(s) ran, %d accepted by the reader\n", count, fuzz_accepted);
	return count ? 0 : 1;
}
