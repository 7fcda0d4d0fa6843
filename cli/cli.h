/* Subcommands of the clgrad command-line tool. Each returns the process exit code. */
#ifndef CLGRAD_CLI_H
#define CLGRAD_CLI_H

#include "json_write.h"

#include <clg_backend.h>
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
int cmd_config(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);    /* cmd_tokenize.c */
int cmd_generate(int argc, char **argv);    /* cmd_generate.c */
int bench_tokenizer(int argc, char **argv); /* cmd_tokenize.c */
int bench_exchange(int argc, char **argv); /* bench_exchange.c */
/* --device SPEC of a bench subcommand (cmd_bench.c); "auto": the device with the best GEMM rate
 * on the square 512 shape. Returns a clg_status. */
int bench_select_device(const char *spec, int *idx);

/* Checks one value of a train option as `clgrad train` would (cmd_train.c): 0, or 2 after one line
 * on stderr. An option train does not know passes. */
int train_check_option(const char *cmd, const char *name, const char *value);

/* FFT conv against im2col conv (conv_fft_time.c): x (n, c, l), w (c, c, K), padding K / 2. */
typedef struct {
	int64_t n, c, l;
} conv_fft_shape;
#define CONV_FFT_SHAPE {8, 32, 1024}
#define CONV_FFT_KMIN 3
#define CONV_FFT_KMAX 31
/* Medians of reps steps (forward and backward) of each path at kernel size k, after checking
 * one against the other; 0, or -1 with the library's error (or a line on stderr) set. */
int conv_fft_time(clg_backend *be, const conv_fft_shape *sh, int64_t k, int reps, double *us_fft, double *us_im2col);
/* conv_fft_time over kernel sizes CONV_FFT_KMIN, +2, .. CONV_FFT_KMAX (at most 16) into k, us_fft,
 * us_im2col, a table row each to out (NULL: quiet); how many, or -1. */
#define CONV_FFT_NK 16
int conv_fft_sweep(clg_backend *be, int reps, FILE *out, int64_t *k, double *us_fft, double *us_im2col);
/* The smallest of the n kernel sizes k from which the FFT is faster at every larger one; 0: none. */
int conv_fft_crossover(const int64_t *k, const double *us_fft, const double *us_im2col, int n);

/* FFTW (bench_fft_fftw.c): the median seconds of reps batched single-precision transforms (C2C
 * forward, or R2C when real) of length n; -1 without FFTW at build time or on a failure. The
 * version string, or NULL without FFTW. */
int bench_fftw_time(int real, int rank, int64_t n, int64_t batch, int reps, double *median);
const char *bench_fftw_version(void);

/* n random samples in a named model's input shape (images 1x28x28 or token sequences of m's
 * vocabulary), 10 classes or the vocabulary's (cli/bench_step.c; bench step and bench train). */
clg_status bench_synthetic_data(const clg_model_config *m, int64_t n, clg_dataset *ds);
int bench_train(int argc, char **argv); /* cli/bench_train.c */

/* Prints "clgrad <cmd>: <message>" for the last library error; returns 1. */
int report_error(const char *cmd);
/* Fatal signals end the process with the library's breadcrumb on stderr and are recorded for
 * the next run (cli/crash_guard.c); no core dump unless CLGRAD_CORE_DUMP=1. */
void cli_crash_guard(void);

#endif
