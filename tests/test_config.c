/* The configuration module (backend/config.c): every default of the table parses, set/get round
 * trips, bad values are refused with the option and what it accepts (the value in force stays),
 * NULL puts the default back, names are found with and without the prefix, and a bad environment
 * variable is reported by clg_config_check and refused by device opens. Runs on the reference. */
#include "test_util.h"

#include <clgrad.h>
#include <stdlib.h>
#include <string.h>

static void check_table(void)
{
	for (int o = 0; o < CLG_CFG_COUNT; o++) {
		const clg_option_info *in = clg_config_info((clg_cfg)o);
		if (in->scope == CLG_SCOPE_SCRIPT || in->scope == CLG_SCOPE_TEST)
			continue;
		/* the default is accepted and reads back as written (the table's defaults are canonical) */
		CHECK(clg_config_set(in->name, in->default_value) == CLG_OK, "CLGRAD_%s: default '%s' refused: %s", in->name,
		      in->default_value, clg_last_error());
		CHECK(!strcmp(clg_cfg_str((clg_cfg)o), in->default_value), "CLGRAD_%s: default '%s' reads '%s'", in->name,
		      in->default_value, clg_cfg_str((clg_cfg)o));
		CHECK(in->doc && strlen(in->doc) > 10, "CLGRAD_%s has no doc line", in->name);
		CHECK(clg_config_find(in->name) == o, "CLGRAD_%s not found by its name", in->name);
	}
}

static void check_set_get(void)
{
	CHECK(clg_config_set("gemm", "own") == CLG_OK && clg_cfg_is(CLG_CFG_GEMM, "own"), "gemm=own: %s", clg_last_error());
	CHECK(!strcmp(clg_config_get("CLGRAD_GEMM"), "own"), "get CLGRAD_GEMM: %s", clg_config_get("CLGRAD_GEMM"));
	CHECK(clg_config_source(CLG_CFG_GEMM) == CLG_SOURCE_SET, "source of a set option: %d", clg_config_source(CLG_CFG_GEMM));
	/* refused: the message names the variable, the value and the choices; the value stays */
	CHECK(clg_config_set("GEMM", "cublas") == CLG_ERR_INVALID && strstr(clg_last_error(), "CLGRAD_GEMM='cublas'") &&
		      strstr(clg_last_error(), "auto, own, clblast") && clg_cfg_is(CLG_CFG_GEMM, "own"),
	      "gemm=cublas: %s", clg_last_error());
	CHECK(clg_config_set("GEMM", NULL) == CLG_OK && clg_cfg_is(CLG_CFG_GEMM, "auto") &&
		      clg_config_source(CLG_CFG_GEMM) == CLG_SOURCE_DEFAULT,
	      "gemm back to default: %s", clg_config_get("GEMM"));
	/* integers: whole, in range */
	CHECK(clg_config_set("GEMM_SPLIT", "8") == CLG_OK && clg_cfg_int(CLG_CFG_GEMM_SPLIT) == 8, "split 8");
	CHECK(clg_config_set("GEMM_SPLIT", "65") == CLG_ERR_INVALID && strstr(clg_last_error(), "0..64") &&
		      clg_cfg_int(CLG_CFG_GEMM_SPLIT) == 8,
	      "split 65: %s", clg_last_error());
	CHECK(clg_config_set("GEMM_SPLIT", "8x") == CLG_ERR_INVALID, "split 8x accepted");
	CHECK(clg_config_set("GEMM_SPLIT", "") == CLG_ERR_INVALID, "split '' accepted");
	clg_config_set("GEMM_SPLIT", NULL);
	/* booleans in their usual spellings, canonical text */
	CHECK(clg_config_set("FUSED", "off") == CLG_OK && !clg_cfg_bool(CLG_CFG_FUSED) && !strcmp(clg_cfg_str(CLG_CFG_FUSED), "0"),
	      "fused=off");
	CHECK(clg_config_set("FUSED", "2") == CLG_ERR_INVALID && strstr(clg_last_error(), "0 or 1"), "fused=2: %s",
	      clg_last_error());
	clg_config_set("FUSED", NULL);
	CHECK(clg_cfg_bool(CLG_CFG_FUSED), "fused default");
	/* text is copied */
	{
		char buf[32] = "/tmp/clgrad-config-test";
		CHECK(clg_config_set("KERNEL_DIR", buf) == CLG_OK, "kernel_dir");
		buf[0] = 'X';
		CHECK(!strcmp(clg_cfg_str(CLG_CFG_KERNEL_DIR), "/tmp/clgrad-config-test"), "kernel_dir not copied: %s",
		      clg_cfg_str(CLG_CFG_KERNEL_DIR));
		clg_config_set("KERNEL_DIR", NULL);
		CHECK(!strcmp(clg_cfg_str(CLG_CFG_KERNEL_DIR), ""), "kernel_dir default");
		/* an integer's and a choice's text too (the Python binding passes a temporary) */
		snprintf(buf, sizeof(buf), "12");
		CHECK(clg_config_set("GEMM_SPLIT", buf) == CLG_OK, "split 12");
		snprintf(buf, sizeof(buf), "own");
		CHECK(clg_config_set("GEMM", buf) == CLG_OK, "gemm own");
		memset(buf, 'X', sizeof(buf) - 1);
		CHECK(!strcmp(clg_cfg_str(CLG_CFG_GEMM_SPLIT), "12") && clg_cfg_int(CLG_CFG_GEMM_SPLIT) == 12 &&
			      clg_cfg_is(CLG_CFG_GEMM, "own"),
		      "int and choice texts not copied: '%s' '%s'", clg_cfg_str(CLG_CFG_GEMM_SPLIT), clg_cfg_str(CLG_CFG_GEMM));
		clg_config_set("GEMM_SPLIT", NULL);
		clg_config_set("GEMM", NULL);
	}
	CHECK(clg_config_set("NO_SUCH_OPTION", "1") == CLG_ERR_INVALID && strstr(clg_last_error(), "NO_SUCH_OPTION"),
	      "unknown option: %s", clg_last_error());
	CHECK(clg_config_get("NO_SUCH_OPTION") == NULL, "get of an unknown option");
	CHECK(clg_config_set("SKIP_INTEL", "1") == CLG_ERR_INVALID && strstr(clg_last_error(), "scripts"),
	      "a script variable set: %s", clg_last_error());
	CHECK(clg_config_set("TEST_CRASH", "") == (clg_config_test_hooks() ? CLG_OK : CLG_ERR_UNSUPPORTED),
	      "test hook: %s", clg_last_error());
}

