/* Subcommands of the clgrad command-line tool. Each returns the process exit code. */
#ifndef CLGRAD_CLI_H
#define CLGRAD_CLI_H

#include "json_write.h"

#include <stdio.h>

int cmd_devices(int argc, char **argv);
int cmd_smoke(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int bench_exchange(int argc, char **argv); /* bench_exchange.c */
/* --device SPEC of a bench subcommand (cmd_bench.c); "auto": the device with the best GEMM rate
 * on the square 512 shape. Returns a clg_status. */
int bench_select_device(const char *spec, int *idx);

/* Checks one value of a train option as `clgrad train` would (cmd_train.c): 0, or 2 after one line
 * on stderr. An option train does not know passes. */
int train_check_option(const char *cmd, const char *name, const char *value);

/* Prints "clgrad <cmd>: <message>" for the last library error; returns 1. */
int report_error(const char *cmd);
/* Fatal signals end the process with the library's breadcrumb on stderr and are recorded for
 * the next run (cli/crash_guard.c); no core dump unless CLGRAD_CORE_DUMP=1. */
void cli_crash_guard(void);

#endif
