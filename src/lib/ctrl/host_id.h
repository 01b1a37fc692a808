/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who the host is: its NQN and host ID (host_id.c). */
#ifndef NVMEFS_HOST_ID_H
#define NVMEFS_HOST_ID_H

struct nvmefs_ctrl;

/* 0, or -EINVAL when @nqn is longer than an NQN may be or does not start
 * with "nqn.": the message names it the @what ("host", "subsystem") NQN
 * and says to fix @fix (the option or file it came from). */
int nvmefs_nqn_check(const char *nqn, const char *what, const char *fix);

/* The host NQN when none is given, as nvme-cli takes it: /etc/nvme/hostnqn,
 * else one generated for this machine (malloc'd); NULL, with the message
 * set, when there is neither. */
char *nvmefs_hostnqn_default(void);
int nvmefs_host_identity(struct nvmefs_ctrl *ctrl, const char *hostnqn,
			 const char *hostid);

#endif /* NVMEFS_HOST_ID_H */
