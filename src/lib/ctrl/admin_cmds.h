/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Identify, Get Log Page and the transfer limits (admin_cmds.c). */
#ifndef NVMEFS_ADMIN_CMDS_H
#define NVMEFS_ADMIN_CMDS_H

#include <stddef.h>
#include <stdint.h>

#include "../types/ctrl_types.h"

/* As nvmefs_identify_ns(), with the status the controller answered (0 if
 * none) in *@status. */
int nvmefs_identify_ns_status(struct nvmefs_ctrl *ctrl, uint32_t nsid, struct nvme_id_ns *ns,
			      uint16_t *status);
/* The Command Retry Delay a status (15 bits, without the phase) asks for:
 * its CRD field indexes Identify Controller's CRDT, in 100 ms. */
static inline int64_t nvmefs_crd_delay_ms(const struct nvmefs_ctrl *ctrl, uint16_t status)
{
	const uint16_t crdt[3] = { ctrl->id.crdt1, ctrl->id.crdt2, ctrl->id.crdt3 };
	unsigned int crd = (status >> 11) & 0x3;

	return crd ? (int64_t)nvmefs_le16_to_cpu(crdt[crd - 1]) * 100 : 0;
}
/* The controller's largest transfer in one command, from MDTS and the
 * admin queue's data slots. */
uint32_t nvmefs_ctrl_admin_max_xfer(const struct nvmefs_ctrl *ctrl);
/* The largest piece of a log read into registered memory: MDTS permitting,
 * as much as nvmet-rdma takes in one command (its MDTS). */
#define NVMEFS_LOG_MR_MAX_XFER (1u << 20)
/*
 * nvmefs_get_log_page() into @buf inside @mr (registered for the read, or
 * NULL: through the admin data slots), in pieces as the controller needs.
 * Returns how many commands it took, or -errno.
 */
int nvmefs_get_log_page_mr(struct nvmefs_ctrl *ctrl, uint8_t lid, uint32_t nsid,
			   uint64_t offset, void *buf, size_t len, struct nvmefs_mr *mr);
/* The NVM command set's Write Zeroes and Deallocate limits of an I/O
 * controller, into max_zeroes_bytes and max_dealloc_blocks. */
int nvmefs_ctrl_read_nvm_limits(struct nvmefs_ctrl *ctrl);
/* @max, or less if the controller's MDTS says so. */
uint32_t nvmefs_ctrl_limit_xfer(const struct nvmefs_ctrl *ctrl, uint32_t max);

#endif /* NVMEFS_ADMIN_CMDS_H */
