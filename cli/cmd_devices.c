/* clgrad devices [--json]: every device and what it offers. */
#include "cli.h"
#include "device_auto.h"
#include "opts.h"

#include <clgrad.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* The jobs whose auto pick is shown: `clgrad train --model M` with the default configuration
 * (the job key holds the batch and sizes: another batch is another job, picked the same way). */
static const char *const auto_models[] = {"mlp", "cnn", "transformer"};
#define N_AUTO (sizeof(auto_models) / sizeof(auto_models[0]))

static void auto_choices(char job[][200], auto_choice *c)
{
	for (size_t m = 0; m < N_AUTO; m++) {
		clg_train_config cfg = clg_train_config_default();
		auto_job j = {.job = job[m], .unit = "samples/s"};
		cfg.model.name = auto_models[m];
		device_auto_train_job(job[m], 200, &cfg, 0);
		if (device_auto_stored(&j, &c[m]))
			snprintf(c[m].why, sizeof(c[m].why), "%s", clg_last_error());
	}
}

static void print_auto_json(void)
{
	char job[N_AUTO][200];
	auto_choice c[N_AUTO];

	auto_choices(job, c);
	printf("  \"auto\": [\n");
	for (size_t m = 0; m < N_AUTO; m++) {
		printf("    {\"model\": \"%s\", \"job\": ", auto_models[m]);
		json_string(stdout, job[m]);
		printf(", \"device\": %d, \"basis\": \"%s\", \"why\": ", c[m].index,
		       c[m].measured ? "measured" : "no measurement");
		json_string(stdout, c[m].why);
		printf(", \"samples_per_s\": {");
		for (int k = 0, sep = 0; k < c[m].n; k++)
			if (isfinite(c[m].rate[k]))
				printf("%s\"%d\": %.6g", sep++ ? ", " : "", c[m].dev[k], c[m].rate[k]);
		printf("}}%s\n", m + 1 < N_AUTO ? "," : "");
	}
	printf("  ],\n");
}

static void print_json(const clg_device_info *list, int n, int selected)
{
	printf("{\n  \"schema\": 1,\n  \"default\": %d,\n", selected);
	/* what train, eval and bench use when no device is named: per job */
	print_auto_json();
	printf("  \"devices\": [\n");
	for (int i = 0; i < n; i++) {
		const clg_device_info *d = &list[i];
		printf("    {\"index\": %d, \"type\": ", d->index);
		json_string(stdout, clg_device_type_name(d->type));
		printf(", \"platform\": ");
		json_string(stdout, d->platform);
		printf(", \"platform_version\": ");
		json_string(stdout, d->platform_version);
		printf(", \"platform_vendor\": ");
		json_string(stdout, d->platform_vendor);
		printf(", \"vendor\": ");
		json_string(stdout, d->vendor);
		printf(", \"name\": ");
		json_string(stdout, d->name);
		printf(", \"opencl_version\": ");
		json_string(stdout, d->cl_version);
		printf(", \"opencl_c_version\": ");
		json_string(stdout, d->clc_version);
		printf(", \"driver_version\": ");
		json_string(stdout, d->driver_version);
		printf(", \"compute_units\": %u, \"clock_mhz\": %u, \"global_mem_bytes\": %llu, "
		       "\"local_mem_bytes\": %llu, \"max_alloc_bytes\": %llu, \"max_work_group_size\": %llu, "
		       "\"timer_resolution_ns\": %llu, ",
		       d->compute_units, d->clock_mhz, (unsigned long long)d->global_mem,
		       (unsigned long long)d->local_mem, (unsigned long long)d->max_alloc,
		       (unsigned long long)d->max_wg_size, (unsigned long long)d->timer_resolution_ns);
		printf("\"fp16_path\": \"%s\", \"fp16_off_why\": ", clg_half_native(d) ? "native" : "storage only");
		json_string(stdout, d->half_off);
		printf(", ");
		printf("\"fp16\": %s, \"fp64\": %s, \"subgroups\": %s, \"integer_dot_product\": %s, \"il\": %s, \"il_version\": ",
		       d->has_fp16 ? "true" : "false", d->has_fp64 ? "true" : "false",
		       d->has_subgroups ? "true" : "false", d->has_int_dot ? "true" : "false",
		       d->has_il ? "true" : "false");
		json_string(stdout, d->il_version);
		printf(", \"crashed\": ");
		if (d->crashed[0])
			json_string(stdout, d->crashed);
		else
			printf("null");
		printf(", \"extensions\": [");
		for (const char *e = d->extensions, *sep = ""; *e; sep = ", ") {
			char one[128];
			size_t len = strcspn(e, " ");
			snprintf(one, sizeof(one), "%.*s", (int)len, e);
			printf("%s", sep);
			json_string(stdout, one);
			e += len + (e[len] == ' ');
		}
		printf("]}%s\n", i + 1 < n ? "," : "");
	}
	printf("  ]\n}\n");
}

static void mib(char *buf, size_t len, uint64_t bytes)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1ull << 30));
	else if (bytes >= (1ull << 20))
		snprintf(buf, len, "%.0f MiB", (double)bytes / (1ull << 20));
	else
		snprintf(buf, len, "%.0f KiB", (double)bytes / 1024);
}

