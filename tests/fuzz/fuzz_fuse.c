/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness: the FUSE side of `nvmefs mount` (src/fuse) as the
 * kernel and a target drive it, checked against a model of the files.
 *
 * The file system's requests are where the kernel's arguments (offsets,
 * sizes, modes, flags, inode numbers) turn into NVMe commands, with
 * read-modify-write of partial blocks, write reservations, a retry list
 * when the queue is full, and completions in any order.  Integration
 * tests cover the common paths against the kernel target; this covers
 * the corners: every fallocate mode, offsets at and past the end or
 * negative, queues of two entries, commands that fail, a controller that
 * dies with requests in flight.
 *
 * Nothing of libfuse or RDMA is linked.  The harness defines the fuse_reply_*
 * functions the handlers call and fuse_session_process_buf(), so that
 * the FUSE front end's handing over (fs_loop_ops, as loop.c's threads call
 * it) gives it a request laid out in the worker's registered buffer as
 * libfuse would (a write's payload 80 bytes in).  The
 * library (src/lib) runs for real over the tests' shared target
 * (tests/lib/fake_transport.h) running commands itself: a target
 * with one or two small namespaces (512- or 4096-byte blocks) that executes
 * Read, Write, Write Zeroes, Dataset Management and Flush on a shadow image,
 * completes commands in an order the input picks, and fails some with an
 * NVMe status.  The input is a header (geometry, queue size, failure rate)
 * and up to FZ_MAX_OPS operations, each answered at once or left in flight.
 *
 * Checked, with abort(): every request gets exactly one reply, and the reply
 * the operation's arguments call for; an error only when the target failed
 * something meanwhile; a read returns no more than asked and than the file
 * holds, and the bytes of the model (what successful writes, zeroing and
 * punching made of the namespace); every command stays inside its namespace
 * and inside the blocks of a write or zeroing in flight, a zeroing covers
 * exactly the whole blocks asked for (with Deallocate only when punching on a
 * namespace that deallocates to zeros); the image equals the model whenever
 * no write is in flight, so a write never changes bytes outside its range; a
 * successful fsync sent a Flush.  ASan and UBSan do the rest, leaks included.
 *
 * One job, kept in one file past 700 lines: one harness, the model of the
 * files and the replies checked against it sharing its state; the target
 * itself is tests/lib's.
 */
#define FUSE_USE_VERSION 34

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <fuse_lowlevel.h>
#include <nvme/types.h>

#include "../../src/lib/lifecycle/ctrl.h"
#include "../../src/lib/types/ctrl_types.h"
#include "../../src/lib/transport/mr.h"
#include "../../src/lib/transport/queue.h"
#include "../../src/fuse/fs_priv.h"
#include "../../src/export/export_priv.h"
#include "fake_transport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX_OPS 32
#define FZ_MAX_REQS 64
#define FZ_MAX_STATS 4
/* Namespace 1 holds at most this much, in 512 or 4096-byte blocks. */
#define FZ_NS_BYTES (256u << 10)
#define FZ_MAX_BLOCKS (FZ_NS_BYTES / 512)
/* Where libfuse puts a write's payload: after fuse_in_header and fuse_write_in. */
#define FZ_HDR 80
/* Rounds of polling every queue before a request still unanswered is a hang. */
#define FZ_MAX_ROUNDS 20000

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "fuzz_fuse: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort(); \
		} \
	} while (0)

enum fz_op {
	OP_READ, OP_WRITE, OP_FALLOCATE, OP_FSYNC, OP_GETATTR, OP_SETATTR, OP_LOOKUP, OP_READDIR,
	OP_OPEN, OP_RELEASE, OP_GETXATTR, OP_LISTXATTR, OP_STATFS, OP_READ_INFO, OP_READ_STATS,
	OP_POLL, OP_DIE, OP_INIT, NR_OPS
};

/* What the harness writes into the worker's buffer for process_buf. */
struct fz_msg {
	uint8_t op;
	uint8_t id;
	uint16_t name;
	int32_t mode;		/* fallocate mode, open flags, setattr's to_set, datasync */
	uint64_t ino;
	int64_t off;		/* offset; setattr's size */
	int64_t len;		/* fallocate's length */
	uint64_t size;		/* read, write, readdir, xattr sizes */
	uint64_t fh;
	uint64_t pad[2];
};
_Static_assert(sizeof(struct fz_msg) <= FZ_HDR, "the message fits before the payload");

struct fz_ns {
	uint32_t nsid;
	uint64_t nsze;
	uint32_t lba;
	uint8_t shift;
	uint64_t bytes;
	uint8_t *img;		/* the target's */
	uint8_t *model;		/* what the replies say it must be */
	unsigned long flushes;
};

/* A request the kernel sent: the fuse_req_t of the handlers. */
struct fuse_req {
	struct fz_msg m;
	bool used, replied, inflight;
	/* A write, zeroing or punch that can change blocks [first, last]. */
	bool mutating;
	int ns;			/* index into fz.ns, or -1 */
	uint64_t first, last;	/* blocks it may write */
	uint64_t mfirst, mend;	/* whole blocks it zeroes or punches */
	bool zero_shared;	/* another zeroing could have sent the same command */
	unsigned long failures;	/* fz.failures at dispatch */
	unsigned long flushes;	/* the namespace's flushes at dispatch */
	uint8_t *payload;	/* a write's bytes, for the model */
	uint8_t taint[FZ_MAX_BLOCKS / 8];	/* a read: blocks a write touched meanwhile */
	uint8_t zmap[FZ_MAX_BLOCKS / 8];	/* a zeroing: blocks zeroed */
	const char *stats;	/* OP_READ_STATS: the snapshot read */
};

static struct {
	const uint8_t *in;
	size_t len, pos;
	uint64_t rng;
	unsigned int fail_rate;		/* in 64ths */
	bool dlfeat_zeroes, uuid;
	uint8_t mdts;
	unsigned int nr_ns;
	struct fz_ns ns[2];
	struct fs *fs;
	struct fuse_req reqs[FZ_MAX_REQS];
	unsigned int nr_reqs;
	uint64_t stats_fh[FZ_MAX_STATS];
	unsigned int nr_stats;
	unsigned long failures;		/* statuses injected, and the controller's death */
	bool dead;
} fz;

/* ---------------------------------------------------------------------- */
/* Input                                                                    */
/* ---------------------------------------------------------------------- */

static uint8_t in8(void)
{
	return fz.pos < fz.len ? fz.in[fz.pos++] : 0;
}

static uint16_t in16(void)
{
	return (uint16_t)(in8() | in8() << 8);
}

static uint32_t in32(void)
{
	return (uint32_t)in16() | (uint32_t)in16() << 16;
}

/* Decided by the input's seed, not by its bytes: which commands fail. */
static uint32_t rnd(void)
{
	fz.rng = fz.rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(fz.rng >> 33);
}

static bool bit(const uint8_t *map, uint64_t i)
{
	return map[i / 8] & (1u << (i % 8));
}

static void set_bit(uint8_t *map, uint64_t i)
{
	map[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* What the target holds before anything is written: never zeros, so that
 * zeroing too much shows. */
static uint8_t pattern(uint64_t i, uint32_t nsid)
{
	return (uint8_t)((i * 131 + nsid * 17 + (i >> 9)) % 251 + 1);
}

/* ---------------------------------------------------------------------- */
/* The target                                                               */
/* ---------------------------------------------------------------------- */

static struct fz_ns *ns_by_id(uint32_t nsid)
{
	for (unsigned int i = 0; i < fz.nr_ns; i++) {
		if (fz.ns[i].nsid == nsid)
			return &fz.ns[i];
	}
	return NULL;
}

/* A command of this namespace may write blocks [slba, slba + nlb) only
 * while a write, zeroing or punch of them is in flight; for a zeroing,
 * also which request it belongs to. */
static void check_mutation(const struct fz_ns *ns, uint64_t slba, uint64_t nlb, bool zeroes,
			   bool deac)
{
	struct fuse_req *owner = NULL;
	unsigned int owners = 0;

	for (unsigned int i = 0; i < fz.nr_reqs; i++) {
		struct fuse_req *r = &fz.reqs[i];

		if (!r->inflight || !r->mutating || &fz.ns[r->ns] != ns)
			continue;
		if (!zeroes && slba >= r->first && slba + nlb <= r->last + 1)
			return;
		if (zeroes && r->m.op == OP_FALLOCATE && slba >= r->mfirst && slba + nlb <= r->mend) {
			owner = r;
			owners++;
		}
	}
	if (!owners) {
		fprintf(stderr, "fuzz_fuse: namespace %u: %s of blocks %" PRIu64 "+%" PRIu64
			" that no request in flight asked for\n", ns->nsid,
			zeroes ? "Write Zeroes" : "Write", slba, nlb);
		abort();
	}
	for (unsigned int i = 0; i < fz.nr_reqs; i++) {
		struct fuse_req *r = &fz.reqs[i];

		if (r->inflight && r->mutating && r->m.op == OP_FALLOCATE && &fz.ns[r->ns] == ns &&
		    slba >= r->mfirst && slba + nlb <= r->mend) {
			r->zero_shared |= owners > 1;
			for (uint64_t b = slba; b < slba + nlb; b++)
				set_bit(r->zmap, b);
		}
	}
	if (owners == 1) {
		bool punch = owner->m.mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);

		/* Deallocating is only for punching, where the blocks then read as zeros. */
		CHECK(deac == (punch && fz.dlfeat_zeroes));
	}
}

/* Runs an I/O command on the image; its status. */
static uint16_t exec_io(struct nvmefs_req *req)
{
	const struct nvmefs_sqe *sqe = &req->cmd->sqe;
	uint32_t nsid = nvmefs_le32_to_cpu(sqe->nsid);
	uint32_t cdw12 = nvmefs_le32_to_cpu(sqe->cdw12);
	uint64_t slba = nvmefs_le32_to_cpu(sqe->cdw10) | (uint64_t)nvmefs_le32_to_cpu(sqe->cdw11) << 32;
	uint64_t nlb = (cdw12 & 0xffff) + 1;
	struct fz_ns *ns = ns_by_id(nsid);
	static const uint16_t statuses[] = {
		0x4002,		/* Invalid Field, DNR */
		0x4080,		/* LBA Out of Range, DNR */
		0x0006,		/* Internal Error: retried */
		0x4281,		/* Unrecovered Read Error, DNR */
		0x4280,		/* Write Fault, DNR */
		0x4286,		/* Access Denied, DNR */
		0x0082,		/* Namespace Not Ready: retried */
	};

	CHECK(ns);
	switch (sqe->opcode) {
	case nvme_cmd_read:
	case nvme_cmd_write:
	case nvme_cmd_write_zeroes:
		CHECK(slba < ns->nsze && nlb <= ns->nsze - slba);
		break;
	case nvme_cmd_flush:
	case nvme_cmd_dsm:
		break;
	default:
		fprintf(stderr, "fuzz_fuse: unexpected I/O opcode %#x\n", sqe->opcode);
		abort();
	}
	if (sqe->opcode == nvme_cmd_read || sqe->opcode == nvme_cmd_write) {
		/* The data moves by RDMA: it must lie in memory the caller registered. */
		CHECK(req->len == nlb << ns->shift);
		CHECK(req->mr && (uint8_t *)req->data >= req->mr->addr &&
		      (uint8_t *)req->data + req->len <= req->mr->addr + req->mr->len);
	}
	if (sqe->opcode == nvme_cmd_write)
		check_mutation(ns, slba, nlb, false, false);
	if (sqe->opcode == nvme_cmd_write_zeroes)
		check_mutation(ns, slba, nlb, true, cdw12 & (1u << 25));
	if (fz.fail_rate && rnd() % 64 < fz.fail_rate) {
		fz.failures++;
		return statuses[rnd() % (sizeof(statuses) / sizeof(statuses[0]))];
	}
	switch (sqe->opcode) {
	case nvme_cmd_read:
		memcpy(req->data, ns->img + (slba << ns->shift), req->len);
		break;
	case nvme_cmd_write:
		memcpy(ns->img + (slba << ns->shift), req->data, req->len);
		break;
	case nvme_cmd_write_zeroes:
		memset(ns->img + (slba << ns->shift), 0, nlb << ns->shift);
		break;
	case nvme_cmd_dsm: {
		const struct nvme_dsm_range *r = req->data;

		/* Advisory: the blocks keep their data. */
		CHECK(req->len >= sizeof(*r));
		CHECK(nvmefs_le64_to_cpu(r->slba) < ns->nsze &&
		      nvmefs_le32_to_cpu(r->nlb) <= ns->nsze - nvmefs_le64_to_cpu(r->slba));
		break;
	}
	default:
		ns->flushes++;
		break;
	}
	return 0;
}

static void id_ctrl(struct nvme_id_ctrl *id)
{
	memset(id, 0, sizeof(*id));
	memcpy(id->sn, "FUZZ-0001           ", sizeof(id->sn));
	/* A model name with what getfattr must not print raw. */
	memcpy(id->mn, "nvmefs fuzz \"target\"\t\\ \x01                  ", sizeof(id->mn));
	memcpy(id->fr, "1.0     ", sizeof(id->fr));
	id->mdts = fz.mdts;
}

/* Answers an admin command at once: a live NVM controller with our namespaces. */
static uint32_t exec_admin(struct nvmefs_req *req)
{
	const struct nvmefs_sqe *sqe = &req->cmd->sqe;
	uint32_t cns = nvmefs_le32_to_cpu(sqe->cdw10) & 0xff;
	uint32_t nsid = nvmefs_le32_to_cpu(sqe->nsid);

	if (sqe->opcode == nvme_admin_fabrics) {
		if (req->cmd->fabrics.fctype == nvme_fabrics_type_connect)
			return 1;
		if (req->cmd->fabrics.fctype != nvme_fabrics_type_property_get)
			return 0;
		switch (nvmefs_le32_to_cpu(req->cmd->prop_get.offset)) {
		case NVME_REG_CAP: return 0x3ff;		/* MQES 1023 */
		case NVME_REG_VS: return 0x10400;
		default: return 0x9;				/* ready, shut down */
		}
	}
	if (sqe->opcode == nvme_admin_set_features)
		return 0x00ff00ff;
	if (sqe->opcode != nvme_admin_identify || !req->data)
		return 0;
	CHECK(req->len >= NVMEFS_IDENTIFY_DATA_SIZE);
	if (cns == NVME_IDENTIFY_CNS_CTRL) {
		id_ctrl(req->data);
	} else if (cns == NVME_IDENTIFY_CNS_NS_ACTIVE_LIST) {
		uint32_t *list = req->data;

		for (unsigned int i = 0, n = 0; i < fz.nr_ns; i++) {
			if (fz.ns[i].nsid > nsid)
				list[n++] = nvmefs_cpu_to_le32(fz.ns[i].nsid);
		}
	} else if (cns == NVME_IDENTIFY_CNS_NS && ns_by_id(nsid)) {
		struct nvme_id_ns *id = req->data;
		const struct fz_ns *ns = ns_by_id(nsid);

		id->nsze = id->ncap = id->nuse = nvmefs_cpu_to_le64(ns->nsze);
		id->lbaf[0].ds = ns->shift;
		id->dlfeat = fz.dlfeat_zeroes ? NVME_NS_DLFEAT_WRITE_ZEROES : 0;
		memset(id->nguid, 0xa0 + (int)nsid, sizeof(id->nguid));
		memset(id->eui64, 0xe0 + (int)nsid, sizeof(id->eui64));
	} else if (cns == NVME_IDENTIFY_CNS_NS_DESC_LIST && fz.uuid) {
		uint8_t *d = req->data;

		d[0] = NVME_NIDT_UUID;
		d[1] = 16;
		memset(d + 4, 0x50 + (int)nsid, 16);
	}
	return 0;
}

/* The shared target's command runner (tests/lib/fake_transport.h): I/O on
 * the images, admin commands answered as a live NVM controller. */
static uint16_t fz_run(struct nvmefs_queue *q, struct nvmefs_req *req, uint32_t *dw0)
{
	if (q->qid && req->cmd->sqe.opcode != nvme_admin_fabrics)
		return exec_io(req);
	*dw0 = exec_admin(req);
	return 0;
}

/* The admin queue and Connect, on any queue, are answered at once; I/O as
 * the input releases it (OP_POLL), in the order it picks. */
static bool fz_hold(const struct nvmefs_queue *q, const struct nvmefs_req *req)
{
	return q->qid && req->cmd->sqe.opcode != nvme_admin_fabrics;
}

static const struct fake_exec fz_target = { .run = fz_run, .hold = fz_hold };

/* ---------------------------------------------------------------------- */
/* The model, and what each reply must be                                   */
/* ---------------------------------------------------------------------- */

static struct fz_ns *ns_of_ino(uint64_t ino)
{
	if (ino < INO_NS_BASE || ino - INO_NS_BASE >= fz.nr_ns)
		return NULL;
	return &fz.ns[ino - INO_NS_BASE];
}

static bool failed_since(const struct fuse_req *r)
{
	return fz.failures != r->failures || fz.dead;
}

static bool mutations_inflight(void)
{
	for (unsigned int i = 0; i < fz.nr_reqs; i++) {
		if (fz.reqs[i].inflight && fz.reqs[i].mutating)
			return true;
	}
	return false;
}

/* With no write in flight, the target holds exactly what the replies said. */
static void check_images(void)
{
	if (mutations_inflight())
		return;
	for (unsigned int i = 0; i < fz.nr_ns; i++) {
		const struct fz_ns *ns = &fz.ns[i];

		if (!memcmp(ns->img, ns->model, ns->bytes))
			continue;
		for (uint64_t b = 0; b < ns->bytes; b++) {
			if (ns->img[b] != ns->model[b]) {
				fprintf(stderr, "fuzz_fuse: namespace %u, byte %" PRIu64 " is %#x on the "
					"target, %#x in the model\n", ns->nsid, b, ns->img[b],
					ns->model[b]);
				abort();
			}
		}
	}
}

static struct fuse_req *begin_reply(fuse_req_t req)
{
	CHECK(req >= fz.reqs && req < fz.reqs + FZ_MAX_REQS && req->used);
	CHECK(!req->replied);
	req->replied = true;
	req->inflight = false;
	return req;
}

/* A write, zeroing or punch ended with @err. */
static void mutation_done(struct fuse_req *r, int err)
{
	struct fz_ns *ns;
	uint64_t off, len;

	if (!r->mutating)
		return;
	ns = &fz.ns[r->ns];
	off = (uint64_t)r->m.off;
	len = r->m.op == OP_WRITE ? r->m.size : (uint64_t)r->m.len;
	if (err) {
		/* Part of it may have reached the target: only its own range. */
		memcpy(ns->model + off, ns->img + off, len);
	} else if (r->m.op == OP_WRITE) {
		memcpy(ns->model + off, r->payload, len);
	} else {
		memset(ns->model + off, 0, len);
		if (!r->zero_shared) {
			for (uint64_t b = r->mfirst; b < r->mend; b++)
				CHECK(bit(r->zmap, b));
		}
	}
	check_images();
}

static const char *const names[] = {
	"info", "stats", "n1", "n2", "n3", ".", "..", "", "n0", "n01", "user.nvmefs.nsid",
	"user.nvmefs.nguid", "user.nvmefs.uuid", "user.nvmefs.eui64", "user.nvmefs.lba_size",
	"user.nvmefs.capacity", "user.nvmefs.subnqn", "user.nvmefs.model", "user.nvmefs.serial",
	"user.nvmefs.firmware", "user.nvmefs.", "user.other", "security.selinux",
};
#define NR_NAMES (sizeof(names) / sizeof(names[0]))
#define FIRST_XATTR 10
#define NR_XATTRS 10

/* Room the list of extended attributes takes: every name and its NUL. */
static size_t xattr_list_len(void)
{
	size_t n = 0;

	for (unsigned int i = FIRST_XATTR; i < FIRST_XATTR + NR_XATTRS; i++)
		n += strlen(names[i]) + 1;
	return n;
}

/* Names of the root directory that lookup finds. */
static bool known_name(const char *name)
{
	char n[16];

	if (!strcmp(name, "info") || !strcmp(name, "stats"))
		return true;
	for (unsigned int i = 0; i < fz.nr_ns; i++) {
		snprintf(n, sizeof(n), "n%u", fz.ns[i].nsid);
		if (!strcmp(name, n))
			return true;
	}
	return false;
}

/* The errno a request whose target did not fail must get, or 0 for
 * success; -1: 0 unless the target failed something meanwhile, -2: not
 * judged. */
static int expected_err(const struct fuse_req *r)
{
	const struct fz_msg *m = &r->m;
	struct fz_ns *ns = ns_of_ino(m->ino);
	bool text = m->ino == INO_INFO || m->ino == INO_STATS;

	switch (m->op) {
	case OP_READ:
		return ns ? -1 : EBADF;
	case OP_WRITE:
		if (!ns)
			return EBADF;
		if ((uint64_t)m->off > ns->bytes || m->size > ns->bytes - (uint64_t)m->off)
			return ENOSPC;
		return m->size ? -1 : 0;
	case OP_FALLOCATE:
		if (!ns)
			return EBADF;
		if (m->mode == 0 || m->mode == FALLOC_FL_KEEP_SIZE) {
			/* The kernel never sends it (vfs_fallocate() refuses it), and
			 * nor may we say yes: a range that wraps is not inside. */
			if (m->off < 0 || m->len <= 0)
				return EINVAL;
			return (uint64_t)m->off + (uint64_t)m->len <= ns->bytes ? 0 : ENOSPC;
		}
		if (m->mode != (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) &&
		    m->mode != FALLOC_FL_ZERO_RANGE && m->mode != (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE))
			return EOPNOTSUPP;
		if (m->len <= 0)
			return EINVAL;
		if (m->off < 0 || (uint64_t)m->off + (uint64_t)m->len > ns->bytes)
			return ENOSPC;
		return -1;
	case OP_FSYNC:
		return ns ? -1 : text ? 0 : EBADF;
	case OP_GETATTR:
		return ns || text || m->ino == FUSE_ROOT_ID ? 0 : ENOENT;
	case OP_SETATTR:
		if ((m->mode & FUSE_SET_ATTR_SIZE) && (!ns || (uint64_t)m->off != ns->bytes))
			return ns ? EPERM : EACCES;
		if (m->mode & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID | FUSE_SET_ATTR_MODE))
			return EPERM;
		return ns || text || m->ino == FUSE_ROOT_ID ? 0 : ENOENT;
	case OP_READDIR:
		return m->ino == FUSE_ROOT_ID ? 0 : ENOTDIR;
	case OP_OPEN:
		if (text)
			return (m->mode & O_ACCMODE) == O_RDONLY ? 0 : EACCES;
		return ns ? 0 : ENOENT;
	case OP_LOOKUP:
		return m->ino == FUSE_ROOT_ID && known_name(names[m->name]) ? 0 : ENOENT;
	case OP_GETXATTR:
		if (!ns || m->name < FIRST_XATTR || m->name >= FIRST_XATTR + NR_XATTRS)
			return ENODATA;
		/* ERANGE when the value is longer: checked where it is known. */
		return m->size ? -2 : 0;
	case OP_LISTXATTR:
		return m->size && m->size < (ns ? xattr_list_len() : 0) ? ERANGE : 0;
	default:
		return 0;
	}
}

static void check_err(struct fuse_req *r, int err)
{
	int want = expected_err(r);

	if (want == -2 || (want == -1 && err && failed_since(r)))
		want = err;
	else if (want == -1)
		want = 0;
	if (err != want) {
		fprintf(stderr, "fuzz_fuse: op %u on inode %" PRIu64 " (off %" PRId64 ", len %" PRId64
			", size %" PRIu64 ", mode %#x): replied error %d, expected %d\n", r->m.op,
			r->m.ino, r->m.off, r->m.len, r->m.size, (unsigned int)r->m.mode, err, want);
		abort();
	}
}

/* The reply to a read of a namespace: as long as the file allows, the
 * model's bytes wherever no write ran meanwhile. */
static void check_ns_read(const struct fuse_req *r, const char *buf, size_t size)
{
	const struct fz_ns *ns = ns_of_ino(r->m.ino);
	uint64_t off = (uint64_t)r->m.off, want = 0;

	CHECK(ns);
	if (off < ns->bytes)
		want = r->m.size < ns->bytes - off ? r->m.size : ns->bytes - off;
	CHECK(size == want);
	for (uint64_t i = 0; i < size; i++) {
		uint64_t b = (off + i) >> ns->shift;

		if (!bit(r->taint, b) && (uint8_t)buf[i] != ns->model[off + i]) {
			fprintf(stderr, "fuzz_fuse: read of n%u at %" PRIu64 ": byte %" PRIu64 " is %#x, "
				"the model has %#x\n", ns->nsid, off, off + i, (uint8_t)buf[i],
				ns->model[off + i]);
			abort();
		}
	}
}

static void check_text(const char *text, size_t len, const struct fuse_req *r, const char *buf,
		       size_t size)
{
	uint64_t off = (uint64_t)r->m.off;
	size_t want = off >= len ? 0 : len - off < r->m.size ? len - off : r->m.size;

	CHECK(size == want);
	CHECK(!size || !memcmp(buf, text + off, size));
}

/* A directory listing: whole entries, within the size asked for. */
static void check_dirents(const struct fuse_req *r, const char *buf, size_t size)
{
	size_t pos = 0;

	CHECK(size <= r->m.size);
	while (pos < size) {
		uint64_t ino, off;
		uint32_t namelen;

		CHECK(size - pos >= 24);
		memcpy(&ino, buf + pos, 8);
		memcpy(&off, buf + pos + 8, 8);
		memcpy(&namelen, buf + pos + 16, 4);
		CHECK(namelen && namelen < 16 && size - pos >= 24 + namelen);
		CHECK(ino == FUSE_ROOT_ID || ino == INO_INFO || ino == INO_STATS || ns_of_ino(ino));
		pos += (24 + namelen + 7) & ~(size_t)7;
	}
	CHECK(pos == size);
}

/* ---------------------------------------------------------------------- */
/* libfuse, as far as the handlers use it                                   */
/* ---------------------------------------------------------------------- */

void *fuse_req_userdata(fuse_req_t req)
{
	CHECK(req->used && !req->replied);
	return fz.fs;
}

int fuse_reply_err(fuse_req_t req, int err)
{
	struct fuse_req *r = begin_reply(req);

	CHECK(err >= 0 && err < 4096);
	if (r->m.op == OP_RELEASE) {
		CHECK(err == 0);
		return 0;
	}
	check_err(r, err);
	if (r->m.op == OP_FSYNC && !err && ns_of_ino(r->m.ino))
		CHECK(ns_of_ino(r->m.ino)->flushes != r->flushes);
	mutation_done(r, err);
	return 0;
}

int fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
	struct fuse_req *r = begin_reply(req);
	struct fz_ns *ns = ns_of_ino(r->m.ino);

	CHECK(!size || buf);
	switch (r->m.op) {
	case OP_READ:
		if (r->m.ino == INO_INFO)
			check_text(fz.fs->info, fz.fs->info_len, r, buf, size);
		else
			check_ns_read(r, buf, size);
		break;
	case OP_READ_STATS:
		check_text(r->stats, strlen(r->stats), r, buf, size);
		break;
	case OP_READDIR:
		check_dirents(r, buf, size);
		break;
	case OP_GETXATTR:
		check_err(r, 0);
		CHECK(size <= r->m.size && !memchr(buf, 0, size));
		if (!strcmp(names[r->m.name], "user.nvmefs.capacity")) {
			char v[32];

			snprintf(v, sizeof(v), "%" PRIu64, ns->bytes);
			CHECK(size == strlen(v) && !memcmp(buf, v, size));
		}
		break;
	case OP_LISTXATTR:
		check_err(r, 0);
		CHECK(size == (ns ? xattr_list_len() : 0) && size <= r->m.size);
		CHECK(!size || buf[size - 1] == 0);
		break;
	default:
		CHECK(!"a buffer reply to this operation");
	}
	return 0;
}

