/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FUSE over io_uring's part of the kernel's ABI (include/uapi/linux/fuse.h,
 * protocol 7.42, Linux 6.14), which ring.c speaks itself: Debian 12's
 * headers predate it.  The kernel fixes these layouts, hence the asserts.
 */
#ifndef NVMEFS_FUSE_RING_UAPI_H
#define NVMEFS_FUSE_RING_UAPI_H

#include <stddef.h>
#include <stdint.h>

#include <linux/fuse.h>

#ifndef FUSE_OVER_IO_URING
#define FUSE_OVER_IO_URING (1ULL << 41)
#endif

#ifndef FUSE_URING_IN_OUT_HEADER_SZ
#define FUSE_URING_IN_OUT_HEADER_SZ 128
#define FUSE_URING_OP_IN_OUT_SZ 128

struct fuse_uring_ent_in_out {
	uint64_t flags;
	/* What the reply's COMMIT_AND_FETCH names (the request's unique). */
	uint64_t commit_id;
	/* The payload's bytes, either way. */
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
};

/* iov[0] of a REGISTER: the request's headers, and the reply's. */
struct fuse_uring_req_header {
	char in_out[FUSE_URING_IN_OUT_HEADER_SZ];
	char op_in[FUSE_URING_OP_IN_OUT_SZ];
	struct fuse_uring_ent_in_out ring_ent_in_out;
};

enum fuse_uring_cmd {
	FUSE_IO_URING_CMD_INVALID = 0,
	FUSE_IO_URING_CMD_REGISTER = 1,
	FUSE_IO_URING_CMD_COMMIT_AND_FETCH = 2,
};

/* In the command area of a 128-byte SQE. */
struct fuse_uring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};
#endif

_Static_assert(sizeof(struct fuse_uring_ent_in_out) == 32, "FUSE ring ABI");
_Static_assert(sizeof(struct fuse_uring_req_header) == 288, "FUSE ring ABI");
_Static_assert(offsetof(struct fuse_uring_req_header, ring_ent_in_out) == 256, "FUSE ring ABI");
_Static_assert(sizeof(struct fuse_uring_cmd_req) == 24, "FUSE ring ABI");
_Static_assert(offsetof(struct fuse_uring_cmd_req, qid) == 16, "FUSE ring ABI");

#endif /* NVMEFS_FUSE_RING_UAPI_H */
