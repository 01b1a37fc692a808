/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which discovery log records --all-paths connects (paths_log.h). */
#include "config.h"

#include <string.h>

#include <nvmefs/nvmefs.h>
#include <nvmefs/wire.h>

#include "../common/text.h"
#include "paths_log.h"

/* Whether the transport table says @trtype takes a TLS key. */
static bool transport_has_tls(const char *trtype)
{
	struct nvmefs_transport_info info = { .size = sizeof(info) };

	return nvmefs_transport_info(trtype, &info) == 0 && (info.allowed_opts & NVMEFS_OPT_TLS);
}

enum path_record path_record_kind(const struct nvmf_disc_log_entry *e, const char *subnqn,
				  bool have_key, const char **trtype)
{
	char nqn[sizeof(e->subnqn) + 1];

	text_field(nqn, sizeof(nqn), e->subnqn, sizeof(e->subnqn));
	if (e->subtype != NVME_NQN_NVME || strcmp(nqn, subnqn))
		return PATH_RECORD_OTHER;
	*trtype = nvmefs_transport_by_trtype(e->trtype);
	if (!*trtype)
		return PATH_RECORD_NO_TRANSPORT;
	if (nvmefs_disc_entry_requires_secure_channel(e)) {
		if (!transport_has_tls(*trtype))
			return PATH_RECORD_NO_SECURE_CHANNEL;
		if (!have_key)
			return PATH_RECORD_NEEDS_TLS;
	}
	return PATH_RECORD_TAKE;
}

void path_record_where(const struct nvmf_disc_log_entry *e, char traddr[PATH_TRADDR_SIZE],
		       char trsvcid[PATH_TRSVCID_SIZE])
{
	text_field(traddr, PATH_TRADDR_SIZE, e->traddr, sizeof(e->traddr));
	text_field(trsvcid, PATH_TRSVCID_SIZE, e->trsvcid, sizeof(e->trsvcid));
}
