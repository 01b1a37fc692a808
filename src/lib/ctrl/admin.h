/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One admin command to its end (admin.c). */
#ifndef NVMEFS_ADMIN_H
#define NVMEFS_ADMIN_H

#include <stdint.h>

#include "../types/transport_ops.h"

struct nvmefs_req;

/* Submit one prepared request and wait for it, up to @timeout_ms: the
 * controller fails when it does not answer in time. */
int nvmefs_req_exec(struct nvmefs_req *req, unsigned int timeout_ms);

/*
 * Run one admin command built in @cmd (its cid is assigned here) with up
 * to one data slot of payload @buf/@len moving @dir.  The response is
 * copied to @cqe when not NULL.  Returns 0, -errno for a transport failure,
 * or -EREMOTEIO when the controller completed it with an error status.
 */
int nvmefs_admin_exec(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
		      void *buf, uint32_t len, enum nvmefs_dir dir,
		      struct nvmefs_cqe *cqe);
/* The same with the payload in @mr (not NULL: any length) instead of a slot. */
int nvmefs_admin_exec_mr(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
			 void *buf, uint32_t len, struct nvmefs_mr *mr, enum nvmefs_dir dir,
			 struct nvmefs_cqe *cqe);
/* A command without data that fails the controller unless it completes
 * within @timeout_ms rather than --timeout (Keep Alive's is KATO). */
int nvmefs_admin_exec_within(struct nvmefs_ctrl *ctrl, const union nvmefs_cmd *cmd,
			     unsigned int timeout_ms);

#endif /* NVMEFS_ADMIN_H */
