/* The one module that reads the environment: every option of clg_options.def, parsed once from
 * CLGRAD_<NAME> at the first read, then changed only by clg_config_set. */
#include "clg_config.h"
#include "clg_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PREFIX "CLGRAD_"

static const clg_option_info table[CLG_CFG_COUNT] = {
#define CLG_OPTION(id, name, type, def, lo, hi, choices, scope, doc) \
	{name, def, choices, doc, CLG_CFGTYPE_##type, CLG_SCOPE_##scope, (int64_t)(lo), (int64_t)(hi)},
#include "clg_options.def"
#undef CLG_OPTION
};

/* The value in force: text always (canonical for BOOL and INT), num for BOOL, INT and CHOICE (the
 * choice's index). */
typedef struct {
	const char *text;
	int64_t num;
	clg_cfg_source source;
} slot;

/* Every text copied in (from the environment or a set) stays allocated for the life of the process
 * (a reader on another thread may still hold one a set replaced); the list keeps them reachable. A
 * program sets a handful of options: this stays small. */
typedef struct old_text {
	struct old_text *next;
	char text[];
} old_text;

static slot vals[CLG_CFG_COUNT];
static old_text *retired;
static char env_errors[2048];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;

/* A copy of s kept on the list, or NULL when out of memory. */
static const char *keep_copy(const char *s)
{
	old_text *c = malloc(sizeof(*c) + strlen(s) + 1);

	if (!c)
		return NULL;
	strcpy(c->text, s);
	pthread_mutex_lock(&set_lock);
	c->next = retired;
	retired = c;
	pthread_mutex_unlock(&set_lock);
	return c->text;
}

int clg_config_test_hooks(void)
{
#ifdef CLGRAD_TEST_HOOKS
	return 1;
#else
	return 0;
#endif
}

/* The index of `text` in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *text)
{
	size_t n = strlen(text);
	int i = 0;

	for (const char *p = choices; *p; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, text, n))
			return i;
		if (!bar)
			break;
		p = bar + 1;
	}
	return -1;
}

static int parse_bool(const char *s, int64_t *out)
{
	static const char *yes[] = {"1", "true", "yes", "on"}, *no[] = {"0", "false", "no", "off"};
	for (int i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i]) || !strcasecmp(s, no[i])) {
			*out = !strcasecmp(s, yes[i]);
			return 1;
		}
	}
	return 0;
}

void clg_config_accepts(clg_cfg o, int terse, char *buf, size_t len)
{
	const clg_option_info *in = clg_config_info(o);
	size_t at = 0;

	if (!in || len < 8) {
		if (len)
			buf[0] = 0;
		return;
	}
	switch (in->type) {
	case CLG_CFGTYPE_BOOL:
		snprintf(buf, len, terse ? "0 or 1" : "0 or 1 (false/true, no/yes, off/on)");
		break;
	case CLG_CFGTYPE_INT:
		snprintf(buf, len, terse ? "%lld..%lld" : "an integer in %lld..%lld", (long long)in->lo, (long long)in->hi);
		break;
	case CLG_CFGTYPE_CHOICE:
		at = (size_t)snprintf(buf, len, "%s", terse ? "" : "one of ");
		for (const char *p = in->choices; *p && at + 3 < len; p++)
			at += (size_t)snprintf(buf + at, len - at, *p == '|' ? ", " : "%c", *p);
		break;
	case CLG_CFGTYPE_STR:
		snprintf(buf, len, "text");
		break;
	}
}

/* Parses text for option o into *v (text not copied: the callers copy it, but for a bool's "0" or
 * "1"). 0 with why filled when it is not accepted. */
static int parse(clg_cfg o, const char *text, slot *v, char *why, size_t why_len)
{
	const clg_option_info *in = &table[o];
	char ok[256];
	char *end;

	v->text = text;
	v->num = 0;
	switch (in->type) {
	case CLG_CFGTYPE_BOOL:
		if (parse_bool(text, &v->num)) {
			v->text = v->num ? "1" : "0";
			return 1;
		}
		break;
	case CLG_CFGTYPE_INT:
		errno = 0;
		v->num = strtoll(text, &end, 10);
		if (*text && !*end && !errno && v->num >= in->lo && v->num <= in->hi)
			return 1;
		break;
	case CLG_CFGTYPE_CHOICE:
		v->num = choice_index(in->choices, text);
		if (v->num >= 0)
			return 1;
		break;
	case CLG_CFGTYPE_STR:
		return 1;
	}
	clg_config_accepts(o, 0, ok, sizeof(ok));
	snprintf(why, why_len, PREFIX "%s='%s': expected %s", in->name, text, ok);
	return 0;
}

static void init(void)
{
	char why[512];

	for (int o = 0; o < CLG_CFG_COUNT; o++) {
		const clg_option_info *in = &table[o];
		char name[96];
		const char *e;
		slot v;

		if (!parse((clg_cfg)o, in->default_value, &vals[o], why, sizeof(why)))
			vals[o].text = ""; /* a table error: tests/test_config.c checks every default parses */
		vals[o].source = CLG_SOURCE_DEFAULT;
		snprintf(name, sizeof(name), PREFIX "%s", in->name);
		e = getenv(name);
		if (!e || in->scope == CLG_SCOPE_SCRIPT || (in->scope == CLG_SCOPE_TEST && !clg_config_test_hooks()))
			continue;
		if (!*e && in->type != CLG_CFGTYPE_STR)
			continue; /* NAME= reads as unset, as it always did */
		if (parse((clg_cfg)o, e, &v, why, sizeof(why))) {
			/* a copy: the environment's own string may go with a later setenv (a bool's text is
			 * "0" or "1", literals) */
			if (in->type != CLG_CFGTYPE_BOOL && !(v.text = keep_copy(e)))
				v.text = "";
			v.source = CLG_SOURCE_ENV;
			vals[o] = v;
			continue;
		}
		/* not accepted: the default stays, and clg_config_check says why */
		size_t at = strlen(env_errors);
		snprintf(env_errors + at, sizeof(env_errors) - at, "%s%s", at ? "; " : "", why);
	}
}

static const slot *get(clg_cfg o)
{
	pthread_once(&once, init);
	return &vals[(unsigned)o < CLG_CFG_COUNT ? o : 0];
}

int clg_cfg_bool(clg_cfg o) { return get(o)->num != 0; }
int64_t clg_cfg_int(clg_cfg o) { return get(o)->num; }
const char *clg_cfg_str(clg_cfg o) { return get(o)->text; }

int clg_cfg_is(clg_cfg o, const char *choice)
{
	return !strcmp(get(o)->text, choice);
}

int clg_config_find(const char *name)
{
	if (!name)
		return -1;
	if (!strncasecmp(name, PREFIX, strlen(PREFIX)))
		name += strlen(PREFIX);
	for (int o = 0; o < CLG_CFG_COUNT; o++)
		if (!strcasecmp(name, table[o].name))
			return o;
	return -1;
}

const clg_option_info *clg_config_info(clg_cfg o) { return (unsigned)o < CLG_CFG_COUNT ? &table[o] : NULL; }
clg_cfg_source clg_config_source(clg_cfg o) { return get(o)->source; }

const char *clg_config_get(const char *name)
{
	int o = clg_config_find(name);
	return o < 0 ? NULL : get((clg_cfg)o)->text;
}

const char *clg_config_type_name(clg_cfg_type t)
{
	static const char *names[] = {"bool", "int", "choice", "text"};
	return (unsigned)t < 4 ? names[t] : "?";
}

const char *clg_config_scope_name(clg_cfg_scope s)
{
	static const char *names[] = {"library", "command", "bench", "test hook", "scripts"};
	return (unsigned)s < 5 ? names[s] : "?";
}

clg_status clg_config_set(const char *name, const char *value)
{
	int o = clg_config_find(name);
	const clg_option_info *in;
	char why[512];
	slot v;

	if (o < 0)
		return clg_fail(CLG_ERR_INVALID, "config: no option '%s' (`clgrad config` lists them; docs/ENVIRONMENT.md)",
				name ? name : "(null)");
	in = &table[o];
	if (in->scope == CLG_SCOPE_SCRIPT)
		return clg_fail(CLG_ERR_INVALID, "config: " PREFIX "%s is read by the scripts alone, not by a program", in->name);
	if (in->scope == CLG_SCOPE_TEST && !clg_config_test_hooks())
		return clg_fail(CLG_ERR_UNSUPPORTED, "config: " PREFIX "%s is a test hook, and this build has CLGRAD_TEST_HOOKS off",
				in->name);
	get((clg_cfg)o);
	if (!value)
		value = in->default_value;
	if (!parse((clg_cfg)o, value, &v, why, sizeof(why)))
		return clg_fail(CLG_ERR_INVALID, "config: %s", why);
	/* the caller's text may not outlive the call */
	if (in->type != CLG_CFGTYPE_BOOL && !(v.text = keep_copy(value)))
		return clg_fail(CLG_ERR_OOM, "config: out of host memory for " PREFIX "%s", in->name);
	v.source = value == in->default_value ? CLG_SOURCE_DEFAULT : CLG_SOURCE_SET;
	pthread_mutex_lock(&set_lock);
	vals[o] = v;
	pthread_mutex_unlock(&set_lock);
	return CLG_OK;
}

clg_status clg_config_check(void)
{
	pthread_once(&once, init);
	if (!env_errors[0])
		return CLG_OK;
	return clg_fail(CLG_ERR_INVALID, "environment: %s (docs/ENVIRONMENT.md)", env_errors);
}

const char *clg_config_foreign(const char *name)
{
	static const char *known[] = {"HOME", "XDG_CACHE_HOME", "POCL_KERNEL_CACHE", "CUDA_CACHE_DISABLE",
				      "OPENBLAS_NUM_THREADS", "TMPDIR"};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (name && !strcmp(name, known[i]))
			return getenv(name);
	return NULL;
}