int main(int argc, char **argv)
{
	clg_backend *be = NULL;

	/* --bad-env: run with CLGRAD_GEMM=cublas CLGRAD_GEMM_SPLIT=99 (tests/CMakeLists.txt) */
	if (argc == 2 && !strcmp(argv[1], "--bad-env")) {
		CHECK(clg_config_check() == CLG_ERR_INVALID && strstr(clg_last_error(), "CLGRAD_GEMM='cublas'") &&
			      strstr(clg_last_error(), "CLGRAD_GEMM_SPLIT='99'") && strstr(clg_last_error(), "0..64"),
		      "check: %s", clg_last_error());
		CHECK(clg_cfg_is(CLG_CFG_GEMM, "auto"), "a refused variable keeps the default: %s", clg_cfg_str(CLG_CFG_GEMM));
		CHECK(clg_backend_open(0, &be) == CLG_ERR_INVALID && !be && strstr(clg_last_error(), "CLGRAD_GEMM"),
		      "open with a bad environment: %s", clg_last_error());
		return t_finish("test_config --bad-env");
	}
	CHECK(getenv("CLGRAD_GEMM") == NULL || clg_config_source(CLG_CFG_GEMM) == CLG_SOURCE_ENV, "env source");
	CHECK_OK(clg_config_check());
	check_table();
	check_set_get();
	CHECK_OK(clg_backend_open(0, &be));
	clg_backend_close(be);
	return t_finish("test_config");
}
