/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to the FUSE side of `nvmefs mount`: what its files share.
 * fs_ops.c has the FUSE operations; requests.c how a request becomes NVMe
 * commands; worker.c the workers; serve.c the mount's life; namespaces.c
 * the namespace files and how they follow the target.
 */
#ifndef NVMEFS_FUSE_FS_PRIV_H
#define NVMEFS_FUSE_FS_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 34
#endif
#include <fuse_lowlevel.h>

#include "fs.h"
#include "parking.h"
#include "../common/histogram.h"

#define INO_INFO 2
#define INO_STATS 3
#define INO_NS_BASE 16
#define MAX_LBA_SIZE 4096

struct ns_file {
	uint32_t nsid;
	uint32_t lba_size;
	uint8_t lba_shift;
	/* Blocks per Write Zeroes command, for the stats' count. */
	uint32_t max_zeroes_nlb;
	/* Bytes; follows a resize on the target (namespaces.c), read by every
	 * worker. */
	_Atomic uint64_t size;
	/* Removed or replaced on the target: no longer listed, its I/O fails. */
	atomic_bool gone;
	char name[16];
	char nguid[33];
	char eui64[17];
	char uuid[37];
};

/* Room past the payload: the request headers, or the partial blocks that
 * round an unaligned read out to whole blocks. */
#define BUF_SLACK 8192

/* The registered bytes of one FUSE request of a mount with @max_io: its
 * buffer (max_io + BUF_SLACK) and the two blocks around an unaligned
 * write's edges.  What each worker registers, and what the memlock check
 * counts. */
static inline size_t fs_freq_bytes(size_t max_io)
{
	return max_io + BUF_SLACK + 2 * MAX_LBA_SIZE;
}

enum fop { FOP_READ, FOP_WRITE, FOP_FLUSH, FOP_ZERO, FOP_PUNCH };
enum sub_kind { SUB_READ, SUB_WRITE, SUB_ZEROES, SUB_PUNCH, SUB_FLUSH };


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

/* What woke a worker from epoll_wait(), in epoll_event.data.u32. */
enum { WORKER_EV_STOP, WORKER_EV_QUEUE, WORKER_EV_WAKE, WORKER_EV_FUSE };

struct worker {
	struct fs *fs;
	unsigned int idx;
	pthread_t thread;
	int epfd;
	bool fuse_watched;	/* /dev/fuse is in epfd */
	/* Its queue of the subsystem head, over one path or several. */
	struct nvmefs_mpq *mpq;
	struct nvmefs_subsys_mr *smr;
	uint8_t *region;
	struct freq *freqs;
	struct freq *free;
	unsigned int busy;
	bool drained;		/* counted out of fs->workers_left */
	/* Written when a write reservation this worker waits for is released
	 * (by any worker); in epfd. */
	int wake_fd;
	bool resv_waiting;	/* under fs->resv_lock */
	struct freq *retry_head, *retry_tail;	/* deferred writes and waiting sub-I/Os */
	/* Read into when every buffer is taken, so that the mount answers
	 * while its I/O is held: not registered, never taken by I/O. */
	struct freq spare;
	/* I/O read into the spare, waiting for one of this worker's buffers. */
	struct park_list ready;
	/* I/O to namespaces the queue would hold (no usable path, an outage):
	 * it takes no buffer until it can go. */
	struct park_list held;
	uint64_t held_checked_ns;
	struct queue_stats stats;
};

struct resv {
	bool used;
	uint32_t nsid;
	uint64_t first, last;
};