int fuse_reply_write(fuse_req_t req, size_t count)
{
	struct fuse_req *r = begin_reply(req);

	CHECK(r->m.op == OP_WRITE);
	check_err(r, 0);
	CHECK(count == r->m.size);
	mutation_done(r, 0);
	return 0;
}

static void check_attr(uint64_t ino, const struct stat *st)
{
	struct fz_ns *ns = ns_of_ino(ino);

	CHECK(st->st_ino == ino);
	if (ns)
		CHECK(S_ISREG(st->st_mode) && (uint64_t)st->st_size == ns->bytes &&
		      (uint32_t)st->st_blksize == ns->lba);
	else if (ino == FUSE_ROOT_ID)
		CHECK(S_ISDIR(st->st_mode));
	else
		CHECK((ino == INO_INFO || ino == INO_STATS) && S_ISREG(st->st_mode) &&
		      !(st->st_mode & 0222));
}

int fuse_reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
	struct fuse_req *r = begin_reply(req);
	const char *name = names[r->m.name];

	CHECK(r->m.op == OP_LOOKUP);
	check_err(r, 0);
	if (e->ino == INO_INFO)
		CHECK(!strcmp(name, "info"));
	else if (e->ino == INO_STATS)
		CHECK(!strcmp(name, "stats"));
	else
		CHECK(ns_of_ino(e->ino) && !strcmp(name, fz.fs->ns[e->ino - INO_NS_BASE].name));
	check_attr(e->ino, &e->attr);
	return 0;
}

