/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * discover: the smallest use of libnvmefs.  Connect to the discovery
 * controller at ADDR[:PORT], read its log, print one line per record.
 *
 *   discover ADDR [PORT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <endian.h>
#include <nvme/types.h>
#include <nvmefs/nvmefs.h>

/* A discovery log field is space-padded, not NUL-terminated. */
static void field(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
	while (len && (dst[len - 1] == ' ' || dst[len - 1] == '\0'))
		dst[--len] = '\0';
}

int main(int argc, char **argv)
{
	struct nvmefs_connect_opts opts;
	struct nvmf_discovery_log *log;
	struct nvmefs_ctrl *ctrl;
	char nqn[257], addr[257], port[33];

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s ADDR [PORT]\n", argv[0]);
		return 2;
	}
	nvmefs_connect_opts_init(&opts);
	opts.traddr = argv[1];
	opts.trsvcid = argc > 2 ? argv[2] : NULL;	/* NULL: 4420 */
	/* subnqn NULL: the well-known discovery NQN. */
	if (nvmefs_ctrl_connect(&opts, &ctrl)) {
		fprintf(stderr, "discover: %s\n", nvmefs_errmsg());
		return 1;
	}
	if (nvmefs_get_discovery_log(ctrl, &log)) {
		fprintf(stderr, "discover: %s\n", nvmefs_errmsg());
		nvmefs_ctrl_disconnect(ctrl);
		return 1;
	}
	for (uint64_t i = 0; i < le64toh(log->numrec); i++) {
		const struct nvmf_disc_log_entry *e = &log->entries[i];

		field(nqn, sizeof(nqn), e->subnqn, sizeof(e->subnqn));
		field(addr, sizeof(addr), e->traddr, sizeof(e->traddr));
		field(port, sizeof(port), e->trsvcid, sizeof(e->trsvcid));
		printf("%s %s:%s\n", nqn, addr, port);
	}
	free(log);
	nvmefs_ctrl_disconnect(ctrl);
	return 0;
}
