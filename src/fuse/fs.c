/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE side of `nvmefs mount` (libfuse3 low-level API).
 *
 * Zero copies in user space: every worker reads FUSE requests from
 * /dev/fuse itself, into buffers registered once with the RDMA device.  A
 * write's payload therefore already lies in registered memory and goes to
 * the target from there; a read has the target RDMA-write the data into the
 * request's own buffer and is replied from it (an unaligned read just
 * replies from an offset into the block-aligned data).
 *
 * Each worker owns one NVMe I/O queue and many requests in flight: it waits
 * on /dev/fuse (shared, non-blocking) and on its queue's completion fd, and
 * replies when the target completes, from the same thread.  Workers share
 * nothing on the I/O path but a table of write reservations: overlapping
 * writes are serialized, so that the read-modify-write of an unaligned edge
 * never loses another writer's data.  A write that finds its blocks taken
 * waits on its own worker's list and is retried there; no thread blocks.
 */
#define FUSE_USE_VERSION 34

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>
#include <nvme/types.h>
#include <nvme/util.h>

#include "fs.h"
#include "fs_priv.h"
#include "../common/histogram.h"
#include "../common/json.h"
#include "../common/text.h"

/* Room past the payload: the request headers, or the partial blocks that
 * round an unaligned read out to whole blocks. */
#define BUF_SLACK 8192

enum fop { FOP_READ, FOP_WRITE, FOP_FLUSH, FOP_ZERO, FOP_PUNCH };
enum sub_kind { SUB_READ, SUB_WRITE, SUB_ZEROES, SUB_PUNCH, SUB_FLUSH };

struct worker;

/* One command a request needs, kept so that a full queue only delays it. */
struct sub_io {
	uint8_t kind;		/* enum sub_kind */
	bool waiting;		/* refused with -EAGAIN: submit again after a poll */
	/* Past 2^32 only for zeroing and punching: a read or write is at most
	 * one FUSE request's max_write. */
	uint64_t nlb;
	uint64_t slba;
	uint8_t *buf;
};

/* A FUSE request in flight, and its buffers. */
struct freq {
	struct worker *w;
	fuse_req_t req;
	uint8_t *buf;		/* the request as received; a read's data after */
	uint8_t *edge;		/* two blocks for read-modify-write */
	struct ns_file *ns;
	uint8_t op;		/* enum fop */
	uint8_t phase;		/* 0: edges being read, 1: writing */
	bool busy;		/* owned by an asynchronous operation */
	bool taken;		/* claimed by take(): freq_put() returns it, not receive() */
	bool listed;		/* on the worker's retry list */
	uint64_t off;
	size_t size;
	const uint8_t *data;	/* a write's payload, inside buf */
	unsigned int pending;
	int error;		/* first errno */
	int resv;		/* write reservation, or -1 */
	uint64_t start_ns;
	struct sub_io sub[3];
	struct freq *next;
};

struct queue_stats {
	atomic_uint_fast64_t reads, writes, read_bytes, write_bytes;
	atomic_uint_fast64_t flushes, write_zeroes, deallocates, errors;
	struct histogram lat;
};

struct worker {
	struct fs *fs;
	unsigned int idx;
	pthread_t thread;
	int epfd;
	bool fuse_watched;	/* /dev/fuse is in epfd (only while a buffer is free) */
	struct nvmefs_ioq *q;
	struct nvmefs_mr *mr;
	uint8_t *region;
	struct freq *freqs;
	struct freq *free;
	unsigned int busy;
	bool drained;		/* counted out of fs->workers_left */
	struct freq *retry_head, *retry_tail;	/* deferred writes and waiting sub-I/Os */
	struct queue_stats stats;
};

struct resv {
	bool used;
	uint32_t nsid;
	uint64_t first, last;
};

static _Thread_local struct worker *cur_worker;
/* Why nvmefs_fs_run() failed: its own reasons, or the library's. */
static char fs_msg[1100];

int fs_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fs_msg, sizeof(fs_msg), fmt, ap);
	va_end(ap);
	return err;
}

int lib_error(int err)
{
	snprintf(fs_msg, sizeof(fs_msg), "%s", nvmefs_errmsg());
	return err;
}

const char *nvmefs_fs_errmsg(void)
{
	return fs_msg;
}
static _Thread_local struct freq *cur_freq;
static struct fs *sig_fs;

