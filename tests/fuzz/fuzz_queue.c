/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness: the completion path of a queue (queue.c) against a
 * hostile target.  The input is a program of 5-byte steps on a queue of 16
 * entries: submit a command, complete a posted send (as the device does,
 * once per posted send), or deliver a response with any command id, SQ
 * head and status.  Whatever the responses, every request ends once, and
 * the queue can always be torn down.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/types/ctrl_types.h"
#include "../../src/lib/transport/queue.h"
#include "../../src/lib/types/transport_ops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static union nvmefs_cmd capsules[64];
static bool posted[64];

static int fz_submit(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	(void)q;
	posted[req->slot] = true;
	return 0;
}

static int fz_process(struct nvmefs_queue *q, int timeout_ms)
{
	(void)q;
	(void)timeout_ms;
	return 0;
}

static const struct nvmefs_transport_ops fz_ops = {
	.name = "fuzz",
	.submit = fz_submit,
	.process = fz_process,
};

static void fz_done(struct nvmefs_req *req)
{
	nvmefs_req_put(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvmefs_queue_params params = { .qid = 1, .size = 16 };
	struct nvmefs_ctrl *ctrl = calloc(1, sizeof(*ctrl));
	struct nvmefs_queue q;

	if (!ctrl)
		abort();
	ctrl->ops = &fz_ops;
	pthread_mutex_init(&ctrl->state_lock, NULL);
	pthread_cond_init(&ctrl->state_cond, NULL);
	if (nvmefs_queue_init(&q, ctrl, &params) < 0)
		abort();
	memset(posted, 0, sizeof(posted));
	for (uint16_t i = 0; i < q.nr_reqs; i++)
		q.reqs[i].cmd = &capsules[i];
	for (size_t off = 0; off + 5 <= size; off += 5) {
		const uint8_t *s = data + off;
		uint16_t a = (uint16_t)(s[1] | s[2] << 8), b = (uint16_t)(s[3] | s[4] << 8);

		switch (s[0] % 3) {
		case 0: {
			struct nvmefs_req *req = nvmefs_req_get(&q);

			if (!req)
				break;
			req->done = fz_done;
			if (nvmefs_req_submit(req) < 0)
				nvmefs_req_put(req);
			break;
		}
		case 1: {
			uint16_t slot = a % q.nr_reqs;

			if (posted[slot]) {
				posted[slot] = false;
				nvmefs_queue_send_done(&q, &q.reqs[slot]);
			}
			break;
		}
		default: {
			struct nvmefs_cqe cqe;

			memset(&cqe, 0, sizeof(cqe));
			cqe.cid = nvmefs_cpu_to_le16(a);
			cqe.sq_head = nvmefs_cpu_to_le16(b);
			cqe.sq_id = nvmefs_cpu_to_le16(1);
			cqe.status = nvmefs_cpu_to_le16((uint16_t)(s[0] << 8 | s[3]));
			nvmefs_queue_response(&q, &cqe);
			break;
		}
		}
	}
	nvmefs_queue_fini(&q);
	pthread_cond_destroy(&ctrl->state_cond);
	pthread_mutex_destroy(&ctrl->state_lock);
	free(ctrl);
	return 0;
}