int fuse_reply_attr(fuse_req_t req, const struct stat *attr, double attr_timeout)
{
	struct fuse_req *r = begin_reply(req);

	(void)attr_timeout;
	CHECK(r->m.op == OP_GETATTR || r->m.op == OP_SETATTR);
	check_err(r, 0);
	check_attr(r->m.ino, attr);
	return 0;
}

int fuse_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	struct fuse_req *r = begin_reply(req);

	CHECK(r->m.op == OP_OPEN);
	check_err(r, 0);
	if (r->m.ino == INO_STATS) {
		CHECK(fi->fh && fi->direct_io && fz.nr_stats < FZ_MAX_STATS);
		fz.stats_fh[fz.nr_stats++] = fi->fh;
	}
	return 0;
}

int fuse_reply_statfs(fuse_req_t req, const struct statvfs *st)
{
	struct fuse_req *r = begin_reply(req);
	uint64_t blocks = 0;

	CHECK(r->m.op == OP_STATFS);
	for (unsigned int i = 0; i < fz.nr_ns; i++)
		blocks += fz.ns[i].bytes / 4096;
	CHECK(st->f_blocks == blocks && st->f_bsize == 4096 && st->f_files == 3 + fz.nr_ns);
	return 0;
}

int fuse_reply_xattr(fuse_req_t req, size_t count)
{
	struct fuse_req *r = begin_reply(req);

	CHECK(r->m.size == 0);
	check_err(r, 0);
	if (r->m.op == OP_LISTXATTR)
		CHECK(count == (ns_of_ino(r->m.ino) ? xattr_list_len() : 0));
	else
		CHECK(r->m.op == OP_GETXATTR && count < 300);
	return 0;
}

