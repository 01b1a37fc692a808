/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transport-neutral NVMe over Fabrics: Fabrics Connect and controller
 * properties (who the host is: host_id.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/fabrics.h>
#include <nvme/util.h>

#include "admin.h"
#include "auth.h"
#include "fabrics.h"
#include "../base/error.h"
#include "../state/ctrl_state.h"
#include "../types/ctrl_types.h"
#include "../transport/queue.h"
#include "../types/transport_ops.h"

static int connect_error(struct nvmefs_ctrl *ctrl, struct nvmefs_queue *q,
			 const struct nvmefs_cqe *cqe)
{
	uint16_t status = nvmefs_cqe_status(cqe);
	uint16_t ipo = nvmefs_connect_rsp_ipo(cqe);
	bool in_data = nvmefs_connect_rsp_iattr(cqe);

	if (nvmefs_cqe_sct(cqe) == NVME_SCT_CMD_SPECIFIC) {
		switch (nvmefs_cqe_sc(cqe)) {
		case NVME_SC_CONNECT_INVALID_HOST:
			return nvmefs_error(-EACCES,
					    "subsystem %s at %s does not allow host %s: add this host NQN "
					    "to the subsystem's allowed hosts, or connect as a host it "
					    "allows (-q)", ctrl->subnqn, nvmefs_ctrl_where(ctrl),
					    ctrl->hostnqn);
		case NVME_SC_CONNECT_INVALID_PARAM:
			if (in_data && ipo == offsetof(struct nvmf_connect_data, subsysnqn))
				return nvmefs_error(-ENOENT,
						    "%s has no subsystem %s: list the subsystems it offers "
						    "with 'nvmefs discover -a %s -s %s'", nvmefs_ctrl_where(ctrl),
						    ctrl->subnqn, ctrl->traddr, ctrl->trsvcid);
			if (in_data && ipo == offsetof(struct nvmf_connect_data, hostnqn))
				return nvmefs_error(-EINVAL, "%s refused the host NQN %s as invalid: "
						    "pass a valid one with -q", nvmefs_ctrl_where(ctrl),
						    ctrl->hostnqn);
			if (!in_data && ipo == offsetof(struct nvmefs_connect_cmd, sqsize))
				return nvmefs_error(-EINVAL, "%s refused queue %u's size of %u entries: "
						    "use a smaller queue size", nvmefs_ctrl_where(ctrl),
						    q->qid, q->size);
			break;
		case NVME_SC_CONNECT_CTRL_BUSY:
			return nvmefs_error(-EBUSY, "the controller of %s at %s is busy: try again later",
					    ctrl->subnqn, nvmefs_ctrl_where(ctrl));
		default:
			break;
		}
	}
	/* A Connect for a queue the controller still has (io_queues.c's first
	 * connect of a queue waits for it to let go). */
	if (q->qid && nvmefs_cqe_sct(cqe) == NVME_SCT_GENERIC &&
	    nvmefs_cqe_sc(cqe) == NVME_SC_CMD_SEQ_ERROR)
		return nvmefs_error(-EADDRINUSE, "Connect of queue %u to %s at %s failed: the "
				    "controller still has a queue %u (Command Sequence Error)",
				    q->qid, ctrl->subnqn, nvmefs_ctrl_where(ctrl), q->qid);
	return nvmefs_error(-ECONNREFUSED, "Connect of queue %u to %s at %s failed: %s "
			    "(status %#x%s%s): check the subsystem NQN and host NQN",
			    q->qid, ctrl->subnqn, nvmefs_ctrl_where(ctrl),
			    nvme_status_to_string(status, true), status,
			    nvmefs_cqe_dnr(cqe) ? ", do not retry" : "",
			    in_data ? ", in the connect data" : "");
}

int nvmefs_fabrics_connect(struct nvmefs_ctrl *ctrl, struct nvmefs_queue *q, uint32_t kato_ms)
{
	struct nvmefs_cqe cqe;
	struct nvmefs_req *req;
	int ret;

	req = nvmefs_req_get(q);
	if (!req)
		return nvmefs_error(-EBUSY, "queue %u: no free request slot for Connect", q->qid);
	ret = nvmefs_connect_encode(req->cmd, 0, q->qid, (uint16_t)(q->size - 1),
				    ctrl->opts.disable_sqflow ? NVMEFS_CONNECT_CATTR_DISABLE_SQFLOW : 0,
				    q->qid ? 0 : kato_ms);
	if (ret < 0) {
		ret = nvmefs_error(ret, "queue %u: cannot build Connect for %u entries", q->qid, q->size);
		goto out;
	}
	req->data = req->data_slot;
	req->len = sizeof(struct nvmf_connect_data);
	req->dir = NVMEFS_DIR_TO_CTRL;
	ret = nvmefs_connect_data_init(req->data, ctrl->hostid,
				       q->qid ? ctrl->cntlid : NVMEFS_CNTLID_DYNAMIC,
				       ctrl->subnqn, ctrl->hostnqn);
	if (ret < 0) {
		ret = nvmefs_error(ret, "the subsystem or host NQN is too long for Connect");
		goto out;
	}
	ret = nvmefs_req_exec(req, ctrl->opts.timeout_ms);
	if (ret < 0)
		goto out;
	if (!nvmefs_cqe_ok(&req->cqe)) {
		ret = connect_error(ctrl, q, &req->cqe);
		goto out;
	}
	if (q->qid == 0)
		ctrl->cntlid = nvmefs_connect_rsp_cntlid(&req->cqe);
	cqe = req->cqe;
	/* Authentication takes request slots of its own. */
	nvmefs_req_put(req);
	return nvmefs_auth_connected(ctrl, q, &cqe);
out:
	nvmefs_req_put(req);
	return ret;
}

static const char *prop_name(uint32_t offset)
{
	switch (offset) {
	case NVME_REG_CAP: return "CAP";
	case NVME_REG_VS: return "VS";
	case NVME_REG_CC: return "CC";
	case NVME_REG_CSTS: return "CSTS";
	default: return "a property";
	}
}

int nvmefs_prop_get(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t *value)
{
	union nvmefs_cmd cmd;
	struct nvmefs_cqe cqe;
	unsigned int size = nvmefs_prop_size(offset);
	int ret;

	ret = nvmefs_prop_get_encode(&cmd, 0, offset, size);
	if (ret < 0)
		return nvmefs_error(ret, "no property at offset %#x", offset);
	ret = nvmefs_admin_exec(ctrl, &cmd, NULL, 0, NVMEFS_DIR_NONE, &cqe);
	if (ret == -EREMOTEIO)
		return nvmefs_error(-EIO, "reading %s of %s failed: %s", prop_name(offset),
				    nvmefs_ctrl_where(ctrl),
				    nvme_status_to_string(nvmefs_cqe_status(&cqe), true));
	if (ret < 0)
		return ret;
	*value = size == 8 ? nvmefs_cqe_result64(&cqe) : nvmefs_cqe_dw0(&cqe);
	return 0;
}

int nvmefs_prop_set(struct nvmefs_ctrl *ctrl, uint32_t offset, uint64_t value)
{
	union nvmefs_cmd cmd;
	struct nvmefs_cqe cqe;
	int ret;

	ret = nvmefs_prop_set_encode(&cmd, 0, offset, nvmefs_prop_size(offset), value);
	if (ret < 0)
		return nvmefs_error(ret, "no property at offset %#x", offset);
	ret = nvmefs_admin_exec(ctrl, &cmd, NULL, 0, NVMEFS_DIR_NONE, &cqe);
	if (ret == -EREMOTEIO)
		return nvmefs_error(-EIO, "writing %s of %s failed: %s", prop_name(offset),
				    nvmefs_ctrl_where(ctrl),
				    nvme_status_to_string(nvmefs_cqe_status(&cqe), true));
	return ret;
}
