/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The script of fake_transport.h: the steps a test writes, in order, and
 * the matching of what the library sends against them.  The transport's
 * side is fake_transport.c.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_transport.h"
#include "fake_priv.h"
#include "lifecycle/ctrl.h"
#include "types/ctrl_types.h"
#include "transport/queue.h"
#include "types/transport_ops.h"

#define FAKE_MAX_STEPS 2048

/* Guarded by fake_lock while the library runs. */
static struct fake_step steps[FAKE_MAX_STEPS];
static unsigned int nr_steps, pos;

static const char *kind_name(enum fake_step_kind kind)
{
	switch (kind) {
	case FAKE_CREATE: return "queue_create";
	case FAKE_CMD: return "a command";
	case FAKE_DESTROY: return "queue_destroy";
	}
	return "?";
}

void fake_script_reset(void)
{
	unsigned int i;

	for (i = 0; i < nr_steps; i++) {
		free(steps[i].data);
		free(steps[i].captured);
	}
	memset(steps, 0, sizeof(steps));
	nr_steps = 0;
	pos = 0;
}

void fake_assert_done_at(int line)
{
	unsigned int i;

	for (i = 0; i < nr_steps; i++)
		if (steps[i].floating && steps[i].used < steps[i].min)
			fake_abort("line %d: floating step %u (added at line %d, opcode %#x) matched "
				     "%u times, wanted at least %u", line, i, steps[i].line,
				     steps[i].opcode, steps[i].used, steps[i].min);
	while (pos < nr_steps && (steps[pos].floating || steps[pos].used >= steps[pos].min))
		pos++;
	if (pos < nr_steps)
		fake_abort("line %d: the script was not consumed: step %u (added at line %d, "
			     "%s, matched %u times, wanted at least %u) and %u more never came",
			     line, pos, steps[pos].line, kind_name(steps[pos].kind), steps[pos].used,
			     steps[pos].min, nr_steps - pos - 1);
	fake_assert(fake_stats.creates == fake_stats.destroys,
		      "line %d: %u queues created but %u destroyed", line, fake_stats.creates,
		      fake_stats.destroys);
	fake_assert(fake_stats.mr_regs == fake_stats.mr_deregs,
		      "line %d: %u memory regions registered but %u deregistered", line,
		      fake_stats.mr_regs, fake_stats.mr_deregs);
}

static struct fake_step *add(int line, enum fake_step_kind kind)
{
	struct fake_step *s;

	fake_assert(nr_steps < FAKE_MAX_STEPS, "line %d: more than %d script steps", line,
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
	fake_assert_that(s->data);
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
	fake_assert(s->kind == FAKE_CMD, "step added at line %d: only commands float", s->line);
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

	fake_assert_that(nr_ns < NVMEFS_NS_LIST_LEN);
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
	fake_assert(ret == 0, "connect to %s: %d: %s", traddr, ret, nvmefs_errmsg());
	fake_assert_that(ctrl);
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

struct fake_step *fake_next_step(enum fake_step_kind kind, const struct nvmefs_queue *q,
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
			fake_abort("after the script's last step (%u steps) came %s", nr_steps, what);
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
		fake_abort("script step %u (added at line %d): got %s: %s", pos, s->line, what, why);
	}
}
