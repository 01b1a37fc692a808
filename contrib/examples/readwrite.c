/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * readwrite: write a pattern to the first blocks of a namespace and read it
 * back, from a buffer the program registers once itself (nvmefs_mr_reg):
 * the data moves by RDMA straight between it and the target, no copy.
 *
 *   readwrite ADDR PORT SUBNQN NSID
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvmefs/nvmefs.h>

#define LEN (64 * 1024)

int main(int argc, char **argv)
{
	struct nvmefs_connect_opts opts;
	struct nvmefs_io_opts io;
	struct nvmefs_ns_info ns;
	struct nvmefs_ctrl *ctrl = NULL;
	struct nvmefs_mr *mr = NULL;
	const char *what = "connect";
	struct nvmefs_ioq *q;
	uint8_t *buf = NULL;
	uint32_t nsid, nlb;
	int ret = 1;

	if (argc != 5) {
		fprintf(stderr, "usage: %s ADDR PORT SUBNQN NSID\n", argv[0]);
		return 2;
	}
	nsid = (uint32_t)strtoul(argv[4], NULL, 0);
	nvmefs_connect_opts_init(&opts);
	opts.traddr = argv[1];
	opts.trsvcid = argv[2];
	opts.subnqn = argv[3];
	if (nvmefs_ctrl_connect(&opts, &ctrl))
		goto out;
	nvmefs_io_opts_init(&io);	/* one queue of 128 entries */
	what = "creating the I/O queue";
	if (nvmefs_ctrl_create_io_queues(ctrl, &io) || nvmefs_ns_info(ctrl, nsid, &ns))
		goto out;
	q = nvmefs_ctrl_io_queue(ctrl, 0);
	/* Registered once; every I/O below uses it in place. */
	what = "registering the buffer";
	buf = aligned_alloc(4096, LEN);
	if (!buf || nvmefs_mr_reg(ctrl, buf, LEN, &mr))
		goto out;
	nlb = LEN / ns.lba_size;
	for (size_t i = 0; i < LEN; i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	what = "write";
	if (nvmefs_ioq_write_sync(q, nsid, 0, nlb, buf))
		goto out;
	memset(buf, 0, LEN);
	what = "read";
	if (nvmefs_ioq_read_sync(q, nsid, 0, nlb, buf))
		goto out;
	for (size_t i = 0; i < LEN; i++) {
		if (buf[i] != (uint8_t)(i * 31 + 7)) {
			fprintf(stderr, "readwrite: byte %zu read back differs\n", i);
			what = NULL;
			goto out;
		}
	}
	printf("wrote and read back %u blocks of %u bytes of namespace %u\n", nlb, ns.lba_size,
	       nsid);
	ret = 0;
out:
	if (ret && what)
		fprintf(stderr, "readwrite: %s: %s\n", what, nvmefs_errmsg());
	nvmefs_mr_dereg(mr);	/* before the controller goes */
	nvmefs_ctrl_disconnect(ctrl);
	free(buf);
	return ret;
}
