/* clgrad: the command-line tool. */
#include "cli.h"
#include "opts.h"

#include <clgrad.h>
#include <string.h>

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} commands[] = {
	{"devices", cmd_devices, "list every device (--json for JSON)"},
	{"train", cmd_train, "train a model (mlp, cnn, transformer, gpt, gfnet) with progress, log and checkpoints"},
	{"eval", cmd_eval, "evaluate a saved checkpoint"},
	{"generate", cmd_generate, "generate text from a language model's checkpoint (streamed; KV cache for gpt)"},
	{"tokenize", cmd_tokenize, "learn a byte-level BPE tokenizer from a text and write it to a file"},
	{"smoke", cmd_smoke, "run a small computation on a device and check it against the reference"},
	{"compare", cmd_compare, "run identical workloads on every device and report vendor maturity"},
	{"bench", cmd_bench, "benchmarks: GEMM rate, sweeps, op micro-benchmarks"},
	{"sweep", cmd_sweep, "a grid of training runs over devices, one process per run, resumable"},
	{"tune", cmd_tune, "tune GEMM for the selected device and store the result in the cache"},
	{"config", cmd_config, "every option (CLGRAD_* variables): value in force and where it came from"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: clgrad <command> [options]   (clgrad <command> --help: its options; --version)\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nenvironment: CLGRAD_DEVICE (index, ref, cpu, gpu or part of a name), CLGRAD_CACHE_DIR\n"
		   "(0 disables the kernel cache), CLGRAD_DEBUG, ...: `clgrad config` lists every option\n"
		   "(docs/ENVIRONMENT.md)\n");
}

int report_error(const char *cmd)
{
	fprintf(stderr, "clgrad %s: %s\n", cmd, clg_last_error());
	return 1;
}

int main(int argc, char **argv)
{
	cli_crash_guard();
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))
		return cli_version();
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		/* a bad CLGRAD_ variable: one line before anything runs (config lists it all the same) */
		if (commands[i].fn != cmd_config && clg_config_check()) {
			fprintf(stderr, "clgrad: %s\n", clg_last_error());
			return 2;
		}
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "clgrad: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
