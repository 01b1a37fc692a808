/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which discovery log records --all-paths connects (paths_log.h). */
#include "config.h"

#include <string.h>

#include <nvmefs/nvmefs.h>
#include <nvmefs/wire.h>

#include "paths_log.h"

void disc_log_field(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
	while (len && (dst[len - 1] == ' ' || dst[len - 1] == '\0'))
		dst[--len] = '\0';
}

enum path_record path_record_kind(const struct nvmf_disc_log_entry *e, const char *subnqn,
				  const char **trtype)
{
	char nqn[NVMF_NQN_SIZE + 1];

	disc_log_field(nqn, sizeof(nqn), e->subnqn, sizeof(e->subnqn));
	if (e->subtype != NVME_NQN_NVME || strcmp(nqn, subnqn))
		return PATH_RECORD_OTHER;
	if (nvmefs_disc_entry_requires_secure_channel(e))
		return PATH_RECORD_NEEDS_TLS;
	*trtype = nvmefs_transport_by_trtype(e->trtype);
	return *trtype ? PATH_RECORD_TAKE : PATH_RECORD_NO_TRANSPORT;
}
