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
#include <stdlib.h>

#include "internal.h"

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

int nvmefs_mr_reg(struct nvmefs_ctrl *ctrl, void *addr, size_t len, struct nvmefs_mr **mrp)
{
	struct nvmefs_mr *mr;
	int ret;

	ret = nvmefs_mr_new(ctrl, addr, len, &mr);
	if (ret < 0)
		return ret;
	/* Queues look registrations up without a lock: publish it whole. */
	mr->next = atomic_load(&ctrl->mrs);
	while (!atomic_compare_exchange_weak(&ctrl->mrs, &mr->next, mr))
		;
	*mrp = mr;
	return 0;
}

void nvmefs_mr_dereg(struct nvmefs_mr *mr)
{
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_mr *prev;

	if (!mr)
		return;
	ctrl = mr->ctrl;
	/* The caller guarantees no I/O uses it; unlinking needs no more. */
	prev = atomic_load(&ctrl->mrs);
	if (prev == mr) {
		atomic_store(&ctrl->mrs, mr->next);
	} else {
		while (prev && prev->next != mr)
			prev = prev->next;
		if (prev)
			prev->next = mr->next;
	}
	nvmefs_mr_free(mr);
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