void fs_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsyslog(LOG_ERR, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------------- */
/* Errors                                                                   */
/* ---------------------------------------------------------------------- */

/* An errno for FUSE from a completion status; each NVMe status is logged
 * once, with what it hit. */
static int status_errno(struct fs *fs, struct freq *f, int status)
{
	int err;

	if (status < 0)
		err = -status == ENOENT ? EIO : -status;
	else
		err = nvme_status_to_errno(status, false);
	/* What the transport or an outage says is, to a file's user, an I/O
	 * error, as the kernel initiator's block device reports it. */
	if (!err || err == ETIMEDOUT || err == ECONNRESET || err == ENOTCONN || err == EPROTO ||
	    err == ENODEV)
		err = EIO;
	pthread_mutex_lock(&fs->log_lock);
	for (unsigned int i = 0; i < fs->nr_logged; i++) {
		if (fs->logged[i] == status)
			goto out;
	}
	if (fs->nr_logged < sizeof(fs->logged) / sizeof(fs->logged[0]))
		fs->logged[fs->nr_logged++] = status;
	fs_log("%s, %s at byte %" PRIu64 " (%zu bytes): %s; returning %s (logged once)",
	       f->ns ? f->ns->name : "?",
	       f->op == FOP_READ ? "read" : f->op == FOP_WRITE ? "write" : f->op == FOP_FLUSH ? "flush"
	       : "fallocate", f->off, f->size,
	       status > 0 ? nvme_status_to_string(status, false) : nvmefs_errmsg(), strerror(err));
out:
	pthread_mutex_unlock(&fs->log_lock);
	return err;
}

/* ---------------------------------------------------------------------- */
/* Write reservations                                                       */
/* ---------------------------------------------------------------------- */

static int reserve(struct fs *fs, uint32_t nsid, uint64_t first, uint64_t last)
{
	int free_slot = -1;

	pthread_mutex_lock(&fs->resv_lock);
	for (unsigned int i = 0; i < fs->nr_resv; i++) {
		struct resv *r = &fs->resv[i];

		if (!r->used) {
			if (free_slot < 0)
				free_slot = (int)i;
		} else if (r->nsid == nsid && r->first <= last && first <= r->last) {
			free_slot = -1;
			goto out;
		}
	}
	if (free_slot >= 0)
		fs->resv[free_slot] = (struct resv){ true, nsid, first, last };
out:
	pthread_mutex_unlock(&fs->resv_lock);
	return free_slot;
}

static void release_resv(struct fs *fs, int idx)
{
	if (idx < 0)
		return;
	pthread_mutex_lock(&fs->resv_lock);
	fs->resv[idx].used = false;
	pthread_mutex_unlock(&fs->resv_lock);
}

/* ---------------------------------------------------------------------- */
/* Requests                                                                 */
/* ---------------------------------------------------------------------- */

static void retry_push(struct worker *w, struct freq *f)
{
	if (f->listed)
		return;
	f->listed = true;
	f->next = NULL;
	if (w->retry_tail)
		w->retry_tail->next = f;
	else
		w->retry_head = f;
	w->retry_tail = f;
}

static void freq_put(struct worker *w, struct freq *f)
{
	f->busy = false;
	f->req = NULL;
	f->next = w->free;
	w->free = f;
	w->busy--;
}

static void count_done(struct worker *w, struct freq *f)
{
	struct queue_stats *s = &w->stats;

	hist_add(&s->lat, hist_now_ns() - f->start_ns);
	if (f->error) {
		atomic_fetch_add_explicit(&s->errors, 1, memory_order_relaxed);
		return;
	}
	switch (f->op) {
	case FOP_READ:
		atomic_fetch_add_explicit(&s->reads, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->read_bytes, f->size, memory_order_relaxed);
		break;
	case FOP_WRITE:
		atomic_fetch_add_explicit(&s->writes, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->write_bytes, f->size, memory_order_relaxed);
		break;
	case FOP_FLUSH:
		atomic_fetch_add_explicit(&s->flushes, 1, memory_order_relaxed);
		break;
	default:
		break;
	}
}

static void finish(struct freq *f)
{
	struct worker *w = f->w;

	release_resv(w->fs, f->resv);
	f->resv = -1;
	count_done(w, f);
	if (f->error)
		fuse_reply_err(f->req, f->error);
	else if (f->op == FOP_READ)
		fuse_reply_buf(f->req, (const char *)f->buf + (f->off & (f->ns->lba_size - 1)), f->size);
	else if (f->op == FOP_WRITE)
		fuse_reply_write(f->req, f->size);
	else
		fuse_reply_err(f->req, 0);
	freq_put(w, f);
}

static void sub_done(void *arg, int status);

/* Submits sub-I/O @i of @f; a full queue only postpones it. */
static void sub_submit(struct freq *f, unsigned int i)
{
	struct worker *w = f->w;
	struct sub_io *s = &f->sub[i];
	uint32_t nsid = f->ns->nsid;
	struct queue_stats *st = &w->stats;
	int ret;

	switch (s->kind) {
	case SUB_READ:
		ret = nvmefs_ioq_read(w->q, nsid, s->slba, (uint32_t)s->nlb, s->buf, sub_done, f);
		break;
	case SUB_WRITE:
		ret = nvmefs_ioq_write(w->q, nsid, s->slba, (uint32_t)s->nlb, s->buf, sub_done, f);
		break;
	case SUB_ZEROES:
		ret = nvmefs_ioq_write_zeroes(w->q, nsid, s->slba, s->nlb, sub_done, f);
		if (!ret)
			atomic_fetch_add_explicit(&st->write_zeroes, 1, memory_order_relaxed);
		break;
	case SUB_PUNCH:
		ret = nvmefs_ioq_punch(w->q, nsid, s->slba, s->nlb, sub_done, f);
		if (!ret)
			atomic_fetch_add_explicit(&st->deallocates, 1, memory_order_relaxed);
		break;
	default:
		ret = nvmefs_ioq_flush(w->q, nsid, sub_done, f);
		break;
	}
	s->waiting = ret == -EAGAIN;
	if (ret == 0) {
		f->pending++;
	} else if (ret == -EAGAIN) {
		retry_push(w, f);
	} else if (!f->error) {
		f->error = status_errno(w->fs, f, ret);
	}
}

static void sub_add(struct freq *f, unsigned int i, enum sub_kind kind, uint64_t slba,
		    uint64_t nlb, uint8_t *buf)
{
	f->sub[i] = (struct sub_io){ .kind = (uint8_t)kind, .slba = slba, .nlb = nlb, .buf = buf };
	sub_submit(f, i);
}

static bool subs_waiting(const struct freq *f)
{
	return f->sub[0].waiting || f->sub[1].waiting || f->sub[2].waiting;
}

static void write_phase(struct freq *f);

/* What to do once nothing of @f is in flight or waiting. */
static void step(struct freq *f)
{
	if (f->pending || subs_waiting(f))
		return;
	if (f->phase == 0 && (f->op == FOP_WRITE || f->op == FOP_ZERO || f->op == FOP_PUNCH) &&
	    !f->error) {
		write_phase(f);
		if (f->pending || subs_waiting(f))
			return;
	}
	finish(f);
}

static void sub_done(void *arg, int status)
{
	struct freq *f = arg;

	f->pending--;
	if (status && !f->error)
		f->error = status_errno(f->w->fs, f, status);
	step(f);
}

/*
 * Writes (and zeroing) in two phases.  Phase 0 reads the partial blocks at
 * the edges while the whole blocks in the middle are already written
 * (they are ours: the range is reserved).  Phase 1 lays the new bytes over
 * the edge blocks and writes them back.
 */
static void write_phase(struct freq *f)
{
	uint32_t lba = f->ns->lba_size, mask = lba - 1;
	uint8_t shift = f->ns->lba_shift;
	uint64_t a = f->off, b = f->off + f->size;
	uint64_t first = a >> shift, last = (b - 1) >> shift;
	bool head = a & mask, tail = b & mask;

	f->phase = 1;
	if (head || tail) {
		uint8_t *blk0 = f->edge, *blk1 = f->edge + MAX_LBA_SIZE;

		if (first == last) {
			/* Phase 0 read the one block into the slot of its partial edge. */
			uint8_t *blk = head ? blk0 : blk1;

			if (f->data)
				memcpy(blk + (a & mask), f->data, f->size);
			else
				memset(blk + (a & mask), 0, f->size);
			sub_add(f, 0, SUB_WRITE, first, 1, blk);
			return;
		}
		if (head) {
			size_t n = lba - (a & mask);

			if (f->data)
				memcpy(blk0 + (a & mask), f->data, n);
			else
				memset(blk0 + (a & mask), 0, n);
			sub_add(f, 0, SUB_WRITE, first, 1, blk0);
		}
		if (tail) {
			size_t n = b & mask;

			if (f->data)
				memcpy(blk1, f->data + ((last << shift) - a), n);
			else
				memset(blk1, 0, n);
			sub_add(f, 1, SUB_WRITE, last, 1, blk1);
		}
	}
}

/* Starts a write or zeroing: reserve, read the edges, write the middle. */
static bool write_start(struct freq *f)
{
	struct worker *w = f->w;
	uint32_t mask = f->ns->lba_size - 1;
	uint8_t shift = f->ns->lba_shift;
	uint64_t a = f->off, b = f->off + f->size;
	uint64_t first = a >> shift, last = (b - 1) >> shift, mfirst, mend;
	bool head = a & mask, tail = b & mask;

	f->resv = reserve(w->fs, f->ns->nsid, first, last);
	if (f->resv < 0)
		return false;
	f->phase = 0;
	if (head)
		sub_add(f, 0, SUB_READ, first, 1, f->edge);
	if (tail && (last != first || !head))
		sub_add(f, 1, SUB_READ, last, 1, f->edge + MAX_LBA_SIZE);
	/* The whole blocks between the edges: [mfirst, mend). */
	mfirst = head ? first + 1 : first;
	mend = tail ? last : last + 1;
	if (mfirst < mend) {
		uint64_t nlb = mend - mfirst;

		if (f->op == FOP_WRITE)
			sub_add(f, 2, SUB_WRITE, mfirst, nlb, (uint8_t *)f->data + ((mfirst << shift) - a));
		else if (f->op == FOP_PUNCH)
			sub_add(f, 2, SUB_PUNCH, mfirst, nlb, NULL);
		else
			sub_add(f, 2, SUB_ZEROES, mfirst, nlb, NULL);
	}
	step(f);
	return true;
}

/* Writes that found their blocks reserved, and sub-I/Os a full queue refused.
 * Returns whether any of them got on: what still waits (on another write,
 * on an outage) is not worth spinning for. */
static bool run_retries(struct worker *w)
{
	struct freq *f = w->retry_head, *next;
	unsigned int before = w->busy;
	bool moved = false;

	w->retry_head = w->retry_tail = NULL;
	for (; f; f = next) {
		next = f->next;
		f->listed = false;
		if (f->resv < 0 && f->op != FOP_READ && f->op != FOP_FLUSH) {
			if (write_start(f))
				moved = true;
			else
				retry_push(w, f);
			continue;
		}
		for (unsigned int i = 0; i < 3; i++) {
			if (f->sub[i].waiting)
				sub_submit(f, i);
		}
		moved = moved || !subs_waiting(f);
		step(f);
	}
	return moved || w->busy != before;
}

/* Takes the current request over for asynchronous completion. */
static struct freq *take(fuse_req_t req, struct ns_file *ns, enum fop op, uint64_t off, size_t size)
{
	struct freq *f = cur_freq;

	f->busy = true;
	f->taken = true;
	f->req = req;
	f->ns = ns;
	f->op = (uint8_t)op;
	f->off = off;
	f->size = size;
	f->data = NULL;
	f->pending = 0;
	f->error = 0;
	f->phase = 0;
	f->resv = -1;
	memset(f->sub, 0, sizeof(f->sub));
	return f;
}

/* ---------------------------------------------------------------------- */
/* FUSE operations                                                          */
/* ---------------------------------------------------------------------- */

static struct fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct ns_file *ns_of(struct fs *fs, fuse_ino_t ino)
{
	if (ino < INO_NS_BASE || ino >= INO_NS_BASE + fs->nr_ns)
		return NULL;
	return &fs->ns[ino - INO_NS_BASE];
}

static char *stats_json(struct fs *fs, size_t *len);

static int fill_stat(struct fs *fs, fuse_ino_t ino, struct stat *st)
{
	struct ns_file *ns = ns_of(fs, ino);

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_nlink = 1;
	st->st_atime = st->st_mtime = st->st_ctime = fs->mounted;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (ino == INO_INFO) {
		st->st_mode = S_IFREG | 0444;
		st->st_size = (off_t)fs->info_len;
	} else if (ino == INO_STATS) {
		/* Its length changes as it is read: read it to the end. */
		st->st_mode = S_IFREG | 0444;
	} else if (ns) {
		st->st_mode = S_IFREG | 0660;
		st->st_size = (off_t)ns->size;
		st->st_blksize = ns->lba_size;
		st->st_blocks = (blkcnt_t)(ns->size / 512);
	} else {
		return ENOENT;
	}
	return 0;
}

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs *fs = userdata;
	unsigned int inflight = fs->opts.workers * fs->opts.depth;

	atomic_store(&fs->init_called, true);
	/* Requests come into our registered buffers, never through pipes. */
	conn->want &= ~(unsigned int)(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
	conn->want |= conn->capable & (FUSE_CAP_ASYNC_DIO | FUSE_CAP_ASYNC_READ | FUSE_CAP_ATOMIC_O_TRUNC);
	conn->max_write = (unsigned int)fs->opts.max_io;
	conn->max_read = (unsigned int)fs->opts.max_io;
	conn->max_readahead = fs->opts.cached ? (unsigned int)fs->opts.max_io : 0;
	/* Asynchronous direct I/O is background work to FUSE: let all of it in. */
	conn->max_background = inflight;
	conn->congestion_threshold = inflight * 3 / 4;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fs_of(req);
	struct fuse_entry_param e = { .attr_timeout = 3600, .entry_timeout = 3600 };
	fuse_ino_t ino = 0;

	if (parent != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (!strcmp(name, "info"))
		ino = INO_INFO;
	else if (!strcmp(name, "stats"))
		ino = INO_STATS;
	for (unsigned int i = 0; !ino && i < fs->nr_ns; i++) {
		if (!strcmp(name, fs->ns[i].name) && !atomic_load(&fs->ns[i].gone))
			ino = INO_NS_BASE + i;
	}
	if (!ino) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = ino;
	fill_stat(fs, ino, &e.attr);
	if (ino == INO_STATS)
		e.attr_timeout = 0;
	fuse_reply_entry(req, &e);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int err;

	(void)fi;
	err = fill_stat(fs_of(req), ino, &st);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, ino == INO_STATS ? 0 : 3600);
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct ns_file *ns = ns_of(fs, ino);

	/* A namespace's size is its capacity: no truncating, no growing.
	 * Owner and mode are fixed at mount time (-o uid=, gid=); times are
	 * not kept, so setting them changes nothing. */
	if ((to_set & FUSE_SET_ATTR_SIZE) && (!ns || (uint64_t)attr->st_size != ns->size)) {
		fuse_reply_err(req, ns ? EPERM : EACCES);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID | FUSE_SET_ATTR_MODE)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fs_getattr(req, ino, fi);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	char *buf;
	size_t used = 0;
	unsigned int n = 4 + fs->nr_ns;

	(void)fi;
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	buf = calloc(1, size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (unsigned int i = (unsigned int)off; i < n; i++) {
		struct stat st = { 0 };
		const char *name;
		size_t len;

		if (i == 0) {
			name = ".";
			st.st_ino = FUSE_ROOT_ID;
		} else if (i == 1) {
			name = "..";
			st.st_ino = FUSE_ROOT_ID;
		} else if (i == 2) {
			name = "info";
			st.st_ino = INO_INFO;
		} else if (i == 3) {
			name = "stats";
			st.st_ino = INO_STATS;
		} else {
			/* A namespace gone from the target keeps its place, unlisted. */
			if (atomic_load(&fs->ns[i - 4].gone))
				continue;
			name = fs->ns[i - 4].name;
			st.st_ino = INO_NS_BASE + i - 4;
		}
		st.st_mode = i < 2 ? S_IFDIR : S_IFREG;
		len = fuse_add_direntry(req, buf + used, size - used, name, &st, (off_t)i + 1);
		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);

	if (ino == INO_INFO || ino == INO_STATS) {
		if ((fi->flags & O_ACCMODE) != O_RDONLY) {
			fuse_reply_err(req, EACCES);
			return;
		}
		fi->direct_io = 1;
		if (ino == INO_STATS) {
			size_t len;
			char *snap = stats_json(fs, &len);

			if (!snap) {
				fuse_reply_err(req, ENOMEM);
				return;
			}
			fi->fh = (uint64_t)(uintptr_t)snap;
		}
		fuse_reply_open(req, fi);
		return;
	}
	if (!ns_of(fs, ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	/* O_TRUNC is ignored, as a block device ignores it: the size is fixed. */
	fi->direct_io = !fs->opts.cached;
	fi->keep_cache = fs->opts.cached;
	fuse_reply_open(req, fi);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == INO_STATS)
		free((void *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void reply_text(fuse_req_t req, const char *text, size_t len, size_t size, off_t off)
{
	if ((size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, text + off, len - (size_t)off < size ? len - (size_t)off : size);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct ns_file *ns = ns_of(fs, ino);
	struct freq *f;
	uint64_t first, last;

	if (ino == INO_INFO) {
		reply_text(req, fs->info, fs->info_len, size, off);
		return;
	}
	if (ino == INO_STATS) {
		const char *snap = (const char *)(uintptr_t)fi->fh;

		reply_text(req, snap, strlen(snap), size, off);
		return;
	}
	if (!ns) {
		fuse_reply_err(req, EBADF);
		return;
	}
	/* Reading at or past the end is end of file, as for any file. */
	if ((uint64_t)off >= ns->size || !size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > ns->size - (uint64_t)off)
		size = ns->size - (uint64_t)off;
	f = take(req, ns, FOP_READ, (uint64_t)off, size);
	first = (uint64_t)off >> ns->lba_shift;
	last = ((uint64_t)off + size - 1) >> ns->lba_shift;
	sub_add(f, 0, SUB_READ, first, (uint32_t)(last - first + 1), f->buf);
	step(f);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct ns_file *ns = ns_of(fs, ino);
	struct freq *f;

	(void)fi;
	if (!ns) {
		fuse_reply_err(req, EBADF);
		return;
	}
	/* A namespace does not grow: refuse rather than write part of it. */
	if ((uint64_t)off > ns->size || size > ns->size - (uint64_t)off) {
		fuse_reply_err(req, ENOSPC);
		return;
	}
	if (!size) {
		fuse_reply_write(req, 0);
		return;
	}
	f = take(req, ns, FOP_WRITE, (uint64_t)off, size);
	/* The payload lies in f->buf, which is registered: sent from there. */
	f->data = (const uint8_t *)buf;
	if (!write_start(f))
		retry_push(f->w, f);
}

static void fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct ns_file *ns = ns_of(fs, ino);
	struct freq *f;

	(void)datasync;
	(void)fi;
	if (!ns) {
		fuse_reply_err(req, ino == INO_INFO || ino == INO_STATS ? 0 : EBADF);
		return;
	}
	/* Always sent: the target's volatile write cache is not ours to judge. */
	f = take(req, ns, FOP_FLUSH, 0, 0);
	sub_add(f, 0, SUB_FLUSH, 0, 0, NULL);
	step(f);
}

static void fs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	struct fs *fs = fs_of(req);
	struct ns_file *ns = ns_of(fs, ino);
	struct freq *f;
	enum fop op;

	(void)fi;
	if (!ns) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
		op = FOP_PUNCH;
	} else if (mode == FALLOC_FL_ZERO_RANGE || mode == (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE)) {
		op = FOP_ZERO;
	} else if (mode == 0 || mode == FALLOC_FL_KEEP_SIZE) {
		/* Every block is already allocated: within the capacity, done. */
		fuse_reply_err(req, (uint64_t)off + (uint64_t)len <= ns->size ? 0 : ENOSPC);
		return;
	} else {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (off < 0 || len <= 0 || (uint64_t)off + (uint64_t)len > ns->size) {
		fuse_reply_err(req, len <= 0 ? EINVAL : ENOSPC);
		return;
	}
	f = take(req, ns, op, (uint64_t)off, (size_t)len);
	if (!write_start(f))
		retry_push(f->w, f);
}

static void fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fs *fs = fs_of(req);
	struct statvfs st = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = 255 };

	(void)ino;
	for (unsigned int i = 0; i < fs->nr_ns; i++)
		st.f_blocks += atomic_load(&fs->ns[i].gone) ? 0 : fs->ns[i].size / 4096;
	st.f_files = 3 + fs->nr_ns;
	fuse_reply_statfs(req, &st);
}

/* ---------------------------------------------------------------------- */
/* Extended attributes: namespace and controller identity                   */
/* ---------------------------------------------------------------------- */

static const char *const xattr_names[] = {
	"user.nvmefs.nsid", "user.nvmefs.nguid", "user.nvmefs.uuid", "user.nvmefs.eui64",
	"user.nvmefs.lba_size", "user.nvmefs.capacity", "user.nvmefs.subnqn", "user.nvmefs.model",
	"user.nvmefs.serial", "user.nvmefs.firmware",
};
#define NR_XATTRS (sizeof(xattr_names) / sizeof(xattr_names[0]))

/* Identify strings are space padded; what the target put in them is
 * escaped, since getfattr prints it on a terminal. */
static void trimmed(char *dst, size_t size, const char *src, size_t len)
{
	while (len && (src[len - 1] == ' ' || !src[len - 1]))
		len--;
	text_escape(dst, size, src, len);
}

static void xattr_value(struct fs *fs, const struct ns_file *ns, unsigned int i, char *v, size_t size)
{
	const struct nvme_id_ctrl *id = nvmefs_ctrl_id(fs->ctrl);

	switch (i) {
	case 0: snprintf(v, size, "%u", ns->nsid); break;
	case 1: snprintf(v, size, "%s", ns->nguid); break;
	case 2: snprintf(v, size, "%s", ns->uuid); break;
	case 3: snprintf(v, size, "%s", ns->eui64); break;
	case 4: snprintf(v, size, "%u", ns->lba_size); break;
	case 5: snprintf(v, size, "%" PRIu64, ns->size); break;
	case 6: text_escape(v, size, nvmefs_ctrl_subnqn(fs->ctrl), NVMF_NQN_SIZE); break;
	case 7: trimmed(v, size, id->mn, sizeof(id->mn)); break;
	case 8: trimmed(v, size, id->sn, sizeof(id->sn)); break;
	default: trimmed(v, size, id->fr, sizeof(id->fr)); break;
	}
}

static void fs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fs *fs = fs_of(req);
	struct ns_file *ns = ns_of(fs, ino);
	char v[300];
	size_t len;

	for (unsigned int i = 0; ns && i < NR_XATTRS; i++) {
		if (strcmp(name, xattr_names[i]))
			continue;
		xattr_value(fs, ns, i, v, sizeof(v));
		len = strlen(v);
		if (!size)
			fuse_reply_xattr(req, len);
		else if (size < len)
			fuse_reply_err(req, ERANGE);
		else
			fuse_reply_buf(req, v, len);
		return;
	}
	fuse_reply_err(req, ENODATA);
}

static void fs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fs *fs = fs_of(req);
	char list[512];
	size_t len = 0;

	if (ns_of(fs, ino)) {
		for (unsigned int i = 0; i < NR_XATTRS; i++) {
			size_t n = strlen(xattr_names[i]) + 1;

			memcpy(list + len, xattr_names[i], n);
			len += n;
		}
	}
	if (!size)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, list, len);
}

