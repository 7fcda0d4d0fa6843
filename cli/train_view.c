/* clgrad train: what a run shows and logs (the progress bar, the epoch lines, the JSON log,
 * --profile's op table) and the time to the first step. */
#define _GNU_SOURCE /* realpath */
#include "train_cmd.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Seconds since this process started (from /proc, 10 ms resolution), or -1 where unknown. */
double train_process_age(void)
{
	char buf[1024], *p;
	double up = -1, start;
	long tck = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/uptime", "r");
	size_t n;

	if (!f)
		return -1;
	if (fscanf(f, "%lf", &up) != 1)
		up = -1;
	fclose(f);
	f = fopen("/proc/self/stat", "r");
	if (!f || up < 0 || tck <= 0) {
		if (f)
			fclose(f);
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* field 22 (starttime, clock ticks after boot), counted after the ")" that ends field 2 */
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	start = (double)strtoull(p + 1, NULL, 10) / (double)tck;
	return up >= start ? up - start : -1;
}

double train_since_launch(const first_step *f) { return f->age0 + (clg_now() - f->t0); }

void train_test_fault_init(run_view *v)
{
	const char *f = clg_cfg_str(CLG_CFG_TEST_TRAIN_FAULT);
	if (f && (!strncmp(f, "crash:", 6) || !strncmp(f, "hang:", 5))) {
		v->fault_hang = f[0] == 'h';
		v->fault_at = atol(strchr(f, ':') + 1);
	}
}

static void test_fault(run_view *v)
{
	if (!v->fault_at || ++v->steps != v->fault_at)
		return;
	fflush(NULL);
	if (v->fault_hang)
		for (;;)
			pause();
	signal(SIGSEGV, SIG_DFL); /* an OpenCL runtime may have its own handler */
	raise(SIGSEGV);
}

/* --profile times PROF_STEPS steps an epoch op by op, after PROF_SKIP untimed ones (the first
 * builds kernels and allocates); an epoch shorter than that is timed whole. */
#define PROF_SKIP 2
#define PROF_STEPS 3

void train_on_epoch_begin(void *user, int64_t epoch, int64_t epochs, int64_t steps)
{
	run_view *v = user;
	snprintf(v->label, sizeof(v->label), "epoch %lld/%lld", (long long)epoch, (long long)epochs);
	if (v->prof_be) {
		v->prof_from = steps >= PROF_SKIP + PROF_STEPS ? PROF_SKIP + 1 : 1;
		v->prof_to = v->prof_from + PROF_STEPS - 1 < steps ? v->prof_from + PROF_STEPS - 1 : steps;
		clg_op_timer_clear(&v->prof);
		clg_backend_set_op_timer(v->prof_be, v->prof_from == 1 ? &v->prof : NULL);
	}
	clg_progress_begin(&v->pr, stdout, v->label, steps);
}

int train_on_loss_due(void *user, int64_t step) { return clg_progress_due(&((run_view *)user)->pr, step); }

void train_on_step_end(void *user, const clg_step_info *s)
{
	run_view *v = user;
	if (!isnan(s->loss))
		clg_progress_update(&v->pr, s->step, s->samples, s->loss);
	if (v->prof_be && (s->step == v->prof_from - 1 || s->step == v->prof_to))
		clg_backend_set_op_timer(v->prof_be, s->step == v->prof_to ? NULL : &v->prof);
	test_fault(v);
}

/* The op table's rows: --profile-top N (0: every op), else PROF_TOP. */
static int prof_top(const run_view *v)
{
	return v->o->profile_top == 0 ? INT32_MAX : v->o->profile_top;
}

/* A JSON array of n numbers (non-finite ones as null). */
static void json_key_nums(json_writer *w, const char *key, int n, const double *x)
{
	json_key(w, key);
	json_begin_array(w);
	for (int i = 0; i < n; i++)
		json_num(w, x[i]);
	json_end_array(w);
}

/* One line of the JSON log an epoch, through the JSON writer (a NaN loss is null, not nan). */
static void log_epoch(run_view *v, const clg_epoch_info *e, double lr)
{
	json_writer w;
	double per[CLG_TRAIN_MAX_DEVICES], st = e->steps > 0 ? (double)e->steps : 1;
	char sum[32];

	json_init(&w, v->log, 0);
	json_begin_object(&w);
	json_key_int(&w, "epoch", e->epoch);
	json_key_str(&w, "model", v->o->cfg.model.name);
	json_key_str(&w, "device", v->device);
	json_key_num(&w, "train_loss", e->train_loss);
	if (v->d->lm) {
		json_key_num(&w, "val_loss", e->test_loss);
		json_key_num(&w, "unigram_val_loss", v->d->unigram);
		json_key_num(&w, "val_bits_per_byte", e->test_loss * lm_bits_a_byte(&v->d->text));
	} else {
		json_key_num(&w, "test_acc", e->test_acc);
		json_key_num(&w, "test_loss", e->test_loss);
	}
	json_key_num(&w, "epoch_seconds", e->seconds);
	json_key_num(&w, "samples_per_s", (double)e->samples / e->seconds);
	json_key_int(&w, "steps", e->steps);
	json_key_num(&w, "lr", lr);
	if (e->steps > 0) {
		json_key_num(&w, "host_seconds", e->host_seconds);
		json_key_num(&w, "enqueue_seconds", e->enqueue_seconds);
		json_key_num(&w, "launches_per_step", (double)e->launches / st);
		json_key_num(&w, "uploads_per_step", (double)e->uploads / st);
		json_key_num(&w, "downloads_per_step", (double)e->downloads / st);
	}
	for (int i = 0; i < e->replicas; i++)
		per[i] = (double)e->peak_bytes[i];
	json_key_nums(&w, "peak_step_bytes", e->replicas, per);
	for (int i = 0; i < e->replicas; i++)
		per[i] = (double)e->live_bytes[i];
	json_key_nums(&w, "live_bytes", e->replicas, per);
	json_key_num(&w, "optimizer_state_bytes", e->optimizer_state_bytes);
	if (e->replicas > 1 || v->o->cfg.comm) {
		for (int i = 0; i < e->replicas; i++)
			per[i] = v->idx[i];
		json_key_nums(&w, "devices", e->replicas, per);
		for (int i = 0; i < e->replicas; i++)
			per[i] = (double)e->shares[i];
		json_key_nums(&w, "shares", e->replicas, per);
		json_key_nums(&w, "device_samples_per_s", e->replicas, e->samples_per_s);
		json_key_int(&w, "ranks", v->o->cfg.comm ? v->o->cfg.comm->size : 1);
		json_key_str(&w, "compress", v->o->cfg.compress == CLG_COMPRESS_INT8 ? "int8" : "none");
		json_key_num(&w, "exchange_bytes_per_step", e->exchange_bytes);
		json_key_num(&w, "exchange_seconds", e->exchange_seconds);
		json_key_int(&w, "exchange_buckets", e->exchange_buckets);
		json_key_str(&w, "exchange", e->exchange);
		json_key_num(&w, "link_bytes_per_step", e->link_bytes);
		snprintf(sum, sizeof(sum), "%016llx", (unsigned long long)e->checksum);
		json_key_str(&w, "checksum", sum);
		json_key_bool(&w, "replicas_identical", e->replicas_identical);
	}
	if (v->prof_be && v->prof.n > 0 && v->prof_to >= v->prof_from) { /* sorted: printed before */
		double steps = (double)(v->prof_to - v->prof_from + 1);
		json_key(&w, "op_profile");
		json_begin_array(&w);
		for (int i = 0; i < v->prof.n && i < prof_top(v); i++) {
			json_begin_object(&w);
			json_key_str(&w, "op", v->prof.e[i].key);
			json_key_num(&w, "calls_per_step", (double)v->prof.e[i].calls / steps);
			json_key_num(&w, "ms_per_step", 1e3 * v->prof.e[i].seconds / steps);
			json_end_object(&w);
		}
		json_end_array(&w);
	}
	if (e->first) { /* this process's start */
		json_key_num(&w, "first_step_begun_s", v->fs->begun_s);
		json_key_num(&w, "first_step_done_s", v->fs->done_s);
		json_key_num(&w, "programs_ready_s", v->fs->ready_s);
	}
	json_end_object(&w);
	fputc('\n', v->log);
	fflush(v->log);
}

/* The ops that took longest in the timed steps, each waited for (a step is slower than untimed). */
static void print_op_profile(run_view *v)
{
	int64_t steps = v->prof_to - v->prof_from + 1;
	const clg_op_timer *t = &v->prof;

	if (!v->prof_be || t->n == 0 || steps < 1)
		return;
	clg_op_timer_sort(&v->prof);
	printf("  ops of %lld step(s) on device %d, each op waited for: %.2f ms a step%s\n", (long long)steps, v->idx[0],
	       1e3 * t->total / (double)steps, t->n > prof_top(v) ? "; the longest:" : "");
	printf("    %-44s %8s %10s %6s\n", "op (dst shape)", "calls", "ms a step", "share");
	for (int i = 0; i < t->n && i < prof_top(v); i++)
		printf("    %-44s %8.1f %10.3f %5.1f%%\n", t->e[i].key, (double)t->e[i].calls / (double)steps,
		       1e3 * t->e[i].seconds / (double)steps, t->total > 0 ? 100 * t->e[i].seconds / t->total : 0);
}

clg_status train_on_epoch_end(void *user, const clg_epoch_info *e)
{
	run_view *v = user;
	first_step *fs = v->fs;
	double rate = (double)e->samples / e->seconds;
	char rates[32], toks[32];

	clg_fmt_rate(rates, sizeof(rates), rate);
	clg_fmt_rate(toks, sizeof(toks), rate * (double)v->o->cfg.model.seq_len);
	clg_progress_end(&v->pr);
	if (e->first) {
		fs->begun_s = fs->age0 + (e->first_step_begun - fs->t0);
		fs->done_s = fs->age0 + (e->first_step_done - fs->t0);
		printf("time to first step: began %.3f s after launch, done at %.3f s (device open at %.3f s, %d kernel "
		       "programs ready at %.3f s after %.3f s, data loaded beside them by %.3f s)\n", fs->begun_s, fs->done_s,
		       fs->opened_s, fs->programs, fs->ready_s, fs->precompile_s, fs->data_s);
	}
	if (v->d->lm)
		printf("epoch %lld: train loss %.4f, validation loss %.4f (unigram baseline %.4f; %.3f / %.3f bits a byte), "
		       "%.1f s, %s samples/s (%s tokens/s)\n", (long long)e->epoch, e->train_loss, e->test_loss, v->d->unigram,
		       e->test_loss * lm_bits_a_byte(&v->d->text), v->d->unigram * lm_bits_a_byte(&v->d->text), e->seconds,
		       rates, toks);
	else
		printf("epoch %lld: train loss %.4f, test accuracy %.4f (test loss %.4f), %.1f s, %s samples/s\n",
		       (long long)e->epoch, e->train_loss, e->test_acc, e->test_loss, e->seconds, rates);
	if (e->loss_scale > 0)
		printf("  loss scale %g, %lld step(s) skipped so far\n", e->loss_scale, (long long)e->skipped_steps);
	if (v->o->profile && e->steps > 0) {
		double per = 1e3 / (double)e->steps;
		printf("  profile: %.1f kernel launches, %.1f uploads, %.1f downloads a step; the host queues a step in "
		       "%.2f ms of %.2f ms (%.0f%%%s)\n", (double)e->launches / (double)e->steps,
		       (double)e->uploads / (double)e->steps, (double)e->downloads / (double)e->steps, e->host_seconds * per,
		       e->seconds * per, e->seconds > 0 ? 100 * e->host_seconds / e->seconds : 0,
		       e->replicas > 1 || v->o->cfg.comm ? ", the exchange's waits included" : "; near 100%: the host sets the pace");
		if (e->launches) /* the reference backend launches nothing */
			printf("  host: %.2f ms a step inside the OpenCL runtime's kernel enqueues (CLBlast and clFFT "
			       "calls whole), %.1f us a launch\n", e->enqueue_seconds * per,
			       1e6 * e->enqueue_seconds / (double)e->launches);
		for (int i = 0; i < e->replicas; i++)
			printf("  memory on device %d: peak %.2f MiB in a step (high-water mark reset each step), %.2f MiB live "
			       "between steps\n", v->idx[i], e->peak_bytes[i] / 1048576.0, e->live_bytes[i] / 1048576.0);
		print_op_profile(v);
	}
	if (e->replicas > 1 || v->o->cfg.comm) {
		printf("  data parallel:");
		for (int i = 0; i < e->replicas; i++)
		{
			printf(" device %d %lld rows", v->idx[i], (long long)e->shares[i]);
			if (e->samples_per_s[i] > 0) { /* measured (not with equal shares) */
				clg_fmt_rate(rates, sizeof(rates), e->samples_per_s[i]);
				printf(" (%s samples/s)", rates);
			}
			printf("%s", i + 1 < e->replicas ? "," : ";");
		}
		printf(" exchange (%s) %.0f bytes a step per %s in %d part%s, %.2f s; replicas %s (checksum %016llx)\n",
		       e->exchange, e->exchange_bytes, v->o->cfg.comm ? "rank" : "device", e->exchange_buckets,
		       e->exchange_buckets > 1 ? "s" : "", e->exchange_seconds, e->replicas_identical ? "identical" : "DIFFER",
		       (unsigned long long)e->checksum);
	}
	if (v->log)
		log_epoch(v, e, e->lr);
	if (e->saved)
		printf("saved %s\n", e->saved);
	return CLG_OK;
}