/* As libfuse: the entry's size, written only if it fits. */
size_t fuse_add_direntry(fuse_req_t req, char *buf, size_t bufsize, const char *name,
			 const struct stat *stbuf, off_t off)
{
	size_t namelen = strlen(name), entlen = 24 + namelen, padded = (entlen + 7) & ~(size_t)7;
	uint64_t ino = stbuf->st_ino, uoff = (uint64_t)off;
	uint32_t nl = (uint32_t)namelen, type = (stbuf->st_mode & S_IFMT) >> 12;

	CHECK(req->used && !req->replied && req->m.op == OP_READDIR);
	if (!buf || padded > bufsize)
		return padded;
	memcpy(buf, &ino, 8);
	memcpy(buf + 8, &uoff, 8);
	memcpy(buf + 16, &nl, 4);
	memcpy(buf + 20, &type, 4);
	memcpy(buf + 24, name, namelen);
	memset(buf + entlen, 0, padded - entlen);
	return padded;
}

int fuse_lowlevel_notify_inval_inode(struct fuse_session *se, fuse_ino_t ino, off_t off,
				     off_t len)
{
	(void)se;
	(void)ino;
	(void)off;
	(void)len;
	return 0;
}

int fuse_lowlevel_notify_inval_entry(struct fuse_session *se, fuse_ino_t parent, const char *name,
				     size_t namelen)
{
	(void)se;
	(void)parent;
	(void)name;
	(void)namelen;
	return 0;
}

