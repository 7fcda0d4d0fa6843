/* Subcommands of the clgrad command-line tool. Each returns the process exit code. */
#ifndef CLGRAD_CLI_H
#define CLGRAD_CLI_H

#include "json_write.h"

#include <clgrad_models.h>
#include <data.h>

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

/* n random samples in a named model's input shape (images 1x28x28 or token sequences of m's
 * vocabulary), 10 classes or the vocabulary's (cli/bench_step.c; bench step and bench train). */
clg_status bench_synthetic_data(const clg_model_config *m, int64_t n, clg_dataset *ds);
int bench_train(int argc, char **argv); /* cli/bench_train.c */

/* Prints "clgrad <cmd>: <message>" for the last library error; returns 1. */
int report_error(const char *cmd);

#endif
