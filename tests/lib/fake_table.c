/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transport table of the unit tests, in place of the library's
 * (src/lib/transport/transport_table.c): the scripted target twice, as
 * fake_transport.h describes, so that a test links no transport of the
 * library's and no RDMA library.
 */
#include <nvme/types.h>

#include "fake_transport.h"
#include "transport/transport.h"

const struct nvmefs_transport_row nvmefs_transports[] = {
	{ &fake_keyed_ops, NVMF_TRTYPE_RDMA },
	{ &fake_stream_ops, NVMF_TRTYPE_TCP },
};

const size_t nvmefs_nr_transports = sizeof(nvmefs_transports) / sizeof(nvmefs_transports[0]);
