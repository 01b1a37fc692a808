/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file io.h
 * @brief A controller's I/O queues (the per-path layer), its namespaces,
 * and asynchronous and synchronous I/O on a queue.  Part of
 * <nvmefs/nvmefs.h>; includes <nvmefs/mr.h>, the registered memory it
 * moves data through.
 */
#ifndef NVMEFS_PUBLIC_IO_H
#define NVMEFS_PUBLIC_IO_H

#include <stddef.h>
#include <stdint.h>

#include <nvmefs/mr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declared in <nvmefs/ctrl.h>; this header needs only a pointer to it. */
struct nvmefs_ctrl;

/**
 * An I/O queue of a controller: its own transport queue (an RDMA queue
 * pair and completion queue) and registered buffers.  One thread at a time drives a queue; queues
 * share no lock on the I/O path, so N threads on N queues scale.
 *
 * This is the per-path layer: nvmefs's own mount and perf reach I/O only
 * through a subsystem head (struct nvmefs_subsys, its queues struct
 * nvmefs_mpq), with one path or several, which sits on these queues.
 * The nvmefs_ioq_ functions stay for programs that drive one controller's
 * queues themselves.
 */
struct nvmefs_ioq;

/** Default I/O queue entries (-Q), bounded by the controller's CAP.MQES. */
#define NVMEFS_DEFAULT_IO_QUEUE_SIZE 128
/** queue_size that asks for enough entries to have every pool buffer's I/O
 *  in flight whole (one command per largest transfer the controller takes,
 *  from its MDTS), bounded by CAP.MQES. */
#define NVMEFS_IO_QUEUE_SIZE_AUTO 0
/** Default request timeout: a command not completed by then fails the controller. */
#define NVMEFS_DEFAULT_IO_TIMEOUT_MS 30000
/** Default size of each buffer in a queue's registered pool. */
#define NVMEFS_DEFAULT_IO_BUF_SIZE (128 * 1024)

/** How many I/O queues to create and how; fill with nvmefs_io_opts_init(). */
struct nvmefs_io_opts {
	/** Queues to create (-i); the controller may grant fewer: an error,
	 *  unless take_fewer. */
	unsigned int nr_queues;
	/** Entries per queue (-Q); at most queue_size - 1 commands in flight;
	 *  NVMEFS_IO_QUEUE_SIZE_AUTO: from the pool and the controller's MDTS. */
	unsigned int queue_size;
	/** Bytes per pool buffer (nvmefs_ioq_buf_get()). */
	size_t buf_size;
	/** Pool buffers per queue; 0: queue_size - 1. */
	unsigned int bufs_per_queue;
	/** A command not completed within this fails the controller. */
	unsigned int timeout_ms;
	/** Nonzero: when the controller grants fewer queues than nr_queues,
	 *  create those (nvmefs_ctrl_io_queue_count() says how many) rather
	 *  than fail. */
	int take_fewer;
};

/** Fill @opts with the defaults. */
void nvmefs_io_opts_init(struct nvmefs_io_opts *opts);

/**
 * Negotiate the number of I/O queues (Set Features, Number of Queues),
 * then create, register and connect each one (Fabrics Connect with the
 * admin queue's controller id), and identify the active namespaces.
 * Fails if I/O queues already exist.
 */
int nvmefs_ctrl_create_io_queues(struct nvmefs_ctrl *ctrl,
				 const struct nvmefs_io_opts *opts);
/**
 * Ask the controller for @nr I/O queues (Set Features, Number of Queues)
 * and store in @granted how many it grants, at most @nr, creating none:
 * for a caller that sizes each queue by how many there are, so it creates
 * what is granted once (with nr_queues set to it) rather than creating,
 * deleting and creating again.  Fails if I/O queues already exist.
 */