int fuse_session_fd(struct fuse_session *se)
{
	(void)se;
	return -1;
}

int fuse_session_exited(struct fuse_session *se)
{
	(void)se;
	return 0;
}

#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18)
/* FUSE over io_uring's calls (src/fuse/ring.c, built with libfuse 3.18):
 * the harness's requests all come as from /dev/fuse. */
bool fuse_req_is_uring(fuse_req_t req)
{
	(void)req;
	return false;
}

int fuse_req_get_payload(fuse_req_t req, char **payload, size_t *payload_sz, void **mr)
{
	(void)req;
	(void)payload;
	(void)payload_sz;
	(void)mr;
	return -EINVAL;
}

void fuse_unset_feature_flag(struct fuse_conn_info *conn, uint64_t flag)
{
	conn->want_ext &= ~flag;
	conn->want &= ~(uint32_t)flag;
}

void fuse_session_exit(struct fuse_session *se)
{
	(void)se;
}

void fuse_set_log_func(fuse_log_func_t func)
{
	(void)func;
}

int fuse_opt_add_arg(struct fuse_args *args, const char *arg)
{
	(void)args;
	(void)arg;
	return 0;
}
#endif

/* libfuse's dispatch: the message the harness wrote becomes the call. */
void fuse_session_process_buf(struct fuse_session *se, const struct fuse_buf *fb)
{
	const struct fuse_lowlevel_ops *ops = &fs_lowlevel_ops;
	struct fz_msg m;
	struct fuse_req *r;
	struct fuse_file_info fi = { 0 };
	struct stat attr = { 0 };

	(void)se;
	CHECK(fb->size >= FZ_HDR);
	memcpy(&m, fb->mem, sizeof(m));
	r = &fz.reqs[m.id];
	fi.fh = m.fh;
	switch (m.op) {
	case OP_READ:
	case OP_READ_INFO:
	case OP_READ_STATS:
		ops->read(r, m.ino, m.size, m.off, &fi);
		break;
	case OP_WRITE:
		CHECK(fb->size == FZ_HDR + m.size);
		ops->write(r, m.ino, (const char *)fb->mem + FZ_HDR, m.size, m.off, &fi);
		break;
	case OP_FALLOCATE:
		ops->fallocate(r, m.ino, m.mode, m.off, m.len, &fi);
		break;
	case OP_FSYNC:
		ops->fsync(r, m.ino, m.mode, &fi);
		break;
	case OP_GETATTR:
		ops->getattr(r, m.ino, NULL);
		break;
	case OP_SETATTR:
		attr.st_size = m.off;
		attr.st_mode = S_IFREG | 0777;
		ops->setattr(r, m.ino, &attr, m.mode, m.fh ? &fi : NULL);
		break;
	case OP_LOOKUP:
		ops->lookup(r, m.ino, names[m.name]);
		break;
	case OP_READDIR:
		ops->readdir(r, m.ino, m.size, m.off, &fi);
		break;
	case OP_OPEN:
		fi.flags = m.mode;
		ops->open(r, m.ino, &fi);
		break;
	case OP_RELEASE:
		ops->release(r, m.ino, &fi);
		break;
	case OP_GETXATTR:
		ops->getxattr(r, m.ino, names[m.name], m.size);
		break;
	case OP_LISTXATTR:
		ops->listxattr(r, m.ino, m.size);
		break;
	case OP_STATFS:
		ops->statfs(r, m.ino);
		break;
	default:
		abort();
	}
}

