/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A scripted transport for unit tests of libnvmefs, in the spirit of
 * libnvme's tests: the test writes the controller's side as an ordered
 * list of steps (a queue is created, a command arrives and gets a canned
 * reply, a queue is destroyed), plugs fake_ops in where rdma.c would be,
 * and drives the library.  A command that does not match the next step
 * fails the test at once, naming the step, where the test added it and
 * the field that differs; fake_assert_done() fails it when steps remain.
 *
 * One script at a time, process-wide: Check runs each test in its own
 * process, and fake_reset() starts afresh.
 */
#ifndef NVMEFS_TESTS_FAKE_TRANSPORT_H
#define NVMEFS_TESTS_FAKE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

extern const struct nvmefs_transport_ops fake_ops;

/* The 15-bit CQE status field: SC, SCT and DNR. */
#define FAKE_STATUS(sct, sc, dnr) \
	((uint16_t)(((sc) & 0xff) | ((sct) & 0x7) << 8 | ((dnr) ? 1u : 0u) << 14))

enum fake_step_kind {
	FAKE_CREATE,		/* queue_create */
	FAKE_CMD,		/* submit, answered by process */
	FAKE_DESTROY,		/* queue_destroy */
};

/* How process() hands the reply of a command to the queue. */
enum fake_delivery {
	/* Send completion, then the response: what an HCA usually does. */
	FAKE_SEND_THEN_RESP,
	/* The response first, the send completion in a later process() call:
	 * the request must not end in between (recorded in inflight_between). */
	FAKE_RESP_THEN_SEND,
	/* The send completes, no response ever comes: the timeout path. */
	FAKE_NO_RESP,
	/* The send completes, and a response names step->bogus_cid instead. */
	FAKE_BOGUS_CID,
	/* The send completes, and a response names the command id of the
	 * queue's previous completed command instead. */
	FAKE_STALE_CID,
	/* The response twice, then the send completion. */
	FAKE_DUP_RESP,
};

/* Which fields of a command a step checks (opcode, and fctype for 0x7F,
 * always). */
enum {
	FAKE_M_NSID	= 1 << 0,
	FAKE_M_CDW10	= 1 << 1,
	FAKE_M_CDW11	= 1 << 2,
	FAKE_M_CDW12	= 1 << 3,
	FAKE_M_CDW13	= 1 << 4,
	FAKE_M_LEN	= 1 << 5,	/* data length and direction */
};

#define FAKE_UNLIMITED 0xffffffffu

struct fake_step {
	enum fake_step_kind kind;
	int line;			/* where the test added it */

	/* FAKE_CREATE: where the controller connects (NULL: any) and what
	 * queue_create returns; a failure sets create_msg as the message. */
	char traddr[256];
	char trsvcid[32];
	bool any_addr;
	uint16_t qid;
	int create_ret;
	char create_msg[256];

	/* FAKE_CMD: what the command must be. */
	uint8_t opcode;
	uint8_t fctype;
	unsigned int match;		/* FAKE_M_* */
	uint32_t nsid, cdw10, cdw11, cdw12, cdw13;
	uint32_t len;
	uint8_t dir;			/* enum nvmefs_dir */

	/* FAKE_CMD: the reply. */
	uint16_t status;		/* FAKE_STATUS() */
	uint32_t dw0, dw1;
	uint8_t *data;			/* FROM_CTRL data, owned by the fake */
	size_t data_len;
	int sq_head;			/* reported SQ head; -1: all consumed */
	enum fake_delivery delivery;
	uint16_t bogus_cid;

	/* How often the step may match in a row: exactly once unless
	 * fake_repeat() says otherwise. */
	unsigned int min, max, used;

	/* Observed. */
	uint8_t *captured;		/* TO_CTRL data of the last match */
	size_t captured_len;
	uint16_t cid;			/* command id of the last match */
	bool inflight_between;		/* FAKE_RESP_THEN_SEND: still in flight
					 * after the response alone */
};

/* What fake_script_connect() makes the controller look like. */
struct fake_target {
	uint16_t cntlid;
	uint64_t cap;
	uint32_t vs;
	unsigned int csts_not_ready;	/* CSTS reads with RDY=0 before RDY=1 */
	uint8_t mdts;
	bool io;			/* an NVM subsystem: kato 5000 in Connect */
};

/* Forget every step and counter; frees what the last script held. */
void fake_reset(void);
/* Fail the test unless every step ran and every queue was destroyed. */
#define fake_assert_done() fake_assert_done_at(__LINE__)
void fake_assert_done_at(int line);

/* Steps, appended in order.  The returned pointer stays valid until
 * fake_reset(); set further fields through it. */
#define fake_expect_create(traddr, trsvcid) \
	fake_expect_create_at(__LINE__, (traddr), (trsvcid))