struct fs {
	/* The controller (with several paths, the first), and the head over
	 * its paths, which all I/O goes through. */
	struct nvmefs_ctrl *ctrl;
	struct nvmefs_subsys *subsys;
	struct nvmefs_fs_opts opts;
	struct fuse_session *se;
	int stop_fd;
	/* Asked to stop (signal, unmount, INIT refused): read by serve.c. */
	atomic_bool stopping;
	/* Set once the namespace-change callback is cleared: the workers stop
	 * reading /dev/fuse and drain.  Until then they answer, which a change
	 * callback's FUSE notify may be waiting for. */
	atomic_bool serve_done;
	/* /dev/fuse said ENODEV: nothing more comes. */
	atomic_bool unmounted;
	/* Workers still with I/O of their own at the end: until none is, every
	 * worker keeps polling its queue, which may carry another's I/O while
	 * the target grants fewer queues. */
	atomic_uint workers_left;
	/* The kernel's INIT reached fs_init(); its outcome was looked at (the
	 * caller told the mount is live, or init_error set). */
	atomic_bool init_called;
	atomic_bool ready_told;
	int init_error;
	size_t bufsize;
	/* Room for NVMEFS_MAX_NAMESPACES: a namespace added on the target gets
	 * its file at the end while the workers read the array. */
	struct ns_file *ns;
	atomic_uint nr_ns;
	struct worker *workers;
	/* Workers with a buffer free: while there is one, a worker without
	 * leaves /dev/fuse to it rather than read into its spare. */
	atomic_uint workers_with_free;
	/* What the workers' parked requests take, bounded by PARK_MAX_BYTES. */
	atomic_size_t parked_bytes;
	uid_t uid;
	gid_t gid;
	time_t mounted;		/* every file's times: the namespaces do not keep any */
	char *info;
	size_t info_len;
	pthread_mutex_t resv_lock;
	struct resv *resv;
	unsigned int nr_resv;
	/* Statuses already logged: each is logged once. */
	pthread_mutex_t log_lock;
	int logged[32];
	unsigned int nr_logged;
};

/* fs_log.c: why nvmefs_fs_run() failed (returns @err), a library failure as
 * ours, and the daemon's log. */
__attribute__((format(printf, 2, 3)))
int fs_error(int err, const char *fmt, ...);
int lib_error(int err);
__attribute__((format(printf, 1, 2)))
void fs_log(const char *fmt, ...);

/* fs_ops.c: the FUSE operations; the stats file's text and the info file. */
extern const struct fuse_lowlevel_ops fs_lowlevel_ops;
char *fs_stats_json(struct fs *fs, size_t *len);
int fs_build_info(struct fs *fs);

/* requests.c */
/* The request a worker is dispatching, for fs_take(). */
extern _Thread_local struct freq *fs_cur_freq;
/* Takes the current request over for asynchronous completion. */
struct freq *fs_take(fuse_req_t req, struct ns_file *ns, enum fop op, uint64_t off, size_t size);
/* Starts a write or zeroing; false if its blocks are reserved by another. */
bool fs_write_start(struct freq *f);
void fs_retry_push(struct worker *w, struct freq *f);
/* Adds sub-I/O @i of @f and submits it. */
void fs_sub_add(struct freq *f, unsigned int i, enum sub_kind kind, uint64_t slba, uint64_t nlb,
		uint8_t *buf);
/* What to do once nothing of @f is in flight or waiting. */
void fs_step(struct freq *f);
/* Writes and sub-I/Os that waited: whether any of them got on. */
bool fs_run_retries(struct worker *w);

/* The mount's controllers: its one, or each path's. */
static inline unsigned int fs_nr_ctrls(const struct fs *fs)
{
	return nvmefs_subsys_path_count(fs->subsys);
}

static inline struct nvmefs_ctrl *fs_ctrl(const struct fs *fs, unsigned int i)
{
	return nvmefs_subsys_path(fs->subsys, i);
}

/* A worker's queue of the head. */
static inline int worker_poll(struct worker *w, int timeout_ms)
{
	return nvmefs_mpq_poll(w->mpq, timeout_ms);
}

static inline int worker_arm(struct worker *w)
{
	return nvmefs_mpq_arm(w->mpq);
}

static inline unsigned int worker_inflight(const struct worker *w)
{
	return nvmefs_mpq_inflight(w->mpq);
}

static inline int worker_wait_ms(const struct worker *w)
{
	return nvmefs_mpq_wait_ms(w->mpq);
}

static inline int worker_fd(const struct worker *w)
{
	return nvmefs_mpq_fd(w->mpq);
}

/* worker.c */
/* The workers, each with its queue and its requests' buffers, registered once. */
int fs_setup_workers(struct fs *fs);
void *fs_worker_main(void *arg);
/* Every controller (path) that is not live gives up reconnecting. */
void fs_stop_reconnecting(struct fs *fs);
/* Hands the request of @n bytes just read into w->free's buffer to libfuse,
 * which calls the operation (the fuzzing harness comes in here too). */
void fs_dispatch(struct worker *w, size_t n);

/* namespaces.c */
/* A file for every active namespace, with its identity for xattrs and info. */
int fs_scan_namespaces(struct fs *fs);
/* The library's change callback: files follow resized, added and removed
 * namespaces (set once the mount is live). */
void fs_namespaces_changed(void *arg, enum nvmefs_ctrl_change what);

#endif /* NVMEFS_FUSE_FS_PRIV_H */