/* "    extensions (N): a b c ..." wrapped at 100 columns */
static void print_extensions(const char *ext)
{
	int n = 0, col;

	for (const char *e = ext; *e; e++)
		n += (e == ext || e[-1] == ' ') && *e != ' ';
	col = printf("    extensions (%d):", n);
	while (*ext) {
		int len = (int)strcspn(ext, " ");
		if (col + 1 + len > 100 && col > 8)
			col = printf("\n     ") - 1;
		col += printf(" %.*s", len, ext);
		ext += len + (ext[len] == ' ');
	}
	printf("\n");
}

static void print_table(const clg_device_info *list, int n, int selected)
{
	printf("%-3s %-4s %-28s %-34s %-6s %-5s %-10s %-10s %-10s %s\n", "idx", "type", "platform", "device",
	       "CUs", "MHz", "global", "max alloc", "local", "features");
	for (int i = 0; i < n; i++) {
		const clg_device_info *d = &list[i];
		char g[32], a[32], l[32], feat[96];
		if (d->type == CLG_DEV_REF) {
			snprintf(g, sizeof(g), "host");
			snprintf(a, sizeof(a), "host");
			snprintf(l, sizeof(l), "-");
		} else {
			mib(g, sizeof(g), d->global_mem);
			mib(a, sizeof(a), d->max_alloc);
			mib(l, sizeof(l), d->local_mem);
		}
		snprintf(feat, sizeof(feat), "%s%s%s%s%s", d->has_fp16 ? "fp16 " : "", d->has_fp64 ? "fp64 " : "",
			 d->has_subgroups ? "subgroups " : "", d->has_int_dot ? "intdot " : "", d->has_il ? "il " : "");
		printf("%c%-2d %-4s %-28.28s %-34.34s %-6u %-5u %-10s %-10s %-10s %s\n", i == selected ? '*' : ' ',
		       d->index, clg_device_type_name(d->type), d->platform, d->name, d->compute_units, d->clock_mhz,
		       g, a, l, feat);
		if (d->type != CLG_DEV_REF) {
			/* two stacks on one chip (PoCL and Intel on a CPU) differ only in these lines */
			printf("    platform %s \u00b7 %s \u00b7 %s\n", d->platform, d->platform_vendor, d->platform_version);
			printf("    device vendor %s \u00b7 %s \u00b7 %s \u00b7 driver %s \u00b7 timer %llu ns \u00b7 fp16: %s%s%s\n",
			       d->vendor, d->cl_version, d->clc_version, d->driver_version,
			       (unsigned long long)d->timer_resolution_ns, clg_half_native(d) ? "native" : "storage only",
			       d->has_fp16 && d->half_off[0] ? ", native half off by the last self-test: " : "", d->half_off);
			print_extensions(d->extensions);
			if (d->crashed[0])
				printf("    CRASHED clgrad in an earlier run: %s; not used unless CLGRAD_FORCE_DEVICE=1\n",
				       d->crashed);
		}
	}
	printf("* default device (CLGRAD_DEVICE selects another)\n");
}

static void print_auto_table(const clg_device_info *list)
{
	char job[N_AUTO][200];
	auto_choice c[N_AUTO];

	auto_choices(job, c);
	printf("auto: the device train, eval and bench use when none is named (--device auto measures the\n"
	       "figures that are missing and stores them in auto-device.txt in the cache folder):\n");
	for (size_t m = 0; m < N_AUTO; m++)
		printf("  %-42s device %d (%s): %s\n", job[m], c[m].index, c[m].index >= 0 ? list[c[m].index].name : "?",
		       c[m].why);
}

/* Intel's CPU runtime that scripts/setup.sh fetched is not registered with the ICD loader (the tests
 * add it with OCL_ICD_VENDORS; registering it for everyone would put a third device in every
 * test): say in one line how to use it, when it is there and not in the list. */
static void hint_unregistered_intel(const clg_device_info *list, int n)
{
	const char *dir = clg_cfg_str(CLG_CFG_INTEL_OCL_DIR), *xdg = clg_config_foreign("XDG_CACHE_HOME"),
		   *home = clg_config_foreign("HOME");
	char path[1024], icd[1100];

	for (int i = 0; i < n; i++)
		if (strstr(list[i].platform, "Intel"))
			return;
	if (dir && *dir)
		snprintf(path, sizeof(path), "%s", dir);
	else if (xdg && *xdg)
		snprintf(path, sizeof(path), "%s/clgrad/intel-ocl", xdg);
	else if (home && *home)
		snprintf(path, sizeof(path), "%s/.cache/clgrad/intel-ocl", home);
	else
		return;
	snprintf(icd, sizeof(icd), "%s/icd/intel.icd", path);
	if (access(icd, R_OK) == 0)
		printf("Intel's OpenCL CPU runtime is installed (scripts/setup.sh) but not registered; to use it:\n"
		       "  export OCL_ICD_VENDORS=%s/icd   (it lists the system's runtimes too)\n", path);
}

int cmd_devices(int argc, char **argv)
{
	const clg_device_info *list;
	int n, selected, json = 0, rc;
	const cli_opt opts[] = {CLI_OPT_FLAG("json", &json)};
	cli_spec cs = {.cmd = "devices", .usage = "usage: clgrad devices [--json]\n", .opts = opts, .n = CLI_N(opts)};

	if ((rc = cli_parse(&cs, argc, argv)) >= 0)
		return rc;
	if (clg_devices(&list, &n))
		return report_error("devices");
	if (clg_device_select(NULL, &selected))
		return report_error("devices");
	if (json)
		print_json(list, n, selected);
	else {
		print_table(list, n, selected);
		print_auto_table(list);
		hint_unregistered_intel(list, n);
	}
	return 0;
}
