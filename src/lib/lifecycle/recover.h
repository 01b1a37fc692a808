/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The controller's own thread: keep-alive and recovery (recover.c). */
#ifndef NVMEFS_RECOVER_H
#define NVMEFS_RECOVER_H

#include <stdint.h>

struct nvmefs_ctrl;

/* Start the controller's thread (keep-alive, recovery) if it needs one. */
int nvmefs_ctrl_start_thread(struct nvmefs_ctrl *ctrl);
void nvmefs_ctrl_stop_thread(struct nvmefs_ctrl *ctrl);
/* The pause before reconnect attempt @n (1-based), after one that started
 * @started_ms into the outage, with reconnect_delay @delay_s. */
int64_t nvmefs_reconnect_pause_ms(int delay_s, unsigned int n, int64_t started_ms);

#endif /* NVMEFS_RECOVER_H */
