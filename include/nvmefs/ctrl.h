/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file ctrl.h
 * @brief A controller handle: connecting, disconnecting, and what it was
 * connected with.  Part of <nvmefs/nvmefs.h>, which programs include.
 *
 * A controller handle is used by one thread at a time.
 */
#ifndef NVMEFS_PUBLIC_CTRL_H
#define NVMEFS_PUBLIC_CTRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What ctrl.h declared before it was split by layer, so that a program
 * that includes it alone still compiles. */
#include <nvmefs/connect_opts.h>
#include <nvmefs/error.h>
#include <nvmefs/transport.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libnvme's types, from <nvme/types.h>. */
struct nvme_id_ctrl;

/** A connected controller: its admin queue and what it told us. */
struct nvmefs_ctrl;

/**
 * Connect to a controller: establish the admin queue's connection over
 * the transport @opts names, send Fabrics Connect, enable the controller and identify it.
 * On success *@ctrlp is a handle to release with nvmefs_ctrl_disconnect().
 */
int nvmefs_ctrl_connect(const struct nvmefs_connect_opts *opts,
			struct nvmefs_ctrl **ctrlp);

/**
 * Shut the controller down in order (CC.SHN, then wait for CSTS.SHST),
 * tear down its queues and free the handle.  A NULL handle is ignored.
 */
void nvmefs_ctrl_disconnect(struct nvmefs_ctrl *ctrl);

/** The controller id the target assigned in Connect. */
uint16_t nvmefs_ctrl_cntlid(const struct nvmefs_ctrl *ctrl);
/** The host NQN the controller was connected with. */
const char *nvmefs_ctrl_hostnqn(const struct nvmefs_ctrl *ctrl);
/** The host identifier the controller was connected with, as a UUID string. */
const char *nvmefs_ctrl_hostid(const struct nvmefs_ctrl *ctrl);
/** The target address and service id the controller was connected to. */
const char *nvmefs_ctrl_traddr(const struct nvmefs_ctrl *ctrl);
const char *nvmefs_ctrl_trsvcid(const struct nvmefs_ctrl *ctrl);
/** Since 0.2.  The transport the controller is connected over, by the name
 *  nvmefs_connect_opts.trtype takes ("rdma", "tcp"). */
const char *nvmefs_ctrl_trtype(const struct nvmefs_ctrl *ctrl);
/** Since 0.2.  The TLS 1.3 cipher suite the controller's queues run
 *  ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"), NULL without TLS. */
const char *nvmefs_ctrl_tls_suite(const struct nvmefs_ctrl *ctrl);
/** The subsystem NQN the controller belongs to. */
const char *nvmefs_ctrl_subnqn(const struct nvmefs_ctrl *ctrl);
/** Whether each transfer gets a remote key of its own (rkey_per_io). */
int nvmefs_ctrl_rkey_per_io(const struct nvmefs_ctrl *ctrl);

/** Since 0.2.  What the per-I/O remote keys of a controller went through
 *  since it connected, over its reconnects; all 0 with standing keys. */
struct nvmefs_rkey_stats {
	/** Whether each transfer gets a key of its own (rkey_per_io). */
	bool per_io;
	/** Keys bound to one transfer's buffer (a memory window bound for
	 *  one command, counted once the command after the bind is sent). */
	uint64_t bound;
	/** Of those, killed by the target with its response (Send with
	 *  Invalidate) ... */
	uint64_t invalidated_by_target;
	/** ... and by us, because the response left the key alive. */
	uint64_t invalidated_locally;
};
/** Since 0.2.  Fill @st with the controller's key counts; safe from any
 *  thread.  With no command in flight, bound equals the two invalidated
 *  counts together, unless a queue failed meanwhile: its keys die with its
 *  connection, uncounted. */
void nvmefs_ctrl_rkey_stats(const struct nvmefs_ctrl *ctrl, struct nvmefs_rkey_stats *st);
/** Whether the controller is a discovery controller. */
int nvmefs_ctrl_is_discovery(const struct nvmefs_ctrl *ctrl);
/** The controller's cached Identify Controller data. */
const struct nvme_id_ctrl *nvmefs_ctrl_id(const struct nvmefs_ctrl *ctrl);

/**
 * Read the controller property at @offset (NVME_REG_CAP, NVME_REG_VS,
 * NVME_REG_CC, NVME_REG_CSTS, ...); 8-byte properties are read whole.
 */
int nvmefs_ctrl_get_property(struct nvmefs_ctrl *ctrl, uint32_t offset,
			     uint64_t *value);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_CTRL_H */
