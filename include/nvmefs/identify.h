/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file identify.h
 * @brief What a controller tells of itself and its namespaces: Identify,
 * log pages, the namespaces' ANA states, and discovery logs, one or a walk
 * through referrals.  Part of <nvmefs/nvmefs.h>.
 *
 * Identify structures and the discovery log are libnvme's types
 * (<nvme/types.h>); this header only declares them, so it does not pull
 * libnvme in.
 */
#ifndef NVMEFS_PUBLIC_IDENTIFY_H
#define NVMEFS_PUBLIC_IDENTIFY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declared in <nvmefs/ctrl.h>; this header needs only pointers to them. */
struct nvmefs_ctrl;
struct nvmefs_connect_opts;

/* libnvme's types, from <nvme/types.h>. */
struct nvme_id_ctrl;
struct nvme_id_ns;
struct nvmf_discovery_log;
struct nvmf_disc_log_entry;

/** Entries in an Identify active namespace list. */
#define NVMEFS_NS_LIST_LEN 1024
/** Bytes of Identify data (controller, namespace, lists, descriptors). */
#define NVMEFS_IDENTIFY_DATA_SIZE 4096

/** Identify Controller, read afresh. */
int nvmefs_identify_ctrl(struct nvmefs_ctrl *ctrl, struct nvme_id_ctrl *id);
/** Identify Namespace @nsid. */
int nvmefs_identify_ns(struct nvmefs_ctrl *ctrl, uint32_t nsid,
		       struct nvme_id_ns *ns);
/**
 * Identify Active Namespace ID list: up to NVMEFS_NS_LIST_LEN NSIDs greater
 * than @after, in increasing order, zero-terminated when shorter.
 */
int nvmefs_identify_active_ns(struct nvmefs_ctrl *ctrl, uint32_t after,
			      uint32_t list[NVMEFS_NS_LIST_LEN]);
/**
 * Identify Namespace Identification Descriptor list of @nsid into @buf
 * (NVMEFS_IDENTIFY_DATA_SIZE bytes, struct nvme_ns_id_desc entries).
 */
int nvmefs_identify_ns_descs(struct nvmefs_ctrl *ctrl, uint32_t nsid,
			     void *buf);
/**
 * Get Log Page @lid for @nsid, @len bytes from byte @offset of the log.
 * @len is a multiple of 4; long reads are split as the controller needs.
 */
int nvmefs_get_log_page(struct nvmefs_ctrl *ctrl, uint8_t lid, uint32_t nsid,
			uint64_t offset, void *buf, size_t len);

/**
 * Read the discovery log of a discovery controller consistently: the
 * header, then the whole log, in one command where the controller allows
 * it, else in pieces followed by the header again; re-read until it holds
 * still (a bounded number of times).  *@logp is allocated; free() it.
 */
int nvmefs_get_discovery_log(struct nvmefs_ctrl *ctrl,
			     struct nvmf_discovery_log **logp);

/**
 * Called by nvmefs_discover() for each discovery log read: @where is the
 * discovery controller it came from, with the host NQN and host ID that
 * were used filled in, @depth 0 for the first and n for one
 * reached through n referrals.  @log is NULL when a referred controller
 * could not be read: nvmefs_errmsg() says why, and returning 0 goes on
 * with the rest of the walk.  A non-zero return stops the walk and is
 * returned by nvmefs_discover().
 */
typedef int (*nvmefs_discovery_cb)(const struct nvmefs_connect_opts *where,
				   const struct nvmf_discovery_log *log,
				   int depth, void *arg);

/**
 * Read the discovery log at @opts (subnqn NULL means the well-known
 * discovery NQN) and, up to @max_depth referrals deep, the logs of the
 * discovery controllers it refers to, each at most once.  Fails only when
 * the first log cannot be read or @cb stops the walk; a referral that
 * cannot be followed is reported to @cb.
 */
int nvmefs_discover(const struct nvmefs_connect_opts *opts, int max_depth,
		    nvmefs_discovery_cb cb, void *arg);

/**
 * How this controller reaches namespace @nsid, by its ANA group's state:
 * 1 optimized, 2 non-optimized, 3 inaccessible, 4 persistent loss, 15 in
 * change (enum nvme_ana_state); 1 on a controller without ANA reporting.
 * Negative errno if the namespace is not known.
 */
int nvmefs_ns_ana_state(const struct nvmefs_ctrl *ctrl, uint32_t nsid);
/** "optimized", "non-optimized", "inaccessible", "persistent-loss", "change"
 *  or "unknown". */
const char *nvmefs_ana_state_name(int state);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_IDENTIFY_H */
