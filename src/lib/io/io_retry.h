/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What an I/O does with an error status (io_retry.c), for io_cmd.c. */
#ifndef NVMEFS_IO_RETRY_H
#define NVMEFS_IO_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "ioq.h"

/* Whether status @raw is tried again (no DNR, retries left), with the
 * controller's Command Retry Delay set in io->not_before_ms. */
bool nvmefs_io_retryable(struct nvmefs_ioq *ioq, struct nvmefs_io *io, uint16_t raw);
/* Acts on path error status @raw; whether another path should take @io. */
bool nvmefs_io_path_error(struct nvmefs_ioq *ioq, struct nvmefs_io *io, uint16_t raw);

#endif /* NVMEFS_IO_RETRY_H */
