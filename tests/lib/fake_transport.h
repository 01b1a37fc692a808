/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A scripted transport for unit tests of libnvmefs, in the spirit of
 * libnvme's tests: the test writes the controller's side as an ordered
 * list of steps (a queue is created, a command arrives and gets a canned
 * reply, a queue is destroyed), plugs fake_ops in where rdma.c would be,
 * and drives the library.  A command that does not match the next step
 * fails the test at once, naming the step, where the test added it and
 * the field that differs; fake_assert_done() fails it when steps remain.
 * The fuzzers use the same target without a script (fake_exec, below) and
 * without Check (built with FAKE_NO_CHECK: a failure aborts).
 *
 * One script at a time, process-wide: Check runs each test in its own
 * process, and fake_reset() starts afresh.  The script is shared by every
 * queue of every controller, I/O queues included, in one order; a step
 * marked floating (fake_float()) matches whenever its command comes, for
 * what another thread sends at its own pace (Keep Alive).  Matching takes a
 * lock, so the keep-alive thread and the test's thread may both submit.
 *
 * Like rdma.c, submit() describes the data with nvmefs_rdma_map_data()
 * (the slot buffers have the keys FAKE_SLOT_LKEY/FAKE_SLOT_RKEY, memory
 * registered through mr_reg gets fake keys of its own) and each step
 * records what the command looked like on the wire.
 */
#ifndef NVMEFS_TESTS_FAKE_TRANSPORT_H
#define NVMEFS_TESTS_FAKE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types/ctrl_types.h"
#include "transport/mr.h"
#include "types/transport_ops.h"

extern const struct nvmefs_transport_ops fake_ops;
/*
 * The scripted target again, as the two transports of the unit tests'
 * transport table (fake_table.c), described unlike the library's own so
 * that a test of what the table decides sees it come from the table:
 * "keyed" the default, as RDMA (per-I/O keys, discovery log trtype 1),
 * "stream" as NVMe/TCP (digests, an interface, discovery on a port of its
 * own, trtype 3).
 */
extern const struct nvmefs_transport_ops fake_keyed_ops;
extern const struct nvmefs_transport_ops fake_stream_ops;
#define FAKE_STREAM_TRSVCID "4430"
#define FAKE_STREAM_DISCOVERY_TRSVCID "8019"
/* The controller whose queue was created last: a step's on_match looks at
 * it while nvmefs_ctrl_connect_with() has not returned it yet. */
extern struct nvmefs_ctrl *fake_last_ctrl;

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
	FAKE_M_QID	= 1 << 6,	/* the queue it arrives on (step->qid) */
	FAKE_M_CNTLID	= 1 << 7,	/* Connect data's cntlid (step->cntlid) */
};

/* The keys of every queue's data slots, as a transport registers them. */
#define FAKE_SLOT_LKEY 0x51a70001u
#define FAKE_SLOT_RKEY 0x51a70002u

#define FAKE_UNLIMITED 0xffffffffu

struct fake_step {
	enum fake_step_kind kind;
	int line;			/* where the test added it */

	/* FAKE_CREATE: where the controller connects (NULL: any) and what
	 * queue_create returns; a failure sets create_msg as the message. */
	char traddr[NVMF_TRADDR_SIZE + 1];
	char trsvcid[NVMF_TRSVCID_SIZE + 1];
	bool any_addr;
	uint16_t qid;			/* also FAKE_CMD with FAKE_M_QID */
	int create_ret;
	char create_msg[256];

	/* FAKE_CMD: what the command must be. */
	uint8_t opcode;
	uint8_t fctype;
	unsigned int match;		/* FAKE_M_* */
	uint32_t nsid, cdw10, cdw11, cdw12, cdw13;
	uint32_t len;
	uint8_t dir;			/* enum nvmefs_dir */
	uint16_t cntlid;		/* FAKE_M_CNTLID */
	/* Matched out of order, whenever the command comes (fake_float()). */
	bool floating;

	/* FAKE_CMD: the reply. */
	uint16_t status;		/* FAKE_STATUS() */
	uint32_t dw0, dw1;
	uint8_t *data;			/* FROM_CTRL data, owned by the fake */
	size_t data_len;
	int sq_head;			/* reported SQ head; -1: all consumed */
	enum fake_delivery delivery;
	uint16_t bogus_cid;
	/* FAKE_SEND_THEN_RESP: the send completes, the response waits until
	 * fake_release() lets it go (to keep request slots busy). */
	bool hold;

	/* Called when the step matches, after its TO_CTRL data is captured
	 * and before its reply goes: a reply that depends on what the host
	 * sent before (a transaction id, a challenge) is made here with
	 * fake_step_data().  A FAKE_CREATE step's is called before its
	 * create_ret is returned, on the creating thread and outside the
	 * fake's lock: it may wait there (to hold a reconnect back). */
	void (*on_match)(struct fake_step *s, void *arg);
	void *on_match_arg;

	/* How often the step may match in a row: exactly once unless
	 * fake_repeat() says otherwise. */
	unsigned int min, max, used;

