/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The export engine, as a front end (an adapter: FUSE today, a block
 * device tomorrow) sees it.  It serves byte-range requests on namespaces
 * (read, write, flush, zero a range, punch a hole), each carrying the
 * front end's cookie, and completes each exactly once through the
 * front end's callbacks, with the data or a status.  Inside: splitting
 * into NVMe commands around partial blocks, write reservations, retries
 * when a queue is full, the workers with one I/O queue each, and parking
 * of what a held namespace or a full set of buffers cannot take yet.
 *
 * The workers read the front end's requests themselves, from a descriptor
 * the front end names (/dev/fuse), into buffers registered once with the
 * controller: a write's payload goes to the target from where it came in,
 * and a read's data is completed from where the target put it.  No copy.
 *
 * The engine never calls the front end but through struct exp_ops.
 */
#ifndef NVMEFS_EXPORT_ENGINE_H
#define NVMEFS_EXPORT_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

enum exp_op { EXP_READ, EXP_WRITE, EXP_FLUSH, EXP_ZERO, EXP_PUNCH };

/* A worker's counters, which exp_stats_json() reports. */
struct exp_stats {
	atomic_uint_fast64_t reads, writes, read_bytes, write_bytes;
	atomic_uint_fast64_t flushes, write_zeroes, deallocates, errors;
	struct histogram lat;
};

/* What the front end does for the engine; @arg is exp_create()'s. */
struct exp_ops {
	/* Reads one request from the source into @buf of @size bytes: its
	 * length, or -errno: -EAGAIN when none waits, -ENODEV once the source
	 * has ended (nothing more is read then). */
	ssize_t (*read)(void *arg, void *buf, size_t size);
	/* The namespace whose I/O the request of @len bytes at @buf is (one
	 * that exp_submit() would take), or 0 for what is answered on the spot. */
	uint32_t (*io_nsid)(void *arg, const void *buf, size_t len);
	/* Handles the request of @len bytes at @buf: answers it, or passes
	 * its I/O to exp_submit() before returning. */
	void (*dispatch)(void *arg, void *buf, size_t len);
	/* Answers the request at @buf, which dispatch() never saw, with @err. */
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

struct exp;

/*
 * An engine over the queues of the subsystem head @head (one path or
 * several), one per worker: buffers allocated and registered, workers not
 * started.  Returns 0 or -errno with exp_errmsg().
 */
int exp_create(struct nvmefs_subsys *head, const struct exp_opts *opts, const struct exp_ops *ops,
	       void *arg, struct exp **out);
/* After exp_stop(), or when never started. */
void exp_destroy(struct exp *e);
/* Starts the workers, reading requests when @source_fd is readable.  On a
 * failure (-errno with exp_errmsg()), the workers started run until
 * exp_stop() as usual; what is posted to the others is answered at once. */
int exp_start(struct exp *e, int source_fd);
/* Stops reading requests, lets what is in flight end (a controller that
 * is not live is given up: its I/O fails) and joins the workers. */
void exp_stop(struct exp *e);

/*
 * From ops->dispatch() only: takes over the request being dispatched, and
 * the buffer it came in, for I/O on @ns; completes it through ops with
 * @cookie.  A write's @data (@size bytes) lies in that buffer.  Offsets
 * and sizes are the caller's to check against the namespace.
 */
void exp_submit(void *cookie, struct exp_ns *ns, enum exp_op op, uint64_t off, size_t size,
		const void *data);

/*
 * A request that came in elsewhere than the engine's source (FUSE over
 * io_uring: libfuse's ring threads), in memory the front end owns until
 * the request is completed through ops with @cookie, as exp_submit()'s.
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
	struct exp_post *next;
};

/*
 * From any thread: hands @p to a worker, which owns its queue, and wakes it.
 * The worker takes it as it takes a request it read, when it has a buffer
 * free, or parks it while its namespace is held, as it parks a request it
 * read.  Once the workers are stopped (or never started), @p is completed
 * at once, with ENOTCONN, as /dev/fuse answers once the mount is gone.
 */
void exp_post(struct exp *e, struct exp_post *p);
/* The front end takes requests from an io_uring (the stats say so). */
void exp_set_io_uring(struct exp *e, bool on);

/* Flushes @nsid through the first worker's queue, waiting for it (workers
 * stopped): 0, an NVMe status, or -errno. */
int exp_flush_sync(struct exp *e, uint32_t nsid);
/* Whether the controller, or every path, failed: 0 or its -errno. */
int exp_failed(const struct exp *e);
/* Every controller (path) that is not live gives up reconnecting. */
void exp_stop_reconnecting(struct exp *e);
/* A snapshot of every worker's counters and their sum, the controller's
 * state and each path's reach of namespaces @ns (@nr_ns of them), as JSON
 * text of *@len bytes; NULL without memory.  Freed by the caller. */
char *exp_stats_json(struct exp *e, const struct exp_ns *ns, unsigned int nr_ns, size_t *len);

/* Why exp_create() or exp_start() failed; also what a front end sets with
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