/* ---------------------------------------------------------------------- */
/* The kernel's side                                                        */
/* ---------------------------------------------------------------------- */

static bool all_replied(void)
{
	for (unsigned int i = 0; i < fz.nr_reqs; i++) {
		if (fz.reqs[i].used && !fz.reqs[i].replied)
			return false;
	}
	return true;
}

/* Serves the request of @n bytes in @f, admitted, as loop.c's threads do. */
static void serve(struct exp_req *f, size_t n)
{
	fs_loop_ops.handle(fz.fs, f, exp_req_buf(f), n);
	exp_req_handled(f);
}

/* One turn of @w's loop: completions, what waited, what was parked. */
static void worker_turn(struct exp_worker *w)
{
	struct exp_req *f;
	size_t n;

	exp_worker_run(w);
	while ((f = exp_worker_resumed(w, &n)))
		serve(f, n);
}

/* One round of each worker's loop. */
static void poll_round(void)
{
	for (unsigned int i = 0; i < fz.fs->opts.workers; i++)
		worker_turn(&fz.fs->exp->workers[i]);
}

/* Everything answered, whatever it takes; a request that never is hangs. */
static void drain(void)
{
	for (unsigned int round = 0; !all_replied(); round++) {
		if (round == FZ_MAX_ROUNDS) {
			fprintf(stderr, "fuzz_fuse: requests unanswered after %u rounds of polling\n",
				round);
			abort();
		}
		fake_release(FAKE_UNLIMITED);
		poll_round();
	}
}

/* Blocks [first, last] of a request on @ns that may change them. */
static void mark_mutation(struct fuse_req *r, struct fz_ns *ns, uint64_t off, uint64_t len)
{
	uint64_t a = off, b = off + len;

	r->mutating = true;
	r->ns = (int)(ns - fz.ns);
	r->first = a >> ns->shift;
	r->last = (b - 1) >> ns->shift;
	r->mfirst = (a + ns->lba - 1) >> ns->shift;
	r->mend = b >> ns->shift;
	/* Reads in flight may see it or not. */
	for (unsigned int i = 0; i < fz.nr_reqs; i++) {
		struct fuse_req *o = &fz.reqs[i];

		if (o->inflight && o->m.op == OP_READ && ns_of_ino(o->m.ino) == ns) {
			for (uint64_t k = r->first; k <= r->last; k++)
				set_bit(o->taint, k);
		}
	}
}

/* The kernel sends @m through worker @wi; @payload is a write's. */
static struct fuse_req *send_req(unsigned int wi, struct fz_msg *m, const uint8_t *payload)
{
	struct exp_worker *w = &fz.fs->exp->workers[wi];
	struct fuse_req *r;
	struct fz_ns *ns = ns_of_ino(m->ino);
	size_t n = FZ_HDR;
	struct exp_req *f;
	uint8_t *buf;

	if (fz.nr_reqs == FZ_MAX_REQS)
		return NULL;
	/* A worker without a free buffer reads nothing until one is back. */
	if (!w->free)
		drain();
	CHECK(w->free);
	r = &fz.reqs[fz.nr_reqs];
	memset(r, 0, sizeof(*r));
	m->id = (uint8_t)fz.nr_reqs++;
	r->m = *m;
	r->used = r->inflight = true;
	r->ns = -1;
	r->failures = fz.failures;
	r->flushes = ns ? ns->flushes : 0;
	/* The snapshot a read of the stats file replies from. */
	if (m->op == OP_READ_STATS)
		r->stats = (const char *)(uintptr_t)m->fh;
	if (ns && m->op == OP_WRITE && expected_err(r) == -1) {
		r->payload = malloc(m->size);
		CHECK(r->payload);
		memcpy(r->payload, payload, m->size);
		mark_mutation(r, ns, (uint64_t)m->off, m->size);
	}
	if (ns && m->op == OP_FALLOCATE && expected_err(r) == -1 && m->mode != 0 &&
	    m->mode != FALLOC_FL_KEEP_SIZE)
		mark_mutation(r, ns, (uint64_t)m->off, (uint64_t)m->len);
	if (ns && m->op == OP_READ) {
		for (unsigned int i = 0; i < fz.nr_reqs - 1; i++) {
			const struct fuse_req *o = &fz.reqs[i];

			if (o->inflight && o->mutating && &fz.ns[o->ns] == ns) {
				for (uint64_t k = o->first; k <= o->last; k++)
					set_bit(r->taint, k);
			}
		}
	}
	f = exp_worker_req(w);
	buf = exp_req_buf(f);
	memcpy(buf, m, sizeof(*m));
	if (m->op == OP_WRITE) {
		memcpy(buf + FZ_HDR, payload, m->size);
		n += m->size;
	}
	if (exp_req_admit(f, n, fs_loop_ops.io_nsid(fz.fs, buf, n)))
		serve(f, n);
	return r;
}