struct fake_step *fake_expect_create_at(int line, const char *traddr, const char *trsvcid);
#define fake_expect_destroy() fake_expect_destroy_at(__LINE__)
struct fake_step *fake_expect_destroy_at(int line);
#define fake_expect_cmd(opcode) fake_expect_cmd_at(__LINE__, (opcode), 0)
#define fake_expect_fabrics(fctype) \
	fake_expect_cmd_at(__LINE__, nvme_admin_fabrics, (fctype))
struct fake_step *fake_expect_cmd_at(int line, uint8_t opcode, uint8_t fctype);
/* Connect for queue 0 with @sqsize and @kato, answering @dw0. */
#define fake_expect_connect(sqsize, kato, dw0) \
	fake_expect_connect_at(__LINE__, (sqsize), (kato), (dw0))
struct fake_step *fake_expect_connect_at(int line, uint16_t sqsize, uint32_t kato, uint32_t dw0);
/* Property Get of @offset (its size from the offset), answering @value. */
#define fake_expect_prop_get(offset, value) \
	fake_expect_prop_get_at(__LINE__, (offset), (value))
struct fake_step *fake_expect_prop_get_at(int line, uint32_t offset, uint64_t value);
/* Property Set of @offset to exactly @value. */
#define fake_expect_prop_set(offset, value) \
	fake_expect_prop_set_at(__LINE__, (offset), (value))
struct fake_step *fake_expect_prop_set_at(int line, uint32_t offset, uint64_t value);
/* Identify @cns of @nsid (4096 bytes), answering @data. */
#define fake_expect_identify(cns, nsid, data, len) \
	fake_expect_identify_at(__LINE__, (cns), (nsid), (data), (len))
struct fake_step *fake_expect_identify_at(int line, uint8_t cns, uint32_t nsid,
					  const void *data, size_t len);
/* Get Log Page @lid, @len bytes at @offset (NUMD and offsets checked),
 * answering @len bytes of @log from @offset: @log is the whole log image. */
#define fake_expect_log(lid, offset, len, log) \
	fake_expect_log_at(__LINE__, (lid), (offset), (len), (log))
struct fake_step *fake_expect_log_at(int line, uint8_t lid, uint64_t offset, uint32_t len,
				     const void *log);

/* Reply data (copied) and status of a command step. */
void fake_step_data(struct fake_step *s, const void *data, size_t len);
void fake_step_status(struct fake_step *s, uint8_t sct, uint8_t sc, bool dnr);
/* Let the step match between @min and @max times in a row (FAKE_UNLIMITED). */
void fake_repeat(struct fake_step *s, unsigned int min, unsigned int max);

/*
 * Whole exchanges.  fake_script_connect() appends what
 * nvmefs_ctrl_connect_with() does: create the admin queue at
 * @traddr/@trsvcid, Connect, CAP, VS, CC=EN, CSTS polled, Identify
 * Controller; fake_script_disconnect() appends CC.SHN, CSTS.SHST, destroy.
 */
#define fake_script_connect(traddr, trsvcid, t) \
	fake_script_connect_at(__LINE__, (traddr), (trsvcid), (t))
void fake_script_connect_at(int line, const char *traddr, const char *trsvcid,
			    const struct fake_target *t);
#define fake_script_disconnect() fake_script_disconnect_at(__LINE__)
void fake_script_disconnect_at(int line);

/* A host identity for tests that do not test it: the UUID in the NQN and
 * the host ID differ, so a test can tell which one was used. */
#define FAKE_HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:0f8fad5b-d9cb-469f-a165-70867728950e"
#define FAKE_HOSTID "5d8d1c3a-1d55-4f0e-9b6c-2f9f6f2b7c11"

/* nvmefs_connect_opts_init(), then @traddr, FAKE_HOSTNQN, FAKE_HOSTID and
 * @timeout_ms (0: the default). */
void fake_opts(struct nvmefs_connect_opts *opts, const char *traddr, unsigned int timeout_ms);
/* Script a connect to a discovery controller at @traddr port 4420 that
 * looks like @t (NULL: a plain one) and connect to it; fails the test
 * unless that works. */
struct nvmefs_ctrl *fake_connect(const char *traddr, const struct fake_target *t,
				 unsigned int timeout_ms);

/* Counters since fake_reset(). */
struct fake_stats {
	unsigned int creates;		/* queue_create calls that succeeded */
	unsigned int destroys;
	unsigned int releases;		/* ctrl_release calls */
	unsigned int submits;
	unsigned int process_calls;
	unsigned int timeouts;		/* process() calls that slept it out */
};
extern struct fake_stats fake_stats;

/* The Identify Controller data fake_script_connect() answers with. */
void fake_id_ctrl(struct nvme_id_ctrl *id, uint8_t mdts);

#endif /* NVMEFS_TESTS_FAKE_TRANSPORT_H */
