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
	uint64_t size = (uint64_t)iod->nr_sectors << 9;
	enum exp_op op;

	switch (ublksrv_get_op(iod)) {
	case UBLK_IO_OP_READ:
		op = EXP_READ;
		break;
	case UBLK_IO_OP_WRITE:
		op = EXP_WRITE;
		break;
	case UBLK_IO_OP_FLUSH:
		*io = (struct ublk_io){ .op = EXP_FLUSH };
		return 0;
	case UBLK_IO_OP_DISCARD:
		op = EXP_PUNCH;
		break;
	case UBLK_IO_OP_WRITE_ZEROES:
		op = EXP_ZERO;
		break;
	default:
		return -EOPNOTSUPP;
	}
	/* The block layer keeps to the device's size and max_sectors; a
	 * request past them (a resize under way) fails rather than wraps.
	 * The start is bounded before it is shifted: sector 2^55 is byte 0
	 * in 64 bits. */
	if (iod->start_sector > dev_size >> 9 || size > dev_size - (iod->start_sector << 9) ||
	    ((op == EXP_READ || op == EXP_WRITE) && size > max_io))
		return -EIO;
	*io = (struct ublk_io){ .op = op, .off = iod->start_sector << 9, .size = size };
	return 0;
}
