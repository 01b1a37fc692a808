/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The export engine, as a front end (FUSE today, a block device or an fio
 * job tomorrow) sees it: a library the front end drives.  It serves
 * byte-range requests on namespaces (read, write, flush, zero a range,
 * punch a hole), each carrying the front end's cookie, and completes each
 * exactly once through the front end's callbacks, with the data or a
 * status.  Inside: splitting into NVMe commands around partial blocks,
 * write reservations, retries when a queue is full, and parking of what a
 * held namespace or a full set of buffers cannot take yet.
 *
 * The engine has a worker for each I/O queue of the subsystem head, with
 * request buffers registered once with the controller: a front end reads a
 * request straight into one of them, so a write's payload goes to the
 * target from where it came in and a read is completed from where the
 * target put its data.  The front end owns the threads, their loops and
 * its descriptors; each worker is served by one thread at a time, which
 * makes every call on it and gets every completion of its requests, with
 * no hand-off between threads.  src/fuse/loop.c is a front end's loop, for
 * /dev/fuse; src/fuse/ring.c serves FUSE over io_uring from the same
 * threads (exp_worker_post()), src/ublk/ a ublk device's queues.
 *
 * The engine never calls the front end but through struct exp_ops.
 */
#ifndef NVMEFS_EXPORT_ENGINE_H
#define NVMEFS_EXPORT_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>

#include <nvmefs/nvmefs.h>

#include "../common/histogram.h"

/* The largest block a namespace may have to be served. */
#define EXP_MAX_LBA_SIZE 4096
/* Room past the payload: the request's headers, or the partial blocks that
 * round an unaligned read out to whole blocks. */
#define EXP_BUF_SLACK 8192

/* The registered bytes of one request of an export with @max_io: its
 * buffer (max_io + EXP_BUF_SLACK) and the two blocks around an unaligned
 * write's edges.  What each worker registers, and what a memlock check
 * counts. */
static inline size_t exp_req_bytes(size_t max_io)
{
	return max_io + EXP_BUF_SLACK + 2 * EXP_MAX_LBA_SIZE;
}

/* A namespace an export serves. */
struct exp_ns {
	uint32_t nsid;
	uint32_t lba_size;
	uint8_t lba_shift;
	/* Blocks per Write Zeroes command, for the stats' count. */
	uint32_t max_zeroes_nlb;
	/* Bytes; follows a resize on the target, read by every worker. */
	_Atomic uint64_t size;
	/* Removed or replaced on the target: no longer listed, its I/O fails. */
	atomic_bool gone;
	char name[16];
	char nguid[33];
	char eui64[17];
	char uuid[37];
};

/* Fills @ns with namespace @nsid of @ctrl: -errno with exp_errmsg(), and
 * -EOPNOTSUPP for a block size the engine does not serve (@face, the
 * command's name, says who). */
int exp_ns_init(struct nvmefs_ctrl *ctrl, struct exp_ns *ns, uint32_t nsid, const char *face);

/* What the target did to a namespace an export serves. */
enum exp_ns_change { EXP_NS_SAME, EXP_NS_GONE, EXP_NS_BACK, EXP_NS_RESIZED };
/* The one rule every front end follows when the target's namespaces
 * changed: @ns is marked gone (removed, or another namespace behind its
 * NSID: its I/O fails) or back (enabled again as it was, its size taken),
 * or takes its new size; *@old_size is the one it had. */
enum exp_ns_change exp_ns_follow(struct nvmefs_ctrl *ctrl, struct exp_ns *ns, uint64_t *old_size);

enum exp_op { EXP_READ, EXP_WRITE, EXP_FLUSH, EXP_ZERO, EXP_PUNCH };

/* A worker's counters, which exp_stats_json() reports. */
struct exp_stats {
	atomic_uint_fast64_t reads, writes, read_bytes, write_bytes;
	atomic_uint_fast64_t flushes, write_zeroes, deallocates, errors;
	struct histogram lat;
};

/* What the front end does for the engine; @arg is exp_create()'s.  Called
 * on the thread serving the worker the request is on. */
struct exp_ops {
	/* Answers with @err the request at @buf, as the front end handed it to
	 * exp_req_admit(), which the engine parked and cannot serve any more. */
	void (*refuse)(void *arg, const void *buf, int err);
	/* A read of exp_submit() succeeded: @len bytes at @data, valid only
	 * during the call. */
	void (*complete_read)(void *cookie, const void *data, size_t len);
	/* Any other end of a request of exp_submit(): @err a positive errno,
	 * or 0 and @len the bytes written (EXP_WRITE) or 0. */
	void (*complete)(void *cookie, enum exp_op op, int err, size_t len);
};

