/* Temporary files that a killed writer left behind. Every atomic writer (program cache, tune and
 * self-test files, checkpoints, reports) writes "<name>.tmp.<pid>[.<more>]" next to <name> and
 * renames it over <name>; a process killed between the two (SIGKILL, OOM killer, power) leaves the
 * temporary. The next write of <name> removes those whose pid is gone. */
#define _GNU_SOURCE
#include "clg_internal.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A temporary modified this recently may belong to a live writer that kill() cannot see (another
 * pid namespace or host sharing the folder): it stays. */
#define STALE_AGE_S 60

/* The pid of "<base>.tmp.<pid>[.<anything>]", or 0 when name is not one of base's temporaries. */
static long temp_pid(const char *name, const char *base, size_t blen)
{
	char *end;
	long pid;

	if (strncmp(name, base, blen) || strncmp(name + blen, ".tmp.", 5))
		return 0;
	name += blen + 5;
	if (*name < '0' || *name > '9')
		return 0;
	errno = 0;
	pid = strtol(name, &end, 10);
	if (errno || pid <= 0 || (pid_t)pid != pid || (*end != '.' && *end != '\0'))
		return 0;
	return pid;
}

int clg_remove_stale_temps(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *base = slash ? slash + 1 : path;
	char dir[4096], file[4096 + 256];
	size_t blen;
	DIR *d;
	struct dirent *e;
	int removed = 0;
	time_t now = time(NULL);

	if (!path || !*base)
		return 0;
	blen = strlen(base);
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		long pid = temp_pid(e->d_name, base, blen);
		struct stat sb;
		if (!pid || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* alive (EPERM: someone else's, alive too) */
		if ((size_t)snprintf(file, sizeof(file), "%s/%s", dir, e->d_name) >= sizeof(file))
			continue;
		if (lstat(file, &sb) != 0 || !S_ISREG(sb.st_mode) || now - sb.st_mtime < STALE_AGE_S)
			continue;
		if (unlink(file) == 0) {
			clg_debug("removed %s: a temporary left by process %ld, which is gone", file, pid);
			removed++;
		}
	}
	closedir(d);
	return removed;
}
