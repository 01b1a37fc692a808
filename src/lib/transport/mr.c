/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Registered memory: the callers' regions (nvmefs_mr_reg) and each I/O
 * queue's buffer pool.
 *
 * A registration belongs to one RDMA device.  When that device goes away
 * (a NIC reset, soft-RoCE re-created), the kernel waits until every user
 * lets go of it, so the recovery releases every registration and the
 * protection domain, and registers the same memory again on the device the
 * target's address resolves to next.  The handles the callers hold stay
 * the same; only their keys change, while no queue can use them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "mr.h"
#include "../base/error.h"
#include "../types/ctrl_types.h"

size_t nvmefs_pinned_span(uintptr_t addr, size_t len, size_t page)
{
	uintptr_t first = addr & ~(uintptr_t)(page - 1);
	uintptr_t end = (addr + len + page - 1) & ~(uintptr_t)(page - 1);

	return len ? end - first : 0;
}

void nvmefs_ctrl_count_pin(struct nvmefs_ctrl *ctrl, const void *addr, size_t len, bool pin)
{
	size_t bytes = nvmefs_pinned_span((uintptr_t)addr, len, (size_t)sysconf(_SC_PAGESIZE));

	if (pin)
		atomic_fetch_add(&ctrl->pinned_bytes, bytes);
	else
		atomic_fetch_sub(&ctrl->pinned_bytes, bytes);
}

uint64_t nvmefs_ctrl_pinned_bytes(const struct nvmefs_ctrl *ctrl)
{
	return atomic_load(&((struct nvmefs_ctrl *)ctrl)->pinned_bytes);
}

static void region_link(struct nvmefs_ctrl *ctrl, struct nvmefs_mr *mr)
{
	mr->region_prev = NULL;
	mr->region_next = ctrl->regions;
	if (ctrl->regions)
		ctrl->regions->region_prev = mr;
	ctrl->regions = mr;
}

static void region_unlink(struct nvmefs_ctrl *ctrl, struct nvmefs_mr *mr)
{
	if (mr->region_prev)
		mr->region_prev->region_next = mr->region_next;
	else
		ctrl->regions = mr->region_next;
	if (mr->region_next)
		mr->region_next->region_prev = mr->region_prev;
}

int nvmefs_mr_new(struct nvmefs_ctrl *ctrl, void *addr, size_t len, struct nvmefs_mr **mrp)
{
	struct nvmefs_mr *mr;
	int ret = 0;

	if (!addr || !len)
		return nvmefs_error(-EINVAL, "nothing to register (%zu bytes at %p)", len, addr);
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return nvmefs_error(-ENOMEM, "out of memory");
	mr->ctrl = ctrl;
	mr->addr = addr;
	mr->len = len;
	pthread_mutex_lock(&ctrl->mr_lock);
	/* While the device is released, registering waits for the reconnect. */
	if (!ctrl->regions_released)
		ret = ctrl->ops->mr_reg(ctrl, mr);
	if (ret == 0)
		region_link(ctrl, mr);
	pthread_mutex_unlock(&ctrl->mr_lock);
	if (ret < 0) {
		free(mr);
		return ret;
	}
	*mrp = mr;
	return 0;
}

void nvmefs_mr_free(struct nvmefs_mr *mr)
{
	struct nvmefs_ctrl *ctrl;

	if (!mr)
		return;
	ctrl = mr->ctrl;
	pthread_mutex_lock(&ctrl->mr_lock);
	region_unlink(ctrl, mr);
	if (mr->tp)
		ctrl->ops->mr_dereg(mr);
	pthread_mutex_unlock(&ctrl->mr_lock);
	free(mr);
}

/*
 * The callers' regions are looked up without a lock, on every I/O, by any
 * queue's owner, while another thread may register or deregister a region.
 * Writers take mr_lock and publish with release stores; a reader follows
 * the list with acquire loads.  A deregistered region is unlinked at once
 * but its record is kept until the controller goes, since a reader may be
 * standing on it on its way down the list; its registration goes at once.
 */
