/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scripted transport of fake_transport.h.
 *
 * Like rdma.c it owns each queue's capsules and data slots and reports a
 * command's send completion and response separately; unlike it, the
 * controller is the script, and process() only hands over what submit()
 * queued, in the order the step asked for.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "fake_transport.h"
#include "rdma_sgl.h"
#include "ctrl.h"
#include "ctrl_types.h"
#include "error.h"
#include "mr.h"
#include "queue.h"
#include "transport_ops.h"

#define FAKE_MAX_STEPS 2048
#define FAKE_MAX_HELD 4096

struct fake_event {
	bool resp;			/* else a send completion */
	bool pause_after;		/* end this process() call after it */
	struct nvmefs_req *req;
	struct fake_step *step;
	struct nvmefs_cqe cqe;
};

struct fake_queue {
	union nvmefs_cmd *capsules;
	uint8_t *data;
	uint32_t slot_size;
	struct fake_event *ev;
	size_t nr_ev, ev_head, ev_cap;
	uint16_t sq_model;		/* the SQ head a controller that keeps up reports */
	uint16_t last_cid;
	bool have_last_cid;
	int efd;			/* queue_fd: an eventfd */
	bool armed;			/* queue_arm'ed: signal the next event */
	int cm_efd;			/* queue_event_fd: an eventfd */
	/* fake_disconnect(): what queue_check says; set by the test's thread,
	 * read by the queue's owner (an engine worker). */
	_Atomic int cm_error;
	bool stopped;
	uint16_t qid;
	/* fake_defer_posts: events of commands not handed to the device yet. */
	struct fake_event *unposted;
	size_t nr_unposted;
};

/* Live queues by qid, for fake_disconnect() and fake_queue_stopped(). */
#define FAKE_MAX_QUEUES 64
static struct fake_queue *queues[FAKE_MAX_QUEUES];
static bool stopped_qid[FAKE_MAX_QUEUES];

struct fake_held {
	struct fake_queue *fq;
	struct fake_event ev;
};

/* Steps, the held responses and the counters, shared with the keep-alive
 * thread: fake_lock guards them while the library runs. */
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_step steps[FAKE_MAX_STEPS];
static unsigned int nr_steps, pos;
static struct fake_held held[FAKE_MAX_HELD];
static unsigned int nr_held;
static unsigned int mr_serial;
struct fake_stats fake_stats;
struct nvmefs_ctrl *fake_last_ctrl;
int fake_mr_fail;
bool fake_defer_posts;
int fake_arm_error;
bool fake_arm_level;

static void stat_inc(unsigned int *counter)
{
	pthread_mutex_lock(&fake_lock);
	(*counter)++;
	pthread_mutex_unlock(&fake_lock);
}

static const char *kind_name(enum fake_step_kind kind)
{
	switch (kind) {
	case FAKE_CREATE: return "queue_create";
	case FAKE_CMD: return "a command";
	case FAKE_DESTROY: return "queue_destroy";
	}
	return "?";
}

void fake_reset(void)
{
	unsigned int i;

	fake_last_ctrl = NULL;
	for (i = 0; i < nr_steps; i++) {
		free(steps[i].data);
		free(steps[i].captured);
	}
	memset(steps, 0, sizeof(steps));
	nr_steps = 0;
	pos = 0;
	nr_held = 0;
	mr_serial = 0;
	fake_mr_fail = 0;
	fake_defer_posts = false;
	fake_arm_error = 0;
	fake_arm_level = false;
	memset(queues, 0, sizeof(queues));
	memset(stopped_qid, 0, sizeof(stopped_qid));
	memset(&fake_stats, 0, sizeof(fake_stats));
}

void fake_assert_done_at(int line)
{
	unsigned int i;

	for (i = 0; i < nr_steps; i++)
		if (steps[i].floating && steps[i].used < steps[i].min)
			ck_abort_msg("line %d: floating step %u (added at line %d, opcode %#x) matched "
				     "%u times, wanted at least %u", line, i, steps[i].line,
				     steps[i].opcode, steps[i].used, steps[i].min);
	while (pos < nr_steps && (steps[pos].floating || steps[pos].used >= steps[pos].min))
		pos++;
	if (pos < nr_steps)
		ck_abort_msg("line %d: the script was not consumed: step %u (added at line %d, "
			     "%s, matched %u times, wanted at least %u) and %u more never came",
			     line, pos, steps[pos].line, kind_name(steps[pos].kind), steps[pos].used,
			     steps[pos].min, nr_steps - pos - 1);
	ck_assert_msg(fake_stats.creates == fake_stats.destroys,
		      "line %d: %u queues created but %u destroyed", line, fake_stats.creates,
		      fake_stats.destroys);
	ck_assert_msg(fake_stats.mr_regs == fake_stats.mr_deregs,
		      "line %d: %u memory regions registered but %u deregistered", line,
		      fake_stats.mr_regs, fake_stats.mr_deregs);
}

void fake_setup(void)
{
	fake_reset();
}

void fake_teardown(void)
{
	fake_assert_done();
	fake_reset();
}

static struct fake_step *add(int line, enum fake_step_kind kind)
{
	struct fake_step *s;

	ck_assert_msg(nr_steps < FAKE_MAX_STEPS, "line %d: more than %d script steps", line,
		      FAKE_MAX_STEPS);
	s = &steps[nr_steps++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->line = line;
	s->min = s->max = 1;
	s->sq_head = -1;
	return s;
}

struct fake_step *fake_expect_create_at(int line, const char *traddr, const char *trsvcid)
{
	struct fake_step *s = add(line, FAKE_CREATE);

