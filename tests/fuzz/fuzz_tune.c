/* Fuzz target: the tune file (clg_cl_tune_parse, backend/opencl/cl_tune_file.c) for a made-up
 * device. Input: one option byte (bit 0: put the device's header lines first; bit 1: end with the
 * right checksum line, so that the lines after the checksum are reached), then the text. */
#include "fuzz.h"

#include "cl_tune_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER "clgrad-tune 1\nplatform Fuzz\nplatform_version OpenCL 3.0\ndevice fuzzdev\ndriver 1.0\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static clg_backend be;
	static tune_data d;
	const dev_limits L = {.max_wg = 256, .max_item = {256, 256}, .local_mem = 32768, .cpu = 0};
	size_t hlen = 0, n = 0;
	char *text;
	const char *why;

	if (size < 1 || size > (1 << 16))
		return 0;
	snprintf(be.info.platform, sizeof(be.info.platform), "Fuzz");
	snprintf(be.info.platform_version, sizeof(be.info.platform_version), "OpenCL 3.0");
	snprintf(be.info.name, sizeof(be.info.name), "fuzzdev");
	snprintf(be.info.driver_version, sizeof(be.info.driver_version), "1.0");
	text = malloc(sizeof(HEADER) + size + 40);
	if (!text)
		return 0;
	if (data[0] & 1) {
		hlen = strlen(HEADER);
		memcpy(text, HEADER, hlen);
	}
	memcpy(text + hlen, data + 1, size - 1);
	n = hlen + size - 1;
	if (data[0] & 2)
		n += (size_t)sprintf(text + n, "end %016llx\n", (unsigned long long)clg_hash64(CLG_HASH_SEED, text, n));
	why = clg_cl_tune_parse(&be, text, n, &d, &L);
	if (!why) {
		FUZZ_REQUIRE(d.ne >= 0 && d.ne <= TUNE_MAX_ENTRIES, "%d entries", d.ne);
		FUZZ_REQUIRE(!d.has_xg || clg_cl_tune_xg_legal(d.xg, &L), "illegal Xgemm parameters accepted");
		FUZZ_REQUIRE(!d.has_xd || clg_cl_tune_xd_legal(d.xd, &L), "illegal XgemmDirect parameters accepted");
		fuzz_accepted++;
	}
	free(text);
	return 0;
}