static const struct fuse_lowlevel_ops fs_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	.getattr = fs_getattr,
	.setattr = fs_setattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.release = fs_release,
	.read = fs_read,
	.write = fs_write,
	.fsync = fs_fsync,
	.fallocate = fs_fallocate,
	.statfs = fs_statfs,
	.getxattr = fs_getxattr,
	.listxattr = fs_listxattr,
};

/* ---------------------------------------------------------------------- */
/* info and stats                                                           */
/* ---------------------------------------------------------------------- */

/* The counters and latencies of @s, as members of the object open in @j. */
static void stats_members(struct json *j, const struct queue_stats *s, const struct histogram *lat)
{
	json_uint(j, "reads", atomic_load(&s->reads));
	json_uint(j, "writes", atomic_load(&s->writes));
	json_uint(j, "read_bytes", atomic_load(&s->read_bytes));
	json_uint(j, "write_bytes", atomic_load(&s->write_bytes));
	json_uint(j, "flushes", atomic_load(&s->flushes));
	json_uint(j, "write_zeroes", atomic_load(&s->write_zeroes));
	json_uint(j, "deallocates", atomic_load(&s->deallocates));
	json_uint(j, "errors", atomic_load(&s->errors));
	json_object_begin(j, "lat_us");
	json_double(j, "mean", hist_mean(lat) / 1000);
	json_double(j, "p50", hist_percentile(lat, 50) / 1000);
	json_double(j, "p90", hist_percentile(lat, 90) / 1000);
	json_double(j, "p99", hist_percentile(lat, 99) / 1000);
	json_double(j, "p999", hist_percentile(lat, 99.9) / 1000);
	json_double(j, "max", hist_max(lat) / 1000.0);
	json_object_end(j);
}