	if (!traddr) {
		s->any_addr = true;
	} else {
		snprintf(s->traddr, sizeof(s->traddr), "%s", traddr);
		snprintf(s->trsvcid, sizeof(s->trsvcid), "%s", trsvcid ? trsvcid : "4420");
	}
	return s;
}

struct fake_step *fake_expect_destroy_at(int line)
{
	return add(line, FAKE_DESTROY);
}

struct fake_step *fake_expect_cmd_at(int line, uint8_t opcode, uint8_t fctype)
{
	struct fake_step *s = add(line, FAKE_CMD);

	s->opcode = opcode;
	s->fctype = fctype;
	return s;
}

static void expect_data(struct fake_step *s, uint32_t len, enum nvmefs_dir dir)
{
	s->match |= FAKE_M_LEN;
	s->len = len;
	s->dir = (uint8_t)dir;
}

struct fake_step *fake_expect_connect_at(int line, uint16_t sqsize, uint32_t kato, uint32_t dw0)
{
	struct fake_step *s = fake_expect_cmd_at(line, nvme_admin_fabrics,
						 nvme_fabrics_type_connect);

	/* Connect's recfmt, qid | sqsize, cattr | kato: bytes 40..51. */
	s->match |= FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_CDW12;
	s->cdw10 = 0;			/* recfmt 0, qid 0 */
	s->cdw11 = sqsize;		/* cattr 0 */
	s->cdw12 = kato;
	expect_data(s, 1024, NVMEFS_DIR_TO_CTRL);
	s->dw0 = dw0;
	return s;
}

/* CAP, ASQ, ACQ and the like are 8 bytes; the rest 4 (NVMe over Fabrics). */
static bool prop_is_8(uint32_t offset)
{
	return nvme_is_64bit_reg(offset);
}

struct fake_step *fake_expect_prop_get_at(int line, uint32_t offset, uint64_t value)
{
	struct fake_step *s = fake_expect_cmd_at(line, nvme_admin_fabrics,
						 nvme_fabrics_type_property_get);

	/* attrib at byte 40, offset at 44. */
	s->match |= FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_LEN;
	s->cdw10 = prop_is_8(offset) ? 1 : 0;
	s->cdw11 = offset;
	s->dw0 = (uint32_t)value;
	s->dw1 = prop_is_8(offset) ? (uint32_t)(value >> 32) : 0;
	return s;
}

struct fake_step *fake_expect_prop_set_at(int line, uint32_t offset, uint64_t value)
{
	struct fake_step *s = fake_expect_cmd_at(line, nvme_admin_fabrics,
						 nvme_fabrics_type_property_set);

	/* attrib at 40, offset at 44, value at 48. */
	s->match |= FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_CDW12 | FAKE_M_CDW13 | FAKE_M_LEN;
	s->cdw10 = prop_is_8(offset) ? 1 : 0;
	s->cdw11 = offset;
	s->cdw12 = (uint32_t)value;
	s->cdw13 = (uint32_t)(value >> 32);
	return s;
}

struct fake_step *fake_expect_identify_at(int line, uint8_t cns, uint32_t nsid,
					  const void *data, size_t len)
{
	struct fake_step *s = fake_expect_cmd_at(line, nvme_admin_identify, 0);

	s->match |= FAKE_M_NSID | FAKE_M_CDW10 | FAKE_M_CDW11;
	s->nsid = nsid;
	s->cdw10 = cns;			/* CNTID 0 */
	s->cdw11 = 0;
	expect_data(s, 4096, NVMEFS_DIR_FROM_CTRL);
	fake_step_data(s, data, len);
	return s;
}

struct fake_step *fake_expect_log_at(int line, uint8_t lid, uint64_t offset, uint32_t len,
				     const void *log)
{
	struct fake_step *s = fake_expect_cmd_at(line, nvme_admin_get_log_page, 0);
	uint32_t numd = len / 4 - 1;

	s->match |= FAKE_M_NSID | FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_CDW12 | FAKE_M_CDW13;
	s->nsid = 0;
	s->cdw10 = lid | (numd & 0xffff) << 16;
	s->cdw11 = numd >> 16;
	s->cdw12 = (uint32_t)offset;
	s->cdw13 = (uint32_t)(offset >> 32);
	expect_data(s, len, NVMEFS_DIR_FROM_CTRL);
	if (log)
		fake_step_data(s, (const uint8_t *)log + offset, len);
	return s;
}

void fake_step_data(struct fake_step *s, const void *data, size_t len)
{
	free(s->data);
	s->data = NULL;
	s->data_len = 0;
	if (!len)
		return;
	s->data = malloc(len);
	ck_assert_ptr_nonnull(s->data);
	memcpy(s->data, data, len);
	s->data_len = len;
}

void fake_step_status(struct fake_step *s, uint8_t sct, uint8_t sc, bool dnr)
{
	s->status = FAKE_STATUS(sct, sc, dnr);
}

void fake_repeat(struct fake_step *s, unsigned int min, unsigned int max)
{
	s->min = min;
	s->max = max;
}

void fake_float(struct fake_step *s)
{
	ck_assert_msg(s->kind == FAKE_CMD, "step added at line %d: only commands float", s->line);
	s->floating = true;
}

struct fake_step *fake_expect_io_connect_at(int line, uint16_t qid, uint16_t sqsize,
					    uint16_t cntlid)
{
	struct fake_step *s = fake_expect_connect_at(line, sqsize, 0, 0);

	s->match |= FAKE_M_QID | FAKE_M_CNTLID;
	s->qid = qid;
	s->cdw10 = (uint32_t)qid << 16;	/* recfmt 0 */
	s->cntlid = cntlid;
	return s;
}

struct fake_step *fake_expect_set_nr_queues_at(int line, unsigned int nr, uint32_t dw0)
{
	struct fake_step *s = fake_expect_cmd_at(line, nvme_admin_set_features, 0);