int nvmefs_mr_reg(struct nvmefs_ctrl *ctrl, void *addr, size_t len, struct nvmefs_mr **mrp)
{
	struct nvmefs_mr *mr;
	int ret;

	ret = nvmefs_mr_new(ctrl, addr, len, &mr);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&ctrl->mr_lock);
	atomic_store_explicit(&mr->next, atomic_load_explicit(&ctrl->mrs, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&ctrl->mrs, mr, memory_order_release);
	pthread_mutex_unlock(&ctrl->mr_lock);
	*mrp = mr;
	return 0;
}

struct nvmefs_mr *nvmefs_mr_find(struct nvmefs_ctrl *ctrl, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (struct nvmefs_mr *mr = atomic_load_explicit(&ctrl->mrs, memory_order_acquire); mr;
	     mr = atomic_load_explicit(&mr->next, memory_order_acquire))
		if (p >= mr->addr && len <= mr->len && (size_t)(p - mr->addr) <= mr->len - len)
			return mr;
	return NULL;
}

void nvmefs_mr_dereg(struct nvmefs_mr *mr)
{
	_Atomic(struct nvmefs_mr *) *link;
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_mr *cur;

	if (!mr)
		return;
	ctrl = mr->ctrl;
	pthread_mutex_lock(&ctrl->mr_lock);
	for (link = &ctrl->mrs; (cur = atomic_load_explicit(link, memory_order_relaxed));
	     link = &cur->next) {
		if (cur == mr) {
			atomic_store_explicit(link, atomic_load_explicit(&mr->next,
									 memory_order_relaxed),
					      memory_order_release);
			break;
		}
	}
	region_unlink(ctrl, mr);
	if (mr->tp)
		ctrl->ops->mr_dereg(mr);
	mr->tp = NULL;
	/* Its next stays as it was: a reader on it still finds the rest. */
	mr->region_next = ctrl->retired;
	ctrl->retired = mr;
	pthread_mutex_unlock(&ctrl->mr_lock);
}

void nvmefs_mr_free_retired(struct nvmefs_ctrl *ctrl)
{
	struct nvmefs_mr *mr, *next;

	for (mr = ctrl->retired; mr; mr = next) {
		next = mr->region_next;
		free(mr);
	}
	ctrl->retired = NULL;
}

void nvmefs_ctrl_release_device(struct nvmefs_ctrl *ctrl)
{
	pthread_mutex_lock(&ctrl->mr_lock);
	for (struct nvmefs_mr *mr = ctrl->regions; mr; mr = mr->region_next) {
		if (!mr->tp)
			continue;
		ctrl->ops->mr_dereg(mr);
		mr->tp = NULL;
		/* A key used by mistake now is refused, not another region's. */
		mr->lkey = mr->rkey = 0;
	}
	ctrl->regions_released = true;
	if (ctrl->ops->ctrl_release)
		ctrl->ops->ctrl_release(ctrl);
	pthread_mutex_unlock(&ctrl->mr_lock);
}

int nvmefs_ctrl_register_again(struct nvmefs_ctrl *ctrl)
{
	int ret = 0;

	pthread_mutex_lock(&ctrl->mr_lock);
	if (!ctrl->regions_released)
		goto out;
	for (struct nvmefs_mr *mr = ctrl->regions; mr; mr = mr->region_next) {
		ret = ctrl->ops->mr_reg(ctrl, mr);
		if (ret < 0)
			goto undo;
	}
	ctrl->regions_released = false;
	goto out;
undo:
	/* All or none: the next attempt starts from a released device again. */
	for (struct nvmefs_mr *mr = ctrl->regions; mr; mr = mr->region_next) {
		if (mr->tp) {
			ctrl->ops->mr_dereg(mr);
			mr->tp = NULL;
			mr->lkey = mr->rkey = 0;
		}
	}
out:
	pthread_mutex_unlock(&ctrl->mr_lock);
	return ret;
}