/* A snapshot of the counters of every queue and their sum, as JSON. */
static char *stats_json(struct fs *fs, size_t *len)
{
	struct queue_stats *total = calloc(1, sizeof(*total));
	struct nvmefs_ctrl_status cs;
	struct timespec now;
	char *text = NULL;
	struct json j;
	FILE *out;

	out = total ? open_memstream(&text, len) : NULL;
	if (!out) {
		free(total);
		return NULL;
	}
	json_init(&j, out);
	json_object_begin(&j, NULL);
	json_array_begin(&j, "queues");
	for (unsigned int i = 0; i < fs->opts.workers; i++) {
		struct queue_stats *s = &fs->workers[i].stats;

		json_object_begin(&j, NULL);
		json_uint(&j, "queue", i + 1);
		stats_members(&j, s, &s->lat);
		json_object_end(&j);
		total->reads += atomic_load(&s->reads);
		total->writes += atomic_load(&s->writes);
		total->read_bytes += atomic_load(&s->read_bytes);
		total->write_bytes += atomic_load(&s->write_bytes);
		total->flushes += atomic_load(&s->flushes);
		total->write_zeroes += atomic_load(&s->write_zeroes);
		total->deallocates += atomic_load(&s->deallocates);
		total->errors += atomic_load(&s->errors);
		hist_merge(&total->lat, &s->lat);
	}
	json_array_end(&j);
	json_object_begin(&j, "total");
	stats_members(&j, total, &total->lat);
	json_object_end(&j);
	/* Kept from before reconnect: scripts read it; 0 while live. */
	json_int(&j, "controller_failed", nvmefs_ctrl_failed(fs->ctrl));
	nvmefs_ctrl_status(fs->ctrl, &cs);
	clock_gettime(CLOCK_MONOTONIC, &now);
	json_object_begin(&j, "controller");
	json_string(&j, "state", nvmefs_ctrl_state_name(cs.state));
	json_uint(&j, "reconnects", cs.reconnects);
	json_uint(&j, "attempts", cs.attempts);
	json_string(&j, "last_error", cs.reason);
	json_int(&j, "error", cs.error);
	json_int(&j, "time_in_state_ms",
		 (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - cs.since_ms);
	json_int(&j, "longest_outage_ms", cs.longest_outage_ms);
	json_uint(&j, "io_failing", cs.io_failing ? 1 : 0);
	json_uint(&j, "io_queues", cs.io_queues);
	json_object_end(&j);
	json_object_end(&j);
	fputc('\n', out);
	fclose(out);
	free(total);
	return text;
}

static int build_info(struct fs *fs)
{
	const struct nvme_id_ctrl *id = nvmefs_ctrl_id(fs->ctrl);
	char v[64];
	struct json j;
	FILE *out;

	out = open_memstream(&fs->info, &fs->info_len);
	if (!out)
		return fs_error(-ENOMEM, "out of memory");
	json_init(&j, out);
	json_object_begin(&j, NULL);
	json_string(&j, "subnqn", nvmefs_ctrl_subnqn(fs->ctrl));
	trimmed(v, sizeof(v), id->mn, sizeof(id->mn));
	json_string(&j, "model", v);
	trimmed(v, sizeof(v), id->sn, sizeof(id->sn));
	json_string(&j, "serial", v);
	trimmed(v, sizeof(v), id->fr, sizeof(id->fr));
	json_string(&j, "firmware", v);
	json_uint(&j, "cntlid", nvmefs_ctrl_cntlid(fs->ctrl));
	json_string(&j, "hostnqn", nvmefs_ctrl_hostnqn(fs->ctrl));
	json_uint(&j, "io_queues", fs->opts.workers);
	json_string(&j, "mode", fs->opts.cached ? "cached" : "direct");
	json_array_begin(&j, "namespaces");
	for (unsigned int i = 0; i < fs->nr_ns; i++) {
		const struct ns_file *ns = &fs->ns[i];

		json_object_begin(&j, NULL);
		json_string(&j, "file", ns->name);
		json_uint(&j, "nsid", ns->nsid);
		json_uint(&j, "size", ns->size);
		json_uint(&j, "lba_size", ns->lba_size);
		json_string(&j, "nguid", ns->nguid);
		json_string(&j, "uuid", ns->uuid);
		json_string(&j, "eui64", ns->eui64);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	fputc('\n', out);
	if (fclose(out))
		return fs_error(-ENOMEM, "out of memory");
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Workers                                                                  */
/* ---------------------------------------------------------------------- */

/* Reads one request into a free buffer and dispatches it.  Returns whether
 * one came. */
/*
 * The kernel's INIT went through fs_init(); libfuse may still have refused
 * it (options it cannot meet), and then ended the session: only a session
 * still running is a live mount to tell the caller about.
 */
static void init_answered(struct fs *fs)
{
	if (atomic_exchange(&fs->ready_told, true))
		return;
	if (fuse_session_exited(fs->se)) {
		fs->init_error = fs_error(-EPROTO, "FUSE refused the mount when the kernel started "
					  "it (INIT): a -o option it cannot meet; mount without the "
					  "FUSE options added, or see the system log");
		atomic_store(&fs->stopping, true);
		eventfd_write(fs->stop_fd, 1);
		return;
	}
	if (fs->opts.ready)
		fs->opts.ready(fs->opts.ready_arg);
}

static bool receive(struct worker *w)
{
	struct fs *fs = w->fs;
	struct freq *f = w->free;
	struct fuse_buf fb = { 0 };
	ssize_t n;

	n = read(fuse_session_fd(fs->se), f->buf, fs->bufsize);
	if (n <= 0) {
		if (n < 0 && errno == ENODEV) {
			/* Unmounted (fusermount3 -u, umount): time to go. */
			atomic_store(&fs->stopping, true);
			eventfd_write(fs->stop_fd, 1);
		}
		return false;
	}
	w->free = f->next;
	w->busy++;
	f->busy = false;
	f->taken = false;
	f->start_ns = hist_now_ns();
	fb.mem = f->buf;
	fb.size = (size_t)n;
	cur_freq = f;
	fuse_session_process_buf(fs->se, &fb);
	cur_freq = NULL;
	if (atomic_load(&fs->init_called) && !atomic_load(&fs->ready_told))
		init_answered(fs);
	/* Answered on the spot (lookup, getattr, ...): the buffer is free again.  A
	 * request take() claimed is returned by freq_put(), even when it finished
	 * before fuse_session_process_buf() returned (a submission that failed). */
	if (!f->taken) {
		f->next = w->free;
		w->free = f;
		w->busy--;
	}
	return true;
}

/*
 * /dev/fuse is shared by every worker: watched with EPOLLEXCLUSIVE, a
 * request wakes one of them, not all (who would then mostly read EAGAIN).
 * A worker with no free buffer stops watching, so requests go to the others.
 */
static void watch_fuse(struct worker *w, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE };
	int fd = fuse_session_fd(w->fs->se);

	if (on == w->fuse_watched)
		return;
	if (epoll_ctl(w->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, on ? &ev : NULL) == 0)
		w->fuse_watched = on;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct fs *fs = w->fs;

	cur_worker = w;
	while (!atomic_load(&fs->stopping)) {
		struct epoll_event ev[3];
		bool busy = false;

		if (w->busy && nvmefs_ioq_poll(w->q, 0) > 0)
			busy = true;
		if (w->retry_head && run_retries(w))
			busy = true;
		/* Take what has queued up, as long as there are buffers for it. */
		while (w->free && receive(w))
			busy = true;
		watch_fuse(w, w->free != NULL);
		if (busy)
			continue;
		/* Nothing to do: sleep until a request, a completion or the end.  Arm
		 * even when idle: arming also takes the completion channel's pending
		 * event, which would otherwise keep epoll_wait() returning at once. */
		if (nvmefs_ioq_arm(w->q) > 0) {
			/* Completions, or an outage: a worker with nothing in flight
			 * must still stop its queue for the controller to recover. */
			nvmefs_ioq_poll(w->q, 0);
			continue;
		}
		epoll_wait(w->epfd, ev, 3, w->retry_head ? 1 : 1000);
	}
	/* Let what is in flight finish; a dead target fails it within the I/O
	 * timeout, and I/O held by an outage fails as the mount goes. */
	while (w->busy || nvmefs_ioq_inflight(w->q) || atomic_load(&fs->workers_left)) {
		int ret;

		if (!w->busy && !nvmefs_ioq_inflight(w->q) && !w->drained) {
			w->drained = true;
			atomic_fetch_sub(&fs->workers_left, 1);
		}

		/* Going away ends an outage's wait: what it holds fails now rather
		 * than at ctrl_loss_tmo, as 'nvme disconnect' does while reconnecting. */
		if (nvmefs_ctrl_failed(fs->ctrl))
			nvmefs_ctrl_stop_reconnect(fs->ctrl);
		ret = nvmefs_ioq_poll(w->q, 100);

		run_retries(w);
		/* A failed queue has ended all its I/O: what is left waits on nothing. */
		if (ret < 0) {
			if (w->busy)
				fs_log("worker %u: %u requests unanswered after the queue failed", w->idx,
				       w->busy);
			break;
		}
	}
	if (!w->drained)
		atomic_fetch_sub(&fs->workers_left, 1);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	if (sig_fs) {
		atomic_store(&sig_fs->stopping, true);
		eventfd_write(sig_fs->stop_fd, 1);
	}
}

/* Say what the buffers need before registering them fails halfway. */
static int check_memlock(struct fs *fs)
{
	size_t need = (size_t)fs->opts.workers * fs->opts.depth * (fs->bufsize + 2 * MAX_LBA_SIZE);
	struct rlimit rl;

	/* Root may lock memory past the limit (CAP_IPC_LOCK). */
	if (geteuid() == 0 || getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need + (1u << 20))
		return 0;
	return fs_error(-ENOMEM, "the request buffers need %zu KiB of locked memory (%u queues x "
			"--depth %u x max_io %zu KiB), more than RLIMIT_MEMLOCK allows (%llu KiB): "
			"raise it ('ulimit -l %zu') or use fewer or smaller buffers (-i, --depth, "
			"-o max_io)", need >> 10, fs->opts.workers, fs->opts.depth, fs->opts.max_io >> 10,
			(unsigned long long)rl.rlim_cur >> 10, (need >> 10) + 1024);
}

static int setup_workers(struct fs *fs)
{
	size_t per_freq = fs->bufsize + 2 * MAX_LBA_SIZE;
	int ret;

	fs->workers = calloc(fs->opts.workers, sizeof(*fs->workers));
	if (!fs->workers)
		return fs_error(-ENOMEM, "out of memory");
	for (unsigned int i = 0; i < fs->opts.workers; i++)
		fs->workers[i].epfd = -1;
	for (unsigned int i = 0; i < fs->opts.workers; i++) {
		struct worker *w = &fs->workers[i];
		size_t len = per_freq * fs->opts.depth;

		w->fs = fs;
		w->idx = i;
		w->q = nvmefs_ctrl_io_queue(fs->ctrl, i);
		w->freqs = calloc(fs->opts.depth, sizeof(*w->freqs));
		if (!w->freqs || posix_memalign((void **)&w->region, 4096, len))
			return fs_error(-ENOMEM, "out of memory for %zu MiB of request buffers",
					    len >> 20);
		/* Registered once: requests arrive here and data moves from here. */
		ret = nvmefs_mr_reg(fs->ctrl, w->region, len, &w->mr);
		if (ret < 0)
			return lib_error(ret);
		for (unsigned int k = 0; k < fs->opts.depth; k++) {
			struct freq *f = &w->freqs[k];

			f->w = w;
			f->buf = w->region + k * per_freq;
			f->edge = f->buf + fs->bufsize;
			f->resv = -1;
			f->next = w->free;
			w->free = f;
		}
	}
	return 0;
}

/* What every worker sleeps on besides /dev/fuse: the end, and its queue. */
static int watch_worker_fds(struct fs *fs)
{
	for (unsigned int i = 0; i < fs->opts.workers; i++) {
		struct worker *w = &fs->workers[i];
		struct epoll_event stop = { .events = EPOLLIN, .data.u32 = 0 };
		struct epoll_event cq = { .events = EPOLLIN, .data.u32 = 1 };

		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fs->stop_fd, &stop) ||
		    epoll_ctl(w->epfd, EPOLL_CTL_ADD, nvmefs_ioq_fd(w->q), &cq))
			return fs_error(-errno, "setting up epoll for worker %u failed: %s", i,
					strerror(errno));
	}
	return 0;
}

