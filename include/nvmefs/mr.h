/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file mr.h
 * @brief Memory registered with a controller's transport, which I/O moves
 * data straight to and from, and what the registrations pin.  Part of
 * <nvmefs/nvmefs.h>.
 */
#ifndef NVMEFS_PUBLIC_MR_H
#define NVMEFS_PUBLIC_MR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declared in <nvmefs/ctrl.h>; this header needs only a pointer to it. */
struct nvmefs_ctrl;

/** Memory registered once with the transport's device, usable on every queue. */
struct nvmefs_mr;

/**
 * Register @len bytes at @addr once, so I/O can move data straight to and
 * from them on any queue of @ctrl.  Release with nvmefs_mr_dereg() before
 * the controller goes.
 */
int nvmefs_mr_reg(struct nvmefs_ctrl *ctrl, void *addr, size_t len,
		  struct nvmefs_mr **mrp);
/**
 * Release a registration; no I/O may be using it.  Other threads may go on
 * doing I/O with other regions, and registering and releasing them,
 * meanwhile: lookups take no lock, so the handle's memory is kept until
 * the controller goes (some 100 bytes a registration).
 */
void nvmefs_mr_dereg(struct nvmefs_mr *mr);

/**
 * The bytes of memory the controller has registered with its RDMA device
 * now, which the kernel pins (VmPin in /proc/PID/status): its queues'
 * commands, responses and buffer pools, and every region registered
 * through it, each rounded out to whole pages.  What a locked-memory limit
 * has to cover.
 */
uint64_t nvmefs_ctrl_pinned_bytes(const struct nvmefs_ctrl *ctrl);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_MR_H */
