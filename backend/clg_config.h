/* clgrad's options: one table (clg_options.def), parsed once from the environment (CLGRAD_<NAME>)
 * and settable in a running program. The library reads options only through this header; a read is
 * an array load, cheap enough for a hot path. */
#ifndef CLG_CONFIG_H
#define CLG_CONFIG_H

#include "clg_backend.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
#define CLG_OPTION(id, name, type, def, lo, hi, choices, scope, doc) CLG_CFG_##id,
#include "clg_options.def"
#undef CLG_OPTION
	CLG_CFG_COUNT
} clg_cfg;

typedef enum { CLG_CFGTYPE_BOOL, CLG_CFGTYPE_INT, CLG_CFGTYPE_CHOICE, CLG_CFGTYPE_STR } clg_cfg_type;
typedef enum { CLG_SCOPE_LIB, CLG_SCOPE_CLI, CLG_SCOPE_BENCH, CLG_SCOPE_TEST, CLG_SCOPE_SCRIPT } clg_cfg_scope;
typedef enum { CLG_SOURCE_DEFAULT, CLG_SOURCE_ENV, CLG_SOURCE_SET } clg_cfg_source;

/* One row of the table. name without the CLGRAD_ prefix; choices "a|b|c" (CHOICE only). */
typedef struct {
	const char *name, *default_value, *choices, *doc;
	clg_cfg_type type;
	clg_cfg_scope scope;
	int64_t lo, hi; /* INT only */
} clg_option_info;

/* ---- for programs (the CLI, tests, the Python binding) ---- */

/* Sets option `name` (`GEMM` or `CLGRAD_GEMM`, any case) to `value`, checked against its type and
 * range; NULL puts the default back. CLG_ERR_INVALID names the option and what it accepts, and the
 * value in force stays. Options read at a device's open (KERNEL_SHAPE, SUBGROUPS, SELFTEST...)
 * apply to devices opened after the call; the others to the next op. Set options from one thread,
 * between ops. */
clg_status clg_config_set(const char *name, const char *value);
/* The value in force as text ("" for an empty STR), or NULL for an unknown name. */
const char *clg_config_get(const char *name);
/* The option's index (a clg_cfg), or -1 for an unknown name. */
int clg_config_find(const char *name);
const clg_option_info *clg_config_info(clg_cfg o);
clg_cfg_source clg_config_source(clg_cfg o);
const char *clg_config_type_name(clg_cfg_type t);
/* What option o accepts, in words: "an integer in 0..64", "one of auto, own, clblast"; terse (for
 * tables): "0..64", "auto, own, clblast". */
void clg_config_accepts(clg_cfg o, int terse, char *buf, size_t len);
const char *clg_config_scope_name(clg_cfg_scope s);
/* CLG_OK, or CLG_ERR_INVALID naming every CLGRAD_ variable of the environment whose value is not
 * accepted (such an option keeps its default). Devices refuse to open while this fails. */
clg_status clg_config_check(void);
/* 1 where test-hook options are honoured (a CLGRAD_TEST_HOOKS=ON build). */
int clg_config_test_hooks(void);

/* ---- for the library ---- */
int clg_cfg_bool(clg_cfg o);
int64_t clg_cfg_int(clg_cfg o);
/* The value as text: "" for an empty STR (never NULL). */
const char *clg_cfg_str(clg_cfg o);
/* CHOICE: 1 when the value in force is `choice`. */
int clg_cfg_is(clg_cfg o, const char *choice);
/* A variable of other software that clgrad consults (HOME, XDG_CACHE_HOME, POCL_KERNEL_CACHE,
 * CUDA_CACHE_DISABLE, OPENBLAS_NUM_THREADS, TMPDIR): read here too, so that one module reads the
 * environment. NULL when unset or not on that list. */
const char *clg_config_foreign(const char *name);

#endif