static uint64_t gen_ino(void)
{
	uint8_t b = in8();

	switch (b % 16) {
	case 0: case 1: case 2: case 3: case 4: return INO_NS_BASE;
	case 5: case 6: return INO_NS_BASE + 1;
	case 7: return FUSE_ROOT_ID;
	case 8: return INO_INFO;
	case 9: return INO_STATS;
	case 10: return 0;
	case 11: return INO_NS_BASE - 1;
	case 12: return INO_NS_BASE + 2;
	case 13: return UINT64_MAX;
	case 14: return (uint64_t)1 << 63 | INO_NS_BASE;
	default: return b;
	}
}

/* Offsets around what matters: block edges, the end of namespace 1, past
 * it, negative, near INT64_MAX. */
static int64_t gen_off(void)
{
	const struct fz_ns *ns = &fz.ns[0];
	uint8_t sel = in8();
	uint32_t v = in32();
	int64_t size = (int64_t)ns->bytes;

	switch (sel % 9) {
	case 0: return (int64_t)(v % (ns->bytes + 1));
	case 1: return (int64_t)((v % ns->nsze) << ns->shift);
	case 2: return (int64_t)(((v >> 12) % ns->nsze) << ns->shift) + (int64_t)(v & 0xfff) % ns->lba;
	case 3: return size - (int64_t)(v % (2 * ns->lba + 1));
	case 4: return size + (int64_t)(v % (2 * ns->lba));
	case 5: return -(int64_t)v - 1;
	case 6: return INT64_MAX - (int64_t)(v % 8192);
	case 7: return INT64_MIN + (int64_t)v;
	default: return (int64_t)((uint64_t)v << 32 | v);
	}
}

/* A read or write size the kernel may send: up to max_read/max_write. */
static uint64_t gen_size(void)
{
	uint16_t v = in16();
	uint64_t max = fz.fs->opts.max_io;

	if (v >= 0xfff0)
		return max - (0xffffu - v);
	return v % (max + 1);
}

static void op_read_stats(unsigned int wi, struct fz_msg *m)
{
	/* A read needs an open file: open one if none is. */
	if (!fz.nr_stats) {
		struct fz_msg o = { .op = OP_OPEN, .ino = INO_STATS, .mode = O_RDONLY };

		if (!send_req(wi, &o, NULL))
			return;
	}
	if (!fz.nr_stats)
		return;
	m->ino = INO_STATS;
	m->fh = fz.stats_fh[in8() % fz.nr_stats];
	m->off = in16();
	m->size = in16();
	send_req(wi, m, NULL);
}

static void op_release_stats(unsigned int wi, unsigned int idx)
{
	struct fz_msg m = { .op = OP_RELEASE, .ino = INO_STATS };

	m.fh = fz.stats_fh[idx];
	fz.stats_fh[idx] = fz.stats_fh[--fz.nr_stats];
	if (!send_req(wi, &m, NULL)) {
		/* No request left to send it with: as the kernel would, at the end. */
		free((void *)(uintptr_t)m.fh);
	}
}

static void run_op(void)
{
	uint8_t k = in8();
	unsigned int wi = (k >> 5 & 1) % fz.fs->opts.workers;
	bool async = k & 0x80;
	struct fz_msg m = { .op = (uint8_t)(k % NR_OPS) };
	uint8_t payload_seed;
	uint8_t *payload = NULL;

	switch (m.op) {
	case OP_READ:
		m.ino = gen_ino();
		m.off = gen_off();
		m.size = gen_size();
		if (m.ino == INO_STATS)
			m.ino = INO_INFO;
		break;
	case OP_WRITE:
		m.ino = gen_ino();
		m.off = gen_off();
		m.size = gen_size();
		payload_seed = in8();
		payload = malloc(m.size ? m.size : 1);
		CHECK(payload);
		for (uint64_t i = 0; i < m.size; i++)
			payload[i] = (uint8_t)(payload_seed + i * 7 + (i >> 8));
		break;
	case OP_FALLOCATE:
		m.ino = gen_ino();
		m.mode = in8();
		m.off = gen_off();
		m.len = gen_off();
		break;
	case OP_FSYNC:
		m.ino = gen_ino();
		m.mode = in8() & 1;
		break;
	case OP_GETATTR:
	case OP_STATFS:
		m.ino = gen_ino();
		break;
	case OP_SETATTR:
		m.ino = gen_ino();
		m.mode = in16();
		m.off = in8() & 1 ? (int64_t)fz.ns[0].bytes : gen_off();
		m.fh = in8() & 1;
		break;
	case OP_LOOKUP:
		m.ino = in8() & 1 ? FUSE_ROOT_ID : gen_ino();
		m.name = in8() % NR_NAMES;
		break;
	case OP_READDIR:
		m.ino = in8() & 1 ? FUSE_ROOT_ID : gen_ino();
		m.size = in16() % 8192;
		m.off = in8() & 0x80 ? gen_off() : in8() % 8;
		break;
	case OP_OPEN:
		m.ino = gen_ino();
		m.mode = (int)(in8() % 3) | (in8() & 1 ? O_TRUNC : 0) | (in8() & 1 ? O_APPEND : 0);
		/* A stats file opened is released by the end. */
		if (m.ino == INO_STATS && fz.nr_stats == FZ_MAX_STATS)
			m.ino = INO_INFO;
		break;
	case OP_RELEASE:
		if (fz.nr_stats) {
			op_release_stats(wi, in8() % fz.nr_stats);
			return;
		}
		m.ino = gen_ino();
		if (m.ino == INO_STATS)
			m.ino = INO_INFO;
		break;
	case OP_GETXATTR:
		m.ino = gen_ino();
		m.name = in8() % NR_NAMES;
		m.size = in8() & 1 ? in16() % 512 : 0;
		break;
	case OP_LISTXATTR:
		m.ino = gen_ino();
		m.size = in8() & 1 ? in16() % 512 : 0;
		break;
	case OP_READ_INFO:
		m.op = OP_READ;
		m.ino = INO_INFO;
		m.off = in8() & 1 ? gen_off() : in16() % 1024;
		m.size = in16();
		break;
	case OP_READ_STATS:
		op_read_stats(wi, &m);
		goto done;
	case OP_POLL: {
		unsigned int budget = 1 + in8() % 4;
		uint32_t order = in8();

		for (; budget && fake_held(); budget--) {
			fake_release_at(order % fake_held());
			order = order * 1103515245u + 12345u;
		}
		worker_turn(&fz.fs->exp->workers[wi]);
		return;
	}
	case OP_DIE:
		/* The connection breaks: the controller fails, and with no
		 * reconnecting (ctrl_loss_tmo 0) everything in flight fails. */
		if (!fz.dead) {
			fz.dead = true;
			fz.failures++;
			for (unsigned int q = 1; q <= fz.fs->opts.workers; q++)
				fake_break((uint16_t)q);
		}
		return;
	case OP_INIT: {
		struct fuse_conn_info conn = { 0 };

		conn.capable = in32();
		conn.want = in32();
		fs_lowlevel_ops.init(fz.fs, &conn);
		CHECK(conn.max_write == fz.fs->opts.max_io && conn.max_read == fz.fs->opts.max_io);
		return;
	}
	default:
		abort();
	}
	send_req(wi, &m, payload);
done:
	free(payload);
	if (!async)
		drain();
}

