/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which records of a discovery log --all-paths connects, as 'nvme
 * connect-all' does: every record of the subsystem, each over its own
 * transport (paths may mix transports), but only over the transports
 * nvmefs has, and one that requires a secure channel only with a TLS key
 * over a transport that takes one (NVMe/TCP).
 */
#ifndef NVMEFS_CLI_PATHS_LOG_H
#define NVMEFS_CLI_PATHS_LOG_H

#include <stdbool.h>

#include <nvme/types.h>

enum path_record {
	PATH_RECORD_TAKE,		/* a path to the subsystem, over *trtype */
	PATH_RECORD_OTHER,		/* another subsystem, or a referral */
	PATH_RECORD_NEEDS_TLS,		/* TREQ: a secure channel is required, no key given */
	PATH_RECORD_NO_SECURE_CHANNEL,	/* TREQ: required, over a transport without TLS */
	PATH_RECORD_NO_TRANSPORT,	/* over a transport nvmefs does not have */
};

/* What record @e is to a path to @subnqn, @have_key telling whether a TLS
 * key was given; for PATH_RECORD_TAKE, *@trtype is the transport's name as
 * nvmefs_connect_opts.trtype takes it. */
enum path_record path_record_kind(const struct nvmf_disc_log_entry *e, const char *subnqn,
				  bool have_key, const char **trtype);

/* A record's TRADDR and TRSVCID fields as text: the whole field and a NUL. */
#define PATH_TRADDR_SIZE (NVMF_TRADDR_SIZE + 1)
#define PATH_TRSVCID_SIZE (NVMF_TRSVCID_SIZE + 1)

/* Record @e's address and service id, padding left out. */
void path_record_where(const struct nvmf_disc_log_entry *e, char traddr[PATH_TRADDR_SIZE],
		       char trsvcid[PATH_TRSVCID_SIZE]);

#endif
