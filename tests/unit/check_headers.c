/*
 * Built twice, as -std=c99 and -std=c11 with -pedantic-errors, together
 * with one translation unit per public header: passing means the headers
 * are self-contained and strict-C clean in both modes.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <nvmefs/nvmefs.h>

int headers_nvmefs_version(void);
size_t headers_wire_sqe_size(void);
size_t headers_wire_rdma_cm_size(void);
size_t headers_wire_tcp_pdu_size(void);

int main(void)
{
	char v[32];

	/* The header's version is typed by hand; keep it in step with configure. */
	if (strcmp(NVMEFS_VERSION, PACKAGE_VERSION) != 0) {
		fprintf(stderr, "NVMEFS_VERSION %s != PACKAGE_VERSION %s\n",
			NVMEFS_VERSION, PACKAGE_VERSION);
		return 1;
	}
	snprintf(v, sizeof(v), "%d.%d", headers_nvmefs_version() >> 16,
		 (headers_nvmefs_version() >> 8) & 0xff);
	if (strcmp(v, NVMEFS_VERSION) != 0) {
		fprintf(stderr, "NVMEFS_VERSION_NUMBER says %s, NVMEFS_VERSION %s\n",
			v, NVMEFS_VERSION);
		return 1;
	}
	if (headers_wire_sqe_size() != 64 + 16 || headers_wire_rdma_cm_size() != 32 + 32 ||
	    headers_wire_tcp_pdu_size() != 128 + 72 + 24) {
		fprintf(stderr, "wire sizes differ in this language mode\n");
		return 1;
	}
	return 0;
}