int nvmefs_ctrl_ask_io_queues(struct nvmefs_ctrl *ctrl, unsigned int nr, unsigned int *granted);
/** Tear the I/O queues down; they can then be created again. */
void nvmefs_ctrl_delete_io_queues(struct nvmefs_ctrl *ctrl);
/** How many I/O queues the controller has. */
unsigned int nvmefs_ctrl_io_queue_count(const struct nvmefs_ctrl *ctrl);
/** I/O queue @idx (0-based), or NULL. */
struct nvmefs_ioq *nvmefs_ctrl_io_queue(struct nvmefs_ctrl *ctrl, unsigned int idx);

/** The most namespaces of one controller that its I/O queues serve. */
#define NVMEFS_MAX_NAMESPACES 4096

/** What I/O needs to know of a namespace. */
struct nvmefs_ns_info {
	uint32_t nsid;
	/** Capacity in logical blocks (NSZE). */
	uint64_t nlb;
	/** Bytes per logical block. */
	uint32_t lba_size;
	/** Blocks one Write Zeroes carries at most, NVMEFS_MAX_ZEROES_BLOCKS or
	 *  the controller's Write Zeroes Size Limit: zeroing or punching N
	 *  blocks takes N / max_zeroes_nlb commands, rounded up. */
	uint32_t max_zeroes_nlb;
};

/**
 * Geometry of active namespace @nsid, as identified when the I/O queues
 * were created, or since, after an asynchronous event or a reconnect.
 * -ENOENT if it is not active; -ENODEV if it was removed or replaced by
 * another namespace since (its I/O fails).
 */
int nvmefs_ns_info(const struct nvmefs_ctrl *ctrl, uint32_t nsid,
		   struct nvmefs_ns_info *info);

/** The NSIDs of the namespaces identified with the I/O queues or since
 *  (an asynchronous event adds to the list, never removes from it): every
 *  page of the active list, up to NVMEFS_MAX_NAMESPACES.  One that could not
 *  be identified is listed, and nvmefs_ns_info() says why it is not usable. */
unsigned int nvmefs_ctrl_ns_list(const struct nvmefs_ctrl *ctrl,
				 const uint32_t **nsids);

/** A buffer of nvmefs_ioq_buf_size() bytes from @ioq's registered pool, or NULL if all are taken. */
void *nvmefs_ioq_buf_get(struct nvmefs_ioq *ioq);
/** Return a pool buffer to @ioq. */
void nvmefs_ioq_buf_put(struct nvmefs_ioq *ioq, void *buf);
/** Bytes in each pool buffer of @ioq. */
size_t nvmefs_ioq_buf_size(const struct nvmefs_ioq *ioq);

/**
 * Completion of an I/O: @status is 0 on success, a positive NVMe status
 * field (SCT << 8 | SC, as nvme_status_to_string() takes it) when the
 * controller failed the command, or a negative errno when the transport
 * or the controller failed (-ETIMEDOUT, -ECONNRESET, ...).
 */
typedef void (*nvmefs_io_cb)(void *arg, int status);

/*
 * Asynchronous I/O on namespace @nsid: @nlb logical blocks from @slba.
 * @buf must lie in registered memory (a pool buffer or an nvmefs_mr).
 * Transfers larger than the controller takes in one command are split.
 * Returns 0 when the I/O was submitted: @cb is then called exactly once,
 * on the queue's thread, from nvmefs_ioq_poll() or nvmefs_ioq_arm().
 * Returns -EAGAIN when the queue is full (poll
 * and try again), or another negative errno, without calling @cb.
 */
int nvmefs_ioq_read(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba,
		    uint32_t nlb, void *buf, nvmefs_io_cb cb, void *arg);
int nvmefs_ioq_write(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, const void *buf, nvmefs_io_cb cb, void *arg);
/**
 * Flush: completes once everything written before it is durable: every
 * write completed before it, and every write, Write Zeroes or Deallocate
 * submitted before it on this queue (it goes out once those have completed,
 * after their retries).
 */
int nvmefs_ioq_flush(struct nvmefs_ioq *ioq, uint32_t nsid,
		     nvmefs_io_cb cb, void *arg);