struct exp_opts {
	/* Workers, each with its own I/O queue. */
	unsigned int workers;
	/* Requests each worker keeps in flight. */
	unsigned int depth;
	/* Largest read or write in one request. */
	size_t max_io;
};

/* The I/O queues an engine with @opts needs, which the caller creates on
 * each path before it makes the subsystem head: @queue_size entries each
 * (0: enough for opts->depth requests), I/O timeout @timeout_ms. */
void exp_io_opts(const struct exp_opts *opts, unsigned int queue_size, unsigned int timeout_ms,
		 struct nvmefs_io_opts *io);
/* What an engine with @opts pins, its request buffers and, for each
 * request, @copies more registrations of @len bytes the front end makes
 * (FUSE over io_uring's payloads), on each of its @rdma_paths paths over
 * RDMA; NVMe/TCP registers nothing.  SIZE_MAX past what size_t holds. */
size_t exp_pinned_need(const struct exp_opts *opts, unsigned int rdma_paths, unsigned int copies,
		       size_t len);
/* Whether a locked-memory limit of @limit bytes covers @need with 1 MiB to
 * spare for what else the process pins; a saturated @need fits none. */
bool exp_memlock_covers(uint64_t limit, size_t need);
/* 0 when the locked-memory limit covers @need; else -ENOMEM with
 * exp_error(): the sum, made of @sum, and what to do, @smaller naming the
 * front end's options for fewer or smaller buffers.  Called before
 * connecting, whose own registrations would fail first. */
int exp_check_memlock(size_t need, const char *sum, const char *smaller);

struct exp;
/* One I/O queue of the head and its registered request buffers. */
struct exp_worker;
/* One request buffer of a worker. */
struct exp_req;

/*
 * An engine over the queues of the subsystem head @head (one path or
 * several), one per worker: buffers allocated and registered, no thread
 * started.  Returns 0 or -errno with exp_errmsg().
 */
int exp_create(struct nvmefs_subsys *head, const struct exp_opts *opts, const struct exp_ops *ops,
	       void *arg, struct exp **out);
/* Once no thread serves a worker any more (each drained or abandoned). */
void exp_destroy(struct exp *e);
unsigned int exp_nr_workers(const struct exp *e);
struct exp_worker *exp_worker(struct exp *e, unsigned int i);
/* The bytes a request buffer holds: the largest request a front end reads in. */
size_t exp_req_size(const struct exp *e);

/*
 * The calls below on a worker come from the one thread serving it.
 *
 * Where the front end reads its next request: a free buffer, else (no
 * worker has one free) a spare one, not registered, so that requests are
 * still answered while every buffer waits on held I/O; NULL when @w is to
 * read nothing now (no buffer, or the spare's I/O still waits for one).
 */
struct exp_req *exp_worker_req(struct exp_worker *w);
void *exp_req_buf(struct exp_req *r);
/*
 * The request of @len bytes just read into @r's buffer, I/O to namespace
 * @nsid, or 0 for one answered on the spot: true when the front end
 * handles it now (calling exp_submit() for its I/O), then exp_req_handled();
 * false when the engine parked it (copied: read into the spare), to give it
 * back through exp_worker_resumed() once a buffer is free.
 */
bool exp_req_admit(struct exp_req *r, size_t len, uint32_t nsid);
/*
 * Takes over admitted @r, and its buffer, for I/O on @ns; completes it
 * through ops with @cookie.  A write's @data (@size bytes) lies in that
 * buffer.  Offsets and sizes are the caller's to check against the namespace.
 * I/O its namespace's queue would hold (no usable path) is copied out and
 * parked, and the buffer is free again once exp_submit() returns.
 */
void exp_submit(struct exp_req *r, void *cookie, struct exp_ns *ns, enum exp_op op, uint64_t off,
		size_t size, const void *data);
/* The front end is done with admitted @r: its buffer is free again unless
 * exp_submit() took it. */
void exp_req_handled(struct exp_req *r);
/* A parked request that can go now, in one of @w's buffers, *@len bytes,
 * admitted: the front end handles it as one it read.  NULL when none. */
struct exp_req *exp_worker_resumed(struct exp_worker *w, size_t *len);
/* Completions, writes and commands that waited, parked and posted
 * requests: whether anything moved (then call it again before sleeping). */
bool exp_worker_run(struct exp_worker *w);
/* Before the front end sleeps: false when work came meanwhile (run again);
 * else true, and *@wait_ms how long it may sleep at most. */
bool exp_worker_arm(struct exp_worker *w, int *wait_ms);
/* Adds what wakes @w (its queue, released reservations, posts) to the front
 * end's @epfd; their events' data.ptr is the engine's, for exp_worker_event(). */
