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

static int is_candidate(const clg_device_info *d)
{
	return !clg_device_is_simulator(d);
}

/* GPU before CPU before any other type, never a simulator; 0 (the reference) when none */
static int gpu_before_cpu(const clg_device_info *devs, int n)
{
	static const clg_device_type order[] = {CLG_DEV_GPU, CLG_DEV_CPU, CLG_DEV_ACCEL, CLG_DEV_OTHER};

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (int i = 1; i < n; i++)
			if (devs[i].type == order[k] && is_candidate(&devs[i]))
				return i;
	return 0;
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
		if (is_candidate(&devs[i])) {
			fprintf(out, " %d", i);
			candidates++;
		}
	}
	fprintf(out, "%s\n", candidates ? "" : " (no OpenCL device)");
	for (int i = 1; i < n; i++) {
		const clg_device_info *d = &devs[i];
		double rate;
		const char *how = "cached";
		if (!is_candidate(d))
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
	if (best < 0) { /* nothing measured: GPU before CPU (the reference when there is no other) */
		*index = gpu_before_cpu(devs, n);
		fprintf(out, "device auto: device %d, GPU before CPU: %s\n", *index,
			candidates ? "no candidate could run the job" : "no OpenCL device");
		return st;
	}
	*index = best;
	fprintf(out, "device auto: device %d %s (%s): fastest, %.*f %s%s%s\n", best, devs[best].name, devs[best].platform,
	       best_rate < 100 ? 2 : 0, best_rate, job->unit, path[0] ? "; figures in " : "", path);
	return CLG_OK;
}

/* A rate as the reasons show it: 2 decimals below 100 */
static int rate_digits(double rate) { return rate < 100 ? 2 : 0; }

clg_status device_auto_stored(const auto_job *job, auto_choice *c)
{
	const clg_device_info *devs;
	char path[2200], id[1024], missing[160] = "", figures[400] = "";
	size_t nm = 0, nf = 0;
	char *text;
	int n, unmeasured = 0;
	double best_rate = 0;
	clg_status st = clg_devices(&devs, &n);

	memset(c, 0, sizeof(*c));
	c->index = -1;
	if (st)
		return st;
	cache_path(path, sizeof(path));
	text = read_cache(path);
	for (int i = 1; i < n && c->n < (int)(sizeof(c->dev) / sizeof(c->dev[0])); i++) {
		double rate;
		if (!is_candidate(&devs[i]))
			continue;
		identity(id, sizeof(id), job->job, &devs[i]);
		rate = text ? lookup(text, id) : NAN;
		c->dev[c->n] = i;
		c->rate[c->n++] = rate;
		if (!isfinite(rate)) {
			unmeasured++;
			if (nm < sizeof(missing))
				nm += (size_t)snprintf(missing + nm, sizeof(missing) - nm, "%s%d", nm ? ", " : "", i);
			continue;
		}
		if (nf < sizeof(figures))
			nf += (size_t)snprintf(figures + nf, sizeof(figures) - nf, "%sdevice %d %.*f", nf ? ", " : "", i,
					       rate_digits(rate), rate);
		if (rate > best_rate)
			c->index = i, best_rate = rate;
	}
	free(text);
	if (c->n == 0) {
		c->index = 0;
		snprintf(c->why, sizeof(c->why), "no OpenCL device: the reference");
	} else if (unmeasured) { /* one candidate unmeasured (a new driver, say) could be the fastest */
		c->index = gpu_before_cpu(devs, n);
		c->measured = 0;
		snprintf(c->why, sizeof(c->why), "no measurement on device%s %s: GPU before CPU", unmeasured > 1 ? "s" : "",
			 missing);
	} else {
		c->measured = 1;
		snprintf(c->why, sizeof(c->why), "fastest by the stored figures (%s): %s", job->unit, figures);
	}
	return CLG_OK;
}

clg_status device_select_for(const char *spec, const auto_job *job, int *index)
{
	FILE *out = job->out ? job->out : stdout;
	const clg_device_info *devs;
	auto_choice c;
	int n;
	clg_status st;

	if (!spec || !*spec)
		spec = clg_cfg_str(CLG_CFG_DEVICE);
	if (spec && !strcmp(spec, "auto"))
		return pick(job, index);
	if (spec && *spec)
		return clg_device_select(spec, index);
	/* no device named: auto without measuring (opening every device, building its kernels and
	 * running the job there would slow down, or crash, a plain run; --device auto measures) */
	if ((st = device_auto_stored(job, &c)) || (st = clg_devices(&devs, &n)))
		return st;
	*index = c.index;
	fprintf(out, "device auto (the default; --device auto measures): device %d %s (%s) for %s: %s\n", c.index,
		devs[c.index].name, devs[c.index].platform, job->job, c.why);
	return CLG_OK;
}

void device_auto_train_job(char *buf, size_t len, const clg_train_config *cfg, int eval)
{
	char sizes[96] = "";

	if (clg_model_is_lm(&cfg->model))
		snprintf(sizes, sizeof(sizes), " d%lld h%lld l%lld t%lld", (long long)cfg->model.dim,
			 (long long)cfg->model.heads, (long long)cfg->model.layers, (long long)cfg->model.seq_len);
	/* the precision is part of the job: mixed runs float16 where a device has it natively */
	snprintf(buf, len, "%s %s%s batch %lld%s", eval ? "eval" : "train", cfg->model.name, sizes,
		 (long long)cfg->batch, cfg->precision == CLG_PRECISION_MIXED ? " mixed" : "");
}
