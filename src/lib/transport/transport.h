/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The transports by name and trtype (transport.c), over the table
 * transport_table.c holds. */
#ifndef NVMEFS_TRANSPORT_H
#define NVMEFS_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

struct nvmefs_transport_ops;

/* One transport of the table: what it is, and the NVMF_TRTYPE_* that
 * discovery log entries give for it. */
struct nvmefs_transport_row {
	const struct nvmefs_transport_ops *ops;
	uint8_t trtype;
};

/* The transports, the default first (transport_table.c; unit tests link
 * tests/lib's table of scripted ones instead). */
extern const struct nvmefs_transport_row nvmefs_transports[];
extern const size_t nvmefs_nr_transports;

/*
 * The transport @trtype names (NULL: the first, "rdma"): its index among
 * nvmefs_transport_name()'s, with *@ops set; else -EPROTONOSUPPORT and a
 * message naming the supported ones.
 */
int nvmefs_transport_find(const char *trtype, const struct nvmefs_transport_ops **ops);
/* The transport @trtype names (NULL: the first) as it describes itself,
 * whatever nvmefs_transport_override says; NULL if there is none. */
const struct nvmefs_transport_ops *nvmefs_transport_named(const char *trtype);
/* Unit tests: what every connection goes over, once trtype named a
 * supported transport; NULL: that transport. */
extern const struct nvmefs_transport_ops *nvmefs_transport_override;

#endif /* NVMEFS_TRANSPORT_H */
