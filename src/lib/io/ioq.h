/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An I/O queue and its I/O records: the io*.c files own them; the
 * controller's state (ctrl_state.c) reaches in only to wake the queues'
 * owners. */
#ifndef NVMEFS_IOQ_H
#define NVMEFS_IOQ_H

#include <pthread.h>
#include <stdatomic.h>

#include "flush_order.h"
#include "nvmefs/nvmefs.h"
#include "../types/transport_ops.h"

struct nvmefs_io {
	nvmefs_io_cb cb;
	void *arg;
	uint8_t op;
	bool started;		/* the first command went out */
	bool pending;		/* on the pending list, waiting for slots */
	bool again;		/* sent again whole once its commands are back */
	bool deac;		/* Write Zeroes that also deallocates */
	uint8_t retries;	/* NVMe statuses without DNR so far */
	uint16_t outstanding;	/* commands in flight */
	int status;		/* the first failure */
	int64_t not_before_ms;	/* a retry waits for the controller's CRD */
	uint16_t path_status;	/* the last path error, with no other path */
	uint32_t nsid;
	uint8_t lba_shift;
	uint64_t slba;		/* next block to send */
	uint64_t nlb_left;	/* blocks not sent yet */
	uint8_t *buf;		/* where the next block's data is */
	/* The whole I/O, to send it again after an outage or a retryable status. */
	uint64_t first_slba;
	uint64_t total_nlb;
	uint8_t *first_buf;
	struct nvmefs_mr *mr;
	struct nvmefs_io *next;	/* free, pending or mail list */
	/* The queue whose caller it is, which completes it: another queue may
	 * send it while the target grants fewer queues (io_forward.c). */
	struct nvmefs_ioq *owner;
	/* A write among its owner's not completed yet, or a flush waiting for them. */
	struct flush_order_entry order;
};

struct nvmefs_ioq {
	struct nvmefs_queue q;
	struct nvmefs_ctrl *ctrl;
	uint16_t size;
	/* nvmefs_ioq_fd(): the same descriptor across reconnects, watching the
	 * transport's completion and event descriptors and wake_fd. */
	int epfd;
	/* Written by the controller at each state change, read by arm. */
	int wake_fd;
	unsigned int wake_seen;		/* ctrl->wake_seq when wake_fd was last read */
	/* The failure (ctrl->gen) this queue was last stopped for; written by
	 * its owner, read by the controller's thread. */
	atomic_uint stopped_gen;
	struct nvmefs_io *ios;
	struct nvmefs_io *free_ios;
	struct nvmefs_io *pending_head, *pending_tail;
	/* Writes not completed yet, and flushes waiting for them (flush_order.h). */
	struct flush_order order;
	unsigned int nr_ios_inflight;
	unsigned int completed;
	int64_t next_timeout_check;
	/* The registered buffer pool. */
	uint8_t *pool;
	struct nvmefs_mr *pool_mr;
	size_t buf_size;
	unsigned int nr_bufs;
	void **free_bufs;
	unsigned int nr_free_bufs;
	/*
	 * io_forward.c.  While the target grants fewer I/O queues than were
	 * created, this queue has none of its own and @host sends its I/O; set
	 * by the controller's thread while the owners are stopped.  Mail
	 * between owners: others' I/O for this queue to send, and this queue's
	 * own I/O that another one completed; @mail says there is some, so the
	 * I/O path looks at one word and takes no lock unless there is.
	 */
	_Atomic(struct nvmefs_ioq *) host;
	unsigned int nr_carried;	/* others' I/O taken from the inbox, not yet back */
	atomic_uint mail;
	pthread_mutex_t mail_lock;
	struct nvmefs_io *inbox_head, *inbox_tail;
	struct nvmefs_io *returned_head, *returned_tail;
};

#endif
