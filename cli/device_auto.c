/* --device auto: the device expected fastest for the job. Every OpenCL device but a simulator
 * (Oclgrind is orders of magnitude slower: never the pick) is a candidate; the reference backend
 * only when there is none. A candidate's rate for the job comes from the cache file, or is
 * measured now (a few steps of the job itself, kernel builds excluded) and stored there.
 *
 * Cache file <cache folder>/auto-device.txt, one measurement a line, tab-separated (text, so a
 * person can read or delete a figure; a line that does not parse is ignored):
 *   clgrad-auto-device 1
 *   <rate> <job> <platform> <device name> <driver version>
 * The identity columns make a new driver (or another machine's cache) measure again. */
#include "device_auto.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_HEADER "clgrad-auto-device 1\n"
#define AUTO_MAX_FILE (1 << 20)

static void cache_path(char *buf, size_t len)
{
	char dir[2048];
	buf[0] = 0;
	if (clg_cache_folder(dir, sizeof(dir)) == CLG_OK)
		snprintf(buf, len, "%s/auto-device.txt", dir);
}

/* the whole file, NUL-terminated, or NULL */
static char *read_cache(const char *path)
{
	FILE *f = path[0] ? fopen(path, "r") : NULL;
	char *text = NULL;
	size_t n;

	if (!f)
		return NULL;
	text = malloc(AUTO_MAX_FILE + 1);
	n = text ? fread(text, 1, AUTO_MAX_FILE, f) : 0;
	fclose(f);
	if (!text)
		return NULL;
	text[n] = 0;
	if (strncmp(text, AUTO_HEADER, strlen(AUTO_HEADER))) {
		free(text);
		return NULL;
	}
	return text;
}

/* the line's identity part: "job\tplatform\tname\tdriver" (a tab or newline in a name would
 * break the format: a space instead) */
static void identity(char *buf, size_t len, const char *job, const clg_device_info *d)
{
	const char *parts[4] = {job, d->platform, d->name, d->driver_version};
	size_t used = 0;

	buf[0] = 0;
	for (int k = 0; k < 4 && used + 1 < len; k++) {
		size_t start = used;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? "\t" : "", parts[k]);
		if (used >= len)
			used = len - 1;
		for (size_t p = start + (k > 0); p < used; p++)
			if (buf[p] == '\t' || buf[p] == '\n')
				buf[p] = ' ';
	}
}

/* the stored rate of this identity, NAN if none */
static double lookup(const char *text, const char *id)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char *end;
		double rate = strtod(line, &end);
		size_t idlen = strlen(id);
		if (end != line && *end == '\t' && !strncmp(end + 1, id, idlen) &&
		    (end[1 + idlen] == '\n' || end[1 + idlen] == 0) && isfinite(rate) && rate > 0)
			return rate;
	}
	return NAN;
}

/* text with the line for id replaced (or added), written atomically */
static void store(const char *path, const char *text, const char *id, double rate)
{
	size_t cap = (text ? strlen(text) : 0) + strlen(id) + 64 + strlen(AUTO_HEADER), used = 0;
	char *out = malloc(cap);

	if (!out || !path[0]) {
		free(out);
		return;
	}
	used += (size_t)snprintf(out, cap, "%s", AUTO_HEADER);
	for (const char *line = text ? text + strlen(AUTO_HEADER) : NULL; line && *line;) {
		const char *nl = strchr(line, '\n'), *tab = strchr(line, '\t');
		size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
		size_t idlen = strlen(id);
		int same = tab && tab < line + n && !strncmp(tab + 1, id, idlen) &&
			   (tab[1 + idlen] == '\n' || tab[1 + idlen] == 0);
		if (!same && n > 1) {
			memcpy(out + used, line, n);
			used += n;
			if (out[used - 1] != '\n')
				out[used++] = '\n';
		}
		line += n;
	}
	used += (size_t)snprintf(out + used, cap - used, "%.6g\t%s\n", rate, id);
	if (clg_write_file_atomic(path, out, used))
		fprintf(stderr, "clgrad: device auto: warning: %s\n", clg_last_error());
	free(out);
}

static clg_status measure(int index, const auto_job *job, double *rate)
{
	clg_backend *be = NULL;
	clg_status st = clg_backend_open(index, &be);
	if (!st)
		st = job->rate(be, job->user, rate);
	clg_backend_close(be);
	if (!st && !(isfinite(*rate) && *rate > 0))
		st = clg_fail(CLG_ERR_INVALID, "no rate measured");
	return st;
}

static clg_status pick(const auto_job *job, int *index)
{
	FILE *out = job->out ? job->out : stdout;
	const clg_device_info *devs;
	char path[2200], id[1024];
	char *text;
	int n, best = -1, candidates = 0;
	double best_rate = 0;
	clg_status st = clg_devices(&devs, &n);

	if (st)
		return st;
	cache_path(path, sizeof(path));
	text = read_cache(path);
	fprintf(out, "device auto: the fastest for %s among", job->job);
	for (int i = 1; i < n; i++) {
		if (!clg_contains_nocase(devs[i].name, "oclgrind") && !clg_contains_nocase(devs[i].platform, "oclgrind")) {
			fprintf(out, " %d", i);
			candidates++;
		}
	}
	fprintf(out, "%s\n", candidates ? "" : " (no OpenCL device)");
	for (int i = 1; i < n; i++) {
		const clg_device_info *d = &devs[i];
		double rate;
		const char *how = "cached";
		if (clg_contains_nocase(d->name, "oclgrind") || clg_contains_nocase(d->platform, "oclgrind"))
			continue;
		identity(id, sizeof(id), job->job, d);
		rate = text ? lookup(text, id) : NAN;
		if (!isfinite(rate)) {
			how = "measured now";
			if (measure(i, job, &rate)) {
				fprintf(out, "  device %d %s (%s): could not measure: %s\n", i, d->name, d->platform, clg_last_error());
				continue;
			}
			store(path, text, id, rate);
			free(text);
			text = read_cache(path);
		}
		fprintf(out, "  device %d %s (%s, driver %s): %.*f %s (%s)\n", i, d->name, d->platform, d->driver_version,
		       rate < 100 ? 2 : 0, rate, job->unit, how);
		if (rate > best_rate)
			best = i, best_rate = rate;
	}
	free(text);
	if (best < 0) { /* nothing measured: the default device (the reference when there is no other) */
		st = clg_device_select(NULL, index);
		fprintf(out, "device auto: device %d, the default: %s\n", *index,
			candidates ? "no candidate could run the job" : "no OpenCL device");
		return st;
	}
	*index = best;
	fprintf(out, "device auto: device %d %s (%s): fastest, %.*f %s%s%s\n", best, devs[best].name, devs[best].platform,
	       best_rate < 100 ? 2 : 0, best_rate, job->unit, path[0] ? "; figures in " : "", path);
	return CLG_OK;
}

clg_status device_select_for(const char *spec, const auto_job *job, int *index)
{
	if (spec && !strcmp(spec, "auto"))
		return pick(job, index);
	return clg_device_select(spec, index);
}
