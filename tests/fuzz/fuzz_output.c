/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness: the text and JSON printers of what a target sends
 * (discovery log pages, Identify Controller, Namespace, descriptor and
 * namespace lists).  The first byte picks the printer and the format; the
 * rest is the page, zero-padded to its size as a read of it would be.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "../../src/cli/output.h"

#define PAGE 4096
#define DISC_MAX (1024 + 16 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *out;
	enum output_format fmt;
	size_t len;
	uint8_t *page;
	uint8_t pick;

	if (!out && !(out = fopen("/dev/null", "w")))
		abort();
	if (size < 1)
		return 0;
	pick = data[0];
	data++;
	size--;
	fmt = pick & 1 ? OUTPUT_JSON : OUTPUT_NORMAL;
	/* A discovery log is as long as its records; the rest are a page. */
	len = (pick >> 1) % 7 == 0 ? (size < 1024 ? 1024 : size > DISC_MAX ? DISC_MAX : size) : PAGE;
	page = calloc(1, len);
	if (!page)
		abort();
	memcpy(page, data, size < len ? size : len);
	switch ((pick >> 1) % 7) {
	case 0: {
		const struct nvmf_discovery_log *log = (const void *)page;
		uint64_t nrec = le64toh(log->numrec), max = (len - 1024) / 1024;

		/* As the command bounds it: by what was read. */
		nrec = nrec < max ? nrec : max;
		print_discovery_log(out, log, nrec, fmt);
		print_discovery_log_line(out, log, nrec);
		break;
	}
	case 1:
		print_id_ctrl(out, (const void *)page, fmt);
		break;
	case 2:
		print_id_ns(out, (const void *)page, pick, fmt);
		break;
	case 3:
		print_ns_descs(out, page, pick, fmt);
		break;
	case 4:
		print_id_ns_with_descs_json(out, (const void *)page, page);
		break;
	case 5:
		print_id_ns_with_descs_json(out, (const void *)page, NULL);
		break;
	default:
		print_ns_list(out, (const uint32_t *)page, fmt);
		break;
	}
	fflush(out);
	free(page);
	return 0;
}
