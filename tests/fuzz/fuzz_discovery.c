/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness: discovery as a hostile target runs it.  A scripted
 * transport answers every admin command of a connect with success, and
 * every Get Log Page with the next bytes of the input (from the start
 * again once it runs out), so the generation counter, the record count
 * and the records change between reads as the fuzzer likes, and records
 * that are referrals send nvmefs_discover() on to other "targets", two
 * deep at most.  Whatever the pages say, the walk ends and frees what it
 * took.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nvme/types.h>

#include "../../src/lib/types/ctrl_types.h"
#include "../../src/lib/transport/mr.h"
#include "../../src/lib/transport/queue.h"
#include "../../src/lib/transport/transport.h"
#include "../../src/lib/types/transport_ops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *input;
static size_t input_len, cursor;

struct fz_queue {
	union nvmefs_cmd *capsules;
	uint8_t *slots;
	struct nvmefs_req *done[64];
	struct nvmefs_cqe cqe[64];
	unsigned int nr_done;
};

static int fz_create(struct nvmefs_queue *q, const struct nvmefs_queue_params *params)
{
	struct fz_queue *fq = calloc(1, sizeof(*fq));

	if (!fq)
		return -ENOMEM;
	fq->capsules = calloc(q->nr_reqs, sizeof(*fq->capsules));
	fq->slots = calloc(q->nr_reqs, params->data_slot_size);
	if (!fq->capsules || !fq->slots)
		abort();
	for (uint16_t i = 0; i < q->nr_reqs; i++) {
		q->reqs[i].cmd = &fq->capsules[i];
		q->reqs[i].data_slot = fq->slots + (size_t)i * params->data_slot_size;
		q->reqs[i].data_slot_size = params->data_slot_size;
	}
	q->tp = fq;
	return 0;
}

static void fz_destroy(struct nvmefs_queue *q)
{
	struct fz_queue *fq = q->tp;

	if (!fq)
		return;
	free(fq->capsules);
	free(fq->slots);
	free(fq);
	q->tp = NULL;
}

/* The next @len bytes of the input, over and over; zeros without one. */
static void fill(uint8_t *dst, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		dst[i] = input_len ? input[cursor] : 0;
		cursor = input_len ? (cursor + 1) % input_len : 0;
	}
}

static int fz_submit(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	struct fz_queue *fq = q->tp;
	const struct nvmefs_sqe *sqe = &req->cmd->sqe;
	struct nvmefs_cqe *cqe;
	uint32_t dw0 = 0;

	if (fq->nr_done == 64)
		return -EAGAIN;
	if (sqe->opcode == nvme_admin_fabrics) {
		/* Connect: controller 1; Property Get: CAP (MQES 1023), VS, and a
		 * CSTS both ready and shut down, for enabling and for leaving. */
		dw0 = req->cmd->fabrics.fctype == nvme_fabrics_type_connect ? 1
		      : req->cmd->fabrics.fctype == nvme_fabrics_type_property_get
			? (nvmefs_le32_to_cpu(req->cmd->prop_get.offset) == NVME_REG_CAP ? 0x3ff
			   : nvmefs_le32_to_cpu(req->cmd->prop_get.offset) == NVME_REG_VS ? 0x10400
			   : 0x9)
			: 0;
	} else if (sqe->opcode == nvme_admin_get_log_page && req->data) {
		fill(req->data, req->len);
	} else if (req->data && req->dir == NVMEFS_DIR_FROM_CTRL) {
		memset(req->data, 0, req->len);
	}
	cqe = &fq->cqe[fq->nr_done];
	memset(cqe, 0, sizeof(*cqe));
	cqe->cid = nvmefs_cpu_to_le16(req->cid);
	cqe->sq_head = nvmefs_cpu_to_le16(0xffff);
	cqe->result.dw.dw0 = nvmefs_cpu_to_le32(dw0);
	fq->done[fq->nr_done++] = req;
	return 0;
}

static int fz_process(struct nvmefs_queue *q, int timeout_ms)
{
	struct fz_queue *fq = q->tp;
	unsigned int n = fq->nr_done;

	(void)timeout_ms;
	fq->nr_done = 0;
	for (unsigned int i = 0; i < n; i++) {
		nvmefs_queue_send_done(q, fq->done[i]);
		nvmefs_queue_response(q, &fq->cqe[i]);
	}
	return (int)n;
}

static void fz_release(struct nvmefs_ctrl *ctrl)
{
	(void)ctrl;
}

/* A log larger than a data slot is read into memory registered for it:
 * nothing to register here, the answer is written where the request says. */
static int fz_mr_reg(struct nvmefs_ctrl *ctrl, struct nvmefs_mr *mr)
{
	(void)ctrl;
	mr->tp = mr;
	return 0;
}

static void fz_mr_dereg(struct nvmefs_mr *mr)
{
	mr->tp = NULL;
}

static const struct nvmefs_transport_ops fz_ops = {
	.name = "fuzz",
	.queue_create = fz_create,
	.queue_destroy = fz_destroy,
	.submit = fz_submit,
	.process = fz_process,
	.ctrl_release = fz_release,
	.mr_reg = fz_mr_reg,
	.mr_dereg = fz_mr_dereg,
};

static int on_log(const struct nvmefs_connect_opts *where, const struct nvmf_discovery_log *log,
		  int depth, void *arg)
{
	(void)where;
	(void)log;
	(void)depth;
	(void)arg;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvmefs_connect_opts opts;

	input = data;
	input_len = size;
	cursor = 0;
	nvmefs_transport_override = &fz_ops;
	nvmefs_connect_opts_init(&opts);
	opts.traddr = "192.0.2.1";
	opts.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:0f8fad5b-d9cb-469f-a165-70867728950e";
	opts.hostid = "5d8d1c3a-1d55-4f0e-9b6c-2f9f6f2b7c11";
	opts.ctrl_loss_tmo_s = 0;
	nvmefs_discover(&opts, 2, on_log, NULL);
	return 0;
}
