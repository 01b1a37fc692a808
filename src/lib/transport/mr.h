/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Registered memory (mr.c): the callers' regions and the queues' pools. */
#ifndef NVMEFS_MR_H
#define NVMEFS_MR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nvmefs_ctrl;

/* Memory registered with the transport; the controller keeps a list. */
struct nvmefs_mr {
	struct nvmefs_ctrl *ctrl;
	uint8_t *addr;
	size_t len;
	uint32_t lkey;
	uint32_t rkey;
	void *tp;			/* the transport's registration; NULL while released */
	/* The callers' regions, for lookup without a lock (mr.c). */
	_Atomic(struct nvmefs_mr *) next;
	/* Every region of the controller, pools too, under mr_lock (mr.c). */
	struct nvmefs_mr *region_next, *region_prev;
};

/* The bytes a registration of @len bytes at @addr pins: the pages it touches. */
size_t nvmefs_pinned_span(uintptr_t addr, size_t len, size_t page);
/* A transport registered (@pin) or deregistered @len bytes at @addr for @ctrl. */
void nvmefs_ctrl_count_pin(struct nvmefs_ctrl *ctrl, const void *addr, size_t len, bool pin);
/* Register @addr/@len without publishing it for lookup (a queue's pool);
 * while the device is released, it is registered at the reconnect. */
int nvmefs_mr_new(struct nvmefs_ctrl *ctrl, void *addr, size_t len, struct nvmefs_mr **mrp);
void nvmefs_mr_free(struct nvmefs_mr *mr);
/* The caller's region that holds @len bytes at @buf, or NULL; safe while
 * other threads register and deregister regions. */
struct nvmefs_mr *nvmefs_mr_find(struct nvmefs_ctrl *ctrl, const void *buf, size_t len);
/* Frees the regions deregistered while the controller lived. */
void nvmefs_mr_free_retired(struct nvmefs_ctrl *ctrl);
/* With no queue left: deregister every region and release the transport's
 * per-controller state (the protection domain), so that a device that is
 * going away can go.  The regions stay known, for nvmefs_ctrl_register_again(). */
void nvmefs_ctrl_release_device(struct nvmefs_ctrl *ctrl);
/* After the admin queue is up again: register every region on its device,
 * all or none; 0 if nothing was released. */
int nvmefs_ctrl_register_again(struct nvmefs_ctrl *ctrl);

#endif /* NVMEFS_MR_H */
