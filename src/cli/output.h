/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Printing what a controller returned, in nvme-cli 2.3's formats: `normal`
 * is what `nvme discover`, `nvme id-ctrl`, `nvme id-ns`, `nvme ns-descs`
 * and `nvme list-ns` print, `json` what they print with -o json.  The
 * formatters depend on libnvme's types and string tables only, not on the
 * nvmefs library, so they are unit-tested against nvme-cli's own output.
 *
 * 128-bit counters are grouped with the locale's thousands separator, as
 * nvme-cli does (in JSON too); in the C locale there is none.
 */
#ifndef NVMEFS_CLI_OUTPUT_H
#define NVMEFS_CLI_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <nvme/types.h>

enum output_format {
	OUTPUT_NORMAL,
	OUTPUT_JSON,
};

/* 0 and *@fmt set for "normal" or "json"; -EINVAL otherwise. */
int output_format_parse(const char *name, enum output_format *fmt);

/*
 * A discovery log with @nrec entries after its header (the caller bounds
 * it by what it holds; NUMREC from the header is what nvme-cli uses).
 */
void print_discovery_log(FILE *out, const struct nvmf_discovery_log *log,
			 uint64_t nrec, enum output_format fmt);

/*
 * The same log as the `json` format's object, but on one line ended by a
 * newline (JSON Lines, the members as `jq -c` prints them): what
 * `nvmefs discover --persistent -o json` prints for each log.
 */
void print_discovery_log_line(FILE *out, const struct nvmf_discovery_log *log,
			      uint64_t nrec);

void print_id_ctrl(FILE *out, const struct nvme_id_ctrl *id,
		   enum output_format fmt);

void print_id_ns(FILE *out, const struct nvme_id_ns *ns, uint32_t nsid,
		 enum output_format fmt);

/* @descs: the NVME_IDENTIFY_DATA_SIZE bytes of a descriptor list. */
void print_ns_descs(FILE *out, const void *descs, uint32_t nsid,
		    enum output_format fmt);

/*
 * `nvmefs identify --nsid N -o json`: the Identify Namespace object as
 * nvme-cli prints it, with the descriptor array nvme-cli's ns-descs prints
 * added as its last member "ns-descs" (an empty array if @descs has none,
 * the member left out if @descs is NULL: descriptors unavailable).
 */
void print_id_ns_with_descs_json(FILE *out, const struct nvme_id_ns *ns,
				 const void *descs);

/*
 * An Identify active namespace list of NVME_ID_NS_LIST_MAX entries in host
 * byte order, as nvmefs_identify_active_ns() returns it.
 */
void print_ns_list(FILE *out, const uint32_t *list, enum output_format fmt);

#endif /* NVMEFS_CLI_OUTPUT_H */