	/* Observed. */
	uint8_t *captured;		/* TO_CTRL data of the last match */
	size_t captured_len;
	uint16_t cid;			/* command id of the last match */
	bool inflight_between;		/* FAKE_RESP_THEN_SEND: still in flight
					 * after the response alone */
	/* Times the command was handed to the device: with fake_defer_posts,
	 * not at submit but when the queue is next processed or armed, as
	 * rdma.c batches its posts. */
	unsigned int posted;
	/* FAKE_CREATE: the parameters queue_create got. */
	struct nvmefs_queue_params seen_params;
	/* FAKE_CMD, the last match: its queue, data and registration, and
	 * the command's flags and SGL after nvmefs_rdma_map_data(), with the
	 * extra SGE of in-capsule data (seen_nr_sge 1). */
	uint16_t seen_qid;
	void *seen_data;
	struct nvmefs_mr *seen_mr;
	uint8_t seen_flags;
	struct nvmefs_sgl seen_sgl;
	int seen_nr_sge;
	uint64_t seen_sge_addr;
	uint32_t seen_sge_len, seen_sge_lkey;
};

/* What fake_script_connect() makes the controller look like. */
struct fake_target {
	uint16_t cntlid;
	uint64_t cap;
	uint32_t vs;
	unsigned int csts_not_ready;	/* CSTS reads with RDY=0 before RDY=1 */
	uint8_t mdts;
	bool io;			/* an NVM subsystem: kato 5000 in Connect */
	uint32_t ioccsz;		/* Identify Controller IOCCSZ (16-byte units) */
	uint16_t crdt1;			/* Identify Controller CRDT1 (100 ms units) */
	char subnqn[256];		/* Identify Controller SUBNQN, as is */
};

/* A namespace as fake_script_io_queues() identifies it. */
struct fake_ns {
	uint32_t nsid;
	uint64_t nsze;
	uint8_t lba_shift;		/* LBA format 0's data size */
	uint8_t dlfeat;			/* Identify Namespace DLFEAT */
};

/* Forget every step and counter; frees what the last script held. */
void fake_reset(void);
/* Fail the test unless every step ran and every queue was destroyed. */
#define fake_assert_done() fake_assert_done_at(__LINE__)
void fake_assert_done_at(int line);
/* The fixture of a test case over the script: a fresh one before each test,
 * and after it, every step used and every queue gone. */
void fake_setup(void);
void fake_teardown(void);

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
/* Take the step out of the order: it matches whenever its command comes,
 * before the ordered steps are tried; fake_assert_done() still wants min. */
void fake_float(struct fake_step *s);

/* Responses held back (step->hold), oldest first: let @n of them go
 * (FAKE_UNLIMITED: all) to their queues' next process(); returns how many. */
unsigned int fake_release(unsigned int n);
unsigned int fake_held(void);

/* Connect of I/O queue @qid with @sqsize (0's based), kato 0 and @cntlid
 * in the data, answering success. */
#define fake_expect_io_connect(qid, sqsize, cntlid) \
	fake_expect_io_connect_at(__LINE__, (qid), (sqsize), (cntlid))
struct fake_step *fake_expect_io_connect_at(int line, uint16_t qid, uint16_t sqsize,
					    uint16_t cntlid);
/* Set Features Number of Queues asking for @nr I/O queues, answering @dw0
 * (NSQA - 1 | NCQA - 1 << 16). */
#define fake_expect_set_nr_queues(nr, dw0) \
	fake_expect_set_nr_queues_at(__LINE__, (nr), (dw0))
struct fake_step *fake_expect_set_nr_queues_at(int line, unsigned int nr, uint32_t dw0);
/* An I/O command @opcode on queue @qid for namespace @nsid; set more
 * through the step (match, cdw10.., len, dir). */
#define fake_expect_io(qid, opcode, nsid) \
	fake_expect_io_at(__LINE__, (qid), (opcode), (nsid))
struct fake_step *fake_expect_io_at(int line, uint16_t qid, uint8_t opcode, uint32_t nsid);
/* A Read or Write of @nlb blocks at @slba, @len bytes of data. */
#define fake_expect_rw(qid, opcode, nsid, slba, nlb, len) \
	fake_expect_rw_at(__LINE__, (qid), (opcode), (nsid), (slba), (nlb), (len))
struct fake_step *fake_expect_rw_at(int line, uint16_t qid, uint8_t opcode, uint32_t nsid,
				    uint64_t slba, uint32_t nlb, uint32_t len);

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
/* fake_script_connect() with @kato_ms in the admin Connect; returns the
 * Connect's step. */
#define fake_script_connect_kato(traddr, trsvcid, t, kato_ms) \
	fake_script_connect_kato_at(__LINE__, (traddr), (trsvcid), (t), (kato_ms))
struct fake_step *fake_script_connect_kato_at(int line, const char *traddr, const char *trsvcid,
				 const struct fake_target *t, uint32_t kato_ms);
