/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The transports a controller can be reached over, by the name a caller
 * gives (nvmefs_connect_opts.trtype) and by the number a discovery log
 * entry carries, and what each says of itself (nvmefs_transport_info()):
 * its default ports and the connect options it takes.  The rows are
 * transport_table.c's, the one file that names the transports, so that a
 * unit test links this with a table of its own.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "nvmefs/nvmefs.h"
#include "transport.h"
#include "../types/transport_ops.h"
#include "../base/error.h"

const struct nvmefs_transport_ops *nvmefs_transport_override;

const char *nvmefs_transport_name(unsigned int i)
{
	return i < nvmefs_nr_transports ? nvmefs_transports[i].ops->name : NULL;
}

const char *nvmefs_transport_by_trtype(unsigned int trtype)
{
	for (size_t i = 0; i < nvmefs_nr_transports; i++)
		if (nvmefs_transports[i].trtype == trtype)
			return nvmefs_transports[i].ops->name;
	return NULL;
}

int nvmefs_transport_find(const char *trtype, const struct nvmefs_transport_ops **ops)
{
	char names[64] = "";

	if (!trtype)
		trtype = nvmefs_transports[0].ops->name;
	for (size_t i = 0; i < nvmefs_nr_transports; i++) {
		if (!strcmp(nvmefs_transports[i].ops->name, trtype)) {
			*ops = nvmefs_transport_override ? nvmefs_transport_override
				: nvmefs_transports[i].ops;
			return (int)i;
		}
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s'%s'",
			 i ? ", " : "", nvmefs_transports[i].ops->name);
	}
	return nvmefs_error(-EPROTONOSUPPORT, "transport '%s' is not supported: give one of %s",
			    trtype, names);
}

const struct nvmefs_transport_ops *nvmefs_transport_named(const char *trtype)
{
	if (!trtype)
		return nvmefs_transports[0].ops;
	for (size_t i = 0; i < nvmefs_nr_transports; i++)
		if (!strcmp(nvmefs_transports[i].ops->name, trtype))
			return nvmefs_transports[i].ops;
	return NULL;
}

/* The oldest struct nvmefs_transport_info: through allowed_opts. */
#define TRANSPORT_INFO_SIZE_0_2 (offsetof(struct nvmefs_transport_info, allowed_opts) + \
				 sizeof(unsigned int))

int nvmefs_transport_info(const char *trtype, struct nvmefs_transport_info *info)
{
	const struct nvmefs_transport_ops *ops;
	struct nvmefs_transport_info ours;
	size_t size = info->size;
	int ret;

	if (size < TRANSPORT_INFO_SIZE_0_2)
		return nvmefs_error(-EINVAL, "transport information of %zu bytes, fewer than any "
				    "version has: set its size to sizeof(struct nvmefs_transport_info)",
				    size);
	ret = nvmefs_transport_find(trtype, &ops);
	if (ret < 0)
		return ret;
	ops = nvmefs_transports[ret].ops;
	ours = (struct nvmefs_transport_info){
		.size = size < sizeof(ours) ? size : sizeof(ours),
		.name = ops->name,
		.trsvcid = ops->trsvcid,
		.discovery_trsvcid = ops->discovery_trsvcid,
		.allowed_opts = ops->allowed_opts,
		.pins_memory = ops->pins_memory,
	};
	memcpy(info, &ours, ours.size);
	return 0;
}
