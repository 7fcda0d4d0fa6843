/* The strict option parser every subcommand uses (opts.h). */
#include "opts.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "clgrad %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

int cli_version(void)
{
	printf("clgrad %s\n", CLGRAD_VERSION);
	return 0;
}

const cli_opt *cli_find(const cli_opt *opts, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(opts[i].name, name))
			return &opts[i];
	return NULL;
}

/* A whole decimal integer: no leading space, nothing after it, no overflow. */
static int whole_int(const char *v, int64_t *out)
{
	char *end;
	long long x;
	if (isspace((unsigned char)v[0]))
		return -1;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (end == v || *end || errno)
		return -1;
	*out = x;
	return 0;
}

static int is_choice(const char *choices, const char *v)
{
	size_t len = strlen(v);
	for (const char *p = choices;; p += strcspn(p, "|") + 1) {
		if (strcspn(p, "|") == len && !strncmp(p, v, len))
			return 1;
		if (!p[strcspn(p, "|")])
			return 0;
	}
}

int cli_set(const char *cmd, const cli_opt *o, const char *v)
{
	int64_t i;
	double x;
	char *end;

	if (!*v)
		return cli_error(cmd, "--%s: an empty value", o->name);
	switch (o->kind) {
	case CLI_FLAG:
		return cli_error(cmd, "--%s takes no value", o->name);
	case CLI_STR:
		*o->dst.str = v;
		return 0;
	case CLI_CHOICE:
		if (!is_choice(o->choices, v))
			return cli_error(cmd, "--%s=%s: must be one of %s", o->name, v, o->choices);
		*o->dst.str = v;
		return 0;
	case CLI_I64:
	case CLI_I32:
		if (whole_int(v, &i) || i < o->min || i > o->max)
			return cli_error(cmd, "--%s=%s: must be an integer in [%" PRId64 ", %" PRId64 "]", o->name, v, o->min,
					 o->max);
		if (o->kind == CLI_I64)
			*o->dst.i64 = i;
		else
			*o->dst.i32 = (int)i;
		return 0;
	case CLI_U64: {
		unsigned long long u;
		errno = 0;
		u = isdigit((unsigned char)v[0]) ? strtoull(v, &end, 10) : 0;
		if (!isdigit((unsigned char)v[0]) || *end || errno)
			return cli_error(cmd, "--%s=%s: must be an integer in [0, %" PRIu64 "]", o->name, v, UINT64_MAX);
		*o->dst.u64 = u;
		return 0;
	}
	case CLI_REAL:
		errno = 0;
		x = isspace((unsigned char)v[0]) ? NAN : strtod(v, &end);
		if (isspace((unsigned char)v[0]) || *end || errno == ERANGE || !isfinite(x) || x < o->lo ||
		    (o->lo_open && x == o->lo) || x > o->hi)
			return cli_error(cmd, "--%s=%s: must be a number in %c%g, %g]", o->name, v, o->lo_open ? '(' : '[',
					 o->lo, o->hi);
		*o->dst.real = x;
		return 0;
	}
	return cli_error(cmd, "--%s: bad option table", o->name);
}

int cli_parse(const cli_spec *s, int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(s->usage, stdout);
			return 0;
		}
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--version"))
			return cli_version();
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *v = NULL;
		char name[64];
		const cli_opt *o;
		size_t len;

		if (strncmp(a, "--", 2) || !a[2])
			return cli_error(s->cmd, "unexpected argument '%s' (clgrad %s --help)", a, s->cmd);
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		if (len >= sizeof(name))
			return cli_error(s->cmd, "unknown option '--%.*s' (clgrad %s --help)", (int)len, a, s->cmd);
		memcpy(name, a, len);
		name[len] = 0;
		o = cli_find(s->opts, s->n, name);
		if (o && o->kind == CLI_FLAG) {
			if (eq)
				return cli_error(s->cmd, "--%s takes no value", name);
			*o->dst.flag = 1;
			continue;
		}
		/* the value: after '=', else the next argument unless it is an option */
		if (eq)
			v = eq + 1;
		else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2))
			v = argv[++i];
		if (!o) {
			int rc;
			if (!s->other)
				return cli_error(s->cmd, "unknown option '--%s' (clgrad %s --help)", name, s->cmd);
			if ((rc = s->other(s->user, name, v)))
				return rc;
			continue;
		}
		if (!v)
			return cli_error(s->cmd, "--%s needs a value", name);
		if (cli_set(s->cmd, o, v))
			return 2;
	}
	return -1;
}
