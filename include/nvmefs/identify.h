/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file identify.h
 * @brief What a controller tells of itself and its namespaces: Identify,
 * log pages and the namespaces' ANA states.  Part of <nvmefs/nvmefs.h>;
 * includes <nvmefs/discovery.h>, the discovery logs.
 *
 * Identify structures are libnvme's types
 * (<nvme/types.h>); this header only declares them, so it does not pull
 * libnvme in.
 */
#ifndef NVMEFS_PUBLIC_IDENTIFY_H
#define NVMEFS_PUBLIC_IDENTIFY_H

#include <stddef.h>
#include <stdint.h>

#include <nvmefs/discovery.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declared in <nvmefs/ctrl.h>; this header needs only pointers to them. */
struct nvmefs_ctrl;

/* libnvme's types, from <nvme/types.h>. */
struct nvme_id_ctrl;
struct nvme_id_ns;

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