	s->match |= FAKE_M_QID | FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_LEN;
	s->qid = 0;
	s->cdw10 = NVME_FEAT_FID_NUM_QUEUES;	/* SV 0 */
	s->cdw11 = (nr - 1) | (nr - 1) << 16;
	s->len = 0;
	s->dw0 = dw0;
	return s;
}

struct fake_step *fake_expect_io_at(int line, uint16_t qid, uint8_t opcode, uint32_t nsid)
{
	struct fake_step *s = fake_expect_cmd_at(line, opcode, 0);

	s->match |= FAKE_M_QID | FAKE_M_NSID;
	s->qid = qid;
	s->nsid = nsid;
	return s;
}

struct fake_step *fake_expect_rw_at(int line, uint16_t qid, uint8_t opcode, uint32_t nsid,
				    uint64_t slba, uint32_t nlb, uint32_t len)
{
	struct fake_step *s = fake_expect_io_at(line, qid, opcode, nsid);

	s->match |= FAKE_M_CDW10 | FAKE_M_CDW11 | FAKE_M_CDW12 | FAKE_M_CDW13;
	s->cdw10 = (uint32_t)slba;
	s->cdw11 = (uint32_t)(slba >> 32);
	s->cdw12 = nlb - 1;		/* 0's based; no FUA, no PRINFO */
	s->cdw13 = 0;
	expect_data(s, len, opcode == nvme_cmd_read ? NVMEFS_DIR_FROM_CTRL : NVMEFS_DIR_TO_CTRL);
	return s;
}

void fake_id_ns(struct nvme_id_ns *id, uint64_t nsze, uint8_t lba_shift)
{
	memset(id, 0, sizeof(*id));
	id->nsze = nvmefs_cpu_to_le64(nsze);
	id->ncap = nvmefs_cpu_to_le64(nsze);
	id->nuse = nvmefs_cpu_to_le64(nsze);
	id->nlbaf = 0;			/* one format, 0's based */
	id->flbas = 0;
	id->lbaf[0].ds = lba_shift;
}

void fake_script_io_queues_at(int line, unsigned int nr, uint16_t size, uint16_t cntlid,
			      const struct fake_ns *ns, unsigned int nr_ns)
{
	fake_script_io_queues_granted_at(line, nr, nr, size, cntlid, ns, nr_ns);
}

void fake_script_io_queues_granted_at(int line, unsigned int asked, unsigned int nr, uint16_t size,
				      uint16_t cntlid, const struct fake_ns *ns, unsigned int nr_ns)
{
	uint32_t list[NVMEFS_NS_LIST_LEN];
	struct nvme_id_ns id;
	struct fake_step *s;
	unsigned int i;

	ck_assert_uint_lt(nr_ns, NVMEFS_NS_LIST_LEN);
	fake_expect_set_nr_queues_at(line, asked, (nr - 1) | (nr - 1) << 16);
	memset(list, 0, sizeof(list));
	for (i = 0; i < nr_ns; i++)
		list[i] = nvmefs_cpu_to_le32(ns[i].nsid);
	fake_expect_identify_at(line, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list, sizeof(list));
	for (i = 0; i < nr_ns; i++) {
		fake_id_ns(&id, ns[i].nsze, ns[i].lba_shift);
		id.dlfeat = ns[i].dlfeat;
		fake_expect_identify_at(line, NVME_IDENTIFY_CNS_NS, ns[i].nsid, &id, sizeof(id));
		/* No identification descriptors: no UUID. */
		fake_expect_identify_at(line, NVME_IDENTIFY_CNS_NS_DESC_LIST, ns[i].nsid, NULL, 0);
	}
	for (i = 1; i <= nr; i++) {
		s = fake_expect_create_at(line, NULL, NULL);
		s->qid = (uint16_t)i;
		fake_expect_io_connect_at(line, (uint16_t)i, (uint16_t)(size - 1), cntlid);
	}
}

void fake_id_ctrl(struct nvme_id_ctrl *id, uint8_t mdts)
{
	memset(id, 0, sizeof(*id));
	id->vid = nvmefs_cpu_to_le16(0x1b96);
	memcpy(id->sn, "FAKE-SN-0001        ", sizeof(id->sn));
	memcpy(id->mn, "nvmefs scripted controller              ", sizeof(id->mn));
	memcpy(id->fr, "1.0     ", sizeof(id->fr));
	id->mdts = mdts;
}

/* By hand from the NVMe base spec: EN, CSS 0 (NVM), MPS 0, AMS 0, SHN 0,
 * IOSQES 6, IOCQES 4. */
#define CC_ENABLED 0x00460001u
#define CC_SHN_NORMAL (1u << 14)

void fake_script_connect_at(int line, const char *traddr, const char *trsvcid,
			    const struct fake_target *t)
{
	fake_script_connect_kato_at(line, traddr, trsvcid, t, t->io ? 5000 : 0);
}

struct fake_step *fake_script_connect_kato_at(int line, const char *traddr, const char *trsvcid,
					      const struct fake_target *t, uint32_t kato_ms)
{
	struct nvme_id_ctrl id;
	struct fake_step *s, *connect;

	fake_expect_create_at(line, traddr, trsvcid);
	connect = fake_expect_connect_at(line, 31, kato_ms, t->cntlid);
	fake_expect_prop_get_at(line, NVME_REG_CAP, t->cap);
	fake_expect_prop_get_at(line, NVME_REG_VS, t->vs);
	fake_expect_prop_set_at(line, NVME_REG_CC, CC_ENABLED);
	if (t->csts_not_ready) {
		s = fake_expect_prop_get_at(line, NVME_REG_CSTS, 0);
		fake_repeat(s, t->csts_not_ready, t->csts_not_ready);
	}
	fake_expect_prop_get_at(line, NVME_REG_CSTS, 1);
	fake_id_ctrl(&id, t->mdts);
	id.ioccsz = nvmefs_cpu_to_le32(t->ioccsz);
	id.crdt1 = nvmefs_cpu_to_le16(t->crdt1);
	_Static_assert(sizeof(t->subnqn) == sizeof(id.subnqn), "SUBNQN is 256 bytes");
	memcpy(id.subnqn, t->subnqn, sizeof(id.subnqn));
	fake_expect_identify_at(line, NVME_IDENTIFY_CNS_CTRL, 0, &id, sizeof(id));
	return connect;
}

struct fake_step *fake_script_attempt_at(int line, const char *traddr, const struct fake_target *t,
					 unsigned int size, const struct nvme_id_ns *id,
					 unsigned int asked, unsigned int granted)
{
	static uint32_t list[NVMEFS_NS_LIST_LEN];
	struct fake_step *s, *connect;

	connect = fake_script_connect_kato_at(line, traddr, "4420", t, 0);
	fake_expect_set_nr_queues_at(line, asked, (granted - 1) | (granted - 1) << 16);
	for (uint16_t qid = 1; qid <= granted; qid++) {
		s = fake_expect_create_at(line, NULL, NULL);
		s->qid = qid;
		fake_expect_io_connect_at(line, qid, (uint16_t)(size - 1), t->cntlid);
	}
	/* Namespace 1 is identified twice: checked before the I/O queue comes
	 * back, and looked at again with the active list once live, while the
	 * held I/O goes out, at its own pace. */
	s = fake_expect_identify_at(line, NVME_IDENTIFY_CNS_NS, 1, id, sizeof(*id));
	fake_float(s);
	fake_repeat(s, 2, 2);
	s = fake_expect_identify_at(line, NVME_IDENTIFY_CNS_NS_DESC_LIST, 1, NULL, 0);
	fake_float(s);
	fake_repeat(s, 2, 2);
	memset(list, 0, sizeof(list));
	list[0] = nvmefs_cpu_to_le32(1);
	fake_float(fake_expect_identify_at(line, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list,
					   sizeof(list)));
	return connect;
}

void fake_script_disconnect_at(int line)
{
	fake_expect_prop_set_at(line, NVME_REG_CC, CC_ENABLED | CC_SHN_NORMAL);
	/* SHST 10b (complete), RDY still set. */
	fake_expect_prop_get_at(line, NVME_REG_CSTS, 0x9);
	fake_expect_destroy_at(line);
}

void fake_opts(struct nvmefs_connect_opts *opts, const char *traddr, unsigned int timeout_ms)
{
	nvmefs_connect_opts_init(opts);
	opts->traddr = traddr;
	opts->hostnqn = FAKE_HOSTNQN;
	opts->hostid = FAKE_HOSTID;
	if (timeout_ms)
		opts->timeout_ms = timeout_ms;
	/* A failure ends the controller unless a test of recovery says otherwise. */
	opts->ctrl_loss_tmo_s = 0;
}

struct nvmefs_ctrl *fake_connect(const char *traddr, const struct fake_target *t,
				 unsigned int timeout_ms)
{
	static const struct fake_target plain = { .cntlid = 1, .vs = 0x10400 };
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;
	int ret;

	fake_opts(&opts, traddr, timeout_ms);
	fake_script_connect(traddr, "4420", t ? t : &plain);
	ret = nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl);
	ck_assert_msg(ret == 0, "connect to %s: %d: %s", traddr, ret, nvmefs_errmsg());
	ck_assert_ptr_nonnull(ctrl);
	return ctrl;
}

