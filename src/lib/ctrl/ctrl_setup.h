/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The admin queue's bring-up and shutdown (ctrl_setup.c), for ctrl.c's
 * connect and disconnect and recover.c's reconnect. */
#ifndef NVMEFS_CTRL_SETUP_H
#define NVMEFS_CTRL_SETUP_H

#include "../types/ctrl_types.h"

/* Identify data and discovery log chunks fit one slot each. */
#define ADMIN_DATA_SLOT_SIZE NVMEFS_IDENTIFY_DATA_SIZE

/* Admin queue bring-up, for connecting and reconnecting: create the queue,
 * Connect, enable, identify into @id; -ESTALE when Identify names another
 * subsystem. */
int nvmefs_ctrl_admin_up(struct nvmefs_ctrl *ctrl, struct nvme_id_ctrl *id);
/* Tear the admin queue's transport down (it can be brought up again). */
void nvmefs_ctrl_admin_down(struct nvmefs_ctrl *ctrl);
/* A normal shutdown (CC.SHN), waited for up to --timeout; nothing if the
 * controller is not enabled or its admin queue failed. */
void nvmefs_ctrl_shutdown(struct nvmefs_ctrl *ctrl);

#endif
