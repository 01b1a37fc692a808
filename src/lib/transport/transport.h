/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The transports by name and trtype (transport.c). */
#ifndef NVMEFS_TRANSPORT_H
#define NVMEFS_TRANSPORT_H

struct nvmefs_transport_ops;

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
