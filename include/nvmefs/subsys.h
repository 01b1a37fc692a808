/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file subsys.h
 * @brief Multipath: a subsystem head over one or more controllers (paths),
 * its I/O policy, and its queues, through which nvmefs's own mount and perf
 * send every I/O.  Part of <nvmefs/nvmefs.h>.
 */
#ifndef NVMEFS_PUBLIC_SUBSYS_H
#define NVMEFS_PUBLIC_SUBSYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvmefs/io.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declared in <nvmefs/ctrl.h>; this header needs only pointers to them. */
struct nvmefs_ctrl;
struct nvmefs_rkey_stats;

/**
 * A subsystem head: one subsystem reached through one or more controllers,
 * its paths, as the Linux host's native multipath groups them.  The face
 * every I/O of nvmefs's own mount and perf goes through.  A multipath head
 * (nvmefs_subsys_create(), or any head given a second path): each I/O goes along a path
 * that ANA marks optimized (else non-optimized; never inaccessible, lost
 * or in change), and when a path fails, its I/O goes to another one as
 * soon as the failed path's queues are drained, while the failed path
 * reconnects on its own and rejoins.  I/O is held only while no path is
 * usable and some path may still come back (it is not past its
 * fast_io_fail_tmo or ctrl_loss_tmo).
 */
struct nvmefs_subsys;
/**
 * One thread's I/O queue of a head, over every path: I/O queue @idx of each path's
 * controller.  The rules of struct nvmefs_ioq apply to it.
 */
struct nvmefs_mpq;
/** Memory registered on every path of a subsystem. */
struct nvmefs_subsys_mr;

/** The most paths of one subsystem. */
#define NVMEFS_MAX_PATHS 8

/** How a path is picked among the usable ones; Linux's names (iopolicy). */
enum nvmefs_iopolicy {
	/** The first optimized path, in the order the paths were added (Linux
	 *  picks the nearest by NUMA distance; here there is none).  Linux's
	 *  default. */
	NVMEFS_IOPOLICY_NUMA,
	/** The optimized paths in turn, I/O by I/O. */
	NVMEFS_IOPOLICY_ROUND_ROBIN,
	/** The optimized path with the fewest of this queue's I/Os in flight. */
	NVMEFS_IOPOLICY_QUEUE_DEPTH,
};

/** "numa", "round-robin" or "queue-depth". */
const char *nvmefs_iopolicy_name(enum nvmefs_iopolicy policy);
/** The policy named @name; -EINVAL if there is none. */
int nvmefs_iopolicy_parse(const char *name, enum nvmefs_iopolicy *policy);

/**
 * A subsystem whose first path is @first, a controller with its I/O queues
 * created.  On success the subsystem owns @first: nvmefs_subsys_destroy()
 * disconnects it.
 */
int nvmefs_subsys_create(struct nvmefs_ctrl *first, enum nvmefs_iopolicy policy,
			 struct nvmefs_subsys **subsysp);
/**
 * A head with @ctrl, a controller with its I/O queues created, as its one
 * path, for a program that reaches one controller: it is not multipath.
 * Its queues pass every call straight to the path's queue, so I/O behaves
 * as the nvmefs_ioq_ functions say (held while the controller reconnects,
 * failed past fast_io_fail_tmo or ctrl_loss_tmo, with the controller's own
 * errors) and costs nothing more; it counts no nvmefs_path_stats.  A path
 * added with nvmefs_subsys_add_path() makes it multipath.  On success the
 * head owns @ctrl.
 */
int nvmefs_subsys_create_single(struct nvmefs_ctrl *ctrl, struct nvmefs_subsys **subsysp);
/** Whether the head is multipath: made by nvmefs_subsys_create(), or given a second path. */
bool nvmefs_subsys_multipath(const struct nvmefs_subsys *subsys);
/**
 * Add @ctrl as another path, before any I/O: it must be a controller of the
 * same subsystem with as many I/O queues as the first path, and every
 * namespace must be the same on both (NSIDs, NGUID, EUI-64, UUID and block
 * size).  On success the subsystem owns @ctrl; on failure the caller does.
 */
int nvmefs_subsys_add_path(struct nvmefs_subsys *subsys, struct nvmefs_ctrl *ctrl);
/**
 * Since 0.2.  From any thread: nothing of @subsys waits for a path any
 * more, as 'nvme disconnect' fails what a head holds.  I/O its queues hold
 * for a namespace that no path can carry now (an ANA state, a path
 * reconnecting) fails with -EIO at each queue's next poll, and such I/O
 * sent later fails at once; a namespace with a usable path is served as
 * before.  For a user of the head that is going (a block device being
 * deleted) while its I/O in flight must end.
 */
void nvmefs_subsys_give_up(struct nvmefs_subsys *subsys);
/**
 * Since 0.2.  From any thread: as nvmefs_subsys_give_up(), for namespace
 * @nsid alone (one block device of several deleted during an outage).  Its
 * I/O that a queue holds while no path can carry it (an ANA state, a
 * controller reconnecting) fails with -EIO at that queue's next poll, and
 * its I/O sent later fails at once while no path can carry it; it goes as
 * before on a path that can.  The subsystem's other namespaces wait for
 * their paths as before, and the controllers go on reconnecting.
 */
