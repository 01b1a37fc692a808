/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FUSE over io_uring's messages as ring.c turns them into /dev/fuse's and
 * back, with no ring, no libfuse and no threads (tests/unit/check_fuse_ring.c
 * drives them): a request the kernel put in an entry laid out as /dev/fuse
 * has it, a reply libfuse wrote put into the entry it belongs to, INIT's
 * reply asking for the ring, and how many spare entries each thread has.
 */
#ifndef NVMEFS_FUSE_RING_MSG_H
#define NVMEFS_FUSE_RING_MSG_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "ring_uapi.h"

/* Room in front of each entry's payload for the request's headers as
 * /dev/fuse has them (in_header and the operation's own, at most
 * FUSE_URING_OP_IN_OUT_SZ): a page, so that the payload starts on one. */
#define RING_HEAD 4096

/*
 * The request the kernel wrote into @hdr and the payload @payload (of @room
 * bytes, RING_HEAD bytes of room in front of it), laid out as read from
 * /dev/fuse: *@mem, *@len bytes, ending with the payload in place.  Its
 * sizes are checked first: -EPROTO when they do not add up.
 */
int ring_msg_request(const struct fuse_uring_req_header *hdr, char *payload, size_t room,
		     char **mem, size_t *len);
/*
 * The reply libfuse wrote as @iov (@count parts, the out header first)
 * put into the entry of @hdr and @payload (@room bytes): the header and the
 * payload's size in @hdr, the rest in the payload (not copied where it is
 * there already, as a read that landed in place).  A reply larger than the
 * payload becomes EIO.  Returns the bytes libfuse wrote, as writev() would.
 */
ssize_t ring_msg_reply(struct fuse_uring_req_header *hdr, char *payload, size_t room,
		       const struct iovec *iov, int count);
/*
 * INIT's reply as libfuse wrote it (@iov, @count parts), with the ring asked
 * for, into @out (its header) and @arg (fuse_init_out), and @v pointing at
 * them: 0, or -EINVAL when the reply is not one to ask in (an error, no
 * FUSE_INIT_EXT, a size it cannot have).
 */
int ring_msg_init_reply(const struct iovec *iov, int count, struct fuse_out_header *out,
			struct fuse_init_out *arg, struct iovec v[2]);
/* How many spare entries, with payloads of @payload bytes, each of
 * @threads threads registers for held requests and those waiting for a
 * buffer to keep no other request out: together no more than the requests
 * the mount parks (PARK_MAX_BYTES). */
unsigned int ring_msg_spares_max(size_t payload, unsigned int threads);

#endif /* NVMEFS_FUSE_RING_MSG_H */
