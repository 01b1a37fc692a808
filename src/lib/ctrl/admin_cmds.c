/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The admin commands built on nvmefs_admin_exec(): Identify (controller,
 * namespaces, the NVM command set's limits) and Get Log Page, and the
 * transfer limits they are cut to.  ctrl.c, recovery, namespaces, ANA,
 * asynchronous events and discovery call them; they call only down.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvme/util.h>

#include "admin.h"
#include "admin_cmds.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"
#include "../types/transport_ops.h"

/* As identify(), with the controller's status (0 if it answered none) in *@status. */
static int identify_status(struct nvmefs_ctrl *ctrl, uint8_t cns, uint32_t nsid, void *buf,
			   const char *what, uint16_t *status)
{
	union nvmefs_cmd cmd;
	struct nvmefs_cqe cqe;
	int ret;

	nvmefs_sqe_init(&cmd.sqe, nvme_admin_identify, 0);
	cmd.sqe.nsid = nvmefs_cpu_to_le32(nsid);
	cmd.sqe.cdw10 = nvmefs_cpu_to_le32(cns);
	*status = 0;
	ret = nvmefs_admin_exec(ctrl, &cmd, buf, NVMEFS_IDENTIFY_DATA_SIZE, NVMEFS_DIR_FROM_CTRL,
				&cqe);
	if (ret != -EREMOTEIO)
		return ret;
	*status = nvmefs_cqe_status(&cqe);
	return nvmefs_error(nvmefs_cqe_sc(&cqe) == NVME_SC_INVALID_NS ? -ENOENT : -EIO,
			    "Identify %s of %s failed: %s", what, ctrl->subnqn,
			    nvme_status_to_string(nvmefs_cqe_status(&cqe), false));
}

static int identify(struct nvmefs_ctrl *ctrl, uint8_t cns, uint32_t nsid, void *buf,
		    const char *what)
{
	uint16_t status;

	return identify_status(ctrl, cns, nsid, buf, what, &status);
}

int nvmefs_identify_ctrl(struct nvmefs_ctrl *ctrl, struct nvme_id_ctrl *id)
{
	return identify(ctrl, NVME_IDENTIFY_CNS_CTRL, 0, id, "Controller");
}

int nvmefs_identify_ns(struct nvmefs_ctrl *ctrl, uint32_t nsid, struct nvme_id_ns *ns)
{
	uint16_t status;

	return nvmefs_identify_ns_status(ctrl, nsid, ns, &status);
}

int nvmefs_identify_ns_status(struct nvmefs_ctrl *ctrl, uint32_t nsid, struct nvme_id_ns *ns,
			      uint16_t *status)
{
	char what[32];
	int ret;

	snprintf(what, sizeof(what), "Namespace %u", nsid);
	ret = identify_status(ctrl, NVME_IDENTIFY_CNS_NS, nsid, ns, what, status);
	if (ret < 0)
		return ret;
	/* An inactive NSID identifies as all zeros. */
	if (!ns->nsze && !ns->ncap && !ns->nlbaf && !ns->flbas)
		return nvmefs_error(-ENOENT, "namespace %u is not active on %s: list the active "
				    "namespaces with 'nvmefs identify --list-ns'", nsid, ctrl->subnqn);
	return 0;
}

int nvmefs_identify_active_ns(struct nvmefs_ctrl *ctrl, uint32_t after,
			      uint32_t list[NVMEFS_NS_LIST_LEN])
{
	uint32_t i;
	int ret;

	ret = identify(ctrl, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, after, list,
		       "Active Namespace ID list");
	if (ret < 0)
		return ret;
	for (i = 0; i < NVMEFS_NS_LIST_LEN; i++)
		list[i] = nvmefs_le32_to_cpu(list[i]);
	return 0;
}

int nvmefs_identify_ns_descs(struct nvmefs_ctrl *ctrl, uint32_t nsid, void *buf)
{
	char what[64];

	snprintf(what, sizeof(what), "Namespace %u Identification Descriptors", nsid);
	return identify(ctrl, NVME_IDENTIFY_CNS_NS_DESC_LIST, nsid, buf, what);
}

uint32_t nvmefs_ctrl_limit_xfer(const struct nvmefs_ctrl *ctrl, uint32_t max)
{
	/* MDTS counts in minimum pages (2^(12 + CAP.MPSMIN) bytes); 0 means no
	 * limit, and neither does one of 4 GiB or more (the shift can reach
	 * 12 + 15 + 255), since no transfer here is described in more than
	 * 32 bits. */
	unsigned int shift = 12 + (unsigned int)NVME_CAP_MPSMIN(ctrl->cap) + ctrl->id.mdts;

	if (ctrl->id.mdts && shift < 32 && ((uint32_t)1 << shift) < max)
		return (uint32_t)1 << shift;
	return max;
}

int nvmefs_ctrl_read_nvm_limits(struct nvmefs_ctrl *ctrl)
{
	struct nvme_id_ctrl_nvm *id;
	union nvmefs_cmd cmd;
	struct nvmefs_cqe cqe;
	unsigned int shift;
	int ret;

	ctrl->max_zeroes_bytes = 0;
	ctrl->max_dealloc_blocks = 0;
	/* CNS 06h came with NVMe 2.0; Linux asks nothing older either. */
	if (NVME_VS_MJR(ctrl->vs) < 2)
		return 0;
	id = aligned_alloc(4096, sizeof(*id));
	if (!id)
		return nvmefs_error(-ENOMEM, "out of memory");
	nvmefs_sqe_init(&cmd.sqe, nvme_admin_identify, 0);
	cmd.sqe.cdw10 = nvmefs_cpu_to_le32(NVME_IDENTIFY_CNS_CSI_CTRL);
	cmd.sqe.cdw11 = nvmefs_cpu_to_le32((uint32_t)NVME_CSI_NVM << 24);
	ret = nvmefs_admin_exec(ctrl, &cmd, id, NVMEFS_IDENTIFY_DATA_SIZE, NVMEFS_DIR_FROM_CTRL,
				&cqe);
	if (ret == -EREMOTEIO) {
		/* Refused: a controller without these limits. */
		ret = 0;
		goto out;
	}
	if (ret < 0)
		goto out;
	/* WZSL counts in minimum pages, as a power of two; one past 2^63
	 * bytes is no limit. */
	shift = 12 + (unsigned int)NVME_CAP_MPSMIN(ctrl->cap) + id->wzsl;
	if (id->wzsl && shift < 64)
		ctrl->max_zeroes_bytes = (uint64_t)1 << shift;
	ctrl->max_dealloc_blocks = nvmefs_le32_to_cpu(id->dmrsl);
out:
	free(id);
	return ret;
}

uint32_t nvmefs_ctrl_admin_max_xfer(const struct nvmefs_ctrl *ctrl)
{
	return nvmefs_ctrl_limit_xfer(ctrl, ctrl->admin.nr_reqs ?
				      ctrl->admin.reqs[0].data_slot_size : 0);
}

int nvmefs_get_log_page(struct nvmefs_ctrl *ctrl, uint8_t lid, uint32_t nsid,
			uint64_t offset, void *buf, size_t len)
{
	int ret = nvmefs_get_log_page_mr(ctrl, lid, nsid, offset, buf, len, NULL);

	return ret < 0 ? ret : 0;
}

int nvmefs_get_log_page_mr(struct nvmefs_ctrl *ctrl, uint8_t lid, uint32_t nsid,
			   uint64_t offset, void *buf, size_t len, struct nvmefs_mr *mr)
{
	uint32_t chunk_max = mr ? nvmefs_ctrl_limit_xfer(ctrl, NVMEFS_LOG_MR_MAX_XFER)
			     : nvmefs_ctrl_admin_max_xfer(ctrl);
	uint8_t *p = buf;
	int ret, commands = 0;

	if ((len | offset) & 3)
		return nvmefs_error(-EINVAL, "log page reads are in whole dwords, not %zu bytes at %llu",
				    len, (unsigned long long)offset);
	while (len) {
		uint32_t chunk = len < chunk_max ? (uint32_t)len : chunk_max;
		uint32_t numd = chunk / 4 - 1;
		union nvmefs_cmd cmd;
		struct nvmefs_cqe cqe;

		nvmefs_sqe_init(&cmd.sqe, nvme_admin_get_log_page, 0);
		cmd.sqe.nsid = nvmefs_cpu_to_le32(nsid);
		cmd.sqe.cdw10 = nvmefs_cpu_to_le32(lid | (numd & 0xffff) << 16);
		cmd.sqe.cdw11 = nvmefs_cpu_to_le32(numd >> 16);
		cmd.sqe.cdw12 = nvmefs_cpu_to_le32((uint32_t)offset);
		cmd.sqe.cdw13 = nvmefs_cpu_to_le32((uint32_t)(offset >> 32));
		ret = nvmefs_admin_exec_mr(ctrl, &cmd, p, chunk, mr, NVMEFS_DIR_FROM_CTRL, &cqe);
		if (ret == -EREMOTEIO)
			return nvmefs_error(-EIO, "Get Log Page %#x (%u bytes at %llu) from %s failed: %s",
					    lid, chunk, (unsigned long long)offset,
					    nvmefs_ctrl_where(ctrl),
					    nvme_status_to_string(nvmefs_cqe_status(&cqe), false));
		if (ret < 0)
			return ret;
		p += chunk;
		offset += chunk;
		len -= chunk;
		commands++;
	}
	return commands;
}