int exp_worker_watch(struct exp_worker *w, int epfd);
/* Whether @ev, from that epoll, is @w's (then taken). */
bool exp_worker_event(struct exp_worker *w, const struct epoll_event *ev);
/*
 * Once the front end stops taking requests for @w: one step of letting
 * what is in flight end (a controller that is not live is given up: its
 * I/O fails), true when done.  Every worker's thread steps until then:
 * a queue may carry another worker's I/O while the target grants fewer
 * queues.  Handle what exp_worker_resumed() gives between the steps.
 */
bool exp_worker_drain(struct exp_worker *w);
/* @w will never be served (its thread did not start): the others' drain
 * does not wait for it. */
void exp_worker_abandon(struct exp_worker *w);

/*
 * A request the front end keeps in memory of its own (FUSE over io_uring:
 * a ring entry) rather than reading it into a worker's buffer, until it is
 * completed through ops with @cookie, as exp_submit()'s.
 */
struct exp_post {
	void *cookie;
	struct exp_ns *ns;
	enum exp_op op;
	uint64_t off;
	size_t size;
	/* A write's payload (@size bytes); registered (nvmefs_subsys_mr_reg())
	 * unless @copy. */
	const void *data;
	/* Where a read's blocks go when it starts on a block (registered, of
	 * @read_room bytes): completed from its first byte.  Else, or NULL,
	 * the worker's own buffer. */
	void *read_buf;
	size_t read_room;
	/* @data is not registered: copied into the worker's buffer first. */
	bool copy;
	uint64_t start_ns;
};

/* On the thread serving @w, whose own request @p is: whether @w has a
 * buffer free to start one now. */
bool exp_worker_can_post(const struct exp_worker *w);
/* On the thread serving @w, when exp_worker_can_post(): starts @p in a
 * buffer of @w's (1), or parks it while its namespace is held (0: it keeps
 * no buffer, and is started once its namespace has a path, or fails with
 * the held I/O); past the parking's bound the queue holds it in a buffer. */
int exp_worker_post(struct exp_worker *w, struct exp_post *p);
/* The front end takes requests from an io_uring (the stats say so). */
void exp_set_io_uring(struct exp *e, bool on);

/* Flushes @nsid through the first worker's queue, waiting for it (no
 * thread serving the workers): 0, an NVMe status, or -errno. */
int exp_flush_sync(struct exp *e, uint32_t nsid);
/* Whether the controller, or every path, failed: 0 or its -errno. */
int exp_failed(const struct exp *e);
/* Whether the controller, or every path, failed for good (deleted: past
 * ctrl_loss_tmo, or another target): 0 or its -errno.  Not one that is
 * reconnecting, as exp_failed() counts it. */
int exp_lost(const struct exp *e);
/* Every controller (path) that is not live gives up reconnecting. */
void exp_stop_reconnecting(struct exp *e);
/*
 * From any thread: the export is going while its front end still serves
 * (a block device waiting for its I/O in flight before it goes).  Nothing
 * waits for a path any more, as with 'nvme disconnect': an outage is given
 * up, and what a worker holds for a namespace with no usable path, or
 * parks from now on, fails with EIO at its next exp_worker_run().
 */
void exp_going(struct exp *e);
/* From any thread: as exp_going() for namespace @nsid alone (its block
 * device is being deleted while the others serve on). */
void exp_ns_give_up(struct exp *e, uint32_t nsid);
/* A snapshot of every worker's counters and their sum, the controller's
 * state and each path's reach of namespaces @ns (@nr_ns of them), as JSON
 * text of *@len bytes; NULL without memory.  Freed by the caller. */
char *exp_stats_json(struct exp *e, const struct exp_ns *ns, unsigned int nr_ns, size_t *len);
struct json;
/* @ctrl's "trtype", "traddr", "trsvcid", and "tls" (its suite) on a
 * secure channel: what the stats and a front end's own info say of a path. */
void exp_ctrl_address_json(struct json *j, const struct nvmefs_ctrl *ctrl);

/* Why exp_create() failed; also what a front end sets with
 * exp_error(), so that it has one message. */
const char *exp_errmsg(void);
__attribute__((format(printf, 2, 3)))
int exp_error(int err, const char *fmt, ...);
/* The library's message as ours. */
int exp_lib_error(int err);
/* The daemon's log: the system log's (openlog() names the tag), and with
 * exp_log_stderr(PREFIX) each line also on stderr as "PREFIX: line", as a
 * command run in the foreground prints. */
void exp_log_stderr(const char *prefix);
__attribute__((format(printf, 2, 3)))
void exp_logp(int prio, const char *fmt, ...);
/* An error (LOG_ERR). */
__attribute__((format(printf, 1, 2)))
void exp_log(const char *fmt, ...);

#endif /* NVMEFS_EXPORT_ENGINE_H */
