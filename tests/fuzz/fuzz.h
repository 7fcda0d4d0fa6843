/* Fuzz targets of the file readers (IDX, CSV, safetensors). Each fuzz_*.c defines
 * LLVMFuzzerTestOneInput: built with clang -fsanitize=fuzzer under -DCLGRAD_FUZZ=ON, or linked with
 * replay.c, which feeds it every file of a seed corpus (a ctest in every build; under
 * CLGRAD_SANITIZE=ON with ASan and UBSan). A target aborts when a reader breaks its contract:
 * a failure without a message naming the file, or a result that does not add up. */
#ifndef CLGRAD_FUZZ_H
#define CLGRAD_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as a file (a memfd, no disk): its path, /proc/self/fd/N, in path; returns the fd to
 * close, or -1. */
int fuzz_file(const void *data, size_t size, char *path, size_t len);

/* Inputs a reader accepted (the targets count them; replay prints the tally). */
extern int fuzz_accepted;

/* Aborts with a message when cond is false. */
#define FUZZ_REQUIRE(cond, ...)                                                          \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "fuzz: contract broken: %s: ", #cond);          \
			fprintf(stderr, __VA_ARGS__);                                    \
			fputc('\n', stderr);                                             \
			abort();                                                         \
		}                                                                        \
	} while (0)

#endif
