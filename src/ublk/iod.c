/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A ublk request descriptor checked and read as an engine request (iod.h).
 */
#include "config.h"

#include <errno.h>

#include "iod.h"

int ublk_iod_request(const struct ublksrv_io_desc *iod, uint64_t dev_size, size_t max_io,
		     struct ublk_io *io)
{
	uint64_t off = (uint64_t)iod->start_sector << 9, size = (uint64_t)iod->nr_sectors << 9;

	switch (ublksrv_get_op(iod)) {
	case UBLK_IO_OP_READ:
		io->op = EXP_READ;
		break;
	case UBLK_IO_OP_WRITE:
		io->op = EXP_WRITE;
		break;
	case UBLK_IO_OP_FLUSH:
		io->op = EXP_FLUSH;
		size = 0;
		off = 0;
		break;
	case UBLK_IO_OP_DISCARD:
		io->op = EXP_PUNCH;
		break;
	case UBLK_IO_OP_WRITE_ZEROES:
		io->op = EXP_ZERO;
		break;
	default:
		return -EOPNOTSUPP;
	}
	/* The block layer keeps to the device's size and max_sectors; a
	 * request past them (a resize under way) fails rather than wraps. */
	if (off + size > dev_size ||
	    ((io->op == EXP_READ || io->op == EXP_WRITE) && size > max_io))
		return -EIO;
	io->off = off;
	io->size = size;
	return 0;
}
