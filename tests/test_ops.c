/* The op suite (suite/op_suite.c) on every OpenCL device against the reference backend: a failed
 * case is a failed check, and the per-op tally is printed at the end.
 *
 * usage: test_ops [--op NAME[,NAME...]] [--device SUBSTRING] [--small] [--seed N] [--with "NAME=VALUE ..."]... [-v]
 *   --small  only cases of at most 64 elements per operand (for Oclgrind)
 *   --seed   other inputs for the same cases: N (0 to 2^64 - 1; 0, the default, gives the inputs
 *            ctest runs) is mixed into every case's seed (op_suite_opts.seed), to check that the
 *            thresholds hold beyond the inputs they were tried on
 *   --with   run the cases under this configuration (clg_config_set; each device opened again
 *            under it); repeated: once under each, in one process (the variant axes: kernel shape,
 *            GEMM implementation, rows per work-item...). Without it: once, as configured.
 * A run of every op (no --op, no --small) also checks that every op of clg_ops.def has cases. */
#include "op_suite.h"
#include "test_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WITH 16
#define USAGE "usage: test_ops [--op NAME[,NAME...]] [--device SUBSTRING] [--small] [--seed N] [--with \"NAME=VALUE ...\"]... [-v]\n"

/* --seed's value: a decimal integer, 0 to 2^64 - 1 */
static int parse_seed(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-') {
		fprintf(stderr, "test_ops: --seed '%s': expected an integer from 0 to 18446744073709551615\n", s);
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

/* A failed case is a failed check, reported as it happens (ctx: the --with configuration, or NULL). */
static void on_case(const op_case_result *r, void *ctx)
{
	if (r->outcome == OP_CASE_FAIL) {
		fprintf(stderr, "test_ops: check failed%s%s%s: %s\n", ctx ? " (with " : "", ctx ? (const char *)ctx : "",
			ctx ? ")" : "", r->message);
		t_failures++;
	}
}

/* cases of the op named by name[0, n) in the tally, over dtypes and outcomes */
static int cases_of(int tally[CLG_OP_COUNT][3][3], const char *name, size_t n)
{
	int sum = 0;

	for (int op = 0; op < CLG_OP_COUNT; op++)
		if (strlen(clg_op_name((clg_op)op)) == n && !strncmp(clg_op_name((clg_op)op), name, n))
			for (int h = 0; h < 3; h++)
				sum += tally[op][h][0] + tally[op][h][1] + tally[op][h][2];
	return sum;
}

int main(int argc, char **argv)
{
	const char *dev_filter = NULL;
	op_suite_opts opts = {.on_case = on_case};
	int ndev, tested_devices = 0;
	const clg_device_info *list;
	clg_backend *ref = NULL;
	int tally[CLG_OP_COUNT][3][3] = {{{0}}}; /* [op][float32, float16, bfloat16]: pass, fail, unsupported; summed over devices */
	int total_pass = 0, total_fail = 0, total_unsup = 0, nwith = 0;
	const char *with[MAX_WITH];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--op") && i + 1 < argc)
			opts.op = argv[++i];
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			dev_filter = argv[++i];
		else if (!strcmp(argv[i], "--small"))
			opts.small = 1;
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			if (parse_seed(argv[++i], &opts.seed))
				return 2;
		}
		else if (!strcmp(argv[i], "--with") && i + 1 < argc && nwith < MAX_WITH)
			with[nwith++] = argv[++i];
		else if (!strcmp(argv[i], "-v"))
			opts.verbose = 1;
		else {
			fprintf(stderr, USAGE);
			return 2;
		}
	}
	if (opts.seed)
		printf("seed %llu\n", (unsigned long long)opts.seed);
	t_require_opencl();
	CHECK(op_suite_case_count() > 0, "op suite: no cases (%s)", clg_last_error());
	CHECK_OK(clg_devices(&list, &ndev));
	CHECK_OK(clg_backend_open(0, &ref));
	if (!ref)
		return t_finish("test_ops");

	for (int w = 0; w < (nwith ? nwith : 1); w++) {
		t_with_saved saved = {0};
		if (nwith) {
			if (t_with_apply(with[w], &saved)) {
				t_failures++;
				continue;
			}
			printf("with %s\n", with[w]);
			opts.ctx = (void *)with[w];
		}
		for (int di = 1; di < ndev; di++) {
			clg_backend *be = NULL;
			op_suite_report rep;
			if (dev_filter && !strstr(list[di].name, dev_filter) && !strstr(list[di].platform, dev_filter))
				continue;
			CHECK_OK(clg_backend_open(di, &be));
			if (!be)
				continue;
			tested_devices++;
			printf("device %d: %s (%s)\n", di, list[di].name, list[di].platform);
			fflush(stdout);
			CHECK_OK(op_suite_run(ref, be, &opts, &rep));
			for (int i = 0; i < rep.nops; i++) {
				int *tl = tally[rep.ops[i].opcode][rep.ops[i].f16];
				tl[0] += rep.ops[i].pass;
				tl[1] += rep.ops[i].fail;
				tl[2] += rep.ops[i].unsupported;
			}
			if (nwith)
				printf("with %s: %d passed, %d failed, %d unsupported\n", with[w], rep.pass, rep.fail, rep.unsupported);
			op_suite_report_free(&rep);
			clg_backend_close(be);
		}
		t_with_restore(&saved);
	}
	CHECK(tested_devices > 0, "no device matched --device %s", dev_filter ? dev_filter : "(none)");

	printf("\nop suite tally (cases x devices): %-26s %6s %6s %12s\n", "op", "pass", "fail", "unsupported");
	for (int h = 0; h < 3; h++) {
		for (int op = 0; op < CLG_OP_COUNT; op++) {
			const int *tl = tally[op][h];
			char label[64];
			if (!tl[0] && !tl[1] && !tl[2])
				continue;
			snprintf(label, sizeof(label), "%s%s", clg_op_name((clg_op)op), h == 1 ? " f16" : h == 2 ? " bf16" : "");
			printf("%-34s %-26s %6d %6d %12d\n", "", label, tl[0], tl[1], tl[2]);
			total_pass += tl[0];
			total_fail += tl[1];
			total_unsup += tl[2];
		}
	}
	printf("op cases: %d passed, %d failed, %d unsupported on %d device(s)%s\n", total_pass, total_fail, total_unsup,
	       tested_devices, nwith > 1 ? " (devices counted once per --with)" : "");
	/* every op of clg_ops.def has cases (counted on the devices: each case runs on the reference too) */
	for (int op = 0; tested_devices && !opts.op && !opts.small && op < CLG_OP_COUNT; op++) {
		const char *name = clg_op_name((clg_op)op);
		CHECK(cases_of(tally, name, strlen(name)) > 0, "op %s (clg_ops.def) has no case in the op suite", name);
	}
	/* a misspelt --op (or an op whose cases all went) must not pass as "0 failed" */
	CHECK(tested_devices == 0 || total_pass + total_fail + total_unsup > 0, "--op %s%s ran no case",
	      opts.op ? opts.op : "(all)", opts.small ? " --small" : "");
	for (const char *p = opts.op; tested_devices && p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		size_t n = strcspn(p, ",");
		CHECK(cases_of(tally, p, n) > 0, "--op %.*s%s ran no case", (int)n, p, opts.small ? " --small" : "");
	}
	clg_backend_close(ref);
	return t_finish("test_ops");
}
