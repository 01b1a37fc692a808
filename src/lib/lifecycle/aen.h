/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Asynchronous events (aen.c), from the controller's thread. */
#ifndef NVMEFS_AEN_H
#define NVMEFS_AEN_H

struct nvmefs_ctrl;

/* Enable the events once live (after
 * every reconnect); look at the idle admin queue (connection events, the
 * event request kept outstanding) and act on what comes. */
void nvmefs_aen_enable(struct nvmefs_ctrl *ctrl);
void nvmefs_admin_tick(struct nvmefs_ctrl *ctrl);

#endif /* NVMEFS_AEN_H */