/* ------------------------------------------------------------------------ */
/* Matching                                                                 */
/* ------------------------------------------------------------------------ */

static const char *dir_name(uint8_t dir)
{
	switch (dir) {
	case NVMEFS_DIR_NONE: return "none";
	case NVMEFS_DIR_TO_CTRL: return "to controller";
	case NVMEFS_DIR_FROM_CTRL: return "from controller";
	}
	return "?";
}

static bool field_ok(char *why, size_t size, const char *name, uint32_t got, uint32_t want)
{
	if (got == want)
		return true;
	snprintf(why, size, "%s is %#x, the script expects %#x", name, got, want);
	return false;
}

static bool cmd_matches(const struct fake_step *s, const struct nvmefs_req *req,
			char *why, size_t size)
{
	const struct nvmefs_sqe *sqe = &req->cmd->sqe;
	uint32_t len = req->len;

	if (!field_ok(why, size, "opcode", sqe->opcode, s->opcode))
		return false;
	if (s->opcode == nvme_admin_fabrics &&
	    !field_ok(why, size, "fctype", req->cmd->fabrics.fctype, s->fctype))
		return false;
	if ((s->match & FAKE_M_NSID) &&
	    !field_ok(why, size, "nsid", nvmefs_le32_to_cpu(sqe->nsid), s->nsid))
		return false;
	if ((s->match & FAKE_M_CDW10) &&
	    !field_ok(why, size, "cdw10", nvmefs_le32_to_cpu(sqe->cdw10), s->cdw10))
		return false;
	if ((s->match & FAKE_M_CDW11) &&
	    !field_ok(why, size, "cdw11", nvmefs_le32_to_cpu(sqe->cdw11), s->cdw11))
		return false;
	if ((s->match & FAKE_M_CDW12) &&
	    !field_ok(why, size, "cdw12", nvmefs_le32_to_cpu(sqe->cdw12), s->cdw12))
		return false;
	if ((s->match & FAKE_M_CDW13) &&
	    !field_ok(why, size, "cdw13", nvmefs_le32_to_cpu(sqe->cdw13), s->cdw13))
		return false;
	if (s->match & FAKE_M_LEN) {
		if (!field_ok(why, size, "data length", len, s->len))
			return false;
		if (len && req->dir != s->dir) {
			snprintf(why, size, "data moves %s, the script expects %s",
				 dir_name(req->dir), dir_name(s->dir));
			return false;
		}
	}
	if ((s->match & FAKE_M_QID) && !field_ok(why, size, "queue", req->q->qid, s->qid))
		return false;
	if (s->match & FAKE_M_CNTLID) {
		const uint8_t *d = req->data;

		if (req->dir != NVMEFS_DIR_TO_CTRL || req->len < 18) {
			snprintf(why, size, "no Connect data to find a cntlid in");
			return false;
		}
		if (!field_ok(why, size, "the data's cntlid", (uint32_t)(d[16] | d[17] << 8),
			      s->cntlid))
			return false;
	}
	return true;
}

