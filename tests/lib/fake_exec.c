/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scripted target without a script (fake_exec, fake_transport.h): the
 * harness runs each command as its response is delivered.
 */
#include "config.h"

#include <string.h>

#include "fake_transport.h"
#include "fake_priv.h"
#include "types/ctrl_types.h"
#include "transport/queue.h"

const struct fake_exec *fake_exec;

/* fake_exec's command: its send completes at the next process(), its
 * response goes with it or waits to be released (its reply is made as it
 * is delivered, fake_exec_reply()). */
int fake_exec_submit(struct nvmefs_queue *q, struct fake_queue *fq, struct nvmefs_req *req)
{
	struct fake_event ev = { .req = req };

	fq->sq_model = (uint16_t)((fq->sq_model + 1) % q->size);
	fake_push_now(fq, &ev);
	ev.resp = true;
	if (fake_exec->hold && fake_exec->hold(q, req))
		fake_hold(fq, &ev);
	else
		fake_push_now(fq, &ev);
	return 0;
}

/* The response @ev of fake_exec's command, run now. */
void fake_exec_reply(struct nvmefs_queue *q, struct fake_queue *fq, struct fake_event *ev)
{
	struct nvmefs_req *req = ev->req;
	uint32_t dw0 = 0;
	uint16_t status;

	/* The target writes all of it; what the command leaves out is zeros. */
	if (req->len && req->dir == NVMEFS_DIR_FROM_CTRL)
		memset(req->data, 0, req->len);
	status = fake_exec->run(q, req, &dw0);
	ev->cqe.result.dw.dw0 = nvmefs_cpu_to_le32(dw0);
	ev->cqe.sq_head = nvmefs_cpu_to_le16(fq->sq_model);
	ev->cqe.sq_id = nvmefs_cpu_to_le16(q->qid);
	ev->cqe.cid = nvmefs_cpu_to_le16(req->cid);
	ev->cqe.status = nvmefs_cpu_to_le16((uint16_t)(status << 1));
}
