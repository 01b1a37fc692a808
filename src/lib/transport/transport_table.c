/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transports this library connects over, the default first: the one
 * file that names them, so that the rest of the library (transport.c's
 * look-ups included) links without any of them, and a unit test with a
 * table of its own needs no RDMA library.  A new transport is one more row
 * here and its own files.
 */
#include <nvme/types.h>

#include "transport.h"
#include "../types/transport_ops.h"

const struct nvmefs_transport_row nvmefs_transports[] = {
	{ &nvmefs_rdma_ops, NVMF_TRTYPE_RDMA },
	{ &nvmefs_tcp_ops, NVMF_TRTYPE_TCP },
};

const size_t nvmefs_nr_transports = sizeof(nvmefs_transports) / sizeof(nvmefs_transports[0]);