void nvmefs_subsys_give_up_ns(struct nvmefs_subsys *subsys, uint32_t nsid);
/** Disconnect every path and free the subsystem.  NULL is ignored. */
void nvmefs_subsys_destroy(struct nvmefs_subsys *subsys);
/** How many paths there are. */
unsigned int nvmefs_subsys_path_count(const struct nvmefs_subsys *subsys);
/** Path @idx's controller (0-based, in the order added), or NULL. */
struct nvmefs_ctrl *nvmefs_subsys_path(struct nvmefs_subsys *subsys, unsigned int idx);
/** The multipath I/O queue @idx, over I/O queue @idx of every path, or NULL. */
struct nvmefs_mpq *nvmefs_subsys_queue(struct nvmefs_subsys *subsys, unsigned int idx);
/** The subsystem's I/O policy. */
enum nvmefs_iopolicy nvmefs_subsys_iopolicy(const struct nvmefs_subsys *subsys);

/** What went through one path, over every queue. */
struct nvmefs_path_stats {
	/** I/Os completed through the path, and of them, failed. */
	uint64_t ios;
	uint64_t errors;
	/** I/Os the path gave back (it failed, or answered with a path
	 *  error) that went to another path or were held. */
	uint64_t failovers;
};
/** Since 0.2.  Every path's per-I/O keys together (nvmefs_ctrl_rkey_stats());
 *  per_io if any path's are.  Safe from any thread. */
void nvmefs_subsys_rkey_stats(struct nvmefs_subsys *subsys, struct nvmefs_rkey_stats *st);
/** Fill @st with path @idx's counts; safe from any thread. */
void nvmefs_subsys_path_stats(const struct nvmefs_subsys *subsys, unsigned int idx,
			      struct nvmefs_path_stats *st);

/** Register @len bytes at @addr on every path (nvmefs_mr_reg() on each). */
int nvmefs_subsys_mr_reg(struct nvmefs_subsys *subsys, void *addr, size_t len,
			 struct nvmefs_subsys_mr **mrp);
/** Release a registration on every path; no I/O may be using it. */
void nvmefs_subsys_mr_dereg(struct nvmefs_subsys_mr *mr);

/* As nvmefs_ioq_buf_get() and nvmefs_ioq_buf_put(): buffers registered on every path. */
void *nvmefs_mpq_buf_get(struct nvmefs_mpq *mpq);
void nvmefs_mpq_buf_put(struct nvmefs_mpq *mpq, void *buf);

/*
 * As the nvmefs_ioq_ forms, along a path the policy picks.  @buf lies in a
 * pool buffer of the queue or in memory from nvmefs_subsys_mr_reg().
 */
int nvmefs_mpq_read(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
		    uint32_t nlb, void *buf, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_write(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, const void *buf, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_flush(struct nvmefs_mpq *mpq, uint32_t nsid, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_write_zeroes(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
			    uint64_t nlb, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_punch(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
		     uint64_t nlb, nvmefs_io_cb cb, void *arg);
int nvmefs_mpq_deallocate(struct nvmefs_mpq *mpq, uint32_t nsid, uint64_t slba,
			  uint64_t nlb, nvmefs_io_cb cb, void *arg);
/* What nvmefs_mpq_submit() sends. */
enum nvmefs_io_kind {
	NVMEFS_IO_READ,
	NVMEFS_IO_WRITE,
	NVMEFS_IO_FLUSH,
	NVMEFS_IO_WRITE_ZEROES,
	/* Write Zeroes that deallocates where the namespace can. */
	NVMEFS_IO_PUNCH,
	NVMEFS_IO_DEALLOCATE,
};

/* nvmefs_mpq_submit()'s flag: I/O that would be held is not taken. */
#define NVMEFS_MPQ_NO_HOLD 1u
/* nvmefs_mpq_submit()'s answer to NVMEFS_MPQ_NO_HOLD: held, not taken. */
#define NVMEFS_MPQ_HELD 1

/**
 * Any of the forms above, by @kind (@buf as theirs, NULL for the ones
 * without data; @nlb 0 for a flush).  With NVMEFS_MPQ_NO_HOLD, I/O that
 * would be held (nvmefs_mpq_ns_held()) is refused with NVMEFS_MPQ_HELD and
 * nothing of it is kept, so that its caller can wait with it elsewhere,
 * asking once per I/O; else 0, -EAGAIN or -errno as they return.
 */
int nvmefs_mpq_submit(struct nvmefs_mpq *mpq, enum nvmefs_io_kind kind, uint32_t nsid,
		      uint64_t slba, uint64_t nlb, void *buf, unsigned int flags,
		      nvmefs_io_cb cb, void *arg);
/**
 * As nvmefs_ioq_poll(), over every path; also sends held I/O once a path is
 * usable.  A negative errno once no path can come back (after every
 * outstanding callback).
 */
int nvmefs_mpq_poll(struct nvmefs_mpq *mpq, int timeout_ms);
/** As nvmefs_ioq_fd() and nvmefs_ioq_arm(), over every path. */
int nvmefs_mpq_fd(const struct nvmefs_mpq *mpq);
int nvmefs_mpq_arm(struct nvmefs_mpq *mpq);
/** As nvmefs_ioq_wait_ms(), the soonest over every path. */
int nvmefs_mpq_wait_ms(const struct nvmefs_mpq *mpq);
/** As nvmefs_ioq_inflight(), over every path. */
unsigned int nvmefs_mpq_inflight(const struct nvmefs_mpq *mpq);
/**
 * 1 if I/O to namespace @nsid submitted now would be held: no path reaches
 * it now (optimized or non-optimized), and one may later.  0 when it can
 * go, and when it would fail at once.  Cheap (a look at each path's state);
 * for the queue's owner thread.
 */
int nvmefs_mpq_ns_held(const struct nvmefs_mpq *mpq, uint32_t nsid);

#ifdef __cplusplus
}
#endif

#endif /* NVMEFS_PUBLIC_SUBSYS_H */