/*
 * What nvmefs_ctrl_create_io_queues() does for @nr queues of @size entries
 * that the controller grants: Set Features Number of Queues, Identify the
 * active namespace list and each of @ns, then per queue create (qid 1..nr)
 * and Connect with @cntlid.
 */
/* As fake_script_io_queues(), the controller granting @nr of the @asked. */
#define fake_script_io_queues_granted(asked, nr, size, cntlid, ns, nr_ns) \
	fake_script_io_queues_granted_at(__LINE__, (asked), (nr), (size), (cntlid), (ns), (nr_ns))
void fake_script_io_queues_granted_at(int line, unsigned int asked, unsigned int nr, uint16_t size,
				      uint16_t cntlid, const struct fake_ns *ns, unsigned int nr_ns);
#define fake_script_io_queues(nr, size, cntlid, ns, nr_ns) \
	fake_script_io_queues_at(__LINE__, (nr), (size), (cntlid), (ns), (nr_ns))
void fake_script_io_queues_at(int line, unsigned int nr, uint16_t size, uint16_t cntlid,
			      const struct fake_ns *ns, unsigned int nr_ns);
/* A reconnect attempt to @traddr (port 4420, kato 0) by a controller like
 * @t that gets through for @asked I/O queues of @size, of which it grants
 * @granted, namespace 1 identifying as @id (floating: identified twice, and
 * the active list once, at the I/O's own pace); returns its admin
 * Connect's step. */
#define fake_script_attempt(traddr, t, size, id, asked, granted) \
	fake_script_attempt_at(__LINE__, (traddr), (t), (size), (id), (asked), (granted))
struct fake_step *fake_script_attempt_at(int line, const char *traddr, const struct fake_target *t,
					 unsigned int size, const struct nvme_id_ns *id,
					 unsigned int asked, unsigned int granted);
/* Identify Namespace data: @nsze blocks of 1 << @lba_shift bytes (format 0). */
void fake_id_ns(struct nvme_id_ns *id, uint64_t nsze, uint8_t lba_shift);

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
	unsigned int bare_releases;	/* ... with no queue and no registration left */
	unsigned int submits;
	unsigned int process_calls;
	unsigned int timeouts;		/* process() calls that slept it out */
	unsigned int mr_regs;		/* mr_reg calls that succeeded */
	unsigned int mr_deregs;
	unsigned int stops;		/* queue_stop calls */
};
extern struct fake_stats fake_stats;

/* When not 0, the next mr_reg calls fail with this -errno (and a message). */
extern int fake_mr_fail;

/* Commands go to the device only at the queue's next process() or arm(),
 * as rdma.c posts them; what a stopped queue had not posted never goes. */
extern bool fake_defer_posts;
/* What the next queue_arm returns instead of arming (0: nothing), once:
 * a transport that finds its connection broken while arming. */
extern int fake_arm_error;
/* queue_arm reports nothing waiting and leaves the descriptor readable
 * while completions wait, as a level-triggered socket whose arm does not
 * look: a caller must still poll a queue whose descriptor woke it.  Set
 * before any thread arms. */
extern bool fake_arm_level;

/* The target closes queue @qid: its event descriptor becomes readable and
 * queue_check() (and process() when it waits) report the loss. */
void fake_disconnect(uint16_t qid);
/* The RDMA device of queue @qid is being removed (RDMA_CM_EVENT_DEVICE_REMOVAL):
 * queue_check() reports -ENODEV. */
void fake_device_removed(uint16_t qid);
/* Whether queue @qid was stopped (queue_stop) since it was created: the
 * target can no longer reach its buffers. */
bool fake_queue_stopped(uint16_t qid);

/* Queue @qid's next process() fails (-ECONNRESET) whatever its timeout, as
 * a transport whose receive breaks. */
void fake_break(uint16_t qid);

/*
 * A target that runs the commands itself instead of a script, for a harness
 * that checks the library against a model of the namespaces (the fuzzers).
 * With fake_exec set (after fake_reset()), no step is matched: queues come
 * and go without one and every command goes to run(), called as its
 * response is delivered, which does the command (FROM_CTRL data comes
 * zeroed) and returns the status (FAKE_STATUS()) and dw0.  A command's send
 * completes at its queue's next process(); its response goes with it unless
 * hold() keeps it back for fake_release() or fake_release_at(), in any
 * order.  fake_defer_posts does not apply.
 */
struct fake_exec {
	uint16_t (*run)(struct nvmefs_queue *q, struct nvmefs_req *req, uint32_t *dw0);
	bool (*hold)(const struct nvmefs_queue *q, const struct nvmefs_req *req);
};
extern const struct fake_exec *fake_exec;
/* Lets the @i-th held response (0: the oldest) go to its queue's next
 * process(). */
void fake_release_at(unsigned int i);

/* The Identify Controller data fake_script_connect() answers with. */
void fake_id_ctrl(struct nvme_id_ctrl *id, uint8_t mdts);

#endif /* NVMEFS_TESTS_FAKE_TRANSPORT_H */
