/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transports a controller can be reached over, by the name a caller
 * gives (nvmefs_connect_opts.trtype) and by the number a discovery log
 * entry carries.  A new transport is one more row here and its own files.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "transport.h"
#include "error.h"
#include "transport_ops.h"

static const struct {
	const struct nvmefs_transport_ops *ops;
	uint8_t trtype;		/* NVMF_TRTYPE_* of discovery log entries */
} transports[] = {
	{ &nvmefs_rdma_ops, NVMF_TRTYPE_RDMA },
	{ &nvmefs_tcp_ops, NVMF_TRTYPE_TCP },
};

#define NR_TRANSPORTS (sizeof(transports) / sizeof(transports[0]))

const struct nvmefs_transport_ops *nvmefs_transport_override;

const char *nvmefs_transport_name(unsigned int i)
{
	return i < NR_TRANSPORTS ? transports[i].ops->name : NULL;
}

const char *nvmefs_transport_by_trtype(unsigned int trtype)
{
	for (size_t i = 0; i < NR_TRANSPORTS; i++)
		if (transports[i].trtype == trtype)
			return transports[i].ops->name;
	return NULL;
}

int nvmefs_transport_find(const char *trtype, const struct nvmefs_transport_ops **ops)
{
	char names[64] = "";

	if (!trtype)
		trtype = transports[0].ops->name;
	for (size_t i = 0; i < NR_TRANSPORTS; i++) {
		if (!strcmp(transports[i].ops->name, trtype)) {
			*ops = nvmefs_transport_override ? nvmefs_transport_override
				: transports[i].ops;
			return (int)i;
		}
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s'%s'",
			 i ? ", " : "", transports[i].ops->name);
	}
	return nvmefs_error(-EPROTONOSUPPORT, "transport '%s' is not supported: give one of %s",
			    trtype, names);
}