/** Blocks one Write Zeroes command carries at most (its NLB field is 16 bits,
 * 0's based): zeroing and punching take one command per this many blocks. */
#define NVMEFS_MAX_ZEROES_BLOCKS 65536u

/** Write Zeroes over @nlb blocks from @slba, in as many commands as it takes. */
int nvmefs_ioq_write_zeroes(struct nvmefs_ioq *ioq, uint32_t nsid,
			    uint64_t slba, uint64_t nlb,
			    nvmefs_io_cb cb, void *arg);
/**
 * Punch a hole: @nlb blocks from @slba read as zeros afterwards, and the
 * controller may free them.  Write Zeroes, with Deallocate where the
 * namespace says it deallocates that way (DLFEAT bit 3), as Linux does;
 * never Dataset Management alone, which the specification makes advisory.
 */
int nvmefs_ioq_punch(struct nvmefs_ioq *ioq, uint32_t nsid,
		     uint64_t slba, uint64_t nlb,
		     nvmefs_io_cb cb, void *arg);
/** Dataset Management, deallocate @nlb blocks from @slba, in as many
 * commands as it takes.  Advisory: the blocks may still read as before. */
int nvmefs_ioq_deallocate(struct nvmefs_ioq *ioq, uint32_t nsid,
			  uint64_t slba, uint64_t nlb,
			  nvmefs_io_cb cb, void *arg);

/**
 * Process completions, calling their callbacks, waiting up to @timeout_ms
 * for the first (0: don't wait, the busy-polling form; negative: wait as
 * long as it takes, asleep in the kernel).  Also fails requests past their
 * timeout.  Returns the number of I/Os completed, or a negative errno once
 * the queue or its controller failed (after every outstanding callback).
 */
int nvmefs_ioq_poll(struct nvmefs_ioq *ioq, int timeout_ms);
/**
 * A file descriptor for poll()/epoll, readable when a completion arrives
 * after nvmefs_ioq_arm().  The usual verbs pattern: poll until nothing
 * comes, arm, and sleep on the descriptor only if arm returned 0.
 */
int nvmefs_ioq_fd(const struct nvmefs_ioq *ioq);
/** Arm the descriptor; > 0 if completions are already waiting (poll first).
 *  Completions found while arming are taken: their callbacks run here. */
int nvmefs_ioq_arm(struct nvmefs_ioq *ioq);
/**
 * After nvmefs_ioq_arm() returned 0: at most how long to sleep on the
 * descriptor before polling again, in ms, because an I/O waits out the
 * controller's command retry delay; -1 when only the descriptor brings work.
 */
int nvmefs_ioq_wait_ms(const struct nvmefs_ioq *ioq);
/**
 * I/Os submitted and not yet completed, and other queues' I/O this queue is
 * carrying.  While the target grants fewer I/O queues than were created
 * (after a reconnect), a queue without a connection of its own has its I/O
 * sent by another queue's owner, who must go on polling for it: a program
 * whose threads each own queues lets none of them stop polling until every
 * queue's count is 0.
 */
unsigned int nvmefs_ioq_inflight(const struct nvmefs_ioq *ioq);
/**
 * 1 if I/O to namespace @nsid submitted now would be held: the controller
 * is reconnecting and its I/O does not fail yet (fast_io_fail_tmo).  0 when
 * it can go, and when it would fail at once.  Cheap; for the queue's owner
 * thread.
 */
int nvmefs_ioq_ns_held(const struct nvmefs_ioq *ioq, uint32_t nsid);

/*
 * Synchronous forms: submit, then poll this queue until done.  Return 0,
 * a positive NVMe status, or a negative errno (with a message).
 */
int nvmefs_ioq_read_sync(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba,
			 uint32_t nlb, void *buf);
int nvmefs_ioq_write_sync(struct nvmefs_ioq *ioq, uint32_t nsid, uint64_t slba,
			  uint32_t nlb, const void *buf);
int nvmefs_ioq_flush_sync(struct nvmefs_ioq *ioq, uint32_t nsid);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_IO_H */
