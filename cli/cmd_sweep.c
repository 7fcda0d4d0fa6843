/* clgrad sweep: options, the grid of runs and its plan file, the resume check. */
#define _GNU_SOURCE
#include "cli.h"
#include "compare_internal.h" /* cmp_open_atomic, cmp_commit */
#include "json_read.h"
#include "opts.h"
#include "sweep.h"

#include <clgrad.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* train options a sweep may vary or fix; device, log, save and resume are the sweep's own */
static const char *const train_options[] = {
	"model", "data", "epochs", "batch", "lr", "optimizer", "momentum", "weight-decay", "schedule",
	"warmup", "clip", "seed", "limit", "seq-len", "dim", "heads", "layers", "precision",
};

static const char usage[] =
	"usage: clgrad sweep --out DIR [--devices SPEC,...|all] [--timeout S] [--retry-failed] [--dry-run]\n"
	"                    [TRAIN OPTIONS]\n"
	"  Runs `clgrad train` for every combination of the train options given as comma lists, e.g.\n"
	"    clgrad sweep --out sw --model mlp,cnn --lr 1e-3,3e-3 --batch 64,128 --epochs 3\n"
	"  (8 runs). One process per run, at most one run per device at a time, spread over --devices\n"
	"  (default: every OpenCL device, else the reference). A run that crashes, fails or passes\n"
	"  --timeout seconds is recorded and the others go on. Run again with the same options to resume:\n"
	"  finished runs are kept (--retry-failed runs the failed ones again), an interrupted run continues\n"
	"  from its last checkpoint. Writes DIR/results.json, results.md and results.html (loss curves).\n"
	"  Train options: --model --data --epochs --batch --lr --optimizer --momentum --weight-decay\n"
	"  --schedule --warmup --clip --seed --limit --seq-len --dim --heads --layers --precision\n"
	"  each value is checked as clgrad train checks it, before any run starts.\n"
	"  Exit status: 0 every run ok, 3 some run not ok, 2 bad options, 130 interrupted.\n";

static int bad_option(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "clgrad sweep: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, " (clgrad sweep --help)\n");
	return 2;
}

/* The table's own spelling of a train option a sweep may set, or NULL. */
static const char *train_option(const char *name)
{
	for (size_t i = 0; i < sizeof(train_options) / sizeof(train_options[0]); i++)
		if (!strcmp(name, train_options[i]))
			return train_options[i];
	return NULL;
}

/* Splits a comma list in place into an axis; every value non-empty. */
static int add_axis(sweep *s, const char *opt, char *list)
{
	sweep_axis *a;
	char *save = NULL;

	for (int i = 0; i < s->n_axes; i++)
		if (!strcmp(s->axes[i].opt, opt))
			return bad_option("--%s given twice%s", opt, "");
	if (s->n_axes == SWEEP_MAX_AXES)
		return bad_option("more than 8 options vary (--%s)%s", opt, "");
	if (list[0] == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
		return bad_option("--%s '%s': an empty value in the list", opt, list);
	a = &s->axes[s->n_axes++];
	*a = (sweep_axis){.opt = opt};
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (a->n == SWEEP_MAX_VALUES)
			return bad_option("--%s: more than 32 values%s", opt, "");
		for (int k = 0; k < a->n; k++)
			if (!strcmp(a->values[k], t))
				return bad_option("--%s: '%s' listed twice", opt, t);
		a->values[a->n++] = t;
	}
	return 0;
}

static int parse_devices(sweep *s, const char *list)
{
	const clg_device_info *devs;
	int ndev;
	char spec[64];

	if (clg_devices(&devs, &ndev))
		return report_error("sweep");
	if (!list || !strcmp(list, "all")) {
		for (int i = 1; i < ndev && s->n_devices < SWEEP_MAX_DEVICES; i++)
			s->devices[s->n_devices++] = i;
		if (!s->n_devices)
			s->devices[s->n_devices++] = 0;
		return 0;
	}
	for (const char *p = list;; p += strcspn(p, ",") + 1) {
		size_t len = strcspn(p, ",");
		int idx;
		if (!len || len >= sizeof(spec) || s->n_devices == SWEEP_MAX_DEVICES)
			return bad_option("--devices '%s': an empty or over-long device, or more than 16%s", list, "");
		memcpy(spec, p, len);
		spec[len] = 0;
		if (clg_device_select(spec, &idx)) {
			fprintf(stderr, "clgrad sweep: --devices '%s': %s\n", list, clg_last_error());
			return 2;
		}
		for (int k = 0; k < s->n_devices; k++)
			if (s->devices[k] == idx)
				return bad_option("--devices '%s': device '%s' named twice", list, spec);
		s->devices[s->n_devices++] = idx;
		if (!p[len])
			return 0;
	}
}