static bool create_matches(const struct fake_step *s, const struct nvmefs_queue *q,
			   char *why, size_t size)
{
	if (!field_ok(why, size, "qid", q->qid, s->qid))
		return false;
	if (s->any_addr)
		return true;
	if (strcmp(q->ctrl->traddr, s->traddr) != 0 || strcmp(q->ctrl->trsvcid, s->trsvcid) != 0) {
		snprintf(why, size, "the controller is at '%s' port '%s', the script expects "
			 "'%s' port '%s'", q->ctrl->traddr, q->ctrl->trsvcid, s->traddr, s->trsvcid);
		return false;
	}
	return true;
}

static void describe(char *buf, size_t size, enum fake_step_kind kind,
		     const struct nvmefs_req *req)
{
	const struct nvmefs_sqe *sqe;

	if (kind != FAKE_CMD || !req) {
		snprintf(buf, size, "%s", kind_name(kind));
		return;
	}
	sqe = &req->cmd->sqe;
	snprintf(buf, size, "command on queue %u opcode %#x fctype %#x nsid %#x cdw10 %#x cdw11 %#x "
		 "cdw12 %#x cdw13 %#x, %u bytes %s", req->q->qid, sqe->opcode,
		 sqe->opcode == nvme_admin_fabrics ? req->cmd->fabrics.fctype : 0,
		 nvmefs_le32_to_cpu(sqe->nsid), nvmefs_le32_to_cpu(sqe->cdw10),
		 nvmefs_le32_to_cpu(sqe->cdw11), nvmefs_le32_to_cpu(sqe->cdw12),
		 nvmefs_le32_to_cpu(sqe->cdw13), req->len, dir_name(req->dir));
}

/* The step that @kind (and @req's command, or @q's address) must be. */
static struct fake_step *next_step(enum fake_step_kind kind, const struct nvmefs_queue *q,
				   const struct nvmefs_req *req)
{
	char what[300], why[512];
	unsigned int i;

	describe(what, sizeof(what), kind, req);
	pthread_mutex_lock(&fake_lock);
	if (kind == FAKE_CMD) {
		for (i = 0; i < nr_steps; i++) {
			struct fake_step *s = &steps[i];

			if (s->floating && s->used < s->max && cmd_matches(s, req, why, sizeof(why))) {
				s->used++;
				pthread_mutex_unlock(&fake_lock);
				return s;
			}
		}
	}
	for (;;) {
		struct fake_step *s;
		bool ok;

		if (pos < nr_steps && steps[pos].floating) {
			pos++;
			continue;
		}
		if (pos >= nr_steps) {
			pthread_mutex_unlock(&fake_lock);
			ck_abort_msg("after the script's last step (%u steps) came %s", nr_steps, what);
		}
		s = &steps[pos];
		if (s->kind != kind) {
			snprintf(why, sizeof(why), "the script expects %s", kind_name(s->kind));
			ok = false;
		} else if (kind == FAKE_CMD) {
			ok = cmd_matches(s, req, why, sizeof(why));
		} else if (kind == FAKE_CREATE) {
			ok = create_matches(s, q, why, sizeof(why));
		} else {
			ok = true;
		}
		if (ok) {
			if (++s->used >= s->max)
				pos++;
			pthread_mutex_unlock(&fake_lock);
			return s;
		}
		if (s->used >= s->min) {
			pos++;
			continue;
		}
		pthread_mutex_unlock(&fake_lock);
		ck_abort_msg("script step %u (added at line %d): got %s: %s", pos, s->line, what, why);
	}
}

/* ------------------------------------------------------------------------ */
/* The transport                                                            */
/* ------------------------------------------------------------------------ */

static int fake_queue_create(struct nvmefs_queue *q, const struct nvmefs_queue_params *params)
{
	struct fake_step *s = next_step(FAKE_CREATE, q, NULL);
	struct fake_queue *fq;
	uint16_t i;

	ck_assert_uint_eq(params->qid, q->qid);
	ck_assert_uint_eq(params->size, q->size);
	ck_assert_ptr_nonnull(q->reqs);
	ck_assert_uint_eq(q->nr_reqs, q->size - 1);
	s->seen_params = *params;
	if (s->create_ret < 0)
		return nvmefs_error(s->create_ret, "%s", s->create_msg);
	fq = calloc(1, sizeof(*fq));
	ck_assert_ptr_nonnull(fq);
	fq->capsules = calloc(q->nr_reqs, sizeof(*fq->capsules));
	fq->data = calloc(q->nr_reqs, params->data_slot_size);
	fq->ev_cap = 3u * q->nr_reqs + 8;
	fq->ev = calloc(fq->ev_cap, sizeof(*fq->ev));
	ck_assert_msg(fq->capsules && fq->data && fq->ev, "out of memory");
	fq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(fq->efd, 0);
	fq->cm_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(fq->cm_efd, 0);
	fq->unposted = calloc(fq->ev_cap, sizeof(*fq->unposted));
	ck_assert_ptr_nonnull(fq->unposted);
	fq->qid = q->qid;
	fake_last_ctrl = q->ctrl;
	if (q->qid < FAKE_MAX_QUEUES) {
		queues[q->qid] = fq;
		stopped_qid[q->qid] = false;
	}
	fq->slot_size = params->data_slot_size;
	for (i = 0; i < q->nr_reqs; i++) {
		q->reqs[i].cmd = &fq->capsules[i];
		q->reqs[i].data_slot = fq->data + (size_t)i * params->data_slot_size;
		q->reqs[i].data_slot_size = params->data_slot_size;
	}
	q->tp = fq;
	stat_inc(&fake_stats.creates);
	return 0;
}

