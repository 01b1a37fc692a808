/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the ublk front end's files: serve.c (the devices' life),
 * queue.c (a worker's thread serving its queue of every device) and
 * ctrl.c (the control device).
 */
#ifndef NVMEFS_UBLK_PRIV_H
#define NVMEFS_UBLK_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "uapi.h"
#include "devices.h"
#include "../export/engine.h"

/* One control command on device @dev_id (-1: a new one) with @len bytes at
 * @buf and data[0] @data0: 0 or -errno. */
int ublk_ctrl_cmd(unsigned int op, int dev_id, void *buf, size_t len, uint64_t data0);

struct ublk_queue;

/* A request slot of one device's queue: the cookie of its I/O. */
struct ublk_tag {
	struct ublk_queue *q;
	struct ublk_dev *d;
	uint16_t tag;
	/* Its fetch ended with UBLK_IO_RES_ABORT: the queue is going. */
	bool aborted;
};

/* A namespace's block device. */
struct ublk_dev {
	struct exp_ns ns;
	int id;			/* /dev/ublkbN; -1 before ADD_DEV */
	int cdev;		/* /dev/ublkcN */
	/* Read by the library's thread (resize.c). */
	atomic_bool started;
	/* Deleted alone, at 'ublk del' (serve.c): its id may be another's now. */
	bool removed;
	/* Taken over from a daemon that died (ublk recover), not added; and
	 * whether START_USER_RECOVERY let this daemon have it: from then on a
	 * failure deletes it as it deletes an added one, before it leaves it
	 * as the kernel keeps it, for another try. */
	bool recovering, taken;
	/* Worker threads still holding its queues' mappings: the last to let
	 * go closes cdev, which lets DEL_DEV finish. */
	atomic_uint queues_live;
};

/* A worker's queue of every device, served on its own thread. */
struct ublk_queue {
	struct ublk_server *s;
	unsigned int idx;
	struct exp_worker *w;
	pthread_t thread;
	bool running;		/* its thread was started */
	int epfd;
	/* A poll on @epfd is in the ring: armed only before the thread sleeps. */
	bool poll_armed;
	/* Per device: its descriptors of this queue's requests (mmapped), its
	 * tags, how many of them are aborted. */
	struct ublksrv_io_desc **iod;
	struct ublk_tag **tags;
	unsigned int *nr_aborted;
	unsigned int devs_left;
	/* Set once the thread's FETCH_REQs are in: START_DEV may go. */
	atomic_bool fetching;
	int error;
};

struct ublk_server {
	struct exp *e;
	struct nvmefs_ctrl *ctrl;
	/* What the running kernel offers (UBLK_F_*). */
	uint64_t features;
	const struct nvmefs_ublk_opts *opts;
	struct ublk_dev *dev;
	unsigned int nr_dev;
	unsigned int depth;	/* per device and queue */
	size_t iod_len;		/* the mmapped descriptors of one queue */
	/* Written by each queue's thread as it ends. */
	int ended_fd;
	struct ublk_queue *q;
	unsigned int nr_q;
	/* Set once start() failed, which may leave a device never started:
	 * no STOP_DEV aborts its queues' commands then, so each queue's thread
	 * leaves by itself, and closing its ring cancels them. */
	atomic_bool start_failed;
};

/* Starts queue @i's thread; 0 or -errno with exp_error(). */
int ublk_queue_start(struct ublk_server *s, unsigned int i);
/* Waits for it to end (every device's queue aborted, or a stop). */
void ublk_queue_join(struct ublk_queue *q);

extern const struct exp_ops ublk_exp_ops;

/* record.c: records device @d (its subsystem, namespace, daemon, whether
 * its namespace is gone, the options of --recovery) for list, del and
 * recover; the record removed. */
void ublk_record(struct ublk_server *s, const struct ublk_dev *d);
void ublk_unrecord(const struct ublk_dev *d);
/* The daemon's statistics (exp_stats_json(), the mount's stats file's) in
 * NVMEFS_UBLK_RUN_DIR/PID.stats for `nvmefs ublk stats`; daemon @pid's
 * file removed (a dead one's, once its devices are taken over). */
void ublk_write_stats(struct ublk_server *s);
void ublk_unrecord_stats(pid_t pid);

/* GET_FEATURES: the UBLK_F_* the running kernel offers; 0 before 6.5. */
uint64_t ublk_features(void);
/* The library's change callback (@arg the server): each started device's
 * size follows its namespace's, where the kernel can resize it. */
void ublk_namespaces_changed(void *arg, enum nvmefs_ctrl_change what);
/* A device taken over keeps the size it had (sysfs says it), which its
 * namespace may have changed while no daemon served it: made the
 * namespace's, as a resize on the target is followed. */
void ublk_size_check(struct ublk_server *s, struct ublk_dev *d);

#endif /* NVMEFS_UBLK_PRIV_H */