/* A train option (cli_spec.other): a comma list makes an axis, a single value is fixed. Every
 * value is checked as `clgrad train` checks it. */
static int train_arg(void *user, const char *name, const char *value)
{
	sweep *s = user;
	const char *opt = train_option(name);
	char *v = (char *)value; /* points into argv, which is the sweep's to cut */

	if (!strcmp(name, "device") || !strcmp(name, "log") || !strcmp(name, "save") || !strcmp(name, "resume"))
		return bad_option("--%s is set by the sweep for each run (use --devices to choose devices)%s", name, "");
	if (!opt)
		return bad_option("unknown option '--%s'%s", name, "");
	if (!v)
		return bad_option("--%s needs a value%s", name, "");
	if (!*v)
		return bad_option("--%s: an empty value%s", name, "");
	if (strchr(v, ',')) {
		if (add_axis(s, opt, v))
			return 2;
		for (int k = 0; k < s->axes[s->n_axes - 1].n; k++)
			if (train_check_option("sweep", opt, s->axes[s->n_axes - 1].values[k]))
				return 2;
		return 0;
	}
	for (int k = 0; k < s->n_fixed; k += 2)
		if (!strcmp(s->fixed[k], opt))
			return bad_option("--%s given twice%s", opt, "");
	if (s->n_fixed == 2 * SWEEP_MAX_FIXED)
		return bad_option("too many options%s%s", "", "");
	if (train_check_option("sweep", opt, v))
		return 2;
	s->fixed[s->n_fixed++] = opt;
	s->fixed[s->n_fixed++] = v;
	return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, sweep *s)
{
	const char *devices = NULL;
	const cli_opt opts[] = {
		CLI_OPT_STR("out", &s->out),
		CLI_OPT_STR("devices", &devices),
		CLI_OPT_POS("timeout", &s->timeout_s, 1e7),
		CLI_OPT_FLAG("retry-failed", &s->retry_failed),
		CLI_OPT_FLAG("dry-run", &s->dry_run),
	};
	cli_spec spec = {.cmd = "sweep", .usage = usage, .opts = opts, .n = CLI_N(opts), .other = train_arg, .user = s};
	int rc = cli_parse(&spec, argc, argv);

	if (rc >= 0)
		return rc;
	if (!s->out)
		return bad_option("--out DIR is required%s%s", "", "");
	rc = parse_devices(s, devices);
	return rc ? rc : -1;
}

/* The grid: every combination of the axes' values, the last axis varying fastest. */
static int make_runs(sweep *s)
{
	long total = 1;
	int pos[SWEEP_MAX_AXES] = {0};

	for (int a = 0; a < s->n_axes; a++)
		total *= s->axes[a].n;
	if (total > SWEEP_MAX_RUNS)
		return bad_option("%s runs in the grid; at most 512%s", total > 99999 ? "over 99999" : "so many", "");
	s->n_runs = (int)total;
	s->runs = calloc((size_t)total, sizeof(*s->runs));
	if (!s->runs) {
		fprintf(stderr, "clgrad sweep: out of memory for %ld runs\n", total);
		return 1;
	}
	for (int r = 0; r < s->n_runs; r++) {
		sweep_run *run = &s->runs[r];
		size_t len = 0;
		snprintf(run->id, sizeof(run->id), "r%03d", r);
		for (int a = 0; a < s->n_axes; a++) {
			run->argv[run->argc++] = s->axes[a].opt;
			run->argv[run->argc++] = s->axes[a].values[pos[a]];
			len += (size_t)snprintf(run->label + len, len < sizeof(run->label) ? sizeof(run->label) - len : 0,
						"%s%s=%s", a ? " " : "", s->axes[a].opt, s->axes[a].values[pos[a]]);
		}
		if (!s->n_axes)
			snprintf(run->label, sizeof(run->label), "(single run)");
		for (int k = 0; k < s->n_fixed; k++)
			run->argv[run->argc++] = s->fixed[k];
		for (int a = s->n_axes - 1; a >= 0; a--) { /* next combination */
			if (++pos[a] < s->axes[a].n)
				break;
			pos[a] = 0;
		}
	}
	return 0;
}