/* ---------------------------------------------------------------------- */
/* A mount, without the mounting                                            */
/* ---------------------------------------------------------------------- */

/* What each namespace holds at the start, made once. */
static uint8_t fz_pattern[2][FZ_NS_BYTES];

static void setup_ns(uint8_t h0, uint8_t h1)
{
	uint32_t lba = h0 & 1 ? 4096 : 512;

	fz.nr_ns = h0 & 2 ? 2 : 1;
	fz.ns[0].nsid = 1;
	fz.ns[0].lba = lba;
	fz.ns[0].nsze = 1 + h1 % (FZ_NS_BYTES / lba);
	/* The second has the other block size, and a few blocks. */
	fz.ns[1].nsid = 2;
	fz.ns[1].lba = lba == 512 ? 4096 : 512;
	fz.ns[1].nsze = 1 + h1 % 8;
	for (unsigned int i = 0; i < fz.nr_ns; i++) {
		struct fz_ns *ns = &fz.ns[i];

		ns->shift = (uint8_t)__builtin_ctz(ns->lba);
		ns->bytes = ns->nsze << ns->shift;
		ns->img = malloc(ns->bytes);
		ns->model = malloc(ns->bytes);
		CHECK(ns->img && ns->model);
		memcpy(ns->img, fz_pattern[i], ns->bytes);
		memcpy(ns->model, fz_pattern[i], ns->bytes);
		ns->flushes = 0;
	}
}

static struct nvmefs_ctrl *connect_ctrl(void)
{
	struct nvmefs_connect_opts opts;
	struct nvmefs_ctrl *ctrl = NULL;

	nvmefs_connect_opts_init(&opts);
	opts.traddr = "192.0.2.1";
	opts.subnqn = "nqn.2026-11.io.nvmefs.fuzz:sub1";
	opts.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:0f8fad5b-d9cb-469f-a165-70867728950e";
	opts.hostid = "5d8d1c3a-1d55-4f0e-9b6c-2f9f6f2b7c11";
	/* No keep-alive and no reconnecting: no thread of the library's own. */
	opts.kato_ms = 0;
	opts.ctrl_loss_tmo_s = 0;
	CHECK(nvmefs_ctrl_connect_with(&fake_ops, &opts, &ctrl) == 0);
	return ctrl;
}

/* What nvmefs_fs_run() sets up, but the session and the threads. */
static struct fs *setup_fs(struct nvmefs_ctrl *ctrl, uint8_t h0, uint8_t h2, uint8_t h3)
{
	static const unsigned int qsizes[8] = { 0, 2, 3, 4, 5, 8, 16, 64 };
	static const size_t max_ios[4] = { 4096, 8192, 65536, 131072 };
	struct nvmefs_io_opts io;
	struct exp_opts eo;
	struct fs *fs = calloc(1, sizeof(*fs));

	CHECK(fs);
	fs->ctrl = ctrl;
	fs->opts.workers = h0 & 0x20 ? 2 : 1;
	fs->opts.depth = 1 + (h2 & 3);
	fs->opts.max_io = max_ios[h3 & 3];
	fs->opts.cached = h0 & 0x40;
	fs->uid = 1000;
	fs->gid = 1000;
	fs->mounted = 1700000000;
	fs->stop_fd = -1;
	eo.workers = fs->opts.workers;
	eo.depth = fs->opts.depth;
	eo.max_io = fs->opts.max_io;
	exp_io_opts(&eo, qsizes[h2 >> 2 & 7], 0, &io);
	CHECK(nvmefs_ctrl_create_io_queues(ctrl, &io) == 0);
	/* As the mount has it: all I/O through a head of this one path. */
	CHECK(nvmefs_subsys_create_single(ctrl, &fs->subsys) == 0);
	CHECK(fs_scan_namespaces(fs) == 0 && fs->nr_ns == fz.nr_ns);
	CHECK(fs_build_info(fs) == 0);
	/* As the mount sets them up: the worker's buffers, registered once. */
	CHECK(exp_create(fs->subsys, &eo, &fs_exp_ops, fs, &fs->exp) == 0);
	return fs;
}

static void teardown(void)
{
	struct fs *fs = fz.fs;

	for (unsigned int i = 0; i < fs->opts.workers; i++) {
		struct exp_worker *w = &fs->exp->workers[i];
		unsigned int n = 0;

		/* Every buffer is back. */
		for (struct exp_req *f = w->free; f; f = f->next)
			n++;
		CHECK(n == fs->opts.depth && !w->busy && !w->retry_head);
	}
	for (unsigned int i = 0; i < fs->exp->nr_resv; i++)
		CHECK(!fs->exp->resv[i].used);
	exp_destroy(fs->exp);
	/* The head owns the controller: destroying it disconnects. */
	nvmefs_subsys_destroy(fs->subsys);
	free(fs->ns);
	free(fs->info);
	free(fs);
	for (unsigned int i = 0; i < fz.nr_reqs; i++)
		free(fz.reqs[i].payload);
	for (unsigned int i = 0; i < fz.nr_ns; i++) {
		free(fz.ns[i].img);
		free(fz.ns[i].model);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvmefs_ctrl *ctrl;
	uint8_t h0, h1, h2, h3;

	if (!fz_pattern[0][0]) {
		for (uint64_t b = 0; b < FZ_NS_BYTES; b++) {
			fz_pattern[0][b] = pattern(b, 1);
			fz_pattern[1][b] = pattern(b, 2);
		}
	}
	memset(&fz, 0, sizeof(fz));
	fake_reset();
	fake_exec = &fz_target;
	fz.in = data;
	fz.len = size;
	h0 = in8();
	h1 = in8();
	h2 = in8();
	h3 = in8();
	fz.rng = in8() | 0x100;
	fz.dlfeat_zeroes = h0 & 4;
	fz.mdts = (uint8_t)(h0 >> 3 & 3);
	fz.uuid = h0 & 0x80;
	fz.fail_rate = (h3 >> 2 & 7) ? 1u << ((h3 >> 2 & 7) - 1) : 0;
	setup_ns(h0, h1);
	ctrl = connect_ctrl();
	fz.fs = setup_fs(ctrl, h0, h2, h3);
	for (unsigned int n = 0; n < FZ_MAX_OPS && fz.pos < fz.len; n++)
		run_op();
	drain();
	/* The kernel releases what is still open when the mount goes. */
	while (fz.nr_stats)
		op_release_stats(0, 0);
	drain();
	CHECK(all_replied());
	check_images();
	teardown();
	return 0;
}
