/* clgrad compare --worker INDEX: the child process of one device. It runs the selected sections
 * (compare/compare.h) and writes DIR/device-INDEX.json. Each section is written to memory first; after
 * each one the sections so far go to DIR/device-INDEX.partial.json, and at the end the whole
 * document to device-INDEX.json (both through a temporary file and a rename), so a crash or a
 * hang never leaves a file that looks complete, and the driver can still salvage the sections
 * that finished. Test hooks (docs/COMPARE.md): CLGRAD_COMPARE_FAULT="INDEX:crash|hang[;...]"
 * strikes after the capabilities section. */
#define _GNU_SOURCE
#include "compare_internal.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* the fault CLGRAD_COMPARE_FAULT plants in this worker: "crash", "hang" or "" */
static void planted_fault(int index, char *buf, size_t len)
{
	const char *env = clg_cfg_str(CLG_CFG_COMPARE_FAULT);
	char list[256], *save = NULL;

	buf[0] = 0;
	if (!env)
		return;
	snprintf(list, sizeof(list), "%s", env);
	for (char *t = strtok_r(list, ";,", &save); t; t = strtok_r(NULL, ";,", &save)) {
		char *colon = strchr(t, ':');
		if (colon && colon > t && atoi(t) == index)
			snprintf(buf, len, "%s", colon + 1);
	}
}

static void plant(const char *fault)
{
	if (!strcmp(fault, "crash")) {
		fprintf(stderr, "compare worker: CLGRAD_COMPARE_FAULT: raising SIGSEGV\n");
		/* LLVM (in the OpenCL compilers) installs a handler that returns after a raise() */
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	} else if (!strcmp(fault, "hang")) {
		fprintf(stderr, "compare worker: CLGRAD_COMPARE_FAULT: hanging\n");
		for (;;)
			pause();
	}
}

enum { SEC_CAPS, SEC_PEAKS, SEC_COMPILE, SEC_ROOFLINE, SEC_OPS, SEC_TRAIN, SEC_COUNT };
static const char *sec_names[SEC_COUNT] = {"capabilities", "peaks", "compile", "roofline", "ops", "train"};

typedef struct {
	const cmp_opts *o;
	const clg_device_info *info;
	clg_backend *ref, *dev;
	compare_opts co;
	compare_peak_values peaks;
	char *text[SEC_COUNT];  /* each finished section's JSON object, NULL if not run */
	int failed;             /* sections that could not run */
	const char *error;      /* the device could not be opened */
	double t0;
} worker_state;

/* The whole document as it stands; complete: every section ran (device-N.json), else the
 * sections so far (device-N.partial.json). */
static int write_doc(const worker_state *s, int complete)
{
	char path[1100], tmp[1200];
	json_writer w;
	FILE *f;
	int first = 1;

	snprintf(path, sizeof(path), "%s/device-%d%s.json", s->o->out_dir, s->co.device_index,
		 complete ? "" : ".partial");
	if (!(f = cmp_open_atomic(path, tmp, sizeof(tmp)))) {
		fprintf(stderr, "clgrad compare --worker: cannot write %s\n", tmp);
		return -1;
	}
	json_init(&w, f, 1);
	json_begin_object(&w);
	json_key_str(&w, "schema", CMP_DEVICE_SCHEMA);
	json_key(&w, "device");
	json_begin_object(&w);
	json_key_int(&w, "index", s->co.device_index);
	json_key_str(&w, "name", s->info->name);
	json_key_str(&w, "type", clg_device_type_name(s->info->type));
	json_key_str(&w, "platform", s->info->platform);
	json_end_object(&w);
	json_key_bool(&w, "quick", s->o->quick);
	json_key_bool(&w, "tiny", s->co.tiny);
	json_key_bool(&w, "complete", complete);
	if (s->error)
		json_key_str(&w, "error", s->error);
	json_key_int(&w, "sections_failed", s->failed);
	json_key_num(&w, "elapsed_s", now_s() - s->t0);
	/* the sections last, pasted in as the writer made them */
	json_key(&w, "sections");
	fputs("{", f);
	for (int i = 0; i < SEC_COUNT; i++) {
		if (!s->text[i])
			continue;
		fprintf(f, "%s\n  \"%s\": %s", first ? "" : ",", sec_names[i], s->text[i]);
		first = 0;
	}
	fputs("}\n}\n", f);
	return cmp_commit(f, tmp, path);
}

