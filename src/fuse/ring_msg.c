/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FUSE over io_uring's messages, to and from /dev/fuse's (ring_msg.h).
 * The kernel writes an entry's headers and payload; its sizes are checked
 * here before libfuse, which trusts what it is given, sees the request.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ring_msg.h"
#include "../export/parking.h"

int ring_msg_request(const struct fuse_uring_req_header *hdr, char *payload, size_t room,
		     char **mem, size_t *len)
{
	struct fuse_in_header in;
	size_t psz = hdr->ring_ent_in_out.payload_sz, op_len;

	memcpy(&in, hdr->in_out, sizeof(in));
	if (in.len < sizeof(in) || psz > room || in.len - sizeof(in) < psz)
		return -EPROTO;
	op_len = in.len - sizeof(in) - psz;
	if (op_len > FUSE_URING_OP_IN_OUT_SZ || hdr->ring_ent_in_out.commit_id != in.unique)
		return -EPROTO;
	*mem = payload - op_len - sizeof(in);
	memcpy(*mem, &in, sizeof(in));
	memcpy(*mem + sizeof(in), hdr->op_in, op_len);
	*len = in.len;
	return 0;
}

ssize_t ring_msg_reply(struct fuse_uring_req_header *hdr, char *payload, size_t room,
		       const struct iovec *iov, int count)
{
	struct fuse_out_header out;
	size_t off = 0, total = iov[0].iov_len;

	memcpy(&out, iov[0].iov_base, sizeof(out));
	for (int i = 1; i < count; i++)
		total += iov[i].iov_len;
	if (total - iov[0].iov_len > room) {
		out.error = -EIO;
	} else {
		for (int i = 1; i < count; i++) {
			if (iov[i].iov_base != payload + off)
				memmove(payload + off, iov[i].iov_base, iov[i].iov_len);
			off += iov[i].iov_len;
		}
	}
	out.len = (uint32_t)(sizeof(out) + off);
	memcpy(hdr->in_out, &out, sizeof(out));
	hdr->ring_ent_in_out.payload_sz = (uint32_t)off;
	return (ssize_t)total;
}

int ring_msg_init_reply(const struct iovec *iov, int count, struct fuse_out_header *out,
			struct fuse_init_out *arg, struct iovec v[2])
{
	if (count != 2 || iov[0].iov_len != sizeof(*out) || iov[1].iov_len > sizeof(*arg) ||
	    iov[1].iov_len < offsetof(struct fuse_init_out, flags2) + sizeof(arg->flags2))
		return -EINVAL;
	memcpy(out, iov[0].iov_base, sizeof(*out));
	memset(arg, 0, sizeof(*arg));
	memcpy(arg, iov[1].iov_base, iov[1].iov_len);
	if (out->error || !(arg->flags & FUSE_INIT_EXT))
		return -EINVAL;
	arg->flags2 |= (uint32_t)(FUSE_OVER_IO_URING >> 32);
	v[0] = (struct iovec){ out, sizeof(*out) };
	v[1] = (struct iovec){ arg, iov[1].iov_len };
	return 0;
}

unsigned int ring_msg_spares_max(size_t payload, unsigned int threads)
{
	if (!payload || !threads)
		return 0;
	return (unsigned int)(PARK_MAX_BYTES / payload / threads);
}