/* Responses held back for @fq never come: its queue is gone or stopped. */
static void drop_held(struct fake_queue *fq)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < nr_held; i++)
		if (held[i].fq != fq)
			held[n++] = held[i];
	nr_held = n;
	pthread_mutex_unlock(&fake_lock);
}

static void fake_queue_destroy(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;

	next_step(FAKE_DESTROY, q, NULL);
	ck_assert_ptr_nonnull(fq);
	/* Responses still held for it never come. */
	drop_held(fq);
	close(fq->efd);
	close(fq->cm_efd);
	if (fq->qid < FAKE_MAX_QUEUES && queues[fq->qid] == fq)
		queues[fq->qid] = NULL;
	free(fq->unposted);
	free(fq->capsules);
	free(fq->data);
	free(fq->ev);
	free(fq);
	q->tp = NULL;
	stat_inc(&fake_stats.destroys);
}

static void push_now(struct fake_queue *fq, const struct fake_event *ev);
static void hold(struct fake_queue *fq, const struct fake_event *ev);

/* A command's events: the device's at once, or once the queue posts. */
static void push(struct fake_queue *fq, const struct fake_event *ev)
{
	if (!fake_defer_posts || !ev->req) {
		push_now(fq, ev);
		return;
	}
	ck_assert_msg(fq->nr_unposted < fq->ev_cap, "more unposted events than a queue holds");
	fq->unposted[fq->nr_unposted++] = *ev;
}

/* Hands what was submitted to the device, as rdma.c's kick(): a failed
 * queue posts nothing. */
static void post_all(struct nvmefs_queue *q, struct fake_queue *fq)
{
	size_t i;

	if (q->failed || fq->stopped) {
		fq->nr_unposted = 0;
		return;
	}
	for (i = 0; i < fq->nr_unposted; i++) {
		struct fake_event *ev = &fq->unposted[i];

		if (!ev->resp)
			ev->step->posted++;
		if (ev->resp && ev->step->hold)
			hold(fq, ev);
		else
			push_now(fq, ev);
	}
	fq->nr_unposted = 0;
}

static void push_now(struct fake_queue *fq, const struct fake_event *ev)
{
	if (fq->ev_head == fq->nr_ev)
		fq->ev_head = fq->nr_ev = 0;
	if (fq->nr_ev == fq->ev_cap && fq->ev_head) {
		memmove(fq->ev, fq->ev + fq->ev_head, (fq->nr_ev - fq->ev_head) * sizeof(*fq->ev));
		fq->nr_ev -= fq->ev_head;
		fq->ev_head = 0;
	}
	ck_assert_msg(fq->nr_ev < fq->ev_cap, "more completions queued than a queue can hold");
	fq->ev[fq->nr_ev++] = *ev;
	if (fq->armed) {
		uint64_t one = 1;

		fq->armed = false;
		ck_assert_int_eq(write(fq->efd, &one, sizeof(one)), (int)sizeof(one));
	}
}

static void hold(struct fake_queue *fq, const struct fake_event *ev)
{
	bool full;

	pthread_mutex_lock(&fake_lock);
	full = nr_held == FAKE_MAX_HELD;
	if (!full) {
		held[nr_held].fq = fq;
		held[nr_held].ev = *ev;
		nr_held++;
	}
	pthread_mutex_unlock(&fake_lock);
	ck_assert_msg(!full, "more than %d responses held", FAKE_MAX_HELD);
}

unsigned int fake_release(unsigned int n)
{
	static struct fake_held go[FAKE_MAX_HELD];
	unsigned int i;

	pthread_mutex_lock(&fake_lock);
	if (n > nr_held)
		n = nr_held;
	memcpy(go, held, n * sizeof(*go));
	memmove(held, held + n, (nr_held - n) * sizeof(*held));
	nr_held -= n;
	pthread_mutex_unlock(&fake_lock);
	for (i = 0; i < n; i++)
		push(go[i].fq, &go[i].ev);
	return n;
}

unsigned int fake_held(void)
{
	unsigned int n;

	pthread_mutex_lock(&fake_lock);
	n = nr_held;
	pthread_mutex_unlock(&fake_lock);
	return n;
}