static void write_plan_json(const sweep *s, FILE *f)
{
	json_writer w;
	json_init(&w, f, 1);
	json_begin_object(&w);
	json_key_str(&w, "schema", "clgrad-sweep-plan/1");
	json_key(&w, "runs");
	json_begin_array(&w);
	for (int r = 0; r < s->n_runs; r++) {
		json_begin_object(&w);
		json_key_str(&w, "id", s->runs[r].id);
		json_key_str(&w, "label", s->runs[r].label);
		json_key(&w, "args");
		json_begin_array(&w);
		for (int k = 0; k < s->runs[r].argc; k++)
			json_str(&w, s->runs[r].argv[k]);
		json_end_array(&w);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	fputc('\n', f);
}

/* A new folder gets the plan; an existing plan must be this sweep's, run for run. */
static int check_or_write_plan(const sweep *s)
{
	char path[4096], tmp[4200], err[160];
	jv *plan;
	const jv *runs;
	FILE *f;

	snprintf(path, sizeof(path), "%s/sweep.json", s->out);
	if (access(path, F_OK) != 0) {
		if (!(f = cmp_open_atomic(path, tmp, sizeof(tmp)))) {
			fprintf(stderr, "clgrad sweep: cannot write %s: %s\n", path, strerror(errno));
			return 1;
		}
		write_plan_json(s, f);
		if (cmp_commit(f, tmp, path)) {
			fprintf(stderr, "clgrad sweep: cannot write %s\n", path);
			return 1;
		}
		return 0;
	}
	if (!(plan = jv_parse_file(path, err, sizeof(err)))) {
		fprintf(stderr, "clgrad sweep: %s is not a sweep plan (%s); use another --out folder\n", path, err);
		return 2;
	}
	runs = jv_get(plan, "runs");
	for (int r = 0; r < s->n_runs && jv_len(runs) == s->n_runs; r++) {
		const jv *args = jv_get(jv_at(runs, r), "args");
		int same = jv_len(args) == s->runs[r].argc;
		for (int k = 0; same && k < s->runs[r].argc; k++)
			same = !strcmp(jv_str(jv_at(args, k), ""), s->runs[r].argv[k]);
		if (!same) {
			fprintf(stderr, "clgrad sweep: %s holds a different sweep (run %s: %s); resume with the same train "
				"options, or use another --out folder\n", s->out, s->runs[r].id,
				jv_str(jv_get(jv_at(runs, r), "label"), "?"));
			jv_free(plan);
			return 2;
		}
	}
	if (jv_len(runs) != s->n_runs) {
		fprintf(stderr, "clgrad sweep: %s holds a different sweep (%d runs, this one has %d); use another --out "
			"folder\n", s->out, jv_len(runs), s->n_runs);
		jv_free(plan);
		return 2;
	}
	jv_free(plan);
	return 0;
}

/* One sweep per folder at a time: a second one in the same folder would start the same runs. */
static int lock_folder(const char *out, int *fd)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/.lock", out);
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0 || flock(*fd, LOCK_EX | LOCK_NB)) {
		fprintf(stderr, "clgrad sweep: %s: %s\n", path,
			*fd < 0 ? strerror(errno) : "another sweep is running in this folder");
		return 1;
	}
	return 0;
}

int cmd_sweep(int argc, char **argv)
{
	sweep s = {0};
	int rc, lock = -1, done = 0, not_ok = 0;
	char runs_dir[4096];

	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((rc = parse(argc, argv, &s)) >= 0 || (rc = make_runs(&s)))
		goto out;
	printf("sweep: %d run(s) over %d device(s):", s.n_runs, s.n_devices);
	for (int i = 0; i < s.n_devices; i++)
		printf(" %d", s.devices[i]);
	printf("\n");
	if (s.dry_run) {
		for (int r = 0; r < s.n_runs; r++)
			printf("  %s  %s\n", s.runs[r].id, s.runs[r].label);
		goto out;
	}
	snprintf(runs_dir, sizeof(runs_dir), "%s/runs", s.out);
	if ((mkdir(s.out, 0755) && errno != EEXIST) || (mkdir(runs_dir, 0755) && errno != EEXIST)) {
		fprintf(stderr, "clgrad sweep: cannot create %s: %s\n", runs_dir, strerror(errno));
		rc = 1;
		goto out;
	}
	if ((rc = lock_folder(s.out, &lock)) || (rc = check_or_write_plan(&s)))
		goto out;
	for (int r = 0; r < s.n_runs; r++) {
		sweep_run *run = &s.runs[r];
		if (sweep_load_result(&s, run))
			continue;
		if (strcmp(run->status, "ok") && s.retry_failed) {
			run->finished = 0; /* run it again */
			continue;
		}
		run->earlier = 1;
		done++;
	}
	if (done)
		printf("sweep: %d run(s) finished earlier are kept (%s)\n", done, s.out);
	if ((rc = sweep_execute(&s)))
		goto out;
	for (int r = 0; r < s.n_runs; r++)
		not_ok += strcmp(s.runs[r].status, "ok") != 0;
	printf("\n");
	sweep_print_table(&s, stdout);
	if (sweep_write_reports(&s)) {
		rc = 1;
		goto out;
	}
	printf("sweep: %d of %d run(s) ok; report in %s/results.html (.md, .json)\n", s.n_runs - not_ok, s.n_runs, s.out);
	rc = not_ok ? 3 : 0;
out:
	if (lock >= 0)
		close(lock);
	free(s.runs);
	return rc;
}
