/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The subsystem head's and its queues' insides, shared by mpath.c (the
 * I/O along the paths) and subsys.c (the subsystem and its paths).
 */
#ifndef NVMEFS_MPATH_PRIV_H
#define NVMEFS_MPATH_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../io/flush_order.h"
#include "../io/io_cmd.h"
#include "../io/ioq.h"
#include "../types/ctrl_types.h"
#include "../transport/mr.h"

struct nvmefs_mpq;

/*
 * What a head's queue does, chosen once, as Linux picks
 * nvme_ns_head_submit_bio() or a plain namespace's submit when it makes the
 * disk: a head of one path passes each call to the path's queue, a
 * multipath one sends along its paths and holds I/O itself.  mpath.c's
 * nvmefs_mpq_ functions call through it; each set answers "held" by the
 * rule its submit follows.
 */
struct mpq_ops {
	/* 0, -EAGAIN, -errno or NVMEFS_MPQ_HELD, as nvmefs_io_submit(). */
	int (*submit)(struct nvmefs_mpq *mpq, enum io_op op, uint32_t nsid, uint64_t slba,
		      uint64_t nlb, void *buf, unsigned int flags, nvmefs_io_cb cb, void *arg);
	int (*ns_held)(const struct nvmefs_mpq *mpq, uint32_t nsid);
	int (*poll)(struct nvmefs_mpq *mpq, int timeout_ms);
	int (*fd)(const struct nvmefs_mpq *mpq);
	int (*arm)(struct nvmefs_mpq *mpq);
	int (*wait_ms)(const struct nvmefs_mpq *mpq);
	unsigned int (*inflight)(const struct nvmefs_mpq *mpq);
};

/* mpath.c: the queue of a head of one path, and of a multipath head (made
 * so, or given a second path by subsys.c before any I/O). */
extern const struct mpq_ops nvmefs_mpq_single_ops;
extern const struct mpq_ops nvmefs_mpq_multipath_ops;

struct mp_io {
	struct nvmefs_mpq *mpq;
	nvmefs_io_cb cb;
	void *arg;
	uint64_t slba;
	uint64_t nlb;
	void *buf;
	uint32_t nsid;
	uint16_t op;		/* enum io_op */
	uint8_t path;		/* where it was sent last */
	struct mp_io *next;	/* free or held list */
	/* A write not completed yet, or a flush waiting for the writes before it. */
	struct flush_order_entry order;
};

/* Written by the queue's owner only, read by nvmefs_subsys_path_stats(). */
struct path_counts {
	_Atomic uint64_t ios;
	_Atomic uint64_t errors;
	_Atomic uint64_t failovers;
};

struct nvmefs_mpq {
	const struct mpq_ops *ops;
	struct nvmefs_subsys *subsys;
	struct nvmefs_ioq *ioqs[NVMEFS_MAX_PATHS];
	/* Watches every path's queue descriptor. */
	int epfd;
	struct mp_io *ios;
	struct mp_io *free_ios;
	struct mp_io *held_head, *held_tail;
	/* Writes on any path not completed yet, and flushes waiting for them. */
	struct flush_order order;
	unsigned int inflight;		/* callers' I/Os not completed, held ones too */
	unsigned int completed;
	unsigned int rr_next;		/* round-robin: where the next search starts */
	struct path_counts counts[NVMEFS_MAX_PATHS];
};

struct nvmefs_subsys_mr {
	struct nvmefs_subsys *subsys;
	void *addr;
	size_t len;
	struct nvmefs_mr *mrs[NVMEFS_MAX_PATHS];
	struct nvmefs_subsys_mr *next, *prev;
};

struct nvmefs_subsys {
	enum nvmefs_iopolicy policy;
	/* Paths give failed I/O back to the head (nvmefs_subsys_multipath()). */
	bool multipath;
	struct nvmefs_ctrl *paths[NVMEFS_MAX_PATHS];
	unsigned int nr_paths;
	struct nvmefs_mpq *mpqs;
	unsigned int nr_mpqs;
	/* nvmefs_subsys_give_up(): no namespace waits for a path any more. */
	atomic_bool given_up;
	/* Path p's registrations of the first path's pools, one per queue. */
	struct nvmefs_mr **pool_mrs[NVMEFS_MAX_PATHS];
	/* The callers' regions, to register on a path added later. */
	pthread_mutex_t regions_lock;
	struct nvmefs_subsys_mr *regions;
};

#endif /* NVMEFS_MPATH_PRIV_H */
