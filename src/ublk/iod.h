/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a ublk request descriptor asks of the engine.  The descriptor is
 * the kernel's, written into memory it shares with us: its sectors are
 * checked against the device before they become byte offsets.
 */
#ifndef NVMEFS_UBLK_IOD_H
#define NVMEFS_UBLK_IOD_H

#include <stddef.h>
#include <stdint.h>

#include <linux/ublk_cmd.h>

#include "../export/engine.h"

struct ublk_io {
	enum exp_op op;
	uint64_t off;
	uint64_t size;
};

/*
 * @iod as an engine request on a device of @dev_size bytes taking reads
 * and writes of @max_io bytes at most: 0, -EOPNOTSUPP for an operation
 * the engine has no counterpart of, or -EIO for a range past the device
 * (a resize under way) or a transfer larger than the device's limit.
 */
int ublk_iod_request(const struct ublksrv_io_desc *iod, uint64_t dev_size, size_t max_io,
		     struct ublk_io *io);

#endif /* NVMEFS_UBLK_IOD_H */
