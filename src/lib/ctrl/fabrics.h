/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Fabrics commands: Connect and properties (fabrics.c). */
#ifndef NVMEFS_FABRICS_H
#define NVMEFS_FABRICS_H

#include <stdint.h>

struct nvmefs_ctrl;
struct nvmefs_queue;

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
int nvmefs_fabrics_connect(struct nvmefs_ctrl *ctrl, struct nvmefs_queue *q,
			   uint32_t kato_ms);
int nvmefs_prop_get(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t *value);
int nvmefs_prop_set(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t value);

#endif /* NVMEFS_FABRICS_H */