static int fake_submit(struct nvmefs_queue *q, struct nvmefs_req *req)
{
	struct fake_queue *fq = q->tp;
	struct fake_event ev = { .req = req };
	struct ibv_sge sge = { 0 };
	struct fake_step *s;
	uint16_t cid;
	int nr_sge;

	stat_inc(&fake_stats.submits);
	ck_assert_ptr_nonnull(fq);
	/* What rdma.c relies on: the capsule is the slot's own, and the data
	 * is in the slot or in memory registered through mr_reg. */
	ck_assert_msg(req->cmd == &fq->capsules[req->slot], "request %u's capsule is not its slot's",
		      req->slot);
	ck_assert_uint_eq(nvmefs_le16_to_cpu(req->cmd->sqe.cid), req->cid);
	ck_assert(req->inflight);
	if (req->len && req->mr) {
		uint8_t *p = req->data;

		ck_assert_msg(req->mr->tp == (void *)&fake_ops,
			      "request %u's memory region was not registered by this transport",
			      req->slot);
		ck_assert_msg(p >= req->mr->addr && p + req->len <= req->mr->addr + req->mr->len,
			      "request %u's %u data bytes are outside its memory region", req->slot,
			      req->len);
	} else if (req->len) {
		uint8_t *p = req->data, *slot = fq->data + (size_t)req->slot * fq->slot_size;

		ck_assert_msg(p >= slot && p + req->len <= slot + fq->slot_size,
			      "request %u's %u data bytes are outside its data slot", req->slot,
			      req->len);
	}
	if (req->len)
		ck_assert_msg(req->dir != NVMEFS_DIR_NONE, "request %u moves %u bytes nowhere",
			      req->slot, req->len);
	/* As rdma_submit(): the admin queue takes no in-capsule data. */
	nr_sge = nvmefs_rdma_map_data(req, q->qid ? q->ctrl->inline_size : 0, FAKE_SLOT_LKEY,
				      FAKE_SLOT_RKEY, NULL, &sge);
	if (nr_sge < 0)
		return nr_sge;

	s = next_step(FAKE_CMD, q, req);
	s->cid = req->cid;
	s->seen_qid = q->qid;
	s->seen_data = req->data;
	s->seen_mr = req->mr;
	s->seen_flags = req->cmd->sqe.flags;
	s->seen_sgl = req->cmd->sqe.dptr.sgl;
	s->seen_nr_sge = nr_sge;
	s->seen_sge_addr = nr_sge ? sge.addr : 0;
	s->seen_sge_len = nr_sge ? sge.length : 0;
	s->seen_sge_lkey = nr_sge ? sge.lkey : 0;
	if (req->len && req->dir == NVMEFS_DIR_TO_CTRL) {
		free(s->captured);
		s->captured = malloc(req->len);
		ck_assert_ptr_nonnull(s->captured);
		memcpy(s->captured, req->data, req->len);
		s->captured_len = req->len;
	}
	if (s->on_match)
		s->on_match(s, s->on_match_arg);
	if (req->len && req->dir == NVMEFS_DIR_FROM_CTRL) {
		size_t n = s->data_len < req->len ? s->data_len : req->len;

		/* The target writes all of it; what the script leaves out is zeros. */
		memset(req->data, 0, req->len);
		if (n)
			memcpy(req->data, s->data, n);
	}

	fq->sq_model = (uint16_t)((fq->sq_model + 1) % q->size);
	cid = req->cid;
	if (s->delivery == FAKE_BOGUS_CID)
		cid = s->bogus_cid;
	if (s->delivery == FAKE_STALE_CID) {
		ck_assert_msg(fq->have_last_cid, "step added at line %d: no earlier command to "
			      "take a stale command id from", s->line);
		cid = fq->last_cid;
	}
	ev.step = s;
	ev.cqe.result.dw.dw0 = nvmefs_cpu_to_le32(s->dw0);
	ev.cqe.result.dw.dw1 = nvmefs_cpu_to_le32(s->dw1);
	ev.cqe.sq_head = nvmefs_cpu_to_le16(s->sq_head >= 0 ? (uint16_t)s->sq_head : fq->sq_model);
	ev.cqe.sq_id = nvmefs_cpu_to_le16(q->qid);
	ev.cqe.cid = nvmefs_cpu_to_le16(cid);
	ev.cqe.status = nvmefs_cpu_to_le16((uint16_t)(s->status << 1));

	ck_assert_msg(!s->hold || s->delivery == FAKE_SEND_THEN_RESP,
		      "step added at line %d: only FAKE_SEND_THEN_RESP responses can be held",
		      s->line);
	switch (s->delivery) {
	case FAKE_RESP_THEN_SEND:
		ev.resp = true;
		ev.pause_after = true;
		push(fq, &ev);
		ev.resp = false;
		ev.pause_after = false;
		push(fq, &ev);
		break;
	case FAKE_NO_RESP:
		push(fq, &ev);
		break;
	case FAKE_DUP_RESP:
		ev.resp = true;
		push(fq, &ev);
		push(fq, &ev);
		ev.resp = false;
		push(fq, &ev);
		break;
	case FAKE_SEND_THEN_RESP:
	case FAKE_BOGUS_CID:
	case FAKE_STALE_CID:
		push(fq, &ev);
		ev.resp = true;
		if (s->hold && !fake_defer_posts)
			hold(fq, &ev);
		else
			push(fq, &ev);
		break;
	}
	if (!fake_defer_posts)
		s->posted++;
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int fake_process(struct nvmefs_queue *q, int timeout_ms)
{
	struct fake_queue *fq = q->tp;
	int n = 0, ret, cm_error;

	stat_inc(&fake_stats.process_calls);
	ck_assert_ptr_nonnull(fq);
	ck_assert_int_ge(timeout_ms, 0);
	post_all(q, fq);
	/* As rdma.c: connection events are read only when it waits. */
	cm_error = atomic_load(&fq->cm_error);
	if (cm_error && timeout_ms > 0)
		return nvmefs_error(cm_error, "queue %u: the target closed it (scripted)", q->qid);
	if (fq->ev_head == fq->nr_ev) {
		/* Nothing will come: a controller that does not answer. */
		if (timeout_ms > 0)
			sleep_ms(timeout_ms);
		stat_inc(&fake_stats.timeouts);
		return 0;
	}
	while (fq->ev_head < fq->nr_ev) {
		struct fake_event ev = fq->ev[fq->ev_head++];

		n++;
		if (!ev.resp) {
			nvmefs_queue_send_done(q, ev.req);
			continue;
		}
		ret = nvmefs_queue_response(q, &ev.cqe);
		if (ret < 0)
			return ret;
		fq->last_cid = nvmefs_cqe_cid(&ev.cqe);
		fq->have_last_cid = true;
		if (ev.pause_after) {
			ev.step->inflight_between = ev.req->inflight &&
						    ev.req->wait == NVMEFS_REQ_WAIT_SEND;
			break;
		}
	}
	return n;
}

static void fake_ctrl_release(struct nvmefs_ctrl *ctrl)
{
	bool bare;

	(void)ctrl;
	pthread_mutex_lock(&fake_lock);
	fake_stats.releases++;
	/* A device goes only once nothing of ours is left on it. */
	bare = fake_stats.mr_regs == fake_stats.mr_deregs;
	for (unsigned int i = 0; i < FAKE_MAX_QUEUES; i++)
		bare = bare && !queues[i];
	if (bare)
		fake_stats.bare_releases++;
	pthread_mutex_unlock(&fake_lock);
}

/* Keys that tell registrations apart: lkey 0x1000 + n, rkey 0x2000 + n. */
static int fake_mr_reg(struct nvmefs_ctrl *ctrl, struct nvmefs_mr *mr)
{
	ck_assert_ptr_nonnull(mr->addr);
	ck_assert_uint_gt(mr->len, 0);
	if (fake_mr_fail < 0)
		return nvmefs_error(fake_mr_fail, "registering %zu bytes failed (scripted)", mr->len);
	pthread_mutex_lock(&fake_lock);
	mr_serial++;
	mr->lkey = 0x1000 + mr_serial;
	mr->rkey = 0x2000 + mr_serial;
	fake_stats.mr_regs++;
	pthread_mutex_unlock(&fake_lock);
	nvmefs_ctrl_count_pin(ctrl, mr->addr, mr->len, true);
	mr->tp = (void *)&fake_ops;
	return 0;
}

static void fake_mr_dereg(struct nvmefs_mr *mr)
{
	ck_assert_msg(mr->tp == (void *)&fake_ops, "deregistering memory this transport did not "
		      "register (or twice)");
	nvmefs_ctrl_count_pin(mr->ctrl, mr->addr, mr->len, false);
	mr->tp = NULL;
	stat_inc(&fake_stats.mr_deregs);
}

static int fake_queue_fd(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;

	ck_assert_ptr_nonnull(fq);
	return fq->efd;
}

static int fake_queue_arm(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;
	uint64_t count;

	ck_assert_ptr_nonnull(fq);
	if (fake_arm_error) {
		int err = fake_arm_error;

		fake_arm_error = 0;
		return nvmefs_error(err, "queue %u: arming failed (scripted)", q->qid);
	}
	post_all(q, fq);
	/* As ibv_req_notify_cq(): consume the old event, then arm. */
	if (read(fq->efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		ck_abort_msg("reading the queue's eventfd: %s", strerror(errno));
	if (fake_arm_level) {
		count = 1;
		if (fq->ev_head < fq->nr_ev)
			ck_assert_int_eq(write(fq->efd, &count, sizeof(count)), (int)sizeof(count));
		fq->armed = true;
		return 0;
	}
	if (fq->ev_head < fq->nr_ev)
		return 1;
	fq->armed = true;
	return 0;
}

/* As rdma_cm.c's stop: what was never posted never goes; the responses the
 * target had not sent never come; every posted send completes, flushed. */
static void fake_queue_stop(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;

	ck_assert_ptr_nonnull(fq);
	stat_inc(&fake_stats.stops);
	fq->nr_unposted = 0;
	fq->stopped = true;
	if (fq->qid < FAKE_MAX_QUEUES)
		stopped_qid[fq->qid] = true;
	drop_held(fq);
	while (fq->ev_head < fq->nr_ev) {
		struct fake_event ev = fq->ev[fq->ev_head++];

		if (!ev.resp)
			nvmefs_queue_send_done(q, ev.req);
	}
}

static int fake_queue_check(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;
	uint64_t count;
	int cm_error;

	ck_assert_ptr_nonnull(fq);
	if (read(fq->cm_efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		ck_abort_msg("reading the queue's event eventfd: %s", strerror(errno));
	cm_error = atomic_load(&fq->cm_error);
	if (cm_error)
		return nvmefs_error(cm_error, "queue %u: the target closed it (scripted)", q->qid);
	return 0;
}

static int fake_queue_event_fd(struct nvmefs_queue *q)
{
	struct fake_queue *fq = q->tp;

	ck_assert_ptr_nonnull(fq);
	return fq->cm_efd;
}

static void cm_event(uint16_t qid, int err)
{
	uint64_t one = 1;

	ck_assert_msg(qid < FAKE_MAX_QUEUES && queues[qid], "no live queue %u for a CM event", qid);
	atomic_store(&queues[qid]->cm_error, err);
	ck_assert_int_eq(write(queues[qid]->cm_efd, &one, sizeof(one)), (int)sizeof(one));
}

void fake_disconnect(uint16_t qid)
{
	cm_event(qid, -ECONNRESET);
}

void fake_device_removed(uint16_t qid)
{
	cm_event(qid, -ENODEV);
}

bool fake_queue_stopped(uint16_t qid)
{
	return qid < FAKE_MAX_QUEUES && stopped_qid[qid];
}

const struct nvmefs_transport_ops fake_ops = {
	.name = "fake",
	.queue_create = fake_queue_create,
	.queue_destroy = fake_queue_destroy,
	.submit = fake_submit,
	.queue_stop = fake_queue_stop,
	.queue_check = fake_queue_check,
	.process = fake_process,
	.ctrl_release = fake_ctrl_release,
	.mr_reg = fake_mr_reg,
	.mr_dereg = fake_mr_dereg,
	.queue_fd = fake_queue_fd,
	.queue_event_fd = fake_queue_event_fd,
	.queue_arm = fake_queue_arm,
};
