/* When a program built from source is written to the disk cache (cl_program.c's make_program
 * hands it over): at once, or when the device closes.
 *
 * Why not always at once: asking PoCL for a program's binary (CL_PROGRAM_BINARIES) compiles every
 * kernel of the program first, since its binary holds them all, where a launch compiles only the
 * kernel it runs: elementwise.cl's ~60 kernels took 16 s on a loaded 2-core machine, and a fresh
 * machine's first `clgrad train` spent 40 of its 60 s before the first step in those stores. On
 * a thread of its own the store held the program (the next launch from it waited for the whole
 * binary: 39 s), so on PoCL the binaries are written at close instead, and the first run pays
 * that time at its end rather than before its first step. PoCL's own kernel cache
 * (~/.cache/pocl) serves a next process that starts before then. Other drivers hand out the
 * binary they built, which costs nothing: written at once (a process that never closes the
 * device still leaves it). CLGRAD_STORE_BINARIES=now|close overrides. */
#include "cl_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct clg_cl_store_job {
	cl_program prog; /* retained until written */
	char dir[4096], path[4300];
	uint64_t key[2];
	struct clg_cl_store_job *next;
} clg_cl_store_job;

static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER; /* make_program runs on precompile threads */

static int at_close(clg_backend *be)
{
	if (clg_cfg_is(CLG_CFG_STORE_BINARIES, "now"))
		return 0;
	if (clg_cfg_is(CLG_CFG_STORE_BINARIES, "close"))
		return 1;
	return clg_contains_nocase(be->info.platform, "Portable Computing Language");
}

void clg_cl_store_later(clg_backend *be, cl_program prog, const char *dir, const char *path, const uint64_t key[2])
{
	clg_cl *cl = clg_cl_of(be);
	clg_cl_store_job *j = at_close(be) ? calloc(1, sizeof(*j)) : NULL;

	if (!j) { /* at once (or out of host memory for the queue) */
		clg_cl_store_binary(be, prog, dir, path, key);
		return;
	}
	clRetainProgram(prog);
	j->prog = prog;
	snprintf(j->dir, sizeof(j->dir), "%s", dir);
	snprintf(j->path, sizeof(j->path), "%s", path);
	memcpy(j->key, key, sizeof(j->key));
	pthread_mutex_lock(&queue_mu);
	j->next = cl->store;
	cl->store = j;
	pthread_mutex_unlock(&queue_mu);
}

void clg_cl_store_finish(clg_backend *be)
{
	clg_cl *cl = clg_cl_of(be);
	clg_cl_store_job *j = cl->store;
	double t0 = clg_now();
	int n = 0, left, said = 0;

	cl->store = NULL;
	for (clg_cl_store_job *k = j; k; k = k->next)
		n++;
	left = n;
	while (j) {
		clg_cl_store_job *next = j->next;
		/* said as CLGRAD_PROGRESS says the rest of first use: at once under 1, under auto once
		 * the writes have taken 2 s (a process that writes one small program says nothing) */
		if (!said && (clg_cfg_is(CLG_CFG_PROGRESS, "1") || (clg_cfg_is(CLG_CFG_PROGRESS, "auto") && clg_now() - t0 > 2))) {
			said = 1;
			fprintf(stderr, "clgrad: writing %d more kernel program binar%s of '%s' to the cache (once: the next start loads them)\n",
				left, left == 1 ? "y" : "ies", be->info.name);
		}
		left--;
		clg_cl_store_binary(be, j->prog, j->dir, j->path, j->key);
		clReleaseProgram(j->prog);
		free(j);
		j = next;
	}
	if (n)
		clg_debug("program cache: %d binaries of '%s' written at close in %.2f s", n, be->info.name, clg_now() - t0);
}
