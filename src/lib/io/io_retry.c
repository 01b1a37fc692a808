/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an I/O does with an error status: Linux's retries of a status
 * without DNR, and a path error's (SCT 3h) ANA state or namespace rescan.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvme/util.h>

#include "io_retry.h"
#include "ioq.h"
#include "namespaces.h"
#include "../base/clock.h"
#include "../ctrl/admin_cmds.h"
#include "../types/ctrl_types.h"

/* As Linux's nvme_max_retries: a status without DNR is tried this often more. */
#define MAX_RETRIES 5
/* A path error is tried again this much later (unless the controller asks
 * for a Command Retry Delay): the namespace list is read meanwhile. */
#define PATH_RETRY_MS 100
/* NVMe status field bits above SCT/SC (the 15-bit form without the phase). */
#define STATUS_DNR 0x4000

/* Linux retries a status without DNR, after the Command Retry Delay the
 * controller asks for. */
bool nvmefs_io_retryable(struct nvmefs_ioq *ioq, struct nvmefs_io *io, uint16_t raw)
{
	int64_t delay = nvmefs_crd_delay_ms(ioq->ctrl, raw);

	if ((raw & STATUS_DNR) || io->retries >= MAX_RETRIES)
		return false;
	if (!delay && nvme_status_code_type(raw) == NVME_SCT_PATH)
		delay = PATH_RETRY_MS;
	io->retries++;
	io->not_before_ms = delay ? nvmefs_now_ms() + delay : 0;
	return true;
}

/*
 * A path related status (SCT 3h).  An ANA one says how this controller now
 * reaches the namespace: taken at once, so that no path choice sends I/O
 * the same way again, and the log is read again to be sure.  Returns
 * whether another path should take the I/O (a path of a multipath set, and
 * the controller did not say Do Not Retry).
 */
bool nvmefs_io_path_error(struct nvmefs_ioq *ioq, struct nvmefs_io *io, uint16_t raw)
{
	struct nvmefs_ctrl *ctrl = ioq->ctrl;
	struct nvmefs_ns_cache *ns = (struct nvmefs_ns_cache *)nvmefs_io_find_ns(ctrl, io->nsid);
	static const uint8_t ana_state[] = {
		[NVME_SC_ANA_PERSISTENT_LOSS] = NVME_ANA_STATE_PERSISTENT_LOSS,
		[NVME_SC_ANA_INACCESSIBLE] = NVME_ANA_STATE_INACCESSIBLE,
		[NVME_SC_ANA_TRANSITION] = NVME_ANA_STATE_CHANGE,
	};
	unsigned int sc = raw & 0xff;

	if (sc >= NVME_SC_ANA_PERSISTENT_LOSS && sc <= NVME_SC_ANA_TRANSITION) {
		if (ns)
			atomic_store(&ns->ana_state, ana_state[sc]);
		atomic_store(&ctrl->ana_stale, true);
	} else if (!ctrl->failover) {
		/* nvmet answers Internal Path Error for a namespace disabled
		 * on it.  With no other path Linux sends the I/O again until
		 * a rescan finds the namespace gone (then EIO): the namespace
		 * list is read again, the retries wait for it, and an I/O
		 * that fails says what the target answered. */
		io->path_status = raw & 0x7ff;
		atomic_store(&ctrl->ns_stale, true);
	}
	return ctrl->failover && !(raw & STATUS_DNR);
}