/* one section: its object, its members, "elapsed_s" and "ok" (the section ran) */
static void run_section(worker_state *s, int which)
{
	double t0 = now_s();
	size_t len = 0;
	json_writer w;
	FILE *mem;
	int rc = 1;

	fprintf(stderr, "compare worker: device %d: section %s\n", s->co.device_index, sec_names[which]);
	if (!(mem = open_memstream(&s->text[which], &len))) {
		s->failed++;
		return;
	}
	json_init(&w, mem, 1);
	json_begin_object(&w);
	switch (which) {
	case SEC_CAPS: rc = compare_capabilities(s->info, s->dev, &s->co, &w); break;
	case SEC_PEAKS: rc = compare_peaks(s->dev, &s->co, &w, &s->peaks); break;
	case SEC_COMPILE: rc = compare_compile(s->dev, &s->co, &w); break;
	case SEC_ROOFLINE: rc = compare_roofline(s->dev, &s->co, &s->peaks, &w); break;
	case SEC_OPS: rc = compare_ops(s->ref, s->dev, &s->co, &w); break;
	case SEC_TRAIN: rc = compare_train(s->ref, s->dev, &s->co, &w); break;
	}
	json_key_num(&w, "elapsed_s", now_s() - t0);
	json_key_bool(&w, "ok", rc == 0);
	json_end_object(&w);
	fclose(mem);
	/* the pretty writer ends a top-level value with a newline: drop it */
	if (len && s->text[which][len - 1] == '\n')
		s->text[which][len - 1] = 0;
	if (rc)
		s->failed++;
	fprintf(stderr, "compare worker: device %d: section %s done%s (%.1f s)\n", s->co.device_index,
		sec_names[which], rc ? ", could not run" : "", now_s() - t0);
	write_doc(s, 0);
}

static int is_simulator(const clg_device_info *d)
{
	return clg_contains_nocase(d->platform, "oclgrind") || clg_contains_nocase(d->name, "oclgrind");
}

int cmp_worker(const cmp_opts *o, int index)
{
	const clg_device_info *list;
	worker_state s = {0};
	char fault[32], partial[1100];
	int count, rc = 1;

	s.t0 = now_s();
	planted_fault(index, fault, sizeof(fault));
	if (clg_devices(&list, &count)) {
		fprintf(stderr, "clgrad compare --worker: %s\n", clg_last_error());
		return 1;
	}
	if (index < 0 || index >= count) {
		fprintf(stderr, "clgrad compare --worker: no device %d\n", index);
		return 2;
	}
	s.o = o;
	s.info = &list[index];
	s.co = (compare_opts){.quick = o->quick, .out_dir = o->out_dir, .data_dir = o->data_dir,
			      .device_index = index, .tiny = is_simulator(&list[index])};
	/* the capabilities the device list holds go to the partial file before any kernel runs (the
	 * open runs the self-test): a device that crashes there still reports them */
	run_section(&s, SEC_CAPS);
	if (clg_backend_open(0, &s.ref) || (index == 0 ? (s.dev = s.ref, 0) : clg_backend_open(index, &s.dev))) {
		s.error = clg_last_error();
		fprintf(stderr, "clgrad compare --worker: %s\n", s.error);
		goto write_file;
	}
	free(s.text[SEC_CAPS]); /* again, with what needs the open device */
	s.text[SEC_CAPS] = NULL;
	run_section(&s, SEC_CAPS);
	plant(fault);
	if (o->suites & CMP_PEAK)
		run_section(&s, SEC_PEAKS);
	if (o->suites & CMP_COMPILE)
		run_section(&s, SEC_COMPILE);
	if (o->suites & CMP_PEAK)
		run_section(&s, SEC_ROOFLINE);
	if (o->suites & CMP_OPS)
		run_section(&s, SEC_OPS);
	if (o->suites & CMP_TRAIN)
		run_section(&s, SEC_TRAIN);
	rc = s.failed ? 4 : 0; /* 4: finished, but some section could not run */
write_file:
	if (write_doc(&s, 1))
		rc = 1;
	snprintf(partial, sizeof(partial), "%s/device-%d.partial.json", o->out_dir, index);
	unlink(partial);
	if (s.dev && s.dev != s.ref)
		clg_backend_close(s.dev);
	if (s.ref)
		clg_backend_close(s.ref);
	for (int i = 0; i < SEC_COUNT; i++)
		free(s.text[i]);
	return rc;
}
