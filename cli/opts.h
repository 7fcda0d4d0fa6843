/* One strict option parser for every clgrad subcommand: `--opt value` and `--opt=value`, --help,
 * --version; numbers parsed whole (strtoll/strtod), finite and in range, else ONE line on stderr
 * that names the option, the value and what is accepted, and exit status 2. */
#ifndef CLGRAD_CLI_OPTS_H
#define CLGRAD_CLI_OPTS_H

#include <stdint.h>
#include <stdio.h>

#ifndef CLGRAD_VERSION
#define CLGRAD_VERSION "unknown"
#endif

typedef enum {
	CLI_FLAG,   /* flag:   set to 1; takes no value */
	CLI_STR,    /* str:    any non-empty string */
	CLI_CHOICE, /* str:    one of .choices ("a|b|c") */
	CLI_I64,    /* i64:    integer in [min, max] */
	CLI_I32,    /* i32:    integer in [min, max] */
	CLI_U64,    /* u64:    integer in [0, UINT64_MAX], no sign */
	CLI_REAL,   /* real:   finite number in [lo, hi], lo excluded with .lo_open */
} cli_kind;

typedef struct {
	const char *name; /* without the leading "--" */
	cli_kind kind;
	union { /* typed, so that a table entry pointing at the wrong type does not compile */
		int *flag;
		const char **str;
		int64_t *i64;
		int *i32;
		uint64_t *u64;
		double *real;
	} dst;
	int64_t min, max;
	double lo, hi;
	int lo_open;
	const char *choices;
} cli_opt;

#define CLI_OPT_FLAG(n, p) {.name = (n), .kind = CLI_FLAG, .dst.flag = (p)}
#define CLI_OPT_STR(n, p) {.name = (n), .kind = CLI_STR, .dst.str = (p)}
#define CLI_OPT_CHOICE(n, p, c) {.name = (n), .kind = CLI_CHOICE, .dst.str = (p), .choices = (c)}
#define CLI_OPT_I64(n, p, a, b) {.name = (n), .kind = CLI_I64, .dst.i64 = (p), .min = (a), .max = (b)}
#define CLI_OPT_I32(n, p, a, b) {.name = (n), .kind = CLI_I32, .dst.i32 = (p), .min = (a), .max = (b)}
#define CLI_OPT_U64(n, p) {.name = (n), .kind = CLI_U64, .dst.u64 = (p)}
#define CLI_OPT_REAL(n, p, a, b) {.name = (n), .kind = CLI_REAL, .dst.real = (p), .lo = (a), .hi = (b)}
#define CLI_OPT_POS(n, p, b) {.name = (n), .kind = CLI_REAL, .dst.real = (p), .lo = 0, .hi = (b), .lo_open = 1}

typedef struct {
	const char *cmd;       /* "train", "bench gemm": every message starts "clgrad <cmd>: " */
	const char *usage;     /* printed on stdout for --help */
	const cli_opt *opts;
	int n;
	/* options not in the table (NULL: an error): value is the option's value, NULL when none was
	 * given; returns 0, or 2 after printing one line */
	int (*other)(void *user, const char *name, const char *value);
	void *user;
} cli_spec;

#define CLI_N(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* Parses argv[1..argc-1] (argv[0] names the subcommand). Returns -1 to go on; otherwise the exit
 * status: 0 after --help (usage on stdout) or --version, 2 after a bad option (one line on stderr). */
int cli_parse(const cli_spec *s, int argc, char **argv);

/* Parses one value for one option, as cli_parse would; 0, or 2 after printing the line. */
int cli_set(const char *cmd, const cli_opt *o, const char *value);

/* The option of the table with this name, or NULL. */
const cli_opt *cli_find(const cli_opt *opts, int n, const char *name);

/* "clgrad <cmd>: <message>\n" on stderr; returns 2. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "clgrad <version>" on stdout; returns 0. */
int cli_version(void);

#endif