static void free_workers(struct fs *fs)
{
	for (unsigned int i = 0; fs->workers && i < fs->opts.workers; i++) {
		if (fs->workers[i].epfd >= 0)
			close(fs->workers[i].epfd);
		nvmefs_mr_dereg(fs->workers[i].mr);
		free(fs->workers[i].region);
		free(fs->workers[i].freqs);
	}
	free(fs->workers);
}

/* Everything written is made durable before the mount goes away. */
static void flush_all(struct fs *fs)
{
	struct nvmefs_ioq *q = nvmefs_ctrl_io_queue(fs->ctrl, 0);

	for (unsigned int i = 0; q && i < fs->nr_ns && !nvmefs_ctrl_failed(fs->ctrl); i++) {
		if (nvmefs_ioq_flush_sync(q, fs->ns[i].nsid) != 0)
			fs_log("flushing %s before unmounting failed: %s", fs->ns[i].name,
			       nvmefs_errmsg());
	}
}

int nvmefs_fs_run(struct nvmefs_ctrl *ctrl, const struct nvmefs_fs_opts *opts)
{
	struct fs *fs;
	struct nvmefs_io_opts io;
	struct sigaction sa = { .sa_handler = on_signal };
	char *mount_opts = NULL;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	unsigned int started = 0;
	int ret;

	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return fs_error(-ENOMEM, "out of memory");
	fs->ctrl = ctrl;
	fs->opts = *opts;
	fs->uid = opts->uid >= 0 ? (uid_t)opts->uid : getuid();
	fs->gid = opts->gid >= 0 ? (gid_t)opts->gid : getgid();
	fs->mounted = time(NULL);
	fs->stop_fd = -1;
	pthread_mutex_init(&fs->resv_lock, NULL);
	pthread_mutex_init(&fs->log_lock, NULL);
	/* The request, or the blocks around an unaligned read of max_io bytes. */
	fs->bufsize = opts->max_io + BUF_SLACK;

	nvmefs_io_opts_init(&io);
	io.nr_queues = opts->workers;
	/* Each request needs up to three commands at once (two edges, the middle). */
	io.queue_size = opts->queue_size ? opts->queue_size : opts->depth * 3 + 1;
	io.bufs_per_queue = 1;
	io.buf_size = 4096;
	io.timeout_ms = opts->io_timeout_ms;
	ret = nvmefs_ctrl_create_io_queues(ctrl, &io);
	if (ret < 0) {
		ret = lib_error(ret);
		goto out;
	}
	ret = fs_scan_namespaces(fs);
	if (ret == 0)
		ret = build_info(fs);
	if (ret < 0)
		goto out;
	fs->nr_resv = opts->workers * opts->depth;
	fs->resv = calloc(fs->nr_resv, sizeof(*fs->resv));
	fs->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!fs->resv || fs->stop_fd < 0) {
		ret = fs_error(-ENOMEM, "out of memory");
		goto out;
	}
	ret = check_memlock(fs);
	if (ret == 0)
		ret = setup_workers(fs);
	if (ret < 0)
		goto out;

	if (asprintf(&mount_opts, "fsname=nvmefs:%s,subtype=nvmefs,default_permissions,max_read=%zu%s%s",
		     nvmefs_ctrl_subnqn(ctrl), opts->max_io, opts->fuse_options ? "," : "",
		     opts->fuse_options ? opts->fuse_options : "") < 0 ||
	    fuse_opt_add_arg(&args, "nvmefs") || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, mount_opts)) {
		ret = fs_error(-ENOMEM, "out of memory");
		goto out;
	}
	fs->se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), fs);
	if (!fs->se) {
		ret = fs_error(-EINVAL, "setting up FUSE failed (libfuse said why above): check the "
				   "-o options");
		goto out;
	}
	if (fuse_session_mount(fs->se, opts->mountpoint) != 0) {
		ret = fs_error(-EIO, "mounting on %s failed (libfuse said why above): check that it "
				   "is a directory you may mount on, and that /dev/fuse and fusermount3 "
				   "are usable", opts->mountpoint);
		goto out;
	}
	fcntl(fuse_session_fd(fs->se), F_SETFL, fcntl(fuse_session_fd(fs->se), F_GETFL) | O_NONBLOCK);
	ret = watch_worker_fds(fs);
	if (ret < 0) {
		fuse_session_unmount(fs->se);
		goto out;
	}
	/* Files follow the target's namespaces while the mount is live. */
	nvmefs_ctrl_set_change_cb(ctrl, fs_namespaces_changed, fs);
	sig_fs = fs;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	atomic_store(&fs->workers_left, opts->workers);
	for (started = 0; started < opts->workers; started++) {
		ret = pthread_create(&fs->workers[started].thread, NULL, worker_main,
				     &fs->workers[started]);
		if (ret) {
			ret = fs_error(-ret, "starting worker %u failed: %s", started, strerror(ret));
			atomic_fetch_sub(&fs->workers_left, opts->workers - started);
			atomic_store(&fs->stopping, true);
			eventfd_write(fs->stop_fd, 1);
			break;
		}
	}
	/* Ready is told by the worker that sees INIT through (init_answered). */
	for (unsigned int i = 0; i < started; i++)
		pthread_join(fs->workers[i].thread, NULL);
	if (ret == 0 && fs->init_error)
		ret = fs->init_error;
	nvmefs_ctrl_set_change_cb(ctrl, NULL, NULL);
	flush_all(fs);
	fuse_session_unmount(fs->se);
	if (nvmefs_ctrl_failed(ctrl) && ret == 0)
		ret = fs_error(nvmefs_ctrl_failed(ctrl), "the controller of %s failed while mounted and "
			       "was not reconnected (%s), so file I/O failed with EIO: check the "
			       "target and mount again", nvmefs_ctrl_subnqn(ctrl), nvmefs_errmsg());
out:
	sig_fs = NULL;
	if (fs->se)
		fuse_session_destroy(fs->se);
	fuse_opt_free_args(&args);
	free(mount_opts);
	free_workers(fs);
	nvmefs_ctrl_delete_io_queues(ctrl);
	if (fs->stop_fd >= 0)
		close(fs->stop_fd);
	pthread_mutex_destroy(&fs->resv_lock);
	pthread_mutex_destroy(&fs->log_lock);
	free(fs->resv);
	free(fs->ns);
	free(fs->info);
	free(fs);
	return ret;
}
